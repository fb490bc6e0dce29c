/*
 * The scoring that names a failure (ARCHITECTURE.md "Rules and diagnoses"):
 * each applicable hypothesis of the bug classes' table (bugs/) is computed
 * (diag_hyp.c) and the observed outputs are measured against it and
 * against the correct reference, output by output, normwise.
 */
#include "mtp/diagnose.h"

#include "bugs/bugs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Largest normwise error of the observed vs a hypothesis for a claim: the
 * legitimate variants measured here differ by about 1 %, the bugs by 40-70 %. */
#define CLAIM_MAX_ERR 0.05

const struct mtp_bug_class *mtp_diag_info(enum mtp_diag d)
{
	return mtp_bug_get(d);
}

bool mtp_diag_parse(const char *name, enum mtp_diag *out)
{
	for (int i = 1; i < MTP_DIAG_COUNT; i++) {
		if (strcmp(mtp_bug_get(i)->name, name) == 0) {
			*out = (enum mtp_diag)i;
			return true;
		}
	}
	return false;
}

/* sqrt(sum (a-b)^2 / sum b^2); NaN/Inf must coincide, else +Inf. */
static double normwise(const struct mtp_tensor *a, const struct mtp_tensor *b)
{
	double se = 0, sb = 0;
	int64_t n = mtp_tensor_numel(b);

	if (!mtp_tensor_same_shape(a, b))
		return INFINITY;
	for (int64_t i = 0; i < n; i++) {
		double x = mtp_load(a->dtype, a->data, (size_t)i);
		double y = mtp_load(b->dtype, b->data, (size_t)i);

		if (!isfinite(x) || !isfinite(y)) {
			if (!(isnan(x) && isnan(y)) && x != y)
				return INFINITY;
			continue;
		}
		se += (x - y) * (x - y);
		sb += y * y;
	}
	if (se == 0)
		return 0;
	return sb > 0 ? sqrt(se / sb) : INFINITY;
}

static bool identical(const struct mtp_tensor *a, const struct mtp_tensor *b)
{
	return mtp_tensor_same_shape(a, b) &&
	       memcmp(a->data, b->data, mtp_tensor_nbytes(a)) == 0;
}

/* The hypothesis output observed output k is measured against: hyp[k], or
 * the row's alt_from where the engine returned that one in alt_out's place
 * (same element count, other shape). */
static const struct mtp_tensor *alt_for(enum mtp_diag d,
					const struct mtp_call *c, int k,
					const struct mtp_tensor *got,
					const struct mtp_tensor *hyp)
{
	const struct mtp_bug_class *row = mtp_bug_get(d);
	const char *name = c->sig->out[k].name, *slash = strrchr(name, '/');
	char f[MTP_NAME_MAX];

	if (!row->alt_out || strcmp(slash ? slash + 1 : name, row->alt_out))
		return &hyp[k];
	snprintf(f, sizeof(f), "%.*s%s", slash ? (int)(slash - name + 1) : 0,
		 name, row->alt_from);
	int j = mtp_call_out_index(c, f);

	if (j >= 0 && mtp_tensor_numel(got) == mtp_tensor_numel(&hyp[j]) &&
	    !mtp_tensor_same_shape(got, &hyp[k]))
		return &hyp[j];
	return &hyp[k];
}

static void score_one(const struct mtp_call *c, const struct mtp_tensor *got,
		      const struct mtp_tensor *want,
		      const struct mtp_tensor *hyp, struct mtp_diag_score *s)
{
	for (int k = 0; k < c->n_out; k++) {
		/* tokens follow the logits; positions (an index output,
		 * dspark_step's captured form) are scored like values */
		if (!got[k].data || !want[k].data ||
		    (!mtp_dtype_is_float(want[k].dtype) &&
		     c->sig->out[k].cls != MTP_TC_INDEX))
			continue;
		if (!mtp_tensor_same_shape(&hyp[k], &want[k]))
			continue; /* the bug does not show in this output */
		if (identical(&hyp[k], &want[k])) {
			/* unchanged by the bug: an output off by more than a
			 * claim allows is left unexplained, which no claim may
			 * leave (a bug that explains the recycled hidden alone
			 * is no name for logits that are off too) */
			double off = normwise(&got[k], &want[k]);

			if (off > CLAIM_MAX_ERR)
				s->err_hyp = fmax(s->err_hyp, off);
			continue;
		}
		const struct mtp_tensor *h =
			alt_for(s->diag, c, k, &got[k], hyp);
		double eh = mtp_tensor_same_shape(&got[k], h)
				    ? normwise(&got[k], h)
				    : INFINITY;
		double er = normwise(&got[k], &want[k]);

		s->informative++;
		s->err_hyp = fmax(s->err_hyp, eh);
		s->err_ref = fmax(s->err_ref, er);
	}
}

static void describe(const struct mtp_call *c, struct mtp_diag_result *r,
		     double err_ref)
{
	const struct mtp_bug_class *i = mtp_diag_info(r->diag);
	char how[96], what[256];

	if (isinf(err_ref))
		snprintf(
			how, sizeof(how),
			"(normwise %.2g; the correct output has another shape)",
			r->err_hyp);
	else if (r->err_hyp == 0)
		snprintf(how, sizeof(how),
			 "exactly (the correct reference is off by %.2g "
			 "normwise)",
			 err_ref);
	else if (r->ratio > 1000)
		snprintf(how, sizeof(how),
			 "over 1000x closer than the correct reference "
			 "(normwise %.2g vs %.2g)",
			 r->err_hyp, err_ref);
	else
		snprintf(how, sizeof(how),
			 "%.0fx closer than the correct reference (normwise "
			 "%.2g vs %.2g)",
			 r->ratio, r->err_hyp, err_ref);
	if (r->diag == MTP_DIAG_CONVENTION_MISMATCH) {
		mtp_diag_conv_describe((unsigned)r->variant, c, what,
				       sizeof(what));
		snprintf(r->text, sizeof(r->text), "%s [%s]: %s %s; %s",
			 i->name, i->section, what, how, i->history);
		return;
	}
	snprintf(r->text, sizeof(r->text),
		 "%s [%s]: the outputs match this %s %s; %s", i->name,
		 i->section,
		 i->flags & MTP_BUG_INFO ? "legitimate variant" : "bug", how,
		 i->history);
}

/* Hypothesis d (variant v for CONVENTION_MISMATCH) into hyp. */
static enum mtp_status hypothesis(enum mtp_diag d, int v,
				  const struct mtp_call *c,
				  struct mtp_tensor *hyp)
{
	if (d == MTP_DIAG_CONVENTION_MISMATCH)
		return mtp_diag_conv_hypothesis((unsigned)v, c, hyp);
	return mtp_diag_hypothesis(d, c, hyp);
}

static bool variant_applies(enum mtp_diag d, int v, const struct mtp_call *c)
{
	if (d == MTP_DIAG_CONVENTION_MISMATCH)
		return mtp_diag_conv_mask_applies((unsigned)v, c);
	return v == 0 && mtp_diag_applies(d, c);
}

/* The i-th variant of hypothesis d: 0 for a bug class; for
 * CONVENTION_MISMATCH the i-th set of conventions to flip, the single ones
 * first, then pairs, and so on (bits of enum mtp_conv_id); 0 past the end. */
static unsigned variant_at(enum mtp_diag d, int i)
{
	int k = 0;

	if (d != MTP_DIAG_CONVENTION_MISMATCH)
		return i == 0 ? 0 : ~0u;
	for (int bits = 1; bits <= MTP_CONV_COUNT; bits++)
		for (unsigned m = 1; m < (1u << MTP_CONV_COUNT); m++)
			if (__builtin_popcount(m) == bits && k++ == i)
				return m;
	return ~0u;
}

/* Whether score s is clear and better than the claim so far (its error
 * covers the outputs it changes and every other output off by more than
 * CLAIM_MAX_ERR, score_one): a smaller
 * error against its hypothesis; on an equal fit, the one that explains more
 * outputs (a dump declaring two conventions wrong: one of them alone leaves
 * the other's outputs unexplained; no final norm at all, FINAL_NORM_MISSING,
 * against PRE_NORM_RECYCLE, which explains the recycled hidden alone). */
static bool claims(const struct mtp_diag_score *s, double best, int best_n)
{
	bool clear = s->err_hyp <= CLAIM_MAX_ERR &&
		     s->err_ref >= MTP_DIAG_MIN_RATIO * s->err_hyp &&
		     s->err_ref > 0;

	if (!clear)
		return false;
	return s->err_hyp < best ||
	       (s->err_hyp == best && s->informative > best_n);
}

/* Scores hypothesis `only` (or every one, MTP_DIAG_NONE) and claims the
 * clearest match. */
static void diagnose_set(const struct mtp_call *c, const struct mtp_tensor *got,
			 const struct mtp_tensor *want, enum mtp_diag only,
			 struct mtp_diag_result *out)
{
	struct mtp_tensor *hyp = calloc((size_t)c->n_out + 1, sizeof(*hyp));
	double best = INFINITY, best_ref = 0;
	int best_n = 0, cap = (int)(sizeof(out->scores) / sizeof(*out->scores));

	memset(out, 0, sizeof(*out));
	for (int d = 1; hyp && d < MTP_DIAG_COUNT; d++) {
		if (!(mtp_bug_get(d)->flags & MTP_BUG_NUMERIC) ||
		    (only && d != (int)only))
			continue;
		for (int i = 0; variant_at(d, i) != ~0u; i++) {
			int v = (int)variant_at(d, i);
			struct mtp_diag_score s = {(enum mtp_diag)d, v, 0, 0,
						   0};

			if (!variant_applies(d, v, c))
				continue;
			if (hypothesis(d, v, c, hyp) == MTP_OK)
				score_one(c, got, want, hyp, &s);
			for (int k = 0; k < c->n_out; k++)
				mtp_tensor_fini(&hyp[k]);
			if (!s.informative)
				continue;
			if (out->n_scores < cap)
				out->scores[out->n_scores++] = s;
			if (!claims(&s, best, best_n))
				continue;
			best = s.err_hyp;
			best_n = s.informative;
			out->diag = s.diag;
			out->ratio = s.err_hyp > 0 ? s.err_ref / s.err_hyp
						   : INFINITY;
			out->err_hyp = s.err_hyp;
			out->variant = s.variant;
			best_ref = s.err_ref;
		}
	}
	free(hyp);
	out->info = (mtp_bug_get(out->diag)->flags & MTP_BUG_INFO) != 0;
	if (out->diag)
		describe(c, out, best_ref);
}

void mtp_diagnose(const struct mtp_call *c, const struct mtp_tensor *got,
		  const struct mtp_tensor *want, struct mtp_diag_result *out)
{
	diagnose_set(c, got, want, MTP_DIAG_NONE, out);
}

bool mtp_diagnose_declared(const struct mtp_call *c,
			   const struct mtp_tensor *got,
			   const struct mtp_tensor *want,
			   struct mtp_diag_result *out)
{
	bool any = false;

	for (int id = 0; id < MTP_CONV_COUNT; id++)
		any = any || mtp_diag_conv_applies(id, c);
	if (!any)
		return false;
	diagnose_set(c, got, want, MTP_DIAG_CONVENTION_MISMATCH, out);
	if (out->diag)
		return true;
	memset(out, 0, sizeof(*out));
	return false;
}

void mtp_diagnose_rounding(const struct mtp_call *c,
			   const struct mtp_tensor *got,
			   const struct mtp_tensor *want,
			   struct mtp_diag_result *out)
{
	if (strstr(c->op->attrs, "rounding"))
		diagnose_set(c, got, want, MTP_DIAG_NORM_ROUNDING, out);
	else
		memset(out, 0, sizeof(*out));
}
