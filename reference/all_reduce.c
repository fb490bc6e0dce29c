/*
 * Tensor-parallel all-reduce [SPEC.md §2.4, Step V3-7]: the sum of the P
 * partial outputs, rounded once (fp32 accumulation in the fused kernels).
 */
#include "ref_internal.h"

void mtp_ref_all_reduce(const double *parts, int64_t p, int64_t rows,
			int64_t cols, enum mtp_dtype act, double *out)
{
	const int64_t n = rows * cols;

	for (int64_t i = 0; i < n; i++) {
		double acc = 0.0;

		for (int64_t k = 0; k < p; k++)
			acc += parts[k * n + i];
		out[i] = mtp_round(act, acc);
	}
}
