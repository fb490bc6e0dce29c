/*
 * Frames between the harness and its worker processes. Writes and reads on
 * the harness's side carry a deadline (a hung worker costs its case, never
 * the run); everything a worker sends is bounded by what the case can
 * produce, checked field by field, and its strings are cleaned before use.
 */
#include "wire.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mtp/textsafe.h"

struct wire_hdr {
	uint32_t magic;
	uint16_t version, kind;
	uint64_t len; /* bytes after this header */
};

struct wire_hello {
	int32_t status;
	char why[MTP_ERR_MAX];
	char device[MTP_BACKEND_DEVICE_MAX];
};

struct wire_tensor {
	int32_t dtype, ndim;
	int64_t shape[MTP_MAX_DIMS];
	uint64_t bytes;
	char name[MTP_NAME_MAX];
};

struct wire_report {
	int32_t status;
	uint32_t flags;
	double seconds;
	char error[MTP_BACKEND_ERR_MAX];
	char rule_msg[MTP_RULE_MSG_MAX];
	int32_t n_out, pad;
};

double mtp_wire_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int watched = -1; /* a pidfd of the peer, or -1 */

void mtp_wire_watch(int pidfd)
{
	watched = pidfd;
}

/* Waits until fd is ready for ev: 1; 0 once the deadline has passed; -1 if
 * the watched peer died with nothing left to read (a child it forked may
 * hold the pipe open, so its end alone does not tell). */
static int wait_fd(int fd, short ev, double deadline)
{
	for (;;) {
		struct pollfd pfd[2] = {{fd, ev, 0}, {watched, POLLIN, 0}};
		double left = deadline < 0 ? -1 : deadline - mtp_wire_now();
		int k;

		if (deadline >= 0 && left <= 0)
			return 0;
		k = poll(pfd, watched >= 0 ? 2 : 1,
			 left < 0 ? -1 : (int)(left * 1000) + 1);
		if (k > 0 && pfd[0].revents)
			return 1;
		if (k > 0) { /* the peer is gone: anything still buffered? */
			pfd[0].revents = 0;
			return poll(pfd, 1, 0) > 0 ? 1 : -1;
		}
		if (k < 0 && errno != EINTR)
			return 1; /* let read/write report it */
	}
}

bool mtp_wire_write(int fd, const void *buf, size_t n, double deadline)
{
	const char *p = buf;

	while (n) {
		ssize_t k;

		if (wait_fd(fd, POLLOUT, deadline) != 1)
			return false;
		k = write(fd, p, n);
		if (k < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (k <= 0)
			return false;
		p += k;
		n -= (size_t)k;
	}
	return true;
}

enum mtp_wire_end mtp_wire_read(int fd, void *buf, size_t n, double deadline)
{
	char *p = buf;

	while (n) {
		ssize_t k;

		int w = wait_fd(fd, POLLIN, deadline);

		if (w <= 0)
			return w ? MTP_WIRE_EOF : MTP_WIRE_LATE;
		k = read(fd, p, n);
		if (k < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (k <= 0)
			return MTP_WIRE_EOF;
		p += k;
		n -= (size_t)k;
	}
	return MTP_WIRE_OK;
}

static bool send_hdr(int fd, enum mtp_wire_kind kind, uint64_t len,
		     double deadline)
{
	struct wire_hdr h = {MTP_WIRE_MAGIC, MTP_WIRE_VERSION, (uint16_t)kind,
			     len};

	return mtp_wire_write(fd, &h, sizeof(h), deadline);
}

static enum mtp_wire_end bad(char *why, size_t whyn, const char *what)
{
	snprintf(why, whyn, "%s", what);
	return MTP_WIRE_MALFORMED;
}

/* Reads a header and checks it: kind, and a length of at most max. */
static enum mtp_wire_end recv_hdr(int fd, double deadline,
				  enum mtp_wire_kind kind, uint64_t max,
				  uint64_t *len, char *why, size_t whyn)
{
	struct wire_hdr h;
	enum mtp_wire_end e = mtp_wire_read(fd, &h, sizeof(h), deadline);

	if (e)
		return e;
	if (h.magic != MTP_WIRE_MAGIC)
		return bad(why, whyn, "bad magic number");
	if (h.version != MTP_WIRE_VERSION)
		return bad(why, whyn, "unknown version");
	if (h.kind != kind)
		return bad(why, whyn, "unexpected frame kind");
	if (h.len > max)
		return bad(why, whyn, "frame longer than the case allows");
	*len = h.len;
	return MTP_WIRE_OK;
}

bool mtp_wire_send_hello(int fd, enum mtp_status st, const char *why,
			 const char *device)
{
	struct wire_hello h;

	memset(&h, 0, sizeof(h));
	h.status = (int32_t)st;
	mtp_text_sanitize(h.why, sizeof(h.why), why, MTP_ERR_MAX);
	if (device)
		mtp_text_sanitize(h.device, sizeof(h.device), device,
				  MTP_BACKEND_DEVICE_MAX);
	return send_hdr(fd, MTP_WIRE_HELLO, sizeof(h), -1) &&
	       mtp_wire_write(fd, &h, sizeof(h), -1);
}

enum mtp_wire_end mtp_wire_recv_hello(int fd, double deadline,
				      enum mtp_status *st, char *why,
				      size_t whyn, char *device, size_t devn)
{
	struct wire_hello h;
	uint64_t len;
	enum mtp_wire_end e;

	if (devn)
		device[0] = 0;
	e = recv_hdr(fd, deadline, MTP_WIRE_HELLO, sizeof(h), &len, why, whyn);
	if (!e && len != sizeof(h))
		e = bad(why, whyn, "hello of the wrong length");
	if (!e)
		e = mtp_wire_read(fd, &h, sizeof(h), deadline);
	if (e)
		return e;
	if (h.status < MTP_OK || h.status > MTP_ERR_CORRUPT)
		return bad(why, whyn, "status out of range");
	if (!memchr(h.why, 0, sizeof(h.why)) ||
	    !memchr(h.device, 0, sizeof(h.device)))
		return bad(why, whyn, "unterminated text");
	*st = (enum mtp_status)h.status;
	mtp_text_sanitize(why, whyn, h.why, sizeof(h.why));
	mtp_text_sanitize(device, devn, h.status ? "" : h.device,
			  sizeof(h.device));
	return MTP_WIRE_OK;
}

static void tensor_hdr(struct wire_tensor *w, const char *name,
		       const struct mtp_tensor *t)
{
	memset(w, 0, sizeof(*w));
	w->dtype = (int32_t)t->dtype;
	w->ndim = t->ndim;
	memcpy(w->shape, t->shape, sizeof(w->shape));
	w->bytes = t->data ? mtp_tensor_nbytes(t) : 0;
	snprintf(w->name, sizeof(w->name), "%s", name);
}

/* The case as it is, pointers and all (the worker rebuilds them), then each
 * input: a header and its bytes. */
bool mtp_wire_send_case(int fd, const struct mtp_case *c, double deadline)
{
	uint64_t len = sizeof(*c);
	struct wire_tensor w;

	for (int i = 0; i < c->inputs.n; i++) {
		tensor_hdr(&w, c->inputs.items[i].name, &c->inputs.items[i].t);
		len += sizeof(w) + w.bytes;
	}
	if (!send_hdr(fd, MTP_WIRE_REQUEST, len, deadline) ||
	    !mtp_wire_write(fd, c, sizeof(*c), deadline))
		return false;
	for (int i = 0; i < c->inputs.n; i++) {
		const struct mtp_tensor *t = &c->inputs.items[i].t;

		tensor_hdr(&w, c->inputs.items[i].name, t);
		if (!mtp_wire_write(fd, &w, sizeof(w), deadline) ||
		    !mtp_wire_write(fd, t->data, w.bytes, deadline))
			return false;
	}
	return true;
}

static bool recv_input(int fd, struct mtp_case *c)
{
	struct wire_tensor w;
	struct mtp_named *e;

	if (mtp_wire_read(fd, &w, sizeof(w), -1))
		return false;
	w.name[sizeof(w.name) - 1] = 0;
	e = mtp_list_add(&c->inputs, w.name);
	if (!e || w.ndim < 0 || w.ndim > MTP_MAX_DIMS)
		return false;
	if (!w.bytes) { /* an empty tensor: shape only */
		e->t.dtype = (enum mtp_dtype)w.dtype;
		e->t.ndim = w.ndim;
		memcpy(e->t.shape, w.shape, sizeof(w.shape));
		return true;
	}
	if (mtp_tensor_alloc(&e->t, (enum mtp_dtype)w.dtype, w.ndim, w.shape) ||
	    mtp_tensor_nbytes(&e->t) != w.bytes)
		return false;
	return mtp_wire_read(fd, e->t.data, w.bytes, -1) == MTP_WIRE_OK;
}

bool mtp_wire_recv_case(int fd, struct mtp_case *c)
{
	struct wire_hdr h;
	int n;

	if (mtp_wire_read(fd, &h, sizeof(h), -1) || h.magic != MTP_WIRE_MAGIC ||
	    h.kind != MTP_WIRE_REQUEST || mtp_wire_read(fd, c, sizeof(*c), -1))
		return false;
	n = c->inputs.n;
	/* c->op points into the op table, at the same place in this forked
	 * image; the tensor lists are rebuilt here */
	memset(&c->inputs, 0, sizeof(c->inputs));
	memset(&c->expected, 0, sizeof(c->expected));
	memset(&c->observed, 0, sizeof(c->observed));
	for (int i = 0; i < n; i++)
		if (!recv_input(fd, c))
			return false;
	return true;
}

bool mtp_wire_send_report(int fd, const struct mtp_wire_outcome *o,
			  const struct mtp_tensor *out, int n_out)
{
	struct wire_report r;
	struct wire_tensor w;
	uint64_t len = sizeof(r);

	memset(&r, 0, sizeof(r));
	r.status = (int32_t)o->st;
	r.flags = o->flags;
	r.seconds = o->seconds;
	mtp_text_sanitize(r.error, sizeof(r.error), o->error, sizeof(o->error));
	mtp_text_sanitize(r.rule_msg, sizeof(r.rule_msg), o->rule_msg,
			  sizeof(o->rule_msg));
	r.n_out = out ? n_out : 0;
	for (int i = 0; i < r.n_out; i++)
		len += sizeof(w) + mtp_tensor_nbytes(&out[i]);
	if (!send_hdr(fd, MTP_WIRE_REPORT, len, -1) ||
	    !mtp_wire_write(fd, &r, sizeof(r), -1))
		return false;
	for (int i = 0; i < r.n_out; i++) {
		tensor_hdr(&w, "", &out[i]);
		w.bytes = mtp_tensor_nbytes(&out[i]);
		if (!mtp_wire_write(fd, &w, sizeof(w), -1) ||
		    !mtp_wire_write(fd, out[i].data, w.bytes, -1))
			return false;
	}
	return true;
}

/* The fixed part of a report, checked: every enum in range, every string
 * terminated inside its field, the time a plain number. */
static enum mtp_wire_end check_report(const struct wire_report *r, int n_want,
				      char *why, size_t whyn)
{
	if (r->status < MTP_OK || r->status > MTP_ERR_CORRUPT)
		return bad(why, whyn, "status out of range");
	if (r->flags &
	    ~(MTP_WIRE_SUPPORTED | MTP_WIRE_RULE_CHECKED | MTP_WIRE_RULE_OK))
		return bad(why, whyn, "unknown flags");
	if (!isfinite(r->seconds) || r->seconds < 0 || r->seconds > 1e7)
		return bad(why, whyn, "time out of range");
	if (!memchr(r->error, 0, sizeof(r->error)) ||
	    !memchr(r->rule_msg, 0, sizeof(r->rule_msg)))
		return bad(why, whyn, "unterminated text");
	bool ran = r->status == MTP_OK && (r->flags & MTP_WIRE_SUPPORTED);

	if (r->n_out != (ran ? n_want : 0))
		return bad(why, whyn, "wrong number of outputs");
	return MTP_WIRE_OK;
}

/* One output: its header must be exactly the output the case produces. */
static enum mtp_wire_end recv_output(int fd, double deadline,
				     const struct mtp_tensor *want,
				     struct mtp_tensor *got, char *why,
				     size_t whyn)
{
	struct wire_tensor w;
	enum mtp_wire_end e = mtp_wire_read(fd, &w, sizeof(w), deadline);
	size_t n = mtp_tensor_nbytes(want);

	if (e)
		return e;
	if (w.dtype != (int32_t)want->dtype || w.ndim != want->ndim)
		return bad(why, whyn, "output dtype or rank not the case's");
	for (int d = 0; d < want->ndim; d++)
		if (w.shape[d] != want->shape[d])
			return bad(why, whyn, "output shape not the case's");
	if (w.bytes != n)
		return bad(why, whyn, "output size not the case's");
	*got = *want;
	got->data = NULL;
	if (mtp_tensor_alloc(got, want->dtype, want->ndim, want->shape))
		return bad(why, whyn, "out of memory for an output");
	return n ? mtp_wire_read(fd, got->data, n, deadline) : MTP_WIRE_OK;
}

enum mtp_wire_end mtp_wire_recv_report(int fd, double deadline,
				       const struct mtp_tensor *want,
				       int n_want, struct mtp_wire_outcome *o,
				       struct mtp_tensor *got, char *why,
				       size_t whyn)
{
	struct wire_report r;
	uint64_t len, max = sizeof(r), need = sizeof(r);
	enum mtp_wire_end e;

	for (int i = 0; i < n_want; i++)
		max += sizeof(struct wire_tensor) + mtp_tensor_nbytes(&want[i]);
	e = recv_hdr(fd, deadline, MTP_WIRE_REPORT, max, &len, why, whyn);
	if (!e)
		e = mtp_wire_read(fd, &r, sizeof(r), deadline);
	if (!e)
		e = check_report(&r, n_want, why, whyn);
	if (!e && r.n_out)
		need = max;
	if (!e && len != need)
		e = bad(why, whyn, "frame length disagrees with its content");
	for (int i = 0; !e && i < r.n_out; i++)
		e = recv_output(fd, deadline, &want[i], &got[i], why, whyn);
	if (e)
		return e;
	o->st = (enum mtp_status)r.status;
	o->flags = r.flags;
	o->seconds = r.seconds;
	mtp_text_sanitize(o->error, sizeof(o->error), r.error, sizeof(r.error));
	mtp_text_sanitize(o->rule_msg, sizeof(o->rule_msg), r.rule_msg,
			  sizeof(r.rule_msg));
	return MTP_WIRE_OK;
}
