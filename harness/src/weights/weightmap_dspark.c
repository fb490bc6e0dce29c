/*
 * DeepSeek V4.1's DSpark drafter ships under the same mtp.{s}.* prefix as
 * V4's MTP layer, so the key prefix cannot say which loader a checkpoint
 * needs. This file tells the two apart from the names (the checkpoint's
 * kind) and simulates vLLM 0.33's DSpark loader, read from
 * models/deepseek_v41/nvidia/dspark.py: _remap_dspark_name, then
 * DSparkDeepseekV4ForCausalLM.load_weights' steps in their order, with
 * vLLM's unanchored substring tests (docs/WEIGHTS.md "DSpark checkpoints").
 */
#include "mtp/weightmap.h"

#include <stdio.h>
#include <string.h>

#include "weights.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* The leaf a draft key starts with, after mtp.{i}. (V3 family:
 * model.layers.{N+i}.), that only one kind of drafter has. */
static const char *const mtp_markers[] = {
	"e_proj.", "h_proj.", "eh_proj.", "enorm.", "hnorm.", "hc_head_",
};
static const char *const dspark_markers[] = {
	"main_proj.",
	"main_norm.",
	"markov_head.",
	"confidence_head.",
};

/* _remap_dspark_name: what stays at model level (checked in this order,
 * after the two markov_head factors). */
static const char *const model_level[] = {
	"main_proj.", "main_norm.", "norm.", "markov_head.", "confidence_head.",
};

static const char *const kind_names[] = {
	[MTP_WM_KIND_NONE] = "none",	   [MTP_WM_KIND_MTP] = "mtp",
	[MTP_WM_KIND_DSPARK] = "dspark",   [MTP_WM_KIND_BOTH] = "both",
	[MTP_WM_KIND_NEITHER] = "neither",
};

const char *mtp_wm_kind_name(enum mtp_wm_kind k)
{
	return (unsigned)k < ARRAY_LEN(kind_names) ? kind_names[k] : "?";
}

static bool starts_any(const char *s, const char *const *v, size_t n)
{
	for (size_t k = 0; k < n; k++)
		if (strncmp(s, v[k], strlen(v[k])) == 0)
			return true;
	return false;
}

/* The part of a draft key after its layer prefix, or NULL when the key is
 * no draft key (any stage: a checkpoint with more stages than --mtp-layers
 * still has a kind). */
static const char *draft_rest(const struct mtp_wm_config *c, const char *key)
{
	int i, n = 0;

	if (mtp_family_def(c->family)->ckpt == MTP_CKPT_MTP)
		return sscanf(key, "mtp.%d.%n", &i, &n) == 1 && n && i >= 0
			       ? key + n
			       : NULL;
	if (sscanf(key, "model.layers.%d.%n", &i, &n) != 1 || !n ||
	    i < c->layer)
		return NULL;
	return key + n;
}

enum mtp_wm_kind mtp_wm_key_kind(const struct mtp_wm_config *c, const char *key)
{
	const char *rest = draft_rest(c, key);

	if (!rest)
		return MTP_WM_KIND_NONE;
	if (starts_any(rest, dspark_markers, ARRAY_LEN(dspark_markers)))
		return MTP_WM_KIND_DSPARK;
	if (starts_any(rest, mtp_markers, ARRAY_LEN(mtp_markers)))
		return MTP_WM_KIND_MTP;
	return MTP_WM_KIND_NONE;
}

enum mtp_wm_kind mtp_wm_ckpt_kind(const struct mtp_wm_config *c,
				  const struct mtp_wm_names *keys)
{
	bool draft = false, mtp = false, dspark = false;

	for (int k = 0; k < keys->n; k++) {
		enum mtp_wm_kind kk = mtp_wm_key_kind(c, keys->v[k]);

		draft |= draft_rest(c, keys->v[k]) != NULL;
		mtp |= kk == MTP_WM_KIND_MTP;
		dspark |= kk == MTP_WM_KIND_DSPARK;
	}
	if (mtp && dspark)
		return MTP_WM_KIND_BOTH;
	if (mtp || dspark)
		return mtp ? MTP_WM_KIND_MTP : MTP_WM_KIND_DSPARK;
	return draft ? MTP_WM_KIND_NEITHER : MTP_WM_KIND_NONE;
}

static bool dspark_name(const char *s)
{
	return !strncmp(s, "model.main_proj.", 16) ||
	       !strncmp(s, "model.markov_head.", 18);
}

bool mtp_wm_dspark_params(const struct mtp_wm_names *params,
			  const struct mtp_wm_pairs *map)
{
	for (int i = 0; params && i < params->n; i++)
		if (dspark_name(params->v[i]))
			return true;
	for (int i = 0; map && i < map->n; i++)
		if (dspark_name(map->v[i].b))
			return true;
	return false;
}

/* Whether some name of params starts with prefix. */
static bool any_under(const struct mtp_wm_names *params, const char *prefix)
{
	for (int i = 0; params && i < params->n; i++)
		if (!strncmp(params->v[i], prefix, strlen(prefix)))
			return true;
	return false;
}

/* _remap_dspark_name: `mtp\.(\d+)\.(.*)` (re.match: at the start); the
 * stage s, -1 for a name of the target model, -2 for a confidence head
 * the model was built without (PARAMS has none: enable_confidence_head
 * false). */
static int remap(const struct mtp_wm_names *params, const char *name, char *s,
		 size_t n)
{
	static const char w1[] = "markov_head.embed.",
			  w2[] = "markov_head.head.";
	int stage, k = 0;
	const char *rest;

	if (sscanf(name, "mtp.%9d.%n", &stage, &k) != 1 || !k || stage < 0 ||
	    name[4] < '0' || name[4] > '9')
		return -1;
	rest = name + k;
	if (!strncmp(rest, "confidence_head.", 16) && params &&
	    !any_under(params, "model.confidence_head."))
		return -2;
	if (!strncmp(rest, w1, sizeof(w1) - 1))
		snprintf(s, n, "model.markov_head.markov_w1.%s",
			 rest + sizeof(w1) - 1);
	else if (!strncmp(rest, w2, sizeof(w2) - 1))
		snprintf(s, n, "model.markov_head.markov_w2.%s",
			 rest + sizeof(w2) - 1);
	else if (starts_any(rest, model_level, ARRAY_LEN(model_level)))
		snprintf(s, n, "model.%s", rest);
	else
		snprintf(s, n, "model.layers.%d.%s", stage, rest);
	return stage;
}

/* `.scale` -> the expert suffix (fp4 .weight_scale, fp8 .weight_scale_inv)
 * or the linear one: weight_scale_inv, but weight_scale under MXFP8 linears
 * (model.py _linear_scale_param_name), which only PARAMS can tell. */
static void rename_scale(const struct mtp_wm_config *c,
			 const struct mtp_wm_names *params, char *s)
{
	char buf[MTP_WM_NAME_MAX];
	size_t n = strlen(s) - 6;

	s[n] = '\0';
	if (mtp_wm_is_expert_scale(strcat(strcpy(buf, s), ".scale"))) {
		strcat(s,
		       c->expert_fp8 ? ".weight_scale_inv" : ".weight_scale");
		return;
	}
	snprintf(buf, sizeof(buf), "%s.weight_scale", s);
	strcat(s, params && mtp_wm_names_has(params, buf)
			  ? ".weight_scale"
			  : ".weight_scale_inv");
}

/* load_weights after _remap_dspark_name: .scale, the shared experts' w2,
 * the routed experts, the stacked rules (decoder-layer names only, so that
 * markov_w1 never meets the w1 rule), the gate bias, the rest as is. */
static const char *load(const struct mtp_wm_config *c,
			const struct mtp_wm_names *params, char *s,
			struct mtp_wm_target *t)
{
	if (mtp_wm_ends_with(s, ".scale"))
		rename_scale(c, params, s);
	if (!mtp_wm_replace_all(s, ".shared_experts.w2",
				".shared_experts.down_proj"))
		return "name too long";
	if (strstr(s, ".experts.")) {
		if (!mtp_wm_v4_expert(c, s, t))
			return "routed-expert name with no expert mapping "
			       "(load_weights drops it without a word)";
		return NULL;
	}
	if (!strncmp(s, "model.layers.", 13) && mtp_wm_v4_stacked(s, t))
		return NULL;
	if (mtp_wm_ends_with(s, ".ffn.gate.bias") &&
	    !mtp_wm_replace_all(s, ".ffn.gate.bias",
				".ffn.gate.e_score_correction_bias"))
		return "name too long";
	mtp_wm_target_set(t, s, -1);
	return NULL;
}

const char *mtp_wm_dspark_map(const struct mtp_wm_config *c,
			      const struct mtp_wm_names *params,
			      const char *name, struct mtp_wm_target *t)
{
	char s[MTP_WM_NAME_MAX + 64];
	int stage = remap(params, name, s, sizeof(s));
	const char *why;

	if (stage == -1)
		return "not a DSpark stage (mtp.{s}.*): the target model's";
	if (stage == -2)
		return "confidence_head.* of a model built without one "
		       "(enable_confidence_head false)";
	if (strlen(s) >= MTP_WM_NAME_MAX)
		return "name too long";
	why = load(c, params, s, t);
	if (!why)
		t->mtp_index = stage;
	return why;
}

int mtp_wm_dspark_stage_of(const struct mtp_wm_config *c, const char *name)
{
	static const char *const top[] = {
		"model.main_proj.",   "model.main_norm.",	"model.norm.",
		"model.markov_head.", "model.confidence_head.",
	};
	int s, n = 0;

	for (size_t k = 0; k < ARRAY_LEN(top); k++)
		if (!strncmp(name, top[k], strlen(top[k])))
			return 0;
	if (sscanf(name, "model.layers.%d.%n", &s, &n) != 1 || !n || s < 0 ||
	    s >= c->mtp_layers)
		return -1;
	return s;
}
