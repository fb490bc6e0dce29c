/*
 * The loader rules per engine release (weightmap_engine.c): each measured
 * vLLM 0.33 / 0.23 difference from the spec's loader, one name at a time,
 * and the module prefix checks (eh_proj, the shared head's note).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "mtp/config.h"
#include "mtp/weightmap.h"

static struct mtp_wm_target map1(enum mtp_engine e, enum mtp_family f,
				 int layer, const char *name)
{
	struct mtp_wm_config c;
	struct mtp_wm_target t;

	mtp_wm_config_init(&c, f, layer, 1);
	c.engine = e;
	mtp_wm_map_name(&c, NULL, name, &t);
	return t;
}

#define EXPECT_MAP(e, f, l, name, want, sh)                                    \
	do {                                                                   \
		struct mtp_wm_target t_ = map1(e, f, l, name);                 \
		cr_expect_str_eq(t_.param, want, "%s: %s", name,               \
				 t_.skip ? t_.skip : t_.param);                \
		cr_expect_eq(t_.shard, sh, "%s: shard %d", name, t_.shard);    \
	} while (0)

Test(engine, parse)
{
	enum mtp_engine e;

	cr_expect(mtp_engine_parse("vllm@0.33", &e) &&
		  e == MTP_ENGINE_VLLM_0_33);
	cr_expect(mtp_engine_parse("vllm@0.23", &e) &&
		  e == MTP_ENGINE_VLLM_0_23);
	cr_expect(mtp_engine_parse("spec", &e) && e == MTP_ENGINE_SPEC);
	cr_expect(!mtp_engine_parse("vllm@0.34", &e));
	for (int i = 0; i < MTP_ENGINE_COUNT; i++)
		cr_expect(strstr(mtp_wm_rules_of(i)->source, ".py") ||
			  i == MTP_ENGINE_SPEC);
}

Test(engine, routed_experts)
{
	const char *k = "model.layers.61.mlp.experts.3.up_proj.weight";

	EXPECT_MAP(MTP_ENGINE_VLLM_0_33, MTP_FAMILY_DEEPSEEK_V3, 61, k,
		   "model.layers.61.mtp_block.mlp.experts.routed_experts."
		   "w13_weight",
		   1);
	EXPECT_MAP(MTP_ENGINE_VLLM_0_23, MTP_FAMILY_DEEPSEEK_V3, 61, k,
		   "model.layers.61.mtp_block.mlp.experts.w13_weight", 1);
	EXPECT_MAP(MTP_ENGINE_VLLM_0_33, MTP_FAMILY_DEEPSEEK_V4, 43,
		   "mtp.0.ffn.experts.2.w2.scale",
		   "model.layers.43.mtp_block.ffn.experts.routed_experts."
		   "w2_weight_scale",
		   -1);
}

Test(engine, top_level_embedding_and_glm_head)
{
	const char *e = "model.embed_tokens.weight";

	EXPECT_MAP(MTP_ENGINE_VLLM_0_33, MTP_FAMILY_DEEPSEEK_V3, 61, e, e, -1);
	EXPECT_MAP(MTP_ENGINE_VLLM_0_23, MTP_FAMILY_DEEPSEEK_V3, 61, e, "", -1);
	EXPECT_MAP(MTP_ENGINE_SPEC, MTP_FAMILY_DEEPSEEK_V3, 61, e, "", -1);
	EXPECT_MAP(MTP_ENGINE_VLLM_0_23, MTP_FAMILY_GLM, 92, e, e, -1);
	EXPECT_MAP(MTP_ENGINE_VLLM_0_33, MTP_FAMILY_GLM, 92, "lm_head.weight",
		   "model.layers.92.shared_head.head.weight", -1);
	EXPECT_MAP(MTP_ENGINE_VLLM_0_33, MTP_FAMILY_DEEPSEEK_V3, 61,
		   "lm_head.weight", "", -1);
	EXPECT_MAP(MTP_ENGINE_SPEC, MTP_FAMILY_GLM, 92, "lm_head.weight", "",
		   -1);
}

Test(engine, glm_qkv_and_indexer)
{
	EXPECT_MAP(MTP_ENGINE_VLLM_0_33, MTP_FAMILY_GLM, 92,
		   "model.layers.92.self_attn.k_proj.bias",
		   "model.layers.92.mtp_block.self_attn.qkv_proj.bias", 1);
	EXPECT_MAP(MTP_ENGINE_VLLM_0_33, MTP_FAMILY_GLM, 92,
		   "model.layers.92.self_attn.v_proj.weight_scale_inv",
		   "model.layers.92.mtp_block.self_attn.qkv_proj."
		   "weight_scale_inv",
		   2);
	EXPECT_MAP(MTP_ENGINE_VLLM_0_33, MTP_FAMILY_DEEPSEEK_V3, 61,
		   "model.layers.61.self_attn.indexer.wk.weight_scale_inv",
		   "model.layers.61.mtp_block.self_attn.indexer."
		   "wk_weights_proj.weight",
		   0);
	/* compressed-tensors names the scale weight_scale: folded too
	 * (measured: the GLM-5 compressed-tensors capture) */
	EXPECT_MAP(MTP_ENGINE_VLLM_0_33, MTP_FAMILY_DEEPSEEK_V3, 78,
		   "model.layers.78.self_attn.indexer.wk.weight_scale",
		   "model.layers.78.mtp_block.self_attn.indexer."
		   "wk_weights_proj.weight",
		   0);
	EXPECT_MAP(MTP_ENGINE_SPEC, MTP_FAMILY_DEEPSEEK_V3, 61,
		   "model.layers.61.self_attn.indexer.wk.weight_scale_inv",
		   "model.layers.61.mtp_block.self_attn.indexer."
		   "wk_weights_proj.weight_scale_inv",
		   0);
}

/* V4's top-level head: aliased by the spec's loader, skipped by vLLM's. */
Test(engine, v4_no_alias)
{
	struct mtp_wm_names keys = {0};
	struct mtp_wm_mapping m;
	struct mtp_wm_config c;

	cr_assert_eq(mtp_wm_names_add(&keys, "head.weight"), MTP_OK);
	mtp_wm_names_sort(&keys);
	for (int e = MTP_ENGINE_SPEC; e <= MTP_ENGINE_VLLM_0_33; e++) {
		mtp_wm_config_init(&c, MTP_FAMILY_DEEPSEEK_V4, 43, 1);
		c.engine = e;
		cr_assert_eq(mtp_wm_map_keys(&c, &keys, NULL, &m), MTP_OK);
		cr_assert_eq(m.n, 1);
		if (e == MTP_ENGINE_SPEC)
			cr_expect_str_eq(m.v[0].param,
					 "model.layers.43."
					 "shared_head.head.weight");
		else
			cr_expect_null(m.v[0].param);
		mtp_wm_mapping_fini(&m);
	}
	mtp_wm_names_fini(&keys);
}

/* eh_proj built with the wrong prefix is named; the shared head's prefix
 * is a note. */
Test(engine, module_prefixes)
{
	struct mtp_wm_names keys = {0}, params = {0};
	struct mtp_wm_pairs mods = {0};
	struct mtp_wm_inputs in = {
		.keys = &keys, .params = &params, .modules = &mods};
	struct mtp_wm_config c;
	struct mtp_wm_audit a;
	char err[256];

	cr_assert_eq(mtp_wm_names_add(&keys, "model.layers.61.enorm.weight"),
		     MTP_OK);
	cr_assert_eq(mtp_wm_names_add(&params, "model.layers.61.enorm.weight"),
		     MTP_OK);
	mtp_wm_names_sort(&params);
	cr_assert_eq(mtp_wm_pairs_add(&mods, "model.layers.61.eh_proj", "", 1),
		     MTP_OK);
	cr_assert_eq(mtp_wm_pairs_add(&mods, "model.layers.61.shared_head.head",
				      "model.layers.61.head", 2),
		     MTP_OK);
	mtp_wm_config_init(&c, MTP_FAMILY_DEEPSEEK_V3, 61, 1);
	c.engine = MTP_ENGINE_VLLM_0_33;
	cr_assert_eq(mtp_wm_audit_run(&c, &in, &a, err, sizeof(err)), MTP_OK,
		     "%s", err);
	int eh = 0;
	for (int i = 0; i < a.n; i++)
		eh += a.f[i].diag == MTP_DIAG_EH_PROJ_NO_PREFIX &&
		      !strcmp(a.f[i].key, "model.layers.61.eh_proj");
	cr_expect_eq(eh, 1); /* the other findings: the §8.5 required set */
	bool noted = false;
	for (int i = 0; i < a.n_notes; i++)
		noted |= strstr(a.notes[i], "model.layers.61.head") != NULL;
	cr_expect(noted);
	mtp_wm_audit_fini(&a);
	mtp_wm_pairs_fini(&mods);
	mtp_wm_names_fini(&params);
	mtp_wm_names_fini(&keys);
}

/* SPEC.md §12.5 #6: e_proj built without its prefix, so the checkpoint's
 * ignore rule for it did not match: built quantized, while the checkpoint
 * (quantized with e_proj ignored) has no scale for it. The audit names the
 * prefix and the scale that will never be loaded. */
Test(engine, ignored_module_built_quantized)
{
	const char *dir = MTP_SOURCE_DIR "/fixtures/weights/";
	char path[512], err[256];
	struct mtp_wm_names keys = {0}, all = {0}, params = {0};
	struct mtp_wm_pairs mods = {0};
	struct mtp_wm_inputs in = {
		.keys = &keys, .params = &params, .modules = &mods};
	struct mtp_wm_config c;
	struct mtp_wm_audit a;
	bool prefix = false, scale = false, noted = false;

	snprintf(path, sizeof(path), "%sdeepseek_v4_flash.keys.txt", dir);
	cr_assert_eq(mtp_wm_read_keys(path, &all, err, sizeof(err)), MTP_OK);
	for (int i = 0; i < all.n; i++)
		if (strcmp(all.v[i], "mtp.0.e_proj.scale"))
			cr_assert_eq(mtp_wm_names_add(&keys, all.v[i]), MTP_OK);
	snprintf(path, sizeof(path), "%sdeepseek_v4_flash.params.txt", dir);
	cr_assert_eq(mtp_wm_read_names(path, &params, err, sizeof(err)),
		     MTP_OK);
	mtp_wm_names_sort(&params);
	snprintf(path, sizeof(path), "%sdeepseek_v4_flash.modules_noprefix.txt",
		 dir);
	cr_assert_eq(mtp_wm_read_pairs(path, true, &mods, err, sizeof(err)),
		     MTP_OK);
	mtp_wm_config_init(&c, MTP_FAMILY_DEEPSEEK_V4, 43, 1);
	c.engine = MTP_ENGINE_SPEC; /* the alias step: head/embed loaded */
	cr_assert_eq(mtp_wm_audit_run(&c, &in, &a, err, sizeof(err)), MTP_OK,
		     "%s", err);
	for (int i = 0; i < a.n; i++) {
		cr_log_info("%d %s -> %s: %s", a.f[i].diag, a.f[i].key,
			    a.f[i].target, a.f[i].text);
		prefix |= a.f[i].diag == MTP_DIAG_EH_PROJ_NO_PREFIX &&
			  !strcmp(a.f[i].key, "model.layers.43.e_proj");
		scale |= a.f[i].diag == MTP_DIAG_QUANT_SCALE_DROPPED &&
			 !strcmp(a.f[i].target,
				 "model.layers.43.e_proj.weight_scale_inv") &&
			 strstr(a.f[i].text, "built quantized (prefix '')");
	}
	cr_expect(prefix && scale);
	for (int i = 0; i < a.n_notes; i++)
		noted |= strstr(a.notes[i], "MTP layer 43 (what ignore/target "
					    "rules match): e_proj '', h_proj "
					    "'', shared_head.head") != NULL;
	cr_expect(noted);
	mtp_wm_audit_fini(&a);
	mtp_wm_names_fini(&keys);
	mtp_wm_names_fini(&all);
	mtp_wm_names_fini(&params);
	mtp_wm_pairs_fini(&mods);
}

/* vLLM 0.23 folds only a `weight_scale_inv` into the FP8 indexer wk
 * (deepseek_v2.py _try_load_fp8_indexer_wk); compressed-tensors'
 * `weight_scale` goes on to a wk_weights_proj.weight_scale, and the FP8
 * wk it was meant for is held forever. */
Test(engine, indexer_wk_scale_names_023)
{
	static const char *const names[] = {
		"model.layers.61.self_attn.indexer.wk.weight",
		"model.layers.61.self_attn.indexer.wk.weight_scale",
		"model.layers.61.self_attn.indexer.weights_proj.weight",
	};
	struct mtp_wm_names keys = {0};
	struct mtp_wm_mapping m;
	struct mtp_wm_config c;

	EXPECT_MAP(MTP_ENGINE_VLLM_0_23, MTP_FAMILY_DEEPSEEK_V3, 61,
		   "model.layers.61.self_attn.indexer.wk.weight_scale_inv",
		   "model.layers.61.mtp_block.self_attn.indexer."
		   "wk_weights_proj.weight",
		   0);
	EXPECT_MAP(MTP_ENGINE_VLLM_0_23, MTP_FAMILY_DEEPSEEK_V3, 61, names[1],
		   "model.layers.61.mtp_block.self_attn.indexer."
		   "wk_weights_proj.weight_scale",
		   0);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		cr_assert_eq(mtp_wm_names_add(&keys, names[i]), MTP_OK);
	mtp_wm_names_sort(&keys);
	for (int k = 0; k < 2; k++) {
		enum mtp_engine e =
			k ? MTP_ENGINE_VLLM_0_33 : MTP_ENGINE_VLLM_0_23;

		mtp_wm_config_init(&c, MTP_FAMILY_DEEPSEEK_V3, 61, 1);
		c.engine = e;
		cr_assert_eq(mtp_wm_map_keys(&c, &keys, NULL, &m), MTP_OK);
		for (int i = 0; i < m.n; i++) {
			if (strcmp(m.v[i].key, names[0]))
				continue;
			if (e == MTP_ENGINE_VLLM_0_23) /* held forever */
				cr_expect(m.v[i].skip &&
					  strstr(m.v[i].skip, "held"));
			else
				cr_expect_str_eq(m.v[i].param,
						 "model.layers.61.mtp_block."
						 "self_attn.indexer."
						 "wk_weights_proj.weight");
		}
		mtp_wm_mapping_fini(&m);
	}
	mtp_wm_names_fini(&keys);
}

/* vLLM 0.23's V4 MTP layer builds e_proj / h_proj without prefix=. */
Test(engine, v4_eh_prefix_023)
{
	struct mtp_wm_pairs mods;
	struct mtp_wm_config c;

	for (int k = 0; k < 2; k++) {
		enum mtp_engine e =
			k ? MTP_ENGINE_VLLM_0_33 : MTP_ENGINE_VLLM_0_23;

		mtp_wm_config_init(&c, MTP_FAMILY_DEEPSEEK_V4, 61, 1);
		c.engine = e;
		cr_assert_eq(mtp_wm_modules(&c, &mods), MTP_OK);
		cr_assert_eq(mods.n, 2);
		cr_expect_str_eq(mods.v[0].a, "model.layers.61.e_proj");
		cr_expect_str_eq(mods.v[0].b,
				 e == MTP_ENGINE_VLLM_0_23
					 ? ""
					 : "model.layers.61.e_proj");
		mtp_wm_pairs_fini(&mods);
	}
}

/* The GLM-5.x layout as published: the MTP layer has no shared_head.head
 * or embed_tokens of its own (the target's lm_head.weight and
 * model.embed_tokens.weight are the only copies), and DeepSeek's MLA
 * attention. vLLM loads GLM-5 (glm_moe_dsa) with the DeepSeek MTP loader
 * (config/speculative.py hf_config_override -> deepseek_mtp.py /
 * deepseek_v32/nvidia/mtp.py load_weights), which skips lm_head.weight: the
 * MTP head is never loaded, even under --family glm (measured: the GLM-5
 * captures of python/tests/weights). GLM-4.5's q/k/v names keep
 * glm4_moe_mtp.py's lm_head alias. */
static int glm_head_findings(const char *attn_key)
{
	const char *names[] = {
		"model.embed_tokens.weight",
		"lm_head.weight",
		"model.layers.78.enorm.weight",
		"model.layers.78.hnorm.weight",
		"model.layers.78.eh_proj.weight",
		"model.layers.78.shared_head.norm.weight",
		attn_key,
	};
	struct mtp_wm_names keys = {0};
	struct mtp_wm_inputs in = {.keys = &keys};
	struct mtp_wm_mapping m;
	struct mtp_wm_config c;
	struct mtp_wm_audit a;
	char err[256];
	int n = 0;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		cr_assert_eq(mtp_wm_names_add(&keys, names[i]), MTP_OK);
	mtp_wm_config_init(&c, MTP_FAMILY_GLM, 78, 1);
	c.engine = MTP_ENGINE_VLLM_0_33;
	cr_assert_eq(mtp_wm_audit_run(&c, &in, &a, err, sizeof(err)), MTP_OK,
		     "%s", err);
	for (int i = 0; i < a.n; i++)
		n += a.f[i].diag == MTP_DIAG_MTP_HEAD_EMBED_UNLOADED &&
		     !strcmp(a.f[i].target,
			     "model.layers.78.shared_head.head.weight");
	cr_assert_eq(mtp_wm_map_keys(&c, &keys, NULL, &m), MTP_OK);
	for (int i = 0; i < m.n; i++)
		if (!strcmp(m.v[i].key, "lm_head.weight"))
			cr_expect_eq(m.v[i].param == NULL, n == 1, "%s: %s",
				     attn_key,
				     m.v[i].param ? m.v[i].param : "skipped");
	mtp_wm_mapping_fini(&m);
	mtp_wm_audit_fini(&a);
	mtp_wm_names_fini(&keys);
	return n;
}

Test(engine, glm5_loads_with_the_deepseek_loader)
{
	cr_expect_eq(glm_head_findings("model.layers.78.self_attn."
				       "kv_a_proj_with_mqa.weight"),
		     1, "GLM-5 (MLA): lm_head is not aliased to the MTP head");
	cr_expect_eq(glm_head_findings("model.layers.78.self_attn.q_proj."
				       "weight"),
		     0, "GLM-4.5 (q/k/v): lm_head loads the MTP head");
}
