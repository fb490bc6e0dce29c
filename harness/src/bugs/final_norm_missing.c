/*
 * FINAL_NORM_MISSING (SPEC.md §12.4): no final norm after the block at
 * all. The sum r + h goes to the head as it is and is also what the next
 * step receives: HEAD_NORM_MISSING and PRE_NORM_RECYCLE at once (vLLM's
 * and SGLang's ERNIE 4.5 MTP layers, whose contract, Baidu's FastDeploy,
 * norms with the target's final norm). Neither of the two classes alone
 * explains such outputs; this one explains every output after the block.
 * Not on a family that recycles the pre-norm sum: there the recycled state
 * is right and the bug is HEAD_NORM_MISSING.
 */
#include "bugs.h"

static bool applies(const struct mtp_call *c)
{
	return mtp_bug_is_step(c) && !mtp_bug_mhc(c) &&
	       !mtp_family_recycles_pre_norm(c->params->family);
}

static enum mtp_status after_step(const struct mtp_bug_step *s)
{
	enum mtp_status st = s->ops->head(s, "hidden_pre", false);

	if (!st)
		st = s->ops->copy(s, "recycled", "hidden_pre");
	if (!st)
		st = s->ops->copy(s, "hidden_post", "hidden_pre");
	return st;
}

const struct mtp_bug_class mtp_bug_final_norm_missing = {
	.name = "FINAL_NORM_MISSING",
	.section = "§12.4",
	.history = "no final norm after the MTP block: the head gets the "
		   "pre-norm sum and the next step too (ERNIE 4.5 in vLLM and "
		   "SGLang, against Baidu FastDeploy's shared final norm)",
	.applies_to = "mtp_step, draft_chain; families without mHC streams "
		      "that recycle the post-norm hidden",
	.shows_in = "hidden_post, logits, token, recycled at every step",
	.flags = MTP_BUG_NUMERIC | MTP_BUG_MUTANT | MTP_BUG_STEPWISE,
	.applies = applies,
	.after_step = after_step,
};
