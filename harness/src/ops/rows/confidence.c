/*
 * The op confidence (SPEC.md §13 Step DS-7): DSpark's acceptance estimate,
 * sigmoid(w . [h; e] + b).
 */
#include "rows.h"

static const struct mtp_tspec sig[] = {{"hidden", "T,H", MTP_TC_ACT, 0},
				       {"markov_embed", "T,R", MTP_TC_ACT, 0},
				       {"weight", "1,H+R", MTP_TC_PARAM, 0},
				       {"bias", "1", MTP_TC_PARAM, 1},
				       ROW_END,
				       {"confidence", "T", MTP_TC_PARAM, 0},
				       ROW_END};

static enum mtp_status ref(const struct mtp_ref_io *io)
{
	const struct mtp_call *c = io->c;

	mtp_ref_confidence(
		mtp_refio_in(io, "hidden"), mtp_refio_in(io, "markov_embed"),
		mtp_refio_in(io, "weight"), mtp_refio_in(io, "bias"), c->dims.t,
		c->dims.h, c->dims.r, mtp_refio_out(io, "confidence"));
	return MTP_OK;
}

static double flops(const struct mtp_call *c)
{
	struct mtp_flop_shape s;

	mtp_flop_shape(c, &s);
	return 2 * s.t * (s.h + s.r) + 4 * s.t;
}

const struct mtp_op mtp_row_confidence = {
	.id = MTP_OP_CONFIDENCE,
	.name = "confidence",
	.section = "§13 Step DS-7",
	.summary = "acceptance estimate sigmoid(w.[h; e] + b)",
	ROW_SINGLE,
	.attrs = "",
};
