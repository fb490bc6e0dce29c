/*
 * A checkpoint's key list through the loader rules of weightmap.c: every
 * key mapped (with the top-level head and embedding aliases each MTP layer
 * sees, §6.2 step 0), the FP8 indexer wk an engine holds for a scale it does
 * not recognise, and the quantization prefixes of V4's e_proj / h_proj.
 */
#include "mtp/weightmap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weights.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* §6.2 step 0: top-level head.weight / embed.weight as seen by MTP layer
 * i. An MTP layer that has its own copy in the checkpoint keeps it. */
static const char *alias_of(const struct mtp_wm_config *c,
			    const struct mtp_wm_names *keys, const char *key,
			    int i, char *buf, size_t n)
{
	if (mtp_family_def(c->family)->ckpt != MTP_CKPT_MTP ||
	    c->loader == MTP_LOADER_NO_ALIAS ||
	    !mtp_wm_rules_of(c->engine)->v4_alias)
		return NULL;
	if (strcmp(key, "head.weight") == 0)
		snprintf(buf, n, "mtp.%d.head.weight", i);
	else if (strcmp(key, "embed.weight") == 0)
		snprintf(buf, n, "mtp.%d.emb.tok_emb.weight", i);
	else
		return NULL;
	return mtp_wm_names_has(keys, buf) ? NULL : buf;
}

static enum mtp_status add_entry(struct mtp_wm_mapping *m, const char *key,
				 const char *via, const struct mtp_wm_target *t)
{
	struct mtp_wm_entry *e;

	if (m->n == m->cap) {
		int cap = m->cap ? 2 * m->cap : 256;
		void *v = realloc(m->v, (size_t)cap * sizeof(*m->v));

		if (!v)
			return MTP_ERR_NOMEM;
		m->v = v;
		m->cap = cap;
	}
	e = &m->v[m->n];
	memset(e, 0, sizeof(*e));
	e->key = key;
	e->via = via ? strdup(via) : NULL;
	e->param = t->skip ? NULL : strdup(t->param);
	if ((via && !e->via) || (!t->skip && !e->param)) {
		free(e->via);
		return MTP_ERR_NOMEM;
	}
	e->shard = t->shard;
	e->expert = t->expert;
	e->mtp_index = t->mtp_index;
	e->skip = t->skip;
	m->n++;
	return MTP_OK;
}

/* An FP8 indexer wk (one with a scale beside it) that the engine holds for
 * its scale (deepseek_v2.py _try_load_fp8_indexer_wk) while no scale of
 * the checkpoint is the one it waits for: never loaded. vLLM 0.23 with a
 * compressed-tensors checkpoint (`.weight_scale`; measured: the V3.2 /
 * GLM-5 compressed-tensors captures). */
static bool wk_held(const struct mtp_wm_config *c,
		    const struct mtp_wm_names *keys, const char *key)
{
	static const char *const scales[] = {"weight_scale_inv",
					     "weight_scale"};
	const char *want = mtp_wm_rules_of(c->engine)->indexer_wk_scale;
	size_t n = strlen(key), w = strlen(".indexer.wk.weight");
	char buf[MTP_WM_NAME_MAX];
	bool fp8 = false;

	if (!want || mtp_family_def(c->family)->ckpt == MTP_CKPT_MTP || n < w ||
	    strcmp(key + n - w, ".indexer.wk.weight") || n + 16 >= sizeof(buf))
		return false;
	for (size_t k = 0; k < ARRAY_LEN(scales); k++) {
		snprintf(buf, sizeof(buf), "%.*s%s", (int)(n - 6), key,
			 scales[k]);
		if (!mtp_wm_names_has(keys, buf))
			continue;
		if (strstr(scales[k], want))
			return false; /* its scale comes: folded */
		fp8 = true;
	}
	return fp8;
}

/* One key: itself, or (step 0) the alias each MTP layer sees. */
static enum mtp_status map_key(const struct mtp_wm_config *c,
			       const struct mtp_wm_names *keys,
			       const struct mtp_wm_names *params,
			       const char *key, struct mtp_wm_mapping *out)
{
	char buf[MTP_WM_NAME_MAX];
	struct mtp_wm_target t;
	enum mtp_status st = MTP_OK;
	bool aliased = false;

	for (int i = 0; i < c->mtp_layers && st == MTP_OK; i++) {
		const char *via = alias_of(c, keys, key, i, buf, sizeof(buf));

		if (!via)
			continue;
		mtp_wm_map_name(c, params, via, &t);
		st = add_entry(out, key, via, &t);
		aliased = true;
	}
	if (aliased || st)
		return st;
	mtp_wm_map_name(c, params, key, &t);
	if (!t.skip && wk_held(c, keys, key))
		mtp_wm_target_skip(&t,
				   "an FP8 indexer wk held for a scale "
				   "the engine does not recognise "
				   "(deepseek_v2.py "
				   "_try_load_fp8_indexer_wk): never loaded");
	return add_entry(out, key, NULL, &t);
}

static bool any_mla_name(const struct mtp_wm_names *s)
{
	for (int i = 0; s && i < s->n; i++)
		if (strstr(s->v[i], ".kv_a_proj_with_mqa.") ||
		    strstr(s->v[i], ".fused_qkv_a_proj."))
			return true;
	return false;
}

bool mtp_wm_glm_dsa(const struct mtp_wm_config *c,
		    const struct mtp_wm_names *keys,
		    const struct mtp_wm_names *params)
{
	/* a family whose row says GQA (GLM-4.x) with MLA names in the files:
	 * GLM-5.x, which vLLM loads as deepseek_mtp */
	return mtp_family_def(c->family)->attn == MTP_ATTN_GQA &&
	       (any_mla_name(keys) || any_mla_name(params));
}

enum mtp_status mtp_wm_map_keys(const struct mtp_wm_config *c,
				const struct mtp_wm_names *keys,
				const struct mtp_wm_names *params,
				struct mtp_wm_mapping *out)
{
	struct mtp_wm_config cc = *c;
	enum mtp_status st = MTP_OK;

	/* vLLM 0.33 (and 0.23) config/speculative.py hf_config_override:
	 * glm_moe_dsa becomes deepseek_mtp, so GLM-5.x loads through
	 * deepseek_mtp.py DeepSeekMTP.load_weights (CPU) or
	 * models/deepseek_v32/nvidia/mtp.py DeepseekV32MTP.load_weights
	 * (CUDA), which skip lm_head.weight (no spec layer, not embed_tokens),
	 * not glm4_moe_mtp.py Glm4MoeMTP.load_weights, which loads it into
	 * the MTP head (measured: the GLM-5 captures of python/tests/weights) */
	cc.glm_dsa = mtp_wm_glm_dsa(c, keys, params);
	memset(out, 0, sizeof(*out));
	for (int k = 0; k < keys->n && st == MTP_OK; k++)
		st = map_key(&cc, keys, params, keys->v[k], out);
	if (st)
		mtp_wm_mapping_fini(out);
	return st;
}

void mtp_wm_mapping_fini(struct mtp_wm_mapping *m)
{
	for (int i = 0; i < m->n; i++) {
		free(m->v[i].via);
		free(m->v[i].param);
	}
	free(m->v);
	memset(m, 0, sizeof(*m));
}

/* §8.4: the fixed loader passes prefix=f"{prefix}.e_proj"; the buggy one
 * (and vLLM 0.23's V4 MTP layer) passes none, and the quantization layer
 * name is "". */
enum mtp_status mtp_wm_modules(const struct mtp_wm_config *c,
			       struct mtp_wm_pairs *out)
{
	static const char *const leaves[] = {"e_proj", "h_proj"};
	char name[MTP_WM_NAME_MAX];
	enum mtp_status st = MTP_OK;

	memset(out, 0, sizeof(*out));
	if (mtp_family_def(c->family)->fusion != MTP_FUSION_HC_PROJ ||
	    c->dspark)
		return MTP_OK; /* V3's eh_proj is a plain nn.Linear; DSpark
				* has no e_proj / h_proj */
	for (int i = 0; i < c->mtp_layers && st == MTP_OK; i++) {
		for (size_t k = 0; k < ARRAY_LEN(leaves) && st == MTP_OK; k++) {
			snprintf(name, sizeof(name), "model.layers.%d.%s",
				 c->layer + i, leaves[k]);
			st = mtp_wm_pairs_add(
				out, name,
				c->loader == MTP_LOADER_NO_PREFIX ||
						!mtp_wm_rules_of(c->engine)
							 ->v4_eh_prefix
					? ""
					: name,
				0);
		}
	}
	return st;
}
