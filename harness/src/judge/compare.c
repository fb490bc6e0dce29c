/*
 * Element and tensor comparison. Thresholds and their origin are part of the
 * result, so every report can show where a number came from.
 */
#include "mtp/compare.h"

#include "bugs/bugs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ARCHITECTURE.md defaults per dtype. */
static void dtype_default(enum mtp_dtype dt, double *rtol, double *atol)
{
	switch (dt) {
	case MTP_BF16:
		*rtol = 1.6e-2;
		*atol = 1e-5;
		break;
	case MTP_F16:
		/* two ulps, as bf16's 1.6e-2 is two of its ulps: one rounding
		 * flip of an intermediate store plus the output's own rounding
		 * (measured: hc_pre's fp16 layer_input at 1.35-1.53 x a one-ulp
		 * rtol on the H200, docs/BENCHMARKS.md) */
		*rtol = 2e-3;
		*atol = 1e-5;
		break;
	case MTP_F32:
		*rtol = 1.3e-6;
		*atol = 1e-5;
		break;
	default:
		*rtol = 1e-7;
		*atol = 1e-7;
		break;
	}
}

/* Rounding steps of the activation dtype along the flow to each output of
 * the composite ops (SPEC.md §10): norms, GEMMs, adds, SwiGLU, mHC stores;
 * the op's row gives its depth (op->budget_depth), or MTP_DEPTH_FLOW: by
 * the output's name. A draft_chain step s ("step.s/...") adds s steps'
 * worth on top (the recycled input). */
static int flow_depth(const struct mtp_op *op, const char *output)
{
	static const struct {
		const char *name;
		int depth;
	} d[] = {
		{"block_residual", 6}, {"residual_out", 4}, {"h", 9},
		{"post_mix", 9},       {"comb_mix", 9},	    {"post_mix_out", 7},
		{"res_mix_out", 7},    {"x_out", 12},	    {"block_out", 12},
		{"hidden_pre", 12},    {"hidden_post", 13}, {"recycled", 15},
		{"streams", 15},       {"head_hidden", 16}, {"logits", 17},
	};
	const char *slash = strrchr(output, '/');
	const char *base = slash ? slash + 1 : output;
	int step = 0, depth = 12;

	if (op->budget_depth != MTP_DEPTH_FLOW)
		return op->budget_depth;
	if (strncmp(output, "step.", 5) == 0)
		step = atoi(output + 5);
	for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++)
		if (strcmp(d[i].name, base) == 0)
			depth = d[i].depth;
	return depth + step * 15;
}

static double unit_roundoff(enum mtp_dtype act)
{
	return act == MTP_BF16	? ldexp(1, -8)
	       : act == MTP_F16 ? ldexp(1, -11)
	       : act == MTP_F32 ? ldexp(1, -24)
				: ldexp(1, -53);
}

/* Judged under an error budget rather than the dtype's tolerance. */
static bool is_composite(const struct mtp_op *op)
{
	return op->budget_depth != 0;
}

int64_t mtp_call_k_accum(const struct mtp_call *c)
{
	const struct mtp_dims *d = &c->dims;
	int64_t k = d->h * (d->m > 1 ? d->m : 1);

	if (2 * d->h > k)
		k = 2 * d->h;
	if (d->p * d->h > k) /* main_proj_norm's P aux states */
		k = d->p * d->h;
	return d->f > k ? d->f : k;
}

/* True when an input whose name ends in `suffix` is a float8 weight. */
static bool has_fp8_input(const struct mtp_call *c, const char *suffix)
{
	for (int i = 0; i < c->n_in && c->sig; i++)
		if (mtp_bug_ends_with(c->sig->in[i].name, suffix) &&
		    c->in[i].data && mtp_dtype_is_fp8(c->in[i].dtype))
			return true;
	return false;
}

/* The W8A8 activation quantizations on the flow to an output of a step or a
 * chain (SPEC.md §12.2): the input projection's of every step up to the
 * output's, and the head's for the logits when the head is float8. Their
 * inputs were computed, so a legitimate one-ulp difference upstream crosses
 * an e4m3 rounding boundary (see mtp_tol_for). A single op's quantization
 * reads given inputs and adds nothing. */
static int fp8_act_points(const struct mtp_call *c, const char *output)
{
	const char *slash = strrchr(output, '/');
	const char *base = slash ? slash + 1 : output;
	int n;

	if (!c->params || c->params->proj_quant != MTP_PROJ_QUANT_FP8_W8A8 ||
	    c->op->scope < MTP_SCOPE_STEP)
		return 0;
	n = has_fp8_input(c, "proj_weight");
	if (n && c->op->scope == MTP_SCOPE_CHAIN &&
	    strncmp(output, "step.", 5) == 0)
		n += atoi(output + 5);
	if (strcmp(base, "logits") == 0 && has_fp8_input(c, "head_weight"))
		n++;
	return n;
}

void mtp_tol_for(const struct mtp_call *c, const char *output,
		 enum mtp_dtype dt, const struct mtp_tol_override *ovr,
		 struct mtp_tol *out)
{
	const struct mtp_op *op = c->op;

	memset(out, 0, sizeof(*out));
	if (ovr && ovr->set) {
		out->rtol = ovr->rtol;
		out->atol = ovr->atol;
		snprintf(out->origin, sizeof(out->origin), "fixture: %s",
			 ovr->origin);
		return;
	}
	dtype_default(dt, &out->rtol, &out->atol);
	if (is_composite(op) && mtp_dtype_is_float(dt)) {
		int depth = flow_depth(op, output),
		    nq = fp8_act_points(c, output);
		int64_t k_accum = mtp_call_k_accum(c);
		/* per step: the store's rounding plus fp32 accumulation over the
		 * longest reduction (it matters for float32 activations) */
		double u = unit_roundoff(c->act) +
			   ldexp(1, -24) * sqrt((double)k_accum);
		/* per W8A8 quantization of a computed input: an upstream
		 * difference of one ulp (2 u_act) crosses an e4m3 rounding
		 * boundary (spacing up to 2^-3 of the value) with probability
		 * 2 u_act / 2^-3 and then moves the value by 2^-3, an RMS of
		 * sqrt(2 u_act 2^-3): 2^-5 for bf16 activations */
		double uq = sqrt(2 * unit_roundoff(c->act) * ldexp(1, -3));
		double s = sqrt(depth * u * u + nq * uq * uq);

		out->budget = true;
		out->norm_max = 2 * s;
		out->elem_max = 8 * s;
		int k = snprintf(
			out->origin, sizeof(out->origin),
			"error budget: %d %s steps on the flow, u = %.3g per "
			"step (rounding + fp32 sums of %lld)",
			depth, mtp_dtype_name(c->act), u, (long long)k_accum);
		if (nq && k > 0 && (size_t)k < sizeof(out->origin))
			k += snprintf(out->origin + k, sizeof(out->origin) - k,
				      ", %d FP8 activation quantizations, "
				      "u_q = %.3g each",
				      nq, uq);
		if (k > 0 && (size_t)k < sizeof(out->origin))
			snprintf(out->origin + k, sizeof(out->origin) - k,
				 "; s = sqrt(%d u^2 + %d u_q^2); normwise <= "
				 "2s, "
				 "each element <= 8s of the tensor RMS + 1 ulp",
				 depth, nq);
		return;
	}
	snprintf(out->origin, sizeof(out->origin),
		 "%s default (docs/ARCHITECTURE.md)", mtp_dtype_name(dt));
}

/* The L2 norm of each of the n rows of k values of t into out; false when t
 * is not n * k floats in host memory. */
static bool row_norms(const struct mtp_tensor *t, int64_t n, int64_t k,
		      double *out)
{
	if (!t || !t->data || !mtp_dtype_is_float(t->dtype) ||
	    mtp_tensor_numel(t) != n * k)
		return false;
	for (int64_t r = 0; r < n; r++) {
		double s = 0;

		for (int64_t j = 0; j < k; j++) {
			double v = mtp_load(t->dtype, t->data,
					    (size_t)(r * k + j));

			s += v * v;
		}
		out[r] = sqrt(s);
	}
	return true;
}

/* The GEMM output that gets the accumulation allowance (op->accum_output:
 * eh_proj's y, lm_head's logits): an output [T, N] =
 * x [T, K] times weight [N, K] transposed, summed in float32. The tensor
 * cores' sums truncate (docs/BENCHMARKS.md, eh_proj at T = 512 and lm_head's
 * logits at T >= 512 on the H200), so a sum that cancels to near zero can be
 * off by far more than the output's rounding. */
bool mtp_tol_accum(const struct mtp_call *c, const char *output,
		   struct mtp_tol *tol, double **buf)
{
	const struct mtp_tensor *x, *w, *sc;
	int64_t t, n, k;
	bool listed =
		c->op->accum_output && strcmp(output, c->op->accum_output) == 0;

	*buf = NULL;
	if (tol->budget || !listed)
		return true;
	x = mtp_call_tensor(c, false, NULL, "x");
	w = mtp_call_tensor(c, false, NULL, "weight");
	sc = mtp_call_tensor(c, false, NULL, "weight_scale_inv");
	/* a quantized weight is judged by its own rules (SPEC.md §12.2) */
	if (!x || !w || (sc && sc->data) || x->ndim != 2 || w->ndim != 2 ||
	    !mtp_dtype_is_float(w->dtype) || x->shape[1] != w->shape[1])
		return true;
	t = x->shape[0];
	n = w->shape[0];
	k = x->shape[1];
	if (t <= 0 || n <= 0 || k <= 0)
		return true;
	*buf = malloc((size_t)(t + n) * sizeof(double));
	if (!*buf)
		return false;
	if (!row_norms(x, t, k, *buf) || !row_norms(w, n, k, *buf + t)) {
		free(*buf);
		*buf = NULL;
		return true;
	}
	tol->acc_row = *buf;
	tol->acc_col = *buf + t;
	tol->acc_rows = t;
	tol->acc_cols = n;
	tol->acc_u = sqrt((double)k) * ldexp(1, -24);
	size_t len = strlen(tol->origin);

	snprintf(tol->origin + len, sizeof(tol->origin) - len,
		 " + float32 sums of %lld: sqrt(K) 2^-24 |x_t| |w_i|",
		 (long long)k);
	return true;
}

/* One unit in the last place of dt at magnitude m (the subnormal spacing
 * below the normal range). */
static double ulp_of(enum mtp_dtype dt, double m)
{
	int mant = dt == MTP_BF16  ? 7
		   : dt == MTP_F16 ? 10
		   : dt == MTP_F32 ? 23
				   : 52;
	int emin = dt == MTP_BF16  ? -126
		   : dt == MTP_F16 ? -14
		   : dt == MTP_F32 ? -126
				   : -1022;
	int e;

	frexp(fabs(m), &e);
	e -= 1;
	if (e < emin)
		e = emin;
	return ldexp(1.0, e - mant);
}

/* Distance in units in the last place of dt between two finite values. */
static double ulp_distance(enum mtp_dtype dt, double a, double b)
{
	if (a == b)
		return 0;
	return fabs(a - b) / ulp_of(dt, fmax(fabs(a), fabs(b)));
}

static int ulp_bucket(double u)
{
	static const double edges[] = {0, 1, 2, 4, 8, 16, 256};

	for (int i = 0; i < 7; i++)
		if (u <= edges[i] + 1e-9)
			return i;
	return 7;
}

static void set_worst(struct mtp_cmp *c, const struct mtp_tensor *t, int64_t i)
{
	int64_t r = i;

	c->worst = i;
	c->worst_ndim = t->ndim;
	for (int d = t->ndim - 1; d >= 0; d--) {
		int64_t s = t->shape[d] ? t->shape[d] : 1;

		c->worst_coord[d] = r % s;
		r /= s;
	}
}

static bool specials_match(double a, double b)
{
	if (isnan(a) || isnan(b))
		return isnan(a) && isnan(b);
	if (isinf(a) || isinf(b))
		return a == b;
	return true;
}

/* One element: returns its headroom (error / threshold), +Inf on a
 * NaN/Inf mismatch. */
static double element(struct mtp_cmp *c, enum mtp_dtype dt, int64_t i, double a,
		      double b, double *sq_err, double *sq_ref)
{
	if (!isfinite(a) || !isfinite(b)) {
		if (specials_match(a, b)) {
			c->ulp_hist[0]++;
			return 0;
		}
		c->n_special_mismatch++;
		c->ulp_hist[MTP_ULP_BUCKETS - 1]++;
		return INFINITY;
	}
	double err = fabs(a - b), thr = c->tol.atol + c->tol.rtol * fabs(b);

	if (c->tol.acc_row)
		thr += c->tol.acc_u * c->tol.acc_row[i / c->tol.acc_cols] *
		       c->tol.acc_col[i % c->tol.acc_cols];

	*sq_err += err * err;
	*sq_ref += b * b;
	if (err > c->max_abs)
		c->max_abs = err;
	if (b != 0 && err / fabs(b) > c->max_rel)
		c->max_rel = err / fabs(b);
	if (mtp_dtype_is_float(dt))
		c->ulp_hist[ulp_bucket(ulp_distance(dt, a, b))]++;
	else
		c->ulp_hist[err == 0 ? 0 : MTP_ULP_BUCKETS - 1]++;
	if (!mtp_dtype_is_float(dt))
		return err == 0 ? 0 : INFINITY;
	return thr > 0 ? err / thr : (err == 0 ? 0 : INFINITY);
}

static void argmax_rows(const struct mtp_tensor *got,
			const struct mtp_tensor *want, struct mtp_cmp *c)
{
	int64_t cols = got->ndim ? got->shape[got->ndim - 1] : 0;
	int64_t rows = cols ? mtp_tensor_numel(got) / cols : 0;

	c->has_argmax = true;
	c->argmax_rows = rows;
	for (int64_t r = 0; r < rows; r++) {
		int64_t ia = 0, ib = 0;

		for (int64_t k = 1; k < cols; k++) {
			double a = mtp_load(got->dtype, got->data,
					    (size_t)(r * cols + k));
			double b = mtp_load(want->dtype, want->data,
					    (size_t)(r * cols + k));

			if (a > mtp_load(got->dtype, got->data,
					 (size_t)(r * cols + ia)))
				ia = k;
			if (b > mtp_load(want->dtype, want->data,
					 (size_t)(r * cols + ib)))
				ib = k;
		}
		c->argmax_agree += ia == ib;
	}
}

/* Re-judges a tensor under the composite error budget: normwise error and
 * the largest element error relative to the tensor's RMS. */
static void apply_budget(struct mtp_cmp *c, const struct mtp_tensor *got,
			 const struct mtp_tensor *want, double sq_ref)
{
	double rms = c->n ? sqrt(sq_ref / (double)c->n) : 0, worst = -1;
	double lim = c->tol.elem_max * rms;

	c->n_bad = c->n_special_mismatch;
	for (int64_t i = 0; i < c->n; i++) {
		double a = mtp_load(got->dtype, got->data, (size_t)i);
		double b = mtp_load(want->dtype, want->data, (size_t)i);
		double h;

		if (!isfinite(a) || !isfinite(b))
			h = specials_match(a, b) ? 0 : INFINITY;
		else {
			/* plus one ulp of the element: a rounding flip of the
			 * last store, legitimate at any magnitude (an element
			 * far above the RMS flips by more than the budget) */
			double l = lim + ulp_of(want->dtype, b);

			h = l > 0 ? fabs(a - b) / l : (a == b ? 0 : INFINITY);
		}
		if (h > 1 && isfinite(h))
			c->n_bad++;
		if (h > worst) {
			worst = h;
			set_worst(c, got, i);
			c->worst_got = a;
			c->worst_want = b;
		}
	}
	double hn = c->tol.norm_max > 0 ? c->rel_norm / c->tol.norm_max : 0;

	c->headroom = fmax(worst, hn);
	if (hn > 1 && c->n_bad == 0)
		c->n_bad = 1; /* the norm fails though no single element does */
}

void mtp_compare(const char *name, const struct mtp_tensor *got,
		 const struct mtp_tensor *want, const struct mtp_tol *tol,
		 bool is_logits, struct mtp_cmp *c)
{
	double sq_err = 0, sq_ref = 0, worst = -1;
	char a[96], b[96];

	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->tol = *tol;
	c->worst = -1;
	c->shape_ok = mtp_tensor_same_shape(got, want);
	if (!c->shape_ok) {
		snprintf(c->shape_msg, sizeof(c->shape_msg),
			 "shape %s, expected %s",
			 mtp_shape_str(got, a, sizeof(a)),
			 mtp_shape_str(want, b, sizeof(b)));
		c->headroom = INFINITY;
		return;
	}
	c->n = mtp_tensor_numel(got);
	if (c->tol.acc_row &&
	    (got->ndim != 2 || got->shape[0] != c->tol.acc_rows ||
	     got->shape[1] != c->tol.acc_cols))
		c->tol.acc_row = NULL; /* not the product the norms are of */
	for (int64_t i = 0; i < c->n; i++) {
		double x = mtp_load(got->dtype, got->data, (size_t)i);
		double y = mtp_load(want->dtype, want->data, (size_t)i);
		double h = element(c, want->dtype, i, x, y, &sq_err, &sq_ref);

		c->n_bad += !(h <= 1.0);
		if (h > worst || (isnan(h) && worst >= 0)) {
			worst = h;
			set_worst(c, got, i);
			c->worst_got = x;
			c->worst_want = y;
		}
	}
	c->headroom = worst < 0 ? 0 : worst;
	c->nmse = sq_ref > 0 ? sq_err / sq_ref : sq_err;
	c->rel_norm = sqrt(c->nmse);
	if (is_logits && got->ndim >= 1)
		argmax_rows(got, want, c);
	if (tol->budget)
		apply_budget(c, got, want, sq_ref);
	c->passed = c->n_bad == 0;
}

int64_t mtp_cmp_judged(const struct mtp_cmp *c)
{
	return c->shape_ok ? c->n - c->n_ambiguous : 0;
}

const char *mtp_cmp_where(const struct mtp_cmp *c, char *buf, size_t n)
{
	size_t k = (size_t)snprintf(buf, n, "%s", c->name);

	if (c->worst < 0 || c->worst_ndim == 0)
		return buf;
	for (int d = 0; d < c->worst_ndim && k < n; d++)
		k += (size_t)snprintf(buf + k, n - k, "%s%lld", d ? "," : "[",
				      (long long)c->worst_coord[d]);
	if (k < n)
		snprintf(buf + k, n - k, "]");
	return buf;
}

/* How far below the row's top the reference logit of token tok is: 0 for a
 * token tied at the maximum (common with bf16 logits at V = 129280), +Inf
 * for an id outside the row. */
static double token_gap(const struct mtp_tensor *l, int64_t r, double tok)
{
	int64_t cols = l->shape[l->ndim - 1];
	double top = -INFINITY;

	if (!(tok >= 0 && tok < (double)cols))
		return INFINITY;
	for (int64_t k = 0; k < cols; k++)
		top = fmax(top,
			   mtp_load(l->dtype, l->data, (size_t)(r * cols + k)));
	return top - mtp_load(l->dtype, l->data, (size_t)(r * cols + tok));
}

void mtp_compare_tokens(const char *name, const struct mtp_tensor *got,
			const struct mtp_tensor *want,
			const struct mtp_tensor *want_logits, double bound,
			struct mtp_cmp *c)
{
	struct mtp_tol tol = {0};

	snprintf(tol.origin, sizeof(tol.origin),
		 "exact where the reference's top-1 margin exceeds %.3g (the "
		 "logit error bound)",
		 bound);
	mtp_compare(name, got, want, &tol, false, c);
	if (!c->shape_ok || !want_logits || !want_logits->data)
		return;
	c->n_bad = 0;
	for (int64_t r = 0; r < c->n; r++) {
		if (mtp_load(got->dtype, got->data, (size_t)r) ==
		    mtp_load(want->dtype, want->data, (size_t)r))
			continue;
		double gap =
			token_gap(want_logits, r,
				  mtp_load(got->dtype, got->data, (size_t)r));

		if (gap == 0)
			continue; /* tied at the maximum: as good a greedy pick */
		if (gap <= bound && mtp_logits_margin(want_logits, r) <= bound)
			c->n_ambiguous++;
		else
			c->n_bad++;
	}
	c->passed = c->n_bad == 0 && c->n_special_mismatch == 0;
	c->headroom = c->passed ? 0 : INFINITY;
	mtp_cmp_agreement(c, got, want, want_logits);
}
