/*
 * The attention of the synthetic DSpark layer [SPEC.md §13.9]: rotary
 * position embedding and a single-head attention of the draft block over
 * the context's keys and the block's own, under the in-block mask. This is
 * where the positions and the mask, the two things DSpark engines got wrong
 * in the field, act on the numbers; the rest of the step is ops of §13.8.
 */
#include "ref_internal.h"

void mtp_ref_rope(const double *x, const int64_t *pos, int64_t t, int64_t h,
		  enum mtp_dtype act, double *y)
{
	const int64_t half = h / 2;

	for (int64_t r = 0; r < t; r++) {
		const double *xr = x + r * h;
		double *yr = y + r * h;

		for (int64_t i = 0; i < half; i++) {
			double a = (double)pos[r] *
				   pow(10000.0, -2.0 * (double)i / (double)h);
			double cs = cos(a), sn = sin(a);

			yr[i] = mtp_round(act, xr[i] * cs - xr[i + half] * sn);
			yr[i + half] =
				mtp_round(act, xr[i + half] * cs + xr[i] * sn);
		}
		if (h % 2)
			yr[h - 1] = xr[h - 1];
	}
}

/* Softmax of s[0..n-1] in place, the maximum subtracted. */
static void softmax(double *s, int64_t n)
{
	double mx = s[0], sum = 0.0;

	for (int64_t j = 1; j < n; j++)
		mx = s[j] > mx ? s[j] : mx;
	for (int64_t j = 0; j < n; j++) {
		s[j] = exp(s[j] - mx);
		sum += s[j];
	}
	for (int64_t j = 0; j < n; j++)
		s[j] /= sum;
}

void mtp_ref_block_attention(const double *q, const double *kc,
			     const double *vc, const double *kb,
			     const double *vb, int64_t c, int64_t t, int64_t h,
			     enum mtp_block_mask mask, enum mtp_dtype act,
			     double *o)
{
	double *s = mtp_ref_scratch((size_t)(c + t));
	const double scale = 1.0 / sqrt((double)h);

	for (int64_t i = 0; i < t; i++) {
		/* keys: the context, then the block (up to i when causal) */
		int64_t nb = mask == MTP_BLOCK_MASK_CAUSAL ? i + 1 : t;

		for (int64_t j = 0; j < c; j++)
			s[j] = scale * mtp_ref_dot(q + i * h, kc + j * h, h);
		for (int64_t j = 0; j < nb; j++)
			s[c + j] =
				scale * mtp_ref_dot(q + i * h, kb + j * h, h);
		softmax(s, c + nb);
		for (int64_t k = 0; k < h; k++) {
			double acc = 0.0;

			for (int64_t j = 0; j < c; j++)
				acc += s[j] * vc[j * h + k];
			for (int64_t j = 0; j < nb; j++)
				acc += s[c + j] * vb[j * h + k];
			o[i * h + k] = mtp_round(act, acc);
		}
	}
	free(s);
}
