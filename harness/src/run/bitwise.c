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
