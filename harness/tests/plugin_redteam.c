/*
 * Misbehaving external backends, one class per build (RT_CLASS, named
 * RT_NAME), for the red-team tests (redteam.py): each implements rmsnorm
 * badly on purpose, in a way that once ended or fooled the harness. The
 * harness must turn each into CRASHED, TIMEOUT or FAILED, never PASSED, and
 * still write valid reports. Outputs are left zero: no class may pass
 * (rt_fds fails its cases on purpose, with the descriptors it found).
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mtp/backend.h"

enum rt_class {
	RT_SEGV,       /* SIGSEGV */
	RT_ABORT,      /* abort() */
	RT_EXIT0,      /* exit(0) in the middle of a case */
	RT_HANG,       /* never returns */
	RT_LIAR,       /* writes zeros to every descriptor, then reports */
	RT_SPRAY,      /* writes zeros to every descriptor, then aborts */
	RT_OVERFLOW,   /* writes 8 bytes past its output */
	RT_HOSTILE,    /* an error text and a device line of invalid UTF-8,
			  controls, markup */
	RT_NASTY,      /* closes stdout, moves, ignores SIGTERM, forks a
			sleeper, then crashes into a handler that exits 0 */
	RT_OPEN_CRASH, /* SIGSEGV in open(), before any case */
	RT_OPEN_EXIT0, /* exit(0) in open(), before any case */
	RT_UNDERFLOW,  /* writes 8 bytes before its output */
	RT_FDS,	       /* lists its descriptors at open and launch, and fails
			  every case with what it found */
	RT_OPEN_ALARM, /* a timer of its own kills it in open(): SIGALRM */
	RT_OPEN_FLAKY, /* SIGSEGV in the first open() of a run (a marker file
			  beside RT_PIDFILE says which), fine after */
};

static void pidfile(pid_t pid)
{
	const char *p = getenv("RT_PIDFILE");
	FILE *f = p ? fopen(p, "a") : NULL;

	if (f) {
		fprintf(f, "%d\n", (int)pid);
		fclose(f);
	}
}

static void on_segv(int sig)
{
	(void)sig;
	_exit(0);
}

/* A pipe end open for mode, close-on-exec. */
static bool fd_fifo(int fd, int mode)
{
	struct stat st;
	int fl = fcntl(fd, F_GETFL), fdf = fcntl(fd, F_GETFD);

	return fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode) && fl >= 0 &&
	       (fl & O_ACCMODE) == mode && fdf >= 0 && (fdf & FD_CLOEXEC);
}

static bool fd_same(int a, int b)
{
	struct stat sa, sb;

	return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 &&
	       sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Appends fmt (with the descriptor and its target) to buf. */
static void fd_add(char *buf, size_t n, const char *fmt, int fd)
{
	char link[64], target[160];
	size_t k = strlen(buf);
	ssize_t t;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	t = readlink(link, target, sizeof(target) - 1);
	target[t > 0 ? t : 0] = 0;
	if (k < n)
		snprintf(buf + k, n - k, fmt, fd, target);
}

/* RT_FDS: what a worker's backend may hold (docs/CI.md, "Guarantees:
 * backends"): 0 reading /dev/null, 1 the same file as 2, 2 (the harness's
 * stderr), and the worker's two pipe ends, close-on-exec: the request pipe
 * read, the report pipe written. Writes "WHEN: as documented (...)" into
 * buf, or names whatever else it finds or misses; true if the descriptors
 * are exactly that set. */
static bool fd_scan(const char *when, char *buf, size_t n)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	char target[64];
	int req = 0, rep = 0, seen = 0, bad = 0, self = d ? dirfd(d) : -1;

	snprintf(buf, n, "%s:", when);
	while (d && (e = readdir(d)) != NULL) {
		char *end;
		long fd = strtol(e->d_name, &end, 10);
		ssize_t t;

		if (*end || end == e->d_name || fd == self)
			continue;
		if (fd == 0) {
			t = readlink("/proc/self/fd/0", target,
				     sizeof(target) - 1);
			target[t > 0 ? t : 0] = 0;
			if (strcmp(target, "/dev/null") == 0 &&
			    (fcntl(0, F_GETFL) & O_ACCMODE) == O_RDONLY)
				seen |= 1;
		} else if (fd == 1) {
			if (fd_same(1, 2))
				seen |= 2;
		} else if (fd == 2) {
			seen |= 4;
		} else if (!req && fd_fifo((int)fd, O_RDONLY)) {
			req = (int)fd;
		} else if (!rep && fd_fifo((int)fd, O_WRONLY)) {
			rep = (int)fd;
		} else {
			bad++;
			fd_add(buf, n, " unexpected fd %d (%s);", (int)fd);
		}
	}
	if (!d) {
		bad++;
		snprintf(buf + strlen(buf), n - strlen(buf),
			 " cannot list /proc/self/fd;");
	} else {
		closedir(d);
	}
	if (!(seen & 1))
		fd_add(buf, n, " fd %d is not /dev/null read-only (%s);", 0);
	if (!(seen & 2))
		fd_add(buf, n, " fd %d is not stderr (%s);", 1);
	if (!(seen & 4))
		snprintf(buf + strlen(buf), n - strlen(buf),
			 " fd 2 is closed;");
	if (!req || !rep)
		snprintf(buf + strlen(buf), n - strlen(buf),
			 " pipes: request %d, report %d;", req, rep);
	if (bad || seen != 7 || !req || !rep)
		return false;
	snprintf(buf + strlen(buf), n - strlen(buf),
		 " as documented (0 /dev/null, 1 = 2, request pipe %d, report "
		 "pipe %d)",
		 req, rep);
	return true;
}

static char fd_at_open[MTP_BACKEND_ERR_MAX / 2];

/* Whether this is the run's first open: creates RT_PIDFILE.flaky if not
 * there yet. */
static bool first_open(void)
{
	const char *p = getenv("RT_PIDFILE");
	char path[4096];
	int fd;

	if (!p)
		return false;
	snprintf(path, sizeof(path), "%s.flaky", p);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static enum mtp_status rt_open(struct mtp_backend *be)
{
	(void)be;
	if (RT_CLASS == RT_OPEN_CRASH)
		raise(SIGSEGV);
	if (RT_CLASS == RT_OPEN_EXIT0)
		exit(0);
	if (RT_CLASS == RT_OPEN_ALARM) {
		alarm(1);
		sleep(10);
	}
	if (RT_CLASS == RT_OPEN_FLAKY && first_open())
		raise(SIGSEGV);
	if (RT_CLASS == RT_FDS)
		fd_scan("open", fd_at_open, sizeof(fd_at_open));
	if (RT_CLASS == RT_NASTY) {
		close(1);
		if (chdir("/") != 0)
			return MTP_ERR_UNAVAILABLE;
		signal(SIGTERM, SIG_IGN);
		signal(SIGSEGV, on_segv);
	}
	return MTP_OK;
}

static enum mtp_status rt_alloc(struct mtp_backend *be, size_t n, void **p)
{
	(void)be;
	*p = calloc(1, n);
	return *p ? MTP_OK : MTP_ERR_NOMEM;
}

static void rt_free(struct mtp_backend *be, void *p)
{
	(void)be;
	free(p);
}

static enum mtp_status rt_copy(struct mtp_backend *be, void *d, const void *s,
			       size_t n)
{
	(void)be;
	memcpy(d, s, n);
	return MTP_OK;
}

static bool rt_supports(struct mtp_backend *be, const struct mtp_call *c)
{
	(void)be;
	return c->op->id == MTP_OP_RMSNORM;
}

static void spray(void)
{
	static const char zeros[64];

	for (int fd = 0; fd <= 1024; fd++)
		if (write(fd, zeros, sizeof(zeros)) < 0)
			continue;
}

static void sleeper(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		for (;;)
			sleep(1);
	}
	pidfile(pid);
}

static enum mtp_status rt_launch(struct mtp_backend *be,
				 const struct mtp_call *c)
{
	char *out = c->out[0].data;
	size_t n = mtp_tensor_nbytes(&c->out[0]);

	switch (RT_CLASS) {
	case RT_SEGV: raise(SIGSEGV); return MTP_OK;
	case RT_ABORT: abort();
	case RT_EXIT0: exit(0);
	case RT_HANG:
		pidfile(getpid());
		for (;;)
			pause();
	case RT_LIAR: spray(); return MTP_OK;
	case RT_SPRAY: spray(); abort();
	case RT_OVERFLOW: memset(out + n, 0x5A, 8); return MTP_OK;
	case RT_HOSTILE:
		/* no NUL anywhere: the harness must stop at the buffer's end */
		for (size_t i = 0; i < sizeof(be->error); i++)
			be->error[i] = "<b>\"&\x01\x1b[31m\xff\xc3(\xed\xa0\x80"
				       "]]></failure>"[i % 30];
		return MTP_ERR_DEVICE;
	case RT_NASTY:
		sleeper();
		raise(SIGSEGV);
		return MTP_OK;
	case RT_OPEN_CRASH:
	case RT_OPEN_EXIT0: return MTP_OK; /* never opened */
	case RT_UNDERFLOW: memset(out - 8, 0x5A, 8); return MTP_OK;
	case RT_FDS: {
		char now[MTP_BACKEND_ERR_MAX / 2];

		fd_scan("launch", now, sizeof(now));
		return mtp_backend_fail(be, MTP_ERR_DEVICE,
					"descriptors at %s; at %s", fd_at_open,
					now);
	}
	}
	return MTP_OK;
}

static void rt_info(struct mtp_backend *be, char *buf, size_t n)
{
	static const char hostile[] = "<b>\"'&\x01\x1b[31m\xff\xc3(\xed\xa0"
				      "\x80</property>]]>\n";

	(void)be;
	memset(buf, 0xff, n); /* no NUL, not UTF-8 */
	if (RT_CLASS != RT_HOSTILE)
		return;
	/* the hostile class: markup, quotes, controls, broken UTF-8, no NUL */
	for (size_t i = 0; i < n; i++)
		buf[i] = hostile[i % (sizeof(hostile) - 1)];
}

static const struct mtp_backend_iface rt = {
	.api_version = MTP_BACKEND_API_VERSION,
	.name = RT_NAME,
	.description = "a misbehaving backend for the red-team tests",
	.open = rt_open,
	.alloc = rt_alloc,
	.free = rt_free,
	.upload = rt_copy,
	.download = rt_copy,
	.supports = rt_supports,
	.launch = rt_launch,
	.device_info = rt_info,
};

const struct mtp_backend_iface *mtp_backend_entry(void)
{
	return &rt;
}
