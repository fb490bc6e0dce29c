/*
 * Contained child processes (DESIGN.md "Running at scale"): backends run in
 * worker processes (worker.c), one per backend or, with --isolate, one per
 * case. What a child may do to the harness is limited here: it has its own
 * process group (killing it kills whatever it started), inherits no
 * descriptor but its two pipe ends, cannot write on the console's stdout,
 * and dies with the harness. A signal that ends the run kills every live
 * child group first.
 */
#define _GNU_SOURCE /* pipe2, close_range: Linux is where workers run */
#include "isolate.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_CHILDREN 64

static volatile pid_t live[MAX_CHILDREN];
static volatile sig_atomic_t caught;
static struct sigaction old_int, old_term, old_pipe;
static int depth;

static void on_signal(int sig)
{
	caught = sig;
	for (int i = 0; i < MAX_CHILDREN; i++) {
		if (live[i] > 0) {
			kill(-live[i], SIGKILL);
			kill(live[i], SIGKILL);
		}
	}
	signal(sig, SIG_DFL); /* a second one ends the harness at once */
}

void mtp_signals_begin(void)
{
	struct sigaction sa;

	if (depth++)
		return;
	caught = 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, &old_pipe);
}

void mtp_signals_end(void)
{
	if (--depth)
		return;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGPIPE, &old_pipe, NULL);
}

int mtp_signals_caught(void)
{
	return caught;
}

static void track(pid_t pid, pid_t was)
{
	for (int i = 0; i < MAX_CHILDREN; i++) {
		if (live[i] == was) {
			live[i] = pid;
			return;
		}
	}
}

/* Moves keep[] out of the way, closes everything else. */
static void child_fds(int *keep, int n)
{
	struct rlimit rl;
	int top = 1000, fd;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 1024)
		top = (int)rl.rlim_cur - 1 - n;
	for (int i = 0; i < n; i++) {
		int hi = fcntl(keep[i], F_DUPFD_CLOEXEC, top + i);

		if (hi < 0)
			_exit(127);
		keep[i] = hi;
	}
	if (close_range(3, (unsigned)top - 1, 0) != 0)
		for (fd = 3; fd < top; fd++)
			close(fd);
	close_range((unsigned)(top + n), ~0u, 0);
	fd = open("/dev/null", O_RDONLY);
	if (fd >= 0 && fd != 0) {
		dup2(fd, 0);
		close(fd);
	}
	dup2(2, 1); /* the console's stdout is the harness's */
}

/* A backend that leaks memory is the OOM killer's first choice, not the
 * harness: its case becomes CRASHED (signal 9) and the run goes on. */
static void oom_first(void)
{
	int fd = open("/proc/self/oom_score_adj", O_WRONLY);

	if (fd < 0)
		return;
	if (write(fd, "1000", 4) != 4) {
		/* not allowed here: the worker stays an ordinary process */
	}
	close(fd);
}

pid_t mtp_child_spawn(int *keep, int n)
{
	pid_t parent = getpid(), pid;

	fflush(NULL);
	pid = fork();
	if (pid != 0) {
		if (pid > 0) {
			setpgid(pid, pid);
			track(pid, 0);
		}
		return pid;
	}
	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127); /* the harness is gone already */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	oom_first();
	child_fds(keep, n);
	return 0;
}

int mtp_child_end(pid_t pid, double grace_s)
{
	struct timespec ms = {0, 1000000};
	int status = 0;

	for (double t = 0; t < grace_s; t += 1e-3) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			goto reaped;
		nanosleep(&ms, NULL);
	}
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
reaped:
	kill(-pid, SIGKILL); /* whatever it left behind in its group */
	track(0, pid);
	return status;
}

void mtp_child_describe(int status, char *buf, size_t n)
{
	if (WIFSIGNALED(status))
		snprintf(buf, n, "the backend crashed: %s (signal %d)",
			 strsignal(WTERMSIG(status)), WTERMSIG(status));
	else
		snprintf(buf, n,
			 "the backend ended the process (exit status %d) "
			 "before reporting",
			 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}
