/*
 * MISSING_POS0_MASK (SPEC.md Step V3-1, §12.1): the embeddings at position
 * 0 are not zeroed before enorm. The change: every position 0 made 1, so
 * the mask never fires (positions feed nothing else in these ops; a
 * backend's kernels see the same inputs as the reference).
 */
#include "bugs.h"

#include "mtp/diagnose.h"

/* Only against a mask that is due (§12.1): declared pos0_mask = 1 (a
 * captured dump's own attribute too). */
static bool applies(const struct mtp_call *c)
{
	const struct mtp_params *p = c->params;

	if (p->v2.captured && p->v2.pos0_mask != 1)
		return false;
	return mtp_call_has_zero_position(c) &&
	       p->conv.pos0_mask == MTP_POS0_MASKED;
}

static enum mtp_status edit(struct mtp_bug_edit *e)
{
	int i = mtp_call_in_index(e->c, "positions");
	const struct mtp_tensor *src = i < 0 ? NULL : &e->c->in[i];
	enum mtp_status st;

	if (!src || !src->data)
		return MTP_OK;
	st = mtp_bug_own(e, i, src->dtype);
	for (int64_t k = 0; !st && k < mtp_tensor_numel(src); k++) {
		double v = mtp_load(src->dtype, src->data, (size_t)k);

		mtp_store(src->dtype, e->own[i].data, (size_t)k, v ? v : 1);
	}
	return st;
}

const struct mtp_bug_class mtp_bug_missing_pos0_mask = {
	.name = "MISSING_POS0_MASK",
	.section = "Step V3-1",
	.history = "position-0 embeddings not zeroed before enorm",
	.applies_to = "calls with a position 0 under a declared pos0_mask = 1",
	.shows_in = "the rows at position 0 (block input, every output after)",
	.flags = MTP_BUG_NUMERIC | MTP_BUG_MUTANT,
	.applies = applies,
	.edit = edit,
};
