/*
 * The timing engine (timing.h). Inputs are rotated over several device
 * copies so that a small kernel is not timed on warm caches; device timers
 * are used where the backend has them; the median and IQR of the samples are
 * reported; the outputs of the last timed launch are returned for checking.
 */
#include "mtp/timing.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

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
