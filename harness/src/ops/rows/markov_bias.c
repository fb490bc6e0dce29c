/*
 * The op markov_bias (SPEC.md §13 Step DS-6): the Markov bias W2 * W1[prev]
 * added to the logits, and the greedy token; R is the Markov rank. The
 * optional logit_scale scales the bias as the drafter's logits processor
 * scales its logits (Qwen3 and K3; 1 for V4.1). Only the
 * T rows of markov_w1 that the previous ids name are read.
 */
#include "rows.h"

static const struct mtp_tspec sig[] = {{"logits_in", "T,V", MTP_TC_ACT, 0},
				       {"prev_ids", "T", MTP_TC_INDEX, 0},
				       {"markov_w1", "V,R", MTP_TC_ACT, 0},
				       {"markov_w2", "V,R", MTP_TC_ACT, 0},
				       ROW_END,
				       {"markov_embed", "T,R", MTP_TC_ACT, 0},
				       {"logits", "T,V", MTP_TC_ACT, 0},
				       {"token", "T", MTP_TC_TOKEN, 0},
				       ROW_END};

static enum mtp_status ref(const struct mtp_ref_io *io)
{
	const struct mtp_call *c = io->c;
	const struct mtp_dims *d = &c->dims;

	mtp_ref_markov_bias(
		mtp_refio_in(io, "logits_in"), mtp_refio_iin(io, "prev_ids"),
		mtp_refio_in(io, "markov_w1"), mtp_refio_in(io, "markov_w2"),
		d->t, d->v, d->r, c->params->logit_scale, c->act,
		mtp_refio_out(io, "markov_embed"), mtp_refio_out(io, "logits"),
		mtp_refio_iout(io, "token"));
	return MTP_OK;
}

static double flops(const struct mtp_call *c)
{
	struct mtp_flop_shape s;

	mtp_flop_shape(c, &s);
	return mtp_flops_gemm(s.t, s.r, s.v) + s.t * s.v;
}

const struct mtp_op mtp_row_markov_bias = {
	.id = MTP_OP_MARKOV_BIAS,
	.name = "markov_bias",
	.section = "§13 Step DS-6",
	.summary = "Markov bias W2*W1[prev] added to the logits, greedy token",
	ROW_SINGLE,
	.attrs = "logit_scale?",
	.gathered = "markov_w1",
	/* the bias is stored (and scaled) before the add: a one-ulp flip of it
	 * survives a logit that cancels to near zero (cuda and cpu at T = 64,
	 * V = 129280, tools/bench/dspark_sizes.case) */
	.budget_depth = 3,
};
