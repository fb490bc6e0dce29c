/*
 * The bench history's points grouped for the report page (bench_history.c):
 * the table's rows (one per op, shape and backend@host) and the device
 * lines of each backend@host. A history of 100 000 rows over a few nights
 * is a report CI may well make, so the groups are found by sorting pointers
 * (n log n) and never by comparing each point with every other one, which
 * took minutes there.
 */
#include <stdlib.h>
#include <string.h>

#include "bench_groups.h"

typedef const struct mtp_bench_point *pt;

static int by_address(pt a, pt b)
{
	return (a > b) - (a < b); /* the points lie in the order given */
}

static int key_of(pt a, pt b)
{
	int c = strcmp(a->row.op, b->row.op);

	if (!c)
		c = strcmp(a->row.shape, b->row.shape);
	return c ? c : strcmp(a->row.backend, b->row.backend);
}

static int by_key(const void *pa, const void *pb)
{
	pt a = *(const pt *)pa, b = *(const pt *)pb;
	int c = key_of(a, b);

	return c ? c : by_address(a, b);
}

static int by_backend_device(const void *pa, const void *pb)
{
	pt a = *(const pt *)pa, b = *(const pt *)pb;
	int c = strcmp(a->row.backend, b->row.backend);

	if (!c)
		c = strcmp(a->device, b->device);
	return c ? c : by_address(a, b);
}

/* The points of h, sorted by cmp (malloc'ed), or NULL. */
static pt *sorted(const struct mtp_bench_history *h,
		  int (*cmp)(const void *, const void *))
{
	pt *p = malloc((size_t)(h->n_points > 0 ? h->n_points : 1) *
		       sizeof(*p));

	if (!p)
		return NULL;
	for (int i = 0; i < h->n_points; i++)
		p[i] = &h->points[i];
	qsort(p, (size_t)h->n_points, sizeof(*p), cmp);
	return p;
}

/* Pairs sorted by their first member, then the second. */
struct pair {
	int a, b;
};

static int by_pair(const void *pa, const void *pb)
{
	const struct pair *x = pa, *y = pb;
	int c = (x->a > y->a) - (x->a < y->a);

	return c ? c : (x->b > y->b) - (x->b < y->b);
}

/* The rows in the order their first points lie (the first member of a
 * row, sorted by address, is its first point). */
static bool order_rows(struct mtp_bench_groups *g,
		       const struct mtp_bench_history *h)
{
	struct pair *v = malloc((size_t)(g->n > 0 ? g->n : 1) * sizeof(*v));

	if (!v) {
		mtp_bench_groups_fini(g);
		return false;
	}
	for (int r = 0; r < g->n; r++)
		v[r] = (struct pair){(int)(g->sorted[g->start[r]] - h->points),
				     r};
	qsort(v, (size_t)g->n, sizeof(*v), by_pair);
	for (int r = 0; r < g->n; r++) { /* start, count by the new order */
		int i = v[r].b;

		v[r].a = g->start[i];
		v[r].b = g->count[i];
	}
	for (int r = 0; r < g->n; r++) {
		g->start[r] = v[r].a;
		g->count[r] = v[r].b;
	}
	free(v);
	return true;
}

bool mtp_bench_groups_init(struct mtp_bench_groups *g,
			   const struct mtp_bench_history *h)
{
	int n = h->n_points;

	memset(g, 0, sizeof(*g));
	g->sorted = sorted(h, by_key);
	g->start = malloc((size_t)(n > 0 ? n : 1) * sizeof(*g->start));
	g->count = malloc((size_t)(n > 0 ? n : 1) * sizeof(*g->count));
	if (!g->sorted || !g->start || !g->count) {
		mtp_bench_groups_fini(g);
		return false;
	}
	for (int i = 0; i < n; i++)
		if (!i || key_of(g->sorted[i - 1], g->sorted[i]))
			g->start[g->n++] = i;
	for (int r = 0; r < g->n; r++)
		g->count[r] =
			(r + 1 < g->n ? g->start[r + 1] : n) - g->start[r];
	return order_rows(g, h);
}

void mtp_bench_groups_fini(struct mtp_bench_groups *g)
{
	free(g->sorted);
	free(g->start);
	free(g->count);
	memset(g, 0, sizeof(*g));
}

void mtp_bench_groups_nights(const struct mtp_bench_groups *g, int r,
			     const struct mtp_bench_history *h, int *at)
{
	for (int k = 0; k < h->n_nights; k++)
		at[k] = -1;
	for (int i = g->start[r]; i < g->start[r] + g->count[r]; i++) {
		pt q = g->sorted[i];

		if (at[q->night] < 0)
			at[q->night] = (int)(q - h->points);
	}
}

int *mtp_bench_device_lines(const struct mtp_bench_history *h, int *n)
{
	pt *p = sorted(h, by_backend_device);
	struct pair *v = malloc((size_t)(h->n_points + 1) * sizeof(*v));
	int *lines = malloc((size_t)(h->n_points + 1) * sizeof(*lines));

	*n = 0;
	if (!p || !v || !lines) {
		free(lines);
		lines = NULL;
		goto out;
	}
	for (int s = 0, e; s < h->n_points; s = e) { /* one backend@host */
		int low = h->n_points;

		for (e = s; e < h->n_points &&
			    !strcmp(p[e]->row.backend, p[s]->row.backend);
		     e++)
			low = (int)(p[e] - h->points) < low
				      ? (int)(p[e] - h->points)
				      : low;
		for (int i = s; i < e; i++) /* the first of each device */
			if (i == s || strcmp(p[i - 1]->device, p[i]->device))
				v[(*n)++] = (struct pair){
					low, (int)(p[i] - h->points)};
	}
	qsort(v, (size_t)*n, sizeof(*v), by_pair);
	for (int i = 0; i < *n; i++)
		lines[i] = v[i].b;
out:
	free(p);
	free(v);
	return lines;
}
