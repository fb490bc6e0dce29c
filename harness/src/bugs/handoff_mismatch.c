/*
 * HANDOFF_MISMATCH (SPEC.md §12.4): draft step 0 receives another kind of
 * hidden than the later steps do: the target hands over its last layer's
 * raw pre-norm sum, while every later step receives the MTP layer's
 * post-norm recycled hidden (LightLLM #1402: accept length 1.80 -> 2.74
 * after the fix). Judged on the hand-off a dump carries (target_handoff,
 * §5.5); a different stream layout (an mHC target's collapsed hidden) has
 * no op yet.
 */
#include "bugs.h"

static bool applies(const struct mtp_call *c)
{
	return c->op->id == MTP_OP_TARGET_HANDOFF && !mtp_bug_mhc(c);
}

static enum mtp_status edit(struct mtp_bug_edit *e)
{
	if (e->c->op->id == MTP_OP_TARGET_HANDOFF)
		e->p->handoff_pre_norm = true;
	return MTP_OK;
}

const struct mtp_bug_class mtp_bug_handoff_mismatch = {
	.name = "HANDOFF_MISMATCH",
	.section = "§12.4",
	.history = "step 0 handed the target's pre-norm hidden while later "
		   "steps get the post-norm one, or the reverse on a family "
		   "that recycles the pre-norm sum (LightLLM #1402, Qwen3.5 "
		   "MTP: accept length 1.80 -> 2.74 after the fix)",
	.applies_to = "target_handoff (V3-style families)",
	.shows_in = "handoff: the hidden draft step 0 receives",
	.flags = MTP_BUG_NUMERIC | MTP_BUG_MUTANT,
	.applies = applies,
	.edit = edit,
};
