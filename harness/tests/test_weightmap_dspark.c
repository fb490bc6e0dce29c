/*
 * DSpark checkpoints (weightmap_dspark.c, audit_dspark.c): the kind told
 * from the keys, vLLM 0.33's DSpark loader rules one name at a time, and
 * the two confusions named both ways, with the clean cases clean and a
 * converter that dropped the shared experts caught.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "mtp/config.h"
#include "mtp/weightmap.h"

static struct mtp_wm_config cfg(bool dspark)
{
	struct mtp_wm_config c;

	mtp_wm_config_init(&c, MTP_FAMILY_DEEPSEEK_V4, 43, 3);
	c.engine = MTP_ENGINE_VLLM_0_33;
	c.dspark = dspark;
	return c;
}

#define EXPECT_DS(name, want, sh)                                              \
	do {                                                                   \
		struct mtp_wm_config c_ = cfg(true);                           \
		struct mtp_wm_target t_;                                       \
		mtp_wm_map_name(&c_, NULL, name, &t_);                         \
		cr_expect_str_eq(t_.param, want, "%s: %s", name,               \
				 t_.skip ? t_.skip : t_.param);                \
		cr_expect_eq(t_.shard, sh, "%s: shard %d", name, t_.shard);    \
	} while (0)

Test(dspark, rules)
{
	EXPECT_DS("mtp.0.main_proj.weight", "model.main_proj.weight", -1);
	EXPECT_DS("mtp.0.main_proj.scale", "model.main_proj.weight_scale_inv",
		  -1);
	EXPECT_DS("mtp.0.main_norm.weight", "model.main_norm.weight", -1);
	EXPECT_DS("mtp.2.norm.weight", "model.norm.weight", -1);
	/* the checkpoint's factor names, and no w1 rule on markov_w1 */
	EXPECT_DS("mtp.2.markov_head.embed.weight",
		  "model.markov_head.markov_w1.weight", -1);
	EXPECT_DS("mtp.2.markov_head.head.weight",
		  "model.markov_head.markov_w2.weight", -1);
	EXPECT_DS("mtp.2.confidence_head.proj.weight",
		  "model.confidence_head.proj.weight", -1);
	EXPECT_DS("mtp.1.attn.wq_a.weight",
		  "model.layers.1.attn.fused_wqa_wkv.weight", 0);
	EXPECT_DS("mtp.1.attn.wkv.scale",
		  "model.layers.1.attn.fused_wqa_wkv.weight_scale_inv", 1);
	EXPECT_DS("mtp.0.ffn.shared_experts.w3.weight",
		  "model.layers.0.ffn.shared_experts.gate_up_proj.weight", 1);
	EXPECT_DS("mtp.0.ffn.shared_experts.w2.weight",
		  "model.layers.0.ffn.shared_experts.down_proj.weight", -1);
	EXPECT_DS("mtp.2.ffn.gate.bias",
		  "model.layers.2.ffn.gate.e_score_correction_bias", -1);
	EXPECT_DS("mtp.2.ffn.experts.1.w2.scale",
		  "model.layers.2.ffn.experts.routed_experts.w2_weight_scale",
		  -1);
	EXPECT_DS("mtp.0.attn.attn_sink", "model.layers.0.attn.attn_sink", -1);
	/* a stage past the model's: model.layers.5 (vLLM: KeyError) */
	EXPECT_DS("mtp.5.attn_norm.weight", "model.layers.5.attn_norm.weight",
		  -1);
	EXPECT_DS("head.weight", "", -1);
	EXPECT_DS("layers.0.attn_norm.weight", "", -1);
}

/* The DSpark and MTP layouts of three stages (the published names). */
static void add_layer(struct mtp_wm_names *k, int s, bool dspark)
{
	static const char *const common[] = {
		"attn.wq_a.weight",
		"attn.wkv.weight",
		"attn.wq_b.weight",
		"attn.wo_a.weight",
		"attn.wo_b.weight",
		"attn.attn_sink",
		"attn.q_norm.weight",
		"attn.kv_norm.weight",
		"attn_norm.weight",
		"ffn_norm.weight",
		"ffn.gate.weight",
		"ffn.gate.bias",
		"ffn.shared_experts.w1.weight",
		"ffn.shared_experts.w2.weight",
		"ffn.shared_experts.w3.weight",
		"ffn.experts.0.w1.weight",
		"ffn.experts.0.w2.weight",
		"ffn.experts.0.w3.weight",
		"hc_attn_fn",
		"hc_attn_base",
		"hc_attn_scale",
		"hc_ffn_fn",
		"hc_ffn_base",
		"hc_ffn_scale",
	};
	static const char *const mtp[] = {
		"e_proj.weight", "h_proj.weight", "enorm.weight",
		"hnorm.weight",	 "norm.weight",	  "hc_head_fn",
		"hc_head_base",	 "hc_head_scale",
	};
	char buf[128];

	for (size_t i = 0; i < sizeof(common) / sizeof(*common); i++) {
		snprintf(buf, sizeof(buf), "mtp.%d.%s", s, common[i]);
		cr_assert(!mtp_wm_names_add(k, buf));
	}
	for (size_t i = 0; !dspark && i < sizeof(mtp) / sizeof(*mtp); i++) {
		snprintf(buf, sizeof(buf), "mtp.%d.%s", s, mtp[i]);
		cr_assert(!mtp_wm_names_add(k, buf));
	}
}

static void layout(struct mtp_wm_names *k, bool dspark, bool mtp)
{
	static const char *const heads[] = {
		"mtp.0.main_proj.weight",
		"mtp.0.main_norm.weight",
		"mtp.2.norm.weight",
		"mtp.2.markov_head.embed.weight",
		"mtp.2.markov_head.head.weight",
		"mtp.2.confidence_head.proj.weight",
	};

	memset(k, 0, sizeof(*k));
	cr_assert(!mtp_wm_names_add(k, "head.weight"));
	cr_assert(!mtp_wm_names_add(k, "embed.weight"));
	for (int s = 0; s < 3; s++)
		add_layer(k, s, !mtp);
	for (size_t i = 0; dspark && i < sizeof(heads) / sizeof(*heads); i++)
		cr_assert(!mtp_wm_names_add(k, heads[i]));
}

Test(dspark, kind)
{
	struct mtp_wm_config c = cfg(false), v3;
	struct mtp_wm_names k;

	layout(&k, true, false);
	cr_expect_eq(mtp_wm_ckpt_kind(&c, &k), MTP_WM_KIND_DSPARK);
	mtp_wm_names_fini(&k);
	layout(&k, false, true);
	cr_expect_eq(mtp_wm_ckpt_kind(&c, &k), MTP_WM_KIND_MTP);
	mtp_wm_names_fini(&k);
	layout(&k, true, true);
	cr_expect_eq(mtp_wm_ckpt_kind(&c, &k), MTP_WM_KIND_BOTH);
	mtp_wm_names_fini(&k);
	layout(&k, false, false);
	cr_expect_eq(mtp_wm_ckpt_kind(&c, &k), MTP_WM_KIND_NEITHER);
	cr_expect_str_eq(mtp_wm_kind_name(MTP_WM_KIND_NEITHER), "neither");
	mtp_wm_names_fini(&k);
	cr_assert(!mtp_wm_names_add(&k, "head.weight"));
	cr_expect_eq(mtp_wm_ckpt_kind(&c, &k), MTP_WM_KIND_NONE);
	/* V3 family: the markers under model.layers.{N+i}. */
	mtp_wm_config_init(&v3, MTP_FAMILY_DEEPSEEK_V3, 61, 1);
	cr_assert(!mtp_wm_names_add(&k, "model.layers.61.eh_proj.weight"));
	cr_expect_eq(mtp_wm_ckpt_kind(&v3, &k), MTP_WM_KIND_MTP);
	mtp_wm_names_fini(&k);
}

/* The audit of a layout under a loader: findings per diagnosis. */
static void audit(bool dspark_ckpt, bool mtp_ckpt, bool dspark_loader,
		  const struct mtp_wm_names *params, int *per,
		  struct mtp_wm_audit *a)
{
	struct mtp_wm_config c = cfg(dspark_loader);
	struct mtp_wm_names k;
	struct mtp_wm_inputs in = {.keys = &k, .params = params};
	char err[256] = "";

	layout(&k, dspark_ckpt, mtp_ckpt);
	cr_assert(!mtp_wm_audit_run(&c, &in, a, err, sizeof(err)), "%s", err);
	memset(per, 0, MTP_DIAG_COUNT * sizeof(*per));
	for (int i = 0; i < a->n; i++)
		per[a->f[i].diag]++;
	mtp_wm_names_fini(&k);
}

Test(dspark, loaded_as_mtp)
{
	int per[MTP_DIAG_COUNT];
	struct mtp_wm_audit a;

	audit(true, false, false, NULL, per, &a);
	cr_expect_eq(a.kind, MTP_WM_KIND_DSPARK);
	cr_expect_eq(per[MTP_DIAG_DSPARK_LOADED_AS_MTP], a.n);
	/* the five DSpark marker keys (norm is no marker), the 7 MTP-only
	 * parameters of 3 layers */
	cr_expect_eq(a.n, 5 + 21, "%d findings", a.n);
	cr_expect_str_eq(a.f[0].key, "mtp.0.main_proj.weight");
	mtp_wm_audit_fini(&a);
}

Test(dspark, loader_on_mtp)
{
	int per[MTP_DIAG_COUNT];
	struct mtp_wm_audit a;
	bool eproj = false;

	audit(false, true, true, NULL, per, &a);
	cr_expect_eq(a.kind, MTP_WM_KIND_MTP);
	cr_expect_eq(per[MTP_DIAG_DSPARK_LOADER_ON_MTP], a.n);
	/* 8 MTP keys x 3 stages less norm (no marker), 4 DSpark params */
	cr_expect_eq(a.n, 7 * 3 + 4, "%d findings", a.n);
	for (int i = 0; i < a.n; i++)
		eproj |= !strcmp(a.f[i].target, "model.layers.1.e_proj.weight");
	cr_expect(eproj);
	mtp_wm_audit_fini(&a);
}

Test(dspark, both_names_the_other_kind)
{
	int per[MTP_DIAG_COUNT];
	struct mtp_wm_audit a;

	audit(true, true, true, NULL, per, &a);
	cr_expect_eq(a.kind, MTP_WM_KIND_BOTH);
	cr_expect_eq(per[MTP_DIAG_DSPARK_LOADER_ON_MTP], 21, "%d", a.n);
	cr_expect_eq(a.n, 21);
	mtp_wm_audit_fini(&a);
	audit(true, true, false, NULL, per, &a);
	cr_expect_eq(per[MTP_DIAG_DSPARK_LOADED_AS_MTP], 5, "%d", a.n);
	cr_expect_eq(a.n, 5);
	mtp_wm_audit_fini(&a);
}

Test(dspark, clean)
{
	int per[MTP_DIAG_COUNT];
	struct mtp_wm_audit a;

	audit(true, false, true, NULL, per, &a);
	cr_expect_eq(a.n, 0, "%d findings, first %s", a.n,
		     a.n ? a.f[0].target : "");
	cr_expect(a.dspark);
	mtp_wm_audit_fini(&a);
	audit(false, true, false, NULL, per, &a);
	cr_expect_eq(per[MTP_DIAG_DSPARK_LOADED_AS_MTP] +
			     per[MTP_DIAG_DSPARK_LOADER_ON_MTP],
		     0);
	mtp_wm_audit_fini(&a);
}

/* The DSpark model's parameters as vLLM 0.33 builds them (the capture),
 * and a checkpoint whose converter dropped shared_experts.* of stage 1. */
Test(dspark, dropped_shared_experts)
{
	struct mtp_wm_config c = cfg(true);
	struct mtp_wm_names k, p = {0};
	struct mtp_wm_mapping m;
	struct mtp_wm_inputs in = {.keys = &k, .params = &p};
	struct mtp_wm_audit a;
	char err[256] = "";
	int stale = 0;

	layout(&k, true, false);
	cr_assert(!mtp_wm_map_keys(&c, &k, NULL, &m));
	for (int i = 0; i < m.n; i++)
		if (m.v[i].param)
			cr_assert(!mtp_wm_names_add(&p, m.v[i].param));
	mtp_wm_mapping_fini(&m);
	mtp_wm_names_sort(&p);
	mtp_wm_names_fini(&k);
	layout(&k, true, false);
	for (int i = 0; i < k.n; i++)
		if (strstr(k.v[i], "mtp.1.ffn.shared_experts."))
			k.v[i][0] = 'x'; /* xtp.1...: the target's, skipped */
	cr_assert(!mtp_wm_audit_run(&c, &in, &a, err, sizeof(err)), "%s", err);
	for (int i = 0; i < a.n; i++) {
		cr_expect_eq(a.f[i].diag, MTP_DIAG_STALE_WEIGHT_REMAP);
		stale += !!strstr(a.f[i].target,
				  "model.layers.1.ffn.shared_experts.");
	}
	cr_expect_eq(stale, 2, "%d of %d", stale, a.n);
	cr_expect_eq(a.n, 2);
	mtp_wm_audit_fini(&a);
	mtp_wm_names_fini(&k);
	mtp_wm_names_fini(&p);
}
