/*
 * Rules on a fixture's case that need its signature or its data, beyond the
 * shapes mtp_case_check verifies: a golden holds every output the op
 * produces (so no step of a chain goes unjudged), observed outputs are stored
 * in the dtype the op declares, tolerance overrides are finite, non-negative,
 * rtol <= 1, and never so wide that any output would pass, and the case fits
 * the memory budget. Called by fixture_read.c when a file is opened and when
 * a case is loaded.
 */
#include "fixture_guard.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mtp/membudget.h"

static bool dtype_ok(const struct mtp_tspec *s, enum mtp_dtype got,
		     enum mtp_dtype act)
{
	if (s->cls == MTP_TC_PARAM)
		return mtp_dtype_is_float(got);
	if (s->cls == MTP_TC_TOKEN)
		return got == MTP_I64 || got == MTP_I32;
	if (s->cls ==
	    MTP_TC_LOGITS) /* logits_dtype: checked with conventions */
		return got == MTP_F32 || got == MTP_BF16;
	return got == mtp_tspec_dtype(s, act);
}

static int out_index(const struct mtp_signature *sig, const char *name)
{
	for (int i = 0; i < sig->n_out; i++)
		if (strcmp(sig->out[i].name, name) == 0)
			return i;
	return -1;
}

static enum mtp_status observed_dtypes(const struct mtp_case *c,
				       const struct mtp_signature *sig,
				       enum mtp_dtype act, char *why, size_t n)
{
	for (int i = 0; i < c->observed.n; i++) {
		const struct mtp_named *e = &c->observed.items[i];
		int k = out_index(sig, e->name);

		if (k < 0 || dtype_ok(&sig->out[k], e->t.dtype, act))
			continue;
		snprintf(why, n,
			 "observed/%s: stored as %s, but the case declares %s",
			 e->name, mtp_dtype_name(e->t.dtype),
			 mtp_dtype_name(mtp_tspec_dtype(&sig->out[k], act)));
		return MTP_ERR_INVALID;
	}
	return MTP_OK;
}

static enum mtp_status golden_complete(const struct mtp_case *c,
				       const struct mtp_signature *sig,
				       char *why, size_t n)
{
	if (c->expected.n == 0)
		return MTP_OK; /* a dump: observed/ is judged by the reference */
	for (int k = 0; k < sig->n_out; k++) {
		if (mtp_list_find(&c->expected, sig->out[k].name) ||
		    mtp_captured_judged_input(c, sig->out[k].name))
			continue; /* a captured block_in is judged as an input */
		snprintf(why, n,
			 "expected/%s: missing (a golden holds every output "
			 "of %s%s)",
			 sig->out[k].name, c->op->name,
			 strchr(sig->out[k].name, '/') ? ", every step" : "");
		return MTP_ERR_INVALID;
	}
	return MTP_OK;
}

static enum mtp_status overrides_sane(const struct mtp_tensor_list *l,
				      const char *part, char *why, size_t n)
{
	for (int i = 0; i < l->n; i++) {
		const struct mtp_tol_override *o = &l->items[i].tol;

		if (!o->set || (isfinite(o->rtol) && isfinite(o->atol) &&
				o->rtol >= 0 && o->atol >= 0 && o->rtol <= 1))
			continue;
		snprintf(why, n,
			 "%s/%s: tolerance override rtol %g atol %g: both must "
			 "be finite and >= 0, and rtol <= 1",
			 part, l->items[i].name, o->rtol, o->atol);
		return MTP_ERR_INVALID;
	}
	return MTP_OK;
}

enum mtp_status mtp_fixture_rules_scan(const struct mtp_case *c,
				       const struct mtp_signature *sig,
				       const struct mtp_dims *dims,
				       enum mtp_dtype act, char *why, size_t n)
{
	enum mtp_status st = golden_complete(c, sig, why, n);

	if (!st)
		st = observed_dtypes(c, sig, act, why, n);
	if (!st)
		st = overrides_sane(&c->expected, "expected", why, n);
	if (!st)
		st = overrides_sane(&c->observed, "observed", why, n);
	if (!st)
		st = mtp_mem_check(mtp_mem_case_bytes(c, sig, dims, act),
				   mtp_mem_budget(), why, n);
	return st;
}

enum mtp_status mtp_fixture_rules_load(const struct mtp_case *c, char *why,
				       size_t n)
{
	for (int i = 0; i < c->expected.n; i++) {
		const struct mtp_named *e = &c->expected.items[i];
		int64_t ne = mtp_tensor_numel(&e->t);
		double mx = 0;

		if (!e->tol.set || !mtp_dtype_is_float(e->t.dtype) || ne == 0)
			continue;
		for (int64_t k = 0; k < ne; k++) {
			double v = fabs(
				mtp_load(e->t.dtype, e->t.data, (size_t)k));

			if (isfinite(v) && v > mx)
				mx = v;
		}
		if (e->tol.atol < mx)
			continue;
		snprintf(why, n,
			 "expected/%s: atol %g is at or above the tensor's "
			 "largest magnitude %g: any output near zero would "
			 "pass (a vacuous check)",
			 e->name, e->tol.atol, mx);
		return MTP_ERR_INVALID;
	}
	return MTP_OK;
}
