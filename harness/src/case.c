/*
 * Checking one case (from a fixture or built in process) against the op
 * table: its attributes, the inputs' names, shapes and dtypes, and the shapes
 * of the expected outputs. Observed outputs are only checked by name here: a
 * wrong shape there is a failure of the system under test, not a bad file.
 */
#include "mtp/fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int out_index(const struct mtp_signature *sig, const char *name)
{
	for (int i = 0; i < sig->n_out; i++)
		if (strcmp(sig->out[i].name, name) == 0)
			return i;
	return -1;
}

/* The dtype of output spec s: as the op table says, except the logits,
 * whose precision is a convention (§12.1). */
static enum mtp_dtype out_dtype(const struct mtp_tspec *s, enum mtp_dtype act,
				const struct mtp_params *p)
{
	if (s->cls == MTP_TC_LOGITS)
		return mtp_conv_logits_dtype(&p->conv);
	return mtp_tspec_dtype(s, act);
}

static bool out_dtype_ok(const struct mtp_tspec *s, enum mtp_dtype got,
			 enum mtp_dtype act, const struct mtp_params *p)
{
	if (s->cls == MTP_TC_PARAM)
		return mtp_dtype_is_float(got);
	if (s->cls == MTP_TC_TOKEN)
		return got == MTP_I64 || got == MTP_I32;
	return got == out_dtype(s, act, p);
}

static enum mtp_status check_expected(const struct mtp_case *c,
				      const struct mtp_signature *sig,
				      const struct mtp_dims *dims,
				      enum mtp_dtype act, char *err,
				      size_t errn)
{
	for (int i = 0; i < c->expected.n; i++) {
		const struct mtp_named *e = &c->expected.items[i];
		int k = out_index(sig, e->name);
		struct mtp_tensor want = {0};
		char a[96], b[96];

		if (k < 0) {
			snprintf(err, errn,
				 "expected '%s': not an output of %s", e->name,
				 c->op->name);
			return MTP_ERR_INVALID;
		}
		want.dtype = out_dtype(&sig->out[k], act, &c->params);
		if (!mtp_tspec_shape(&sig->out[k], dims, &want.ndim,
				     want.shape) ||
		    !mtp_tensor_same_shape(&want, &e->t)) {
			snprintf(err, errn,
				 "expected '%s': shape %s, but the op produces "
				 "%s",
				 e->name, mtp_shape_str(&e->t, a, sizeof(a)),
				 mtp_shape_str(&want, b, sizeof(b)));
			return MTP_ERR_INVALID;
		}
		if (!out_dtype_ok(&sig->out[k], e->t.dtype, act, &c->params)) {
			snprintf(err, errn,
				 "expected '%s': dtype %s, but the op produces "
				 "%s",
				 e->name, mtp_dtype_name(e->t.dtype),
				 mtp_dtype_name(want.dtype));
			return MTP_ERR_INVALID;
		}
	}
	return MTP_OK;
}

enum mtp_status mtp_case_check(struct mtp_case *c, struct mtp_signature *sig,
			       struct mtp_dims *dims, enum mtp_dtype *act,
			       char *err, size_t errn)
{
	enum mtp_status st;

	st = mtp_params_parse(c->op, c->family, &c->attrs, &c->params, err,
			      errn);
	if (!st)
		st = mtp_subset_check(c, err, errn);
	if (!st)
		st = mtp_conventions_resolve_logits(c, &c->params.conv, err,
						    errn);
	if (!st)
		st = mtp_signature_build(c->op, &c->params, &c->inputs, sig,
					 err, errn);
	if (!st)
		st = mtp_signature_bind(sig, &c->params, &c->inputs, dims, act,
					err, errn);
	if (!st)
		st = check_expected(c, sig, dims, *act, err, errn);
	if (st)
		return st;
	for (int i = 0; i < c->observed.n; i++) {
		if (out_index(sig, c->observed.items[i].name) < 0) {
			snprintf(err, errn,
				 "observed '%s': not an output of %s",
				 c->observed.items[i].name, c->op->name);
			return MTP_ERR_INVALID;
		}
	}
	return MTP_OK;
}

void mtp_case_call_fini(struct mtp_case_call *p)
{
	free(p->call.in);
	if (p->call.out)
		for (int i = 0; i < p->call.n_out; i++)
			mtp_tensor_fini(&p->call.out[i]);
	free(p->call.out);
	free(p->sig);
	memset(p, 0, sizeof(*p));
}

enum mtp_status mtp_case_call_init(struct mtp_case *c, struct mtp_case_call *p,
				   char *err, size_t errn)
{
	enum mtp_status st;

	memset(p, 0, sizeof(*p));
	p->sig = malloc(sizeof(*p->sig));
	if (!p->sig)
		return MTP_ERR_NOMEM;
	st = mtp_case_check(c, p->sig, &p->call.dims, &p->call.act, err, errn);
	if (st)
		return st;
	p->call.op = c->op;
	p->call.params = &c->params;
	p->call.sig = p->sig;
	p->call.n_in = p->sig->n_in;
	p->call.n_out = p->sig->n_out;
	p->call.in =
		calloc((size_t)p->sig->n_in + 1, sizeof(struct mtp_tensor));
	p->call.out =
		calloc((size_t)p->sig->n_out + 1, sizeof(struct mtp_tensor));
	if (!p->call.in || !p->call.out)
		return MTP_ERR_NOMEM;
	for (int i = 0; i < p->sig->n_in; i++) {
		const struct mtp_named *n =
			mtp_list_find(&c->inputs, p->sig->in[i].name);

		if (n)
			p->call.in[i] =
				n->t; /* a view: the case owns the data */
	}
	for (int i = 0; i < p->sig->n_out; i++) {
		struct mtp_tensor *t = &p->call.out[i];

		t->dtype = out_dtype(&p->sig->out[i], p->call.act, &c->params);
		mtp_tspec_shape(&p->sig->out[i], &p->call.dims, &t->ndim,
				t->shape);
	}
	return MTP_OK;
}
