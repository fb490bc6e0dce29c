/*
 * Sub-calls of the mutants: one op call on the base backend built from the
 * op table with the parent call's params and dims, its tensors bound by
 * name, and their scratch tensors, shared by mutant.c (the §8 bugs) and
 * mutant_tp.c (the all-reduce bugs) so that neither calls the other.
 */
#include "mutant_int.h"

#include <stdlib.h>
#include <string.h>

enum mtp_status mtp_mutant_sub_init(struct mtp_subcall *s, enum mtp_op_id op,
				    const struct mtp_call *parent)
{
	char err[256];
	enum mtp_status st;

	memset(s->in, 0, sizeof(s->in));
	memset(s->out, 0, sizeof(s->out));
	st = mtp_signature_build(mtp_op_get(op), parent->params, NULL, &s->sig,
				 err, sizeof(err));
	s->c = *parent;
	s->c.op = mtp_op_get(op);
	s->c.sig = &s->sig;
	s->c.n_in = s->sig.n_in;
	s->c.n_out = s->sig.n_out;
	s->c.in = s->in;
	s->c.out = s->out;
	s->c.dims.r = parent->dims.t;
	return st;
}

void mtp_mutant_sub_set(struct mtp_subcall *s, bool out, const char *name,
			const struct mtp_tensor *t)
{
	int i = out ? mtp_call_out_index(&s->c, name)
		    : mtp_call_in_index(&s->c, name);

	if (i >= 0 && t)
		(out ? s->out : s->in)[i] = *t;
}

enum mtp_status mtp_mutant_sub_run(struct mtp_backend *base,
				   struct mtp_subcall *s)
{
	enum mtp_status st = mtp_backend_launch(base, &s->c);

	return st ? st : mtp_backend_synchronize(base);
}

enum mtp_status mtp_mutant_sub(struct mtp_backend *base, enum mtp_op_id op,
			       const struct mtp_call *parent,
			       const struct mtp_sub_bind *b, int n)
{
	struct mtp_subcall *s = malloc(sizeof(*s));
	enum mtp_status st =
		s ? mtp_mutant_sub_init(s, op, parent) : MTP_ERR_NOMEM;

	for (int i = 0; !st && i < n; i++)
		mtp_mutant_sub_set(s, b[i].out, b[i].name, b[i].t);
	if (!st)
		st = mtp_mutant_sub_run(base, s);
	free(s);
	return st;
}

enum mtp_status mtp_mutant_scratch(struct mtp_backend *base,
				   struct mtp_tensor *t, enum mtp_dtype dt,
				   int ndim, const int64_t *shape)
{
	memset(t, 0, sizeof(*t));
	t->dtype = dt;
	t->ndim = ndim;
	memcpy(t->shape, shape, (size_t)ndim * sizeof(int64_t));
	return mtp_backend_alloc(base, mtp_tensor_nbytes(t), &t->data);
}
