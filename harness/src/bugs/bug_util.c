/*
 * What the bug rows share: the kind of call (step, chain, mHC family), the
 * inputs they act on (heads, block scales, another layer's twin, a
 * tensor-parallel call's partials) and the allocation of an edited input.
 */
#include "bugs.h"

#include <stdio.h>
#include <string.h>

#include "mtp/diagnose.h"

bool mtp_bug_is_chain(const struct mtp_call *c)
{
	return c->op->id == MTP_OP_DRAFT_CHAIN;
}

bool mtp_bug_is_step(const struct mtp_call *c)
{
	return c->op->id == MTP_OP_MTP_STEP || mtp_bug_is_chain(c);
}

bool mtp_bug_mhc(const struct mtp_call *c)
{
	return mtp_family_mhc(c->params->family);
}

bool mtp_bug_present(const struct mtp_call *c, const char *name)
{
	int i = mtp_call_in_index(c, name);

	return i >= 0 && c->in[i].data;
}

const char *mtp_bug_base(const char *name)
{
	const char *slash = strrchr(name, '/');

	return slash ? slash + 1 : name;
}

bool mtp_bug_ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && strcmp(s + a - b, suffix) == 0;
}

bool mtp_bug_is_head(const struct mtp_call *c, int i)
{
	const char *b = mtp_bug_base(c->sig->in[i].name);

	return strcmp(b, "head_weight") == 0 ||
	       (c->op->id == MTP_OP_LM_HEAD && strcmp(b, "weight") == 0);
}

bool mtp_bug_is_head_scale(const struct mtp_call *c, int i)
{
	const char *b = mtp_bug_base(c->sig->in[i].name);

	return strcmp(b, "head_scale_inv") == 0 ||
	       (c->op->id == MTP_OP_LM_HEAD &&
		strcmp(b, "weight_scale_inv") == 0);
}

bool mtp_bug_has_scales(const struct mtp_call *c, bool square)
{
	for (int i = 0; i < c->n_in; i++)
		if (c->in[i].data &&
		    mtp_bug_ends_with(c->sig->in[i].name, "scale_inv") &&
		    (!square || (c->in[i].ndim == 2 &&
				 c->in[i].shape[0] == c->in[i].shape[1])))
			return true;
	return false;
}

int mtp_bug_other_layer(const struct mtp_call *c, int i)
{
	const char *name = c->sig->in[i].name;
	long long l;
	int off = 0, j;
	char other[MTP_NAME_MAX];

	if (sscanf(name, "layer.%lld/%n", &l, &off) != 1 || off == 0)
		return i;
	snprintf(other, sizeof(other), "layer.%lld/%s",
		 (l + 1) % c->params->num_layers, name + off);
	j = mtp_call_in_index(c, other);
	if (j < 0 || !c->in[j].data ||
	    !mtp_tensor_same_shape(&c->in[j], &c->in[i]))
		return i;
	return j;
}

enum mtp_status mtp_bug_own(struct mtp_bug_edit *e, int i, enum mtp_dtype dt)
{
	const struct mtp_tensor *t = &e->c->in[i];
	enum mtp_status st =
		mtp_tensor_alloc(&e->own[i], dt, t->ndim, t->shape);

	if (!st)
		e->in[i] = e->own[i];
	return st;
}

bool mtp_call_has_zero_position(const struct mtp_call *c)
{
	int i = mtp_call_in_index(c, "positions");
	const struct mtp_tensor *t = i < 0 ? NULL : &c->in[i];

	for (int64_t k = 0; t && t->data && k < mtp_tensor_numel(t); k++)
		if (mtp_load(t->dtype, t->data, (size_t)k) == 0)
			return true;
	return false;
}

int mtp_bug_tp_parts(const struct mtp_call *c)
{
	return mtp_call_in_index(c, c->op->id == MTP_OP_ALL_REDUCE
					    ? "parts"
					    : "block_out_parts");
}

void mtp_bug_tp_view(struct mtp_bug_tp *t, const struct mtp_bug_tp_ops *ops,
		     const struct mtp_call *c, const double *x)
{
	int i = mtp_bug_tp_parts(c);

	t->ops = ops;
	t->c = c;
	t->rank = c->params->tp.rank;
	t->np = c->dims.p;
	t->n = i >= 0 && t->np > 0 ? mtp_tensor_numel(&c->in[i]) / t->np : 0;
	t->x = x;
}
