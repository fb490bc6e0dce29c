/*
 * mtpcheck bench's two processes. The backends (CUDA, an embedded Python, a
 * plugin) run in a child that streams what it measures through a pipe; this
 * process opens no backend and alone writes the JSON, the pages and the exit
 * code. A backend that ends its process (os._exit(0), a segfault) costs the
 * problem and backend in flight, which become CRASHED, never the report: a
 * new child takes up the bench after it, skipping what is done. Before
 * this split the process that wrote FILE.tmpPID embedded Python, and an
 * adapter's os._exit(0) left the temporary file and exit status 0.
 *
 * Frames on the pipe: a header, then a payload of len bytes. What the
 * child is doing (opening a backend, a step of a problem) is announced
 * before it does it, so that a death is charged to it.
 */
#define _GNU_SOURCE /* open_memstream */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mtp/meta.h"
#include "mtp/runner.h"

#include "run/run.h" /* mtp_child_describe */
#include "bench_int.h"

enum {
	F_OPEN = 'O',
	F_HEAD = 'H',
	F_STEP = 'S',
	F_ROW = 'R',
	F_DONE = 'D', /* a problem and backend done without a row (FAILED) */
	F_END = 'E',
};

struct frame {
	int kind, problem, backend;
	int counts[3]; /* failures, SLOWER, AMBIGUOUS since the last frame */
	int opened, sig;
	unsigned len;
};

/* ---- the child's side -------------------------------------------------- */

static void send_frame(struct bench *b, int kind, int backend, const void *a,
		       size_t na, const void *c, size_t nc)
{
	struct frame f = {.kind = kind,
			  .problem = b->problem,
			  .backend = backend,
			  .opened = b->opened,
			  .sig = mtp_signals_caught(),
			  .len = (unsigned)(na + nc)};
	const int now[3] = {b->failures, b->n_slower, b->n_ambiguous};
	const void *part[3] = {&f, a, c};
	size_t n[3] = {sizeof(f), na, nc};

	for (int k = 0; k < 3; k++) {
		f.counts[k] = now[k] - b->sent[k];
		b->sent[k] = now[k];
	}
	fflush(stdout); /* what the console shows survives a death after */
	for (int k = 0; k < 3; k++)
		for (size_t off = 0; off < n[k];) {
			ssize_t w =
				write(b->sup_fd, (const char *)part[k] + off,
				      n[k] - off);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				_exit(3); /* the parent is gone */
			off += (size_t)w;
		}
}

/* A fresh memory stream for the JSON text of the next frame. */
static void json_restart(struct bench *b)
{
	if (b->json)
		fclose(b->json);
	free(b->json_buf);
	b->json_buf = NULL;
	b->json = open_memstream(&b->json_buf, &b->json_len);
}

void mtp_bench_sup_open(struct bench *b, int i)
{
	send_frame(b, F_OPEN, i, NULL, 0, NULL, 0);
}

bool mtp_bench_sup_step(struct bench *b, int i, const char *op,
			const char *shape)
{
	if (i >= 0 && b->skip[(size_t)b->problem * MAXL + (size_t)i])
		return false;
	send_frame(b, F_STEP, i, op, strlen(op) + 1, shape, strlen(shape) + 1);
	return true;
}

void mtp_bench_sup_row(struct bench *b, int i, const struct mtp_bench_row *k)
{
	if (!k) {
		send_frame(b, F_DONE, i, NULL, 0, NULL, 0);
		return;
	}
	fflush(b->json);
	send_frame(b, F_ROW, i, k, sizeof(*k), b->json_buf, b->json_len);
	json_restart(b);
}

/* The probes of the run, per backend: "inputs" of the JSON file. */
void mtp_bench_json_inputs(const struct bench *b, FILE *f)
{
	fputs(",\"inputs\":{\"probes\":[", f);
	for (int i = 0, n = 0; i < b->n_backends; i++) {
		if (!b->be[i])
			continue;
		fprintf(f, "%s{\"backend\":\"%s\",\"copy_gb_per_s\":%.4g",
			n++ ? "," : "", b->backends[i], b->peak[i] / 1e9);
		if (b->fma_peak[i] > 0)
			fprintf(f,
				",\"fma_gflop_per_s\":%.4g,\"fma_ymm_gflop_"
				"per_s\":%.4g,\"fma_zmm_gflop_per_s\":%.4g,"
				"\"fma_threads\":%d",
				b->fma_peak[i] / 1e9, b->fma.ymm / 1e9,
				b->fma.zmm / 1e9, b->fma.threads);
		fputc('}', f);
	}
	fputs("]}", f);
}

/* The JSON file's opening, up to "rows":[, into f. */
static void write_head(const struct bench *b, FILE *f)
{
	const char *devices[MAXL];

	for (int i = 0; i < b->n_backends; i++)
		devices[i] = b->be[i] ? b->device[i] : NULL;
	fputs("{\"format\":\"mtpcheck-bench\",\"format_version\":2,", f);
	mtp_meta_json(f, NULL, b->seed, b->backends, b->n_backends, devices);
	mtp_bench_json_inputs(b, f);
	fputs(",\"rows\":[\n", f);
}

void mtp_bench_sup_head(struct bench *b)
{
	json_restart(b);
	write_head(b, b->json);
	fflush(b->json);
	send_frame(b, F_HEAD, -1, b->json_buf, b->json_len, NULL, 0);
	json_restart(b);
}

static void child(struct bench *b, int fd)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	b->sup_fd = fd;
	b->json = NULL; /* the parent's file: never written here */
	b->sent[0] = b->failures;
	b->sent[1] = b->n_slower;
	b->sent[2] = b->n_ambiguous;
	json_restart(b);
	b->child_run(b);
	send_frame(b, F_END, -1, NULL, 0, NULL, 0);
	_exit(0);
}

/* ---- the parent's side ------------------------------------------------- */

struct watch {
	int problem, backend; /* what the child is doing; problem -1: none */
	bool opening;
	char op[48], shape[64];
	bool ended;
	int sig;
};

static bool read_all(int fd, void *p, size_t n)
{
	for (size_t off = 0; off < n;) {
		ssize_t r = read(fd, (char *)p + off, n - off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		off += (size_t)r;
	}
	return true;
}

/* A signal to this process ends the child too, after its row. */
static void wait_readable(int fd, pid_t pid, bool *forwarded)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	while (poll(&p, 1, 100) <= 0)
		if (mtp_signals_caught() && !*forwarded) {
			kill(pid, mtp_signals_caught());
			*forwarded = true;
		}
}

static void take_row(struct bench *b, const struct frame *f, char *pay)
{
	struct mtp_bench_row k;

	memcpy(&k, pay, sizeof(k));
	b->skip[(size_t)f->problem * MAXL + (size_t)f->backend] = 1;
	if (b->json_out.f)
		fprintf(b->json_out.f, "%s%.*s", b->json_rows++ ? ",\n" : "",
			(int)(f->len - sizeof(k)), pay + sizeof(k));
	if (!b->html_path && !b->csv_path && !b->md_path)
		return;
	if (b->n_kept == b->cap_kept) {
		int cap = b->cap_kept ? 2 * b->cap_kept : 64;
		struct mtp_bench_row *n =
			realloc(b->kept, (size_t)cap * sizeof(*n));

		if (!n)
			return;
		b->kept = n;
		b->cap_kept = cap;
	}
	b->kept[b->n_kept++] = k;
}

static void take_frame(struct bench *b, const struct frame *f, char *pay,
		       struct watch *w)
{
	b->failures += f->counts[0];
	b->n_slower += f->counts[1];
	b->n_ambiguous += f->counts[2];
	w->sig = f->sig;
	if (f->sig)
		b->child_sig = f->sig;
	switch (f->kind) {
	case F_OPEN:
		w->opening = true;
		w->backend = f->backend;
		break;
	case F_HEAD:
		w->opening = false;
		b->opened = f->opened;
		if (!b->head_done && b->json_out.f)
			fwrite(pay, 1, f->len, b->json_out.f);
		b->head_done = true;
		break;
	case F_STEP:
		w->problem = f->problem;
		w->backend = f->backend;
		snprintf(w->op, sizeof(w->op), "%s", pay);
		snprintf(w->shape, sizeof(w->shape), "%s",
			 pay + strlen(pay) + 1);
		break;
	case F_ROW: take_row(b, f, pay); break;
	case F_DONE:
		b->skip[(size_t)f->problem * MAXL + (size_t)f->backend] = 1;
		break;
	case F_END: w->ended = true; break;
	}
}

/* Reads the child's frames until it ends or dies; false on a frame that
 * cannot be one of ours (the child is then treated as dead). */
static bool drain(struct bench *b, int fd, pid_t pid, struct watch *w)
{
	bool forwarded = false;
	struct frame f;

	for (;;) {
		char *pay;

		wait_readable(fd, pid, &forwarded);
		if (!read_all(fd, &f, sizeof(f)))
			return true;
		if (f.len > (64u << 20) ||
		    (f.kind == F_ROW && f.len < sizeof(struct mtp_bench_row)) ||
		    (f.kind == F_STEP && f.len < 2) ||
		    (f.kind == F_OPEN &&
		     (f.backend < 0 || f.backend >= b->n_backends)) ||
		    (f.kind != F_HEAD && f.kind != F_OPEN && f.kind != F_END &&
		     (f.problem < 0 || f.problem >= b->n_problems ||
		      f.backend >= b->n_backends)))
			return false;
		pay = calloc(1, (size_t)f.len + 2);
		if (!pay || !read_all(fd, pay, f.len)) {
			free(pay);
			return true; /* cut short: the child died writing */
		}
		if ((f.kind == F_ROW || f.kind == F_DONE) && f.backend < 0) {
			free(pay);
			return false;
		}
		take_frame(b, &f, pay, w);
		free(pay);
	}
}

/* Charges a child's death to what it was doing; false if it was doing
 * nothing that can be skipped (then nothing is retried). */
static bool charge_death(struct bench *b, const struct watch *w, int status)
{
	char why[160];
	struct bench_crash *c;

	mtp_child_describe(status, why, sizeof(why));
	b->failures++;
	if (w->opening) {
		b->no_open[w->backend] = true;
		printf("backend %s: CRASHED while opening (%s)\n",
		       b->backends[w->backend], why);
		return true;
	}
	if (w->problem < 0) {
		printf("mtpcheck bench: the bench process died outside any "
		       "problem (%s)\n",
		       why);
		return false;
	}
	printf("%-24s %-18s %-8s CRASHED: %s; the bench goes on in a new "
	       "process\n",
	       w->op, w->shape, w->backend < 0 ? "-" : b->backends[w->backend],
	       why);
	if (w->backend < 0)
		b->resume = w->problem + 1; /* outside the backends: skip it */
	else
		b->skip[(size_t)w->problem * MAXL + (size_t)w->backend] = 1;
	if (b->resume < w->problem)
		b->resume = w->problem;
	c = b->n_crashes < BENCH_MAX_CRASHES ? &b->crashes[b->n_crashes++]
					     : NULL;
	if (c) {
		snprintf(c->op, sizeof(c->op), "%s", w->op);
		snprintf(c->shape, sizeof(c->shape), "%s", w->shape);
		c->backend = w->backend;
		snprintf(c->why, sizeof(c->why), "%s", why);
	}
	return true;
}

/* One child: forked, drained, reaped. Returns false when the bench is
 * over (it ended, a signal came, or its death cannot be skipped). */
static bool one_child(struct bench *b)
{
	struct watch w = {.problem = -1, .backend = -1};
	int fds[2], status = 0;
	pid_t pid;
	bool sane;

	fflush(stdout);
	if (b->json_out.f)
		fflush(b->json_out.f); /* nothing of it for the child to flush */
	if (pipe(fds) != 0 || (pid = fork()) < 0) {
		printf("mtpcheck bench: cannot start the bench process: %s\n",
		       strerror(errno));
		b->failures++;
		return false;
	}
	if (pid == 0) {
		close(fds[0]);
		child(b, fds[1]);
	}
	close(fds[1]);
	sane = drain(b, fds[0], pid, &w);
	close(fds[0]);
	if (!sane || !w.ended)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (w.ended)
		return false;
	if (w.sig || mtp_signals_caught())
		return false; /* stopped by the signal, not a crash */
	return charge_death(b, &w, status);
}

/* "crashed": the problems and backends that died in the bench process. */
static void write_tail(const struct bench *b, FILE *f, int sig)
{
	fprintf(f, "\n]");
	if (sig)
		fprintf(f, ",\"interrupted_by_signal\":%d", sig);
	if (b->n_crashes) {
		fputs(",\"crashed\":[", f);
		for (int i = 0; i < b->n_crashes; i++) {
			const struct bench_crash *c = &b->crashes[i];

			fputs(i ? ",{\"op\":" : "{\"op\":", f);
			mtp_json_str(f, c->op);
			fputs(",\"shape\":", f);
			mtp_json_str(f, c->shape);
			fputs(",\"backend\":", f);
			mtp_json_str(f, c->backend < 0
						? ""
						: b->backends[c->backend]);
			fputs(",\"error\":", f);
			mtp_json_str(f, c->why);
			fputc('}', f);
		}
		fputc(']', f);
	}
	fprintf(f, "}\n");
}

/* --html, --csv, --md from the kept rows; 1 if one could not be written. */
int mtp_bench_write_pages(const struct bench *b)
{
	char err[MTP_ERR_MAX];
	int bad = 0;

	if (b->html_path &&
	    mtp_bench_html(b->kept, b->n_kept, b->html_path, err, sizeof(err)))
		bad = fprintf(stderr, "mtpcheck bench: %s\n", err) > 0;
	if (b->csv_path && mtp_bench_table(b->kept, b->n_kept, b->csv_path,
					   false, err, sizeof(err)))
		bad = fprintf(stderr, "mtpcheck bench: %s\n", err) > 0;
	if (b->md_path && mtp_bench_table(b->kept, b->n_kept, b->md_path, true,
					  err, sizeof(err)))
		bad = fprintf(stderr, "mtpcheck bench: %s\n", err) > 0;
	return bad;
}

/* Runs the bench in children until it is done, then closes the JSON. */
int mtp_bench_supervise(struct bench *b, void (*run)(struct bench *b))
{
	char err[MTP_ERR_MAX];
	int sig;

	b->child_run = run;
	b->n_problems = b->n_ops * b->n_h * b->n_t;
	b->skip = calloc((size_t)b->n_problems * MAXL + 1, 1);
	b->crashes = calloc(BENCH_MAX_CRASHES, sizeof(*b->crashes));
	if (!b->skip || !b->crashes) {
		fprintf(stderr, "mtpcheck bench: out of memory\n");
		return 2;
	}
	while (one_child(b))
		;
	sig = mtp_signals_caught() ? mtp_signals_caught() : b->child_sig;
	if (sig)
		printf("\nmtpcheck bench: interrupted by signal %d after the "
		       "rows above\n",
		       sig);
	if (b->json_out.f) {
		if (!b->head_done)
			write_head(b, b->json_out.f); /* no backend opened */
		write_tail(b, b->json_out.f, sig);
		if (mtp_atomic_close(&b->json_out, err, sizeof(err))) {
			fprintf(stderr, "mtpcheck bench: %s\n", err);
			b->failures++;
		}
	}
	free(b->skip);
	free(b->crashes);
	return sig;
}
