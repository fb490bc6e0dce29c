/*
 * What a finished run owns, freed: its results, its devices and the bench
 * history that `report` merged in (results/merge_bench.c). Apart from
 * runner.c so that the runner stays one screenful of control flow.
 */
#include <stdlib.h>
#include <string.h>

#include "mtp/bench.h"
#include "mtp/runner.h"

void mtp_bench_point_fini(struct mtp_bench_point *p)
{
	free(p->samples);
	free(p->prediction);
	free(p->reason);
}

/* The bench history that `report` merged in. */
void mtp_bench_history_free(struct mtp_bench_history *h)
{
	if (!h)
		return;
	for (int i = 0; i < h->n_points; i++)
		mtp_bench_point_fini(&h->points[i]);
	for (int k = 0; k < h->n_nights; k++) {
		struct mtp_bench_record *r = &h->nights[k].rec;
		char **f[] = {&r->section, &r->title,	   &r->date,
			      &r->variant, &r->machine,	   &r->commit,
			      &r->command, &r->prediction, &r->reason,
			      &r->notes};

		for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
			free(*f[i]);
	}
	free(h->points);
	free(h->nights);
	free(h);
}

void mtp_run_fini(struct mtp_run *run)
{
	for (int i = 0; i < run->n; i++)
		free(run->results[i].cmp);
	free(run->results);
	free(run->devices);
	mtp_bench_history_free(run->bench);
	memset(run, 0, sizeof(*run));
}
