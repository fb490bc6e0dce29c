/*
 * Internal to the runner: a backend in a worker process (worker.c). The
 * worker opens its backend itself (GPU runtimes do not survive fork), then
 * runs the cases the harness sends it and reports the outputs; the reference
 * and the judge stay in the harness. A worker that crashes, hangs, ends
 * itself or sends a malformed report costs the case in flight (CRASHED or
 * TIMEOUT) and is gone; the runner starts a fresh one for the next case.
 */
#ifndef MTP_WORKER_H
#define MTP_WORKER_H

#include <stdbool.h>
#include <sys/types.h>

#include "mtp/runner.h"
#include "wire.h"

struct mtp_worker {
	pid_t pid;     /* 0: not running */
	int req, rep;  /* the harness's ends of its pipes */
	int pidfd;     /* tells when it ends, or -1 */
	bool lost;     /* the last start lost the worker while it opened */
	bool hung;     /* ... because its open took longer than open_s */
	double open_s; /* how long the last start waited for the open */
};

/* Starts a worker for backend `name` (lib: --backend-lib) and waits up to
 * timeout_s (at least 60 s; $MTP_OPEN_TIMEOUT_S where set) for it to open
 * the backend. MTP_OK, with the backend's device
 * line as its worker sent it (cleaned, at most devn bytes) in device, or
 * the backend's own open status (MTP_ERR_INVALID: a usage error;
 * MTP_ERR_UNAVAILABLE: no device), or MTP_ERR_DEVICE when the worker
 * crashed, hung (w->hung too) or lied while opening, or a SIGINT/SIGTERM
 * killed it there (w->lost is then true); why says which (device is then
 * ""). */
enum mtp_status mtp_worker_start(struct mtp_worker *w, const char *name,
				 const char *lib, double timeout_s,
				 char *device, size_t devn, char *why,
				 size_t whyn);
void mtp_worker_stop(struct mtp_worker *w);
bool mtp_worker_running(const struct mtp_worker *w);

/* Runs case c, whose call has outputs want[0..n_want), within timeout_s.
 * true: o is the backend's outcome and, if it ran the case, got[] its
 * outputs. false: the worker is gone; *v (CRASHED or TIMEOUT) and msg say
 * how. */
bool mtp_worker_run(struct mtp_worker *w, const struct mtp_case *c,
		    const struct mtp_tensor *want, int n_want, double timeout_s,
		    struct mtp_wire_outcome *o, struct mtp_tensor *got,
		    enum mtp_verdict *v, char *msg, size_t msgn);

#endif
