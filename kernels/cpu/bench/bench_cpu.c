/*
 * A standalone timing of the `cpu` backend's memory-bound ops against the
 * scalar reference (the `ref` backend) at T*H >= 4 Mi elements, for
 * docs/BENCHMARKS.md. It stands in until mtpcheck's timing engine exists
 * and is not linked into mtpcheck. Each op runs on random inputs through
 * the backend interface (launch only: host memory, no copies timed), with a
 * cache flush before every repeat; it prints the median and the IQR of the
 * repeats and the bytes each op must move (inputs + outputs) as GB/s.
 *
 *   mtp_cpu_bench [cpu_repeats [ref_repeats [op]]]   (op: only that op)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mtp/backend.h"

struct bench {
	const char *op;
	const char *attrs; /* "name=value ...", strings unquoted */
	struct mtp_dims d;
};

#define HC                                                                     \
	"rms_eps=1e-6 pre_eps=1e-6 sinkhorn_eps=1e-6 post_mult=2 "             \
	"sinkhorn_iters=20"

static const struct bench benches[] = {
	{"rmsnorm", "eps=1e-6 rounding=eager", {.r = 1024, .h = 4096}},
	{"rmsnorm", "eps=1e-6 rounding=fused", {.r = 1024, .h = 4096}},
	{"add_rmsnorm", "eps=1e-6 rounding=fused", {.r = 1024, .h = 4096}},
	{"mtp_shared_head_rmsnorm", "eps=1e-6", {.t = 1024, .h = 4096}},
	{"fused_eh_norm", "eps=1e-6", {.t = 1024, .h = 4096}},
	{"fused_mtp_input_rmsnorm", "eps=1e-6", {.t = 1024, .h = 4096, .m = 4}},
	{"hc_post", "", {.t = 1024, .h = 4096, .m = 4}},
	{"hc_pre", HC, {.t = 1024, .h = 4096, .m = 4}},
	{"hc_head",
	 "rms_eps=1e-6 hc_eps=1e-6 variant=cuda",
	 {.t = 1024, .h = 4096, .m = 4}},
	{"all_reduce", "", {.p = 4, .r = 1024, .h = 4096}},
};

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static double uniform(void)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(rng_state >> 11) / 9007199254740992.0;
}

static void parse_attrs(const char *s, struct mtp_attr_list *l)
{
	char buf[256], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", s);
	l->n = 0;
	for (char *tok = strtok_r(buf, " ", &save); tok;
	     tok = strtok_r(NULL, " ", &save)) {
		struct mtp_attr *a = &l->items[l->n++];
		char *eq = strchr(tok, '=');
		char *end;

		*eq = '\0';
		snprintf(a->name, sizeof(a->name), "%s", tok);
		a->num = strtod(eq + 1, &end);
		a->is_string = *end != '\0';
		snprintf(a->str, sizeof(a->str), "%s", eq + 1);
	}
}

/* Random values in every tensor: activations ~U(-2,2), positions with
 * zeros, mHC parameters small. */
static void fill(struct mtp_tensor *t, const struct mtp_tspec *s)
{
	const int64_t n = mtp_tensor_numel(t);

	for (int64_t i = 0; i < n; i++) {
		double v = 4.0 * uniform() - 2.0;

		if (s->cls == MTP_TC_INDEX)
			v = (double)(int64_t)(uniform() * 64);
		else if (s->cls == MTP_TC_PARAM)
			v *= 0.05;
		mtp_store(t->dtype, t->data, (size_t)i, v);
	}
}

static enum mtp_status make_call(const struct bench *b, struct mtp_params *p,
				 struct mtp_signature *sig, struct mtp_call *c,
				 size_t *bytes)
{
	const struct mtp_op *op = mtp_op_find(b->op);
	struct mtp_attr_list attrs;
	char err[256];
	enum mtp_status st;

	parse_attrs(b->attrs, &attrs);
	st = mtp_params_parse(op, MTP_FAMILY_DEEPSEEK_V4, &attrs, p, err,
			      sizeof(err));
	if (!st)
		st = mtp_signature_build(op, p, NULL, sig, err, sizeof(err));
	if (st) {
		fprintf(stderr, "%s: %s\n", b->op, err);
		return st;
	}
	memset(c, 0, sizeof(*c));
	c->op = op;
	c->params = p;
	c->sig = sig;
	c->dims = b->d;
	c->act = MTP_BF16;
	c->n_in = sig->n_in;
	c->n_out = sig->n_out;
	c->in = calloc((size_t)sig->n_in, sizeof(*c->in));
	c->out = calloc((size_t)sig->n_out, sizeof(*c->out));
	*bytes = 0;
	for (int i = 0; i < sig->n_in + sig->n_out && !st; i++) {
		const bool in = i < sig->n_in;
		const struct mtp_tspec *s =
			in ? &sig->in[i] : &sig->out[i - sig->n_in];
		struct mtp_tensor *t = in ? &c->in[i] : &c->out[i - sig->n_in];
		int64_t shape[MTP_MAX_DIMS];
		int nd;

		if (s->optional)
			continue;
		mtp_tspec_shape(s, &c->dims, &nd, shape);
		st = mtp_tensor_alloc(t, mtp_tspec_dtype(s, MTP_BF16), nd,
				      shape);
		if (!st && in)
			fill(t, s);
		*bytes += mtp_tensor_nbytes(t);
	}
	return st;
}

static void free_call(struct mtp_call *c)
{
	for (int i = 0; i < c->n_in; i++)
		mtp_tensor_fini(&c->in[i]);
	for (int i = 0; i < c->n_out; i++)
		mtp_tensor_fini(&c->out[i]);
	free(c->in);
	free(c->out);
}

#define FLUSH_BYTES (128u << 20)
static unsigned char *flush_buf;

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

/* Median and IQR (seconds) of n timed launches after one warm-up. */
static enum mtp_status time_op(struct mtp_backend *be, struct mtp_call *c,
			       int n, double *med, double *iqr)
{
	double *s = calloc((size_t)n, sizeof(*s));
	enum mtp_status st = s ? be->iface->launch(be, c) : MTP_ERR_NOMEM;

	for (int i = 0; !st && i < n; i++) {
		for (size_t k = 0; k < FLUSH_BYTES; k += 64)
			flush_buf[k]++;
		double t0 = now();

		st = be->iface->launch(be, c);
		s[i] = now() - t0;
	}
	if (!st) {
		qsort(s, (size_t)n, sizeof(*s), cmp_double);
		*med = s[n / 2];
		*iqr = s[(3 * n) / 4] - s[n / 4];
	}
	free(s);
	return st;
}

/* The bandwidth a plain parallel copy reaches on this machine: 64 MiB read
 * and 64 MiB written per repeat, with the same flush and statistics. */
static void copy_baseline(int n)
{
	const size_t len = 64u << 20;
	unsigned char *a = malloc(len), *b = malloc(len);
	double *s = calloc((size_t)n, sizeof(*s));

	if (!a || !b || !s)
		goto out_free;
	memset(a, 1, len);
	memset(b, 0, len);
	for (int i = 0; i < n; i++) {
		for (size_t k = 0; k < FLUSH_BYTES; k += 64)
			flush_buf[k]++;
		double t0 = now();

#pragma omp parallel for schedule(static)
		for (size_t k = 0; k < len; k += 4096)
			memcpy(b + k, a + k, 4096);
		s[i] = now() - t0;
	}
	qsort(s, (size_t)n, sizeof(*s), cmp_double);
	printf("| copy (bandwidth baseline) | 64 MiB | %.1f | %.3f (%.3f) | "
	       "%.2f | | |\n",
	       2.0 * (double)len / 1e6, s[n / 2] * 1e3,
	       (s[(3 * n) / 4] - s[n / 4]) * 1e3,
	       2.0 * (double)len / s[n / 2] / 1e9);
out_free:
	free(s);
	free(b);
	free(a);
}

static void run_one(const struct bench *b, struct mtp_backend *cpu,
		    struct mtp_backend *ref, int ncpu, int nref)
{
	static struct mtp_signature sig;
	struct mtp_params p;
	struct mtp_call c;
	size_t bytes;
	double cm = 0, ci = 0, rm = 0, ri = 0;
	const int64_t rows = b->d.t ? b->d.t : b->d.r;

	if (make_call(b, &p, &sig, &c, &bytes) ||
	    time_op(cpu, &c, ncpu, &cm, &ci) ||
	    time_op(ref, &c, nref, &rm, &ri)) {
		printf("| %s | failed: %s %s |\n", b->op, cpu->error,
		       ref->error);
		free_call(&c);
		return;
	}
	printf("| %s %s | T=%lld H=%lld%s | %.1f | %.3f (%.3f) | %.2f | %.1f "
	       "(%.1f) | %.0fx |\n",
	       b->op,
	       strstr(b->attrs, "eager")	    ? "eager"
	       : strstr(b->attrs, "rounding=fused") ? "fused"
						    : "",
	       (long long)rows, (long long)b->d.h,
	       b->d.m	? " M=4"
	       : b->d.p ? " P=4"
			: "",
	       (double)bytes / 1e6, cm * 1e3, ci * 1e3,
	       (double)bytes / cm / 1e9, rm * 1e3, ri * 1e3, rm / cm);
	fflush(stdout);
	free_call(&c);
}

int main(int argc, char **argv)
{
	const int ncpu = argc > 1 ? atoi(argv[1]) : 21;
	const int nref = argc > 2 ? atoi(argv[2]) : 3;
	struct mtp_backend *cpu = NULL, *ref = NULL;
	char why[256], info[256];

	flush_buf = calloc(FLUSH_BYTES, 1);
	if (!flush_buf || ncpu < 1 || nref < 1 ||
	    mtp_backend_open("cpu", NULL, &cpu, why, sizeof(why)) ||
	    mtp_backend_open("ref", NULL, &ref, why, sizeof(why))) {
		fprintf(stderr, "mtp_cpu_bench: cannot start: %s\n", why);
		return 125;
	}
	mtp_backend_device_info(cpu, info, sizeof(info));
	printf("cpu backend: %s; bfloat16 activations; %d cpu / %d ref "
	       "repeats\n\n",
	       info, ncpu, nref);
	printf("| op | shape | MB moved | cpu ms median (IQR) | cpu GB/s | ref "
	       "ms median (IQR) | speedup |\n");
	printf("|---|---|---|---|---|---|---|\n");
	copy_baseline(ncpu);
	for (size_t i = 0; i < sizeof(benches) / sizeof(benches[0]); i++)
		if (argc < 4 || strcmp(argv[3], benches[i].op) == 0)
			run_one(&benches[i], cpu, ref, ncpu, nref);
	mtp_backend_close(ref);
	mtp_backend_close(cpu);
	free(flush_buf);
	return 0;
}
