/*
 * The weight-mapping audit:
 *  - every row of SPEC.md §6.1 and §6.2's mapping tables maps as the table
 *    says (expectations copied from the spec by hand);
 *  - over the bundled key lists (fixtures/weights, parameters derived by
 *    hand), the fixed loader is clean and each buggy variant is caught and
 *    named as its own bug; the same through --modules and --mapping;
 *  - bad input is exit 2 with one line naming the file (and line).
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mtp/config.h"
#include "mtp/meta.h"
#include "mtp/weightmap.h"

#define WDIR MTP_SOURCE_DIR "/fixtures/weights/"
#define V4_KEYS WDIR "deepseek_v4_flash.keys.txt"
#define V4_PARAMS WDIR "deepseek_v4_flash.params.txt"
#define V3_KEYS WDIR "deepseek_v3.keys.txt"
#define V3_PARAMS WDIR "deepseek_v3.params.txt"

/* Names are arrays, not pointers: Criterion runs each parameterized test
 * in a fresh process, where the parent's pointers mean nothing. */
struct row {
	char key[80], param[112];
	int shard, expert;
};

/* SPEC.md §6.2 table, fixed loader, Flash N = 43, fp4 routed experts. */
/* one table row a line */
/* clang-format off */
static struct row v4_rows[] = {
	{"mtp.0.enorm.weight", "model.layers.43.enorm.weight", -1, -1},
	{"mtp.0.hnorm.weight", "model.layers.43.hnorm.weight", -1, -1},
	{"mtp.0.e_proj.weight", "model.layers.43.e_proj.weight", -1, -1},
	{"mtp.0.e_proj.scale", "model.layers.43.e_proj.weight_scale_inv", -1, -1},
	{"mtp.0.h_proj.weight", "model.layers.43.h_proj.weight", -1, -1},
	{"mtp.0.h_proj.scale", "model.layers.43.h_proj.weight_scale_inv", -1, -1},
	{"mtp.0.norm.weight", "model.layers.43.shared_head.norm.weight", -1, -1},
	{"head.weight", "model.layers.43.shared_head.head.weight", -1, -1},
	{"embed.weight", "model.embed_tokens.weight", -1, -1},
	{"mtp.0.hc_head_fn", "model.layers.43.hc_head_fn", -1, -1},
	{"mtp.0.hc_head_base", "model.layers.43.hc_head_base", -1, -1},
	{"mtp.0.hc_head_scale", "model.layers.43.hc_head_scale", -1, -1},
	{"mtp.0.hc_attn_fn", "model.layers.43.mtp_block.hc_attn_fn", -1, -1},
	{"mtp.0.hc_attn_base", "model.layers.43.mtp_block.hc_attn_base", -1, -1},
	{"mtp.0.hc_ffn_scale", "model.layers.43.mtp_block.hc_ffn_scale", -1, -1},
	{"mtp.0.attn_norm.weight", "model.layers.43.mtp_block.attn_norm.weight", -1, -1},
	{"mtp.0.ffn_norm.weight", "model.layers.43.mtp_block.ffn_norm.weight", -1, -1},
	{"mtp.0.attn.wq_a.weight", "model.layers.43.mtp_block.attn.fused_wqa_wkv.weight", 0, -1},
	{"mtp.0.attn.wq_a.scale", "model.layers.43.mtp_block.attn.fused_wqa_wkv.weight_scale_inv", 0, -1},
	{"mtp.0.attn.wkv.weight", "model.layers.43.mtp_block.attn.fused_wqa_wkv.weight", 1, -1},
	{"mtp.0.attn.wkv.scale", "model.layers.43.mtp_block.attn.fused_wqa_wkv.weight_scale_inv", 1, -1},
	{"mtp.0.attn.wq_b.weight", "model.layers.43.mtp_block.attn.wq_b.weight", -1, -1},
	{"mtp.0.attn.wq_b.scale", "model.layers.43.mtp_block.attn.wq_b.weight_scale_inv", -1, -1},
	{"mtp.0.attn.wo_a.scale", "model.layers.43.mtp_block.attn.wo_a.weight_scale_inv", -1, -1},
	{"mtp.0.attn.wo_b.weight", "model.layers.43.mtp_block.attn.wo_b.weight", -1, -1},
	{"mtp.0.attn.q_norm.weight", "model.layers.43.mtp_block.attn.q_norm.weight", -1, -1},
	{"mtp.0.attn.kv_norm.weight", "model.layers.43.mtp_block.attn.kv_norm.weight", -1, -1},
	{"mtp.0.attn.attn_sink", "model.layers.43.mtp_block.attn.attn_sink", -1, -1},
	{"mtp.0.ffn.gate.weight", "model.layers.43.mtp_block.ffn.gate.weight", -1, -1},
	{"mtp.0.ffn.gate.bias", "model.layers.43.mtp_block.ffn.gate.e_score_correction_bias", -1, -1},
	{"mtp.0.ffn.shared_experts.w1.weight", "model.layers.43.mtp_block.ffn.shared_experts.gate_up_proj.weight", 0, -1},
	{"mtp.0.ffn.shared_experts.w3.scale", "model.layers.43.mtp_block.ffn.shared_experts.gate_up_proj.weight_" "scale_inv", 1, -1},
	{"mtp.0.ffn.shared_experts.w2.weight", "model.layers.43.mtp_block.ffn.shared_experts.down_proj.weight", -1, -1},
	{"mtp.0.ffn.shared_experts.w2.scale", "model.layers.43.mtp_block.ffn.shared_experts.down_proj.weight_scale_" "inv", -1, -1},
	{"mtp.0.ffn.experts.7.w1.weight", "model.layers.43.mtp_block.ffn.experts.w13_weight", 0, 7},
	{"mtp.0.ffn.experts.7.w3.weight", "model.layers.43.mtp_block.ffn.experts.w13_weight", 1, 7},
	{"mtp.0.ffn.experts.7.w1.scale", "model.layers.43.mtp_block.ffn.experts.w13_weight_scale", 0, 7},
	{"mtp.0.ffn.experts.255.w2.weight", "model.layers.43.mtp_block.ffn.experts.w2_weight", -1, 255},
	{"mtp.0.ffn.experts.255.w2.scale", "model.layers.43.mtp_block.ffn.experts.w2_weight_scale", -1, 255},
};
/* clang-format on */
/* SPEC.md §6.1 table, DeepSeek-V3 N = 61. */
/* one table row a line */
/* clang-format off */
static struct row v3_rows[] = {
	{"model.layers.61.embed_tokens.weight", "model.embed_tokens.weight", -1, -1},
	{"model.layers.61.enorm.weight", "model.layers.61.enorm.weight", -1, -1},
	{"model.layers.61.hnorm.weight", "model.layers.61.hnorm.weight", -1, -1},
	{"model.layers.61.eh_proj.weight", "model.layers.61.eh_proj.weight", -1, -1},
	{"model.layers.61.shared_head.norm.weight", "model.layers.61.shared_head.norm.weight", -1, -1},
	{"model.layers.61.shared_head.head.weight", "model.layers.61.shared_head.head.weight", -1, -1},
	{"model.layers.61.input_layernorm.weight", "model.layers.61.mtp_block.input_layernorm.weight", -1, -1},
	{"model.layers.61.post_attention_layernorm.weight", "model.layers.61.mtp_block.post_attention_layernorm.weight", -1, -1},
	{"model.layers.61.self_attn.q_a_proj.weight", "model.layers.61.mtp_block.self_attn.fused_qkv_a_proj.weight", 0, -1},
	{"model.layers.61.self_attn.q_a_proj.weight_scale_inv", "model.layers.61.mtp_block.self_attn.fused_qkv_a_proj.weight_scale_" "inv", 0, -1},
	{"model.layers.61.self_attn.kv_a_proj_with_mqa.weight", "model.layers.61.mtp_block.self_attn.fused_qkv_a_proj.weight", 1, -1},
	{"model.layers.61.self_attn.q_a_layernorm.weight", "model.layers.61.mtp_block.self_attn.q_a_layernorm.weight", -1, -1},
	{"model.layers.61.self_attn.q_b_proj.weight", "model.layers.61.mtp_block.self_attn.q_b_proj.weight", -1, -1},
	{"model.layers.61.self_attn.kv_a_layernorm.weight", "model.layers.61.mtp_block.self_attn.kv_a_layernorm.weight", -1, -1},
	{"model.layers.61.self_attn.kv_b_proj.weight_scale_inv", "model.layers.61.mtp_block.self_attn.kv_b_proj.weight_scale_inv", -1, -1},
	{"model.layers.61.self_attn.o_proj.weight", "model.layers.61.mtp_block.self_attn.o_proj.weight", -1, -1},
	{"model.layers.61.mlp.gate.weight", "model.layers.61.mtp_block.mlp.gate.weight", -1, -1},
	{"model.layers.61.mlp.gate.e_score_correction_bias", "model.layers.61.mtp_block.mlp.gate.e_score_correction_bias", -1, -1},
	{"model.layers.61.mlp.shared_experts.gate_proj.weight", "model.layers.61.mtp_block.mlp.shared_experts.gate_up_proj.weight", 0, -1},
	{"model.layers.61.mlp.shared_experts.up_proj.weight_scale_inv", "model.layers.61.mtp_block.mlp.shared_experts.gate_up_proj.weight_" "scale_inv", 1, -1},
	{"model.layers.61.mlp.shared_experts.down_proj.weight", "model.layers.61.mtp_block.mlp.shared_experts.down_proj.weight", -1, -1},
	{"model.layers.61.mlp.experts.3.gate_proj.weight", "model.layers.61.mtp_block.mlp.experts.w13_weight", 0, 3},
	{"model.layers.61.mlp.experts.3.up_proj.weight_scale_inv", "model.layers.61.mtp_block.mlp.experts.w13_weight_scale_inv", 1, 3},
	{"model.layers.61.mlp.experts.3.down_proj.weight", "model.layers.61.mtp_block.mlp.experts.w2_weight", -1, 3},
};
/* clang-format on */
/* Maps one key as part of a one-key list, so step 0's alias applies. */
static void expect_row(enum mtp_family fam, int layer, const struct row *r)
{
	struct mtp_wm_names keys = {0};
	struct mtp_wm_mapping m;
	struct mtp_wm_config c;

	mtp_wm_config_init(&c, fam, layer, 1);
	cr_assert_eq(mtp_wm_names_add(&keys, r->key), MTP_OK);
	cr_assert_eq(mtp_wm_map_keys(&c, &keys, NULL, &m), MTP_OK);
	cr_assert_eq(m.n, 1, "%s: one entry", r->key);
	cr_assert(m.v[0].param != NULL, "%s skipped: %s", r->key, m.v[0].skip);
	cr_expect_str_eq(m.v[0].param, r->param, "%s", r->key);
	cr_expect_eq(m.v[0].shard, r->shard, "%s: shard %d", r->key,
		     m.v[0].shard);
	cr_expect_eq(m.v[0].expert, r->expert, "%s: expert %d", r->key,
		     m.v[0].expert);
	mtp_wm_mapping_fini(&m);
	mtp_wm_names_fini(&keys);
}

ParameterizedTestParameters(weightmap, v4_table)
{
	return cr_make_param_array(struct row, v4_rows,
				   sizeof(v4_rows) / sizeof(v4_rows[0]));
}

ParameterizedTest(struct row *r, weightmap, v4_table)
{
	expect_row(MTP_FAMILY_DEEPSEEK_V4, 43, r);
}

ParameterizedTestParameters(weightmap, v3_table)
{
	return cr_make_param_array(struct row, v3_rows,
				   sizeof(v3_rows) / sizeof(v3_rows[0]));
}

ParameterizedTest(struct row *r, weightmap, v3_table)
{
	expect_row(MTP_FAMILY_DEEPSEEK_V3, 61, r);
}

Test(weightmap, v4_skips_target_and_fp8_experts)
{
	struct mtp_wm_config c;
	struct mtp_wm_target t;

	mtp_wm_config_init(&c, MTP_FAMILY_DEEPSEEK_V4, 43, 1);
	mtp_wm_map_name(&c, NULL, "layers.42.ffn.gate.bias", &t);
	cr_expect(t.skip != NULL && t.param[0] == '\0');
	mtp_wm_map_name(&c, NULL, "mtp.1.enorm.weight", &t);
	cr_expect(t.skip != NULL, "MTP layer 1 is beyond K = 1");
	c.expert_fp8 = true;
	mtp_wm_map_name(&c, NULL, "mtp.0.ffn.experts.2.w3.scale", &t);
	cr_expect_str_eq(
		t.param,
		"model.layers.43.mtp_block.ffn.experts.w13_weight_scale_inv");
	c.mtp_layers = 2;
	mtp_wm_map_name(&c, NULL, "mtp.1.enorm.weight", &t);
	cr_expect_str_eq(t.param, "model.layers.44.enorm.weight");
	mtp_wm_map_name(&c, NULL, "mtp.1.emb.tok_emb.weight", &t);
	cr_expect(t.skip != NULL,
		  "the shared embedding loads for the first MTP layer only");
}

Test(weightmap, buggy_remap_table_of_023da1fc)
{
	struct mtp_wm_config c;
	struct mtp_wm_target t;

	mtp_wm_config_init(&c, MTP_FAMILY_DEEPSEEK_V4, 43, 1);
	c.loader = MTP_LOADER_BUGGY_REMAP;
	mtp_wm_map_name(&c, NULL, "mtp.0.ffn_norm.weight", &t);
	cr_expect_str_eq(t.param,
			 "model.layers.43.mtp_block.ffn.norm_gate.norm.weight");
	mtp_wm_map_name(&c, NULL, "mtp.0.ffn.gate.weight", &t);
	cr_expect_str_eq(t.param,
			 "model.layers.43.mtp_block.ffn.norm_gate.gate.weight");
	mtp_wm_map_name(&c, NULL, "mtp.0.ffn.gate.bias", &t);
	cr_expect_str_eq(t.param, "model.layers.43.mtp_block.ffn.norm_gate.e_"
				  "score_correction_bias");
	mtp_wm_map_name(&c, NULL, "mtp.0.norm.weight", &t);
	cr_expect_str_eq(t.param, "model.layers.43.shared_head.norm.weight");
}

Test(weightmap, v3_unfused_when_engine_has_no_fused_param)
{
	struct mtp_wm_names params = {0};
	struct mtp_wm_config c;
	struct mtp_wm_target t;

	mtp_wm_names_add(&params,
			 "model.layers.61.mtp_block.self_attn.q_a_proj.weight");
	mtp_wm_config_init(&c, MTP_FAMILY_DEEPSEEK_V3, 61, 1);
	mtp_wm_map_name(&c, &params,
			"model.layers.61.self_attn.q_a_proj.weight", &t);
	cr_expect_str_eq(t.param,
			 "model.layers.61.mtp_block.self_attn.q_a_proj.weight");
	cr_expect_eq(t.shard, -1);
	mtp_wm_map_name(&c, NULL,
			"model.layers.61.self_attn.rotary_emb.inv_freq", &t);
	cr_expect(t.skip != NULL);
	mtp_wm_names_fini(&params);
}

/* Runs the audit on files (NULL: not given); returns the status. */
static enum mtp_status audit_files(enum mtp_family fam, int layer,
				   enum mtp_loader loader,
				   const char *keys_path,
				   const char *params_path,
				   const char *modules_path,
				   const char *map_path, struct mtp_wm_audit *a)
{
	struct mtp_wm_names keys = {0}, params = {0};
	struct mtp_wm_pairs modules = {0}, map = {0};
	struct mtp_wm_inputs in = {.keys = &keys};
	struct mtp_wm_config c;
	char err[512];
	enum mtp_status st;

	mtp_wm_config_init(&c, fam, layer, 1);
	c.loader = loader;
	cr_assert_eq(mtp_wm_read_keys(keys_path, &keys, err, sizeof(err)),
		     MTP_OK, "%s", err);
	if (params_path) {
		cr_assert_eq(mtp_wm_read_names(params_path, &params, err,
					       sizeof(err)),
			     MTP_OK, "%s", err);
		mtp_wm_names_sort(&params);
		in.params = &params;
	}
	if (modules_path) {
		cr_assert_eq(mtp_wm_read_pairs(modules_path, true, &modules,
					       err, sizeof(err)),
			     MTP_OK, "%s", err);
		in.modules = &modules;
	}
	if (map_path) {
		cr_assert_eq(mtp_wm_read_pairs(map_path, false, &map, err,
					       sizeof(err)),
			     MTP_OK, "%s", err);
		in.map = &map;
	}
	st = mtp_wm_audit_run(&c, &in, a, err, sizeof(err));
	mtp_wm_names_fini(&keys);
	mtp_wm_names_fini(&params);
	mtp_wm_pairs_fini(&modules);
	mtp_wm_pairs_fini(&map);
	return st;
}

/* All findings are d, and one of them names `named` as key or target. */
static void expect_only(const struct mtp_wm_audit *a, enum mtp_diag d,
			const char *named_key, const char *named_target)
{
	bool found = false;

	cr_expect(a->n > 0, "caught");
	for (int i = 0; i < a->n; i++) {
		cr_expect_eq(a->f[i].diag, d, "%s: %s -> %s",
			     mtp_diag_info(a->f[i].diag)->name, a->f[i].key,
			     a->f[i].target);
		found |= (!named_key || !strcmp(a->f[i].key, named_key)) &&
			 strstr(a->f[i].target, named_target) != NULL;
	}
	cr_expect(found, "a finding names %s -> %s", named_key, named_target);
}

Test(audit, fixed_loader_is_clean)
{
	struct mtp_wm_audit a;

	cr_assert_eq(audit_files(MTP_FAMILY_DEEPSEEK_V4, 43, MTP_LOADER_FIXED,
				 V4_KEYS, V4_PARAMS,
				 WDIR "deepseek_v4_flash.modules.txt", NULL,
				 &a),
		     MTP_OK);
	cr_expect_eq(a.n, 0, "first: %s", a.n ? a.f[0].text : "");
	cr_expect_eq(a.n_mtp_keys, 51);
	cr_expect_eq(a.n_params_unloaded, 0);
	mtp_wm_audit_fini(&a);
	cr_assert_eq(audit_files(MTP_FAMILY_DEEPSEEK_V3, 61, MTP_LOADER_FIXED,
				 V3_KEYS, V3_PARAMS, NULL, NULL, &a),
		     MTP_OK);
	cr_expect_eq(a.n, 0, "first: %s", a.n ? a.f[0].text : "");
	mtp_wm_audit_fini(&a);
}

Test(audit, buggy_remap_is_stale_weight_remap)
{
	struct mtp_wm_audit a;

	cr_assert_eq(audit_files(MTP_FAMILY_DEEPSEEK_V4, 43,
				 MTP_LOADER_BUGGY_REMAP, V4_KEYS, V4_PARAMS,
				 NULL, NULL, &a),
		     MTP_OK);
	expect_only(&a, MTP_DIAG_STALE_WEIGHT_REMAP, "mtp.0.ffn_norm.weight",
		    "model.layers.43.mtp_block.ffn.norm_gate.norm.weight");
	cr_expect_eq(a.n, 3, "ffn_norm, gate.weight, gate.bias");
	mtp_wm_audit_fini(&a);
	/* without PARAMS, the fixed loader's set stands in */
	cr_assert_eq(audit_files(MTP_FAMILY_DEEPSEEK_V4, 43,
				 MTP_LOADER_BUGGY_REMAP, V4_KEYS, NULL, NULL,
				 NULL, &a),
		     MTP_OK);
	expect_only(&a, MTP_DIAG_STALE_WEIGHT_REMAP, NULL, "norm_gate");
	mtp_wm_audit_fini(&a);
}

Test(audit, no_alias_on_headless_checkpoint_is_head_embed_unloaded)
{
	struct mtp_wm_audit a;

	cr_assert_eq(audit_files(MTP_FAMILY_DEEPSEEK_V4, 43,
				 MTP_LOADER_NO_ALIAS, V4_KEYS, V4_PARAMS, NULL,
				 NULL, &a),
		     MTP_OK);
	expect_only(&a, MTP_DIAG_MTP_HEAD_EMBED_UNLOADED, "head.weight",
		    "model.layers.43.shared_head.head.weight");
	expect_only(&a, MTP_DIAG_MTP_HEAD_EMBED_UNLOADED, "embed.weight",
		    "model.embed_tokens.weight");
	mtp_wm_audit_fini(&a);
}

/* A checkpoint with the MTP layer's own head and embedding needs no alias. */
Test(audit, no_alias_with_own_head_is_clean)
{
	char path[] = "/tmp/mtptest_keys_XXXXXX";
	char line[512];
	FILE *in = fopen(V4_KEYS, "r");
	int fd = mkstemp(path);
	FILE *out = fdopen(fd, "w");
	struct mtp_wm_audit a;

	cr_assert(in && out);
	while (fgets(line, sizeof(line), in))
		if (strcmp(line, "head.weight\n") &&
		    strcmp(line, "embed.weight\n"))
			fputs(line, out);
	fputs("mtp.0.head.weight\nmtp.0.emb.tok_emb.weight\n", out);
	fclose(in);
	fclose(out);
	cr_assert_eq(audit_files(MTP_FAMILY_DEEPSEEK_V4, 43,
				 MTP_LOADER_NO_ALIAS, path, V4_PARAMS, NULL,
				 NULL, &a),
		     MTP_OK);
	cr_expect_eq(a.n, 0, "first: %s", a.n ? a.f[0].text : "");
	mtp_wm_audit_fini(&a);
	unlink(path);
}

Test(audit, no_prefix_is_eh_proj_no_prefix)
{
	struct mtp_wm_audit a;

	cr_assert_eq(audit_files(MTP_FAMILY_DEEPSEEK_V4, 43,
				 MTP_LOADER_NO_PREFIX, V4_KEYS, V4_PARAMS, NULL,
				 NULL, &a),
		     MTP_OK);
	expect_only(&a, MTP_DIAG_EH_PROJ_NO_PREFIX, "model.layers.43.e_proj",
		    "");
	expect_only(&a, MTP_DIAG_EH_PROJ_NO_PREFIX, "model.layers.43.h_proj",
		    "");
	mtp_wm_audit_fini(&a);
	/* the engine's own module list, with the fixed mapping */
	cr_assert_eq(audit_files(MTP_FAMILY_DEEPSEEK_V4, 43, MTP_LOADER_FIXED,
				 V4_KEYS, V4_PARAMS,
				 WDIR "deepseek_v4_flash.modules_noprefix.txt",
				 NULL, &a),
		     MTP_OK);
	expect_only(&a, MTP_DIAG_EH_PROJ_NO_PREFIX, "model.layers.43.e_proj",
		    "");
	cr_expect_eq(a.n, 2);
	mtp_wm_audit_fini(&a);
}

/* A captured MAP from a tolerant loader that skipped the norm_gate names:
 * nothing maps to a missing name, but §8.5's parameters stay unloaded. */
Test(audit, engine_mapping_missing_required_params)
{
	char path[] = "/tmp/mtptest_map_XXXXXX";
	struct mtp_wm_names keys = {0};
	struct mtp_wm_mapping m;
	struct mtp_wm_config c;
	struct mtp_wm_audit a;
	char err[256];
	FILE *out = fdopen(mkstemp(path), "w");

	mtp_wm_config_init(&c, MTP_FAMILY_DEEPSEEK_V4, 43, 1);
	cr_assert_eq(mtp_wm_read_keys(V4_KEYS, &keys, err, sizeof(err)),
		     MTP_OK);
	cr_assert_eq(mtp_wm_map_keys(&c, &keys, NULL, &m), MTP_OK);
	for (int i = 0; i < m.n; i++)
		if (m.v[i].param && !strstr(m.v[i].key, "ffn_norm") &&
		    !strstr(m.v[i].key, "ffn.gate."))
			fprintf(out, "%s\t%s\n", m.v[i].key, m.v[i].param);
	fclose(out);
	mtp_wm_mapping_fini(&m);
	mtp_wm_names_fini(&keys);
	cr_assert_eq(audit_files(MTP_FAMILY_DEEPSEEK_V4, 43, MTP_LOADER_FIXED,
				 V4_KEYS, V4_PARAMS, NULL, path, &a),
		     MTP_OK);
	expect_only(&a, MTP_DIAG_STALE_WEIGHT_REMAP, "mtp.0.ffn_norm.weight",
		    "model.layers.43.mtp_block.ffn_norm.weight");
	cr_expect_eq(a.n, 3);
	cr_expect_eq(a.n_mtp_unloaded, 3);
	mtp_wm_audit_fini(&a);
	unlink(path);
}

Test(audit, selftest_catches_every_variant)
{
	FILE *devnull = freopen("/dev/null", "w", stdout);

	cr_assert(devnull != NULL);
	cr_expect_eq(mtp_wm_selftest(NULL, false), MTP_EXIT_OK);
}

Test(audit, safetensors_index_json)
{
	char path[] = "/tmp/mtptest_index_XXXXXX";
	FILE *out = fdopen(mkstemp(path), "w");
	struct mtp_wm_names keys = {0};
	char err[512];
	enum mtp_status st;

	fputs("{\"metadata\": {\"total_size\": 1},\n \"weight_map\": {\n"
	      "  \"mtp.0.enorm.weight\": \"model-00046.safetensors\",\n"
	      "  \"head.weight\": \"model-00046.safetensors\"}}\n",
	      out);
	fclose(out);
	st = mtp_wm_read_keys(path, &keys, err, sizeof(err));
	cr_assert_eq(st, MTP_OK, "%s",
		     err); /* the strict reader: no libcjson */
	cr_expect_eq(keys.n, 2);
	cr_expect(mtp_wm_names_has(&keys, "mtp.0.enorm.weight"));
	mtp_wm_names_fini(&keys);
	unlink(path);
}

int mtp_cli_main(int argc, char **argv);

/* `mtpcheck audit-weights ARGV...` */
static int audit_weights(int argc, char **argv)
{
	char *args[32] = {"mtpcheck", "audit-weights"};

	cr_assert(argc <= 30);
	memcpy(args + 2, argv, (size_t)argc * sizeof(*argv));
	return mtp_cli_main(argc + 2, args);
}

/* Runs the command with stderr in a file; returns the exit code and the
 * stderr text in buf. */
static int run_cli(char *buf, size_t n, int argc, char **argv)
{
	char path[] = "/tmp/mtptest_err_XXXXXX";
	int fd = mkstemp(path), saved = dup(2), rc;
	FILE *f;
	size_t got;

	fflush(stderr);
	dup2(fd, 2);
	rc = audit_weights(argc, argv);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	f = fdopen(fd, "r");
	rewind(f);
	got = fread(buf, 1, n - 1, f);
	buf[got] = '\0';
	fclose(f);
	unlink(path);
	return rc;
}

static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void expect_bad_input(int argc, char **argv, const char *named)
{
	char err[2048];
	int rc = run_cli(err, sizeof(err), argc, argv);

	cr_expect_eq(rc, MTP_EXIT_USAGE, "exit 2 for: %s", err);
	cr_expect_eq(count_lines(err), 1, "one line: %s", err);
	cr_expect(strstr(err, named) != NULL, "names '%s': %s", named, err);
}

Test(audit, bad_input_is_one_line_and_exit_2)
{
	char empty[] = "/tmp/mtptest_empty_XXXXXX",
	     blank[] = "/tmp/mtptest_blank_XXXXXX";
	FILE *f = fdopen(mkstemp(empty), "w");

	fputs("# only a comment\n\n", f);
	fclose(f);
	f = fdopen(mkstemp(blank), "w");
	fputs("mtp.0.enorm.weight\nmtp.0.hnorm.weight\nmtp.0.e_proj.weight "
	      "torch.Size([4096, 4096])\n",
	      f);
	fclose(f);
	expect_bad_input(6,
			 (char *[]){"--family", "deepseek_v4", "--layer", "43",
				    "--keys", "/nonexistent/keys.txt"},
			 "/nonexistent/keys.txt");
	expect_bad_input(6,
			 (char *[]){"--family", "deepseek_v4", "--layer", "43",
				    "--keys", empty},
			 empty);
	expect_bad_input(6,
			 (char *[]){"--family", "deepseek_v4", "--layer", "43",
				    "--keys", blank},
			 ":3:");
	expect_bad_input(6,
			 (char *[]){"--family", "deepseek_v4", "--layer", "x43",
				    "--keys", V4_KEYS},
			 "--layer");
	expect_bad_input(6,
			 (char *[]){"--family", "deepseek_v4", "--layer", "0",
				    "--keys", V4_KEYS},
			 "--layer");
	expect_bad_input(6,
			 (char *[]){"--family", "deepseek_v3", "--layer", "62",
				    "--keys", V3_KEYS},
			 "MTP layer 62");
	expect_bad_input(8,
			 (char *[]){"--family", "deepseek_v4", "--layer", "43",
				    "--keys", V4_KEYS, "--params",
				    "/nonexistent/p.txt"},
			 "/nonexistent/p.txt");
	unlink(empty);
	unlink(blank);
}

Test(audit, cli_exit_codes_and_json)
{
	char json[] = "/tmp/mtptest_json_XXXXXX", err[1024];
	char *text;
	FILE *f;
	long n;
	int fd = mkstemp(json);

	close(fd);
	cr_assert(freopen("/dev/null", "w", stdout) != NULL);
	cr_expect_eq(
		run_cli(err, sizeof(err), 8,
			(char *[]){"--family", "deepseek_v4", "--layer", "43",
				   "--keys", V4_KEYS, "--engine", "spec"}),
		MTP_EXIT_OK, "%s", err);
	/* vLLM 0.33 (the default) has no alias step (SPEC.md §12.5) */
	cr_expect_eq(run_cli(err, sizeof(err), 6,
			     (char *[]){"--family", "deepseek_v4", "--layer",
					"43", "--keys", V4_KEYS}),
		     MTP_EXIT_FAIL, "%s", err);
	cr_expect_eq(
		run_cli(err, sizeof(err), 14,
			(char *[]){"--family", "deepseek_v4", "--layer", "43",
				   "--keys", V4_KEYS, "--loader", "buggy-remap",
				   "--json", json, "--engine", "spec",
				   "--run-id", "audit-night-1"}),
		MTP_EXIT_FAIL, "%s", err);
	f = fopen(json, "r");
	cr_assert(f != NULL);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	text = calloc(1, (size_t)n + 1);
	cr_assert(fread(text, 1, (size_t)n, f) == (size_t)n);
	fclose(f);
	cr_expect(strstr(text, "\"format\":\"mtpcheck-weight-audit\"") != NULL);
	/* the run metadata every JSON carries (docs/RESULTS.md) */
	cr_expect(strstr(text, "\"schema_version\":\"" MTP_SCHEMA_VERSION
			       "\",\"meta\":{\"tool\":\"mtpcheck\"") != NULL);
	cr_expect(strstr(text, "\"run_id\":\"audit-night-1\"") != NULL);
	cr_expect(strstr(text, "\"backends\":[]") != NULL);
	cr_expect(strstr(text, "\"code\":\"STALE_WEIGHT_REMAP\",\"section\":"
			       "\"§8.5\"") != NULL);
	cr_expect(strstr(text, "\"target\":\"model.layers.43.mtp_block.ffn."
			       "norm_gate.norm.weight\"") != NULL);
	cr_expect(strstr(text, "\"exit_code\":1") != NULL);
	free(text);
	unlink(json);
}
