/*
 * The op fused_mtp_input_rmsnorm (SPEC.md §7.3): the pos-0 mask, enorm of
 * the embeddings [T, H] and hnorm of each of the M streams [T, M, H]; an mHC
 * op, so generated problems are deepseek_v4's. Bench times it against an
 * rmsnorm of T rows and one of T*M.
 */
#include "rows.h"

static const struct mtp_tspec sig[] = {{"embeds", "T,H", MTP_TC_ACT, 0},
				       {"positions", "T", MTP_TC_INDEX, 0},
				       {"prev_hidden", "T,M,H", MTP_TC_ACT, 0},
				       {"enorm_weight", "H", MTP_TC_ACT, 0},
				       {"hnorm_weight", "H", MTP_TC_ACT, 0},
				       ROW_END,
				       {"enorm_out", "T,H", MTP_TC_ACT, 0},
				       {"hnorm_out", "T,M,H", MTP_TC_ACT, 0},
				       ROW_END};

static enum mtp_status ref(const struct mtp_ref_io *io)
{
	const struct mtp_call *c = io->c;

	mtp_ref_fused_mtp_input_rmsnorm(
		mtp_refio_in(io, "embeds"), mtp_refio_iin(io, "positions"),
		mtp_refio_in(io, "prev_hidden"),
		mtp_refio_in(io, "enorm_weight"),
		mtp_refio_in(io, "hnorm_weight"), c->dims.t, c->dims.m,
		c->dims.h, c->params->eps, c->act,
		mtp_refio_out(io, "enorm_out"), mtp_refio_out(io, "hnorm_out"));
	return MTP_OK;
}

static double flops(const struct mtp_call *c)
{
	struct mtp_flop_shape s;

	mtp_flop_shape(c, &s);
	return 4 * s.t * s.h * (s.m + 1);
}

const struct mtp_op mtp_row_fused_mtp_input_rmsnorm = {
	.id = MTP_OP_FUSED_MTP_INPUT_RMSNORM,
	.name = "fused_mtp_input_rmsnorm",
	.section = "§7.3",
	.summary = "pos-0 mask + enorm [T,H] + per-stream hnorm [T,M,H]",
	ROW_INPUT_NORM,
	.default_family = MTP_FAMILY_DEEPSEEK_V4,
	.unfused_what = "rmsnorm [T] + rmsnorm [T*M]",
	.unfused = {{"rmsnorm", false, 0}, {"rmsnorm", true, 0}},
};
