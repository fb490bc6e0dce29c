/*
 * The reference's GEMMs over a few threads: a range of independent output
 * elements (or rows) per thread, the threads created and joined inside the
 * call, so that none outlives it (the harness forks its workers without
 * exec). Every element is still computed by one thread in the serial
 * order, so no result depends on the thread count.
 */
#include "ref_internal.h"

#include <pthread.h>
#include <stdbool.h>
#include <unistd.h>

#define REF_MAX_THREADS 16
/* multiply-adds below which one thread does it all (a few ms) */
#define REF_PAR_MIN (1.0 * (1 << 22))

struct job {
	void (*fn)(void *ctx, int64_t lo, int64_t hi);
	void *ctx;
	int64_t lo, hi;
};

static void *run_job(void *p)
{
	const struct job *j = p;

	j->fn(j->ctx, j->lo, j->hi);
	return NULL;
}

/* MTP_REF_THREADS (a positive integer; anything else means 1), else the
 * online CPUs; at most REF_MAX_THREADS. */
static int ref_threads(void)
{
	const char *e = getenv("MTP_REF_THREADS");
	char *end = NULL;
	long n;

	if (e && *e) {
		n = strtol(e, &end, 10);
		if (*end)
			n = 1;
	} else {
		n = sysconf(_SC_NPROCESSORS_ONLN);
	}
	return n < 1 ? 1 : n > REF_MAX_THREADS ? REF_MAX_THREADS : (int)n;
}

void mtp_ref_parallel(int64_t n, double work,
		      void (*fn)(void *ctx, int64_t lo, int64_t hi), void *ctx)
{
	struct job job[REF_MAX_THREADS];
	pthread_t th[REF_MAX_THREADS];
	bool started[REF_MAX_THREADS] = {false};
	int t = work < REF_PAR_MIN ? 1 : ref_threads();

	if (n <= 0)
		return;
	if (t > n)
		t = (int)n;
	for (int i = 0; i < t; i++)
		job[i] = (struct job){fn, ctx, n * i / t, n * (i + 1) / t};
	for (int i = 1; i < t; i++) /* a thread that cannot start: done here */
		started[i] = !pthread_create(&th[i], NULL, run_job, &job[i]);
	run_job(&job[0]);
	for (int i = 1; i < t; i++) {
		if (started[i])
			pthread_join(th[i], NULL);
		else
			run_job(&job[i]);
	}
}
