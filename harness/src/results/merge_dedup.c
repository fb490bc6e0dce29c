/*
 * What two inputs of `mtpcheck report` both hold is counted once: a result
 * of the same column (backend@host of one run), fixture file and case (the
 * same run given twice, or a merged report beside the files it merged),
 * and a bench row that its night has already (a bench file given twice).
 * Found by sorting pointers (n log n: a report over 100 000 rows must not
 * compare every pair); the first of each kept, in the order given.
 */
#include <stdlib.h>
#include <string.h>

#include "merge_int.h"
#include "mtp/bench.h"

/* The keys (a pointer to a pointer to each element, as qsort hands them),
 * and the order to sort by: the key, then the address (the earlier first,
 * as the elements lie in the order given). */
static int result_key(const void *pa, const void *pb)
{
	const struct mtp_result *a = *(const struct mtp_result *const *)pa;
	const struct mtp_result *b = *(const struct mtp_result *const *)pb;
	int c = strcmp(a->backend, b->backend);

	if (!c)
		c = strcmp(a->file, b->file);
	return c ? c : strcmp(a->case_id, b->case_id);
}

static int point_key(const void *pa, const void *pb)
{
	const struct mtp_bench_point *a =
		*(const struct mtp_bench_point *const *)pa;
	const struct mtp_bench_point *b =
		*(const struct mtp_bench_point *const *)pb;
	int c = (a->night > b->night) - (a->night < b->night);

	if (!c)
		c = strcmp(a->row.op, b->row.op);
	if (!c)
		c = strcmp(a->row.shape, b->row.shape);
	return c ? c : strcmp(a->row.backend, b->row.backend);
}

static int by_address(const void *pa, const void *pb)
{
	const char *a = *(const char *const *)pa, *b = *(const char *const *)pb;

	return (a > b) - (a < b);
}

static int result_order(const void *a, const void *b)
{
	int c = result_key(a, b);

	return c ? c : by_address(a, b);
}

static int point_order(const void *a, const void *b)
{
	int c = point_key(a, b);

	return c ? c : by_address(a, b);
}

/* Flags (malloc'ed, one per element of the n at base, each size bytes)
 * set on every element whose key an earlier one has; NULL when out of
 * memory. */
static bool *repeats(void *base, size_t size, int n,
		     int (*key)(const void *, const void *),
		     int (*order)(const void *, const void *))
{
	const char **p = malloc((size_t)(n > 0 ? n : 1) * sizeof(*p));
	bool *drop = calloc((size_t)(n > 0 ? n : 1), sizeof(*drop));

	if (!p || !drop) {
		free(p);
		free(drop);
		return NULL;
	}
	for (int i = 0; i < n; i++)
		p[i] = (const char *)base + (size_t)i * size;
	qsort(p, (size_t)n, sizeof(*p), order);
	for (int i = 1; i < n; i++)
		if (!key(&p[i - 1], &p[i]))
			drop[(size_t)(p[i] - (const char *)base) / size] = true;
	free(p);
	return drop;
}

int mtp_merge_drop_repeats(struct mtp_run *run)
{
	bool *drop = repeats(run->results, sizeof(*run->results), run->n,
			     result_key, result_order);
	int kept = 0, dropped;

	if (!drop)
		return -1;
	memset(run->counts, 0, sizeof(run->counts));
	for (int i = 0; i < run->n; i++) {
		if (drop[i]) {
			free(run->results[i].cmp);
			continue;
		}
		run->results[kept] = run->results[i];
		run->counts[run->results[kept++].verdict]++;
	}
	dropped = run->n - kept;
	run->n = kept;
	free(drop);
	return dropped;
}

bool mtp_merge_drop_bench_repeats(struct mtp_bench_history *h)
{
	bool *drop = repeats(h->points, sizeof(*h->points), h->n_points,
			     point_key, point_order);
	int kept = 0;

	if (!drop)
		return false;
	for (int i = 0; i < h->n_points; i++) {
		if (drop[i])
			mtp_bench_point_fini(&h->points[i]);
		else
			h->points[kept++] = h->points[i];
	}
	h->n_points = kept;
	free(drop);
	return true;
}
