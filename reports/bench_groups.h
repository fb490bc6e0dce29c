/* Internal to the reports: the bench history's points grouped for its
 * table and its device list (bench_groups.c), in n log n. */
#ifndef MTP_BENCH_GROUPS_H
#define MTP_BENCH_GROUPS_H

#include <stdbool.h>

#include "mtp/bench.h"

/* The rows of the history table: one per op, shape and backend@host, in
 * the order each first appears; row r's points are sorted[start[r]] on,
 * count[r] of them, in the order given. */
struct mtp_bench_groups {
	int n;
	const struct mtp_bench_point **sorted;
	int *start, *count;
};

/* Groups the points of h; false when out of memory (g then empty). */
bool mtp_bench_groups_init(struct mtp_bench_groups *g,
			   const struct mtp_bench_history *h);
void mtp_bench_groups_fini(struct mtp_bench_groups *g);
/* Row r's point on every night (index into h->points), or -1: the first
 * of the night where a night has it twice. */
void mtp_bench_groups_nights(const struct mtp_bench_groups *g, int r,
			     const struct mtp_bench_history *h, int *at);

/* The device lines to list: per backend@host (in the order each first
 * appears) each device line it recorded, in the order each first appears,
 * as the index of the point that first shows it; their number in *n, or
 * NULL when out of memory (malloc'ed). */
int *mtp_bench_device_lines(const struct mtp_bench_history *h, int *n);

#endif
