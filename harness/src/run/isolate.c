/*
 * Contained child processes (ARCHITECTURE.md "Running at scale"): backends run in
 * worker processes (worker.c), one per backend or, with --isolate, one per
 * case. What a child may do to the harness is limited here: it has its own
 * process group (killing it kills whatever it started), inherits no
 * descriptor but its two pipe ends, cannot write on the console's stdout,
 * and dies with the harness. A signal that ends the run kills every live
 * child group first.
 */
#define _GNU_SOURCE /* pipe2, close_range, dup3: Linux is where workers run */
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
static volatile sig_atomic_t caught, held;
static struct sigaction old_int, old_term, old_pipe;
static int depth;

static struct timespec caught_at;

/* The first SIGINT/SIGTERM ends the run after the case in flight (its
 * workers killed, the reports closed); a second one a second or more later
 * ends the harness at once, unless all that is left is writing the reports
 * (mtp_signals_hold). One inside that second is the same request
 * delivered twice: GNU timeout signals the command and then its whole
 * process group, and a handler that ran between the two would otherwise
 * die of the second with its report half written (seen on the H200: a
 * bench JSON cut at 16384 bytes). */
static void on_signal(int sig)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (caught) {
		double dt = (double)(now.tv_sec - caught_at.tv_sec) +
			    1e-9 * (double)(now.tv_nsec - caught_at.tv_nsec);

		if (dt < 1.0 || held)
			return;
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	caught = sig;
	caught_at = now;
	for (int i = 0; i < MAX_CHILDREN; i++) {
		if (live[i] > 0) {
			kill(-live[i], SIGKILL);
			kill(live[i], SIGKILL);
		}
	}
}

void mtp_signals_begin(void)
{
	struct sigaction sa;

	if (depth++)
		return;
	caught = 0;
	held = 0;
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

void mtp_signals_hold(void)
{
	held = 1;
}

/* Writes v in decimal at p; returns the end. */
static char *put_uint(char *p, unsigned long v)
{
	char d[24];
	int n = 0;

	do
		d[n++] = (char)('0' + v % 10);
	while ((v /= 10) && n < (int)sizeof(d));
	while (n)
		*p++ = d[--n];
	return p;
}

/* A child killed by SIGALRM says first who sent it (the harness never
 * does: its deadlines are its own poll timeouts): a timer of its own
 * (alarm, setitimer: code 128, SI_KERNEL), or kill() from a process. Then
 * it dies of the signal as it would have. Only async-signal-safe calls. */
static void on_alarm(int sig, siginfo_t *si, void *ctx)
{
	char line[160], *p = line;
	static const char a[] = "mtpcheck worker: SIGALRM (si_code ",
			  b[] = ", sent by pid ",
			  c[] = "); the worker dies of it\n";

	(void)ctx;
	memcpy(p, a, sizeof(a) - 1);
	p += sizeof(a) - 1;
	if (si->si_code < 0) {
		*p++ = '-';
		p = put_uint(p, (unsigned long)-(long)si->si_code);
	} else {
		p = put_uint(p, (unsigned long)si->si_code);
	}
	memcpy(p, b, sizeof(b) - 1);
	p += sizeof(b) - 1;
	p = put_uint(p, si->si_code == SI_USER || si->si_code == SI_QUEUE
				? (unsigned long)si->si_pid
				: 0);
	memcpy(p, c, sizeof(c) - 1);
	p += sizeof(c) - 1;
	if (write(2, line, (size_t)(p - line)) < 0) {
		/* nothing else to say it with */
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static void trace_alarm(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_alarm;
	sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
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

/* Closes lo..hi (close_range, or one by one below `lim` where the kernel
 * lacks it). */
static void close_span(unsigned lo, unsigned hi, unsigned lim)
{
	if (lo > hi || close_range(lo, hi, 0) == 0)
		return;
	for (unsigned fd = lo; fd <= hi && fd < lim; fd++)
		close((int)fd);
}

/* Closes every descriptor from 3 up but keep[0..n). */
static void close_others(const int *keep, int n, unsigned lim)
{
	unsigned lo = 3;

	for (;;) {
		unsigned next = ~0u; /* the lowest kept descriptor >= lo */

		for (int i = 0; i < n; i++)
			if ((unsigned)keep[i] >= lo && (unsigned)keep[i] < next)
				next = (unsigned)keep[i];
		if (next == ~0u)
			break;
		if (next > lo)
			close_span(lo, next - 1, lim);
		lo = next + 1;
	}
	close_span(lo, ~0u, lim);
}

/* Moves keep[] to top, top+1, ... (close-on-exec) and closes everything else
 * but 0, 1 and 2. Whatever the harness holds at those numbers (a descriptor
 * it inherited, say) is closed, never a pipe: every other descriptor goes
 * first, then the kept ones move down to 3.. (free now), then up. */
static void child_fds(int *keep, int n)
{
	struct rlimit rl;
	unsigned lim = 1u << 20;
	int top = 1000, fd;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		if (rl.rlim_cur < 1024)
			top = (int)rl.rlim_cur - 1 - n;
		if (rl.rlim_cur < lim)
			lim = (unsigned)rl.rlim_cur;
	}
	if (top < 4 + n)
		_exit(127); /* no room above the low copies */
	close_others(keep, n, lim);
	for (int i = 0; i < n; i++) { /* to 3 + n at most: n are open */
		int lo = fcntl(keep[i], F_DUPFD_CLOEXEC, 3);

		if (lo < 0)
			_exit(127);
		close(keep[i]);
		keep[i] = lo;
	}
	for (int i = 0; i < n; i++) {
		if (dup3(keep[i], top + i, O_CLOEXEC) < 0)
			_exit(127);
		close(keep[i]);
		keep[i] = top + i;
	}
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
	trace_alarm();
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
