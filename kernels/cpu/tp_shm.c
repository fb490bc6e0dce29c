/*
 * The all-reduce run as tensor parallelism runs it [SPEC.md §2.5, Step
 * V3-8]: P worker processes, each holding only its own partial in shared
 * memory, exchange and add in the declared order (one-shot: every rank
 * reads every peer; two-shot: each chunk's owner, then a gather; ring: the
 * chunk's running sum passed rank to rank, stored in the act dtype at each
 * hop; tree: pairs of ranks, level by level), a process-shared barrier
 * between the stages. Every rank must end with the same bits; rank 0's are
 * returned. Chosen with MTP_CPU_TP_PROCS=1 (else all_reduce.c reduces in
 * this process); the same stages are what an NCCL backend would carry.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "cpu_internal.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

struct shm {
	pthread_barrier_t bar;
	int64_t p, n, h;
	float *x;   /* [p][n]: rank r's partial (then tree sums), fp32 values */
	float *acc; /* [n]: the chunks' sums (two-shot, ring, tree) */
	float *out; /* [p][n]: each rank's result */
};

static int64_t chunk_of(const struct shm *s, int64_t i)
{
	return (i % s->h) * s->p / s->h;
}

/* Ring: chunk c starts at rank c+1; at hop k, rank r adds to chunk r-1-k. */
static void ring(struct shm *s, int64_t r, enum mtp_dtype act)
{
	for (int64_t k = 0; k < s->p; k++) {
		int64_t c = ((r - 1 - k) % s->p + s->p) % s->p;

		for (int64_t i = 0; i < s->n; i++)
			if (chunk_of(s, i) == c)
				s->acc[i] =
					k ? mtp_cpu_round1(
						    act,
						    s->acc[i] +
							    s->x[r * s->n + i])
					  : s->x[r * s->n + i];
		pthread_barrier_wait(&s->bar);
	}
}

/* Tree: at each level the left rank of a pair adds its partner's sum. */
static void tree(struct shm *s, int64_t r, enum mtp_dtype act)
{
	int64_t alive[64], n = s->p;

	for (int64_t k = 0; k < n; k++)
		alive[k] = k;
	while (n > 1) {
		int64_t m = 0;

		for (int64_t j = 0; j + 1 < n; j += 2) {
			float *a = s->x + alive[j] * s->n;
			const float *b = s->x + alive[j + 1] * s->n;

			if (alive[j] == r)
				for (int64_t i = 0; i < s->n; i++)
					a[i] = mtp_cpu_round1(act, a[i] + b[i]);
			alive[m++] = alive[j];
		}
		if (n % 2)
			alive[m++] = alive[n - 1];
		n = m;
		pthread_barrier_wait(&s->bar);
	}
	if (r == 0)
		memcpy(s->acc, s->x, (size_t)s->n * sizeof(float));
}

static void rank_main(struct shm *s, int64_t r, enum mtp_reduce_order o,
		      enum mtp_dtype act)
{
	float *out = s->out + r * s->n;

	pthread_barrier_wait(&s->bar); /* every partial is in */
	if (o == MTP_REDUCE_RING)
		ring(s, r, act);
	else if (o == MTP_REDUCE_TREE)
		tree(s, r, act);
	for (int64_t i = 0; i < s->n; i++) {
		int64_t c = o == MTP_REDUCE_TWO_SHOT ? chunk_of(s, i) : 0;
		float v;

		if (o != MTP_REDUCE_TWO_SHOT && o != MTP_REDUCE_ONE_SHOT &&
		    o != MTP_REDUCE_EXACT)
			continue;
		if (o == MTP_REDUCE_TWO_SHOT && c != r)
			continue; /* another owner's chunk */
		v = s->x[c * s->n + i];
		for (int64_t k = 1; k < s->p; k++)
			v += s->x[((c + k) % s->p) * s->n + i];
		(o == MTP_REDUCE_TWO_SHOT ? s->acc : out)[i] =
			mtp_cpu_round1(act, v);
	}
	pthread_barrier_wait(&s->bar); /* the chunks are reduced: gather */
	if (o != MTP_REDUCE_ONE_SHOT && o != MTP_REDUCE_EXACT)
		for (int64_t i = 0; i < s->n; i++)
			out[i] = mtp_cpu_round1(act, s->acc[i]);
}

/* Forks the P ranks; false if one could not start or did not end well. */
static bool run_ranks(struct shm *s, const void *parts, enum mtp_dtype act,
		      enum mtp_reduce_order o)
{
	pid_t pid[64];
	int64_t started = 0;
	bool ok = true;

	for (; started < s->p; started++) {
		pid[started] = fork();
		if (pid[started] < 0)
			break;
		if (pid[started] == 0) {
			/* rank r holds only its own partial */
			mtp_cpu_load(act, parts, started * s->n, s->n,
				     s->x + started * s->n);
			rank_main(s, started, o, act);
			_exit(0);
		}
	}
	if (started < s->p) /* the ranks that started wait at a barrier */
		for (int64_t k = 0; k < started; k++)
			kill(pid[k], SIGKILL);
	for (int64_t k = 0; k < started; k++) {
		int wst = 0;

		ok = waitpid(pid[k], &wst, 0) == pid[k] && WIFEXITED(wst) &&
		     WEXITSTATUS(wst) == 0 && ok;
	}
	return ok && started == s->p;
}

enum mtp_status mtp_cpu_reduce_procs(enum mtp_dtype act, const void *parts,
				     int64_t p, int64_t rows, int64_t h,
				     enum mtp_reduce_order o, void *out)
{
	int64_t n = rows * h;
	size_t bytes = sizeof(struct shm) + (size_t)((2 * p + 1) * n + 1) * 4;
	struct shm *s;
	pthread_barrierattr_t ba;
	enum mtp_status st = MTP_OK;

	if (p < 1 || p > 64 || n == 0)
		return MTP_ERR_UNSUPPORTED; /* reduced in this process */
	s = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (s == MAP_FAILED)
		return MTP_ERR_NOMEM;
	*s = (struct shm){.p = p, .n = n, .h = h};
	s->x = (float *)(s + 1);
	s->acc = s->x + p * n;
	s->out = s->acc + n;
	pthread_barrierattr_init(&ba);
	pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED);
	pthread_barrier_init(&s->bar, &ba, (unsigned)p);
	if (!run_ranks(s, parts, act, o))
		st = MTP_ERR_DEVICE;
	for (int64_t r = 1; !st && r < p; r++) /* every rank has the same */
		if (memcmp(s->out, s->out + r * n, (size_t)n * sizeof(float)))
			st = MTP_ERR_DEVICE;
	if (!st)
		mtp_cpu_store(act, out, 0, n, s->out);
	pthread_barrier_destroy(&s->bar);
	pthread_barrierattr_destroy(&ba);
	munmap(s, bytes);
	return st;
}
