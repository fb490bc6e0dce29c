/*
 * The hc_post bugs of an mHC layer (SPEC.md §8.2, §8.3): the block's last
 * hc_post left out or applied twice, and the block that cannot be called
 * without its hc state. On a captured call under the internal contract the
 * block's own hc_post is inside its captured output, so the layer cannot
 * leave it out or repeat it (§12.3): those are tried only under the
 * deferred contract.
 */
#include "bugs.h"

static bool applies(const struct mtp_call *c)
{
	return mtp_bug_is_step(c) && mtp_bug_mhc(c) &&
	       (!c->params->v2.captured ||
		c->params->contract == MTP_CONTRACT_DEFERRED);
}

/* The streams as the bug leaves them, recycled, then the logits. */
static enum mtp_status finish(const struct mtp_bug_step *s)
{
	enum mtp_status st = s->ops->copy(s, "recycled", "streams");

	return st ? st : s->ops->mhc_head(s, s->layer);
}

static enum mtp_status missing(const struct mtp_bug_step *s)
{
	enum mtp_status st = s->ops->copy(s, "streams", "block_residual");

	return st ? st : finish(s);
}

static enum mtp_status twice(const struct mtp_bug_step *s)
{
	enum mtp_status st = s->ops->hc_post_again(s);

	return st ? st : finish(s);
}

const struct mtp_bug_class mtp_bug_missing_hc_post = {
	.name = "MISSING_HC_POST",
	.section = "§8.2",
	.history = "no hc_post after mtp_block (V4 XPU, fixed in vLLM #45240): "
		   "streams lack the last sublayer's mixing",
	.applies_to = "mtp_step, draft_chain of mHC families (captured: "
		      "deferred contract)",
	.shows_in = "streams, recycled (then [T,H] instead of [T,M*H]), "
		    "head_hidden, logits",
	.flags = MTP_BUG_NUMERIC | MTP_BUG_MUTANT | MTP_BUG_STEPWISE,
	.alt_out = "recycled", /* [T,H]: the block output f */
	.alt_from = "block_out",
	.applies = applies,
	.after_step = missing,
};

const struct mtp_bug_class mtp_bug_hc_post_twice = {
	.name = "HC_POST_TWICE",
	.section = "§8.3a",
	.history = "hc_post applied inside the ROCm block and again by the MTP "
		   "layer (vLLM #41946, fixed #42930)",
	.applies_to = "mtp_step, draft_chain of mHC families (captured: "
		      "deferred contract)",
	.shows_in = "streams, recycled, head_hidden, logits",
	.flags = MTP_BUG_NUMERIC | MTP_BUG_MUTANT | MTP_BUG_STEPWISE,
	.applies = applies,
	.after_step = twice,
};

/* A V4 block called by the MTP layer without post_mix/res_mix/residual,
 * as it always is (a captured call: the engine did call its block). */
static bool refuses(const struct mtp_call *c)
{
	int ir = mtp_call_in_index(c, "residual");

	if (!mtp_bug_mhc(c) || c->params->v2.captured)
		return false;
	if (c->op->id == MTP_OP_MTP_BLOCK)
		return ir < 0 || !c->in[ir].data;
	return mtp_bug_is_step(c);
}

const struct mtp_bug_class mtp_bug_hc_state_defaults = {
	.name = "HC_STATE_DEFAULTS",
	.section = "§8.3b",
	.history =
		"block cannot be called without post_mix/res_mix/residual "
		"(TypeError after #41536/#41946; defaults in #42320, #42930)",
	.applies_to = "an mHC block called without its hc state (named from "
		      "the error, no hypothesis)",
	.shows_in = "the call fails",
	.flags = MTP_BUG_NUMERIC | MTP_BUG_MUTANT,
	.refuses = refuses,
	.refusal = "TypeError: DeepseekV4DecoderLayer.forward() missing 3 "
		   "required positional arguments: 'post_mix', 'res_mix', and "
		   "'residual'",
};
