/*
 * HEAD_NORM_MISSING (SPEC.md §12.4): the logits come from a hidden that
 * skipped the final norm before the head (the shared head's norm of a
 * V3-style layer, the norm after hc_head of an mHC layer). What is recycled
 * is untouched: the logits and the draft tokens show it, and a V3-style
 * step's hidden_post, which is the tensor the head was fed (FORMAT.md v2
 * rule 9): the pre-norm sum.
 */
#include "bugs.h"

static bool applies(const struct mtp_call *c)
{
	return mtp_bug_is_step(c);
}

static enum mtp_status after_step(const struct mtp_bug_step *s)
{
	enum mtp_status st =
		s->ops->head(s, s->mhc ? "head_hidden" : "hidden_pre", false);

	return st || s->mhc ? st : s->ops->copy(s, "hidden_post", "hidden_pre");
}

const struct mtp_bug_class mtp_bug_head_norm_missing = {
	.name = "HEAD_NORM_MISSING",
	.section = "§12.4",
	.history = "logits from a hidden that skipped the final (shared-head) "
		   "norm before the head (issue 30's field reports): wrong at "
		   "every step, recycled state right",
	.applies_to = "mtp_step, draft_chain",
	.shows_in = "logits, token (and a V3-style step's hidden_post, the "
		    "head's input) at every step",
	.flags = MTP_BUG_NUMERIC | MTP_BUG_MUTANT,
	.applies = applies,
	.after_step = after_step,
};
