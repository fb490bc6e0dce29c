/*
 * Mutants of the bugs seen in the field (SPEC.md §12.2, §12.4), over any
 * base backend: each changes what the base is given (an attribute, some
 * weights, the block scales) or what it returned (ROUNDING_BIAS), never
 * computes anything with the reference.
 *  - SPEC_STEP_LAYER_REUSE: a chain run with pass_step_idx = 0;
 *  - SHARED_HEAD_OVERWRITE: every head_weight replaced by target_head_weight;
 *  - SHARED_HEAD_UNINIT: every head weight all zeros (a fresh allocation);
 *  - QUANT_SCALE_DROPPED[.variant]: every block scale replaced by ones, its
 *    reciprocal, its transpose or layer (l+1) mod L's;
 *  - ROUNDING_BIAS: every bfloat16/float16 output has a hashed half of its
 *    elements moved one ulp toward zero, which is what truncating stores do
 *    to the elements whose dropped bits were at least half an ulp.
 */
#include "mutant_int.h"

#include "judge/judge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool mtp_mutant_field(enum mtp_diag d)
{
	return (d >= MTP_DIAG_SPEC_STEP_LAYER_REUSE &&
		d <= MTP_DIAG_ROUNDING_BIAS) ||
	       mtp_mutant_det(d);
}

/* A device copy of host bytes in a fresh tensor shaped like `like`. */
static enum mtp_status upload_new(struct mtp_backend *base,
				  const struct mtp_tensor *like,
				  enum mtp_dtype dt, const void *host,
				  struct mtp_tensor *t)
{
	enum mtp_status st;

	*t = *like;
	t->dtype = dt;
	t->data = NULL;
	st = mtp_backend_alloc(base, mtp_tensor_nbytes(t), &t->data);
	if (!st)
		st = mtp_backend_upload(base, t->data, host,
					mtp_tensor_nbytes(t));
	return st;
}

/* Scale i as the bug has it, as a new float32 device tensor. */
static enum mtp_status bad_scale(struct mtp_backend *base, enum mtp_diag d,
				 const struct mtp_call *c, int i,
				 struct mtp_tensor *t)
{
	const struct mtp_tensor *s =
		&c->in[d == MTP_DIAG_QUANT_SCALE_OTHER_LAYER
			       ? mtp_field_other_layer(c, i)
			       : i];
	int64_t rows = s->shape[0], cols = s->ndim > 1 ? s->shape[1] : 1;
	size_t n = (size_t)(rows * cols), sz = mtp_dtype_size(s->dtype);
	uint8_t *raw = malloc(n * sz + 1);
	float *v = malloc(n * sizeof(float) + 1);
	enum mtp_status st = raw && v ? MTP_OK : MTP_ERR_NOMEM;

	if (!st)
		st = mtp_backend_download(base, raw, s->data, n * sz);
	for (int64_t r = 0; !st && r < rows; r++) {
		for (int64_t k = 0; k < cols; k++) {
			double x = mtp_load(s->dtype, raw,
					    (size_t)mtp_field_scale_src(
						    d, r, k, rows, cols));

			v[r * cols + k] = (float)mtp_field_scale_value(d, x);
		}
	}
	if (!st)
		st = upload_new(base, &c->in[i], MTP_F32, v, t);
	free(raw);
	free(v);
	return st;
}

/* Replaces the inputs bug d changes; new device tensors go to own[]. */
static enum mtp_status change(struct mtp_backend *base, enum mtp_diag d,
			      const struct mtp_call *c, struct mtp_tensor *in,
			      struct mtp_tensor *own)
{
	int it = mtp_call_in_index(c, "target_head_weight");
	bool overwrite = d == MTP_DIAG_SHARED_HEAD_OVERWRITE && it >= 0 &&
			 c->in[it].data;
	bool new_head = overwrite || d == MTP_DIAG_SHARED_HEAD_UNINIT;
	enum mtp_status st = MTP_OK;

	for (int i = 0; !st && i < c->n_in; i++) {
		const char *b = mtp_field_base(c->sig->in[i].name);

		if (!c->in[i].data)
			continue;
		if (d >= MTP_DIAG_QUANT_SCALE_DROPPED &&
		    d <= MTP_DIAG_QUANT_SCALE_OTHER_LAYER &&
		    mtp_field_ends_with(b, "scale_inv")) {
			st = bad_scale(base, d, c, i, &own[i]);
			in[i] = own[i];
		} else if (overwrite && mtp_field_is_head(c, i)) {
			in[i] = c->in[it];
		} else if (d == MTP_DIAG_SHARED_HEAD_UNINIT &&
			   mtp_field_is_head(c, i)) {
			size_t nb = (size_t)mtp_tensor_numel(&c->in[i]) *
				    mtp_dtype_size(c->act);
			void *zero = calloc(1, nb + 1);

			st = zero ? upload_new(base, &c->in[i], c->act, zero,
					       &own[i])
				  : MTP_ERR_NOMEM;
			in[i] = own[i];
			free(zero);
		} else if (new_head && mtp_field_is_head_scale(c, i)) {
			in[i].data = NULL; /* the head is no longer float8 */
		}
	}
	return st;
}

/* One ulp toward zero for a hashed half of a bf16/f16 output. */
static enum mtp_status truncate_output(struct mtp_backend *base,
				       const struct mtp_tensor *t)
{
	size_t n = (size_t)mtp_tensor_numel(t);
	uint16_t *h;
	enum mtp_status st;

	if (t->dtype != MTP_BF16 && t->dtype != MTP_F16)
		return MTP_OK;
	h = malloc(2 * n + 2);
	if (!h)
		return MTP_ERR_NOMEM;
	st = mtp_backend_download(base, h, t->data, 2 * n);
	for (size_t i = 0; !st && i < n; i++) {
		uint16_t mag = h[i] & 0x7fff;
		uint32_t hash = (uint32_t)i * 2654435761u;
		uint16_t inf = t->dtype == MTP_BF16 ? 0x7f80 : 0x7c00;

		if (mag && mag < inf && (hash >> 31))
			h[i] = (uint16_t)((h[i] & 0x8000) | (mag - 1));
	}
	if (!st)
		st = mtp_backend_upload(base, t->data, h, 2 * n);
	free(h);
	return st;
}

static bool field_applies(enum mtp_diag d, const struct mtp_call *c)
{
	const struct mtp_params *p = c->params;
	enum mtp_op_id op = c->op->id;

	if (d == MTP_DIAG_SPEC_STEP_LAYER_REUSE)
		return op == MTP_OP_DRAFT_CHAIN && p->num_layers >= 2 &&
		       p->pass_step_idx;
	return d != MTP_DIAG_ROUNDING_BIAS;
}

enum mtp_status mtp_mutant_field_launch(struct mtp_backend *base,
					enum mtp_diag d,
					const struct mtp_call *c)
{
	struct mtp_params p = *c->params;
	struct mtp_call mc = *c;
	size_t n = (size_t)c->n_in + 1;
	struct mtp_tensor *in = malloc(n * sizeof(*in));
	struct mtp_tensor *own = calloc(n, sizeof(*own));
	enum mtp_status st = in && own ? MTP_OK : MTP_ERR_NOMEM;

	if (!st && mtp_mutant_det(d)) { /* mutant_det.c */
		free(own);
		free(in);
		return mtp_mutant_det_launch(base, d, c);
	}
	if (!st && field_applies(d, c)) {
		memcpy(in, c->in, (size_t)c->n_in * sizeof(*in));
		p.pass_step_idx = d == MTP_DIAG_SPEC_STEP_LAYER_REUSE
					  ? false
					  : p.pass_step_idx;
		st = change(base, d, c, in, own);
		mc.in = in;
		mc.params = &p;
	}
	if (!st)
		st = mtp_backend_launch(base, &mc);
	if (!st)
		st = mtp_backend_synchronize(base);
	for (int k = 0; !st && d == MTP_DIAG_ROUNDING_BIAS && k < c->n_out; k++)
		st = truncate_output(base, &c->out[k]);
	for (int i = 0; own && i < c->n_in; i++)
		mtp_backend_free(base, own[i].data);
	free(own);
	free(in);
	return st;
}
