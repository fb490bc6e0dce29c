/*
 * The all-reduce classes (SPEC.md §8.8, Step V3-8): under tensor
 * parallelism a rank's partial is never reduced, reduced twice, replaced by
 * a multiplication by the world size, or reduced after the final norm. Each
 * is a wrong sum of the same partials, so each row's change is `partials`:
 * the partials the buggy engine reduced, and for AFTER_NORM what it did
 * after, through struct mtp_bug_tp_ops (the reference's in
 * judge/diag_tp.c, the mutant's in backends/mutant_tp.c).
 */
#include "bugs.h"

#include <stdlib.h>

/* Rank tp_rank of an all_reduce or of a tensor-parallel captured mtp_step
 * with its partials, P >= 2. */
static bool tp_applies(const struct mtp_call *c)
{
	bool step = c->op->id == MTP_OP_MTP_STEP && c->params->tp.step;
	int i = mtp_bug_tp_parts(c);

	return (step || c->op->id == MTP_OP_ALL_REDUCE) && i >= 0 &&
	       c->in[i].data && c->dims.p >= 2;
}

static bool tp_step_applies(const struct mtp_call *c)
{
	return tp_applies(c) && c->op->id == MTP_OP_MTP_STEP;
}

/* parts <- [scale * x_q, 0, ..., 0] (adding zeros is exact in every
 * order). */
static void alone(const struct mtp_bug_tp *t, int64_t q, double scale,
		  double *parts)
{
	for (int64_t i = 0; i < t->np * t->n; i++)
		parts[i] = i < t->n ? scale * t->x[q * t->n + i] : 0;
}

static double *parts_new(const struct mtp_bug_tp *t, int64_t extra)
{
	return malloc((size_t)(t->np * t->n + extra) * sizeof(double) + 8);
}

/* The rank's own partial alone, times `scale`. */
static enum mtp_status own_partial(const struct mtp_bug_tp *t, double scale)
{
	double *parts = parts_new(t, 0);
	enum mtp_status st = parts ? MTP_OK : MTP_ERR_NOMEM;

	if (!st) {
		alone(t, t->rank, scale, parts);
		st = t->ops->run(t, parts);
	}
	free(parts);
	return st;
}

static enum mtp_status missing(const struct mtp_bug_tp *t)
{
	return own_partial(t, 1.0);
}

static enum mtp_status scaled(const struct mtp_bug_tp *t)
{
	return own_partial(t, (double)t->np);
}

/* P copies of the reduced partials, reduced again. */
static enum mtp_status twice(const struct mtp_bug_tp *t)
{
	double *parts = parts_new(t, 0);
	enum mtp_status st =
		parts ? t->ops->reduce(t, t->x, parts) : MTP_ERR_NOMEM;

	for (int64_t i = t->n; !st && i < t->np * t->n; i++)
		parts[i] = parts[i % t->n];
	if (!st)
		st = t->ops->run(t, parts);
	free(parts);
	return st;
}

/* Every rank's add and final norm on its own partial (rank p's run last:
 * its pre-norm sum stays as hidden_pre), the norms reduced into
 * hidden_post and recycled, and the head on that. */
static enum mtp_status after_norm(const struct mtp_bug_tp *t)
{
	double *parts = parts_new(t, t->np * t->n + t->n);
	double *norms = parts + t->np * t->n, *z = norms + t->np * t->n;
	enum mtp_status st = parts ? MTP_OK : MTP_ERR_NOMEM;

	for (int64_t k = 1; !st && k <= t->np; k++) {
		int64_t q = (t->rank + k) % t->np;

		alone(t, q, 1.0, parts);
		st = t->ops->run(t, parts);
		if (!st)
			st = t->ops->get(t, "hidden_post", norms + q * t->n);
	}
	if (!st)
		st = t->ops->reduce(t, norms, z);
	if (!st)
		st = t->ops->put(t, "hidden_post", z);
	if (!st)
		st = t->ops->put(t, "recycled", z);
	if (!st)
		st = t->ops->head(t, z);
	free(parts);
	return st;
}

#define TP_ROW(id_name, text, shows, where, change)                            \
	{                                                                      \
		.name = id_name, .section = "§8.8, Step V3-8",                 \
		.history = text,                                               \
		.applies_to = "rank tp_rank of an all_reduce or of a "         \
			      "tensor-parallel captured mtp_step, P >= 2",     \
		.shows_in = shows, .flags = MTP_BUG_NUMERIC | MTP_BUG_MUTANT,  \
		.applies = where, .partials = change,                          \
	}

const struct mtp_bug_class mtp_bug_allreduce_missing =
	TP_ROW("ALLREDUCE_MISSING",
	       "a rank's partial never all-reduced: the output is its own "
	       "partial (TRT-LLM #16617, draft MoE under plain TP; acceptance "
	       "about halved)",
	       "every output after the reduction point", tp_applies, missing);
const struct mtp_bug_class mtp_bug_allreduce_twice =
	TP_ROW("ALLREDUCE_TWICE",
	       "an already-reduced tensor all-reduced again: P times the sum "
	       "(ROCm/ATOM #1764, 2.94 -> 2.08 tokens per forward)",
	       "every output after the reduction point", tp_applies, twice);
const struct mtp_bug_class mtp_bug_allreduce_scaled =
	TP_ROW("ALLREDUCE_SCALED",
	       "the all-reduce replaced by a multiplication by the world size "
	       "(vLLM #48763, caught in review)",
	       "every output after the reduction point", tp_applies, scaled);
const struct mtp_bug_class mtp_bug_allreduce_after_norm =
	TP_ROW("ALLREDUCE_AFTER_NORM",
	       "the all-reduce moved past the final norm: logits right up to "
	       "scale, the pre-norm and recycled hidden wrong",
	       "hidden_pre and recycled (the logits only up to scale)",
	       tp_step_applies, after_norm);
