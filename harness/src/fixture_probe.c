/*
 * HDF5 1.10 crashes (segfaults, heap overflows) or loops on some malformed
 * files, inside the library where no check of ours can reach (the fuzzers
 * found dozens: docs/CI.md). So a fixture file is first read whole, every
 * case loaded, in a child process with a memory and time limit; only if that
 * child finishes does the run open the file itself. A file that kills the
 * child is refused with a one-line error, like any other invalid input.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mtp/config.h"
#include "mtp/fixture.h"
#include "mtp/textio.h"

#define PROBE_SECONDS 120

/* The child: the whole read, then the status and message down the pipe. */
static void probe_child(int fd, const char *path, const struct mtp_limits *lim)
{
	struct mtp_fixture fx;
	char err[MTP_ERR_MAX] = "";
	struct rlimit rl;
	/* HDF5 trusts stored sizes: cap what a lying file can make it allocate
	 * (not under ASan, whose shadow memory needs the whole address space) */
	rlim_t cap = (rlim_t)(2 * lim->max_dataset_bytes + (1ull << 30));
	int st;

	if (!MTP_SANITIZE && lim->max_dataset_bytes < (1ull << 40) &&
	    getrlimit(RLIMIT_AS, &rl) == 0 &&
	    (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > cap)) {
		rl.rlim_cur = cap;
		setrlimit(RLIMIT_AS, &rl);
	}
	st = mtp_fixture_open_direct(path, lim, &fx, err, sizeof(err));
	for (int i = 0; !st && i < fx.n_cases; i++) {
		char case_err[MTP_ERR_MAX];

		/* the data is read to see that HDF5 survives it; a case whose
		 * values are invalid is the run's to report, case by case */
		mtp_fixture_load(&fx, i, case_err, sizeof(case_err));
		mtp_fixture_unload(&fx, i);
	}
	if (!st)
		mtp_fixture_close(&fx);
	if (write(fd, &st, sizeof(st)) == (ssize_t)sizeof(st))
		(void)!write(fd, err, strlen(err) + 1);
	_exit(0);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Reads the child's report; false if it died or ran out of time first. */
static bool read_report(int fd, int *st, char *msg, size_t n, bool *late)
{
	char buf[sizeof(int) + MTP_ERR_MAX];
	size_t got = 0;
	double deadline = now() + PROBE_SECONDS;

	while (got < sizeof(buf) - 1) {
		struct pollfd p = {fd, POLLIN, 0};
		double left = deadline - now();

		if (left <= 0 || poll(&p, 1, (int)(left * 1000) + 1) == 0) {
			*late = true;
			return false;
		}
		ssize_t k = read(fd, buf + got, sizeof(buf) - 1 - got);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	if (got < sizeof(int))
		return false;
	buf[got] = 0;
	memcpy(st, buf, sizeof(int));
	snprintf(msg, n, "%s", buf + sizeof(int));
	return true;
}

enum mtp_status mtp_fixture_probe(const char *path,
				  const struct mtp_limits *lim, char *err,
				  size_t errn)
{
	int fds[2], status = 0, st = MTP_OK;
	bool late = false, ok;
	pid_t pid;

	fflush(NULL);
	if (pipe(fds) != 0 || (pid = fork()) < 0)
		return MTP_OK; /* cannot probe: read it in process */
	if (pid == 0) {
		close(fds[0]);
		probe_child(fds[1], path, lim);
	}
	close(fds[1]);
	ok = read_report(fds[0], &st, err, errn, &late);
	if (late)
		kill(pid, SIGKILL);
	close(fds[0]);
	waitpid(pid, &status, 0);
	if (ok)
		return (enum mtp_status)st;
	if (late)
		snprintf(err, errn,
			 "%s: /: the HDF5 library did not finish reading it in "
			 "%d s "
			 "(corrupt file?)",
			 path, PROBE_SECONDS);
	else if (WIFSIGNALED(status))
		snprintf(err, errn,
			 "%s: /: the HDF5 library crashed reading it (%s): a "
			 "corrupt "
			 "or malformed file",
			 path, strsignal(WTERMSIG(status)));
	else
		snprintf(err, errn,
			 "%s: /: reading it failed (out of memory?): a corrupt "
			 "or "
			 "malformed file",
			 path);
	return MTP_ERR_INVALID;
}

enum mtp_status mtp_fixture_open(const char *path, const struct mtp_limits *lim,
				 struct mtp_fixture *fx, char *err, size_t errn)
{
	char why[128];
	int fd = mtp_open_regular(path, why, sizeof(why));
	enum mtp_status st;

	memset(fx, 0, sizeof(*fx));
	if (fd < 0) { /* a FIFO or a device would stall the probe */
		snprintf(err, errn, "%s: /: cannot open the file: %s", path,
			 why);
		return MTP_ERR_IO;
	}
	close(fd);
	st = mtp_fixture_probe(path, lim, err, errn);
	return st ? st : mtp_fixture_open_direct(path, lim, fx, err, errn);
}
