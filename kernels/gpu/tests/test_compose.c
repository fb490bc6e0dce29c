/*
 * The GPU composition layer over a recording stand-in for a device: its
 * primitives touch no memory, count what they are asked and fail on
 * request. Every op of the table composes to primitive calls; a failure of
 * any single primitive call of a step, a chain or a block is the launch's
 * status with the primitive's message (so no status is dropped), and the
 * launch's scratch is released whatever happened.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "mtp/config.h"
#include "mtp/fixture.h"
#include "mtp/generate.h"

struct fake {
	struct gpu_dev gpu; /* first, as in every GPU backend */
	int calls;	    /* kernel launches and copies */
	int fail_at;	    /* that call fails (1-based; 0: none) */
	int allocs, frees, fail_free_at, norm_jobs_max, norm_calls;
	int live, hc_post_calls, hc_pre_fused;
	int fp8_calls, fp8_w8a8, fp8_e8m0; /* linear_fp8 */
	int reduce_order; /* of the last reduce_ordered (-1: none) */
};

static struct fake *F(struct mtp_backend *be)
{
	return (struct fake *)be->ctx;
}

static enum mtp_status call(struct mtp_backend *be, const char *what)
{
	struct fake *f = F(be);

	if (++f->calls == f->fail_at)
		return mtp_backend_fail(be, MTP_ERR_DEVICE, "fake %s failed",
					what);
	return MTP_OK;
}

static char pool[1];

static enum mtp_status s_alloc(struct mtp_backend *be, size_t bytes, void **mem)
{
	(void)bytes;
	F(be)->allocs++;
	F(be)->live++;
	*mem = pool;
	return MTP_OK;
}

static enum mtp_status s_free(struct mtp_backend *be, void *mem)
{
	struct fake *f = F(be);

	cr_assert_eq(mem, pool);
	f->live--;
	if (++f->frees == f->fail_free_at || f->fail_free_at < 0)
		return mtp_backend_fail(be, MTP_ERR_DEVICE, "free %d failed",
					f->frees);
	return MTP_OK;
}

#define B struct gpu_buf
#define A enum gpu_act
static enum mtp_status p_copy(struct mtp_backend *be, B d, B s, size_t n)
{
	(void)d, (void)s, (void)n;
	return call(be, "copy");
}
static enum mtp_status p_rmsnorm(struct mtp_backend *be, A a,
				 const struct gpu_norm_job *j, int n, int64_t h,
				 float eps, int r)
{
	(void)a, (void)j, (void)h, (void)eps, (void)r;
	cr_assert(n >= 1 && n <= GPU_NORM_JOBS);
	F(be)->norm_calls++;
	if (n > F(be)->norm_jobs_max)
		F(be)->norm_jobs_max = n;
	return call(be, "rmsnorm");
}
static enum mtp_status p_add_rmsnorm(struct mtp_backend *be, A a, B x, B r, B w,
				     B y, B ro, int64_t rows, int64_t h,
				     float e, int rd)
{
	(void)a, (void)x, (void)r, (void)w, (void)y, (void)ro, (void)rows;
	(void)h, (void)e, (void)rd;
	return call(be, "add_rmsnorm");
}
static enum mtp_status p_embed(struct mtp_backend *be, A a, B t, B i, bool i64,
			       B o, int64_t n, int64_t h)
{
	(void)a, (void)t, (void)i, (void)i64, (void)o, (void)n, (void)h;
	return call(be, "embed");
}
static enum mtp_status p_pos(struct mtp_backend *be, B p, bool p64, int64_t a,
			     B o, int64_t t)
{
	(void)p, (void)p64, (void)a, (void)o, (void)t;
	return call(be, "positions_add");
}
static enum mtp_status p_all_reduce(struct mtp_backend *be, A a, B p, int64_t n,
				    int64_t m, B o)
{
	(void)a, (void)p, (void)n, (void)m, (void)o;
	return call(be, "all_reduce");
}
static enum mtp_status p_add_bcast(struct mtp_backend *be, A a, B x, B y, B o,
				   int64_t r, int64_t k, int64_t h)
{
	(void)a, (void)x, (void)y, (void)o, (void)r, (void)k, (void)h;
	return call(be, "add_bcast");
}
static enum mtp_status p_swiglu(struct mtp_backend *be, A a, B g, B u, B o,
				int64_t n)
{
	(void)a, (void)g, (void)u, (void)o, (void)n;
	return call(be, "swiglu");
}
static enum mtp_status p_linear(struct mtp_backend *be, A a, bool l, B x, B w,
				B y, int64_t r, int64_t i, int64_t o)
{
	(void)a, (void)l, (void)x, (void)w, (void)y, (void)r, (void)i, (void)o;
	return call(be, "linear");
}
static enum mtp_status p_linear_fp8(struct mtp_backend *be, A a, bool l, B x,
				    B w, const struct gpu_fp8 *q, B y,
				    int64_t r, int64_t i, int64_t o)
{
	(void)a, (void)l, (void)x, (void)y, (void)r, (void)i, (void)o;
	cr_assert(w.mem && q->scale.mem, "a float8 weight without its scale");
	F(be)->fp8_calls++;
	F(be)->fp8_w8a8 += q->w8a8;
	F(be)->fp8_e8m0 += q->e8m0;
	return call(be, "linear_fp8");
}
static enum mtp_status p_argmax(struct mtp_backend *be, B l, B t, bool t64,
				int64_t r, int64_t v)
{
	(void)l, (void)t, (void)t64, (void)r, (void)v;
	return call(be, "argmax");
}
static enum mtp_status p_hc_pre(struct mtp_backend *be, A a,
				const struct gpu_hc_pre_args *x)
{
	(void)a;
	F(be)->hc_pre_fused += x->post_x.mem != NULL &&
			       x->post_res.mem != NULL &&
			       x->post_in.mem != NULL && x->comb_in.mem != NULL;
	return call(be, "hc_pre");
}
static enum mtp_status p_hc_post(struct mtp_backend *be, A a, B x, B r, B p,
				 B c, B o, int64_t t, int64_t m, int64_t h)
{
	(void)a, (void)x, (void)r, (void)p, (void)c, (void)o, (void)t, (void)m;
	(void)h;
	F(be)->hc_post_calls++;
	return call(be, "hc_post");
}
static enum mtp_status p_hc_head(struct mtp_backend *be, A a, B x, B fn, B s,
				 B b, B y, int64_t t, int64_t m, int64_t h,
				 float e1, float e2, bool rocm)
{
	(void)a, (void)x, (void)fn, (void)s, (void)b, (void)y, (void)t;
	(void)m, (void)h, (void)e1, (void)e2, (void)rocm;
	return call(be, "hc_head");
}
static enum mtp_status p_convert(struct mtp_backend *be, A from, A to, B x, B y,
				 int64_t n)
{
	(void)from, (void)to, (void)x, (void)y, (void)n;
	return call(be, "convert");
}
static enum mtp_status p_reduce_ordered(struct mtp_backend *be, A a, B parts,
					int64_t p, int64_t rows, int64_t h,
					int order, B out)
{
	(void)a, (void)parts, (void)p, (void)rows, (void)h, (void)out;
	F(be)->reduce_order = order;
	return call(be, "reduce_ordered");
}
static enum mtp_status p_hc_collapse(struct mtp_backend *be, A a, B x, B pre,
				     B y, int64_t t, int64_t m, int64_t h)
{
	(void)a, (void)x, (void)pre, (void)y, (void)t, (void)m, (void)h;
	return call(be, "hc_collapse");
}
static enum mtp_status p_hc_pre_delayed(struct mtp_backend *be, A a,
					const struct gpu_hc_pre_args *p, B in,
					B out)
{
	(void)a, (void)p, (void)in, (void)out;
	return call(be, "hc_pre_delayed");
}
static enum mtp_status p_confidence(struct mtp_backend *be, A a, B hd, B e, B w,
				    B b, B c, int64_t t, int64_t h, int64_t r)
{
	(void)a, (void)hd, (void)e, (void)w, (void)b, (void)c, (void)t, (void)h,
		(void)r;
	return call(be, "confidence");
}
#undef A
#undef B

static const struct gpu_prims fake_prims = {
	.max_m = 8,
	.max_rows = 1LL << 31,
	.scratch_alloc = s_alloc,
	.scratch_free = s_free,
	.copy = p_copy,
	.rmsnorm = p_rmsnorm,
	.add_rmsnorm = p_add_rmsnorm,
	.embed = p_embed,
	.positions_add = p_pos,
	.all_reduce = p_all_reduce,
	.add_bcast = p_add_bcast,
	.swiglu = p_swiglu,
	.linear = p_linear,
	.argmax = p_argmax,
	.hc_pre = p_hc_pre,
	.hc_post = p_hc_post,
	.hc_head = p_hc_head,
	.convert = p_convert,
	.reduce_ordered = p_reduce_ordered,
	.hc_collapse = p_hc_collapse,
	.confidence = p_confidence,
	.hc_pre_delayed = p_hc_pre_delayed,
};

/* The same without gpu.h's optional primitives (the HIP module's set). */
static struct gpu_prims core_prims(void)
{
	struct gpu_prims p = fake_prims;

	p.convert = NULL;
	p.reduce_ordered = NULL;
	p.hc_collapse = NULL;
	p.confidence = NULL;
	p.hc_pre_delayed = NULL;
	return p;
}

/* A generated case of op (family, contract as given) as a host call. */
struct gen {
	struct mtp_case c;
	struct mtp_case_call cc;
};

/* The op's default family. */
#define DEFAULT_FAMILY (-1)

static void gen(struct gen *g, const char *op, int fam, const char *contract)
{
	struct mtp_gen_spec spec;
	char err[MTP_ERR_MAX] = "";

	memset(g, 0, sizeof(*g));
	cr_assert(mtp_op_find(op), "%s", op);
	mtp_gen_spec_init(&spec, mtp_op_find(op));
	if (fam != DEFAULT_FAMILY)
		spec.family = (enum mtp_family)fam;
	if (contract) {
		struct mtp_attr *a = &spec.attrs.items[spec.attrs.n++];

		memset(a, 0, sizeof(*a));
		snprintf(a->name, sizeof(a->name), "block_contract");
		a->is_string = true;
		snprintf(a->str, sizeof(a->str), "%s", contract);
	}
	cr_assert_eq(mtp_case_generate(&spec, &g->c, err, sizeof(err)), MTP_OK,
		     "%s: %s", op, err);
	cr_assert_eq(mtp_case_call_init(&g->c, &g->cc, err, sizeof(err)),
		     MTP_OK, "%s: %s", op, err);
}

static void gen_fini(struct gen *g)
{
	mtp_case_call_fini(&g->cc);
	mtp_case_fini(&g->c);
}

static void fake_init(struct mtp_backend *be, struct fake *f, int fail_at)
{
	memset(be, 0, sizeof(*be));
	memset(f, 0, sizeof(*f));
	f->gpu.prims = &fake_prims;
	f->fail_at = fail_at;
	f->reduce_order = -1;
	be->ctx = f;
}

Test(compose, every_op_composes_and_releases_its_scratch)
{
	for (int id = 0; id < MTP_OP_COUNT; id++) {
		const struct mtp_op *op = mtp_op_get((enum mtp_op_id)id);
		struct mtp_backend be;
		struct fake f;
		struct gen g;

		gen(&g, op->name, DEFAULT_FAMILY, NULL);
		fake_init(&be, &f, 0);
		/* not composed yet: declined (UNIMPLEMENTED), SPEC.md §13.9 */
		if (strcmp(op->name, "dspark_step") == 0) {
			cr_expect_not(mtp_gpu_supports(&be, &g.cc.call), "%s",
				      op->name);
			gen_fini(&g);
			continue;
		}
		cr_expect(mtp_gpu_supports(&be, &g.cc.call), "%s", op->name);
		cr_expect_eq(mtp_gpu_launch(&be, &g.cc.call), MTP_OK, "%s: %s",
			     op->name, be.error);
		cr_expect(f.calls > 0, "%s: no primitive called", op->name);
		cr_expect_eq(f.live, 0, "%s: scratch left", op->name);
		cr_expect_eq(f.gpu.n_scratch, 0, "%s", op->name);
		gen_fini(&g);
	}
}

/* Fails each primitive call of the launch in turn. */
static void fail_each(const char *op, int fam, const char *contract)
{
	struct mtp_backend be;
	struct fake f;
	struct gen g;
	int total;

	gen(&g, op, fam, contract);
	fake_init(&be, &f, 0);
	cr_assert_eq(mtp_gpu_launch(&be, &g.cc.call), MTP_OK, "%s", be.error);
	total = f.calls;
	cr_assert(total > 3, "%s: %d calls", op, total);
	for (int n = 1; n <= total; n++) {
		fake_init(&be, &f, n);
		cr_expect_eq(mtp_gpu_launch(&be, &g.cc.call), MTP_ERR_DEVICE,
			     "%s: call %d of %d failed unnoticed", op, n,
			     total);
		cr_expect(strstr(be.error, "fake ") == be.error, "%s: %s", op,
			  be.error);
		cr_expect_eq(f.calls, n, "%s: ran on after call %d", op, n);
		cr_expect_eq(f.live, 0, "%s: scratch left after call %d", op,
			     n);
	}
	gen_fini(&g);
}

Test(compose, a_failed_call_of_a_v3_step_is_the_verdict)
{
	fail_each("mtp_step", MTP_FAMILY_DEEPSEEK_V3, NULL);
}

Test(compose, a_failed_call_of_a_v4_step_is_the_verdict)
{
	fail_each("mtp_step", MTP_FAMILY_DEEPSEEK_V4, NULL);
}

Test(compose, a_failed_call_of_a_chain_is_the_verdict)
{
	fail_each("draft_chain", MTP_FAMILY_DEEPSEEK_V4, NULL);
	fail_each("draft_chain", MTP_FAMILY_DEEPSEEK_V3, NULL);
}

Test(compose, a_failed_call_of_a_v4_block_is_the_verdict)
{
	fail_each("mtp_block", MTP_FAMILY_DEEPSEEK_V4, "internal");
	fail_each("mtp_block", MTP_FAMILY_DEEPSEEK_V4, "deferred");
}

Test(compose, the_input_norms_are_one_call_of_two_jobs)
{
	static const char *const ops[] = {"fused_eh_norm",
					  "fused_embed_eh_norm",
					  "fused_mtp_input_rmsnorm"};

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		struct mtp_backend be;
		struct fake f;
		struct gen g;

		gen(&g, ops[i], DEFAULT_FAMILY, NULL);
		fake_init(&be, &f, 0);
		cr_assert_eq(mtp_gpu_launch(&be, &g.cc.call), MTP_OK);
		cr_expect_eq(f.norm_calls, 1, "%s", ops[i]);
		cr_expect_eq(f.norm_jobs_max, 2, "%s", ops[i]);
		gen_fini(&g);
	}
}

/* hc_fused_post_pre: one hc_pre call with hc_post's inputs where the
 * backend fuses the two, hc_post then hc_pre where it does not. */
Test(compose, the_fused_post_pre_is_one_call_where_the_backend_fuses_it)
{
	struct gpu_prims fused = fake_prims;

	fused.hc_pre_fuses_post = true;
	for (int fuses = 0; fuses <= 1; fuses++) {
		struct mtp_backend be;
		struct fake f;
		struct gen g;

		gen(&g, "hc_fused_post_pre", DEFAULT_FAMILY, NULL);
		fake_init(&be, &f, 0);
		if (fuses)
			f.gpu.prims = &fused;
		cr_assert_eq(mtp_gpu_launch(&be, &g.cc.call), MTP_OK);
		cr_expect_eq(f.hc_post_calls, !fuses, "fuses %d", fuses);
		cr_expect_eq(f.hc_pre_fused, fuses, "fuses %d", fuses);
		gen_fini(&g);
	}
}

Test(compose, releasing_scratch_frees_all_and_keeps_the_first_message)
{
	struct mtp_backend be;
	struct fake f;
	struct gpu_buf b;

	fake_init(&be, &f, 0);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(mtp_gpu_scratch(&be, 16, &b), MTP_OK);
	f.fail_free_at = -1; /* every free fails */
	cr_expect_eq(mtp_gpu_scratch_release(&be), MTP_ERR_DEVICE);
	cr_expect_str_eq(be.error, "free 1 failed");
	cr_expect_eq(f.frees, 3);
	cr_expect_eq(f.gpu.n_scratch, 0);
}

Test(compose, scratch_is_bounded)
{
	struct mtp_backend be;
	struct fake f;
	struct gpu_buf b;

	fake_init(&be, &f, 0);
	for (int i = 0; i < GPU_SCRATCH_MAX; i++)
		cr_assert_eq(mtp_gpu_scratch(&be, 16, &b), MTP_OK);
	cr_expect_eq(mtp_gpu_scratch(&be, 16, &b), MTP_ERR_LIMIT);
	cr_expect_eq(mtp_gpu_scratch_release(&be), MTP_OK);
	cr_expect_eq(f.live, 0);
}

Test(compose, supports_follows_the_primitives_limits)
{
	static const struct gpu_prims narrow = {.max_m = 2, .max_rows = 2};
	struct mtp_backend be;
	struct fake f;
	struct gen g;

	gen(&g, "hc_pre", DEFAULT_FAMILY, NULL);
	fake_init(&be, &f, 0);
	cr_expect(mtp_gpu_supports(&be, &g.cc.call));
	f.gpu.prims = &narrow; /* hc_mult 4 > 2, T > 2 */
	cr_expect_not(mtp_gpu_supports(&be, &g.cc.call));
	gen_fini(&g);
}

/* The cases of a fixture file, each loaded into a host call in turn. */
struct fx_call {
	struct mtp_fixture fx;
	struct mtp_signature sig;
	struct mtp_tensor in[MTP_SIG_MAX], out[MTP_SIG_MAX];
	struct mtp_call call;
};

static void fx_call_load(struct fx_call *f, int i)
{
	struct mtp_case *c = &f->fx.cases[i];
	char err[MTP_ERR_MAX];

	cr_assert_eq(mtp_fixture_load(&f->fx, i, err, sizeof(err)), MTP_OK,
		     "%s", err);
	memset(&f->call, 0, sizeof(f->call));
	cr_assert_eq(mtp_case_check(c, &f->sig, &f->call.dims, &f->call.act,
				    err, sizeof(err)),
		     MTP_OK, "%s", err);
	f->call.op = c->op;
	f->call.params = &c->params;
	f->call.sig = &f->sig;
	f->call.n_in = f->sig.n_in;
	f->call.n_out = f->sig.n_out;
	f->call.in = f->in;
	f->call.out = f->out;
	for (int k = 0; k < f->sig.n_in; k++) {
		const struct mtp_named *n =
			mtp_list_find(&c->inputs, f->sig.in[k].name);

		memset(&f->in[k], 0, sizeof(f->in[k]));
		if (n)
			f->in[k] = n->t;
	}
	for (int k = 0; k < f->sig.n_out; k++) {
		const struct mtp_named *n =
			mtp_list_find(&c->expected, f->sig.out[k].name);

		memset(&f->out[k], 0, sizeof(f->out[k]));
		if (n)
			f->out[k] = n->t;
	}
}

/* [SPEC.md §12.2] Every float8 case of fixtures/fp8.h5 whose op is composed
 * here runs its quantized projections through linear_fp8, each with its
 * scale and the case's scheme; a backend without linear_fp8 is asked
 * nothing about them. */
Test(compose, fp8_projections_go_through_linear_fp8)
{
	struct gpu_prims with = fake_prims;
	struct mtp_limits lim = {1u << 30};
	struct fx_call *f = calloc(1, sizeof(*f));
	char err[MTP_ERR_MAX];
	int ran = 0;

	with.linear_fp8 = p_linear_fp8;
	cr_assert_eq(mtp_fixture_open(MTP_SOURCE_DIR "/fixtures/fp8.h5", &lim,
				      &f->fx, err, sizeof(err)),
		     MTP_OK, "%s", err);
	for (int i = 0; i < f->fx.n_cases; i++) {
		const char *id = f->fx.cases[i].id;
		struct mtp_backend be;
		struct fake k;

		fx_call_load(f, i);
		fake_init(&be, &k, 0);
		cr_expect_not(mtp_gpu_supports(&be, &f->call), "%s", id);
		k.gpu.prims = &with;
		if (!mtp_gpu_supports(&be, &f->call)) {
			/* main_proj_norm: not composed here yet */
			cr_expect_str_eq(f->call.op->name, "main_proj_norm");
			mtp_fixture_unload(&f->fx, i);
			continue;
		}
		cr_expect_eq(mtp_gpu_launch(&be, &f->call), MTP_OK, "%s: %s",
			     id, be.error);
		cr_expect(k.fp8_calls > 0, "%s: no linear_fp8", id);
		cr_expect_eq(k.fp8_w8a8 > 0, strstr(id, "w8a8") != NULL, "%s",
			     id);
		cr_expect_eq(k.fp8_e8m0 > 0, strstr(id, "e8m0") != NULL, "%s",
			     id);
		cr_expect_eq(k.live, 0, "%s: scratch left", id);
		ran++;
		mtp_fixture_unload(&f->fx, i);
	}
	cr_expect_geq(ran, 10);
	mtp_fixture_close(&f->fx);
	free(f);
}

/* An op that needs an optional primitive is declined where the backend has
 * none (HIP), never launched half; with them it composes. */
Test(compose, ops_without_their_primitives_are_declined)
{
	static const char *const ops[] = {"hc_pre_delayed", "hc_collapse",
					  "confidence", "markov_bias"};
	const struct gpu_prims core = core_prims();

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		struct mtp_backend be;
		struct fake f;
		struct gen g;

		gen(&g, ops[i], DEFAULT_FAMILY, NULL);
		fake_init(&be, &f, 0);
		cr_expect(mtp_gpu_supports(&be, &g.cc.call), "%s", ops[i]);
		f.gpu.prims = &core;
		cr_expect_not(mtp_gpu_supports(&be, &g.cc.call), "%s", ops[i]);
		gen_fini(&g);
	}
}

/* [§2.5] a declared order goes to reduce_ordered as it is; without the
 * primitive the op is declined; undeclared, the plain all_reduce. */
Test(compose, a_declared_reduction_order_is_honoured_or_declined)
{
	const struct gpu_prims core = core_prims();
	struct mtp_backend be;
	struct fake f;
	struct gen g;

	/* the generator keeps no reduce_order (tools/gen/tp.py writes such
	 * cases): the parsed attribute, set on the generated case */
	gen(&g, "all_reduce", DEFAULT_FAMILY, NULL);
	cr_assert_eq(g.cc.call.params, &g.c.params);
	g.c.params.tp.order = MTP_REDUCE_RING;
	fake_init(&be, &f, 0);
	cr_assert(mtp_gpu_supports(&be, &g.cc.call));
	cr_assert_eq(mtp_gpu_launch(&be, &g.cc.call), MTP_OK, "%s", be.error);
	cr_expect_eq(f.reduce_order, (int)MTP_REDUCE_RING);
	f.gpu.prims = &core;
	cr_expect_not(mtp_gpu_supports(&be, &g.cc.call));
	gen_fini(&g);

	gen(&g, "all_reduce", DEFAULT_FAMILY, NULL);
	fake_init(&be, &f, 0);
	cr_assert_eq(mtp_gpu_launch(&be, &g.cc.call), MTP_OK, "%s", be.error);
	cr_expect_eq(f.reduce_order, -1);
	gen_fini(&g);
}
