/*
 * PRE_NORM_RECYCLE (SPEC.md §8.1): the hidden recycled into the next draft
 * step is taken before the final norm instead of after it. A family whose
 * contract recycles the pre-norm sum (Kimi K3) cannot have this bug: its
 * mistake is the other one, POST_NORM_RECYCLE.
 */
#include "bugs.h"

static bool applies(const struct mtp_call *c)
{
	return mtp_bug_is_step(c) && !mtp_bug_mhc(c) &&
	       !mtp_family_recycles_pre_norm(c->params->family);
}

static enum mtp_status after_step(const struct mtp_bug_step *s)
{
	return s->ops->copy(s, "recycled", "hidden_pre");
}

const struct mtp_bug_class mtp_bug_pre_norm_recycle = {
	.name = "PRE_NORM_RECYCLE",
	.section = "§8.1",
	.history = "recycled hidden taken before the final norm (vLLM #45895, "
		   "#47448; GLM-5 #46075): step 0 right, later steps drift",
	.applies_to = "mtp_step, draft_chain; families that recycle the "
		      "post-norm hidden",
	.shows_in = "recycled; a chain's later steps",
	.flags = MTP_BUG_NUMERIC | MTP_BUG_MUTANT | MTP_BUG_STEPWISE,
	.applies = applies,
	.after_step = after_step,
};
