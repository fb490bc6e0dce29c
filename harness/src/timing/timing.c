/*
 * The timing engine (timing.h). Inputs are rotated over several device
 * copies so that a small kernel is not timed on warm caches; device timers
 * are used where the backend has them; the median and IQR of the samples are
 * reported; the outputs of the last timed launch are returned for checking.
 */
#include "mtp/timing.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

void mtp_timing_opts_init(struct mtp_timing_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->warmup = 3;
	o->min_reps = 10;
	o->max_reps = 1000;
	o->min_seconds = 0.2;
	o->rotate_bytes = 256ull << 20;
	o->launches = 1;
}

void mtp_timing_fini(struct mtp_timing *t)
{
	free(t->samples);
	t->samples = NULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double quantile(const double *s, int n, double q)
{
	double pos = q * (n - 1);
	int i = (int)pos;

	return i + 1 < n ? s[i] + (pos - i) * (s[i + 1] - s[i]) : s[n - 1];
}

/* Launches per captured graph: o->launches with graph replay, else 1. */
static int launches_per_graph(const struct mtp_timing_opts *o)
{
	return o->graph && o->launches > 1 ? o->launches : 1;
}

/* Device copies of the inputs, `n` sets, and one set of outputs. */
struct dev_sets {
	int n;
	struct mtp_tensor **in; /* [n][n_in] */
	struct mtp_tensor *out;
};

static void sets_free(struct mtp_backend *be, const struct mtp_call *c,
		      struct dev_sets *d)
{
	for (int s = 0; d->in && s < d->n; s++) {
		for (int i = 0; d->in[s] && i < c->n_in; i++)
			mtp_backend_free(be, d->in[s][i].data);
		free(d->in[s]);
	}
	for (int i = 0; d->out && i < c->n_out; i++)
		mtp_backend_free(be, d->out[i].data);
	free(d->in);
	free(d->out);
}

static enum mtp_status sets_alloc(struct mtp_backend *be,
				  const struct mtp_call *c,
				  const struct mtp_timing_opts *o,
				  struct dev_sets *d)
{
	const int nl = launches_per_graph(o);
	double in_bytes = 0;
	enum mtp_status st = MTP_OK;

	for (int i = 0; i < c->n_in; i++)
		in_bytes += (double)mtp_tensor_nbytes(&c->in[i]);
	d->n = o->warm || in_bytes <= 0
		       ? 1
		       : (int)((double)o->rotate_bytes / in_bytes) + 1;
	if (nl > 1) { /* one graph of launches: up to one set each */
		if (d->n > nl)
			d->n = nl;
	} else if (d->n > 64) {
		d->n = 64;
	}
	if (o->graph && nl == 1 && d->n > 8)
		d->n = 8;
	d->in = calloc((size_t)d->n, sizeof(*d->in));
	d->out = calloc((size_t)c->n_out + 1, sizeof(*d->out));
	if (!d->in || !d->out)
		return MTP_ERR_NOMEM;
	for (int s = 0; !st && s < d->n; s++) {
		d->in[s] = calloc((size_t)c->n_in + 1, sizeof(**d->in));
		if (!d->in[s])
			return MTP_ERR_NOMEM;
		for (int i = 0; !st && i < c->n_in; i++) {
			size_t nb = mtp_tensor_nbytes(&c->in[i]);

			d->in[s][i] = c->in[i];
			d->in[s][i].data = NULL;
			if (!c->in[i].data)
				continue;
			st = mtp_backend_alloc(be, nb, &d->in[s][i].data);
			if (!st)
				st = mtp_backend_upload(be, d->in[s][i].data,
							c->in[i].data, nb);
		}
	}
	for (int i = 0; !st && i < c->n_out; i++) {
		d->out[i] = c->out[i];
		d->out[i].data = NULL;
		st = mtp_backend_alloc(be, mtp_tensor_nbytes(&c->out[i]),
				       &d->out[i].data);
	}
	return st;
}

/* One timed launch of set s (or its graph), in seconds. */
static enum mtp_status timed_launch(struct mtp_backend *be, struct mtp_call *dc,
				    void *graph, double *sec, bool *device)
{
	const struct mtp_backend_iface *f = be->iface;
	enum mtp_status st;

	*device = f->timer_begin && f->timer_end;
	if (*device) {
		st = f->timer_begin(be);
		if (!st)
			st = graph ? f->graph_launch(be, graph)
				   : mtp_backend_launch(be, dc);
		return st ? st : f->timer_end(be, sec);
	}
	double t0 = now();

	st = graph ? f->graph_launch(be, graph) : mtp_backend_launch(be, dc);
	if (!st)
		st = mtp_backend_synchronize(be);
	*sec = now() - t0;
	return st;
}

static enum mtp_status download_out(struct mtp_backend *be,
				    const struct mtp_call *c,
				    const struct dev_sets *d,
				    struct mtp_tensor *out)
{
	enum mtp_status st = MTP_OK;

	for (int i = 0; !st && i < c->n_out; i++) {
		out[i] = c->out[i];
		out[i].data = NULL;
		st = mtp_tensor_alloc(&out[i], c->out[i].dtype, c->out[i].ndim,
				      c->out[i].shape);
		if (!st)
			st = mtp_backend_download(be, out[i].data,
						  d->out[i].data,
						  mtp_tensor_nbytes(&out[i]));
	}
	return st;
}

static void summarize(double *s, int n, struct mtp_timing *t)
{
	qsort(s, (size_t)n, sizeof(*s), cmp_double);
	t->reps = n;
	t->min = s[0];
	t->median = quantile(s, n, 0.5);
	t->q1 = quantile(s, n, 0.25);
	t->q3 = quantile(s, n, 0.75);
	t->iqr_pct = t->median > 0 ? 100 * (t->q3 - t->q1) / t->median : 0;
}

enum mtp_status mtp_timing_pool(const struct mtp_timing *rep, int n,
				struct mtp_timing *out)
{
	int all = 0;

	memset(out, 0, sizeof(*out));
	for (int i = 0; i < n; i++)
		all += rep[i].reps;
	if (n < 1 || all < 1)
		return MTP_ERR_INVALID;
	out->samples = malloc((size_t)all * sizeof(double));
	if (!out->samples)
		return MTP_ERR_NOMEM;
	for (int i = 0, k = 0; i < n; i++)
		for (int j = 0; j < rep[i].reps; j++)
			out->samples[k++] = rep[i].samples[j];
	summarize(out->samples, all, out);
	out->sets = rep[0].sets;
	out->device_timer = rep[0].device_timer;
	out->graph = rep[0].graph;
	out->launches = rep[0].launches;
	return MTP_OK;
}

static enum mtp_status capture_graphs(struct mtp_backend *be,
				      struct mtp_call *dc,
				      const struct dev_sets *d, void **graphs)
{
	enum mtp_status st = MTP_OK;

	if (!be->iface->graph_capture)
		return mtp_backend_fail(be, MTP_ERR_UNSUPPORTED,
					"backend %s has no graph replay",
					be->name);
	for (int s = 0; !st && s < d->n; s++) {
		dc->in = d->in[s];
		st = be->iface->graph_capture(be, dc, &graphs[s]);
	}
	return st;
}

/* The one graph of o->launches launches, launch i on set i mod d->n. */
static enum mtp_status capture_launches(struct mtp_backend *be,
					const struct mtp_call *dc,
					const struct dev_sets *d, int n,
					void **graph)
{
	const struct mtp_backend_iface *f = be->iface;
	struct mtp_call *calls;
	enum mtp_status st;

	if (f->api_version < 4 || !f->graph_capture_calls)
		return mtp_backend_fail(be, MTP_ERR_UNSUPPORTED,
					"backend %s cannot capture several "
					"launches in one graph (--launches)",
					be->name);
	calls = calloc((size_t)n, sizeof(*calls));
	if (!calls)
		return MTP_ERR_NOMEM;
	for (int i = 0; i < n; i++) {
		calls[i] = *dc;
		calls[i].in = d->in[i % d->n];
	}
	st = f->graph_capture_calls(be, calls, n, graph);
	free(calls);
	return st;
}

enum mtp_status mtp_time_call(struct mtp_backend *be, const struct mtp_call *c,
			      const struct mtp_timing_opts *o,
			      struct mtp_timing *t, struct mtp_tensor *out)
{
	struct dev_sets d = {0};
	struct mtp_call dc = *c;
	void *graphs[8] = {0};
	double *samples = malloc((size_t)(o->max_reps > 0 ? o->max_reps : 1) *
				 sizeof(double));
	double total = 0;
	int n = 0;
	enum mtp_status st = samples ? sets_alloc(be, c, o, &d) : MTP_ERR_NOMEM;

	memset(t, 0, sizeof(*t));
	const int nl = launches_per_graph(o);

	dc.out = d.out;
	if (!st && nl > 1)
		st = capture_launches(be, &dc, &d, nl, &graphs[0]);
	else if (!st && o->graph)
		st = capture_graphs(be, &dc, &d, graphs);
	t->sets = d.n;
	t->graph = o->graph;
	t->launches = nl;
	for (int w = 0; !st && w < o->warmup; w++) {
		dc.in = d.in[w % d.n];
		st = nl > 1 ? be->iface->graph_launch(be, graphs[0])
			    : mtp_backend_launch(be, &dc);
		if (!st)
			st = mtp_backend_synchronize(be);
	}
	while (!st && n < o->max_reps &&
	       (n < o->min_reps || total < o->min_seconds)) {
		dc.in = d.in[n % d.n];
		st = timed_launch(be, &dc,
				  nl > 1     ? graphs[0]
				  : o->graph ? graphs[n % d.n]
					     : NULL,
				  &samples[n], &t->device_timer);
		total += samples[n];
		samples[n++] /= nl; /* per launch */
	}
	if (!st && n > 0) {
		summarize(samples, n, t);
		t->samples =
			samples; /* sorted; the caller frees with mtp_timing_fini */
		samples = NULL;
		st = download_out(be, c, &d, out);
	}
	for (int s = 0; s < 8; s++)
		if (graphs[s])
			be->iface->graph_destroy(be, graphs[s]);
	sets_free(be, c, &d);
	free(samples);
	return st;
}

enum mtp_status mtp_probe_copy_bandwidth(struct mtp_backend *be, size_t bytes,
					 double *bytes_per_s)
{
	void *a = NULL, *b = NULL;
	double samples[10];
	enum mtp_status st;

	*bytes_per_s = 0;
	if (!be->iface->copy)
		return MTP_OK;
	st = mtp_backend_alloc(be, bytes, &a);
	if (!st)
		st = mtp_backend_alloc(be, bytes, &b);
	for (int i = 0; !st && i < 12; i++) {
		double t0 = now(), sec = 0;
		bool dev = be->iface->timer_begin && be->iface->timer_end;

		st = dev ? be->iface->timer_begin(be) : MTP_OK;
		if (!st)
			st = be->iface->copy(be, i & 1 ? a : b, i & 1 ? b : a,
					     bytes);
		if (!st)
			st = dev ? be->iface->timer_end(be, &sec)
				 : mtp_backend_synchronize(be);
		if (!dev)
			sec = now() - t0;
		if (i >= 2) /* two warm-up copies */
			samples[i - 2] = sec;
	}
	if (!st) {
		qsort(samples, 10, sizeof(double), cmp_double);
		*bytes_per_s = 2.0 * (double)bytes / quantile(samples, 10, 0.5);
	}
	mtp_backend_free(be, a);
	mtp_backend_free(be, b);
	return st;
}

/*
 * The FMA probe: every thread runs FMA_CHAINS independent chains of fused
 * multiply-adds on registers (no memory), enough to cover the latency of
 * two FMA pipes, at 8 lanes (ymm) and, where the CPU has AVX-512, at 16
 * (zmm): on a core with 256-bit pipes a zmm FMA takes both (Zen 4), so the
 * two peaks are equal there and the zmm one is twice the ymm one on cores
 * with 512-bit pipes (Zen 5, Intel server parts).
 */
#define FMA_CHAINS 12
#define FMA_ITERS (1l << 21)

#if defined(__x86_64__) && defined(__GNUC__)
/* One chain set at one width: V the vector type, P the intrinsics' prefix;
 * returns the first lane of the chains' sum. */
#define FMA_CHAINS_AT(name, isa, V, P)                                         \
	__attribute__((target(isa))) static float name(long iters)             \
	{                                                                      \
		const V mul = P##_set1_ps(0.9999999f);                         \
		const V add = P##_set1_ps(1e-7f);                              \
		V a[FMA_CHAINS];                                               \
		float out[sizeof(V) / sizeof(float)];                          \
                                                                               \
		for (int j = 0; j < FMA_CHAINS; j++)                           \
			a[j] = P##_set1_ps((float)j);                          \
		for (long i = 0; i < iters; i++)                               \
			_Pragma("GCC unroll 16") for (int j = 0;               \
						      j < FMA_CHAINS; j++)     \
				a[j] = P##_fmadd_ps(a[j], mul, add);           \
		for (int j = 1; j < FMA_CHAINS; j++)                           \
			a[0] = P##_add_ps(a[0], a[j]);                         \
		P##_storeu_ps(out, a[0]);                                      \
		return out[0];                                                 \
	}
FMA_CHAINS_AT(fma_ymm, "avx2,fma", __m256, _mm256)
FMA_CHAINS_AT(fma_zmm, "avx512f", __m512, _mm512)
#endif

struct fma_job {
	int lanes;
	double t0, t1;
	volatile float sink; /* keeps the chains from being optimised out */
};

static void *fma_thread(void *arg)
{
	struct fma_job *j = arg;

	j->t0 = now();
#if defined(__x86_64__) && defined(__GNUC__)
	j->sink = j->lanes == 16 ? fma_zmm(FMA_ITERS) : fma_ymm(FMA_ITERS);
#endif
	j->t1 = now();
	return NULL;
}

/* Flop/s of `threads` threads at `lanes` lanes over the span from the first
 * start to the last end: the median of 5 runs after one that warms up. */
static double fma_rate(int threads, int lanes)
{
	struct fma_job jobs[64];
	pthread_t tid[64];
	double samples[5];

	for (int r = 0; r < 6; r++) {
		double t0 = 0, t1 = 0;
		int n = 0;

		while (n < threads) {
			jobs[n] = (struct fma_job){.lanes = lanes};
			if (pthread_create(&tid[n], NULL, fma_thread, &jobs[n]))
				break;
			n++;
		}
		for (int i = 0; i < n; i++) {
			pthread_join(tid[i], NULL);
			t0 = i == 0 || jobs[i].t0 < t0 ? jobs[i].t0 : t0;
			t1 = jobs[i].t1 > t1 ? jobs[i].t1 : t1;
		}
		if (n < threads || t1 <= t0)
			return 0;
		if (r > 0)
			samples[r - 1] = t1 - t0;
	}
	qsort(samples, 5, sizeof(double), cmp_double);
	return 2.0 * lanes * FMA_CHAINS * (double)FMA_ITERS * threads /
	       samples[2];
}

void mtp_probe_fma_host(struct mtp_fma_peak *p)
{
	const char *omp = getenv("OMP_NUM_THREADS");
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	memset(p, 0, sizeof(*p));
	p->threads = omp && atoi(omp) > 0 ? atoi(omp) : (int)cpus;
	if (p->threads < 1)
		p->threads = 1;
	if (p->threads > 64)
		p->threads = 64;
#if defined(__x86_64__) && defined(__GNUC__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		p->ymm = fma_rate(p->threads, 8);
	if (__builtin_cpu_supports("avx512f"))
		p->zmm = fma_rate(p->threads, 16);
#endif
	p->flops_per_s = p->zmm > p->ymm ? p->zmm : p->ymm;
}
