/*
 * QUANT_SCALE_DROPPED and its variants (SPEC.md §12.2, §12.4): an FP8
 * projection used with the wrong block scales. The change: every block
 * scale of the call (a float32 copy) replaced by ones, its reciprocal, its
 * transpose (square scale matrices only: the one shape where a transpose
 * is a different bug than none) or layer (l+1) mod L's.
 */
#include "bugs.h"

enum variant { DROPPED, RECIPROCAL, TRANSPOSED, OTHER_LAYER };

static bool any(const struct mtp_call *c)
{
	return mtp_bug_has_scales(c, false);
}

static bool square(const struct mtp_call *c)
{
	return mtp_bug_has_scales(c, true);
}

static bool other_applies(const struct mtp_call *c)
{
	return mtp_bug_has_scales(c, false) && mtp_bug_is_chain(c) &&
	       c->params->num_layers >= 2;
}

/* Scale input i as variant v has it, in e->own[i] (float32). */
static enum mtp_status wrong_scale(struct mtp_bug_edit *e, int i,
				   enum variant v)
{
	const struct mtp_call *c = e->c;
	const struct mtp_tensor *s = &c->in[i];
	const struct mtp_tensor *src =
		&c->in[v == OTHER_LAYER ? mtp_bug_other_layer(c, i) : i];
	int64_t rows = s->shape[0], cols = s->ndim > 1 ? s->shape[1] : 1;
	enum mtp_status st = mtp_bug_own(e, i, MTP_F32);

	for (int64_t r = 0; !st && r < rows; r++) {
		for (int64_t k = 0; k < cols; k++) {
			int64_t at = v == TRANSPOSED && rows == cols
					     ? k * cols + r
					     : r * cols + k;
			double x = mtp_load(src->dtype, src->data, (size_t)at);

			x = v == DROPPED ? 1.0 : v == RECIPROCAL ? 1.0 / x : x;
			mtp_store(MTP_F32, e->own[i].data,
				  (size_t)(r * cols + k), x);
		}
	}
	return st;
}

static enum mtp_status change(struct mtp_bug_edit *e, enum variant v)
{
	enum mtp_status st = MTP_OK;

	for (int i = 0; !st && i < e->c->n_in; i++)
		if (e->c->in[i].data &&
		    mtp_bug_ends_with(e->c->sig->in[i].name, "scale_inv"))
			st = wrong_scale(e, i, v);
	return st;
}

static enum mtp_status dropped(struct mtp_bug_edit *e)
{
	return change(e, DROPPED);
}

static enum mtp_status reciprocal(struct mtp_bug_edit *e)
{
	return change(e, RECIPROCAL);
}

static enum mtp_status transposed(struct mtp_bug_edit *e)
{
	return change(e, TRANSPOSED);
}

static enum mtp_status other_layer(struct mtp_bug_edit *e)
{
	return change(e, OTHER_LAYER);
}

#define QS_FLAGS (MTP_BUG_NUMERIC | MTP_BUG_MUTANT)
#define QS_SECTION "§12.2, §12.4"
#define QS_SHOWS "every output after the projection"

const struct mtp_bug_class mtp_bug_quant_scale_dropped = {
	.name = "QUANT_SCALE_DROPPED",
	.section = QS_SECTION,
	.history = "FP8 projection used without its block scale: raw e4m3 "
		   "values as weights (SGLang #32440/#37736; ROCm/ATOM #755)",
	.applies_to = "calls with a block scale (*scale_inv)",
	.shows_in = QS_SHOWS,
	.flags = QS_FLAGS,
	.applies = any,
	.edit = dropped,
};

const struct mtp_bug_class mtp_bug_quant_scale_reciprocal = {
	.name = "QUANT_SCALE_DROPPED.reciprocal",
	.section = QS_SECTION,
	.history = "FP8 projection scaled by 1/scale_inv (weight_scale read as "
		   "weight_scale_inv)",
	.applies_to = "calls with a block scale (*scale_inv)",
	.shows_in = QS_SHOWS,
	.flags = QS_FLAGS,
	.applies = any,
	.edit = reciprocal,
};

const struct mtp_bug_class mtp_bug_quant_scale_transposed = {
	.name = "QUANT_SCALE_DROPPED.transposed",
	.section = QS_SECTION,
	.history = "FP8 projection with its block-scale matrix transposed "
		   "(scale_inv[i/128, o/128])",
	.applies_to = "calls with a square block scale",
	.shows_in = QS_SHOWS,
	.flags = QS_FLAGS,
	.applies = square,
	.edit = transposed,
};

const struct mtp_bug_class mtp_bug_quant_scale_other_layer = {
	.name = "QUANT_SCALE_DROPPED.other_layer",
	.section = QS_SECTION,
	.history = "FP8 projection scaled by another MTP layer's block scales "
		   "(layer (l+1) mod L)",
	.applies_to = "draft_chain with two layers or more and block scales",
	.shows_in = QS_SHOWS,
	.flags = QS_FLAGS,
	.applies = other_applies,
	.edit = other_layer,
};
