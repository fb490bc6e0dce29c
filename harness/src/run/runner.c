/*
 * The runner: fixtures x backends -> results. A case is loaded, its call is
 * built from the op table, each backend runs it through the interface (or, for
 * a dump, the reference judges the observed outputs), and the outputs are
 * compared in flow order so that the first wrong one is named.
 */
#include "runner_int.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mtp/backend.h"
#include "mtp/bench.h"
#include "mtp/casefile.h"
#include "mtp/diagnose.h"
#include "mtp/membudget.h"
#include "mtp/rules.h"
#include "mtp/textsafe.h"
#include "refglue/refglue.h"
#include "isolate.h"
#include "cases/cases.h"
#include "determinism.h"
#include "worker.h"

void mtp_run_opts_init(struct mtp_run_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->timeout = MTP_DEFAULT_TIMEOUT;
	o->limits.max_dataset_bytes = 4ull << 30;
	o->seed = MTP_GEN_DEFAULT_SEED;
	o->out = stdout;
	o->det.repeat = 1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static struct mtp_result *result_add(struct mtp_run *run)
{
	if (run->n == run->cap) {
		int cap = run->cap ? 2 * run->cap : 64;
		struct mtp_result *r =
			realloc(run->results, (size_t)cap * sizeof(*r));

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

/* The block contract rule, checked by the worker; a violation fails the
 * case and names the bug. */
static void block_rule_failed(struct mtp_result *r, const char *msg)
{
	if (r->verdict == MTP_PASSED || r->verdict == MTP_FAILED) {
		if (r->verdict == MTP_PASSED || !r->message[0])
			snprintf(r->message, sizeof(r->message),
				 "block contract: %s", msg);
		r->verdict = MTP_FAILED;
	}
	memset(&r->diag, 0, sizeof(r->diag));
	r->diag.diag = MTP_DIAG_HC_STATE_DEFAULTS;
	snprintf(r->diag.text, sizeof(r->diag.text), "%s [%s]: %s; %s",
		 mtp_diag_info(r->diag.diag)->name,
		 mtp_diag_info(r->diag.diag)->section, msg,
		 mtp_diag_info(r->diag.diag)->history);
}

/* The verdict on what a worker reported: the judge runs here. */
static void judge_outcome(struct mtp_result *r,
			  const struct mtp_wire_outcome *o, struct mtp_case *c,
			  struct mtp_case_call *p, const struct mtp_tensor *got,
			  const struct mtp_tensor *ref_out)
{
	r->seconds = o->seconds;
	if (!(o->flags & MTP_WIRE_SUPPORTED)) {
		r->verdict = MTP_UNIMPLEMENTED;
		snprintf(r->message, sizeof(r->message),
			 "backend %s does not implement %s (%s, %s)",
			 r->backend, c->op->name, mtp_family_name(c->family),
			 mtp_dtype_name(p->call.act));
		return;
	}
	if (o->st == MTP_ERR_CORRUPT) {
		r->verdict = MTP_CRASHED;
		snprintf(r->message, sizeof(r->message),
			 "memory corruption: %s", o->error);
		return;
	}
	if (o->st) {
		r->verdict = MTP_FAILED;
		snprintf(r->message, sizeof(r->message), "%s: %s",
			 mtp_status_name(o->st),
			 o->error[0] ? o->error : "no message");
	} else if (mtp_judge_outputs(r, c, p, got, NULL,
				     ref_out ? NULL : &c->expected, ref_out)) {
		r->verdict = MTP_CRASHED;
		snprintf(r->message, sizeof(r->message), "out of memory");
	}
	if ((o->flags & MTP_WIRE_RULE_CHECKED) &&
	    !(o->flags & MTP_WIRE_RULE_OK))
		block_rule_failed(r, o->rule_msg);
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

/* verify --weights-only: the sanity rule alone, which passed; with no head
 * or embedding weight it checked nothing, which never passes. */
static bool run_weights_only(struct mtp_result *r, const struct mtp_case *c,
			     bool weights_only)
{
	long long n = (long long)mtp_weights_checked(&c->inputs);

	if (!weights_only)
		return false;
	r->verdict = n ? MTP_PASSED : MTP_SKIPPED;
	snprintf(r->message, sizeof(r->message),
		 n ? "weights only: the head and embedding weights pass the "
		     "sanity rule (%lld elements)"
		   : "nothing compared: weights only, and the case holds no "
		     "head or embedding weight for the sanity rule",
		 n);
	return true;
}

/* verify: the reference runs on the inputs and judges observed/. */
static void run_verify(struct mtp_result *r, struct mtp_case *c,
		       struct mtp_case_call *p, bool weights_only)
{
	double t0 = now();
	enum mtp_status st = MTP_OK;

	/* SHARED_HEAD_UNINIT from the dump's own parameters: the reference on
	 * garbage weights would agree with the garbage outputs */
	if (mtp_weights_suspect(&c->inputs, r->message, sizeof(r->message))) {
		r->verdict = MTP_FAILED;
		r->diag.diag = MTP_DIAG_SHARED_HEAD_UNINIT;
		snprintf(r->diag.text, sizeof(r->diag.text),
			 "SHARED_HEAD_UNINIT [%s]: weight sanity rule: %.200s; "
			 "%s",
			 mtp_diag_info(MTP_DIAG_SHARED_HEAD_UNINIT)->section,
			 r->message,
			 mtp_diag_info(MTP_DIAG_SHARED_HEAD_UNINIT)->history);
		return;
	}
	if (run_weights_only(r, c, weights_only))
		return;
	st = reference_outputs(p);
	r->seconds = now() - t0;
	if (!st)
		st = mtp_judge_dump(r, c, p, p->call.out);
	if (!st)
		st = mtp_judge_conventions(r, c, p);
	if (st) {
		r->verdict = MTP_CRASHED;
		snprintf(r->message, sizeof(r->message), "reference: %s",
			 mtp_status_name(st));
	}
}

struct backend_slot {
	const char *name;
	struct mtp_worker w;
	enum mtp_status st; /* how its worker opened it: MTP_OK or why not */
	char why[MTP_ERR_MAX];
	bool opened;	/* a worker of it opened it once */
	bool hung;	/* an open hung: not started again */
	bool hang_told; /* a case has the TIMEOUT of it */
	char device[MTP_BACKEND_DEVICE_MAX]; /* from its worker's hello */
};

/* Starts the slot's worker; keeps the device line of the first open, else
 * why it never opened. A worker lost while it opened (a crash, not a
 * failure the backend reported) is started once more, and the console
 * says so: a runtime that fails at random once must not cost every case of
 * the run, and one that fails twice still does. Not after a hang (a second
 * one would cost the open's time again) nor after a SIGINT/SIGTERM (it
 * killed the worker: the run is ending). */
static void slot_start(const struct mtp_run_opts *o, struct backend_slot *s)
{
	char dev[MTP_BACKEND_DEVICE_MAX];

	s->st = mtp_worker_start(&s->w, s->name, o->backend_lib, o->timeout,
				 dev, sizeof(dev), s->why, sizeof(s->why));
	if (s->st != MTP_OK && s->w.lost && !s->w.hung &&
	    !mtp_signals_caught()) {
		fprintf(o->out,
			"backend %s: the worker was lost %s; starting "
			"it once more\n",
			s->name, s->why);
		fflush(o->out);
		s->st = mtp_worker_start(&s->w, s->name, o->backend_lib,
					 o->timeout, dev, sizeof(dev), s->why,
					 sizeof(s->why));
	}
	s->hung = s->st != MTP_OK && s->w.hung;
	if (s->st == MTP_OK && !s->opened) {
		snprintf(s->device, sizeof(s->device), "%s", dev);
		s->opened = true;
	} else if (s->st != MTP_OK && !s->opened) {
		snprintf(s->device, sizeof(s->device), "not opened: %.200s",
			 s->why);
	}
}

/* One worker per backend (none yet with --isolate), until a signal. */
static void open_backends(struct mtp_run *run, struct backend_slot *slots)
{
	const struct mtp_run_opts *o = &run->opts;

	for (int i = 0; i < o->n_backends; i++)
		slots[i].name = o->backends[i];
	for (int i = 0; !o->isolate && i < o->n_backends; i++) {
		struct backend_slot *s = &slots[i];

		if (!mtp_signals_caught())
			slot_start(o, s);
		if (mtp_signals_caught())
			break; /* the run ends: no verdict on this backend */
		if (s->st == MTP_ERR_INVALID) {
			fprintf(stderr, "mtpcheck: --backend %s: %s\n", s->name,
				s->why);
			run->n_usage++;
		} else if (s->st == MTP_ERR_UNAVAILABLE) {
			fprintf(o->out, "backend %s: SKIPPED (%s)\n", s->name,
				s->why);
			run->n_unavailable++;
		} else if (s->st) {
			fprintf(o->out, "backend %s: %s (%s)\n", s->name,
				s->hung ? "TIMEOUT" : "CRASHED", s->why);
		}
	}
}

/* A backend whose open hung: its first case is the TIMEOUT, every later
 * one is SKIPPED without a worker (each would cost the open's time). */
static void hung_verdict(struct backend_slot *s, struct mtp_result *r)
{
	r->verdict = s->hang_told ? MTP_SKIPPED : MTP_TIMEOUT;
	if (s->hang_told)
		snprintf(r->message, sizeof(r->message),
			 "backend %s hung in open (%g s); not started again",
			 s->name, s->w.open_s);
	else
		snprintf(r->message, sizeof(r->message), "%s", s->why);
	s->hang_told = true;
}

/* A worker ready for the next case: started per case with --isolate,
 * restarted after a loss; else r says why there is none. */
static bool worker_ready(const struct mtp_run *run, struct backend_slot *s,
			 struct mtp_result *r)
{
	const struct mtp_run_opts *o = &run->opts;

	if (!s->hung &&
	    (o->isolate || (s->st == MTP_OK && !mtp_worker_running(&s->w))))
		slot_start(o, s);
	if (s->st == MTP_OK)
		return true;
	if (s->hung) {
		hung_verdict(s, r);
		return false;
	}
	r->verdict = s->st == MTP_ERR_UNAVAILABLE ? MTP_SKIPPED
		     : s->st != MTP_ERR_INVALID	  ? MTP_CRASHED
		     : o->isolate		  ? MTP_INVALID
						  : MTP_SKIPPED;
	snprintf(r->message, sizeof(r->message), "%s", s->why);
	return false;
}

/* Runs a case on a backend's worker and judges what comes back. */
static void run_on_worker(struct mtp_run *run, struct backend_slot *s,
			  struct mtp_result *r, struct mtp_case *c,
			  struct mtp_case_call *p)
{
	const struct mtp_tensor *ref_out = c->expected.n ? NULL : p->call.out;
	struct mtp_tensor *got =
		calloc((size_t)p->call.n_out + 1, sizeof(*got));
	struct mtp_wire_outcome o;
	enum mtp_verdict v;

	if (!got) {
		r->verdict = MTP_CRASHED;
		snprintf(r->message, sizeof(r->message), "out of memory");
		return;
	}
	if (!worker_ready(run, s, r))
		goto out; /* before the reference's outputs: they cost minutes
			   * on the nightly suite, for nothing here */
	if (ref_out && reference_outputs(p)) {
		r->verdict = MTP_CRASHED;
		snprintf(r->message, sizeof(r->message),
			 "reference: out of memory");
		goto out;
	}
	if (mtp_worker_run(&s->w, c, p->call.out, p->call.n_out,
			   run->opts.timeout, &o, got, &v, r->message,
			   sizeof(r->message))) {
		judge_outcome(r, &o, c, p, got, ref_out);
		mtp_determinism_check(&run->opts, &s->w, r, c, p, got);
	} else
		r->verdict = v;
	if (run->opts.isolate || o.st == MTP_ERR_CORRUPT)
		mtp_worker_stop(&s->w); /* a corrupted heap is not reused */
out: /* a worker the signal killed, in the case or in its open */
	if (mtp_signals_caught() &&
	    (r->verdict == MTP_CRASHED || r->verdict == MTP_TIMEOUT)) {
		r->verdict = MTP_SKIPPED;
		snprintf(r->message, sizeof(r->message),
			 "the run was interrupted (signal %d) before this "
			 "case finished",
			 mtp_signals_caught());
	}
	for (int i = 0; i < p->call.n_out; i++)
		mtp_tensor_fini(&got[i]);
	free(got);
}

static struct mtp_result *
new_result(struct mtp_run *run, const struct mtp_case *c, const char *backend)
{
	struct mtp_result *r = result_add(run);

	if (!r)
		return NULL;
	snprintf(r->case_id, sizeof(r->case_id), "%s", c->id);
	snprintf(r->backend, sizeof(r->backend), "%s", backend);
	r->op = c->op;
	r->family = c->family;
	r->generated = strcmp(c->file, "generated") == 0;
	mtp_result_origin(run, r, c->file);
	return r;
}

static void run_case(struct mtp_run *run, struct mtp_fixture *fx, int ci,
		     struct backend_slot *slots, int *idx, int total,
		     const struct mtp_casefile_words *only)
{
	struct mtp_case *c = &fx->cases[ci];
	char err[MTP_ERR_MAX], note[240] = "";
	struct mtp_case_call p = {0};
	int nb = run->opts.verify ? 1 : run->opts.n_backends;
	enum mtp_status st;

	fx->weights_dir = run->opts.weights_dir;
	st = mtp_fixture_load(fx, ci, err, sizeof(err));

	if (!st)
		st = mtp_captured_prepare(c, run->opts.full_logits, note,
					  sizeof(note), err, sizeof(err));
	if (!st)
		st = mtp_case_call_init(c, &p, err, sizeof(err));
	for (int b = 0; b < nb && !mtp_signals_caught(); b++) {
		const char *name = run->opts.verify ? "dump" : slots[b].name;
		struct mtp_result *r;

		if (only && !mtp_casefile_backend_ok(only, name))
			continue;
		r = new_result(run, c, name);
		if (!r)
			break;
		snprintf(r->note, sizeof(r->note), "%s", note);
		if (st) { /* UNAVAILABLE: a weight by reference, no --weights */
			r->verdict = st == MTP_ERR_UNAVAILABLE ? MTP_SKIPPED
							       : MTP_INVALID;
			snprintf(r->message, sizeof(r->message), "%s", err);
		} else if (run->opts.verify) {
			run_verify(r, c, &p, run->opts.weights_only);
		} else {
			run_on_worker(run, &slots[b], r, c, &p);
		}
		run->counts[r->verdict]++;
		mtp_print_result(run, r, ++*idx, total);
	}
	mtp_case_call_fini(&p);
	mtp_fixture_unload(fx, ci);
}

/* No backend of the run could be opened (no device here): a generated
 * problem is SKIPPED without being made, which at the nightly suite's
 * sizes would cost a minute per shard for nothing. */
static bool skip_ungenerated(struct mtp_run *run, struct sources *s, int g,
			     struct backend_slot *slots, int *idx, int total)
{
	struct mtp_case c = {.op = s->cs.specs[g].op,
			     .family = s->cs.specs[g].family};

	if (run->opts.isolate || run->opts.verify ||
	    run->n_unavailable < run->opts.n_backends)
		return false;
	snprintf(c.file, sizeof(c.file), "generated");
	snprintf(c.id, sizeof(c.id), "%s", s->cs.gen[g].id);
	for (int b = 0; b < run->opts.n_backends; b++) {
		struct mtp_result *r;

		if (!mtp_casefile_backend_ok(&s->cs.gen[g].backends,
					     slots[b].name))
			continue;
		r = new_result(run, &c, slots[b].name);
		if (!r)
			break;
		worker_ready(run, &slots[b],
			     r); /* SKIPPED: why it did not open */
		run->counts[r->verdict]++;
		mtp_print_result(run, r, ++*idx, total);
	}
	return true;
}

/* A generated problem: made now, run like a one-case fixture, freed. */
static void run_generated(struct mtp_run *run, struct sources *s, int g,
			  struct backend_slot *slots, int *idx, int total)
{
	struct mtp_fixture fx = {.n_cases = 1};
	char err[MTP_ERR_MAX];

	if (skip_ungenerated(run, s, g, slots, idx, total))
		return;
	snprintf(fx.path, sizeof(fx.path), "generated");
	fx.cases = calloc(1, sizeof(*fx.cases));
	if (!fx.cases)
		return;
	if (mtp_case_generate(&s->cs.specs[g], &fx.cases[0], err,
			      sizeof(err))) {
		fprintf(stderr, "mtpcheck: %s: %s: %s\n", s->cs.gen[g].origin,
			s->cs.gen[g].id, err);
		run->n_usage++;
	} else {
		fx.cases[0].loaded = true;
		run_case(run, &fx, 0, slots, idx, total,
			 &s->cs.gen[g].backends);
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
	snprintf(run->command, sizeof(run->command), "%s",
		 o->verify ? "verify" : "run");
	mtp_sources_open(run, &s);
	n = run->n_usage ? 0 : mtp_sources_select(run, &s, &it);
	if (o->list_only) {
		mtp_sources_list(run, &s, it, n);
		goto out;
	}
	mtp_signals_begin();
	if (!o->verify)
		open_backends(run, slots);
	total = n * (o->verify ? 1 : o->n_backends);
	for (int k = 0; k < n && !mtp_signals_caught(); k++) {
		int f = it[k].f;

		if (f >= 0)
			run_case(run, &s.fx[f], it[k].i, slots, &idx, total,
				 s.sel[f] ? &s.sel[f]->backends : NULL);
		else
			run_generated(run, &s, it[k].g, slots, &idx, total);
	}
	mtp_signals_hold(); /* the reports of what ran are always written */
	for (int b = 0; b < o->n_backends; b++) {
		mtp_worker_stop(&slots[b].w);
		if (!o->verify &&
		    !mtp_run_set_device(run, o->backends[b], slots[b].device))
			fprintf(stderr, "mtpcheck: out of memory\n");
	}
	run->signal = mtp_signals_caught();
	mtp_signals_end();
	if (run->signal)
		fprintf(stderr,
			"mtpcheck: stopped by signal %d; the reports hold the "
			"cases that finished\n",
			run->signal);
	mtp_print_summary(run);
out:
	free(it);
	mtp_sources_close(&s);
}

enum mtp_exit mtp_run_exit_code(const struct mtp_run *run)
{
	const int *c = run->counts;

	if (run->signal) /* as a shell reports a death by that signal */
		return (enum mtp_exit)(128 + run->signal);
	if (run->n_usage || run->n_invalid_inputs || c[MTP_INVALID])
		return MTP_EXIT_USAGE;
	if (c[MTP_FAILED] || c[MTP_CRASHED] || c[MTP_TIMEOUT])
		return MTP_EXIT_FAIL;
	if (!c[MTP_PASSED] && !c[MTP_MISTRUSTED] &&
	    !(!run->n && run->bench && run->bench->n_points))
		return MTP_EXIT_UNTESTED; /* a report of bench files only: 0 */
	return MTP_EXIT_OK;
}

bool mtp_run_set_device(struct mtp_run *run, const char *name,
			const char *device)
{
	struct mtp_run_device *d = NULL;

	for (int i = 0; i < run->n_devices && !d; i++)
		if (!strcmp(run->devices[i].name, name))
			d = &run->devices[i];
	if (!d) {
		void *v = realloc(run->devices, (size_t)(run->n_devices + 1) *
							sizeof(*run->devices));

		if (!v)
			return false;
		run->devices = v;
		d = &run->devices[run->n_devices++];
		mtp_text_sanitize(d->name, sizeof(d->name), name,
				  strlen(name) + 1);
	}
	mtp_text_sanitize(d->device, sizeof(d->device), device ? device : "",
			  device ? strlen(device) + 1 : 1);
	return true;
}
