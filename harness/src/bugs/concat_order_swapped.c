/*
 * CONCAT_ORDER_SWAPPED (SPEC.md §12.4): the fused input concatenated as
 * [hidden, embedding] instead of [embedding, hidden] before eh_proj
 * (mlx-lm #1469, about 0 % draft agreement). eh_proj(cat(h, e)) with
 * weight W [H, 2H] is eh_proj(cat(e, h)) with W's two column halves
 * swapped, so the change is that swap, on every eh_proj weight of the call
 * (each layer's) and on its block scale, whose halves are whole blocks
 * when H is a multiple of the block: on a float8 projection whose H is
 * not, the swap is no weight edit, and neither the judge nor the mutant
 * tries it. The mHC families project e and h separately: no concatenation
 * to swap.
 */
#include "bugs.h"

#include <string.h>

#include "mtp/ref.h"

static bool is_eh_proj(const struct mtp_call *c, int i)
{
	const char *b = mtp_bug_base(c->sig->in[i].name);

	return strcmp(b, "eh_proj_weight") == 0 ||
	       strcmp(b, "eh_proj_scale_inv") == 0;
}

/* Whether input i can be swapped: 2-D, an even number of columns, and a
 * block scale's halves whole blocks. */
static bool swappable(const struct mtp_call *c, int i)
{
	const struct mtp_tensor *t = &c->in[i];

	if (mtp_bug_ends_with(c->sig->in[i].name, "scale_inv") &&
	    c->dims.h % MTP_QUANT_BLOCK)
		return false;
	return t->data && t->ndim == 2 && t->shape[1] % 2 == 0;
}

/* Every eh_proj input of the call can be swapped (and there is one). */
static bool swappable_all(const struct mtp_call *c)
{
	bool any = false;

	for (int i = 0; i < c->n_in; i++) {
		if (!c->in[i].data || !is_eh_proj(c, i))
			continue;
		if (!swappable(c, i))
			return false;
		any = true;
	}
	return any;
}

static bool applies(const struct mtp_call *c)
{
	return mtp_bug_is_step(c) && !mtp_bug_mhc(c) && swappable_all(c);
}

static enum mtp_status swap_halves(struct mtp_bug_edit *e, int i)
{
	const struct mtp_tensor *t = &e->c->in[i];
	size_t sz = mtp_dtype_size(t->dtype);
	size_t half = (size_t)(t->shape[1] / 2) * sz, row = 2 * half;
	enum mtp_status st = mtp_bug_own(e, i, t->dtype);

	for (int64_t r = 0; !st && r < t->shape[0]; r++) {
		const unsigned char *src =
			(const unsigned char *)t->data + (size_t)r * row;
		unsigned char *dst =
			(unsigned char *)e->own[i].data + (size_t)r * row;

		memcpy(dst, src + half, half);
		memcpy(dst + half, src, half);
	}
	return st;
}

static enum mtp_status edit(struct mtp_bug_edit *e)
{
	enum mtp_status st = MTP_OK;

	if (!swappable_all(e->c)) /* a weight and its scale, or nothing */
		return MTP_OK;
	for (int i = 0; !st && i < e->c->n_in; i++)
		if (e->c->in[i].data && is_eh_proj(e->c, i))
			st = swap_halves(e, i);
	return st;
}

const struct mtp_bug_class mtp_bug_concat_order_swapped = {
	.name = "CONCAT_ORDER_SWAPPED",
	.section = "§12.4",
	.history = "eh_proj input concatenated as [hidden, embedding] instead "
		   "of [embedding, hidden] (mlx-lm #1469: about 0 % agreement)",
	.applies_to = "mtp_step, draft_chain of families with eh_proj",
	.shows_in = "every output of every step (block input onward)",
	.flags = MTP_BUG_NUMERIC | MTP_BUG_MUTANT,
	.applies = applies,
	.edit = edit,
};
