/*
 * SHARED_HEAD_UNINIT from a dump's parameters alone (mtp/diagnose.h
 * mtp_weights_suspect): head and embedding weights that hold NaN/Inf, zero
 * or constant rows, or the spread of uninitialised memory read as floats.
 */
#include "mtp/diagnose.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bugs/bugs.h"

/* Whether the rule looks at w: a head or embedding weight, in memory. */
static bool checked_weight(const struct mtp_named *w)
{
	const char *b = mtp_bug_base(w->name);

	return w->t.data && w->t.ndim == 2 &&
	       (mtp_dtype_is_float(w->t.dtype) ||
		mtp_dtype_is_fp8(w->t.dtype)) &&
	       (strcmp(b, "head_weight") == 0 ||
		strcmp(b, "embed_table") == 0 ||
		strcmp(w->name, "weight") == 0);
}

struct wstats {
	int64_t rows, zero_rows, const_rows, nonzero, wild, special;
};

static void weight_stats(const struct mtp_tensor *t, struct wstats *s)
{
	int64_t n = mtp_tensor_numel(t);
	int64_t cols = t->ndim > 1 ? t->shape[t->ndim - 1] : n;

	memset(s, 0, sizeof(*s));
	s->rows = cols ? n / cols : 0;
	for (int64_t r = 0; r < s->rows; r++) {
		double first = mtp_load(t->dtype, t->data, (size_t)(r * cols));
		bool zero = true, same = true;

		for (int64_t k = 0; k < cols; k++) {
			double v = mtp_load(t->dtype, t->data,
					    (size_t)(r * cols + k));

			if (!isfinite(v)) {
				s->special++;
				continue;
			}
			zero &= v == 0;
			same &= v == first;
			if (v != 0) {
				s->nonzero++;
				s->wild += fabs(v) < 1e-20 || fabs(v) > 1e4;
			}
		}
		s->zero_rows += zero;
		s->const_rows += same && !zero && cols > 1;
	}
}

static bool suspect_one(const struct mtp_named *w, char *why, size_t n)
{
	struct wstats s;

	weight_stats(&w->t, &s);
	if (s.special)
		snprintf(why, n, "'%s' holds %lld NaN/Inf values", w->name,
			 (long long)s.special);
	else if (mtp_dtype_is_fp8(w->t.dtype))
		return false; /* stored e4m3 codes: only NaN means anything */
	else if (s.rows && s.zero_rows == s.rows)
		snprintf(why, n, "'%s' is all zeros", w->name);
	else if (s.zero_rows * 100 >= s.rows && s.zero_rows)
		snprintf(why, n, "'%s': %lld of %lld rows are all zeros",
			 w->name, (long long)s.zero_rows, (long long)s.rows);
	else if (s.const_rows * 100 >= s.rows && s.const_rows)
		snprintf(why, n, "'%s': %lld of %lld rows are constant",
			 w->name, (long long)s.const_rows, (long long)s.rows);
	else if (s.wild * 1000 >= s.nonzero && s.wild)
		snprintf(why, n,
			 "'%s': %lld of %lld non-zero values have magnitudes "
			 "outside [1e-20, 1e4] (uninitialised memory?)",
			 w->name, (long long)s.wild, (long long)s.nonzero);
	else
		return false;
	return true;
}

bool mtp_weights_suspect(const struct mtp_tensor_list *inputs, char *why,
			 size_t n)
{
	for (int i = 0; i < inputs->n; i++) {
		const struct mtp_named *w = &inputs->items[i];

		if (checked_weight(w) && suspect_one(w, why, n))
			return true;
	}
	return false;
}

int64_t mtp_weights_checked(const struct mtp_tensor_list *inputs)
{
	int64_t n = 0;

	for (int i = 0; i < inputs->n; i++)
		if (checked_weight(&inputs->items[i]))
			n += mtp_tensor_numel(&inputs->items[i].t);
	return n;
}
