/*
 * The weight-mapping audit (SPEC.md §8.4-§8.6, ARCHITECTURE.md "Rules and
 * diagnoses"): judges a mapping of checkpoint keys to engine parameters
 * (the engine's own, captured, or a simulated loader's) against the
 * engine's parameters and modules, and names each problem as one of the
 * three known bugs. A finding carries the key, the target and the section.
 */
#include "mtp/weightmap.h"

#include "audit_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The parameters whose absence names a bug: per MTP layer, under
 * model.layers.{N+i}.; the embedding once, at the top level. */
struct required {
	const char *suffix;
	enum mtp_diag diag;
};

static const struct required v4_required[] = {
	{"mtp_block.ffn_norm.weight", MTP_DIAG_STALE_WEIGHT_REMAP},
	{"mtp_block.ffn.gate.weight", MTP_DIAG_STALE_WEIGHT_REMAP},
	{"mtp_block.ffn.gate.e_score_correction_bias",
	 MTP_DIAG_STALE_WEIGHT_REMAP},
	{"shared_head.head.weight", MTP_DIAG_MTP_HEAD_EMBED_UNLOADED},
	{NULL, MTP_DIAG_NONE},
};

static const struct required v3_required[] = {
	{"mtp_block.post_attention_layernorm.weight",
	 MTP_DIAG_STALE_WEIGHT_REMAP},
	{"mtp_block.mlp.gate.weight", MTP_DIAG_STALE_WEIGHT_REMAP},
	{"mtp_block.mlp.gate.e_score_correction_bias",
	 MTP_DIAG_STALE_WEIGHT_REMAP},
	{"shared_head.head.weight", MTP_DIAG_MTP_HEAD_EMBED_UNLOADED},
	{NULL, MTP_DIAG_NONE},
};

#define EMBED_PARAM "model.embed_tokens.weight"

/* Whether a dotted name has the component leaf (e_proj, h_proj). */
static bool has_component(const char *name, const char *leaf)
{
	size_t m = strlen(leaf);

	for (const char *p = strstr(name, leaf); p; p = strstr(p + 1, leaf))
		if ((p == name || p[-1] == '.') && (p[m] == '.' || !p[m]))
			return true;
	return false;
}

static const char *proj_leaf(const char *name)
{
	return has_component(name, "e_proj")	? "e_proj"
	       : has_component(name, "h_proj")	? "h_proj"
	       : has_component(name, "eh_proj") ? "eh_proj"
						: NULL;
}

/* One judged key -> parameter pair: the parameter must exist (§8.5), and
 * an e_proj/h_proj weight must land under its layer (§8.4). */
static void judge_pair(struct audit *au, const char *key, const char *param)
{
	char text[200];
	const char *leaf = proj_leaf(key);
	bool exists = mtp_wm_names_has(au->params, param);

	if (!exists) {
		mtp_wm_au_finding(
			au, MTP_DIAG_STALE_WEIGHT_REMAP, key, param,
			"the loader maps the key to a name that is no "
			"engine parameter");
	} else if (mtp_wm_names_add(&au->loaded, param)) {
		au->st = MTP_ERR_NOMEM;
	}
	if (leaf && !exists && mtp_wm_au_layer_of(au->c, param) < 0) {
		snprintf(text, sizeof(text),
			 "the %s weight does not land under "
			 "model.layers.{%d+i}.",
			 leaf, au->c->layer);
		mtp_wm_au_finding(au, MTP_DIAG_EH_PROJ_NO_PREFIX, key, param,
				  text);
	}
}

/* The judged mapping: the engine's MAP, or the simulated loader's. */
static void judge_mapping(struct audit *au)
{
	const struct mtp_wm_pairs *map = au->in->map;
	const struct mtp_wm_mapping *m = mtp_wm_au_simulated(au);
	const char *first = NULL;
	int unloaded = 0;

	if (map) {
		struct mtp_wm_names mapped = {0};

		for (int i = 0; i < map->n; i++) {
			judge_pair(au, map->v[i].a, map->v[i].b);
			if (mtp_wm_names_add(&mapped, map->v[i].a))
				au->st = MTP_ERR_NOMEM;
		}
		mtp_wm_names_sort(&mapped);
		for (int k = 0; k < au->in->keys->n; k++) {
			const char *key = au->in->keys->v[k];

			if (mtp_wm_au_key_layer(au->c, key) >= 0 &&
			    !mtp_wm_names_has(&mapped, key) && !unloaded++)
				first = key;
		}
		mtp_wm_names_fini(&mapped);
	} else {
		for (int i = 0; i < m->n; i++) {
			if (m->v[i].param)
				judge_pair(au, m->v[i].key, m->v[i].param);
			else if (mtp_wm_au_key_layer(au->c, m->v[i].key) >= 0 &&
				 !unloaded++)
				first = m->v[i].key;
		}
	}
	mtp_wm_names_sort(&au->loaded);
	au->a->n_mtp_unloaded = unloaded;
	if (unloaded)
		mtp_wm_au_note(
			au->a,
			"%d checkpoint key(s) of the MTP layers are loaded "
			"nowhere (first: %s)",
			unloaded, first);
}

/* The key the fixed loader loads param from (via its alias), or NULL. */
static const struct mtp_wm_entry *source_of(const struct audit *au,
					    const char *param)
{
	for (int i = 0; i < au->fixed.n; i++)
		if (au->fixed.v[i].param &&
		    strcmp(au->fixed.v[i].param, param) == 0)
			return &au->fixed.v[i];
	return NULL;
}

/* Whether key already has a finding (the cause of a missing parameter). */
static bool key_flagged(const struct audit *au, const char *key)
{
	for (int i = 0; i < au->a->n; i++)
		if (strcmp(au->a->f[i].key, key) == 0)
			return true;
	return false;
}

static void require(struct audit *au, const char *param, enum mtp_diag d)
{
	const struct mtp_wm_entry *src;
	char text[200];

	if (mtp_wm_names_has(&au->loaded, param))
		return;
	src = source_of(au, param);
	if (src && key_flagged(au, src->key))
		return; /* its key's finding already says where it went */
	if (!src)
		snprintf(text, sizeof(text),
			 "not loaded, and KEYS has no weight for it");
	else if (src->via)
		snprintf(text, sizeof(text),
			 "not loaded: KEYS has only top-level %.40s and the "
			 "loader does not alias it to %.50s (§6.2 step 0)",
			 src->key, src->via);
	else
		snprintf(text, sizeof(text),
			 "not loaded: the loader does not map %.120s to it",
			 src->key);
	mtp_wm_au_finding(au, d, src ? src->key : "", param, text);
}

/* DSpark: every parameter of the stages (model.layers.{s}. and the model
 * level) is loaded by some key, but the confidence head, which the loader
 * drops when no key names it, and the weight scales (judge_params). A
 * converter that dropped shared_experts.* is caught here. */
static void judge_dspark_required(struct audit *au)
{
	bool conf = false;
	int dropped = 0;

	for (int i = 0; i < au->in->keys->n; i++)
		conf |= strstr(au->in->keys->v[i], ".confidence_head.") != NULL;
	for (int k = 0; k < au->params->n; k++) {
		const char *p = au->params->v[k];

		if (mtp_wm_au_layer_of(au->c, p) < 0 ||
		    mtp_wm_au_is_weight_scale(p))
			continue;
		if (!conf && !strncmp(p, "model.confidence_head.", 22))
			dropped++;
		else
			require(au, p, MTP_DIAG_STALE_WEIGHT_REMAP);
	}
	if (dropped)
		mtp_wm_au_note(au->a,
			       "%d confidence_head parameter(s) with no key: "
			       "%s",
			       dropped,
			       "the DSpark loader drops the module at load");
}

/* §8.5 and §8.6: what the loaded set must contain. */
static void judge_required(struct audit *au)
{
	const struct required *r =
		mtp_family_mhc(au->c->family) ? v4_required : v3_required;
	char param[MTP_WM_NAME_MAX];

	if (au->c->dspark) {
		judge_dspark_required(au);
		return;
	}

	for (int i = 0; i < au->c->mtp_layers; i++) {
		for (int k = 0; r[k].suffix; k++) {
			snprintf(param, sizeof(param), "model.layers.%d.%s",
				 au->c->layer + i, r[k].suffix);
			require(au, param, r[k].diag);
		}
	}
	require(au, EMBED_PARAM, MTP_DIAG_MTP_HEAD_EMBED_UNLOADED);
}

/* The shared head's quantization prefix (vLLM builds it as
 * model.layers.{N+i}.head): a note, since no rule seen targets it, but an
 * ignore rule written for the module name would not match. */
static void note_shared_head(struct audit *au, const char *name,
			     const char *prefix)
{
	char text[MTP_WM_NAME_MAX];
	size_t n = strlen(name), m = strlen(".shared_head.head");

	if (n < m || strcmp(name + n - m, ".shared_head.head") ||
	    !strcmp(name, prefix))
		return;
	snprintf(text, sizeof(text), "%.40s (module %.40s)", prefix, name);
	mtp_wm_au_note(
		au->a,
		"%d MTP shared head built with quantization prefix %.90s: an "
		"ignore/target rule naming the module does not match it",
		1, text);
}

/* The quantization prefix of every projection and head module of the first
 * MTP layer, as an ignore/target rule sees it: one note. A module MODULES
 * does not list was not built quantizable (a plain linear, as vLLM 0.33
 * builds the V3 family's eh_proj), so no rule can reach it. */
static void note_prefixes(struct audit *au, const struct mtp_wm_pairs *mods)
{
	static const char *const v4[] = {"e_proj", "h_proj", "shared_head.head",
					 NULL};
	static const char *const v3[] = {"eh_proj", "shared_head.head", NULL};
	const char *const *leaf =
		mtp_family_def(au->c->family)->fusion == MTP_FUSION_HC_PROJ
			? v4
			: v3;
	char text[200], name[MTP_WM_NAME_MAX];
	size_t o = 0;

	for (int k = 0; leaf[k] && o < sizeof(text); k++) {
		const char *prefix = NULL;

		snprintf(name, sizeof(name), "model.layers.%d.%s", au->c->layer,
			 leaf[k]);
		for (int i = 0; i < mods->n && !prefix; i++)
			if (!strcmp(mods->v[i].a, name))
				prefix = mods->v[i].b;
		o += (size_t)snprintf(text + o, sizeof(text) - o,
				      "%s%s %s%.60s%s", k ? ", " : "", leaf[k],
				      prefix ? "'" : "",
				      prefix ? prefix
					     : "(not built "
					       "quantizable)",
				      prefix ? "'" : "");
	}
	mtp_wm_au_note(au->a,
		       "quantization prefixes of MTP layer %d (what "
		       "ignore/target rules match): %s",
		       au->c->layer, text);
}

/* §8.4: each e_proj/h_proj (eh_proj) module's quantization prefix must be its name
 * under model.layers.{N+i}., which ignore/target rules are written for. */
static void judge_modules(struct audit *au, const struct mtp_wm_pairs *mods)
{
	char want[MTP_WM_NAME_MAX], text[200];

	for (int k = 0; k < mods->n; k++) {
		const char *name = mods->v[k].a, *prefix = mods->v[k].b;
		const char *leaf = proj_leaf(name);
		int i = mtp_wm_au_layer_of(au->c, name);

		note_shared_head(au, name, prefix);
		if (!leaf ||
		    strcmp(strrchr(name, '.') ? strrchr(name, '.') + 1 : name,
			   leaf))
			continue;
		au->a->n_modules++;
		snprintf(want, sizeof(want), "model.layers.%d.%s",
			 au->c->layer + (i < 0 ? 0 : i), leaf);
		if (strcmp(prefix, want) == 0)
			continue;
		snprintf(text, sizeof(text),
			 "quantization prefix '%.60s' is not %.60s: "
			 "ignore/target rules for it cannot match",
			 prefix, want);
		mtp_wm_au_finding(au, MTP_DIAG_EH_PROJ_NO_PREFIX, name, prefix,
				  text);
	}
}

/* The quantization prefix MODULES gives module, or NULL. */
static const char *prefix_of(const struct audit *au, const char *module)
{
	const struct mtp_wm_pairs *m = au->in->modules;

	for (int i = 0; m && i < m->n; i++)
		if (strcmp(m->v[i].a, module) == 0)
			return m->v[i].b;
	return NULL;
}

/* A weight scale of an MTP module that no key loads: the module was built
 * quantized (for instance its ignore rule did not match its prefix, §8.4)
 * and the checkpoint has no scale for it, so the weight runs with the
 * scale's initial value (QUANT_SCALE_DROPPED, DIAGNOSES.md). */
static void scale_dropped(struct audit *au, const char *param)
{
	char module[MTP_WM_NAME_MAX], text[200];
	const char *dot = strrchr(param, '.'), *prefix;

	snprintf(module, sizeof(module), "%.*s", (int)(dot ? dot - param : 0),
		 param);
	prefix = prefix_of(au, module);
	if (prefix)
		snprintf(text, sizeof(text),
			 "built quantized (prefix '%.60s') but no key loads "
			 "this scale: the weight runs with its initial scale",
			 prefix);
	else
		snprintf(text, sizeof(text),
			 "built quantized but no key loads this scale: the "
			 "weight runs with its initial scale");
	mtp_wm_au_finding(au, MTP_DIAG_QUANT_SCALE_DROPPED, "", param, text);
}

/* §8.4 on parameter names, QUANT_SCALE_DROPPED on weight scales nothing
 * loads, and the notes on the other parameters nothing loads. */
static void judge_params(struct audit *au)
{
	const char *first = NULL;
	int unloaded = 0;

	au->a->n_params = au->params->n;
	for (int k = 0; k < au->params->n; k++) {
		const char *p = au->params->v[k];
		const char *leaf = proj_leaf(p);

		if (leaf && mtp_wm_au_layer_of(au->c, p) < 0)
			mtp_wm_au_finding(au, MTP_DIAG_EH_PROJ_NO_PREFIX, "", p,
					  "an e_proj/h_proj parameter outside "
					  "model.layers.{N+i}.");
		if ((mtp_wm_au_layer_of(au->c, p) < 0 &&
		     (au->c->dspark || strcmp(p, EMBED_PARAM) != 0)) ||
		    mtp_wm_names_has(&au->loaded, p))
			continue;
		if (!unloaded++)
			first = p;
		if (mtp_wm_au_is_weight_scale(p))
			scale_dropped(au, p);
	}
	au->a->n_params_unloaded = unloaded;
	if (unloaded)
		mtp_wm_au_note(
			au->a,
			"%d engine parameter(s) of the MTP layers are loaded "
			"by no key (first: %s)",
			unloaded, first);
}

static void count_keys(struct audit *au)
{
	const struct mtp_wm_mapping *m = mtp_wm_au_simulated(au);
	struct mtp_wm_audit *a = au->a;

	a->n_keys = au->in->keys->n;
	for (int k = 0; k < a->n_keys; k++)
		a->n_mtp_keys +=
			mtp_wm_au_key_layer(au->c, au->in->keys->v[k]) >= 0;
	if (au->in->map) {
		a->n_mapped = au->in->map->n;
		return;
	}
	for (int i = 0; i < m->n; i++)
		*(m->v[i].param ? &a->n_mapped : &a->n_skipped) += 1;
}

/* Every MTP layer must have keys: else the engine's completeness check
 * (§6.2 step 11) raises, and a wrong --layer would pass unnoticed. */
static enum mtp_status check_layers(const struct audit *au, char *err,
				    size_t errn)
{
	const struct mtp_wm_config *c = au->c;
	bool mtp_ckpt = mtp_family_def(c->family)->ckpt == MTP_CKPT_MTP;

	for (int i = 0; i < c->mtp_layers; i++) {
		bool any = false;

		for (int k = 0; k < au->in->keys->n && !any; k++)
			any = mtp_wm_au_key_layer(c, au->in->keys->v[k]) == i;
		if (any)
			continue;
		snprintf(err, errn,
			 "KEYS has no key of MTP layer %d (%s%d.*): wrong "
			 "--layer or --mtp-layers?",
			 c->layer + i, mtp_ckpt ? "mtp." : "model.layers.",
			 mtp_ckpt ? i : c->layer + i);
		return MTP_ERR_INVALID;
	}
	return MTP_OK;
}

/* The parameters the fixed loader produces stand in for the engine's. */
static enum mtp_status own_params(struct audit *au)
{
	for (int i = 0; i < au->fixed.n; i++)
		if (au->fixed.v[i].param &&
		    mtp_wm_names_add(&au->own_params, au->fixed.v[i].param))
			return MTP_ERR_NOMEM;
	mtp_wm_names_sort(&au->own_params);
	au->params = &au->own_params;
	return MTP_OK;
}

static enum mtp_status prepare(struct audit *au, char *err, size_t errn)
{
	struct mtp_wm_config fixed = *au->c;
	enum mtp_status st;

	if (au->c->layer < 1 || au->c->mtp_layers < 1 || !au->in->keys->n) {
		snprintf(err, errn, "nothing to audit: %s",
			 !au->in->keys->n
				 ? "KEYS is empty"
				 : "--layer and --mtp-layers must be >= 1");
		return MTP_ERR_INVALID;
	}
	fixed.loader = MTP_LOADER_FIXED;
	st = mtp_wm_map_keys(&fixed, au->in->keys, au->in->params, &au->fixed);
	if (!st && !au->in->params)
		st = own_params(au);
	if (!st && !au->in->map && au->c->loader != MTP_LOADER_FIXED)
		st = mtp_wm_map_keys(au->c, au->in->keys, au->params, &au->sim);
	if (st)
		snprintf(err, errn, "out of memory");
	return st ? st : check_layers(au, err, errn);
}

/* §8.4 on modules: the engine's, or the simulated loader's own. */
static void judge_all_modules(struct audit *au)
{
	struct mtp_wm_pairs own = {0};

	if (au->in->modules) {
		judge_modules(au, au->in->modules);
		note_prefixes(au, au->in->modules);
	} else if (!au->in->map) {
		if (mtp_wm_modules(au->c, &own))
			au->st = MTP_ERR_NOMEM;
		judge_modules(au, &own);
		mtp_wm_pairs_fini(&own);
	}
	if (mtp_family_def(au->c->family)->fusion == MTP_FUSION_HC_PROJ &&
	    !au->a->n_modules && !au->c->dspark)
		mtp_wm_au_note(
			au->a,
			"e_proj/h_proj quantization prefixes not checked (%d "
			"such modules; give --modules)%s",
			0, "");
}

enum mtp_status mtp_wm_audit_run(const struct mtp_wm_config *c,
				 const struct mtp_wm_inputs *in,
				 struct mtp_wm_audit *out, char *err,
				 size_t errn)
{
	struct audit au = {.c = c, .in = in, .params = in->params, .a = out};
	enum mtp_status st;
	bool confused = false;

	memset(out, 0, sizeof(*out));
	out->kind = mtp_wm_ckpt_kind(c, in->keys);
	out->dspark = c->dspark;
	st = prepare(&au, err, errn);
	if (st == MTP_OK) {
		count_keys(&au);
		out->n_params = au.params->n;
		judge_mapping(&au);
		confused = mtp_wm_au_confusion(&au);
		if (!confused) {
			judge_required(&au);
			judge_all_modules(&au);
			judge_params(&au);
		}
		if (mtp_wm_glm_dsa(c, in->keys, in->params))
			mtp_wm_au_note(
				out,
				"GLM-5.x (glm_moe_dsa: DeepSeek MLA names "
				"under --family glm, first MTP layer %d) "
				"is simulated with %s",
				c->layer,
				"the DeepSeek MTP loader's rules (no "
				"lm_head alias, no q/k/v stacking)");
		if (in->ckpt && !confused)
			mtp_wm_au_checkpoint(&au);
		st = au.st;
		if (st)
			snprintf(err, errn, "out of memory");
	}
	mtp_wm_mapping_fini(&au.fixed);
	mtp_wm_mapping_fini(&au.sim);
	mtp_wm_names_fini(&au.own_params);
	mtp_wm_names_fini(&au.loaded);
	if (st)
		mtp_wm_audit_fini(out);
	return st;
}

void mtp_wm_audit_fini(struct mtp_wm_audit *a)
{
	free(a->f);
	memset(a, 0, sizeof(*a));
}
