/*
 * What the mHC kernels (hc_pre, hc_head) share [SPEC.md §4.4.1, §4.4.4]:
 * the per-token mix GEMV over the M*H flattened streams, one work-group
 * per token. Each work-item keeps partial dots for every mix row in
 * registers; the partials are then summed over the work-group one mix at a
 * time (a fixed tree, so the result is deterministic).
 */

/* Largest hc_mult the kernels are built for (the host checks it). */
#define HC_MAX_M 8
#define HC_MAX_MIX (2 * HC_MAX_M + HC_MAX_M * HC_MAX_M)

/*
 * mix[o] = sum_k a_k fn[o * k_len + k] for o < nmix, and
 * mix[nmix] = sum_k (x_k * pre)^2, where a_k = x_k * pre, or
 * act(x_k * rho) when xs is given (hc_head's rocm variant: the weight-free
 * RMSNorm stored in act first). mix is local; ends with a barrier.
 */
static void hc_mix(__global const uchar *x, long k_len, int act,
		   __global const float *fn, int nmix, float pre,
		   const struct rms_scale *xs, __local float *red,
		   __local float *mix)
{
	float acc[HC_MAX_MIX + 1];

	for (int o = 0; o <= nmix; o++)
		acc[o] = 0.0f;
	for (long k = get_local_id(0); k < k_len; k += MTP_WG) {
		float a = ld_act(x, k, act) * pre;

		acc[nmix] += a * a;
		if (xs)
			a = round_act(scaled(ld_act(x, k, act), *xs), act);
		for (int o = 0; o < nmix; o++)
			acc[o] += a * fn[o * k_len + k];
	}
	for (int o = 0; o <= nmix; o++) {
		const float s = wg_sum(acc[o], red);

		if (get_local_id(0) == 0)
			mix[o] = s;
	}
	barrier(CLK_LOCAL_MEM_FENCE);
}

/* Whether a mix overflowed float32 (rows near the format's limit). */
static int hc_mix_inf(__local const float *mix, int n)
{
	for (int o = 0; o < n; o++)
		if (isinf(mix[o]))
			return 1;
	return 0;
}

/*
 * The float32 mixes of a token, redone from the rescaled streams when a
 * sum overflowed; returns whether that happened (then mix holds the sums
 * scaled by 2^-80 and 2^-160, whose ratios are the true ones).
 */
static int hc_mix_safe(__global const uchar *x, long k_len, int act,
		       __global const float *fn, int nmix, __local float *red,
		       __local float *mix)
{
	hc_mix(x, k_len, act, fn, nmix, 1.0f, 0, red, mix);
	if (!hc_mix_inf(mix, nmix + 1))
		return 0;
	hc_mix(x, k_len, act, fn, nmix, WIDE_SCALE, 0, red, mix);
	return 1;
}
