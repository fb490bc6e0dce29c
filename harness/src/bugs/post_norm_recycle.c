/*
 * POST_NORM_RECYCLE (SPEC.md §8.1): the mirror of PRE_NORM_RECYCLE for a
 * family whose contract feeds the next draft step the sum before the final
 * norm (Kimi K3's "pre-norm recurrent state"): the engine recycles the
 * normed hidden instead, the one the head gets.
 */
#include "bugs.h"

static bool applies(const struct mtp_call *c)
{
	return mtp_bug_is_step(c) && !mtp_bug_mhc(c) &&
	       mtp_family_recycles_pre_norm(c->params->family);
}

static enum mtp_status after_step(const struct mtp_bug_step *s)
{
	return s->ops->copy(s, "recycled", "hidden_post");
}

const struct mtp_bug_class mtp_bug_post_norm_recycle = {
	.name = "POST_NORM_RECYCLE",
	.section = "§8.1",
	.history = "a family that recycles the pre-norm sum (Kimi K3) fed the "
		   "post-norm hidden: step 0 right, later steps drift",
	.applies_to = "mtp_step, draft_chain; families that recycle the "
		      "pre-norm sum",
	.shows_in = "recycled; a chain's later steps",
	.flags = MTP_BUG_NUMERIC | MTP_BUG_MUTANT | MTP_BUG_STEPWISE,
	.applies = applies,
	.after_step = after_step,
};
