/*
 * A recording stand-in for a GPU device, for the composition layer's tests
 * (test_compose.c, test_compose_dspark.c): its primitives touch no memory,
 * count what they are asked and fail on request; and generated cases as
 * host calls.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "fake.h"
#include "mtp/config.h"
#include "mtp/generate.h"

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
	(void)a, (void)t, (void)i64, (void)o, (void)n, (void)h;
	if (F(be)->n_embed < 64)
		F(be)->embed_ids[F(be)->n_embed] = i;
	F(be)->n_embed++;
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
enum mtp_status fake_linear_fp8(struct mtp_backend *be, A a, bool l, B x, B w,
				const struct gpu_fp8 *q, B y, int64_t r,
				int64_t i, int64_t o)
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
	F(be)->hc_pre_calls++;
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
static enum mtp_status p_scale(struct mtp_backend *be, A a, B x, B y, int64_t n,
			       float s)
{
	(void)a, (void)x, (void)y, (void)n;
	cr_assert(s != 1.0f, "a scale by 1 is no rounding point");
	F(be)->scale_calls++;
	return call(be, "scale");
}
static enum mtp_status p_rope(struct mtp_backend *be, A a, B x, B p, bool p64,
			      B y, int64_t rows, int64_t h)
{
	(void)a, (void)x, (void)p, (void)p64, (void)y, (void)rows, (void)h;
	F(be)->rope_calls++;
	return call(be, "rope");
}
static enum mtp_status p_block_attention(struct mtp_backend *be, A a, B q, B kc,
					 B vc, B kb, B vb, B sc, B o, int64_t c,
					 int64_t t, int64_t h, bool causal)
{
	(void)a, (void)q, (void)kc, (void)vc, (void)kb, (void)vb, (void)sc;
	(void)o, (void)c, (void)t, (void)h;
	F(be)->attn_calls++;
	F(be)->attn_causal += causal;
	return call(be, "block_attention");
}
#undef A
#undef B

const struct gpu_prims fake_prims = {
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
	.scale = p_scale,
	.rope = p_rope,
	.block_attention = p_block_attention,
};

/* The same without gpu.h's optional primitives (the HIP module's set). */
struct gpu_prims core_prims(void)
{
	struct gpu_prims p = fake_prims;

	p.convert = NULL;
	p.reduce_ordered = NULL;
	p.hc_collapse = NULL;
	p.confidence = NULL;
	p.hc_pre_delayed = NULL;
	p.scale = NULL;
	p.rope = NULL;
	p.block_attention = NULL;
	return p;
}

void gen(struct gen *g, const char *op, int fam, const char *contract)
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

void gen_fini(struct gen *g)
{
	mtp_case_call_fini(&g->cc);
	mtp_case_fini(&g->c);
}

void fake_init(struct mtp_backend *be, struct fake *f, int fail_at)
{
	memset(be, 0, sizeof(*be));
	memset(f, 0, sizeof(*f));
	f->gpu.prims = &fake_prims;
	f->fail_at = fail_at;
	f->reduce_order = -1;
	be->ctx = f;
}

/* Fails each primitive call of the launch in turn. */
void fail_each(const char *op, int fam, const char *contract)
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
