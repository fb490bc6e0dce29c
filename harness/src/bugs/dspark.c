/*
 * The DSpark step's diagnoses (SPEC.md §13.9, issue 31), each one edit of a
 * dspark_step call, the bug as the field reports describe it:
 *  - DSPARK_POSITIONS_SHIFTED: the draft block started one position early
 *    against its context (the block's RoPE phases off by one against the
 *    context keys'; ik_llama.cpp #2296, acceptance falling with context);
 *  - DSPARK_CAUSAL_BLOCK_MASK: the in-block mask left causal
 *    (vllm-ascend #13926);
 *  - DSPARK_AUX_LAYERS_WRONG: the aux hidden states taken from the wrong
 *    target layers (the P axis rotated by one: each part is another
 *    layer's);
 *  - DSPARK_MARKOV_BIAS_DROPPED: the Markov bias never added (markov_w2 as
 *    zeros: the bias of every position is 0);
 *  - DSPARK_MARKOV_KEYED_ON_IDS, DSPARK_PRE_MIX_NOT_DELAYED,
 *    DSPARK_COLLAPSE_ATTN_PRE_MIX, DSPARK_COLLAPSE_LAYER_PRE_MIX: mistakes
 *    inside the step (the Markov loop's key, a plain hc_pre, hc_collapse's
 *    pre-mix: the last attention's, or the layer before's) that no input can
 *    express: each edit sets one of dspark_step's internal attributes
 *    (mtp_params.dspark, which no file sets), honoured by the reference and
 *    the cpu backend where the buggy engines differ (SPEC.md §13.9).
 * A dspark_step call is one with ctx_positions (asked of the call's
 * tensors, not its op id; main_proj_norm's aux and markov_bias's markov_w2
 * are left alone). Each edit checks its own applies(): the mutant runs the
 * edit on every call.
 */
#include "bugs.h"

#include <string.h>

static bool is_dspark(const struct mtp_call *c)
{
	return mtp_bug_present(c, "ctx_positions");
}

static bool shift_applies(const struct mtp_call *c)
{
	return is_dspark(c) && c->dims.c >= 1;
}

/* The block one position early against its context is, to RoPE (which
 * sees only the difference), the context one position late: every
 * ctx_positions + 1 (no position becomes negative). A captured block's
 * positions are computed from the context's (§13.9.1), so there the edit
 * is ctx_positions - 1: the block's own positions one early. */
static enum mtp_status shift_edit(struct mtp_bug_edit *e)
{
	int i = mtp_call_in_index(e->c, "ctx_positions");
	const struct mtp_tensor *t = i < 0 ? NULL : &e->c->in[i];

	if (!t || !t->data || !shift_applies(e->c))
		return MTP_OK;
	if (mtp_bug_own(e, i, t->dtype))
		return MTP_ERR_NOMEM;
	for (int64_t k = 0; k < mtp_tensor_numel(t); k++)
		mtp_store(t->dtype, e->own[i].data, (size_t)k,
			  mtp_load(t->dtype, t->data, (size_t)k) +
				  (e->c->params->v2.captured ? -1 : 1));
	return MTP_OK;
}

static bool causal_applies(const struct mtp_call *c)
{
	/* a captured block's mask is inside the engine's layers */
	return is_dspark(c) && c->dims.t >= 2 && !c->params->v2.captured &&
	       c->params->block_mask == MTP_BLOCK_MASK_NON_CAUSAL;
}

static enum mtp_status causal_edit(struct mtp_bug_edit *e)
{
	if (causal_applies(e->c))
		e->p->block_mask = MTP_BLOCK_MASK_CAUSAL;
	return MTP_OK;
}

static bool aux_applies(const struct mtp_call *c)
{
	return is_dspark(c) && c->dims.p >= 2 && c->dims.c >= 1;
}

/* aux [C,P,H]: part p of each row takes part (p + 1) mod P. */
static enum mtp_status aux_edit(struct mtp_bug_edit *e)
{
	int i = mtp_call_in_index(e->c, "aux");
	const struct mtp_tensor *t = i < 0 ? NULL : &e->c->in[i];
	const int64_t np = e->c->dims.p;
	size_t part, off;

	if (!t || !t->data || t->ndim != 3 || !aux_applies(e->c))
		return MTP_OK;
	if (mtp_bug_own(e, i, t->dtype))
		return MTP_ERR_NOMEM;
	part = (size_t)t->shape[2] * mtp_dtype_size(t->dtype);
	for (int64_t r = 0; r < t->shape[0]; r++)
		for (int64_t p = 0; p < np; p++) {
			off = ((size_t)r * (size_t)np + (size_t)p) * part;
			memcpy((char *)e->own[i].data + off,
			       (const char *)t->data +
				       ((size_t)r * (size_t)np +
					(size_t)((p + 1) % np)) *
					       part,
			       part);
		}
	return MTP_OK;
}

static bool markov_applies(const struct mtp_call *c)
{
	return is_dspark(c) && c->dims.r >= 1;
}

static enum mtp_status markov_edit(struct mtp_bug_edit *e)
{
	int i = mtp_call_in_index(e->c, "markov_w2");
	const struct mtp_tensor *t = i < 0 ? NULL : &e->c->in[i];

	if (!t || !t->data || !markov_applies(e->c))
		return MTP_OK;
	/* mtp_tensor_alloc zeroes: the bias W2 . e is 0 everywhere */
	return mtp_bug_own(e, i, t->dtype);
}

/* Positions k >= 1 are keyed on a mask token instead of the token drawn
 * at k - 1 (position 0's key is the bonus token either way). */
static bool on_ids_applies(const struct mtp_call *c)
{
	return is_dspark(c) && c->dims.r >= 1 && c->dims.t >= 2;
}

static enum mtp_status on_ids_edit(struct mtp_bug_edit *e)
{
	if (on_ids_applies(e->c))
		e->p->dspark.markov_on_ids = true;
	return MTP_OK;
}

/* With one stream (M = 1) every pre-mix is a scale that the sublayer's
 * norm takes out: the two differ only in rounding. */
static bool undelayed_applies(const struct mtp_call *c)
{
	return is_dspark(c) && !c->params->v2.captured && c->dims.m >= 2 &&
	       c->params->num_layers >= 1;
}

static enum mtp_status undelayed_edit(struct mtp_bug_edit *e)
{
	if (undelayed_applies(e->c))
		e->p->dspark.pre_mix_undelayed = true;
	return MTP_OK;
}

/* A captured block carries only the last FFN's pre-mix (§13.9.1): the
 * layers, where the others are made, are the engine's. back sublayers
 * before the last FFN: 1 the last attention, 2 the layer before's FFN. */
static bool collapse_back_applies(const struct mtp_call *c, int back)
{
	return is_dspark(c) && !c->params->v2.captured &&
	       2 * c->params->num_layers > back;
}

static bool collapse_applies(const struct mtp_call *c)
{
	return collapse_back_applies(c, 1);
}

static bool collapse_layer_applies(const struct mtp_call *c)
{
	return collapse_back_applies(c, 2);
}

static enum mtp_status collapse_edit(struct mtp_bug_edit *e)
{
	if (collapse_applies(e->c))
		e->p->dspark.collapse_back = 1;
	return MTP_OK;
}

static enum mtp_status collapse_layer_edit(struct mtp_bug_edit *e)
{
	if (collapse_layer_applies(e->c))
		e->p->dspark.collapse_back = 2;
	return MTP_OK;
}

const struct mtp_bug_class mtp_bug_dspark_positions_shifted = {
	.name = "DSPARK_POSITIONS_SHIFTED",
	.section = "§13.9",
	.history = "DSpark draft block seeded one position early "
		   "(ik_llama.cpp #2296: acceptance 0.8 at 1K, 0.22 at 12K)",
	.applies_to = "dspark_step",
	.shows_in = "sublayer_inputs from layer 0's FFN on, h, the logits; "
		    "captured: positions",
	.flags = MTP_BUG_NUMERIC | MTP_BUG_MUTANT,
	.applies = shift_applies,
	.edit = shift_edit,
};

const struct mtp_bug_class mtp_bug_dspark_causal_block_mask = {
	.name = "DSPARK_CAUSAL_BLOCK_MASK",
	.section = "§13 Step DS-3",
	.history = "DSpark in-block attention left causal "
		   "(vllm-ascend #13926)",
	.applies_to = "dspark_step under block_mask = non_causal, N >= 2 "
		      "(not captured)",
	.shows_in = "every block row but the last, from layer 0's FFN input",
	.flags = MTP_BUG_NUMERIC | MTP_BUG_MUTANT,
	.applies = causal_applies,
	.edit = causal_edit,
};

const struct mtp_bug_class mtp_bug_dspark_aux_layers_wrong = {
	.name = "DSPARK_AUX_LAYERS_WRONG",
	.section = "§13 Step DS-0",
	.history = "DSpark aux hidden states taken from other target layers "
		   "than dspark_target_layer_ids",
	.applies_to = "dspark_step with P >= 2 aux layers",
	.shows_in = "main_x, then everything the context reaches",
	.flags = MTP_BUG_NUMERIC | MTP_BUG_MUTANT,
	.applies = aux_applies,
	.edit = aux_edit,
};

const struct mtp_bug_class mtp_bug_dspark_markov_bias_dropped = {
	.name = "DSPARK_MARKOV_BIAS_DROPPED",
	.section = "§13 Step DS-6",
	.history = "DSpark Markov bias never added to the draft logits",
	.applies_to = "dspark_step",
	.shows_in = "logits (equal to base_logits), tokens, confidence",
	.flags = MTP_BUG_NUMERIC | MTP_BUG_MUTANT,
	.applies = markov_applies,
	.edit = markov_edit,
};

const struct mtp_bug_class mtp_bug_dspark_markov_keyed_on_ids = {
	.name = "DSPARK_MARKOV_KEYED_ON_IDS",
	.section = "§13 Step DS-6",
	.history = "DSpark Markov bias keyed on the block's input ids (the "
		   "mask token) instead of the token drawn before",
	.applies_to = "dspark_step with N >= 2 and R >= 1",
	.shows_in = "logits, markov_embed, tokens and confidence from block "
		    "position 1 on",
	.flags = MTP_BUG_NUMERIC | MTP_BUG_MUTANT,
	.applies = on_ids_applies,
	.edit = on_ids_edit,
};

const struct mtp_bug_class mtp_bug_dspark_pre_mix_not_delayed = {
	.name = "DSPARK_PRE_MIX_NOT_DELAYED",
	.section = "§13 Step DS-4",
	.history = "DSpark layers run with plain mHC: each sublayer collapses "
		   "its streams with its own pre-mix, not the previous one's",
	.applies_to = "dspark_step with M >= 2",
	.shows_in = "sublayer_inputs from layer 0's FFN on, then everything",
	.flags = MTP_BUG_NUMERIC | MTP_BUG_MUTANT,
	.applies = undelayed_applies,
	.edit = undelayed_edit,
};

const struct mtp_bug_class mtp_bug_dspark_collapse_attn_pre_mix = {
	.name = "DSPARK_COLLAPSE_ATTN_PRE_MIX",
	.section = "§13 Step DS-5",
	.history = "DSpark hc_collapse with the last attention's pre-mix "
		   "instead of the last FFN's",
	.applies_to = "dspark_step",
	.shows_in = "h, then the logits, tokens and confidence; the streams "
		    "and pre_mixes unchanged",
	.flags = MTP_BUG_NUMERIC | MTP_BUG_MUTANT,
	.applies = collapse_applies,
	.edit = collapse_edit,
};

const struct mtp_bug_class mtp_bug_dspark_collapse_layer_pre_mix = {
	.name = "DSPARK_COLLAPSE_LAYER_PRE_MIX",
	.section = "§13 Step DS-5",
	.history = "DSpark hc_collapse with another layer's pre-mix (the "
		   "layer before the last's FFN) instead of the last FFN's",
	.applies_to = "dspark_step with L >= 2 layers",
	.shows_in = "h, then the logits, tokens and confidence; the streams "
		    "and pre_mixes unchanged",
	.flags = MTP_BUG_NUMERIC | MTP_BUG_MUTANT,
	.applies = collapse_layer_applies,
	.edit = collapse_layer_edit,
};
