/*
 * DOUBLE_FINAL_NORM (SPEC.md §8.1): the logits come from a hidden normed
 * twice (the shared head's norm applied to the already-normed output).
 */
#include "bugs.h"

static bool applies(const struct mtp_call *c)
{
	return mtp_bug_is_step(c) && !mtp_bug_mhc(c);
}

static enum mtp_status after_step(const struct mtp_bug_step *s)
{
	return s->ops->head(s, "hidden_post", true);
}

const struct mtp_bug_class mtp_bug_double_final_norm = {
	.name = "DOUBLE_FINAL_NORM",
	.section = "§8.1",
	.history =
		"logits from a twice-normed hidden (shared_head.norm applied "
		"to an already-normed tensor; avoided in #47448): wrong at "
		"every step",
	.applies_to = "mtp_step, draft_chain; families without mHC streams",
	.shows_in = "logits, token at every step",
	.flags = MTP_BUG_NUMERIC | MTP_BUG_MUTANT | MTP_BUG_STEPWISE,
	.applies = applies,
	.after_step = after_step,
};
