/*
 * The block contract rule (rules.h). The probe builds mtp_block calls from a
 * case's own block weights: the streams X0 are the case's block input (or,
 * for an mtp_step or a draft_chain, its previous hidden, which has the
 * streams' shape; a chain's block weights are layer 0's); the
 * neutral state makes the block start from exactly X0: for V4 x = 0 [T,H],
 * residual = X0, res_mix = I, post_mix = 1 (hc_post gives X0), for the V3
 * family residual = 0 (the residual add gives X0).
 */
#include "mtp/rules.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mtp/compare.h"

bool mtp_rule_block_applies(const struct mtp_case *c)
{
	if (c->params.v2.captured) /* a captured block cannot be called */
		return false;
	if (c->op->scope >= MTP_SCOPE_STEP)
		return true;
	return c->op->scope == MTP_SCOPE_BLOCK &&
	       !mtp_list_find(&c->inputs, "residual");
}

struct probe {
	struct mtp_tensor_list in; /* views and owned state tensors */
	int n_owned;
	struct mtp_params p;
	struct mtp_signature sig;
	struct mtp_call call;
	struct mtp_tensor ins[MTP_SIG_MAX], outs[MTP_SIG_MAX];
};

static void probe_fini(struct probe *pr)
{
	/* only the state tensors (first n_owned entries) own their data */
	for (int i = pr->n_owned; i < pr->in.n; i++)
		pr->in.items[i].t.data = NULL;
	mtp_list_fini(&pr->in);
}

static enum mtp_status add_state(struct probe *pr, const char *name,
				 enum mtp_dtype dt, int nd,
				 const int64_t *shape, int kind,
				 const struct mtp_tensor *copy)
{
	struct mtp_named *e = mtp_list_add(&pr->in, name);
	int64_t m = shape[nd - 1];

	if (!e || mtp_tensor_alloc(&e->t, dt, nd, shape))
		return MTP_ERR_NOMEM;
	pr->n_owned++;
	for (int64_t i = 0; i < mtp_tensor_numel(&e->t); i++) {
		double v = kind == 1   ? 1.0
			   : kind == 2 ? (i % m == (i / m) % m)
				       : 0.0;

		if (copy)
			v = mtp_load(copy->dtype, copy->data, (size_t)i);
		mtp_store(dt, e->t.data, (size_t)i, v);
	}
	return MTP_OK;
}

/* The block's streams X0 as a tensor of the block's input shape. */
static enum mtp_status x0_of(const struct mtp_case *c, bool v4, int64_t m,
			     struct mtp_tensor *x0)
{
	const struct mtp_named *x = mtp_list_find(
		&c->inputs,
		c->op->scope == MTP_SCOPE_BLOCK ? "x" : "prev_hidden");

	if (!x)
		return MTP_ERR_INVALID;
	*x0 = x->t;
	if (v4 && c->op->scope != MTP_SCOPE_BLOCK) {
		x0->ndim = 3;
		x0->shape[2] = x->t.shape[1] / m;
		x0->shape[1] = m;
	}
	return MTP_OK;
}

static enum mtp_status add_state_tensors(struct probe *pr,
					 const struct mtp_tensor *x0, bool v4,
					 int64_t m, enum mtp_dtype act)
{
	int64_t t = x0->shape[0], h = x0->shape[x0->ndim - 1];
	int64_t th[2] = {t, h}, tm[2] = {t, m}, tmm[3] = {t, m, m};
	enum mtp_status st;

	if (!v4) {
		st = add_state(pr, "x", act, 2, th, 0, x0);
		return st ? st : add_state(pr, "residual", act, 2, th, 0, NULL);
	}
	st = add_state(pr, "x", act, 2, th, 0, NULL);
	if (!st)
		st = add_state(pr, "post_mix", MTP_F32, 2, tm, 1, NULL);
	if (!st)
		st = add_state(pr, "res_mix", MTP_F32, 3, tmm, 2, NULL);
	return st ? st : add_state(pr, "residual", act, 3, x0->shape, 0, x0);
}

static enum mtp_status probe_build(struct probe *pr, const struct mtp_case *c,
				   bool with_state, enum mtp_contract k)
{
	bool v4 = mtp_family_mhc(c->family);
	int64_t m = v4 ? c->params.hc_mult : 1;
	struct mtp_tensor x0;
	char err[256];
	enum mtp_status st = x0_of(c, v4, m, &x0);

	mtp_list_init(&pr->in);
	pr->n_owned = 0;
	pr->p = c->params;
	pr->p.contract = k;
	if (!st)
		st = with_state ? add_state_tensors(pr, &x0, v4, m, x0.dtype)
				: add_state(pr, "x", x0.dtype, x0.ndim,
					    x0.shape, 0, &x0);
	/* a chain's block is layer 0's */
	const char *pfx =
		c->op->scope == MTP_SCOPE_CHAIN ? "layer.0/block." : "block.";

	for (int i = 0; !st && i < c->inputs.n; i++) {
		const struct mtp_named *w = &c->inputs.items[i];
		struct mtp_named *e;

		if (strncmp(w->name, pfx, strlen(pfx)) != 0)
			continue;
		e = mtp_list_add(&pr->in, w->name + strlen(pfx) - 6);
		if (!e)
			return MTP_ERR_NOMEM;
		e->t = w->t; /* a view */
	}
	memset(&pr->call, 0, sizeof(pr->call));
	if (!st)
		st = mtp_signature_build(mtp_op_get(MTP_OP_MTP_BLOCK), &pr->p,
					 &pr->in, &pr->sig, err, sizeof(err));
	if (!st)
		st = mtp_signature_bind(&pr->sig, &pr->p, &pr->in,
					&pr->call.dims, &pr->call.act, err,
					sizeof(err));
	if (st)
		return st;
	pr->call.op = mtp_op_get(MTP_OP_MTP_BLOCK);
	pr->call.params = &pr->p;
	pr->call.sig = &pr->sig;
	pr->call.n_in = pr->sig.n_in;
	pr->call.n_out = pr->sig.n_out;
	pr->call.in = pr->ins;
	pr->call.out = pr->outs;
	for (int i = 0; i < pr->sig.n_in; i++) {
		const struct mtp_named *e =
			mtp_list_find(&pr->in, pr->sig.in[i].name);

		memset(&pr->ins[i], 0, sizeof(pr->ins[i]));
		if (e)
			pr->ins[i] = e->t;
	}
	for (int i = 0; i < pr->sig.n_out; i++) {
		memset(&pr->outs[i], 0, sizeof(pr->outs[i]));
		pr->outs[i].dtype =
			mtp_tspec_dtype(&pr->sig.out[i], pr->call.act);
		mtp_tspec_shape(&pr->sig.out[i], &pr->call.dims,
				&pr->outs[i].ndim, pr->outs[i].shape);
	}
	return MTP_OK;
}

/* Compares the two calls' outputs under the block's error budget. */
static bool outputs_agree(const struct probe *a, const struct mtp_tensor *oa,
			  const struct mtp_tensor *ob, char *msg, size_t n)
{
	for (int i = 0; i < a->call.n_out; i++) {
		struct mtp_tol tol;
		struct mtp_cmp cmp;

		mtp_tol_for(&a->call, a->sig.out[i].name, oa[i].dtype, NULL,
			    &tol);
		mtp_compare(a->sig.out[i].name, &oa[i], &ob[i], &tol, false,
			    &cmp);
		if (!cmp.passed) {
			snprintf(msg, n,
				 "block output '%s' differs with and without "
				 "the optional state (normwise %.3g)",
				 cmp.name, cmp.rel_norm);
			return false;
		}
	}
	return true;
}

static bool check_contract(struct mtp_backend *be, const struct mtp_case *c,
			   enum mtp_contract k, char *msg, size_t n)
{
	struct probe *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct mtp_tensor oa[8] = {0}, ob[8] = {0};
	bool ok = true;
	enum mtp_status sa, sb;
	char why_a[MTP_BACKEND_ERR_MAX] = "";

	if (!a || !b || probe_build(a, c, false, k) ||
	    probe_build(b, c, true, k) || !mtp_backend_supports(be, &a->call) ||
	    a->call.n_out > 8)
		goto out; /* cannot be probed: the rule does not apply */
	be->error[0] = 0;
	sa = mtp_backend_execute(be, &a->call, oa);
	snprintf(why_a, sizeof(why_a), "%s", be->error);
	sb = mtp_backend_execute(be, &b->call, ob);
	if (sa && !sb) {
		snprintf(msg, n,
			 "the block fails when called without "
			 "post_mix/res_mix/residual "
			 "(%s contract) but works with them: %s",
			 k == MTP_CONTRACT_DEFERRED ? "deferred" : "internal",
			 why_a);
		ok = false;
	} else if (!sa && !sb) {
		ok = outputs_agree(a, oa, ob, msg, n);
	}
	for (int i = 0; i < 8; i++) {
		mtp_tensor_fini(&oa[i]);
		mtp_tensor_fini(&ob[i]);
	}
out:
	if (a)
		probe_fini(a);
	if (b)
		probe_fini(b);
	free(a);
	free(b);
	return ok;
}

bool mtp_rule_block_contract(struct mtp_backend *be, const struct mtp_case *c,
			     char *msg, size_t n)
{
	if (!check_contract(be, c, MTP_CONTRACT_DEFERRED, msg, n))
		return false;
	if (!mtp_family_mhc(c->family))
		return true; /* the V3 block has one contract */
	return check_contract(be, c, MTP_CONTRACT_INTERNAL, msg, n);
}
