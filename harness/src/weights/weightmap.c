/*
 * The checkpoint -> parameter name rules of vLLM's MTP loaders (SPEC.md
 * §6.1 for the V3 family, §6.2 for DeepSeek V4), as tables applied in the
 * loaders' order, and the loader variants that reproduce the known mapping
 * bugs. Matching is vLLM's: unanchored substring tests and replace-all, so
 * that the simulation goes wrong exactly where the engine would.
 */
#include "mtp/weightmap.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weights.h"

struct repl {
	const char *from, *to;
};

struct stacked {
	const char *param, *shard_name;
	int shard;
	bool if_exists; /* only when the fused parameter exists (§6.1 step 4) */
};

/* §6.2 step 3, WEIGHT_NAME_REMAPPING, applied in this order. */
static const struct repl v4_remap[] = {
	{".emb.tok_emb.weight", ".embed_tokens.weight"},
	{".head.weight", ".shared_head.head.weight"},
	{".norm.weight", ".shared_head.norm.weight"},
};

/* §8.5: the stale entries of deepseek_v4_mtp.py @023da1fc. They follow the
 * three above in the dict, which is why `.ffn.norm_gate.norm.weight` is not
 * rewritten again by `.norm.weight` and ends under `.mtp_block.`. */
static const struct repl v4_remap_buggy[] = {
	{".ffn_norm.weight", ".ffn.norm_gate.norm.weight"},
	{".ffn.gate.weight", ".ffn.norm_gate.gate.weight"},
	{".ffn.gate.tid2eid", ".ffn.norm_gate.tid2eid"},
};

/* _rewrite_spec_layer_name: names that stay at model.layers.{N+i}. (the
 * first one found decides; embed_tokens goes to the top level). */
static const char *const v4_layer_names[] = {
	"embed_tokens", "enorm",      "hnorm",	      "h_proj",	       "e_proj",
	"shared_head",	"hc_head_fn", "hc_head_base", "hc_head_scale", NULL,
};

static const char *const v3_layer_names[] = {
	"embed_tokens", "enorm", "hnorm", "eh_proj", "shared_head", NULL,
};

/* §6.2 step 7 (routed experts excluded). */
static const struct stacked v4_stacked[] = {
	{"gate_up_proj", "w1", 0, false},
	{"gate_up_proj", "w3", 1, false},
	{"attn.fused_wqa_wkv", "attn.wq_a", 0, false},
	{"attn.fused_wqa_wkv", "attn.wkv", 1, false},
};

/* §6.1 step 4; the indexer pair only ever matches V3.2 keys. */
static const struct stacked v3_stacked[] = {
	{"gate_up_proj", "gate_proj", 0, false},
	{"gate_up_proj", "up_proj", 1, false},
	{"fused_qkv_a_proj", "q_a_proj", 0, true},
	{"fused_qkv_a_proj", "kv_a_proj_with_mqa", 1, true},
	{"wk_weights_proj", "wk", 0, false},
	{"wk_weights_proj", "weights_proj", 1, false},
};

/* Routed experts (§6.1 step 5, §6.2 step 8): checkpoint projection name,
 * fused parameter stem, and the w13 half it fills. */
struct expert_rule {
	const char *ckpt, *param;
	int shard;
};

static const struct expert_rule v4_experts[] = {
	{"w1", "w13_", 0},
	{"w3", "w13_", 1},
	{"w2", "w2_", -1},
};

/* GLM's grouped-query attention (glm4_moe_mtp.py load_weights,
 * stacked_params_mapping), when the engine's rules say so. */
static const struct stacked glm_stacked[] = {
	{"qkv_proj", "q_proj", 0, false},
	{"qkv_proj", "k_proj", 1, false},
	{"qkv_proj", "v_proj", 2, false},
};

static const struct expert_rule v3_experts[] = {
	{"gate_proj", "w13_", 0},
	{"up_proj", "w13_", 1},
	{"down_proj", "w2_", -1},
};

static const char *const loader_names[MTP_LOADER_COUNT] = {
	[MTP_LOADER_FIXED] = "fixed",
	[MTP_LOADER_BUGGY_REMAP] = "buggy-remap",
	[MTP_LOADER_NO_ALIAS] = "no-alias",
	[MTP_LOADER_NO_PREFIX] = "no-prefix",
};

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

const char *mtp_loader_name(enum mtp_loader l)
{
	return (unsigned)l < MTP_LOADER_COUNT ? loader_names[l] : "?";
}

bool mtp_loader_parse(const char *s, enum mtp_loader *out)
{
	for (int i = 0; i < MTP_LOADER_COUNT; i++) {
		if (strcmp(s, loader_names[i]) == 0) {
			*out = (enum mtp_loader)i;
			return true;
		}
	}
	return false;
}

void mtp_wm_config_init(struct mtp_wm_config *c, enum mtp_family family,
			int layer, int mtp_layers)
{
	memset(c, 0, sizeof(*c));
	c->family = family;
	c->layer = layer;
	c->mtp_layers = mtp_layers;
	c->loader = MTP_LOADER_FIXED;
}

/* Python's str.replace (every occurrence); false if it would not fit. */
bool mtp_wm_replace_all(char *s, const char *from, const char *to)
{
	char buf[MTP_WM_NAME_MAX];
	size_t nf = strlen(from), nt = strlen(to), o = 0;
	const char *p = s, *q;

	while ((q = strstr(p, from))) {
		if (o + (size_t)(q - p) + nt >= sizeof(buf))
			return false;
		memcpy(buf + o, p, (size_t)(q - p));
		o += (size_t)(q - p);
		memcpy(buf + o, to, nt);
		o += nt;
		p = q + nf;
	}
	if (o + strlen(p) >= sizeof(buf))
		return false;
	strcpy(buf + o, p);
	strcpy(s, buf);
	return true;
}

bool mtp_wm_ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* get_spec_layer_idx_from_weight_name: i if s starts with
 * "model.layers.{N+i}." for some i < K, else -1. */
static int spec_index(const struct mtp_wm_config *c, const char *s)
{
	static const char pre[] = "model.layers.";
	char *end;
	long idx;

	if (strncmp(s, pre, sizeof(pre) - 1) != 0 ||
	    !isdigit((unsigned char)s[sizeof(pre) - 1]))
		return -1;
	idx = strtol(s + sizeof(pre) - 1, &end, 10);
	if (*end != '.' || idx < c->layer || idx >= c->layer + c->mtp_layers)
		return -1;
	return (int)(idx - c->layer);
}

/* §6.2 step 1 (_find_mtp_layer_idx): the first all-digit component of the
 * name (else 0) picks which `mtp.{i}.` is renamed. */
static bool v4_rename_layer(const struct mtp_wm_config *c, char *s)
{
	char from[32], to[48];
	long idx = 0;

	for (const char *p = s; *p;) {
		size_t n = strcspn(p, ".");

		if (n && n < 10 && strspn(p, "0123456789") == n) {
			idx = strtol(p, NULL, 10);
			break;
		}
		p += n + (p[n] == '.');
	}
	snprintf(from, sizeof(from), "mtp.%ld.", idx);
	snprintf(to, sizeof(to), "model.layers.%ld.", c->layer + idx);
	return mtp_wm_replace_all(s, from, to);
}

/* _rewrite_spec_layer_name: block weights go under `.mtp_block.`, the
 * shared embedding to the top level, the layer's own weights stay. */
static bool rewrite_spec_layer(const struct mtp_wm_config *c, int i, char *s)
{
	const char *const *names =
		mtp_family_mhc(c->family) ? v4_layer_names : v3_layer_names;
	char layer[48], block[64];

	snprintf(layer, sizeof(layer), "model.layers.%d.", c->layer + i);
	for (int k = 0; names[k]; k++) {
		if (!strstr(s, names[k]))
			continue;
		return k == 0 ? mtp_wm_replace_all(s, layer, "model.") : true;
	}
	snprintf(block, sizeof(block), "model.layers.%d.mtp_block.",
		 c->layer + i);
	return mtp_wm_replace_all(s, layer, block);
}

void mtp_wm_target_skip(struct mtp_wm_target *t, const char *why)
{
	t->param[0] = '\0';
	t->shard = t->expert = t->mtp_index = -1;
	t->skip = why;
}

void mtp_wm_target_set(struct mtp_wm_target *t, const char *s, int shard)
{
	snprintf(t->param, sizeof(t->param), "%s", s);
	t->shard = shard;
	t->skip = NULL;
}

/* Stacked (fused) parameters; true when a rule took the name. */
static bool map_stacked(const struct stacked *rules, size_t n,
			const struct mtp_wm_names *params, const char *s,
			struct mtp_wm_target *t)
{
	char buf[MTP_WM_NAME_MAX];

	for (size_t k = 0; k < n; k++) {
		if (!strstr(s, rules[k].shard_name))
			continue;
		snprintf(buf, sizeof(buf), "%s", s);
		if (!mtp_wm_replace_all(buf, rules[k].shard_name,
					rules[k].param))
			continue;
		if (rules[k].if_exists && params &&
		    !mtp_wm_names_has(params, buf))
			continue;
		mtp_wm_target_set(t, buf, rules[k].shard);
		return true;
	}
	return false;
}

/* `experts.{e}.<proj>.` -> `experts.<stem>` (fused_moe expert mapping). */
static bool map_expert(const struct mtp_wm_config *c,
		       const struct expert_rule *rules, size_t n, const char *s,
		       struct mtp_wm_target *t)
{
	const char *sub = mtp_wm_rules_of(c->engine)->routed_experts
				  ? "routed_experts."
				  : "";

	for (const char *p = strstr(s, "experts."); p;
	     p = strstr(p + 1, "experts.")) {
		const char *q = p + 8;
		char *end, buf[MTP_WM_NAME_MAX];
		long e = strtol(q, &end, 10);

		if (end == q || *end != '.')
			continue;
		for (size_t k = 0; k < n; k++) {
			size_t m = strlen(rules[k].ckpt);

			if (strncmp(end + 1, rules[k].ckpt, m) ||
			    end[1 + m] != '.')
				continue;
			snprintf(buf, sizeof(buf), "%.*sexperts.%s%s%s",
				 (int)(p - s), s, sub, rules[k].param,
				 end + 2 + m);
			mtp_wm_target_set(t, buf, rules[k].shard);
			t->expert = (int)e;
			return true;
		}
	}
	return false;
}

/* `\.experts\.\d+\.w[123]\.scale$` (§6.2 step 5). */
bool mtp_wm_is_expert_scale(const char *s)
{
	for (const char *p = strstr(s, ".experts."); p;
	     p = strstr(p + 1, ".experts.")) {
		const char *q = p + 9;

		if (!isdigit((unsigned char)*q))
			continue;
		q += strspn(q, "0123456789");
		if (q[0] == '.' && q[1] == 'w' && q[2] >= '1' && q[2] <= '3' &&
		    strcmp(q + 3, ".scale") == 0)
			return true;
	}
	return false;
}

/* §6.2 steps 9-10: attn_sink and the rest load under their own name, but
 * for the shared-expert down projection and the gate bias. */
static bool v4_rename_direct(const struct mtp_wm_config *c, char *s)
{
	bool buggy = c->loader == MTP_LOADER_BUGGY_REMAP;

	if (strstr(s, "attn_sink"))
		return true;
	if (!mtp_wm_replace_all(s, ".shared_experts.w2",
				".shared_experts.down_proj"))
		return false;
	if (!mtp_wm_ends_with(s, ".ffn.gate.bias"))
		return true;
	return mtp_wm_replace_all(
		s, ".ffn.gate.bias",
		buggy ? ".ffn.norm_gate.e_score_correction_bias"
		      : ".ffn.gate.e_score_correction_bias");
}

/* §6.2 steps 5-10, on a name already under model.layers.{N+i}. */
static void v4_map_tail(const struct mtp_wm_config *c, char *s,
			struct mtp_wm_target *t)
{
	bool routed = strstr(s, ".experts.") != NULL;

	if (mtp_wm_ends_with(s, ".scale")) {
		bool fp4 = mtp_wm_is_expert_scale(s) && !c->expert_fp8;

		s[strlen(s) - 6] = '\0';
		strcat(s, fp4 ? ".weight_scale" : ".weight_scale_inv");
	}
	if (routed) {
		if (!map_expert(c, v4_experts, ARRAY_LEN(v4_experts), s, t))
			mtp_wm_target_skip(
				t, "routed-expert name with no expert mapping");
	} else if (!map_stacked(v4_stacked, ARRAY_LEN(v4_stacked), NULL, s,
				t)) {
		if (v4_rename_direct(c, s))
			mtp_wm_target_set(t, s, -1);
		else
			mtp_wm_target_skip(t, "name too long");
	}
}

bool mtp_wm_v4_stacked(const char *s, struct mtp_wm_target *t)
{
	return map_stacked(v4_stacked, ARRAY_LEN(v4_stacked), NULL, s, t);
}

bool mtp_wm_v4_expert(const struct mtp_wm_config *c, const char *s,
		      struct mtp_wm_target *t)
{
	return map_expert(c, v4_experts, ARRAY_LEN(v4_experts), s, t);
}

/* Steps 1-4 of §6.2 (step 0 is the caller's), then the tail. */
const char *mtp_wm_v4_map(const struct mtp_wm_config *c, const char *name,
			  struct mtp_wm_target *t)
{
	char s[MTP_WM_NAME_MAX];
	int i;

	snprintf(s, sizeof(s), "%s", name);
	if (!v4_rename_layer(c, s))
		return "name too long";
	i = spec_index(c, s);
	if (i < 0)
		return "not an MTP layer (target model, or beyond "
		       "--mtp-layers)";
	for (size_t k = 0; k < ARRAY_LEN(v4_remap); k++)
		mtp_wm_replace_all(s, v4_remap[k].from, v4_remap[k].to);
	for (size_t k = 0; c->loader == MTP_LOADER_BUGGY_REMAP &&
			   k < ARRAY_LEN(v4_remap_buggy);
	     k++)
		mtp_wm_replace_all(s, v4_remap_buggy[k].from,
				   v4_remap_buggy[k].to);
	if (!rewrite_spec_layer(c, i, s))
		return "name too long";
	if (i > 0 && !strstr(s, ".layers"))
		return "shared top-level weight: loaded for the first MTP "
		       "layer only";
	v4_map_tail(c, s, t);
	t->mtp_index = t->skip ? -1 : i;
	return t->skip;
}

/* GLM-4.x, loaded by glm4_moe_mtp.py; GLM-5.x (c->glm_dsa) loads through
 * the DeepSeek MTP loaders, as V3.2 does (mtp_wm_map_keys). */
static bool glm_loader(const struct mtp_wm_config *c)
{
	return mtp_family_def(c->family)->lm_head_is_shared_head && !c->glm_dsa;
}

/* Top-level names an engine loads into the MTP model (weightmap_engine.c):
 * the shared embedding; GLM's lm_head as the first layer's shared head. */
static bool v3_top_level(const struct mtp_wm_config *c, const char *name,
			 struct mtp_wm_target *t)
{
	const struct mtp_wm_rules *r = mtp_wm_rules_of(c->engine);
	bool glm = glm_loader(c);
	char buf[MTP_WM_NAME_MAX];

	if (!strcmp(name, "model.embed_tokens.weight") &&
	    (r->top_embed || (glm && r->glm_lm_head))) {
		mtp_wm_target_set(t, name, -1);
	} else if (!strcmp(name, "lm_head.weight") && glm && r->glm_lm_head) {
		snprintf(buf, sizeof(buf),
			 "model.layers.%d.shared_head.head.weight", c->layer);
		mtp_wm_target_set(t, buf, -1);
	} else {
		return false;
	}
	t->mtp_index = 0;
	return true;
}

/* §6.1 step 4, GLM's q/k/v, and the FP8 indexer wk whose scale (either
 * name) the engine folds into the weight at load (no scale parameter). */
static bool v3_map_stacked(const struct mtp_wm_config *c,
			   const struct mtp_wm_names *params, char *s,
			   struct mtp_wm_target *t)
{
	const struct mtp_wm_rules *r = mtp_wm_rules_of(c->engine);
	char *wk = strstr(s, ".indexer.wk.weight_scale");

	/* deepseek_v2.py _try_load_fp8_indexer_wk: vLLM 0.33 tests
	 * `"weight_scale" in name`, so compressed-tensors' .weight_scale is
	 * folded like .weight_scale_inv (measured: the GLM-5 compressed-tensors
	 * capture); 0.23 tests "weight_scale_inv" */
	if (r->indexer_wk_scale && wk && strstr(wk, r->indexer_wk_scale))
		strcpy(wk, ".indexer.wk.weight");
	if (glm_loader(c) && r->glm_qkv &&
	    map_stacked(glm_stacked, ARRAY_LEN(glm_stacked), NULL, s, t))
		return true;
	return map_stacked(v3_stacked, ARRAY_LEN(v3_stacked), params, s, t);
}

/* §6.1 steps 1-6. */
const char *mtp_wm_v3_map(const struct mtp_wm_config *c,
			  const struct mtp_wm_names *params, const char *name,
			  struct mtp_wm_target *t)
{
	char s[MTP_WM_NAME_MAX];
	int i = spec_index(c, name);

	if (strstr(name, "rotary_emb.inv_freq"))
		return "rotary_emb.inv_freq (never loaded)";
	if (i < 0 && v3_top_level(c, name, t))
		return NULL;
	if (i < 0)
		return "not an MTP layer (target model, or beyond "
		       "--mtp-layers)";
	snprintf(s, sizeof(s), "%s", name);
	if (!rewrite_spec_layer(c, i, s))
		return "name too long";
	if (i > 0 && !strstr(s, ".layers"))
		return "shared top-level weight: loaded for the first MTP "
		       "layer only";
	if (strstr(s, "mlp.experts.")) {
		if (!map_expert(c, v3_experts, ARRAY_LEN(v3_experts), s, t))
			return "routed-expert name with no expert mapping";
	} else if (!v3_map_stacked(c, params, s, t)) {
		if (mtp_wm_ends_with(s, ".bias") && params &&
		    !mtp_wm_names_has(params, s))
			return "a bias the engine has no parameter for (vLLM "
			       "skips it)";
		mtp_wm_target_set(t, s, -1);
	}
	t->mtp_index = i;
	return NULL;
}
