/*
 * --repeat N --bitwise (as benchdnn's bitwise mode): a case that passed runs
 * N - 1 more times on the same worker, each time on fresh copies of its
 * inputs (the worker rebuilds them from the request), and every output must
 * have the bits of the first run. A difference fails the case as
 * NONDETERMINISTIC with the number of elements that differ: tolerances
 * cannot see a kernel whose last bit changes from call to call, and a
 * speculative decoder that compares drafts with the target does.
 */
#include "determinism.h"

#include <stdio.h>
#include <stdlib.h>
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

/* Run `run` against run 1: the elements whose bits differ, counted. */
static void count_diffs(const struct mtp_case_call *p,
			const struct mtp_tensor *first,
			const struct mtp_tensor *again, int run, int of,
			struct mtp_result *r)
{
	long long n_diff = 0, n_all = 0;
	char a[64] = "", b[64] = "", where[200] = "";

	for (int k = 0; k < p->call.n_out; k++) {
		const struct mtp_tensor *t = &first[k], *u = &again[k];
		size_t n = t->data && u->data ? (size_t)mtp_tensor_numel(t) : 0;

		n_all += (long long)n;
		for (size_t i = 0; i < n; i++) {
			if (!mtp_elem_ulps(t->dtype, t->data, i, u->data, i))
				continue;
			if (!n_diff++) {
				mtp_elem_describe(t, i, a, sizeof(a));
				mtp_elem_describe(u, i, b, sizeof(b));
				snprintf(where, sizeof(where),
					 "output '%s' element %zu: %s, then %s",
					 p->sig->out[k].name, i, a, b);
			}
		}
	}
	if (!n_diff)
		return;
	r->verdict = MTP_FAILED;
	snprintf(r->message, sizeof(r->message),
		 "run %d of %d differs from run 1 in %lld of %lld elements "
		 "(first: %s)",
		 run, of, n_diff, n_all, where);
	memset(&r->diag, 0, sizeof(r->diag));
	r->diag.diag = MTP_DIAG_NONDETERMINISTIC;
	r->diag.ratio = (double)n_diff;
	snprintf(r->diag.text, sizeof(r->diag.text),
		 "NONDETERMINISTIC [%s]: %lld of %lld elements differ between "
		 "runs on the same inputs (--repeat %d --bitwise); %s",
		 mtp_diag_info(MTP_DIAG_NONDETERMINISTIC)->section, n_diff,
		 n_all, of, mtp_diag_info(MTP_DIAG_NONDETERMINISTIC)->history);
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

static bool passing(const struct mtp_result *r)
{
	return r->verdict == MTP_PASSED || r->verdict == MTP_MISTRUSTED;
}

static void repeat_check(const struct mtp_run_opts *o, struct mtp_worker *w,
			 struct mtp_result *r, struct mtp_case *c,
			 const struct mtp_case_call *p,
			 const struct mtp_tensor *got)
{
	int n_out = p->call.n_out, of = o->det.repeat;
	struct mtp_tensor *again = calloc((size_t)n_out + 1, sizeof(*again));
	char what[64], note[120];

	if (!again) {
		r->verdict = MTP_CRASHED;
		snprintf(r->message, sizeof(r->message), "out of memory");
		return;
	}
	for (int run = 2; run <= of && passing(r); run++) {
		snprintf(what, sizeof(what), "run %d of %d (--repeat)", run,
			 of);
		if (mtp_extra_call(o, w, c, p->call.out, n_out, again, what, r))
			count_diffs(p, got, again, run, of, r);
		for (int k = 0; k < n_out; k++)
			mtp_tensor_fini(&again[k]);
	}
	if (passing(r)) {
		snprintf(note, sizeof(note),
			 "bitwise: %d runs on fresh inputs, the same bits", of);
		mtp_note_add(r, note);
	}
	free(again);
}

void mtp_determinism_check(const struct mtp_run_opts *o, struct mtp_worker *w,
			   struct mtp_result *r, struct mtp_case *c,
			   const struct mtp_case_call *p,
			   const struct mtp_tensor *got)
{
	if (passing(r) && o->det.bitwise && o->det.repeat > 1)
		repeat_check(o, w, r, c, p, got);
	if (passing(r) && o->det.invariance)
		mtp_invariance_check(o, w, r, c, p, got);
}
