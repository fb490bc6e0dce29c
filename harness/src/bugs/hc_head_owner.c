/*
 * HC_HEAD_OWNER (SPEC.md §8.3c): every MTP layer's logits computed with
 * layer 0's hc_head parameters (a predictor-level hc_head_op).
 */
#include "bugs.h"

static bool applies(const struct mtp_call *c)
{
	const struct mtp_params *p = c->params;

	return mtp_bug_is_chain(c) && mtp_bug_mhc(c) && p->num_layers >= 2 &&
	       p->pass_step_idx && p->num_steps >= 2;
}

static enum mtp_status after_step(const struct mtp_bug_step *s)
{
	return s->layer ? s->ops->mhc_head(s, 0) : MTP_OK;
}

const struct mtp_bug_class mtp_bug_hc_head_owner = {
	.name = "HC_HEAD_OWNER",
	.section = "§8.3c",
	.history = "hc_head parameters of the wrong layer (predictor-level "
		   "hc_head_op after #41946; #42579, fixed #42930)",
	.applies_to = "draft_chain of an mHC family with two layers or more "
		      "and spec_step_idx passed",
	.shows_in = "head_hidden, logits of the steps run by layer 1 and on",
	.flags = MTP_BUG_NUMERIC | MTP_BUG_MUTANT,
	.applies = applies,
	.after_step = after_step,
};
