/*
 * SPEC_STEP_LAYER_REUSE (SPEC.md §12.4): every draft step runs MTP layer 0
 * because spec_step_idx is not passed: a chain with pass_step_idx = 1 run
 * as 0.
 */
#include "bugs.h"

static bool applies(const struct mtp_call *c)
{
	const struct mtp_params *p = c->params;

	return mtp_bug_is_chain(c) && p->num_layers >= 2 && p->pass_step_idx &&
	       p->num_steps >= 2;
}

static enum mtp_status edit(struct mtp_bug_edit *e)
{
	if (mtp_bug_is_chain(e->c) && e->p->num_layers >= 2)
		e->p->pass_step_idx = false;
	return MTP_OK;
}

const struct mtp_bug_class mtp_bug_spec_step_layer_reuse = {
	.name = "SPEC_STEP_LAYER_REUSE",
	.section = "§12.4",
	.history =
		"every draft step runs MTP layer 0: spec_step_idx not passed "
		"(vLLM #52688, #42146: multi-layer MTP is dead code)",
	.applies_to = "draft_chain with two layers or more, two steps or more "
		      "and spec_step_idx passed",
	.shows_in = "every output of the steps after step 0",
	.flags = MTP_BUG_NUMERIC | MTP_BUG_MUTANT,
	.applies = applies,
	.edit = edit,
};
