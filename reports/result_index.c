/*
 * The results of a run indexed by fixture file, case and column, for the
 * HTML page: its matrix has a cell per case and column and its trend a
 * verdict per case and night, each a look-up. Looking each one up by
 * scanning every result made a merged report of 100 000 results take hours;
 * one sort (n log n) and a binary search per cell do not.
 */
#include <stdlib.h>
#include <string.h>

#include "result_index.h"

typedef const struct mtp_result *res;

static int by_case(res a, res b)
{
	int c = strcmp(a->file, b->file);

	return c ? c : strcmp(a->case_id, b->case_id);
}

static int by_key(const void *pa, const void *pb)
{
	res a = *(const res *)pa, b = *(const res *)pb;
	int c = by_case(a, b);

	if (!c)
		c = strcmp(a->backend, b->backend);
	return c ? c : (a > b) - (a < b); /* the earlier first */
}

bool mtp_result_index_init(struct mtp_result_index *x,
			   const struct mtp_run *run)
{
	int n = run->n;

	memset(x, 0, sizeof(*x));
	x->run = run;
	x->sorted = malloc((size_t)(n > 0 ? n : 1) * sizeof(*x->sorted));
	x->first = calloc((size_t)(n > 0 ? n : 1), sizeof(*x->first));
	if (!x->sorted || !x->first) {
		mtp_result_index_fini(x);
		x->run = run;
		return false;
	}
	for (int i = 0; i < n; i++)
		x->sorted[i] = &run->results[i];
	qsort(x->sorted, (size_t)n, sizeof(*x->sorted), by_key);
	for (int s = 0, e; s < n; s = e) { /* one file and case */
		res low = x->sorted[s];

		for (e = s + 1; e < n && !by_case(x->sorted[s], x->sorted[e]);
		     e++)
			low = x->sorted[e] < low ? x->sorted[e] : low;
		x->first[low - run->results] = true;
	}
	return true;
}

void mtp_result_index_fini(struct mtp_result_index *x)
{
	free(x->sorted);
	free(x->first);
	memset(x, 0, sizeof(*x));
}

const struct mtp_result *mtp_result_index_find(const struct mtp_result_index *x,
					       const char *file,
					       const char *case_id,
					       const char *backend)
{
	int lo = 0, hi = x->sorted ? x->run->n : 0;

	while (lo < hi) { /* the first not below the key */
		int mid = lo + (hi - lo) / 2;
		res r = x->sorted[mid];
		int c = strcmp(r->file, file);

		if (!c)
			c = strcmp(r->case_id, case_id);
		if (!c)
			c = strcmp(r->backend, backend);
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < (x->sorted ? x->run->n : 0)) {
		res r = x->sorted[lo];

		if (!strcmp(r->file, file) && !strcmp(r->case_id, case_id) &&
		    !strcmp(r->backend, backend))
			return r;
	}
	return NULL;
}

bool mtp_result_index_first(const struct mtp_result_index *x, int i)
{
	return !x->first || x->first[i];
}
