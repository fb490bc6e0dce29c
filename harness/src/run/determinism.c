/*
 * What the determinism modes share (determinism.h): one more call of a case
 * on its worker with its outcome turned into the result's verdict, the
 * distance of two elements in ulps, an element shown with its bits, and
 * the result's note.
 */
#include "determinism.h"

#include <stdio.h>
#include <string.h>

/* Exponent and mantissa bits of the float dtypes. */
static bool float_layout(enum mtp_dtype dt, int *e, int *m)
{
	switch (dt) {
	case MTP_F64: *e = 11, *m = 52; return true;
	case MTP_F32: *e = 8, *m = 23; return true;
	case MTP_F16: *e = 5, *m = 10; return true;
	case MTP_BF16: *e = 8, *m = 7; return true;
	default: return false;
	}
}

static uint64_t load_bits(const void *buf, size_t i, size_t sz)
{
	uint64_t v = 0;

	memcpy(&v, (const char *)buf + i * sz, sz); /* little endian hosts */
	return v;
}

int64_t mtp_elem_ulps(enum mtp_dtype dt, const void *a, size_t i, const void *b,
		      size_t j)
{
	size_t sz = mtp_dtype_size(dt);
	uint64_t x = load_bits(a, i, sz), y = load_bits(b, j, sz);
	int e, m;

	if (x == y)
		return 0;
	if (!float_layout(dt, &e, &m))
		return INT64_MAX;
	uint64_t sign = 1ull << (e + m), inf = ((1ull << e) - 1) << m;
	uint64_t mx = x & (sign - 1), my = y & (sign - 1);

	if (mx > inf || my > inf)
		return INT64_MAX; /* a NaN, and the bits differ */
	/* on one line of integers: -0 and +0 meet at 0 */
	int64_t ox = x & sign ? -(int64_t)mx : (int64_t)mx;
	int64_t oy = y & sign ? -(int64_t)my : (int64_t)my;
	int64_t d = ox > oy ? ox - oy : oy - ox;

	return d ? d : 1;
}

void mtp_elem_describe(const struct mtp_tensor *t, size_t i, char *buf,
		       size_t n)
{
	size_t sz = mtp_dtype_size(t->dtype);

	snprintf(buf, n, "%.9g (0x%0*llx)", mtp_load(t->dtype, t->data, i),
		 (int)(2 * sz), (unsigned long long)load_bits(t->data, i, sz));
}

void mtp_note_add(struct mtp_result *r, const char *text)
{
	size_t k = strlen(r->note);

	snprintf(r->note + k, sizeof(r->note) - k, "%s%s", k ? "; " : "", text);
}

/* An extra call that did not give outputs: false, r says why. */
static bool extra_call_ok(bool reported, enum mtp_verdict lost,
			  const struct mtp_wire_outcome *wo, const char *what,
			  const char *msg, struct mtp_result *r)
{
	if (!reported) {
		r->verdict = lost;
		snprintf(r->message, sizeof(r->message), "%s: %.500s", what,
			 msg);
	} else if (!(wo->flags & MTP_WIRE_SUPPORTED)) {
		r->verdict = MTP_FAILED;
		snprintf(r->message, sizeof(r->message),
			 "%s: the backend no longer implements the case", what);
	} else if (wo->st) {
		r->verdict =
			wo->st == MTP_ERR_CORRUPT ? MTP_CRASHED : MTP_FAILED;
		snprintf(r->message, sizeof(r->message), "%s: %s: %.400s", what,
			 mtp_status_name(wo->st),
			 wo->error[0] ? wo->error : "no message");
	}
	return reported && (wo->flags & MTP_WIRE_SUPPORTED) && !wo->st;
}

/* Calls case c once more on w: false, with r saying why, if no outputs
 * came back. */
bool mtp_extra_call(const struct mtp_run_opts *o, struct mtp_worker *w,
		    const struct mtp_case *c, const struct mtp_tensor *want,
		    int n_want, struct mtp_tensor *got, const char *what,
		    struct mtp_result *r)
{
	struct mtp_wire_outcome wo;
	enum mtp_verdict v = MTP_CRASHED;
	char msg[MTP_ERR_MAX] = "the worker is gone";
	bool rep = mtp_worker_running(w) &&
		   mtp_worker_run(w, c, want, n_want, o->timeout, &wo, got, &v,
				  msg, sizeof(msg));

	return extra_call_ok(rep, v, &wo, what, msg, r);
}
