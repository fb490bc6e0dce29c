/*
 * Judging a case's outputs: every output the judge has is compared in flow
 * order under its tolerance (tokens through the logits' margin), the first
 * that fails is named, a doubtful golden makes the case MISTRUSTED, and a
 * failure is matched against the known bugs (diagnose.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge.h"
#include "ops/ops.h"

static bool any_input_special(const struct mtp_case *c, bool nonzero_only)
{
	for (int i = 0; i < c->inputs.n; i++) {
		const struct mtp_tensor *t = &c->inputs.items[i].t;

		if (!mtp_dtype_is_float(t->dtype))
			continue;
		for (int64_t k = 0; k < mtp_tensor_numel(t); k++) {
			double v = mtp_load(t->dtype, t->data, (size_t)k);

			if (nonzero_only ? v != 0 : !isfinite(v))
				return true;
		}
	}
	return false;
}

static bool all_zero(const struct mtp_tensor *t)
{
	if (!mtp_dtype_is_float(t->dtype))
		return false;
	for (int64_t k = 0; k < mtp_tensor_numel(t); k++)
		if (mtp_load(t->dtype, t->data, (size_t)k) != 0)
			return false;
	return mtp_tensor_numel(t) > 0;
}

static bool has_special(const struct mtp_tensor *t)
{
	if (!mtp_dtype_is_float(t->dtype))
		return false;
	for (int64_t k = 0; k < mtp_tensor_numel(t); k++)
		if (!isfinite(mtp_load(t->dtype, t->data, (size_t)k)))
			return true;
	return false;
}

/* The check itself is doubtful (benchdnn's "mistrusted"): every golden
 * output is all zeros while the inputs are not, so a backend that writes
 * nothing would pass; or a golden holds NaN/Inf while every input is finite. */
static bool mistrusted(const struct mtp_case *c,
		       const struct mtp_tensor_list *judge, char *why, size_t n)
{
	bool zeros = judge->n > 0;

	for (int i = 0; i < judge->n; i++) {
		const struct mtp_named *e = &judge->items[i];

		zeros = zeros && all_zero(&e->t);
		if (has_special(&e->t) && !any_input_special(c, false)) {
			snprintf(why, n,
				 "golden '%s' holds NaN/Inf while every input "
				 "is finite",
				 e->name);
			return true;
		}
	}
	if (zeros && any_input_special(c, true)) {
		snprintf(why, n,
			 "every golden output is all zeros while the inputs "
			 "are not");
		return true;
	}
	return false;
}

static void describe_failure(struct mtp_result *r)
{
	const struct mtp_cmp *m = &r->cmp[r->first_bad];
	char where[160];

	if (!m->shape_ok) {
		snprintf(r->message, sizeof(r->message), "%s: %s", m->name,
			 m->shape_msg);
		return;
	}
	mtp_cmp_where(m, where, sizeof(where));
	if (m->tol.budget) {
		snprintf(r->message, sizeof(r->message),
			 "%s: got %.9g want %.9g; normwise error %.3g (max "
			 "%.3g), worst "
			 "element %.3g x its bound (%.3g of the RMS); %lld of "
			 "%lld elements off",
			 where, m->worst_got, m->worst_want, m->rel_norm,
			 m->tol.norm_max, m->headroom, m->tol.elem_max,
			 (long long)m->n_bad, (long long)m->n);
		return;
	}
	snprintf(r->message, sizeof(r->message),
		 "%s: got %.9g want %.9g, err %.3g = %.3g x threshold "
		 "(rtol %.3g atol %.3g, %s); %lld of %lld elements off",
		 where, m->worst_got, m->worst_want,
		 fabs(m->worst_got - m->worst_want), m->headroom, m->tol.rtol,
		 m->tol.atol, m->tol.origin, (long long)m->n_bad,
		 (long long)m->n);
}

/* Views of a named list in signature order (data NULL where absent); a
 * captured block input stands for the output it is judged as. */
static void by_signature(const struct mtp_case *c,
			 const struct mtp_case_call *p,
			 const struct mtp_tensor_list *l, struct mtp_tensor *v)
{
	for (int k = 0; k < p->sig->n_out; k++) {
		const struct mtp_named *n =
			mtp_list_find(l, p->sig->out[k].name);

		if (!n)
			n = mtp_captured_judged_input(c, p->sig->out[k].name);
		memset(&v[k], 0, sizeof(v[k]));
		if (n)
			v[k] = n->t;
	}
}

/* The logits beside a token output ("step.1/token" -> "step.1/logits"). */
static int logits_of(const struct mtp_case_call *p, int k)
{
	const char *name = p->sig->out[k].name, *slash = strrchr(name, '/');
	char l[MTP_NAME_MAX];

	snprintf(l, sizeof(l), "%.*slogits",
		 slash ? (int)(slash - name + 1) : 0, name);
	for (int j = 0; j < p->sig->n_out; j++)
		if (strcmp(p->sig->out[j].name, l) == 0)
			return j;
	return -1;
}

/* Bound on a logit's error: twice the largest error the logits' own
 * threshold allows, since both sides of a margin may move. */
static double logit_bound(const struct mtp_cmp *lc,
			  const struct mtp_tensor *want)
{
	double ss = 0, mx = 0;
	int64_t n = mtp_tensor_numel(want);

	for (int64_t i = 0; i < n; i++) {
		double v = mtp_load(want->dtype, want->data, (size_t)i);

		if (isfinite(v)) {
			ss += v * v;
			mx = fmax(mx, fabs(v));
		}
	}
	if (lc->tol.budget)
		return 2 * lc->tol.elem_max * sqrt(ss / (double)(n ? n : 1));
	return 2 * (lc->tol.atol + lc->tol.rtol * mx);
}

static void compare_one(struct mtp_result *r, const struct mtp_case *c,
			const struct mtp_case_call *p, int k,
			const struct mtp_tensor *have,
			const struct mtp_tensor *want,
			const struct mtp_tol_override *ovr)
{
	const struct mtp_tspec *s = &p->sig->out[k];
	struct mtp_cmp *m = &r->cmp[r->n_cmp];
	struct mtp_tol tol;
	int lk = s->cls == MTP_TC_TOKEN ? logits_of(p, k) : -1;

	if (lk >= 0 && want[lk].data) {
		mtp_tol_for(&p->call, s->name, want[lk].dtype, NULL, &tol);
		struct mtp_cmp lc = {.tol = tol};

		mtp_compare_tokens(s->name, &have[k], &want[k], &want[lk],
				   logit_bound(&lc, &want[lk]), m);
	} else {
		/* a block_in fed by a projection subset: its listed columns */
		const struct mtp_tensor *cols = mtp_subset_columns(c, s->name);
		struct mtp_tensor gh = {0}, gw = {0};
		const struct mtp_tensor *hk = &have[k], *wk = &want[k];

		if (cols && hk->data && wk->data &&
		    !mtp_subset_gather_columns(hk, cols, &gh) &&
		    !mtp_subset_gather_columns(wk, cols, &gw)) {
			hk = &gh;
			wk = &gw;
		}
		double *acc = NULL;

		mtp_tol_for(&p->call, s->name, wk->dtype, ovr, &tol);
		if (!cols && !(ovr && ovr->set))
			mtp_tol_accum(&p->call, s->name, &tol, &acc);
		mtp_compare(s->name, hk, wk, &tol, s->cls == MTP_TC_LOGITS, m);
		m->tol.acc_row = m->tol.acc_col = NULL; /* acc is freed below */
		free(acc);
		mtp_rounding_bias(c->op, c->family, s->name, hk, wk, &m->bias);
		mtp_tensor_fini(&gh);
		mtp_tensor_fini(&gw);
	}
	if (!m->passed && r->first_bad < 0)
		r->first_bad = r->n_cmp;
	r->n_cmp++;
}

/* A pass this close to its threshold is worth explaining (NORM_ROUNDING). */
#define NOTE_HEADROOM 0.25

double mtp_result_worst_headroom(const struct mtp_result *r)
{
	double w = 0;

	for (int i = 0; i < r->n_cmp; i++)
		if (r->cmp[i].headroom > w)
			w = r->cmp[i].headroom;
	return w;
}

/* A case with nothing compared is never PASSED: a dump without observed/
 * is an invalid input for verify, any other case a failure. */
static void nothing_compared(struct mtp_result *r, const struct mtp_case *c,
			     const struct mtp_tensor_list *got_named)
{
	if (got_named && got_named->n == 0) {
		r->verdict = MTP_INVALID;
		snprintf(r->message, sizeof(r->message),
			 "no observed/ datasets: verify judges a dump's "
			 "observed/ outputs, and this case has none");
		return;
	}
	r->verdict = MTP_FAILED;
	snprintf(r->message, sizeof(r->message),
		 "nothing compared: none of the outputs of %s is in both the "
		 "result and the judge",
		 c->op->name);
}

/* Every output was compared and passed, but none judged an element: the
 * case is SKIPPED, never PASSED, with why (docs/ARCHITECTURE.md, "Verdicts
 * and exit codes"). False when something was judged. */
static bool judged_nothing(struct mtp_result *r, const struct mtp_case_call *p)
{
	const struct mtp_dims *d = &p->call.dims;
	int64_t judged = 0, elements = 0;
	size_t k;

	for (int i = 0; i < r->n_cmp; i++) {
		judged += mtp_cmp_judged(&r->cmp[i]);
		elements += r->cmp[i].n;
	}
	if (judged > 0 || r->first_bad >= 0)
		return false;
	r->verdict = MTP_SKIPPED;
	k = (size_t)snprintf(r->message, sizeof(r->message),
			     "nothing compared: ");
	if (elements == 0 && d->t == 0 && d->r == 0) {
		snprintf(r->message + k, sizeof(r->message) - k,
			 "%c = 0 (an empty batch): no output holds an element",
			 mtp_sig_batch_dim(p->sig));
		return true;
	}
	for (int i = 0; i < r->n_cmp && k < sizeof(r->message); i++) {
		const struct mtp_cmp *m = &r->cmp[i];

		if (m->n == 0)
			k += (size_t)snprintf(r->message + k,
					      sizeof(r->message) - k,
					      "%s'%s' holds no element",
					      i ? "; " : "", m->name);
		else
			k += (size_t)snprintf(
				r->message + k, sizeof(r->message) - k,
				"%s'%s': all %lld tokens differ inside the "
				"reference's top-1 margin, none was judged",
				i ? "; " : "", m->name, (long long)m->n);
	}
	return true;
}

static long long cmp_elements(const struct mtp_cmp *m)
{
	return (long long)m->n;
}

/* ROUNDING_BIAS (bias.h): a one-sided signed error fails the case even
 * when every element is within tolerance, and names a failure nothing else
 * explains, but only a rounding-sized one: on a case that failed its
 * tolerance, 99 % of the output's elements must be within one ulp (a
 * kernel computing x * r * (1 + w) is one-sided too, and far off). */
static void judge_bias(struct mtp_result *r)
{
	const struct mtp_cmp *m = NULL;
	const bool failed = r->verdict == MTP_FAILED;

	for (int i = 0; i < r->n_cmp && !m; i++)
		if (r->cmp[i].bias.fired &&
		    (!failed || r->cmp[i].bias.names_failure))
			m = &r->cmp[i];
	for (int i = 0; i < r->n_cmp && !m && failed; i++)
		if (r->cmp[i].bias.names_failure && !r->cmp[i].passed)
			m = &r->cmp[i];
	if (!m)
		return;
	if (r->verdict == MTP_PASSED)
		snprintf(r->message, sizeof(r->message),
			 "%s: every element within tolerance, but the signed "
			 "error is one-sided",
			 m->name);
	r->verdict = MTP_FAILED;
	memset(&r->diag, 0, sizeof(r->diag));
	r->diag.diag = MTP_DIAG_ROUNDING_BIAS;
	r->diag.ratio = fabs(m->bias.z);
	snprintf(r->diag.text, sizeof(r->diag.text),
		 "ROUNDING_BIAS [%s]: output '%s' is rounded %s: z = %.1f over "
		 "%lld %s (fires at |z| >= %.0f); %s",
		 mtp_diag_info(MTP_DIAG_ROUNDING_BIAS)->section, m->name,
		 mtp_bias_direction(&m->bias), mtp_bias_shown_z(&m->bias),
		 (long long)(m->bias.fired ? m->bias.n : cmp_elements(m)),
		 m->bias.fired && m->bias.row_mode ? "rows" : "elements",
		 MTP_BIAS_Z, mtp_diag_info(MTP_DIAG_ROUNDING_BIAS)->history);
}

/* A version 1 golden may hold only some of the op's outputs (FORMAT.md):
 * the case is judged on those, and the result says which were not. */
static void describe_partial_golden(struct mtp_result *r,
				    const struct mtp_case *c,
				    const struct mtp_case_call *p,
				    const struct mtp_tensor_list *judge)
{
	int held = 0, n = p->sig->n_out;
	char missing[sizeof(r->judged)] = "";

	for (int k = 0; k < n; k++) {
		const char *name = p->sig->out[k].name;
		size_t len = strlen(missing);

		if (mtp_list_find(judge, name) ||
		    mtp_captured_judged_input(c, name)) {
			held++;
			continue;
		}
		if (len + 1 < sizeof(missing))
			snprintf(missing + len, sizeof(missing) - len, "%s%s",
				 len ? ", " : "", name);
	}
	if (held == n)
		return;
	r->partial = true;
	snprintf(r->judged, sizeof(r->judged),
		 "the golden holds %d of the %d outputs of %s (a version 1 "
		 "file); not judged: %s",
		 held, n, c->op->name, missing);
}

/* Compares every output the judge has, in flow order; names the first that
 * fails, and for a failure, the known bug it matches. */
enum mtp_status mtp_judge_outputs(struct mtp_result *r,
				  const struct mtp_case *c,
				  const struct mtp_case_call *p,
				  const struct mtp_tensor *got,
				  const struct mtp_tensor_list *got_named,
				  const struct mtp_tensor_list *judge,
				  const struct mtp_tensor *judge_arr)
{
	int n = p->sig->n_out;
	struct mtp_tensor *have = calloc((size_t)n + 1, sizeof(*have));
	struct mtp_tensor *want = calloc((size_t)n + 1, sizeof(*want));

	r->cmp = calloc((size_t)n + 1, sizeof(*r->cmp));
	if (!r->cmp || !have || !want) {
		free(have);
		free(want);
		return MTP_ERR_NOMEM;
	}
	if (got_named)
		by_signature(c, p, got_named, have);
	else
		memcpy(have, got, (size_t)n * sizeof(*have));
	if (judge)
		by_signature(c, p, judge, want);
	else
		memcpy(want, judge_arr, (size_t)n * sizeof(*want));
	if (judge && mistrusted(c, judge, r->message, sizeof(r->message)))
		r->verdict = MTP_MISTRUSTED;
	if (judge)
		describe_partial_golden(r, c, p, judge);
	for (int k = 0; k < n; k++) {
		const char *name = p->sig->out[k].name;
		const struct mtp_named *jn =
			judge ? mtp_list_find(judge, name) : NULL;

		if (judge && !jn) /* a golden's captured block input */
			jn = mtp_captured_judged_input(c, name);
		bool has = !got_named || mtp_list_find(got_named, name) ||
			   mtp_captured_judged_input(c, name);

		/* present is compared, empty or not: a [0,V] output where
		 * [T,V] is due fails on its shape */
		if (has && (!judge || jn))
			compare_one(r, c, p, k, have, want,
				    jn ? &jn->tol : NULL);
	}
	if (r->n_cmp == 0 && r->verdict != MTP_MISTRUSTED) {
		nothing_compared(r, c, got_named);
	} else if (r->verdict != MTP_MISTRUSTED && !judged_nothing(r, p)) {
		r->verdict = r->first_bad < 0 ? MTP_PASSED : MTP_FAILED;
		if (r->first_bad >= 0) {
			describe_failure(r);
			mtp_diagnose(&p->call, have, want, &r->diag);
		} else if (mtp_diagnose_declared(&p->call, have, want,
						 &r->diag)) {
			r->verdict =
				MTP_FAILED; /* another convention's output */
			snprintf(r->message, sizeof(r->message),
				 "within tolerance, but made under another "
				 "value of a declared convention");
		} else if (mtp_result_worst_headroom(r) > NOTE_HEADROOM) {
			mtp_diagnose_rounding(&p->call, have, want, &r->diag);
		}
		if (!r->diag.diag || r->diag.info)
			judge_bias(r);
	}
	free(have);
	free(want);
	return MTP_OK;
}
