/*
 * The op fused_embed_eh_norm (SPEC.md §7.2): fused_eh_norm with the
 * embedding gather folded in; only the gathered rows of the table are read.
 */
#include "rows.h"

static const struct mtp_tspec sig[] = {{"positions", "T", MTP_TC_INDEX, 0},
				       {"input_ids", "T", MTP_TC_INDEX, 0},
				       {"embed_table", "V,H", MTP_TC_ACT, 0},
				       {"prev_hidden", "T,H", MTP_TC_ACT, 0},
				       {"enorm_weight", "H", MTP_TC_ACT, 0},
				       {"hnorm_weight", "H", MTP_TC_ACT, 0},
				       ROW_END,
				       {"out", "T,2*H", MTP_TC_ACT, 0},
				       ROW_END};

static enum mtp_status ref(const struct mtp_ref_io *io)
{
	const struct mtp_call *c = io->c;

	mtp_ref_fused_embed_eh_norm(
		mtp_refio_iin(io, "positions"), mtp_refio_iin(io, "input_ids"),
		mtp_refio_in(io, "embed_table"),
		mtp_refio_in(io, "prev_hidden"),
		mtp_refio_in(io, "enorm_weight"),
		mtp_refio_in(io, "hnorm_weight"), c->dims.t, c->dims.h,
		c->params->eps, c->act, mtp_refio_out(io, "out"));
	return MTP_OK;
}

static double flops(const struct mtp_call *c)
{
	return 8 * (double)c->dims.t * (double)c->dims.h;
}

const struct mtp_op mtp_row_fused_embed_eh_norm = {
	.id = MTP_OP_FUSED_EMBED_EH_NORM,
	.name = "fused_embed_eh_norm",
	.section = "§7.2",
	.summary = "fused_eh_norm with the embedding gather folded in",
	ROW_INPUT_NORM,
	.gathered = "embed_table",
};
