/*
 * Comparing an output tensor with the judge's (ARCHITECTURE.md "Comparison"): per
 * element |a-b| <= atol + rtol*|b| with NaN/Inf parity, and per tensor the
 * worst element, max abs/rel error, headroom (worst error / its threshold),
 * NMSE, a ULP-distance histogram and, for logits, the argmax agreement.
 */
#ifndef MTP_COMPARE_H
#define MTP_COMPARE_H

#include <stdbool.h>
#include <stdint.h>

#include "mtp/bias.h"
#include "mtp/op.h"
#include "mtp/tensor.h"

struct mtp_tol {
	double rtol, atol; /* per element: |a-b| <= atol + rtol*|b| */
	/* Composite outputs (error budget): normwise |a-b|/|b| <= norm_max and
	 * every element |a-b| <= elem_max * rms(b). */
	bool budget;
	double norm_max, elem_max;
	/* A GEMM output's float32 accumulation allowance (mtp_tol_accum):
	 * element i of a [rows, acc_cols] output may differ by a further
	 * acc_u * acc_row[i / acc_cols] * acc_col[i % acc_cols]; none when
	 * acc_row is NULL or the output is not [acc_rows, acc_cols]. The
	 * arrays belong to the caller. */
	const double *acc_row, *acc_col;
	int64_t acc_rows, acc_cols;
	double acc_u;
	char origin[320]; /* where the numbers come from */
};

/* The agreement of draft tokens with the reference's (teacher-forced, so
 * step by step): the number users feel, since each disagreement ends an
 * accepted run. Steps are a chain's [K,T] tokens' first dim (one for a
 * step's [T]); agree[s] counts the rows of step s whose token is the
 * reference's, exactly (the first MTP_AGREE_STEPS steps). The margins are
 * the reference's top-1 minus top-2 logit per row: their minimum and
 * median over every row, and their largest over the rows that disagree
 * (a large one: the engine missed a confident token). */
#define MTP_AGREE_STEPS 32
struct mtp_agreement {
	int steps; /* 0: not judged as tokens */
	int64_t rows;
	int64_t agree[MTP_AGREE_STEPS];
	double margin_min, margin_median, disagree_margin_max;
};

/* ULP buckets: 0, 1, 2, 3-4, 5-8, 9-16, 17-256, >256 (or not finite). */
#define MTP_ULP_BUCKETS 8

struct mtp_cmp {
	char name[MTP_NAME_MAX];
	struct mtp_tol tol;
	bool shape_ok;
	char shape_msg[200];
	bool passed;
	int64_t n, n_bad, n_special_mismatch;
	double max_abs, max_rel, headroom, nmse;
	double rel_norm; /* |a-b| / |b| over the tensor */
	int64_t worst; /* flat index of the element with the largest headroom */
	int64_t worst_coord[MTP_MAX_DIMS];
	int worst_ndim;
	double worst_got, worst_want;
	int64_t ulp_hist[MTP_ULP_BUCKETS];
	/* logits: rows whose argmax agrees, out of rows */
	bool has_argmax;
	int64_t argmax_rows, argmax_agree;
	/* tokens: rows that differ inside the reference's top-1 margin */
	int64_t n_ambiguous;
	/* the signed rounding-bias test (bias.h; ROUNDING_BIAS) */
	struct mtp_bias bias;
	/* tokens: the draft agreement (mtp_cmp_agreement) */
	struct mtp_agreement agreement;
};

/* c->agreement of token output got against want, margins from the
 * reference's logits want_logits ([..., V] with one row per token; NULL:
 * no margins, NaN). Shapes are the caller's to have checked. */
void mtp_cmp_agreement(struct mtp_cmp *c, const struct mtp_tensor *got,
		       const struct mtp_tensor *want,
		       const struct mtp_tensor *want_logits);
/* "17/17, 15/17 (the reference's top-1 margin on a missed token: up to
 * 0.41)": the agreement of every token output of cmp in flow order, one
 * figure per step; false (buf "") when none has one. */
bool mtp_agreement_text(const struct mtp_cmp *cmp, int n_cmp, char *buf,
			size_t n);
/* Top-1 minus top-2 of row r of a logits tensor [..., V]. */
double mtp_logits_margin(const struct mtp_tensor *l, int64_t r);

/* The tolerance of output `output` of call c: the fixture's override; else,
 * for composite ops (and ops with an intermediate rounding: eh_proj_hc,
 * hc_fused_post_pre, hc_head's rocm variant) an error budget over the
 * rounding steps on the flow, and the W8A8 activation quantizations on it
 * (docs/DIAGNOSES.md); else the dtype default of ARCHITECTURE.md. */
void mtp_tol_for(const struct mtp_call *c, const char *output,
		 enum mtp_dtype dt, const struct mtp_tol_override *ovr,
		 struct mtp_tol *out);
/* The longest reduction of a call (the budget's K): fp32 accumulation error
 * grows with it and matters where the activations are float32. */
int64_t mtp_call_k_accum(const struct mtp_call *c);

/* The float32 accumulation allowance of a GEMM output (eh_proj's y and
 * lm_head's logits, each with an unquantized weight): a float32 sum of K
 * products errs by up to about sqrt(K) 2^-24 sum_k |w_k x_k| (tensor cores,
 * which add with truncation, measured at 20 x 2^-24 sum|wx| at K = 14336 on
 * the H200: docs/DIAGNOSES.md "Tolerances"), which a fixed atol does not
 * cover where the sum cancels to near zero. Bounded by Cauchy-Schwarz: acc_u = sqrt(K) 2^-24, acc_row =
 * |x_t|, acc_col = |w_i| (L2 norms). *buf holds the norms (free it); other
 * outputs get no allowance and *buf NULL. Returns false when out of
 * memory (no allowance then). */
bool mtp_tol_accum(const struct mtp_call *c, const char *output,
		   struct mtp_tol *tol, double **buf);

/* Tokens: rows whose token differs are failures unless the judge's logits
 * row has a top-1 margin below `bound` (then they are counted ambiguous). */
void mtp_compare_tokens(const char *name, const struct mtp_tensor *got,
			const struct mtp_tensor *want,
			const struct mtp_tensor *want_logits, double bound,
			struct mtp_cmp *out);

/* Compares got with want under tol; integer tensors must match exactly. */
void mtp_compare(const char *name, const struct mtp_tensor *got,
		 const struct mtp_tensor *want, const struct mtp_tol *tol,
		 bool is_logits, struct mtp_cmp *out);

/* The elements c judged: n less the tokens inside the margin (a token that
 * differs there is neither right nor wrong); 0 on a shape error. A case
 * whose outputs judged none is never PASSED (judge.c); the results file
 * carries it as `compared` (docs/RESULTS.md). */
int64_t mtp_cmp_judged(const struct mtp_cmp *c);

/* "y[2,17]" */
const char *mtp_cmp_where(const struct mtp_cmp *c, char *buf, size_t n);

#endif
