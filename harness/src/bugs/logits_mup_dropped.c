/*
 * LOGITS_MUP_DROPPED (SPEC.md Step V3-9, §12.4): a head that takes a mup
 * width multiplier (Inkling's compute_logits: addmm with alpha =
 * 1/logits_mup_width_multiplier) run without it, the logits mup times too
 * large. The greedy token is unmoved (a positive scale; vLLM's own
 * get_top_tokens skips the division), so only the logits show it, and
 * sampling at temperature > 0 draws from the wrong distribution.
 */
#include "bugs.h"

static bool applies(const struct mtp_call *c)
{
	return mtp_bug_is_step(c) && c->params->logits_mup != 0.0;
}

static enum mtp_status edit(struct mtp_bug_edit *e)
{
	e->p->logits_mup = 0.0;
	return MTP_OK;
}

const struct mtp_bug_class mtp_bug_logits_mup_dropped = {
	.name = "LOGITS_MUP_DROPPED",
	.section = "Step V3-9",
	.history = "the logits not divided by the checkpoint's mup width "
		   "multiplier (a row with logits_mup: Inkling's head)",
	.applies_to = "mtp_step, draft_chain with a logits_mup attribute",
	.shows_in = "logits only (the token is unmoved)",
	.flags = MTP_BUG_NUMERIC | MTP_BUG_MUTANT,
	.applies = applies,
	.edit = edit,
};
