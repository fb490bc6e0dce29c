/*
 * HEAD_NORM_MISSING (SPEC.md §12.4): the logits come from a hidden that
 * skipped the final norm before the head (the shared head's norm of a
 * V3-style layer, the norm after hc_head of an mHC layer). What is recycled
 * is untouched: only the logits and the draft tokens show it.
 */
#include "bugs.h"

static bool applies(const struct mtp_call *c)
{
	return mtp_bug_is_step(c);
}

static enum mtp_status after_step(const struct mtp_bug_step *s)
{
	return s->ops->head(s, s->mhc ? "head_hidden" : "hidden_pre", false);
}

const struct mtp_bug_class mtp_bug_head_norm_missing = {
	.name = "HEAD_NORM_MISSING",
	.section = "§12.4",
	.history = "logits from a hidden that skipped the final (shared-head) "
		   "norm before the head (issue 30's field reports): wrong at "
		   "every step, recycled state right",
	.applies_to = "mtp_step, draft_chain",
	.shows_in = "logits, token at every step",
	.flags = MTP_BUG_NUMERIC | MTP_BUG_MUTANT,
	.applies = applies,
	.after_step = after_step,
};
