/* Generated problems: the same seed gives the same bits (and the bits an
 * independent model of the documented PRNG gives), every op of the table
 * generates a valid case for every family, the values exercise the op (the
 * reference's outputs are finite and vary), attributes default and override,
 * and absurd sizes are refused with a message naming the op and tensor. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mtp/generate.h"

static const enum mtp_family families[] = {
	MTP_FAMILY_DEEPSEEK_V3, MTP_FAMILY_GLM, MTP_FAMILY_DEEPSEEK_V4};

static struct mtp_gen_spec spec_of(const char *op, enum mtp_family f)
{
	struct mtp_gen_spec s;

	cr_assert(mtp_op_find(op), "%s", op);
	mtp_gen_spec_init(&s, mtp_op_find(op));
	s.family = f;
	return s;
}

static void add_attr(struct mtp_gen_spec *s, const char *name, double num,
		     const char *str)
{
	struct mtp_attr *a = &s->attrs.items[s->attrs.n++];

	memset(a, 0, sizeof(*a));
	snprintf(a->name, sizeof(a->name), "%s", name);
	a->num = num;
	a->is_string = str != NULL;
	if (str)
		snprintf(a->str, sizeof(a->str), "%s", str);
}

static void generate_ok(const struct mtp_gen_spec *s, struct mtp_case *c)
{
	char err[MTP_ERR_MAX] = "";
	enum mtp_status st = mtp_case_generate(s, c, err, sizeof(err));

	cr_assert_eq(st, MTP_OK, "%s/%s: %s", s->op->name,
		     mtp_family_name(s->family), err);
}

static bool same_inputs(const struct mtp_case *a, const struct mtp_case *b)
{
	if (a->inputs.n != b->inputs.n)
		return false;
	for (int i = 0; i < a->inputs.n; i++) {
		const struct mtp_tensor *x = &a->inputs.items[i].t;
		const struct mtp_tensor *y = &b->inputs.items[i].t;

		if (strcmp(a->inputs.items[i].name, b->inputs.items[i].name) ||
		    !mtp_tensor_same_shape(x, y) || x->dtype != y->dtype ||
		    memcmp(x->data, y->data, mtp_tensor_nbytes(x)) != 0)
			return false;
	}
	return true;
}

Test(generate, same_seed_same_bytes_other_seed_other_bytes)
{
	const char *ops[] = {"rmsnorm", "mtp_step", "draft_chain", "hc_pre"};

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		struct mtp_gen_spec s = spec_of(ops[i], MTP_FAMILY_DEEPSEEK_V4);
		struct mtp_case a, b, c;

		s.seed = 42;
		generate_ok(&s, &a);
		generate_ok(&s, &b);
		s.seed = 43;
		generate_ok(&s, &c);
		cr_expect(same_inputs(&a, &b), "%s: same seed, other bytes",
			  ops[i]);
		cr_expect(!same_inputs(&a, &c), "%s: seeds 42 and 43 agree",
			  ops[i]);
		cr_expect(strcmp(a.id, c.id) != 0);
		/* every float input differs under another seed */
		for (int k = 0; k < a.inputs.n; k++) {
			const struct mtp_tensor *x = &a.inputs.items[k].t;

			if (mtp_dtype_is_float(x->dtype) &&
			    mtp_tensor_numel(x) > 4)
				cr_expect(memcmp(x->data,
						 c.inputs.items[k].t.data,
						 mtp_tensor_nbytes(x)) != 0,
					  "%s: %s", ops[i],
					  a.inputs.items[k].name);
		}
		mtp_case_fini(&a);
		mtp_case_fini(&b);
		mtp_case_fini(&c);
	}
}

/* Known answers from an independent Python model of the algorithm that
 * generate.h and gen_values.c document (splitmix64-seeded xoshiro256**, one
 * stream per tensor from FNV-1a of its name xor the seed, uniform = top 53
 * bits / 2^53, norm weights -0.1 + 1.9 u, hidden = Irwin-Hall(4 x 32 bits)
 * x spread, spread = 0.1 + 2.4 u^2 per channel drawn first, positions
 * 1 + below(8191) then T/6 + 1 zeros by probing), rounded with Python's
 * round-half-even: the bits must be these on every machine. */
Test(generate, bits_match_an_independent_model_of_the_prng)
{
	static const uint16_t weight[] = {0x3f4b, 0x3ee3, 0x3f76, 0x3f1f};
	static const uint16_t x[] = {0x3cf1, 0xbe99, 0x3f9f, 0x3e84};
	static const int64_t pos[] = {2168, 7327, 0,   6114, 6595, 3651,
				      2988, 0,	  545, 4302, 2257, 0};
	struct mtp_gen_spec s = spec_of("rmsnorm", MTP_FAMILY_DEEPSEEK_V3);
	struct mtp_case c;

	s.seed = 42;
	generate_ok(&s, &c);
	for (int i = 0; i < 4; i++) {
		cr_expect_eq(((uint16_t *)mtp_list_find(&c.inputs, "weight")
				      ->t.data)[i],
			     weight[i], "weight[%d]", i);
		cr_expect_eq(
			((uint16_t *)mtp_list_find(&c.inputs, "x")->t.data)[i],
			x[i], "x[%d]", i);
	}
	mtp_case_fini(&c);
	s = spec_of("fused_eh_norm", MTP_FAMILY_DEEPSEEK_V3);
	s.seed = 7;
	s.t = 12;
	generate_ok(&s, &c);
	for (int i = 0; i < 12; i++)
		cr_expect_eq(((int64_t *)mtp_list_find(&c.inputs, "positions")
				      ->t.data)[i],
			     pos[i], "positions[%d]", i);
	mtp_case_fini(&c);
}

Test(generate, a_tensor_keeps_its_values_when_other_shapes_change)
{
	struct mtp_gen_spec s = spec_of("rmsnorm", MTP_FAMILY_DEEPSEEK_V3);
	struct mtp_case a, b;

	s.rows = 3;
	generate_ok(&s, &a);
	s.rows = 50;
	generate_ok(&s, &b);
	cr_expect(memcmp(mtp_list_find(&a.inputs, "weight")->t.data,
			 mtp_list_find(&b.inputs, "weight")->t.data,
			 64 * 2) == 0);
	mtp_case_fini(&a);
	mtp_case_fini(&b);
}

Test(generate, every_op_for_every_family_passes_the_case_check)
{
	for (int i = 0; i < MTP_OP_COUNT; i++) {
		for (size_t f = 0; f < 3; f++) {
			for (int opt = 0; opt < 2; opt++) {
				struct mtp_gen_spec s;
				struct mtp_case c;
				struct mtp_signature *sig =
					malloc(sizeof(*sig));
				struct mtp_dims d;
				enum mtp_dtype act;
				char err[MTP_ERR_MAX] = "";

				mtp_gen_spec_init(
					&s, mtp_op_get((enum mtp_op_id)i));
				s.family = families[f];
				s.optional = opt;
				generate_ok(&s, &c);
				cr_expect_eq(mtp_case_check(&c, sig, &d, &act,
							    err, sizeof(err)),
					     MTP_OK, "%s: %s", c.id, err);
				cr_expect_eq(act, MTP_BF16);
				cr_expect_str_eq(c.file, "generated");
				cr_expect(c.has_seed &&
					  c.seed == MTP_GEN_DEFAULT_SEED);
				cr_expect(c.inputs.n > 0 && c.expected.n == 0 &&
					  c.observed.n == 0);
				free(sig);
				mtp_case_fini(&c);
			}
		}
	}
}

/* Inputs that exercise the op: finite, not all equal; norm weights in
 * [-0.1, 1.8], positions mostly nonzero with a zero, ids in [0, V). */
static void check_values(const struct mtp_case *c, int64_t v)
{
	for (int i = 0; i < c->inputs.n; i++) {
		const struct mtp_named *n = &c->inputs.items[i];
		const struct mtp_tensor *t = &n->t;
		int64_t numel = mtp_tensor_numel(t), zeros = 0;
		double lo = INFINITY, hi = -INFINITY;
		bool norm_w = t->ndim == 1 && t->dtype == MTP_BF16;

		for (int64_t k = 0; k < numel; k++) {
			double x = mtp_load(t->dtype, t->data, (size_t)k);

			cr_assert(isfinite(x), "%s: %s[%lld]", c->id, n->name,
				  (long long)k);
			lo = fmin(lo, x);
			hi = fmax(hi, x);
			zeros += x == 0;
		}
		if (numel > 1)
			cr_expect(lo < hi, "%s: %s is constant", c->id,
				  n->name);
		if (norm_w)
			cr_expect(lo >= -0.101 && hi <= 1.81 && hi > 1.0 &&
					  lo < 0.2,
				  "%s: %s in [%g, %g]", c->id, n->name, lo, hi);
		if (strcmp(n->name, "positions") == 0)
			cr_expect(lo == 0 && zeros * 2 < numel,
				  "%s: %lld zeros of %lld", c->id,
				  (long long)zeros, (long long)numel);
		if (strstr(n->name, "input_ids") ||
		    strstr(n->name, "next_tokens"))
			cr_expect(lo >= 0 && hi < (double)v, "%s: %s", c->id,
				  n->name);
		if (mtp_dtype_is_float(t->dtype) && !norm_w && numel > 16)
			cr_expect(zeros * 4 < numel, "%s: %s mostly zero",
				  c->id, n->name);
	}
}

/* Runs the reference on a generated case; every float output must be
 * finite and not constant. */
static void check_reference(struct mtp_case *c)
{
	struct mtp_signature *sig = malloc(sizeof(*sig));
	struct mtp_call call = {0};
	char err[MTP_ERR_MAX] = "";

	cr_assert_eq(
		mtp_case_check(c, sig, &call.dims, &call.act, err, sizeof(err)),
		MTP_OK, "%s", err);
	call.op = c->op;
	call.params = &c->params;
	call.sig = sig;
	call.n_in = sig->n_in;
	call.n_out = sig->n_out;
	call.in = calloc((size_t)sig->n_in, sizeof(*call.in));
	call.out = calloc((size_t)sig->n_out, sizeof(*call.out));
	for (int i = 0; i < sig->n_in; i++) {
		const struct mtp_named *n =
			mtp_list_find(&c->inputs, sig->in[i].name);

		if (n)
			call.in[i] = n->t;
	}
	for (int i = 0; i < sig->n_out; i++) {
		int nd;
		int64_t shape[MTP_MAX_DIMS];

		cr_assert(
			mtp_tspec_shape(&sig->out[i], &call.dims, &nd, shape));
		cr_assert_eq(mtp_tensor_alloc(
				     &call.out[i],
				     mtp_tspec_dtype(&sig->out[i], call.act),
				     nd, shape),
			     MTP_OK);
	}
	cr_assert_eq(mtp_reference_run(&call), MTP_OK, "%s", c->id);
	for (int i = 0; i < sig->n_out; i++) {
		const struct mtp_tensor *t = &call.out[i];
		int64_t numel = mtp_tensor_numel(t);
		double first = numel ? mtp_load(t->dtype, t->data, 0) : 0;
		bool varies = false;

		for (int64_t k = 0; k < numel; k++) {
			double x = mtp_load(t->dtype, t->data, (size_t)k);

			cr_expect(isfinite(x), "%s: %s[%lld]", c->id,
				  sig->out[i].name, (long long)k);
			varies = varies || x != first;
		}
		if (mtp_dtype_is_float(t->dtype) && numel > 1)
			cr_expect(varies, "%s: output %s is constant", c->id,
				  sig->out[i].name);
		mtp_tensor_fini(&call.out[i]);
	}
	free(call.in);
	free(call.out);
	free(sig);
}

Test(generate, values_exercise_every_op)
{
	for (int i = 0; i < MTP_OP_COUNT; i++) {
		for (size_t f = 0; f < 3; f++) {
			struct mtp_gen_spec s;
			struct mtp_case c;

			mtp_gen_spec_init(&s, mtp_op_get((enum mtp_op_id)i));
			s.family = families[f];
			s.t = 12;
			s.optional = true;
			generate_ok(&s, &c);
			check_values(&c, 97);
			check_reference(&c);
			mtp_case_fini(&c);
		}
	}
}

Test(generate, default_attributes_and_overrides)
{
	struct mtp_gen_spec s = spec_of("draft_chain", MTP_FAMILY_DEEPSEEK_V4);
	struct mtp_case c;
	char err[MTP_ERR_MAX] = "";

	generate_ok(&s, &c);
	cr_expect_eq(c.params.eps, 1e-6);
	cr_expect_eq(c.params.rounding, MTP_ROUNDING_FUSED);
	cr_expect_eq(c.params.hc.sinkhorn_iters, 20);
	cr_expect_eq(c.params.hc.post_mult, 2.0);
	cr_expect_eq(c.params.hc_eps, 1e-6);
	cr_expect_eq(c.params.hc_mult, 4);
	cr_expect_eq(c.params.num_steps, 3);
	cr_expect_eq(c.params.num_layers, 2);
	cr_expect(c.params.pass_step_idx);
	cr_expect_eq(c.params.contract, MTP_CONTRACT_DEFERRED);
	cr_expect_eq(c.params.variant, MTP_HC_HEAD_CUDA);
	cr_expect(mtp_list_find(&c.inputs, "layer.1/hc_head_fn") != NULL);
	cr_expect(mtp_list_find(&c.inputs, "layer.2/hc_head_fn") == NULL);
	mtp_case_fini(&c);

	s = spec_of("hc_pre", MTP_FAMILY_DEEPSEEK_V4);
	add_attr(&s, "sinkhorn_iters", 5, NULL);
	add_attr(&s, "rms_eps", 1e-5, NULL);
	s.m = 2;
	generate_ok(&s, &c);
	cr_expect_eq(c.params.hc.sinkhorn_iters, 5);
	cr_expect_eq(c.params.hc.rms_eps, 1e-5);
	cr_expect_eq(c.params.hc.pre_eps, 1e-6);
	cr_expect_eq(mtp_list_find(&c.inputs, "residual")->t.shape[1], 2);
	cr_expect_eq(mtp_list_find(&c.inputs, "fn")->t.shape[0], 2 * 2 + 2 * 2);
	cr_expect_str_eq(c.id, "gen.hc_pre.deepseek_v4.bf16.T3.M2.H64.sinkhorn_"
			       "iters-5.rms_eps-1e-05.s1");
	mtp_case_fini(&c);

	s = spec_of("mtp_step", MTP_FAMILY_DEEPSEEK_V4);
	add_attr(&s, "block_contract", 0, "internal");
	add_attr(&s, "hc_head_variant", 0, "rocm");
	add_attr(&s, "rounding", 0, "eager");
	generate_ok(&s, &c);
	cr_expect_eq(c.params.contract, MTP_CONTRACT_INTERNAL);
	cr_expect_eq(c.params.variant, MTP_HC_HEAD_ROCM);
	cr_expect_eq(c.params.rounding, MTP_ROUNDING_EAGER);
	mtp_case_fini(&c);

	/* an optional attribute with no generator default reaches the
	 * problem, and a bad value of it is refused */
	s = spec_of("markov_bias", MTP_FAMILY_DEEPSEEK_V4);
	generate_ok(&s, &c);
	cr_expect_eq(c.params.logit_scale, 1.0);
	mtp_case_fini(&c);
	add_attr(&s, "logit_scale", 2, NULL);
	generate_ok(&s, &c);
	cr_expect_eq(c.params.logit_scale, 2.0);
	mtp_case_fini(&c);
	s.attrs.items[0].num = 0;
	cr_expect_eq(mtp_case_generate(&s, &c, err, sizeof(err)),
		     MTP_ERR_INVALID);
	cr_expect(strstr(err, "logit_scale"), "%s", err);
}

Test(generate, bad_attributes_are_refused)
{
	struct mtp_gen_spec s = spec_of("rmsnorm", MTP_FAMILY_DEEPSEEK_V3);
	struct mtp_case c;
	char err[MTP_ERR_MAX] = "";

	add_attr(&s, "sinkhorn_iters", 5, NULL); /* not an rmsnorm attribute */
	cr_expect_eq(mtp_case_generate(&s, &c, err, sizeof(err)),
		     MTP_ERR_INVALID);
	cr_expect(strstr(err, "'sinkhorn_iters'") && strstr(err, "rmsnorm"),
		  "%s", err);
	cr_expect_eq(c.inputs.n, 0);

	s = spec_of("rmsnorm", MTP_FAMILY_DEEPSEEK_V3);
	add_attr(&s, "rounding", 0, "sloppy");
	cr_expect_eq(mtp_case_generate(&s, &c, err, sizeof(err)),
		     MTP_ERR_INVALID);
	cr_expect(strstr(err, "rounding"), "%s", err);

	s = spec_of("mtp_step", MTP_FAMILY_DEEPSEEK_V4);
	s.m = 2;
	add_attr(&s, "hc_mult", 4, NULL);
	cr_expect_eq(mtp_case_generate(&s, &c, err, sizeof(err)),
		     MTP_ERR_INVALID);
	cr_expect(strstr(err, "hc_mult") && strstr(err, "M=2"), "%s", err);

	s = spec_of("rmsnorm", MTP_FAMILY_DEEPSEEK_V3);
	s.act = MTP_I64;
	cr_expect_eq(mtp_case_generate(&s, &c, err, sizeof(err)),
		     MTP_ERR_INVALID);
	cr_expect(strstr(err, "float"), "%s", err);
}

Test(generate, case_id_encodes_the_spec)
{
	struct mtp_gen_spec s = spec_of("rmsnorm", MTP_FAMILY_DEEPSEEK_V3);
	char id[128], err[MTP_ERR_MAX];

	s.rows = 4096;
	s.h = 7168;
	s.seed = 42;
	cr_assert_eq(mtp_gen_spec_check(&s, id, sizeof(id), err, sizeof(err)),
		     MTP_OK);
	cr_expect_str_eq(id, "gen.rmsnorm.deepseek_v3.bf16.R4096.H7168.s42");

	s = spec_of("lm_head", MTP_FAMILY_GLM);
	s.act = MTP_F32;
	s.t = 8;
	cr_assert_eq(mtp_gen_spec_check(&s, id, sizeof(id), err, sizeof(err)),
		     MTP_OK);
	cr_expect_str_eq(id, "gen.lm_head.glm.fp32.T8.H64.V97.s1");

	s = spec_of("hc_pre", MTP_FAMILY_DEEPSEEK_V4);
	s.optional = true;
	add_attr(&s, "post_mult", 1e20, NULL);
	cr_assert_eq(mtp_gen_spec_check(&s, id, sizeof(id), err, sizeof(err)),
		     MTP_ERR_INVALID);
	s.attrs.items[0].num = 1.5;
	cr_assert_eq(mtp_gen_spec_check(&s, id, sizeof(id), err, sizeof(err)),
		     MTP_OK, "%s", err);
	cr_expect_str_eq(
		id,
		"gen.hc_pre.deepseek_v4.bf16.T3.M4.H64.post_mult-1.5.opt.s1");
	for (const char *p = id; *p; p++)
		cr_expect(strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRS"
				 "TUVWXYZ0123456789_.-",
				 *p));
}

Test(generate, default_families)
{
	cr_expect_eq(mtp_gen_default_family(mtp_op_find("hc_pre")),
		     MTP_FAMILY_DEEPSEEK_V4);
	cr_expect_eq(mtp_gen_default_family(mtp_op_find("eh_proj_hc")),
		     MTP_FAMILY_DEEPSEEK_V4);
	cr_expect_eq(
		mtp_gen_default_family(mtp_op_find("fused_mtp_input_rmsnorm")),
		MTP_FAMILY_DEEPSEEK_V4);
	cr_expect_eq(mtp_gen_default_family(mtp_op_find("eh_proj")),
		     MTP_FAMILY_DEEPSEEK_V3);
	cr_expect_eq(mtp_gen_default_family(mtp_op_find("mtp_step")),
		     MTP_FAMILY_DEEPSEEK_V3);
}

Test(generate, full_sizes_pass_the_size_check)
{
	for (int i = 0; i < MTP_OP_COUNT; i++) {
		for (size_t f = 0; f < 3; f++) {
			struct mtp_gen_spec s;
			char err[MTP_ERR_MAX] = "";

			mtp_gen_spec_init(&s, mtp_op_get((enum mtp_op_id)i));
			s.family = families[f];
			s.t = 16384;
			s.h = 7168;
			s.v = 129280;
			s.f = 2048;
			cr_expect_eq(mtp_gen_spec_check(&s, NULL, 0, err,
							sizeof(err)),
				     MTP_OK, "%s: %s", s.op->name, err);
		}
	}
}

Test(generate, a_large_problem_generates)
{
	struct mtp_gen_spec s = spec_of("rmsnorm", MTP_FAMILY_DEEPSEEK_V3);
	struct mtp_case c;

	s.rows = 1024;
	s.h = 7168;
	generate_ok(&s, &c);
	cr_expect_eq(mtp_list_find(&c.inputs, "x")->t.shape[0], 1024);
	cr_expect_eq(mtp_list_find(&c.inputs, "x")->t.shape[1], 7168);
	mtp_case_fini(&c);
}

Test(generate, absurd_sizes_are_refused_naming_op_and_tensor)
{
	struct mtp_gen_spec s =
		spec_of("fused_embed_eh_norm", MTP_FAMILY_DEEPSEEK_V3);
	struct mtp_case c;
	char err[MTP_ERR_MAX] = "";

	s.h = 7168;
	s.v = 1 << 20; /* embed_table: 14 GiB of bf16 */
	cr_expect_eq(mtp_case_generate(&s, &c, err, sizeof(err)),
		     MTP_ERR_LIMIT);
	cr_expect(strstr(err, "fused_embed_eh_norm") &&
			  strstr(err, "'embed_table'") && strstr(err, "GiB"),
		  "%s", err);
	cr_expect_eq(c.inputs.n, 0);

	s = spec_of("lm_head", MTP_FAMILY_DEEPSEEK_V3);
	s.t = 65536;
	s.v = 129280; /* logits: 31.6 GiB of float32 */
	cr_expect_eq(mtp_gen_spec_check(&s, NULL, 0, err, sizeof(err)),
		     MTP_ERR_LIMIT);
	cr_expect(strstr(err, "lm_head") && strstr(err, "'logits'"), "%s", err);

	s = spec_of("rmsnorm", MTP_FAMILY_DEEPSEEK_V3);
	s.h = (int64_t)1 << 40;
	cr_expect_eq(mtp_gen_spec_check(&s, NULL, 0, err, sizeof(err)),
		     MTP_ERR_INVALID);
	cr_expect(strstr(err, "rmsnorm") && strstr(err, "H="), "%s", err);

	s = spec_of("rmsnorm", MTP_FAMILY_DEEPSEEK_V3);
	s.t = -1;
	cr_expect_eq(mtp_gen_spec_check(&s, NULL, 0, err, sizeof(err)),
		     MTP_ERR_INVALID);
}
