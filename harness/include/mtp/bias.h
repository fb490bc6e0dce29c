/*
 * ROUNDING_BIAS (SPEC.md §12.1, §12.4): directed rounding found by a signed
 * bias test over one output's elements. A kernel that truncates its stores
 * leaves every element within a few ulps (so within tolerance) but moves
 * them all the same way; round-to-nearest kernels move them both ways.
 *
 * Statistic (docs/DIAGNOSES.md): e_i = (observed_i - reference_i) / ulp_i,
 * ulp_i the output dtype's ulp at |reference_i|, clipped to [-4, 4]; two
 * series, d_i = e_i (toward +inf or -inf) and m_i = sign(reference_i) * e_i
 * (away from or toward zero). z = mean / (sd / sqrt(n)) for each; the test
 * fires at |z| >= MTP_BIAS_Z when the mean itself is at least
 * MTP_BIAS_MIN_MEAN ulp (a truncating store moves the mean by 0.25-0.5 ulp;
 * a legitimate per-row difference, such as an rsqrt computed in float32,
 * flips a few elements of a row the same way: significant at large H, but
 * two orders of magnitude smaller).
 *  - element mode (bfloat16/float16 outputs): n = the elements; tested
 *    from MTP_BIAS_MIN_ELEMS elements, and it cannot fire with fewer than
 *    MTP_BIAS_MIN_DIFF differing ones;
 *  - row mode (float32 outputs, and the outputs computed through the mHC mix
 *    GEMMs, whose per-token scalars legitimately differ, e.g. TF32 products
 *    on CUDA, §4.4.1): the series are averaged per index of the first
 *    dimension (a token) and n = the rows; at least MTP_BIAS_MIN_ROWS rows.
 * A float32 output is measured and reported but never fires: it has no
 * narrowing store to truncate, so a one-sided error there comes from the
 * accumulation, and tensor cores legitimately accumulate with truncation
 * (measured on the H200: cuda's bf16 lm_head logits, z down to -31.6 over
 * 64 rows, mean -0.57 to -1.6 float32 ulp; docs/DIAGNOSES.md).
 */
#ifndef MTP_BIAS_H
#define MTP_BIAS_H

#include <stdbool.h>
#include <stdint.h>

#include "mtp/op.h"
#include "mtp/tensor.h"

#define MTP_BIAS_Z 6.0
#define MTP_BIAS_MIN_ELEMS 256
#define MTP_BIAS_MIN_DIFF 16
#define MTP_BIAS_MIN_ROWS 16
#define MTP_BIAS_MIN_MEAN 0.1

struct mtp_bias {
	bool tested;	  /* enough elements (or rows) to test */
	bool row_mode;	  /* clustered by the first dimension */
	bool fired;	  /* |z| >= MTP_BIAS_Z, and not report_only */
	bool report_only; /* float32: measured, never fails a case */
	int64_t n;	  /* elements or rows tested */
	double z;	  /* the series with the larger |z|, signed */
	double mean;	  /* its mean, in ulps */
	bool toward_zero; /* z is of m_i (magnitude), else of d_i */
	/* The element test passed on an output the test above does not judge
	 * by elements (row mode): it may name a failure the case has anyway,
	 * when 99 % of the elements are within one ulp, but never fail a case
	 * by itself. z_elem and toward_zero_elem are that test's. */
	bool names_failure;
	double z_elem;
	bool toward_zero_elem;
};

/* The z a report shows: the test's when it fired, else the element test's
 * when that names a failure. */
static inline double mtp_bias_shown_z(const struct mtp_bias *b)
{
	return b->fired || !b->names_failure ? b->z : b->z_elem;
}

/* Tests one output (float, same shape on both sides); leaves out->tested
 * false for integer outputs, shape mismatches and too few elements. */
void mtp_rounding_bias(const struct mtp_op *op, enum mtp_family family,
		       const char *output, const struct mtp_tensor *got,
		       const struct mtp_tensor *want, struct mtp_bias *out);

/* "toward zero" / "away from zero" / "toward -inf" / "toward +inf" (of the
 * fired test, else of the element test). */
const char *mtp_bias_direction(const struct mtp_bias *b);

#endif
