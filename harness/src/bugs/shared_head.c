/*
 * The shared-head bugs seen in the field (SPEC.md §12.4, §8.6): the MTP
 * layer's own head replaced by the target model's lm_head, or never
 * loaded (all zeros). The replacement head is not float8: its block
 * scales go.
 */
#include "bugs.h"

static bool overwrite_applies(const struct mtp_call *c)
{
	return mtp_bug_is_step(c) && mtp_bug_present(c, "target_head_weight");
}

static bool uninit_applies(const struct mtp_call *c)
{
	return mtp_bug_is_step(c) || c->op->id == MTP_OP_LM_HEAD;
}

static enum mtp_status overwrite(struct mtp_bug_edit *e)
{
	const struct mtp_call *c = e->c;
	int it = mtp_call_in_index(c, "target_head_weight");

	if (it < 0 || !c->in[it].data)
		return MTP_OK;
	for (int i = 0; i < c->n_in; i++) {
		if (!c->in[i].data)
			continue;
		if (mtp_bug_is_head(c, i))
			e->in[i] = c->in[it];
		else if (mtp_bug_is_head_scale(c, i))
			e->in[i].data = NULL;
	}
	return MTP_OK;
}

static enum mtp_status uninit(struct mtp_bug_edit *e)
{
	const struct mtp_call *c = e->c;
	enum mtp_status st = MTP_OK;

	for (int i = 0; !st && i < c->n_in; i++) {
		if (!c->in[i].data)
			continue;
		if (mtp_bug_is_head(c, i))
			st = mtp_bug_own(e, i, c->act);
		else if (mtp_bug_is_head_scale(c, i))
			e->in[i].data = NULL;
	}
	return st;
}

const struct mtp_bug_class mtp_bug_shared_head_overwrite = {
	.name = "SHARED_HEAD_OVERWRITE",
	.section = "§12.4",
	.history = "the layer's own shared_head.head replaced by the target's "
		   "lm_head (vLLM #38339, fixed #38493/#38494; acceptance 97 % "
		   "-> 4 %)",
	.applies_to = "mtp_step, draft_chain with a target_head_weight",
	.shows_in = "logits, token",
	.flags = MTP_BUG_NUMERIC | MTP_BUG_MUTANT,
	.applies = overwrite_applies,
	.edit = overwrite,
};

const struct mtp_bug_class mtp_bug_shared_head_uninit = {
	.name = "SHARED_HEAD_UNINIT",
	.section = "§12.4, §8.6",
	.history = "the MTP head or embedding never loaded (vLLM #43456/#43459 "
		   "V4 head.weight/embed.weight; #34385 GLM-5 NaN logits)",
	.applies_to = "mtp_step, draft_chain, lm_head (and the weight sanity "
		      "rule on any dump)",
	.shows_in = "logits, token",
	.flags = MTP_BUG_NUMERIC | MTP_BUG_MUTANT,
	.applies = uninit_applies,
	.edit = uninit,
};
