/*
 * The runner: fixtures x backends -> results. A case is loaded, its call is
 * built from the op table, each backend runs it through the interface (or, for
 * a dump, the reference judges the observed outputs), and the outputs are
 * compared in flow order so that the first wrong one is named.
 */
#include "mtp/runner.h"

#include <dirent.h>
#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "mtp/backend.h"
#include "mtp/casefile.h"
#include "mtp/diagnose.h"
#include "mtp/rules.h"
#include "isolate.h"

void mtp_run_opts_init(struct mtp_run_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->timeout = 600;
	o->limits.max_dataset_bytes = 4ull << 30;
	o->out = stdout;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static bool has_glob(const char *p)
{
	return strpbrk(p, "*?[") != NULL;
}

bool mtp_filter_match(const char *const *pats, int n, const char *file,
		      const char *case_id)
{
	char full[MTP_PATH_MAX + 160];

	if (n == 0)
		return true;
	snprintf(full, sizeof(full), "%s:%s", file, case_id);
	for (int i = 0; i < n; i++) {
		if (!has_glob(pats[i])) {
			if (strcmp(pats[i], case_id) == 0 || strcmp(pats[i], full) == 0)
				return true;
		} else if (fnmatch(pats[i], case_id, 0) == 0 ||
			   fnmatch(pats[i], full, 0) == 0) {
			return true;
		}
	}
	return false;
}

static struct mtp_result *result_add(struct mtp_run *run)
{
	if (run->n == run->cap) {
		int cap = run->cap ? 2 * run->cap : 64;
		struct mtp_result *r = realloc(run->results,
					       (size_t)cap * sizeof(*r));

		if (!r)
			return NULL;
		run->results = r;
		run->cap = cap;
	}
	struct mtp_result *r = &run->results[run->n++];

	memset(r, 0, sizeof(*r));
	r->first_bad = -1;
	return r;
}

static void shell_quote(char *dst, size_t n, const char *s)
{
	bool plain = *s != 0;

	for (const char *p = s; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-/:,=+", *p))
			plain = false;
	if (plain)
		snprintf(dst, n, "%s", s);
	else
		snprintf(dst, n, "'%s'", s); /* case ids and paths hold no quote */
}

static void make_repro(const struct mtp_run *run, struct mtp_result *r)
{
	char f[MTP_PATH_MAX + 2], b[140];

	shell_quote(f, sizeof(f), r->file);
	shell_quote(b, sizeof(b), r->backend);
	if (run->opts.verify)
		snprintf(r->repro, sizeof(r->repro),
			 "mtpcheck verify %s --filter %s", f, r->case_id);
	else if (r->generated)
		snprintf(r->repro, sizeof(r->repro),
			 "mtpcheck run --backend %s --cases %s --filter %s", b,
			 run->opts.case_file, r->case_id);
	else
		snprintf(r->repro, sizeof(r->repro),
			 "mtpcheck run --backend %s%s%s --fixtures %s --filter %s",
			 b, run->opts.backend_lib ? " --backend-lib " : "",
			 run->opts.backend_lib ? run->opts.backend_lib : "", f,
			 r->case_id);
}

static bool any_input_special(const struct mtp_case *c, bool nonzero_only)
{
	for (int i = 0; i < c->inputs.n; i++) {
		const struct mtp_tensor *t = &c->inputs.items[i].t;

		if (!mtp_dtype_is_float(t->dtype))
			continue;
		for (int64_t k = 0; k < mtp_tensor_numel(t); k++) {
			double v = mtp_load(t->dtype, t->data, (size_t)k);

			if (nonzero_only ? v != 0 : !isfinite(v))
				return true;
		}
	}
	return false;
}

static bool all_zero(const struct mtp_tensor *t)
{
	if (!mtp_dtype_is_float(t->dtype))
		return false;
	for (int64_t k = 0; k < mtp_tensor_numel(t); k++)
		if (mtp_load(t->dtype, t->data, (size_t)k) != 0)
			return false;
	return mtp_tensor_numel(t) > 0;
}

static bool has_special(const struct mtp_tensor *t)
{
	if (!mtp_dtype_is_float(t->dtype))
		return false;
	for (int64_t k = 0; k < mtp_tensor_numel(t); k++)
		if (!isfinite(mtp_load(t->dtype, t->data, (size_t)k)))
			return true;
	return false;
}

/* The check itself is doubtful (benchdnn's "mistrusted"): every golden
 * output is all zeros while the inputs are not, so a backend that writes
 * nothing would pass; or a golden holds NaN/Inf while every input is finite. */
static bool mistrusted(const struct mtp_case *c, const struct mtp_tensor_list *judge,
		       char *why, size_t n)
{
	bool zeros = judge->n > 0;

	for (int i = 0; i < judge->n; i++) {
		const struct mtp_named *e = &judge->items[i];

		zeros = zeros && all_zero(&e->t);
		if (has_special(&e->t) && !any_input_special(c, false)) {
			snprintf(why, n, "golden '%s' holds NaN/Inf while every input is finite",
				 e->name);
			return true;
		}
	}
	if (zeros && any_input_special(c, true)) {
		snprintf(why, n, "every golden output is all zeros while the inputs are not");
		return true;
	}
	return false;
}

static void describe_failure(struct mtp_result *r)
{
	const struct mtp_cmp *m = &r->cmp[r->first_bad];
	char where[160];

	if (!m->shape_ok) {
		snprintf(r->message, sizeof(r->message), "%s: %s", m->name,
			 m->shape_msg);
		return;
	}
	mtp_cmp_where(m, where, sizeof(where));
	if (m->tol.budget) {
		snprintf(r->message, sizeof(r->message),
			 "%s: got %.9g want %.9g; normwise error %.3g (max %.3g), worst "
			 "element %.3g x its bound (%.3g of the RMS); %lld of %lld elements off",
			 where, m->worst_got, m->worst_want, m->rel_norm,
			 m->tol.norm_max, m->headroom, m->tol.elem_max,
			 (long long)m->n_bad, (long long)m->n);
		return;
	}
	snprintf(r->message, sizeof(r->message),
		 "%s: got %.9g want %.9g, err %.3g = %.3g x threshold "
		 "(rtol %.3g atol %.3g, %s); %lld of %lld elements off",
		 where, m->worst_got, m->worst_want,
		 fabs(m->worst_got - m->worst_want), m->headroom, m->tol.rtol,
		 m->tol.atol, m->tol.origin, (long long)m->n_bad,
		 (long long)m->n);
}

/* Views of a named list in signature order (data NULL where absent). */
static void by_signature(const struct mtp_case_call *p,
			 const struct mtp_tensor_list *l, struct mtp_tensor *v)
{
	for (int k = 0; k < p->sig->n_out; k++) {
		const struct mtp_named *n = mtp_list_find(l, p->sig->out[k].name);

		memset(&v[k], 0, sizeof(v[k]));
		if (n)
			v[k] = n->t;
	}
}

/* The logits beside a token output ("step.1/token" -> "step.1/logits"). */
static int logits_of(const struct mtp_case_call *p, int k)
{
	const char *name = p->sig->out[k].name, *slash = strrchr(name, '/');
	char l[MTP_NAME_MAX];

	snprintf(l, sizeof(l), "%.*slogits", slash ? (int)(slash - name + 1) : 0, name);
	for (int j = 0; j < p->sig->n_out; j++)
		if (strcmp(p->sig->out[j].name, l) == 0)
			return j;
	return -1;
}

/* Bound on a logit's error: twice the largest error the logits' own
 * threshold allows, since both sides of a margin may move. */
static double logit_bound(const struct mtp_cmp *lc, const struct mtp_tensor *want)
{
	double ss = 0, mx = 0;
	int64_t n = mtp_tensor_numel(want);

	for (int64_t i = 0; i < n; i++) {
		double v = mtp_load(want->dtype, want->data, (size_t)i);

		if (isfinite(v)) {
			ss += v * v;
			mx = fmax(mx, fabs(v));
		}
	}
	if (lc->tol.budget)
		return 2 * lc->tol.elem_max * sqrt(ss / (double)(n ? n : 1));
	return 2 * (lc->tol.atol + lc->tol.rtol * mx);
}

static void compare_one(struct mtp_result *r, const struct mtp_case *c,
			const struct mtp_case_call *p, int k,
			const struct mtp_tensor *have, const struct mtp_tensor *want,
			const struct mtp_tol_override *ovr)
{
	const struct mtp_tspec *s = &p->sig->out[k];
	struct mtp_cmp *m = &r->cmp[r->n_cmp];
	struct mtp_tol tol;
	int lk = s->cls == MTP_TC_TOKEN ? logits_of(p, k) : -1;

	if (lk >= 0 && want[lk].data) {
		mtp_tol_for(c->op, s->name, want[lk].dtype, p->call.act,
			    mtp_call_k_accum(&p->call), NULL, &tol);
		struct mtp_cmp lc = {.tol = tol};

		mtp_compare_tokens(s->name, &have[k], &want[k], &want[lk],
				   logit_bound(&lc, &want[lk]), m);
	} else {
		mtp_tol_for(c->op, s->name, want[k].dtype, p->call.act,
			    mtp_call_k_accum(&p->call), ovr, &tol);
		mtp_compare(s->name, &have[k], &want[k], &tol,
			    s->cls == MTP_TC_LOGITS, m);
	}
	if (!m->passed && r->first_bad < 0)
		r->first_bad = r->n_cmp;
	r->n_cmp++;
}

/* A pass this close to its threshold is worth explaining (NORM_ROUNDING). */
#define NOTE_HEADROOM 0.25

static double worst_headroom(const struct mtp_result *r)
{
	double w = 0;

	for (int i = 0; i < r->n_cmp; i++)
		if (r->cmp[i].headroom > w)
			w = r->cmp[i].headroom;
	return w;
}

/* Compares every output the judge has, in flow order; names the first that
 * fails, and for a failure, the known bug it matches. */
static enum mtp_status compare_all(struct mtp_result *r, const struct mtp_case *c,
				   const struct mtp_case_call *p,
				   const struct mtp_tensor *got,
				   const struct mtp_tensor_list *got_named,
				   const struct mtp_tensor_list *judge,
				   const struct mtp_tensor *judge_arr)
{
	int n = p->sig->n_out;
	struct mtp_tensor *have = calloc((size_t)n + 1, sizeof(*have));
	struct mtp_tensor *want = calloc((size_t)n + 1, sizeof(*want));

	r->cmp = calloc((size_t)n + 1, sizeof(*r->cmp));
	if (!r->cmp || !have || !want) {
		free(have);
		free(want);
		return MTP_ERR_NOMEM;
	}
	if (got_named)
		by_signature(p, got_named, have);
	else
		memcpy(have, got, (size_t)n * sizeof(*have));
	if (judge)
		by_signature(p, judge, want);
	else
		memcpy(want, judge_arr, (size_t)n * sizeof(*want));
	if (judge && mistrusted(c, judge, r->message, sizeof(r->message)))
		r->verdict = MTP_MISTRUSTED;
	for (int k = 0; k < n; k++) {
		const struct mtp_named *jn = judge ? mtp_list_find(judge, p->sig->out[k].name) : NULL;

		if (have[k].data && want[k].data)
			compare_one(r, c, p, k, have, want, jn ? &jn->tol : NULL);
	}
	if (r->verdict != MTP_MISTRUSTED) {
		r->verdict = r->first_bad < 0 ? MTP_PASSED : MTP_FAILED;
		if (r->first_bad >= 0) {
			describe_failure(r);
			mtp_diagnose(&p->call, have, want, &r->diag);
		} else if (worst_headroom(r) > NOTE_HEADROOM) {
			mtp_diagnose_rounding(&p->call, have, want, &r->diag);
		}
	}
	free(have);
	free(want);
	return MTP_OK;
}

/* The block contract rule; a violation fails the case and names the bug. */
static void check_block_rule(struct mtp_result *r, struct mtp_backend *be,
			     const struct mtp_case *c)
{
	char msg[300];

	if (mtp_rule_block_contract(be, c, msg, sizeof(msg)))
		return;
	if (r->verdict == MTP_PASSED || r->verdict == MTP_FAILED) {
		if (r->verdict == MTP_PASSED || !r->message[0])
			snprintf(r->message, sizeof(r->message), "block contract: %s", msg);
		r->verdict = MTP_FAILED;
	}
	memset(&r->diag, 0, sizeof(r->diag));
	r->diag.diag = MTP_DIAG_HC_STATE_DEFAULTS;
	snprintf(r->diag.text, sizeof(r->diag.text), "%s [%s]: %s; %s",
		 mtp_diag_info(r->diag.diag)->name, mtp_diag_info(r->diag.diag)->section,
		 msg, mtp_diag_info(r->diag.diag)->history);
}

static void run_on_backend(struct mtp_result *r, struct mtp_backend *be,
			   struct mtp_case *c, struct mtp_case_call *p,
			   const struct mtp_tensor *ref_out)
{
	struct mtp_tensor *got;
	enum mtp_status st;

	if (!mtp_backend_supports(be, &p->call)) {
		r->verdict = MTP_UNIMPLEMENTED;
		snprintf(r->message, sizeof(r->message),
			 "backend %s does not implement %s (%s, %s)", r->backend,
			 c->op->name, mtp_family_name(c->family),
			 mtp_dtype_name(p->call.act));
		return;
	}
	got = calloc((size_t)p->call.n_out + 1, sizeof(*got));
	if (!got) {
		r->verdict = MTP_CRASHED;
		snprintf(r->message, sizeof(r->message), "out of memory");
		return;
	}
	be->error[0] = 0;
	double t0 = now();

	st = mtp_backend_execute(be, &p->call, got);
	r->seconds = now() - t0;
	if (st) {
		r->verdict = MTP_FAILED;
		snprintf(r->message, sizeof(r->message), "%s: %s",
			 mtp_status_name(st), be->error[0] ? be->error : "no message");
	} else if (compare_all(r, c, p, got, NULL, ref_out ? NULL : &c->expected,
			       ref_out)) {
		r->verdict = MTP_CRASHED;
		snprintf(r->message, sizeof(r->message), "out of memory");
	}
	for (int i = 0; i < p->call.n_out; i++)
		mtp_tensor_fini(&got[i]);
	free(got);
	if (mtp_rule_block_applies(c))
		check_block_rule(r, be, c);
}

/* Runs the reference into the call's own output tensors: the judge of dumps
 * and of generated problems. */
static enum mtp_status reference_outputs(struct mtp_case_call *p)
{
	enum mtp_status st = MTP_OK;

	for (int i = 0; !st && i < p->call.n_out; i++) {
		struct mtp_tensor *t = &p->call.out[i];
		int64_t shape[MTP_MAX_DIMS];

		if (t->data)
			return MTP_OK; /* computed already */
		memcpy(shape, t->shape, sizeof(shape));
		st = mtp_tensor_alloc(t, t->dtype, t->ndim, shape);
	}
	return st ? st : mtp_reference_run(&p->call);
}

/* An isolated run: the child opens the backend itself and runs the case. */
struct iso_arg {
	const struct mtp_run *run;
	const char *name;
	struct mtp_case *c;
	struct mtp_case_call *p;
};

static void run_isolated(void *arg, struct mtp_result *r)
{
	struct iso_arg *a = arg;
	struct mtp_backend *be;
	char why[MTP_ERR_MAX];
	enum mtp_status st = mtp_backend_open(a->name, a->run->opts.backend_lib,
					      &be, why, sizeof(why));

	if (st) {
		r->verdict = st == MTP_ERR_INVALID ? MTP_INVALID : MTP_SKIPPED;
		snprintf(r->message, sizeof(r->message), "%s", why);
		return;
	}
	run_on_backend(r, be, a->c, a->p, a->c->expected.n ? NULL : a->p->call.out);
	mtp_backend_close(be);
}

/* verify: the reference runs on the inputs and judges observed/. */
static void run_verify(struct mtp_result *r, struct mtp_case *c,
		       struct mtp_case_call *p)
{
	double t0 = now();
	enum mtp_status st = reference_outputs(p);

	r->seconds = now() - t0;
	if (!st)
		st = compare_all(r, c, p, NULL, &c->observed, NULL, p->call.out);
	if (st) {
		r->verdict = MTP_CRASHED;
		snprintf(r->message, sizeof(r->message), "reference: %s",
			 mtp_status_name(st));
	}
}

static void print_result(const struct mtp_run *run, const struct mtp_result *r,
			 int idx, int total)
{
	FILE *o = run->opts.out;
	const char *where = "";
	double worst = worst_headroom(r);
	char buf[200] = "";

	if (r->verdict == MTP_PASSED && r->n_cmp)
		snprintf(buf, sizeof(buf), "worst %.2f of threshold, %d outputs",
			 worst, r->n_cmp);
	where = r->verdict == MTP_PASSED ? buf : r->message;
	fprintf(o, "[%*d/%d] %-13s %-10s %s:%s  %s (%.1f ms)\n",
		total >= 1000 ? 4 : 3, idx, total, mtp_verdict_name(r->verdict),
		r->backend, r->file, r->case_id, where, r->seconds * 1e3);
	if (r->diag.diag)
		fprintf(o, "        %s: %s\n", r->diag.info ? "note" : "diagnosis",
			r->diag.text);
	if (r->verdict == MTP_FAILED || r->verdict == MTP_MISTRUSTED ||
	    r->verdict == MTP_CRASHED || r->verdict == MTP_INVALID)
		fprintf(o, "        repro: %s\n", r->repro);
	fflush(o);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static bool push_path(char ***v, int *n, int *cap, int **org, int origin,
		      const char *dir, const char *name)
{
	size_t dl = strlen(dir), pl;

	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 16;
		*v = realloc(*v, (size_t)*cap * sizeof(**v));
		*org = realloc(*org, (size_t)*cap * sizeof(**org));
		if (!*v || !*org)
			return false;
	}
	while (name && dl > 1 && dir[dl - 1] == '/')
		dl--;
	pl = dl + (name ? strlen(name) : 0) + 2;
	(*v)[*n] = malloc(pl);
	if (!(*v)[*n])
		return false;
	if (name)
		snprintf((*v)[*n], pl, "%.*s/%s", (int)dl, dir, name);
	else
		snprintf((*v)[*n], pl, "%s", dir);
	(*org)[(*n)++] = origin;
	return true;
}

/* Expands folders into their *.h5 files, sorted; files stay as given.
 * origin[k] is the index of the input path k came from. */
static int expand_paths(const char *const *in, int nin, char ***paths, int **origin)
{
	int n = 0, cap = 0;
	char **v = NULL;
	int *org = NULL;
	bool ok = true;

	for (int i = 0; ok && i < nin; i++) {
		struct stat sb;
		DIR *d;
		struct dirent *e;
		int first = n;

		if (stat(in[i], &sb) != 0 || !S_ISDIR(sb.st_mode) || !(d = opendir(in[i]))) {
			ok = push_path(&v, &n, &cap, &org, i, in[i], NULL);
			continue;
		}
		while (ok && (e = readdir(d))) {
			size_t len = strlen(e->d_name);

			if (len >= 4 && strcmp(e->d_name + len - 3, ".h5") == 0)
				ok = push_path(&v, &n, &cap, &org, i, in[i], e->d_name);
		}
		closedir(d);
		if (ok)
			qsort(v + first, (size_t)(n - first), sizeof(*v), cmp_str);
	}
	*paths = v;
	*origin = org;
	return ok ? n : 0;
}

struct backend_slot {
	const char *name;
	struct mtp_backend *be;
	char why[MTP_ERR_MAX];
};

static void open_backends(struct mtp_run *run, struct backend_slot *slots)
{
	for (int i = 0; i < run->opts.n_backends; i++) {
		enum mtp_status st;

		slots[i].name = run->opts.backends[i];
		st = mtp_backend_open(slots[i].name, run->opts.backend_lib,
				      &slots[i].be, slots[i].why,
				      sizeof(slots[i].why));
		if (st == MTP_ERR_INVALID) {
			fprintf(stderr, "mtpcheck: --backend %s: %s\n",
				slots[i].name, slots[i].why);
			run->n_usage++;
		} else if (st) {
			fprintf(run->opts.out, "backend %s: SKIPPED (%s)\n",
				slots[i].name, slots[i].why);
			run->n_unavailable++;
		}
	}
}

/* Where cases come from: fixture files (from --fixtures, or selected by a
 * case file with their own filters and backends) and generated problems. */
struct sources {
	int nfx;
	struct mtp_fixture *fx;
	const struct mtp_casefile_fixture **sel; /* per fixture, or NULL */
	struct mtp_casefile cf;
	struct mtp_case_selection cs;
};

static bool case_selected(const struct mtp_run *run, const struct sources *s,
			  int f, const char *id)
{
	const struct mtp_fixture *fx = &s->fx[f];

	return mtp_filter_match(run->opts.filters, run->opts.n_filters, fx->path, id) &&
	       (!s->sel[f] || mtp_casefile_fixture_match(s->sel[f], fx->path, id));
}

/* A selected problem: case i of fixture f, or generated problem g (f < 0). */
struct item {
	int f, i, g;
};

/* Every selected problem in run order, then this shard's share of them
 * (--shard k/n keeps items k, k+n, k+2n, ...). */
static int select_items(const struct mtp_run *run, const struct sources *s,
			struct item **out)
{
	int n = 0, cap = 64, kept = 0;
	struct item *v = malloc((size_t)cap * sizeof(*v));

	for (int f = 0; v && f < s->nfx; f++) {
		for (int i = 0; v && i < s->fx[f].n_cases; i++) {
			if (!case_selected(run, s, f, s->fx[f].cases[i].id))
				continue;
			if (n == cap)
				v = realloc(v, (size_t)(cap *= 2) * sizeof(*v));
			if (v)
				v[n++] = (struct item){f, i, -1};
		}
	}
	for (int g = 0; v && g < s->cs.n_specs; g++) {
		if (!mtp_filter_match(run->opts.filters, run->opts.n_filters,
				      "generated", s->cs.gen[g].id))
			continue;
		if (n == cap)
			v = realloc(v, (size_t)(cap *= 2) * sizeof(*v));
		if (v)
			v[n++] = (struct item){-1, -1, g};
	}
	for (int k = 0; v && k < n; k++)
		if (run->opts.shard_n <= 1 || k % run->opts.shard_n == run->opts.shard_i)
			v[kept++] = v[k];
	*out = v;
	return v ? kept : 0;
}

static struct mtp_result *new_result(struct mtp_run *run,
				     const struct mtp_case *c,
				     const char *backend)
{
	struct mtp_result *r = result_add(run);

	if (!r)
		return NULL;
	snprintf(r->file, sizeof(r->file), "%s", c->file);
	snprintf(r->case_id, sizeof(r->case_id), "%s", c->id);
	snprintf(r->backend, sizeof(r->backend), "%s", backend);
	r->op = c->op;
	r->family = c->family;
	r->generated = strcmp(c->file, "generated") == 0;
	make_repro(run, r);
	return r;
}

static void run_case(struct mtp_run *run, struct mtp_fixture *fx, int ci,
		     struct backend_slot *slots, int *idx, int total,
		     const struct mtp_casefile_words *only)
{
	struct mtp_case *c = &fx->cases[ci];
	char err[MTP_ERR_MAX];
	struct mtp_case_call p = {0};
	int nb = run->opts.verify ? 1 : run->opts.n_backends;
	enum mtp_status st = mtp_fixture_load(fx, ci, err, sizeof(err));

	if (!st)
		st = mtp_case_call_init(c, &p, err, sizeof(err));
	for (int b = 0; b < nb; b++) {
		const char *name = run->opts.verify ? "dump" : slots[b].name;
		struct mtp_result *r;

		if (only && !mtp_casefile_backend_ok(only, name))
			continue;
		r = new_result(run, c, name);
		if (!r)
			break;
		if (st) {
			r->verdict = MTP_INVALID;
			snprintf(r->message, sizeof(r->message), "%s", err);
		} else if (run->opts.verify) {
			run_verify(r, c, &p);
		} else if (run->opts.isolate) {
			struct iso_arg a = {run, name, c, &p};

			if (c->expected.n == 0 && reference_outputs(&p))
				snprintf(r->message, sizeof(r->message), "reference: out of memory");
			else
				mtp_isolate_run(run_isolated, &a, run->opts.timeout, r);
		} else if (!slots[b].be) {
			r->verdict = MTP_SKIPPED;
			snprintf(r->message, sizeof(r->message), "%s", slots[b].why);
		} else if (c->expected.n == 0 && reference_outputs(&p)) {
			r->verdict = MTP_CRASHED;
			snprintf(r->message, sizeof(r->message),
				 "reference: out of memory");
		} else {
			run_on_backend(r, slots[b].be, c, &p,
				       c->expected.n ? NULL : p.call.out);
		}
		run->counts[r->verdict]++;
		print_result(run, r, ++*idx, total);
	}
	mtp_case_call_fini(&p);
	mtp_fixture_unload(fx, ci);
}

static void list_selected(const struct mtp_run *run, const struct sources *s,
			  const struct item *it, int n)
{
	for (int k = 0; k < n; k++) {
		if (it[k].f >= 0) {
			const struct mtp_fixture *fx = &s->fx[it[k].f];
			const struct mtp_case *c = &fx->cases[it[k].i];

			fprintf(run->opts.out, "%s:%s  %s %s\n", fx->path, c->id,
				c->op->name, mtp_family_name(c->family));
		} else {
			int g = it[k].g;

			fprintf(run->opts.out, "generated:%s  %s %s  (%s)\n",
				s->cs.gen[g].id, s->cs.specs[g].op->name,
				mtp_family_name(s->cs.specs[g].family), s->cs.gen[g].origin);
		}
	}
}

static void print_summary(const struct mtp_run *run)
{
	FILE *o = run->opts.out;
	bool first = true;

	fprintf(o, "\nmtpcheck %s: %d result%s%s", run->command, run->n,
		run->n == 1 ? "" : "s", run->n ? ":" : "");
	for (int v = 0; v < MTP_VERDICT_COUNT; v++) {
		if (!run->counts[v])
			continue;
		fprintf(o, "%s %d %s", first ? "" : ",", run->counts[v],
			mtp_verdict_name(v));
		first = false;
	}
	if (run->n_invalid_inputs)
		fprintf(o, "; %d input file(s) invalid", run->n_invalid_inputs);
	if (run->n_unavailable)
		fprintf(o, "; %d backend(s) unavailable", run->n_unavailable);
	fprintf(o, "\n");
	for (int i = 0; i < run->n; i++) {
		const struct mtp_result *r = &run->results[i];

		if (r->verdict == MTP_FAILED || r->verdict == MTP_CRASHED ||
		    r->verdict == MTP_TIMEOUT || r->verdict == MTP_INVALID ||
		    r->verdict == MTP_MISTRUSTED)
			fprintf(o, "  %-10s %s:%s [%s]%s%s  repro: %s\n",
				mtp_verdict_name(r->verdict), r->file, r->case_id,
				r->backend, r->diag.diag ? "  diagnosis " : "",
				r->diag.diag ? mtp_diag_info(r->diag.diag)->name : "",
				r->repro);
	}
}

/* Fixture paths and their case-file selections, or --fixtures' paths. */
static bool collect_paths(struct mtp_run *run, struct sources *s, char ***paths,
			  int *npaths, const struct mtp_casefile_fixture ***sel)
{
	const struct mtp_run_opts *o = &run->opts;
	const char *in[MTP_MAX_INPUTS + 64];
	int nin = 0, *origin = NULL;
	char err[MTP_ERR_MAX];

	if (o->case_file) {
		if (mtp_casefile_parse(o->case_file, &s->cf, err, sizeof(err)) ||
		    mtp_casefile_select(&s->cf, o->tags, &s->cs, err, sizeof(err))) {
			fprintf(stderr, "mtpcheck: %s\n", err);
			run->n_usage++;
			return false;
		}
		for (int i = 0; i < s->cs.n_fixtures && nin < MTP_MAX_INPUTS + 64; i++)
			in[nin++] = s->cs.fixtures[i].path;
	}
	for (int i = 0; i < o->n_inputs; i++)
		in[nin++] = o->inputs[i];
	*npaths = expand_paths(in, nin, paths, &origin);
	*sel = calloc((size_t)*npaths + 1, sizeof(**sel));
	for (int k = 0; *sel && k < *npaths; k++)
		(*sel)[k] = o->case_file && origin[k] < s->cs.n_fixtures
			? &s->cs.fixtures[origin[k]] : NULL;
	free(origin);
	return *sel != NULL;
}

static void open_sources(struct mtp_run *run, struct sources *s)
{
	const struct mtp_casefile_fixture **sel = NULL;
	char **paths = NULL, err[MTP_ERR_MAX];
	int npaths = 0;

	if (!collect_paths(run, s, &paths, &npaths, &sel))
		return;
	s->fx = calloc((size_t)npaths + 1, sizeof(*s->fx));
	s->sel = calloc((size_t)npaths + 1, sizeof(*s->sel));
	for (int i = 0; s->fx && s->sel && i < npaths; i++) {
		if (mtp_fixture_open(paths[i], &run->opts.limits, &s->fx[s->nfx], err,
				     sizeof(err)) == MTP_OK) {
			s->sel[s->nfx++] = sel[i];
		} else {
			fprintf(stderr, "mtpcheck: %s\n", err);
			run->n_invalid_inputs++;
		}
	}
	for (int i = 0; i < npaths; i++)
		free(paths[i]);
	free(paths);
	free(sel);
}

static void close_sources(struct sources *s)
{
	for (int f = 0; f < s->nfx; f++)
		mtp_fixture_close(&s->fx[f]);
	free(s->fx);
	free(s->sel);
	mtp_case_selection_fini(&s->cs);
	mtp_casefile_fini(&s->cf);
}

/* A generated problem: made now, run like a one-case fixture, freed. */
static void run_generated(struct mtp_run *run, struct sources *s, int g,
			  struct backend_slot *slots, int *idx, int total)
{
	struct mtp_fixture fx = {.n_cases = 1};
	char err[MTP_ERR_MAX];

	snprintf(fx.path, sizeof(fx.path), "generated");
	fx.cases = calloc(1, sizeof(*fx.cases));
	if (!fx.cases)
		return;
	if (mtp_case_generate(&s->cs.specs[g], &fx.cases[0], err, sizeof(err))) {
		fprintf(stderr, "mtpcheck: %s: %s: %s\n", s->cs.gen[g].origin,
			s->cs.gen[g].id, err);
		run->n_usage++;
	} else {
		fx.cases[0].loaded = true;
		run_case(run, &fx, 0, slots, idx, total, &s->cs.gen[g].backends);
	}
	mtp_fixture_close(&fx);
}

void mtp_run_execute(struct mtp_run *run, const struct mtp_run_opts *o)
{
	struct backend_slot slots[MTP_MAX_BACKENDS];
	struct sources s;
	struct item *it = NULL;
	int idx = 0, total, n;

	memset(slots, 0, sizeof(slots));
	memset(&s, 0, sizeof(s));
	run->opts = *o;
	snprintf(run->command, sizeof(run->command), "%s", o->verify ? "verify" : "run");
	open_sources(run, &s);
	n = select_items(run, &s, &it);
	if (o->list_only) {
		list_selected(run, &s, it, n);
		goto out;
	}
	if (!o->verify && !o->isolate)
		open_backends(run, slots); /* isolated cases open their own */
	for (int b = 0; o->isolate && b < o->n_backends; b++)
		slots[b].name = o->backends[b];
	total = n * (o->verify ? 1 : o->n_backends);
	for (int k = 0; k < n; k++) {
		int f = it[k].f;

		if (f >= 0)
			run_case(run, &s.fx[f], it[k].i, slots, &idx, total,
				 s.sel[f] ? &s.sel[f]->backends : NULL);
		else
			run_generated(run, &s, it[k].g, slots, &idx, total);
	}
	print_summary(run);
out:
	free(it);
	for (int b = 0; b < o->n_backends; b++)
		mtp_backend_close(slots[b].be);
	close_sources(&s);
}

enum mtp_exit mtp_run_exit_code(const struct mtp_run *run)
{
	const int *c = run->counts;

	if (run->n_usage || run->n_invalid_inputs || c[MTP_INVALID])
		return MTP_EXIT_USAGE;
	if (c[MTP_FAILED] || c[MTP_CRASHED] || c[MTP_TIMEOUT])
		return MTP_EXIT_FAIL;
	if (!c[MTP_PASSED] && !c[MTP_MISTRUSTED])
		return MTP_EXIT_UNTESTED;
	return MTP_EXIT_OK;
}

void mtp_run_fini(struct mtp_run *run)
{
	for (int i = 0; i < run->n; i++)
		free(run->results[i].cmp);
	free(run->results);
	memset(run, 0, sizeof(*run));
}
