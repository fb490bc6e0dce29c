/*
 * mtp_nv_selftest: a randomized conformance check of the CUDA backend that
 * needs no fixtures. For each problem of a built-in list it draws inputs
 * from a fixed seed, runs the scalar reference (the judge) and the backend
 * through the same interface the runner uses (mtp_backend_execute), and
 * compares every output with the harness's tolerances (tokens exactly, so a
 * near-tie flip shows as FAIL here, not as the runner's ambiguous). Prints one
 * line per output and exits 0 (all passed), 1 (a failure) or 125 (no
 * device). Usage: mtp_nv_selftest [backend [filter]].
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mtp/backend.h"
#include "mtp/compare.h"
#include "mtp/op.h"

struct problem {
	const char *op;
	enum mtp_family fam;
	enum mtp_dtype act;
	int64_t t, h, m, v, f, r, p;
	int rounding, variant, contract;
	bool norm, state, pass;
	int64_t k, l;
};

#define V3 MTP_FAMILY_DEEPSEEK_V3
#define V4 MTP_FAMILY_DEEPSEEK_V4
#define BF MTP_BF16
#define F3 MTP_F32
#define F6 MTP_F16
#define EA MTP_ROUNDING_EAGER
#define FU MTP_ROUNDING_FUSED

static const struct problem problems[] = {
	{"rmsnorm", V3, BF, .r = 7, .h = 4096, .rounding = EA},
	{"rmsnorm", V3, BF, .r = 3, .h = 100, .rounding = FU},
	{"rmsnorm", V3, F3, .r = 5, .h = 7168, .rounding = FU},
	{"add_rmsnorm", V3, BF, .r = 5, .h = 7168, .rounding = EA},
	{"add_rmsnorm", V3, BF, .r = 5, .h = 1000, .rounding = FU},
	{"embed", V3, BF, .t = 6, .v = 1000, .h = 512},
	{"fused_eh_norm", V3, BF, .t = 8, .h = 1024},
	{"fused_embed_eh_norm", V3, BF, .t = 8, .v = 500, .h = 7168},
	{"eh_proj", V3, BF, .t = 5, .h = 1024},
	{"eh_proj", V3, F3, .t = 3, .h = 512},
	{"fused_mtp_input_rmsnorm", V4, BF, .t = 5, .m = 4, .h = 4096},
	{"eh_proj_hc", V4, BF, .t = 5, .m = 4, .h = 512},
	{"hc_pre", V4, BF, .t = 6, .m = 4, .h = 7168},
	{"hc_pre", V4, BF, .t = 6, .m = 4, .h = 1024, .norm = true},
	{"hc_pre", V4, BF, .t = 3, .m = 3, .h = 100, .norm = true},
	{"hc_pre", V4, F3, .t = 3, .m = 4, .h = 512},
	{"hc_post", V4, BF, .t = 6, .m = 4, .h = 1024},
	{"hc_post", V4, BF, .t = 2, .m = 2, .h = 100},
	{"hc_fused_post_pre", V4, BF, .t = 6, .m = 4, .h = 1024, .norm = true},
	{"hc_head", V4, BF, .t = 6, .m = 4, .h = 4096,
	 .variant = MTP_HC_HEAD_CUDA},
	{"hc_head", V4, BF, .t = 6, .m = 4, .h = 4096,
	 .variant = MTP_HC_HEAD_ROCM},
	{"mtp_shared_head_rmsnorm", V4, BF, .t = 4, .h = 4096},
	{"lm_head", V3, BF, .t = 4, .v = 32000, .h = 1024},
	{"lm_head", V3, F3, .t = 2, .v = 3000, .h = 512},
	{"all_reduce", V3, BF, .p = 4, .r = 8, .h = 1024},
	{"mtp_block", V3, BF, .t = 4, .h = 256, .f = 512, .rounding = EA},
	{"mtp_block", V3, BF, .t = 4, .h = 256, .f = 512, .rounding = FU,
	 .state = true},
	{"mtp_block", V4, BF, .t = 4, .m = 4, .h = 256, .f = 512,
	 .contract = MTP_CONTRACT_DEFERRED},
	{"mtp_block", V4, BF, .t = 4, .m = 4, .h = 256, .f = 512,
	 .contract = MTP_CONTRACT_INTERNAL, .state = true},
	{"mtp_step", V3, BF, .t = 4, .h = 256, .f = 512, .v = 1000,
	 .rounding = EA},
	{"mtp_step", V3, BF, .t = 4, .h = 256, .f = 512, .v = 1000,
	 .rounding = FU},
	{"mtp_step", V4, BF, .t = 4, .m = 4, .h = 256, .f = 512, .v = 1000,
	 .rounding = FU},
	{"mtp_step", V4, BF, .t = 4, .m = 4, .h = 256, .f = 512, .v = 1000,
	 .rounding = EA, .contract = MTP_CONTRACT_INTERNAL,
	 .variant = MTP_HC_HEAD_ROCM},
	{"mtp_step", V4, F3, .t = 3, .m = 4, .h = 128, .f = 256, .v = 500,
	 .rounding = FU},
	{"rmsnorm", V3, F6, .r = 5, .h = 4096, .rounding = EA},
	{"hc_pre", V4, F6, .t = 3, .m = 4, .h = 512, .norm = true},
	{"lm_head", V3, F6, .t = 3, .v = 3000, .h = 512},
	{"mtp_step", V3, F6, .t = 3, .h = 256, .f = 512, .v = 1000,
	 .rounding = FU},
	{"mtp_step", V4, F6, .t = 3, .m = 4, .h = 128, .f = 256, .v = 500,
	 .rounding = EA},
	{"draft_chain", V3, BF, .t = 3, .h = 256, .f = 512, .v = 1000, .k = 3,
	 .l = 2, .pass = true},
	{"draft_chain", V4, BF, .t = 3, .m = 4, .h = 256, .f = 512, .v = 1000,
	 .k = 3, .l = 2, .pass = true},
};

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static double uni(double lo, double hi)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return lo + (hi - lo) * (double)(rng >> 11) / 9007199254740992.0;
}

static void params_of(const struct problem *pb, struct mtp_params *p)
{
	memset(p, 0, sizeof(*p));
	p->family = pb->fam;
	p->eps = 1e-6;
	p->rounding = pb->rounding;
	p->hc = (struct mtp_hc_params){1e-6, 1e-6, 1e-6, 2.0, 20, 1e-6};
	p->hc_eps = 1e-6;
	p->variant = pb->variant;
	p->contract = pb->contract;
	p->hc_mult = pb->fam == V4 && pb->m ? pb->m : 0;
	/* 1 where the problem has no chain, as mtp_params_parse defaults them:
	 * K = 0 or L = 0 is refused as an empty sum, not an empty batch */
	p->num_steps = pb->k ? pb->k : 1;
	p->num_layers = pb->l ? pb->l : 1;
	p->pass_step_idx = pb->pass;
}

/* Values by role: ids in range, positions with zeros, norm weights near 1,
 * matrices scaled by 1/sqrt(in), mHC parameters small. */
static void fill(const struct mtp_tspec *s, struct mtp_tensor *t,
		 const struct problem *pb)
{
	int64_t n = mtp_tensor_numel(t);
	const char *nm =
		strrchr(s->name, '/') ? strrchr(s->name, '/') + 1 : s->name;
	double *v = malloc((size_t)(n ? n : 1) * sizeof(double));

	for (int64_t i = 0; i < n; i++) {
		if (s->cls == MTP_TC_INDEX)
			v[i] = strcmp(nm, "positions") == 0
				       ? floor(uni(0, 4))
				       : floor(uni(0, (double)pb->v));
		else if (s->cls == MTP_TC_PARAM && strstr(nm, "scale"))
			v[i] = uni(0.5, 1.5);
		else if (s->cls == MTP_TC_PARAM && strstr(nm, "base"))
			v[i] = uni(-0.5, 0.5);
		else if (s->cls == MTP_TC_PARAM && strstr(nm, "fn"))
			v[i] = uni(-0.05, 0.05);
		else if (s->cls == MTP_TC_PARAM)
			v[i] = uni(0.0, strstr(nm, "post") ? 2.0 : 1.0);
		else if (t->ndim == 1)
			v[i] = uni(0.5, 1.5);
		else if (t->ndim == 2 && strcmp(nm, "embed_table") != 0 &&
			 (strstr(nm, "weight") ||
			  strncmp(nm, "block.W", 7) == 0))
			v[i] = uni(-1, 1) / sqrt((double)t->shape[1]) * 1.7;
		else
			v[i] = uni(-2, 2);
	}
	mtp_tensor_from_double(t, v);
	free(v);
}

static enum mtp_status build(const struct problem *pb, struct mtp_params *p,
			     struct mtp_signature *sig,
			     struct mtp_tensor_list *ins, struct mtp_call *c,
			     char *err, size_t errn)
{
	const struct mtp_op *op = mtp_op_find(pb->op);
	struct mtp_dims d = {pb->t, pb->h, pb->m, pb->v, pb->f,
			     pb->r, pb->p, pb->k, pb->l, 0};
	struct mtp_tensor_list present;
	enum mtp_status st;

	params_of(pb, p);
	mtp_list_init(&present);
	if (pb->state)
		mtp_list_add(&present, "residual");
	st = mtp_signature_build(op, p, &present, sig, err, errn);
	mtp_list_fini(&present);
	if (st)
		return st;
	for (int i = 0; i < sig->n_in; i++) {
		const struct mtp_tspec *s = &sig->in[i];
		int64_t shape[MTP_MAX_DIMS];
		int nd;

		if (s->optional &&
		    !(pb->norm && strcmp(s->name, "norm_weight") == 0) &&
		    !pb->state)
			continue;
		struct mtp_named *nn = mtp_list_add(ins, s->name);

		mtp_tspec_shape(s, &d, &nd, shape);
		st = mtp_tensor_alloc(&nn->t, mtp_tspec_dtype(s, pb->act), nd,
				      shape);
		if (st)
			return st;
		fill(s, &nn->t, pb);
	}
	c->op = op;
	c->params = p;
	c->sig = sig;
	st = mtp_signature_bind(sig, p, ins, &c->dims, &c->act, err, errn);
	if (st)
		return st;
	c->n_in = sig->n_in;
	c->n_out = sig->n_out;
	c->in = calloc((size_t)sig->n_in + 1, sizeof(*c->in));
	c->out = calloc((size_t)sig->n_out + 1, sizeof(*c->out));
	for (int i = 0; i < sig->n_in; i++) {
		const struct mtp_named *n = mtp_list_find(ins, sig->in[i].name);

		if (n)
			c->in[i] = n->t;
	}
	for (int i = 0; i < sig->n_out; i++) {
		struct mtp_tensor *t = &c->out[i];
		int64_t shape[MTP_MAX_DIMS];
		int nd;

		mtp_tspec_shape(&sig->out[i], &c->dims, &nd, shape);
		st = mtp_tensor_alloc(t, mtp_tspec_dtype(&sig->out[i], c->act),
				      nd, shape);
		if (st)
			return st;
	}
	return MTP_OK;
}

/* Runs one problem; returns 0 passed, 1 failed, 2 unimplemented. */
static int run_one(struct mtp_backend *be, const struct problem *pb, int idx)
{
	struct mtp_params p;
	static struct mtp_signature sig;
	struct mtp_tensor_list ins;
	struct mtp_call c = {0};
	struct mtp_tensor *got = NULL;
	char err[256] = "";
	int rc = 1;

	mtp_list_init(&ins);
	if (build(pb, &p, &sig, &ins, &c, err, sizeof(err))) {
		printf("[%2d] %-24s INVALID %s\n", idx, pb->op, err);
		goto out;
	}
	printf("[%2d] %-24s %s %s T=%lld H=%lld M=%lld V=%lld R=%lld\n", idx,
	       pb->op, mtp_family_name(pb->fam), mtp_dtype_name(c.act),
	       (long long)c.dims.t, (long long)c.dims.h, (long long)c.dims.m,
	       (long long)c.dims.v, (long long)c.dims.r);
	if (!mtp_backend_supports(be, &c)) {
		printf("     UNIMPLEMENTED\n");
		rc = 2;
		goto out;
	}
	if (mtp_reference_run(&c)) {
		printf("     reference failed\n");
		goto out;
	}
	got = calloc((size_t)c.n_out + 1, sizeof(*got));
	be->error[0] = 0;
	if (mtp_backend_execute(be, &c, got)) {
		printf("     FAILED: %s\n", be->error);
		goto out;
	}
	rc = 0;
	for (int i = 0; i < c.n_out; i++) {
		struct mtp_tol tol;
		struct mtp_cmp cmp;
		char where[64];

		mtp_tol_for(&c, sig.out[i].name, c.out[i].dtype, NULL, &tol);
		mtp_compare(sig.out[i].name, &got[i], &c.out[i], &tol,
			    sig.out[i].cls == MTP_TC_LOGITS, &cmp);
		printf("     %-5s %-22s max_abs %.3g max_rel %.3g headroom "
		       "%.3f bad %lld/%lld at %s",
		       cmp.passed ? "ok" : "FAIL", sig.out[i].name, cmp.max_abs,
		       cmp.max_rel, cmp.headroom, (long long)cmp.n_bad,
		       (long long)cmp.n,
		       mtp_cmp_where(&cmp, where, sizeof(where)));
		if (cmp.has_argmax)
			printf(" argmax %lld/%lld", (long long)cmp.argmax_agree,
			       (long long)cmp.argmax_rows);
		printf("\n");
		rc |= !cmp.passed;
	}
out:
	for (int i = 0; got && i < c.n_out; i++)
		mtp_tensor_fini(&got[i]);
	for (int i = 0; c.out && i < c.n_out; i++)
		mtp_tensor_fini(&c.out[i]);
	free(got);
	free(c.in);
	free(c.out);
	mtp_list_fini(&ins);
	return rc;
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "cuda";
	const char *filter = argc > 2 ? argv[2] : NULL;
	struct mtp_backend *be;
	char why[512], info[512];
	int n_fail = 0, n_pass = 0, n_unimpl = 0;

	if (mtp_backend_open(name, NULL, &be, why, sizeof(why))) {
		printf("backend %s: SKIPPED (%s)\n", name, why);
		return 125;
	}
	mtp_backend_device_info(be, info, sizeof(info));
	printf("backend %s: %s\n", name, info);
	for (size_t i = 0; i < sizeof(problems) / sizeof(problems[0]); i++) {
		if (filter && !strstr(problems[i].op, filter))
			continue;
		switch (run_one(be, &problems[i], (int)i)) {
		case 0: n_pass++; break;
		case 2: n_unimpl++; break;
		default: n_fail++; break;
		}
	}
	printf("selftest: %d passed, %d failed, %d unimplemented\n", n_pass,
	       n_fail, n_unimpl);
	mtp_backend_close(be);
	return n_fail ? 1 : 0;
}
