/*
 * Shape rules of the op table ("T,M*H", "2*M+M*M", "K-1,T"): binding the
 * symbols from the inputs a problem gives, checking every input against them,
 * and computing the output shapes. Grammar: dims separated by ',', each a sum
 * or difference of products of integers and the symbols T H M V F R P K L.
 */
#include "mtp/op.h"
#include "mtp/quant.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static int64_t *dim_slot(struct mtp_dims *d, char sym)
{
	switch (sym) {
	case 'T': return &d->t;
	case 'H': return &d->h;
	case 'M': return &d->m;
	case 'V': return &d->v;
	case 'F': return &d->f;
	case 'R': return &d->r;
	case 'P': return &d->p;
	case 'K': return &d->k;
	case 'L': return &d->l;
	case 'C': return &d->c;
	}
	return NULL;
}

/* Evaluates one dim expression [s, e); false if a symbol is unbound. */
static bool eval_dim(const char *s, const char *e, const struct mtp_dims *d,
		     int64_t *out)
{
	int64_t sum = 0, prod = 1;
	int sign = 1;

	for (; s <= e; s++) {
		if (s == e || *s == '+' || *s == '-') {
			sum += sign * prod;
			if (s == e)
				break;
			sign = *s == '-' ? -1 : 1;
			prod = 1;
		} else if (isdigit((unsigned char)*s)) {
			int64_t v = 0;

			while (s < e && isdigit((unsigned char)*s))
				v = v * 10 + (*s++ - '0');
			s--;
			prod *= v;
		} else if (*s != '*') {
			int64_t *slot = dim_slot((struct mtp_dims *)d, *s);

			if (!slot || *slot < 0)
				return false; /* unbound while binding (-1) */
			prod *= *slot;
		}
	}
	*out = sum;
	return true;
}

/* Splits a shape rule into dims; returns the count. */
static int split_dims(const char *rule, const char *starts[],
		      const char *ends[])
{
	int n = 0;
	const char *s = rule;

	if (!*rule)
		return 0;
	while (n < MTP_MAX_DIMS) {
		const char *c = strchr(s, ',');

		starts[n] = s;
		ends[n] = c ? c : s + strlen(s);
		n++;
		if (!c)
			break;
		s = c + 1;
	}
	return n;
}

bool mtp_tspec_shape(const struct mtp_tspec *s, const struct mtp_dims *d,
		     int *ndim, int64_t *shape)
{
	const char *st[MTP_MAX_DIMS], *en[MTP_MAX_DIMS];
	int n = split_dims(s->shape, st, en);

	for (int i = 0; i < n; i++)
		if (!eval_dim(st[i], en[i], d, &shape[i]) || shape[i] < 0)
			return false;
	*ndim = n;
	return true;
}

enum mtp_dtype mtp_tspec_dtype(const struct mtp_tspec *s, enum mtp_dtype act)
{
	switch (s->cls) {
	case MTP_TC_ACT:
	case MTP_TC_QWEIGHT: return act;
	case MTP_TC_PARAM:
	case MTP_TC_QSCALE: return MTP_F32;
	case MTP_TC_LOGITS: return MTP_F32;
	default: return MTP_I64;
	}
}

/* Binds bare-symbol dims of one input; conflicting values are an error. */
static bool bind_input(const struct mtp_tspec *s, const struct mtp_tensor *t,
		       struct mtp_dims *d)
{
	const char *st[MTP_MAX_DIMS], *en[MTP_MAX_DIMS];
	int n = split_dims(s->shape, st, en);

	if (n != t->ndim)
		return false;
	if (s->cls == MTP_TC_QSCALE) /* its dims are ceil(dim / 128) */
		return true;
	for (int i = 0; i < n; i++) {
		if (en[i] - st[i] != 1 || !dim_slot(d, *st[i]))
			continue;
		int64_t *slot = dim_slot(d, *st[i]);

		if (*slot < 0)
			*slot = t->shape[i]; /* T = 0 is a valid, empty batch */
	}
	return true;
}

static bool dtype_ok(const struct mtp_tspec *s, enum mtp_dtype dt,
		     enum mtp_dtype act)
{
	switch (s->cls) {
	case MTP_TC_ACT: return dt == act;
	case MTP_TC_QWEIGHT: return dt == act || dt == MTP_F8E4M3;
	case MTP_TC_QSCALE: return dt == MTP_F32 || dt == MTP_F8E8M0;
	case MTP_TC_PARAM: return mtp_dtype_is_float(dt);
	case MTP_TC_INDEX: return dt == MTP_I64 || dt == MTP_I32;
	default: return true;
	}
}

static enum mtp_dtype find_act(const struct mtp_signature *sig,
			       const struct mtp_tensor_list *inputs)
{
	for (int i = 0; i < sig->n_in; i++) {
		const struct mtp_named *n =
			mtp_list_find(inputs, sig->in[i].name);

		if (sig->in[i].cls == MTP_TC_ACT && n)
			return n->t.dtype;
	}
	return MTP_BF16;
}

static enum mtp_status check_input(const struct mtp_tspec *s,
				   const struct mtp_tensor *t,
				   const struct mtp_dims *d, enum mtp_dtype act,
				   char *err, size_t errn)
{
	int64_t want[MTP_MAX_DIMS];
	int nd;
	char got[96];

	mtp_shape_str(t, got, sizeof(got));
	if (!mtp_tspec_shape(s, d, &nd, want)) {
		snprintf(err, errn,
			 "input '%s': shape %s does not fix the dims of [%s]",
			 s->name, got, s->shape);
		return MTP_ERR_INVALID;
	}
	for (int i = 0; s->cls == MTP_TC_QSCALE && i < nd; i++)
		want[i] = (want[i] + MTP_QUANT_BLOCK - 1) / MTP_QUANT_BLOCK;
	bool same = nd == t->ndim;

	for (int i = 0; same && i < nd; i++)
		same = want[i] == t->shape[i];
	if (!same) {
		snprintf(
			err, errn,
			"input '%s': shape %s breaks the rule [%s]%s", s->name,
			got, s->shape,
			s->cls == MTP_TC_QSCALE
				? " (a block scale: each dim / 128, rounded up)"
				: "");
		return MTP_ERR_INVALID;
	}
	if (!dtype_ok(s, t->dtype, act)) {
		snprintf(err, errn,
			 "input '%s': dtype %s not allowed here (activations "
			 "are %s)",
			 s->name, mtp_dtype_name(t->dtype),
			 mtp_dtype_name(act));
		return MTP_ERR_INVALID;
	}
	return MTP_OK;
}

enum mtp_status mtp_signature_bind(const struct mtp_signature *sig,
				   const struct mtp_params *p,
				   const struct mtp_tensor_list *inputs,
				   struct mtp_dims *dims, enum mtp_dtype *act,
				   char *err, size_t errn)
{
	*dims = (struct mtp_dims){-1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
	if (p->hc_mult > 0) /* V4 steps and blocks: M from the attribute */
		dims->m = p->hc_mult;
	dims->k = p->num_steps;
	dims->l = p->num_layers;
	*act = find_act(sig, inputs);
	if (!mtp_dtype_is_float(*act)) {
		snprintf(err, errn, "activations must be a float dtype, not %s",
			 mtp_dtype_name(*act));
		return MTP_ERR_INVALID;
	}
	for (int i = 0; i < inputs->n; i++) {
		int k;

		for (k = 0; k < sig->n_in; k++)
			if (strcmp(sig->in[k].name, inputs->items[i].name) == 0)
				break;
		if (k == sig->n_in) {
			snprintf(err, errn,
				 "input '%s': not an input of this op",
				 inputs->items[i].name);
			return MTP_ERR_INVALID;
		}
	}
	for (int i = 0; i < sig->n_in; i++) {
		const struct mtp_named *n =
			mtp_list_find(inputs, sig->in[i].name);

		if (!n && !sig->in[i].optional) {
			snprintf(err, errn, "input '%s': missing",
				 sig->in[i].name);
			return MTP_ERR_INVALID;
		}
		if (n && !bind_input(&sig->in[i], &n->t, dims)) {
			snprintf(err, errn,
				 "input '%s': has %d dims, the rule [%s] has "
				 "another count",
				 sig->in[i].name, n->t.ndim, sig->in[i].shape);
			return MTP_ERR_INVALID;
		}
	}
	for (int i = 0; i < sig->n_in; i++) {
		const struct mtp_named *n =
			mtp_list_find(inputs, sig->in[i].name);
		enum mtp_status st;

		if (!n)
			continue;
		st = check_input(&sig->in[i], &n->t, dims, *act, err, errn);
		if (st)
			return st;
	}
	int64_t *all[] = {&dims->t, &dims->h, &dims->m, &dims->v, &dims->f,
			  &dims->r, &dims->p, &dims->k, &dims->l, &dims->c};

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		/* an empty batch (T, R or dspark_step's context rows C = 0) is
		 * a case; an empty row, stream, vocabulary or sum is not
		 * (docs/FORMAT.md) */
		if (*all[i] == 0 && all[i] != &dims->t && all[i] != &dims->r &&
		    all[i] != &dims->c) {
			snprintf(err, errn,
				 "%c = 0: only the batch dims T, R and C may "
				 "be 0",
				 "THMVFRPKLC"[i]);
			return MTP_ERR_INVALID;
		}
		if (*all[i] < 0)
			*all[i] = 0; /* symbols the problem does not use */
	}
	return mtp_quant_check(sig, p, inputs, err, errn);
}

/* The axis of shape rule `shape` that is exactly the symbol c, or -1. */
static int axis_of(const char *shape, char c)
{
	const char *starts[MTP_MAX_DIMS], *ends[MTP_MAX_DIMS];
	int n = split_dims(shape, starts, ends);

	for (int i = 0; i < n; i++)
		if (ends[i] - starts[i] == 1 && *starts[i] == c)
			return i;
	return -1;
}

char mtp_sig_batch_dim(const struct mtp_signature *sig)
{
	for (int i = 0; i < sig->n_in; i++)
		if (axis_of(sig->in[i].shape, 'T') >= 0)
			return 'T';
	for (int k = 0; k < sig->n_out; k++)
		if (axis_of(sig->out[k].shape, 'T') >= 0)
			return 'T';
	return 'R';
}

int mtp_tspec_row_axis(const struct mtp_signature *sig,
		       const struct mtp_tspec *s)
{
	return axis_of(s->shape, mtp_sig_batch_dim(sig));
}
