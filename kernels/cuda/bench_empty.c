/*
 * The empty-kernel row of the benchmark: with MTP_CUDA_EMPTY_BENCH=1 (or =N:
 * also N empty kernels in one graph, the floor of `bench --launches N`) the
 * backend times, when it opens, one empty kernel launched plainly and
 * replayed from a graph, the same way the timing engine times an op (an
 * event before, the launch, an event after, synchronize), and prints the
 * medians to stderr. `mtpcheck bench --graph` rows at T = 1 are set against
 * the replay figure of the same process [issue 5]. Bench-only: nothing else
 * reads it.
 */
#include <stdio.h>
#include <stdlib.h>

#include "nv_internal.h"

#define EMPTY_REPS 201

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;

	return (x > y) - (x < y);
}

/* Median µs of EMPTY_REPS timed launches (graph replays when ge is set). */
static enum mtp_status empty_median(struct mtp_backend *be, cudaGraphExec_t ge,
				    float *us)
{
	struct nv_ctx *x = nv_ctx(be);
	float ms[EMPTY_REPS];

	for (int i = -10; i < EMPTY_REPS; i++) { /* 10 warm-up launches */
		NV_CUDA(be, cudaEventRecord(x->ev_begin, x->stream));
		if (ge)
			NV_CUDA(be, cudaGraphLaunch(ge, x->stream));
		else
			NV_CUDA(be, mtp_nv_empty(x->stream));
		NV_CUDA(be, cudaEventRecord(x->ev_end, x->stream));
		NV_CUDA(be, cudaEventSynchronize(x->ev_end));
		if (i >= 0)
			NV_CUDA(be, cudaEventElapsedTime(&ms[i], x->ev_begin,
							 x->ev_end));
	}
	qsort(ms, EMPTY_REPS, sizeof(float), cmp_float);
	*us = ms[EMPTY_REPS / 2] * 1e3f;
	return MTP_OK;
}

/* A graph of n empty kernels back to back. */
static enum mtp_status empty_graph(struct mtp_backend *be, cudaGraphExec_t *ge,
				   int n)
{
	struct nv_ctx *x = nv_ctx(be);
	cudaGraph_t g = NULL;
	cudaError_t e, e2;

	NV_CUDA(be, cudaStreamBeginCapture(x->stream,
					   cudaStreamCaptureModeThreadLocal));
	e = cudaSuccess;
	for (int i = 0; e == cudaSuccess && i < n; i++)
		e = mtp_nv_empty(x->stream);
	e2 = cudaStreamEndCapture(x->stream, &g);
	if (e == cudaSuccess && e2 == cudaSuccess)
		e = cudaGraphInstantiate(ge, g, 0);
	if (g)
		cudaGraphDestroy(g);
	NV_CUDA(be, e != cudaSuccess ? e : e2);
	return MTP_OK;
}

enum mtp_status mtp_nv_bench_empty(struct mtp_backend *be)
{
	const char *env = getenv("MTP_CUDA_EMPTY_BENCH");
	cudaGraphExec_t ge = NULL;
	float plain = 0, replay = 0, many = 0;
	const int n = env ? atoi(env) : 0;
	enum mtp_status st;

	if (!env || !*env || *env == '0')
		return MTP_OK;
	st = empty_median(be, NULL, &plain);
	if (!st)
		st = empty_graph(be, &ge, 1);
	if (!st)
		st = empty_median(be, ge, &replay);
	if (ge)
		cudaGraphExecDestroy(ge);
	ge = NULL;
	if (!st && n > 1) /* =N: the per-launch floor of --launches N */
		st = empty_graph(be, &ge, n);
	if (!st && ge)
		st = empty_median(be, ge, &many);
	if (ge)
		cudaGraphExecDestroy(ge);
	if (!st)
		fprintf(stderr,
			"cuda: empty kernel, median of %d: launch %.2f us, "
			"graph replay %.2f us\n",
			EMPTY_REPS, plain, replay);
	if (!st && n > 1)
		fprintf(stderr,
			"cuda: empty kernel, %d launches in one graph: %.3f us "
			"per launch\n",
			n, many / n);
	return st;
}
