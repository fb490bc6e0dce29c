/*
 * The diagnosis table (ARCHITECTURE.md "Rules and diagnoses") and the scoring that
 * names a failure: each applicable hypothesis is computed (diag_hyp.c) and
 * the observed outputs are measured against it and against the correct
 * reference, output by output, normwise.
 */
#include "mtp/diagnose.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Largest normwise error of the observed vs a hypothesis for a claim: the
 * legitimate variants measured here differ by about 1 %, the bugs by 40-70 %. */
#define CLAIM_MAX_ERR 0.05

static const struct mtp_diag_info infos[MTP_DIAG_COUNT] = {
	[MTP_DIAG_NONE] = {"NONE", "", "", true},
	[MTP_DIAG_PRE_NORM_RECYCLE] =
		{"PRE_NORM_RECYCLE", "§8.1",
		 "recycled hidden taken before the final norm (vLLM #45895, "
		 "#47448; GLM-5 #46075): step 0 right, later steps drift",
		 true},
	[MTP_DIAG_DOUBLE_FINAL_NORM] =
		{"DOUBLE_FINAL_NORM", "§8.1",
		 "logits from a twice-normed hidden (shared_head.norm applied "
		 "to an already-normed tensor; avoided in #47448): wrong at "
		 "every step",
		 true},
	[MTP_DIAG_MISSING_HC_POST] =
		{"MISSING_HC_POST", "§8.2",
		 "no hc_post after mtp_block (V4 XPU, fixed in vLLM #45240): "
		 "streams lack the last sublayer's mixing",
		 true},
	[MTP_DIAG_HC_POST_TWICE] =
		{"HC_POST_TWICE", "§8.3a",
		 "hc_post applied inside the ROCm block and again by the MTP "
		 "layer (vLLM #41946, fixed #42930)",
		 true},
	[MTP_DIAG_HC_STATE_DEFAULTS] =
		{"HC_STATE_DEFAULTS", "§8.3b",
		 "block cannot be called without post_mix/res_mix/residual "
		 "(TypeError after #41536/#41946; defaults in #42320, #42930)",
		 true},
	[MTP_DIAG_HC_HEAD_OWNER] =
		{"HC_HEAD_OWNER", "§8.3c",
		 "hc_head parameters of the wrong layer (predictor-level "
		 "hc_head_op after #41946; #42579, fixed #42930)",
		 true},
	[MTP_DIAG_MISSING_POS0_MASK] =
		{"MISSING_POS0_MASK", "Step V3-1",
		 "position-0 embeddings not zeroed before enorm", true},
	[MTP_DIAG_NORM_ROUNDING] =
		{"NORM_ROUNDING", "§2.1/§2.2",
		 "eager double rounding vs fused single rounding of RMSNorm: a "
		 "tolerance matter, not a bug",
		 true},
	[MTP_DIAG_STALE_WEIGHT_REMAP] = {"STALE_WEIGHT_REMAP", "§8.5",
					 "remap target names no parameter "
					 "(norm_gate, fixed on XPU in #45240)",
					 false},
	[MTP_DIAG_EH_PROJ_NO_PREFIX] = {"EH_PROJ_NO_PREFIX", "§8.4",
					"e_proj/h_proj built without prefix= "
					"(vLLM #44817, fix #44821)",
					false},
	[MTP_DIAG_CONVENTION_MISMATCH] =
		{"CONVENTION_MISMATCH", "§12.1",
		 "the dump was made under another value of a declared engine "
		 "convention than it declares (legitimate in itself: fix the "
		 "declaration or the engine)",
		 true},
	[MTP_DIAG_MTP_HEAD_EMBED_UNLOADED] =
		{"MTP_HEAD_EMBED_UNLOADED", "§8.6",
		 "MTP shared head / embedding never loaded from a "
		 "save_pretrained checkpoint",
		 false},
	[MTP_DIAG_DSPARK_LOADED_AS_MTP] =
		{"DSPARK_LOADED_AS_MTP", "§13",
		 "method=mtp on a DSpark checkpoint (vLLM #41834): main_proj, "
		 "markov and confidence heads loaded nowhere, e_proj/h_proj "
		 "never loaded",
		 false},
	[MTP_DIAG_DSPARK_LOADER_ON_MTP] =
		{"DSPARK_LOADER_ON_MTP", "§13",
		 "an MTP checkpoint given to the DSpark loader: e_proj/h_proj/"
		 "enorm/hnorm/hc_head keys have no DSpark parameter",
		 false},
	[MTP_DIAG_SPEC_STEP_LAYER_REUSE] =
		{"SPEC_STEP_LAYER_REUSE", "§12.4",
		 "every draft step runs MTP layer 0: spec_step_idx not passed "
		 "(vLLM #52688, #42146: multi-layer MTP is dead code)",
		 true},
	[MTP_DIAG_SHARED_HEAD_OVERWRITE] =
		{"SHARED_HEAD_OVERWRITE", "§12.4",
		 "the layer's own shared_head.head replaced by the target's "
		 "lm_head (vLLM #38339, fixed #38493/#38494; acceptance 97 % "
		 "-> 4 %)",
		 true},
	[MTP_DIAG_SHARED_HEAD_UNINIT] =
		{"SHARED_HEAD_UNINIT", "§12.4, §8.6",
		 "the MTP head or embedding never loaded (vLLM #43456/#43459 "
		 "V4 head.weight/embed.weight; #34385 GLM-5 NaN logits)",
		 true},
	[MTP_DIAG_QUANT_SCALE_DROPPED] =
		{"QUANT_SCALE_DROPPED", "§12.2, §12.4",
		 "FP8 projection used without its block scale: raw e4m3 values "
		 "as weights (SGLang #32440/#37736; ROCm/ATOM #755)",
		 true},
	[MTP_DIAG_QUANT_SCALE_RECIPROCAL] =
		{"QUANT_SCALE_DROPPED.reciprocal", "§12.2, §12.4",
		 "FP8 projection scaled by 1/scale_inv (weight_scale read as "
		 "weight_scale_inv)",
		 true},
	[MTP_DIAG_QUANT_SCALE_TRANSPOSED] =
		{"QUANT_SCALE_DROPPED.transposed", "§12.2, §12.4",
		 "FP8 projection with its block-scale matrix transposed "
		 "(scale_inv[i/128, o/128])",
		 true},
	[MTP_DIAG_QUANT_SCALE_OTHER_LAYER] =
		{"QUANT_SCALE_DROPPED.other_layer", "§12.2, §12.4",
		 "FP8 projection scaled by another MTP layer's block scales "
		 "(layer (l+1) mod L)",
		 true},
	[MTP_DIAG_ROUNDING_BIAS] =
		{"ROUNDING_BIAS", "§12.1, §12.4",
		 "directed rounding (truncating bf16 stores; Triton's CPU "
		 "interpreter truncates): every element within tolerance, the "
		 "signed error one-sided",
		 false},
	[MTP_DIAG_BATCH_VARIANT] =
		{"BATCH_VARIANT", "§10",
		 "a token's outputs change with the batch (T) or its row: the "
		 "verify pass (q_len = N) and decode (q_len = 1) run different "
		 "kernels, so greedy speculative decoding drifts (run "
		 "--invariance)",
		 false},
	[MTP_DIAG_NONDETERMINISTIC] =
		{"NONDETERMINISTIC", "§10",
		 "the same inputs give other bits on another run (atomics, "
		 "split-K order, uninitialised scratch; run --repeat N "
		 "--bitwise)",
		 false},
};

const struct mtp_diag_info *mtp_diag_info(enum mtp_diag d)
{
	return (unsigned)d < MTP_DIAG_COUNT ? &infos[d] : &infos[0];
}

bool mtp_diag_parse(const char *name, enum mtp_diag *out)
{
	for (int i = 1; i < MTP_DIAG_COUNT; i++) {
		if (strcmp(infos[i].name, name) == 0) {
			*out = (enum mtp_diag)i;
			return true;
		}
	}
	return false;
}

/* sqrt(sum (a-b)^2 / sum b^2); NaN/Inf must coincide, else +Inf. */
static double normwise(const struct mtp_tensor *a, const struct mtp_tensor *b)
{
	double se = 0, sb = 0;
	int64_t n = mtp_tensor_numel(b);

	if (!mtp_tensor_same_shape(a, b))
		return INFINITY;
	for (int64_t i = 0; i < n; i++) {
		double x = mtp_load(a->dtype, a->data, (size_t)i);
		double y = mtp_load(b->dtype, b->data, (size_t)i);

		if (!isfinite(x) || !isfinite(y)) {
			if (!(isnan(x) && isnan(y)) && x != y)
				return INFINITY;
			continue;
		}
		se += (x - y) * (x - y);
		sb += y * y;
	}
	if (se == 0)
		return 0;
	return sb > 0 ? sqrt(se / sb) : INFINITY;
}

static bool identical(const struct mtp_tensor *a, const struct mtp_tensor *b)
{
	return mtp_tensor_same_shape(a, b) &&
	       memcmp(a->data, b->data, mtp_tensor_nbytes(a)) == 0;
}

/* MISSING_HC_POST as the engine sees it: recycled is the block output f,
 * [T,H] instead of [T,M*H]. Returns the matching hypothesis tensor. */
static const struct mtp_tensor *alt_for(enum mtp_diag d,
					const struct mtp_call *c, int k,
					const struct mtp_tensor *got,
					const struct mtp_tensor *hyp)
{
	const char *name = c->sig->out[k].name, *slash = strrchr(name, '/');
	char f[MTP_NAME_MAX];

	if (d != MTP_DIAG_MISSING_HC_POST ||
	    strcmp(slash ? slash + 1 : name, "recycled"))
		return &hyp[k];
	snprintf(f, sizeof(f), "%.*sblock_out",
		 slash ? (int)(slash - name + 1) : 0, name);
	int j = mtp_call_out_index(c, f);

	if (j >= 0 && mtp_tensor_numel(got) == mtp_tensor_numel(&hyp[j]) &&
	    !mtp_tensor_same_shape(got, &hyp[k]))
		return &hyp[j];
	return &hyp[k];
}

static void score_one(const struct mtp_call *c, const struct mtp_tensor *got,
		      const struct mtp_tensor *want,
		      const struct mtp_tensor *hyp, struct mtp_diag_score *s)
{
	for (int k = 0; k < c->n_out; k++) {
		if (!got[k].data || !want[k].data ||
		    !mtp_dtype_is_float(want[k].dtype))
			continue;
		if (identical(&hyp[k], &want[k]) ||
		    !mtp_tensor_same_shape(&hyp[k], &want[k]))
			continue; /* the bug does not show in this output */
		const struct mtp_tensor *h =
			alt_for(s->diag, c, k, &got[k], hyp);
		double eh = mtp_tensor_same_shape(&got[k], h)
				    ? normwise(&got[k], h)
				    : INFINITY;
		double er = normwise(&got[k], &want[k]);

		s->informative++;
		s->err_hyp = fmax(s->err_hyp, eh);
		s->err_ref = fmax(s->err_ref, er);
	}
}

static void describe(const struct mtp_call *c, struct mtp_diag_result *r,
		     double err_ref)
{
	const struct mtp_diag_info *i = mtp_diag_info(r->diag);
	char how[96], what[120];

	if (isinf(err_ref))
		snprintf(
			how, sizeof(how),
			"(normwise %.2g; the correct output has another shape)",
			r->err_hyp);
	else if (r->err_hyp == 0)
		snprintf(how, sizeof(how),
			 "exactly (the correct reference is off by %.2g "
			 "normwise)",
			 err_ref);
	else if (r->ratio > 1000)
		snprintf(how, sizeof(how),
			 "over 1000x closer than the correct reference "
			 "(normwise %.2g vs %.2g)",
			 r->err_hyp, err_ref);
	else
		snprintf(how, sizeof(how),
			 "%.0fx closer than the correct reference (normwise "
			 "%.2g vs %.2g)",
			 r->ratio, r->err_hyp, err_ref);
	if (r->diag == MTP_DIAG_CONVENTION_MISMATCH) {
		mtp_diag_conv_describe(r->variant, c, what, sizeof(what));
		snprintf(r->text, sizeof(r->text), "%s [%s]: %s %s; %s",
			 i->name, i->section, what, how, i->history);
		return;
	}
	snprintf(r->text, sizeof(r->text),
		 "%s [%s]: the outputs match this %s %s; %s", i->name,
		 i->section,
		 r->diag == MTP_DIAG_NORM_ROUNDING ? "legitimate variant"
						   : "bug",
		 how, i->history);
}

/* Hypothesis d (variant v for CONVENTION_MISMATCH) into hyp. */
static enum mtp_status hypothesis(enum mtp_diag d, int v,
				  const struct mtp_call *c,
				  struct mtp_tensor *hyp)
{
	if (d == MTP_DIAG_CONVENTION_MISMATCH)
		return mtp_diag_conv_hypothesis(v, c, hyp);
	return mtp_diag_hypothesis(d, c, hyp);
}

static bool variant_applies(enum mtp_diag d, int v, const struct mtp_call *c)
{
	if (d == MTP_DIAG_CONVENTION_MISMATCH)
		return mtp_diag_conv_applies(v, c);
	return v == 0 && mtp_diag_applies(d, c);
}

/* Scores hypothesis `only` (or every one, MTP_DIAG_NONE) and claims the
 * clearest match. */
static void diagnose_set(const struct mtp_call *c, const struct mtp_tensor *got,
			 const struct mtp_tensor *want, enum mtp_diag only,
			 struct mtp_diag_result *out)
{
	struct mtp_tensor *hyp = calloc((size_t)c->n_out + 1, sizeof(*hyp));
	double best = INFINITY, best_ref = 0;

	memset(out, 0, sizeof(*out));
	for (int k = 0; hyp && k < MTP_DIAG_COUNT * MTP_CONV_COUNT; k++) {
		int d = k / MTP_CONV_COUNT, v = k % MTP_CONV_COUNT;
		struct mtp_diag_score s = {(enum mtp_diag)d, v, 0, 0, 0};

		if (d == 0 || !infos[d].numeric || !variant_applies(d, v, c) ||
		    (only && d != (int)only))
			continue;
		if (hypothesis(d, v, c, hyp) == MTP_OK)
			score_one(c, got, want, hyp, &s);
		for (int k = 0; k < c->n_out; k++)
			mtp_tensor_fini(&hyp[k]);
		if (!s.informative)
			continue;
		out->scores[out->n_scores++] = s;
		bool clear = s.err_hyp <= CLAIM_MAX_ERR &&
			     s.err_ref >= MTP_DIAG_MIN_RATIO * s.err_hyp &&
			     s.err_ref > 0;

		if (clear && s.err_hyp < best) {
			best = s.err_hyp;
			out->diag = s.diag;
			out->ratio = s.err_hyp > 0 ? s.err_ref / s.err_hyp
						   : INFINITY;
			out->err_hyp = s.err_hyp;
			out->variant = s.variant;
			best_ref = s.err_ref;
		}
	}
	free(hyp);
	out->info = out->diag == MTP_DIAG_NORM_ROUNDING;
	if (out->diag)
		describe(c, out, best_ref);
}

void mtp_diagnose(const struct mtp_call *c, const struct mtp_tensor *got,
		  const struct mtp_tensor *want, struct mtp_diag_result *out)
{
	diagnose_set(c, got, want, MTP_DIAG_NONE, out);
}

bool mtp_diagnose_declared(const struct mtp_call *c,
			   const struct mtp_tensor *got,
			   const struct mtp_tensor *want,
			   struct mtp_diag_result *out)
{
	bool any = false;

	for (int id = 0; id < MTP_CONV_COUNT; id++)
		any = any || mtp_diag_conv_applies(id, c);
	if (!any)
		return false;
	diagnose_set(c, got, want, MTP_DIAG_CONVENTION_MISMATCH, out);
	if (out->diag)
		return true;
	memset(out, 0, sizeof(*out));
	return false;
}

void mtp_diagnose_rounding(const struct mtp_call *c,
			   const struct mtp_tensor *got,
			   const struct mtp_tensor *want,
			   struct mtp_diag_result *out)
{
	if (strstr(c->op->attrs, "rounding"))
		diagnose_set(c, got, want, MTP_DIAG_NORM_ROUNDING, out);
	else
		memset(out, 0, sizeof(*out));
}
