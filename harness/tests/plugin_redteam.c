/*
 * Misbehaving external backends, one class per build (RT_CLASS, named
 * RT_NAME), for the red-team tests (redteam.py): each implements rmsnorm
 * badly on purpose, in a way that once ended or fooled the harness. The
 * harness must turn each into CRASHED, TIMEOUT or FAILED, never PASSED, and
 * still write valid reports. Outputs are left zero: no class may pass.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mtp/backend.h"

enum rt_class {
	RT_SEGV,     /* SIGSEGV */
	RT_ABORT,    /* abort() */
	RT_EXIT0,    /* exit(0) in the middle of a case */
	RT_HANG,     /* never returns */
	RT_LIAR,     /* writes zeros to every descriptor, then reports */
	RT_SPRAY,    /* writes zeros to every descriptor, then aborts */
	RT_OVERFLOW, /* writes 8 bytes past its output */
	RT_HOSTILE,  /* an error text and a device line of invalid UTF-8,
			controls, markup */
	RT_NASTY,    /* closes stdout, moves, ignores SIGTERM, forks a
			sleeper, then crashes into a handler that exits 0 */
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

static enum mtp_status rt_open(struct mtp_backend *be)
{
	(void)be;
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
