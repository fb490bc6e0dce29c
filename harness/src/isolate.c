/*
 * Per-case isolation (DESIGN.md "Running at scale"): a case runs in a child
 * process, so a kernel that crashes or hangs becomes a CRASHED or TIMEOUT
 * verdict on that case and the run goes on. The child opens its backend
 * itself (GPU runtimes do not survive fork), fills a result and sends it back
 * through a pipe; the parent waits with a deadline.
 */
#include "isolate.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static bool write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n) {
		ssize_t k = write(fd, p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		p += k;
		n -= (size_t)k;
	}
	return true;
}

/* Reads n bytes before the deadline (monotonic seconds); false on EOF,
 * error or time-out (*late set). */
static bool read_all(int fd, void *buf, size_t n, double deadline, bool *late)
{
	char *p = buf;

	while (n) {
		struct timespec ts;
		struct pollfd pfd = {fd, POLLIN, 0};

		clock_gettime(CLOCK_MONOTONIC, &ts);
		double left = deadline -
			      ((double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec);

		if (left <= 0 || poll(&pfd, 1, (int)(left * 1000) + 1) == 0) {
			*late = true;
			return false;
		}
		ssize_t k = read(fd, p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		p += k;
		n -= (size_t)k;
	}
	return true;
}

static void child(int fd, mtp_isolated_fn fn, void *arg, struct mtp_result *r)
{
	fn(arg, r);
	bool ok = write_all(fd, r, sizeof(*r)) &&
		  write_all(fd, r->cmp, (size_t)r->n_cmp * sizeof(*r->cmp));

	_exit(ok ? 0 : 3);
}

static void verdict_from_status(struct mtp_result *r, int status, bool late,
				double timeout)
{
	if (late) {
		r->verdict = MTP_TIMEOUT;
		snprintf(r->message, sizeof(r->message),
			 "no result within %.0f s (--timeout); the case was "
			 "killed",
			 timeout);
	} else if (WIFSIGNALED(status)) {
		r->verdict = MTP_CRASHED;
		snprintf(r->message, sizeof(r->message),
			 "the case crashed: %s (signal %d)",
			 strsignal(WTERMSIG(status)), WTERMSIG(status));
	} else {
		r->verdict = MTP_CRASHED;
		snprintf(r->message, sizeof(r->message),
			 "the case's process exited with status %d before "
			 "reporting",
			 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	}
	r->n_cmp = 0;
	r->cmp = NULL;
	r->first_bad = -1;
	memset(&r->diag, 0, sizeof(r->diag));
}

void mtp_isolate_run(mtp_isolated_fn fn, void *arg, double timeout,
		     struct mtp_result *r)
{
	int fds[2], status = 0;
	bool late = false, ok;
	struct timespec ts;
	struct mtp_result got;
	pid_t pid;

	fflush(NULL);
	if (pipe(fds) != 0 || (pid = fork()) < 0) {
		fn(arg, r); /* cannot isolate: run in process */
		return;
	}
	if (pid == 0) {
		close(fds[0]);
		child(fds[1], fn, arg, r);
	}
	close(fds[1]);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	double deadline =
		(double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec + timeout;

	ok = read_all(fds[0], &got, sizeof(got), deadline, &late);
	if (ok) {
		got.cmp = got.n_cmp
				  ? calloc((size_t)got.n_cmp, sizeof(*got.cmp))
				  : NULL;
		ok = (!got.n_cmp || got.cmp) &&
		     read_all(fds[0], got.cmp,
			      (size_t)got.n_cmp * sizeof(*got.cmp), deadline,
			      &late);
		if (!ok)
			free(got.cmp);
	}
	if (late)
		kill(pid, SIGKILL);
	close(fds[0]);
	waitpid(pid, &status, 0);
	if (ok)
		*r = got;
	else
		verdict_from_status(r, status, late, timeout);
}
