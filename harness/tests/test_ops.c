/* The op table: every §11 op is listed, signatures expand per family and
 * attributes, shape rules bind and refuse, attributes are range-checked. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mtp/op.h"

static const char *const spec_ops[] = {"rmsnorm",
				       "add_rmsnorm",
				       "embed",
				       "fused_eh_norm",
				       "fused_embed_eh_norm",
				       "eh_proj",
				       "fused_mtp_input_rmsnorm",
				       "eh_proj_hc",
				       "hc_pre",
				       "hc_post",
				       "hc_fused_post_pre",
				       "hc_head",
				       "mtp_shared_head_rmsnorm",
				       "lm_head",
				       "all_reduce",
				       "mtp_block",
				       "mtp_step",
				       "draft_chain"};

Test(ops, every_spec_op_is_in_the_table)
{
	for (size_t i = 0; i < sizeof(spec_ops) / sizeof(spec_ops[0]); i++)
		cr_expect(mtp_op_find(spec_ops[i]) != NULL, "%s", spec_ops[i]);
	cr_expect(mtp_op_find("nonsense") == NULL);
}

static struct mtp_attr_list attrs(const char *spec)
{
	struct mtp_attr_list l = {0};
	char buf[512], *save;

	snprintf(buf, sizeof(buf), "%s", spec);
	for (char *t = strtok_r(buf, " ", &save); t;
	     t = strtok_r(NULL, " ", &save)) {
		struct mtp_attr *a = &l.items[l.n++];
		char *eq = strchr(t, '=');

		*eq = 0;
		snprintf(a->name, sizeof(a->name), "%s", t);
		char *end;
		double v = strtod(eq + 1, &end);

		if (*end) {
			a->is_string = true;
			snprintf(a->str, sizeof(a->str), "%s", eq + 1);
		} else {
			a->num = v;
		}
	}
	return l;
}

static int find(const struct mtp_tspec *s, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(s[i].name, name) == 0)
			return i;
	return -1;
}

Test(ops, draft_chain_signature_has_layers_and_steps)
{
	struct mtp_attr_list a =
		attrs("eps=1e-6 rounding=fused num_steps=3 num_layers=2 "
		      "pass_step_idx=1 "
		      "hc_mult=4 hc_eps=1e-6 sinkhorn_iters=20 post_mult=2 "
		      "block_contract=deferred hc_head_variant=cuda");
	struct mtp_params p;
	static struct mtp_signature sig;
	char err[256];

	cr_assert_eq(mtp_params_parse(mtp_op_find("draft_chain"),
				      MTP_FAMILY_DEEPSEEK_V4, &a, &p, err,
				      sizeof(err)),
		     MTP_OK, "%s", err);
	cr_expect_eq(p.num_steps, 3);
	cr_expect_eq(p.hc.pre_eps, 1e-6);
	cr_expect_eq(p.hc.rms_eps, 1e-6);
	cr_assert_eq(mtp_signature_build(mtp_op_find("draft_chain"), &p, NULL,
					 &sig, err, sizeof(err)),
		     MTP_OK);
	int i = find(sig.in, sig.n_in, "layer.1/hc_head_fn");

	cr_assert(i >= 0);
	cr_expect_str_eq(sig.in[i].shape, "M,M*H");
	cr_expect(find(sig.out, sig.n_out, "step.2/recycled") >= 0);
	cr_expect(find(sig.out, sig.n_out, "step.3/recycled") < 0);
	i = find(sig.in, sig.n_in, "prev_hidden");
	cr_expect_str_eq(sig.in[i].shape, "T,M*H");
}

Test(ops, attributes_are_range_checked)
{
	struct mtp_params p;
	char err[256];
	const struct mtp_op *hc = mtp_op_find("hc_pre");
	struct mtp_attr_list a =
		attrs("rms_eps=1e-6 pre_eps=1e-6 sinkhorn_eps=1e-6 "
		      "post_mult=2 sinkhorn_iters=0");

	cr_expect_eq(mtp_params_parse(hc, MTP_FAMILY_DEEPSEEK_V4, &a, &p, err,
				      sizeof(err)),
		     MTP_ERR_INVALID);
	cr_expect(strstr(err, "attribute 'sinkhorn_iters': 0 is not an integer "
			      "in [1,"),
		  "%s", err);
	a = attrs("rms_eps=1e-6 pre_eps=1e-6 sinkhorn_eps=-1 post_mult=2 "
		  "sinkhorn_iters=20");
	cr_expect_eq(mtp_params_parse(hc, MTP_FAMILY_DEEPSEEK_V4, &a, &p, err,
				      sizeof(err)),
		     MTP_ERR_INVALID);
	cr_expect(strstr(err, "sinkhorn_eps") != NULL, "%s", err);
	a = attrs("rms_eps=1e-6 pre_eps=1e-6 sinkhorn_eps=1e-6 post_mult=2 "
		  "sinkhorn_iters=20");
	cr_expect_eq(mtp_params_parse(hc, MTP_FAMILY_DEEPSEEK_V4, &a, &p, err,
				      sizeof(err)),
		     MTP_OK, "%s", err);
	cr_expect_eq(p.hc.sinkhorn_iters, 20);
}

/* [SPEC Step V3-9] logits_mup: read on a row with a mup head, refused on
 * any other; the inkling step's signature carries embed_pre_norm_weight. */
Test(ops, logits_mup_only_on_its_row)
{
	struct mtp_params p;
	char err[256];
	const struct mtp_op *op = mtp_op_find("mtp_step");
	struct mtp_attr_list a = attrs("eps=1e-6 rounding=fused logits_mup=4");

	cr_expect_eq(mtp_params_parse(op, MTP_FAMILY_INKLING, &a, &p, err,
				      sizeof(err)),
		     MTP_OK, "%s", err);
	cr_expect_eq(p.logits_mup, 4.0);
	cr_expect_eq(
		mtp_params_parse(op, MTP_FAMILY_MIMO, &a, &p, err, sizeof(err)),
		MTP_ERR_INVALID);
	cr_expect(strstr(err, "'logits_mup': family mimo") != NULL, "%s", err);
	a = attrs("eps=1e-6 rounding=fused");
	cr_expect_eq(mtp_params_parse(op, MTP_FAMILY_INKLING, &a, &p, err,
				      sizeof(err)),
		     MTP_OK, "%s", err);
	cr_expect_eq(p.logits_mup, 0.0);
}

static void bind_one(const char *op, const char *attr_spec, int n,
		     const char *const *names, const int64_t (*shapes)[3],
		     const int *ndims, enum mtp_status want, const char *needle,
		     struct mtp_dims *dims)
{
	struct mtp_attr_list a = attrs(attr_spec);
	struct mtp_tensor_list in = {0};
	struct mtp_params p;
	static struct mtp_signature sig;
	enum mtp_dtype act;
	char err[256] = "";

	for (int i = 0; i < n; i++) {
		struct mtp_named *e = mtp_list_add(&in, names[i]);

		e->t.dtype = strstr(names[i], "fn") ||
					     strstr(names[i], "scale") ||
					     strstr(names[i], "base")
				     ? MTP_F32
				     : MTP_BF16;
		e->t.ndim = ndims[i];
		memcpy(e->t.shape, shapes[i], sizeof(shapes[i]));
	}
	cr_assert_eq(mtp_params_parse(mtp_op_find(op), MTP_FAMILY_DEEPSEEK_V4,
				      &a, &p, err, sizeof(err)),
		     MTP_OK, "%s", err);
	mtp_signature_build(mtp_op_find(op), &p, &in, &sig, err, sizeof(err));
	cr_expect_eq(
		mtp_signature_bind(&sig, &p, &in, dims, &act, err, sizeof(err)),
		want, "%s", err);
	if (needle)
		cr_expect(strstr(err, needle) != NULL, "want '%s' in '%s'",
			  needle, err);
	mtp_list_fini(&in);
}

Test(ops, hc_pre_shapes_bind_and_mismatch_is_named)
{
	static const char *const names[] = {"residual", "fn", "scale", "base"};
	const int64_t ok[4][3] = {{5, 4, 64}, {24, 256}, {3}, {24}};
	const int64_t bad[4][3] = {{5, 4, 64}, {24, 255}, {3}, {24}};
	const int nd[4] = {3, 2, 1, 1};
	struct mtp_dims d;
	const char *hc = "rms_eps=1e-6 pre_eps=1e-6 sinkhorn_eps=1e-6 "
			 "post_mult=2 sinkhorn_iters=20";

	bind_one("hc_pre", hc, 4, names, ok, nd, MTP_OK, NULL, &d);
	cr_expect(d.t == 5 && d.m == 4 && d.h == 64);
	bind_one("hc_pre", hc, 4, names, bad, nd, MTP_ERR_INVALID,
		 "input 'fn': shape [24,255] breaks the rule [2*M+M*M,M*H]",
		 &d);
}

/* [§12.2] eh_proj with a float8 weight: the scale is required, shaped
 * [ceil(H/128), ceil(2H/128)], float32 or e8m0, and refused without one. */
static enum mtp_status bind_fp8(const char *attr_spec, bool with_scale,
				const int64_t *sshape, enum mtp_dtype wdt,
				char *err, size_t errn)
{
	struct mtp_attr_list a = attrs(attr_spec);
	struct mtp_tensor_list in = {0};
	struct mtp_params p;
	static struct mtp_signature sig;
	struct mtp_dims d;
	enum mtp_dtype act;
	struct mtp_named *x = mtp_list_add(&in, "x");
	struct mtp_named *w = mtp_list_add(&in, "weight");
	enum mtp_status st;

	*x = (struct mtp_named){.name = "x", .t = {MTP_BF16, 2, {3, 400}}};
	*w = (struct mtp_named){.name = "weight", .t = {wdt, 2, {200, 400}}};
	if (with_scale) {
		struct mtp_named *s = mtp_list_add(&in, "weight_scale_inv");

		*s = (struct mtp_named){
			.name = "weight_scale_inv",
			.t = {MTP_F8E8M0, 2, {sshape[0], sshape[1]}}};
	}
	cr_assert_eq(mtp_params_parse(mtp_op_find("eh_proj"),
				      MTP_FAMILY_DEEPSEEK_V3, &a, &p, err,
				      errn),
		     MTP_OK, "%s", err);
	mtp_signature_build(mtp_op_find("eh_proj"), &p, &in, &sig, err, errn);
	st = mtp_signature_bind(&sig, &p, &in, &d, &act, err, errn);
	mtp_list_fini(&in);
	return st;
}

Test(ops, fp8_weight_needs_its_block_scale)
{
	const int64_t good[2] = {2, 4}, bad[2] = {2, 3};
	char err[256] = "";

	cr_expect_eq(bind_fp8("proj_quant=fp8_w8a8", true, good, MTP_F8E4M3,
			      err, sizeof(err)),
		     MTP_OK, "%s", err);
	cr_expect_eq(bind_fp8("", false, good, MTP_F8E4M3, err, sizeof(err)),
		     MTP_ERR_INVALID);
	cr_expect(strstr(err, "without its block scale") != NULL, "%s", err);
	cr_expect_eq(bind_fp8("", true, bad, MTP_F8E4M3, err, sizeof(err)),
		     MTP_ERR_INVALID);
	cr_expect(strstr(err, "block scale") != NULL, "%s", err);
	cr_expect_eq(bind_fp8("", true, good, MTP_BF16, err, sizeof(err)),
		     MTP_ERR_INVALID);
	cr_expect(strstr(err, "not float8_e4m3fn") != NULL, "%s", err);
	cr_expect_eq(bind_fp8("proj_quant=none", true, good, MTP_F8E4M3, err,
			      sizeof(err)),
		     MTP_ERR_INVALID);
	cr_expect(strstr(err, "proj_quant = none") != NULL, "%s", err);
}

/* The family table (families/): each row found by its id and its name, the
 * names unique, the choices consistent (mHC streams go with the per-stream
 * projections and recycle the streams), and nothing outside the table. */
Test(ops, every_family_is_one_consistent_row)
{
	enum mtp_family f;

	cr_assert_null(mtp_family_def(MTP_FAMILY_COUNT));
	cr_assert_null(mtp_family_find("deepseek_v5"));
	cr_assert_not(mtp_family_parse("", &f));
	cr_assert_str_eq(mtp_family_name(MTP_FAMILY_COUNT), "?");
	for (int i = 0; i < MTP_FAMILY_COUNT; i++) {
		const struct mtp_family_def *d = mtp_family_def(i);

		cr_assert_not_null(d, "family %d has no row", i);
		cr_assert_eq((int)d->id, i, "%s: id %d at %d", d->name, d->id,
			     i);
		cr_assert_eq(mtp_family_find(d->name), d);
		cr_assert(mtp_family_parse(d->name, &f) && (int)f == i);
		cr_assert(d->models && d->models[0] && d->source &&
				  d->source[0],
			  "%s: no models or source", d->name);
		cr_assert_eq(d->mhc, d->fusion == MTP_FUSION_HC_PROJ, "%s",
			     d->name);
		cr_assert_eq(d->mhc, d->recycled == MTP_RECYCLED_STREAMS, "%s",
			     d->name);
		cr_assert_eq(mtp_family_mhc(i), d->mhc);
		cr_assert(strstr(mtp_family_names(), d->name), "%s", d->name);
	}
}

/* The two choices rows mimo and kimi_k3 change, asked through the row's
 * helpers (never the id), and false outside the table. */
Test(ops, family_choices_by_row)
{
	cr_assert(mtp_family_hidden_first(MTP_FAMILY_MIMO));
	cr_assert_not(mtp_family_hidden_first(MTP_FAMILY_DEEPSEEK_V3));
	cr_assert_not(mtp_family_hidden_first(MTP_FAMILY_COUNT));
	cr_assert(mtp_family_recycles_pre_norm(MTP_FAMILY_KIMI_K3));
	cr_assert_not(mtp_family_recycles_pre_norm(MTP_FAMILY_MIMO));
	cr_assert_not(mtp_family_recycles_pre_norm(MTP_FAMILY_COUNT));
	for (int i = 0; i < MTP_FAMILY_COUNT; i++) {
		const struct mtp_family_def *d = mtp_family_def(i);

		cr_assert_eq(mtp_family_hidden_first(i),
			     d->fusion == MTP_FUSION_EH_PROJ_HIDDEN_FIRST);
		cr_assert_eq(mtp_family_recycles_pre_norm(i),
			     d->recycled == MTP_RECYCLED_PRE_NORM);
	}
}

/* Whether sig (inputs, end, outputs, end) has an output named name. */
static bool sig_has_output(const struct mtp_tspec *s, const char *name)
{
	while (s->name)
		s++;
	for (s++; s->name; s++)
		if (strcmp(s->name, name) == 0)
			return true;
	return false;
}

/* Whether op has the output name: in its fixed signature, or in the one it
 * builds (dspark_step) under a DSpark-step attribute set. */
static bool op_has_output(const struct mtp_op *op, const char *name)
{
	static struct mtp_signature sig;
	struct mtp_attr_list a = attrs("eps=1e-6 rounding=fused hc_mult=4 "
				       "hc_eps=1e-6 sinkhorn_iters=20 "
				       "num_layers=1");
	struct mtp_params p;
	char err[256];

	if (op->sig)
		return sig_has_output(op->sig, name);
	cr_assert_eq(mtp_params_parse(op, op->default_family, &a, &p, err,
				      sizeof(err)),
		     MTP_OK, "%s: %s", op->name, err);
	cr_assert_eq(mtp_signature_build(op, &p, NULL, &sig, err, sizeof(err)),
		     MTP_OK, "%s: %s", op->name, err);
	return find(sig.out, sig.n_out, name) >= 0;
}

/* Each op is one row (harness/src/ops/rows/): at its id, found by its name,
 * with a signature, a reference, and fields that name what exists. */
Test(ops, every_op_is_one_complete_row)
{
	cr_assert_null(mtp_op_get(MTP_OP_COUNT));
	for (int i = 0; i < MTP_OP_COUNT; i++) {
		const struct mtp_op *op = mtp_op_get(i);

		cr_assert_not_null(op, "op %d has no row", i);
		cr_assert_eq((int)op->id, i, "%s: id %d at %d", op->name,
			     op->id, i);
		cr_assert_eq(mtp_op_find(op->name), op);
		cr_assert(op->section && op->summary && op->attrs &&
				  op->attrs_v4,
			  "%s", op->name);
		cr_assert((op->sig != NULL) != (op->build_sig != NULL),
			  "%s: a fixed signature or a builder, not both",
			  op->name);
		cr_assert_not_null(op->ref, "%s: no reference", op->name);
		cr_assert_neq(op->rows, MTP_ROWS_UNDECLARED, "%s", op->name);
		cr_assert(op->default_family < MTP_FAMILY_COUNT, "%s",
			  op->name);
		cr_assert(op->budget_depth >= MTP_DEPTH_FLOW, "%s", op->name);
		cr_assert(!op->bias_skip || (op->bias == MTP_BIAS_ALL &&
					     op_has_output(op, op->bias_skip)),
			  "%s: bias_skip", op->name);
		cr_assert(!op->accum_output ||
				  (op->sig &&
				   sig_has_output(op->sig, op->accum_output)),
			  "%s: accum_output", op->name);
		cr_assert((op->scope == MTP_SCOPE_CHAIN) ==
				  (op->attr_dims != NULL),
			  "%s: a chain's attributes bind K and L", op->name);
		cr_assert(!op->unfused[0].op == !op->unfused_what, "%s",
			  op->name);
		for (int k = 0; k < MTP_OP_UNFUSED_MAX && op->unfused[k].op;
		     k++)
			cr_assert_not_null(mtp_op_find(op->unfused[k].op),
					   "%s: unfused %s", op->name,
					   op->unfused[k].op);
	}
}

/* A sub-call that a mutant makes of a captured step copies the step's
 * params, block = captured included; a single op still runs its own
 * reference (the captured steps ran on an rmsnorm and crashed). */
Test(ops, a_single_op_ignores_a_captured_flag)
{
	const struct mtp_op *op = mtp_op_find("rmsnorm");
	struct mtp_params p = {.eps = 1e-6, .rounding = MTP_ROUNDING_EAGER};
	struct mtp_signature sig;
	struct mtp_tensor in[2] = {{0}}, out[1] = {{0}};
	const int64_t xs[2] = {2, 4}, ws[1] = {4};
	char err[128];
	float *y;

	cr_assert_eq(mtp_signature_build(op, &p, NULL, &sig, err, sizeof(err)),
		     MTP_OK);
	cr_assert_eq(mtp_tensor_alloc(&in[0], MTP_F32, 2, xs), MTP_OK);
	cr_assert_eq(mtp_tensor_alloc(&in[1], MTP_F32, 1, ws), MTP_OK);
	cr_assert_eq(mtp_tensor_alloc(&out[0], MTP_F32, 2, xs), MTP_OK);
	for (int i = 0; i < 8; i++)
		((float *)in[0].data)[i] = 3.0f;
	for (int i = 0; i < 4; i++)
		((float *)in[1].data)[i] = 1.0f;
	p.v2.captured = true;
	struct mtp_call c = {.op = op,
			     .params = &p,
			     .sig = &sig,
			     .dims = {.r = 2, .h = 4},
			     .act = MTP_F32,
			     .n_in = 2,
			     .n_out = 1,
			     .in = in,
			     .out = out};

	cr_assert_eq(mtp_reference_run(&c), MTP_OK);
	y = out[0].data;
	for (int i = 0; i < 8; i++)
		cr_expect_float_eq(y[i], 1.0f, 1e-5, "y[%d] = %g", i, y[i]);
	mtp_tensor_fini(&in[0]);
	mtp_tensor_fini(&in[1]);
	mtp_tensor_fini(&out[0]);
}
