/*
 * Worker processes: the default containment of backends. The harness forks
 * a worker per backend; the worker opens the backend, says hello, and then
 * runs one case per request: it rebuilds the case from the request, builds
 * the call, executes it on the backend (guard zones included, backend.c),
 * checks the block contract where it applies, and sends back the outputs.
 * Everything that judges stays in the harness, which reads the report as
 * untrusted input (wire.c) and never lets a worker's end look like success.
 */
#define _GNU_SOURCE /* pipe2, close_range: Linux is where workers run */
#include "worker.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mtp/rules.h"
#include "isolate.h"
#include "runner_int.h"

/* How long a worker that closed its pipe may take to end by itself. */
#define END_GRACE_S 2.0
/* Opening a GPU runtime can take seconds: a short --timeout for cases does
 * not shorten the open below this ($MTP_OPEN_TIMEOUT_S overrides both). */
#define OPEN_MIN_S 60.0

static void execute(struct mtp_backend *be, struct mtp_case *c,
		    struct mtp_case_call *p, struct mtp_wire_outcome *o,
		    struct mtp_tensor *got)
{
	double t0;

	if (!mtp_conv_backend_ok(be, &p->call, o->error, sizeof(o->error)) ||
	    !mtp_backend_supports(be, &p->call))
		return; /* conventions other than v1's are the reference's */
	o->flags = MTP_WIRE_SUPPORTED;
	be->error[0] = 0;
	t0 = mtp_wire_now();
	o->st = mtp_backend_execute(be, &p->call, got);
	o->seconds = mtp_wire_now() - t0;
	be->error[sizeof(be->error) - 1] = 0;
	snprintf(o->error, sizeof(o->error), "%s", be->error);
	if (o->st == MTP_ERR_CORRUPT || !mtp_rule_block_applies(c))
		return;
	o->flags |= MTP_WIRE_RULE_CHECKED;
	if (mtp_rule_block_contract(be, c, o->rule_msg, sizeof(o->rule_msg)))
		o->flags |= MTP_WIRE_RULE_OK;
}

/* One case: false if the report could not be sent. */
static bool serve_case(int rep, struct mtp_backend *be, struct mtp_case *c)
{
	struct mtp_wire_outcome o;
	struct mtp_case_call p;
	struct mtp_tensor *got = NULL;
	char err[MTP_ERR_MAX];
	bool sent;

	memset(&o, 0, sizeof(o));
	if (mtp_case_call_init(c, &p, err, sizeof(err))) {
		o.st = MTP_ERR_INVALID;
		o.flags = MTP_WIRE_SUPPORTED;
		snprintf(o.error, sizeof(o.error), "worker: %.400s", err);
	} else {
		got = calloc((size_t)p.call.n_out + 1, sizeof(*got));
		if (got)
			execute(be, c, &p, &o, got);
		else
			o.st = MTP_ERR_NOMEM;
	}
	bool ran = o.st == MTP_OK && (o.flags & MTP_WIRE_SUPPORTED);

	sent = mtp_wire_send_report(rep, &o, ran ? got : NULL, p.call.n_out);
	for (int i = 0; got && i < p.call.n_out; i++)
		mtp_tensor_fini(&got[i]);
	free(got);
	mtp_case_call_fini(&p);
	return sent;
}

static void serve(int req, int rep, const char *name, const char *lib)
{
	struct mtp_backend *be = NULL;
	char why[MTP_ERR_MAX] = "", device[MTP_BACKEND_DEVICE_MAX] = "";
	enum mtp_status st = mtp_backend_open(name, lib, &be, why, sizeof(why));

	if (!st) /* the backend's own text: the hello cleans it */
		mtp_backend_device_info(be, device, sizeof(device));
	if (!mtp_wire_send_hello(rep, st, why, device) || st)
		_exit(0);
	for (;;) {
		struct mtp_case c;

		memset(&c, 0, sizeof(c));
		if (!mtp_wire_recv_case(req, &c) || !serve_case(rep, be, &c))
			break; /* the harness is done with us */
		mtp_case_fini(&c);
	}
	mtp_backend_close(be);
	_exit(0);
}

bool mtp_worker_running(const struct mtp_worker *w)
{
	return w->pid > 0;
}

void mtp_worker_stop(struct mtp_worker *w)
{
	if (w->pid <= 0)
		return;
	close(w->req); /* a healthy worker reads EOF and leaves */
	close(w->rep);
	mtp_child_end(w->pid, END_GRACE_S);
	if (w->pidfd >= 0)
		close(w->pidfd);
	w->pid = 0;
}

/* The worker is lost: how, from how the read ended and how it died. */
static void lose(struct mtp_worker *w, enum mtp_wire_end e, const char *why,
		 double timeout_s, enum mtp_verdict *v, char *msg, size_t msgn)
{
	int status;

	close(w->req);
	close(w->rep);
	status = mtp_child_end(w->pid, e == MTP_WIRE_EOF ? END_GRACE_S : 0);
	if (w->pidfd >= 0)
		close(w->pidfd);
	w->pid = 0;
	*v = e == MTP_WIRE_LATE ? MTP_TIMEOUT : MTP_CRASHED;
	if (e == MTP_WIRE_LATE)
		snprintf(msg, msgn,
			 "no result within %g s (--timeout); the worker was "
			 "killed",
			 timeout_s);
	else if (e == MTP_WIRE_MALFORMED)
		snprintf(msg, msgn, "malformed report from the worker (%s)",
			 why);
	else
		mtp_child_describe(status, msg, msgn);
}

/* How long an open may take: $MTP_OPEN_TIMEOUT_S seconds where set (the
 * tests' short hangs), else the case timeout but at least OPEN_MIN_S. */
static double open_timeout(double timeout_s)
{
	const char *e = getenv("MTP_OPEN_TIMEOUT_S");
	char *end = NULL;
	double s = e ? strtod(e, &end) : 0;

	if (e && end != e && !*end && s > 0 && s < 1e6)
		return s;
	return timeout_s < OPEN_MIN_S ? OPEN_MIN_S : timeout_s;
}

/* Why a worker was lost while it opened: a signal that ends the run killed
 * it, it hung past the open's time, or how it died (`how`). */
static void open_lost(struct mtp_worker *w, enum mtp_wire_end e,
		      const char *how, char *why, size_t whyn)
{
	int sig = mtp_signals_caught();

	w->lost = true;
	w->hung = !sig && e == MTP_WIRE_LATE;
	if (sig)
		snprintf(why, whyn,
			 "interrupted by signal %d while opening the backend",
			 sig);
	else if (w->hung)
		snprintf(why, whyn,
			 "while opening the backend: it hung, no answer within "
			 "%g s; the worker was killed",
			 w->open_s);
	else
		snprintf(why, whyn, "while opening the backend: %.500s", how);
}

enum mtp_status mtp_worker_start(struct mtp_worker *w, const char *name,
				 const char *lib, double timeout_s,
				 char *device, size_t devn, char *why,
				 size_t whyn)
{
	int req[2], rep[2], keep[2];
	enum mtp_status st = MTP_ERR_DEVICE;
	enum mtp_wire_end e;
	enum mtp_verdict v;
	char how[MTP_ERR_MAX];

	w->pid = 0;
	w->lost = false;
	w->hung = false;
	if (devn)
		device[0] = 0;
	if (pipe2(req, O_CLOEXEC) != 0)
		goto no_pipes;
	if (pipe2(rep, O_CLOEXEC) != 0)
		goto no_rep;
	keep[0] = req[0];
	keep[1] = rep[1];
	w->pid = mtp_child_spawn(keep, 2);
	if (w->pid == 0)
		serve(keep[0], keep[1], name, lib);
	close(req[0]);
	close(rep[1]);
	if (w->pid < 0) {
		close(req[1]);
		close(rep[0]);
		goto no_fork;
	}
	w->req = req[1];
	w->rep = rep[0];
	w->pidfd = (int)syscall(SYS_pidfd_open, w->pid, 0);
	fcntl(w->req, F_SETFL, O_NONBLOCK);
	fcntl(w->rep, F_SETFL, O_NONBLOCK);
	mtp_wire_watch(w->pidfd);
	w->open_s = open_timeout(timeout_s);
	e = mtp_wire_recv_hello(w->rep, mtp_wire_now() + w->open_s, &st, why,
				whyn, device, devn);
	mtp_wire_watch(-1);
	if (e) {
		lose(w, e, why, w->open_s, &v, how, sizeof(how));
		open_lost(w, e, how, why, whyn);
		return MTP_ERR_DEVICE;
	}
	if (st)
		mtp_worker_stop(w);
	return st;
no_rep:
	close(req[0]);
	close(req[1]);
no_pipes:
no_fork:
	snprintf(why, whyn, "cannot start a worker process");
	return st;
}

bool mtp_worker_run(struct mtp_worker *w, const struct mtp_case *c,
		    const struct mtp_tensor *want, int n_want, double timeout_s,
		    struct mtp_wire_outcome *o, struct mtp_tensor *got,
		    enum mtp_verdict *v, char *msg, size_t msgn)
{
	double deadline = mtp_wire_now() + timeout_s;
	char why[200] = "";
	enum mtp_wire_end e = MTP_WIRE_EOF;

	memset(o, 0, sizeof(*o));
	mtp_wire_watch(w->pidfd);
	if (mtp_wire_send_case(w->req, c, deadline))
		e = mtp_wire_recv_report(w->rep, deadline, want, n_want, o, got,
					 why, sizeof(why));
	else if (mtp_wire_now() >= deadline)
		e = MTP_WIRE_LATE;
	mtp_wire_watch(-1);
	if (e == MTP_WIRE_OK)
		return true;
	lose(w, e, why, timeout_s, v, msg, msgn);
	return false;
}
