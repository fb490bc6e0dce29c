/*
 * mHC hc_head [SPEC.md §4.4.4]: collapses a token's M streams into one
 * hidden with sigmoid weights, one work-group per token. Variant cuda
 * (tilelang): the mixes from the unrounded streams, times rho afterwards.
 * Variant rocm (triton): x * rho is first stored in the activation type
 * (the weight-free RMSNorm) and the mixes are taken from those values.
 */
__kernel void mtp_hc_head(__global const uchar *xs, long xo,
			  __global const uchar *fn, long fno,
			  __global const uchar *sc, long sco,
			  __global const uchar *base, long bo,
			  __global uchar *ys, long yo, int m, long h,
			  float rms_eps, float hc_eps, int rocm, int act,
			  __local float *lm)
{
	/* lm: MTP_WG + HC_MAX_M + 1 + HC_MAX_M floats */
	__local float *red = lm, *mix = lm + MTP_WG, *pre = mix + HC_MAX_M + 1;
	const long t = get_group_id(0), k_len = m * h;
	const int lid = (int)get_local_id(0);
	__global const uchar *x = BUF(xs, xo) + t * k_len * act_size(act);
	__global const float *f = (__global const float *)BUF(fn, fno);
	__global const float *b = (__global const float *)BUF(base, bo);
	int wide = 0;

	if (rocm) {
		const struct rms_scale rho = row_scale(x, k_len, act, rms_eps,
						       red);

		hc_mix(x, k_len, act, f, m, 1.0f, &rho, red, mix);
	} else {
		wide = hc_mix_safe(x, k_len, act, f, m, red, mix);
	}
	if (lid < m) {
		float mu = mix[lid];

		if (!rocm)
			mu *= rms_inv(mix[m], k_len, wide ? 0.0f : rms_eps);
		pre[lid] = sigmoid_f(mu * ((__global const float *)
						   BUF(sc, sco))[0] + b[lid]) +
			   hc_eps;
	}
	barrier(CLK_LOCAL_MEM_FENCE);
	for (long i = lid; i < h; i += MTP_WG) {
		float acc = 0.0f;

		for (int s = 0; s < m; s++)
			acc += pre[s] * ld_act(x, s * h + i, act);
		st_act(BUF(ys, yo) + t * h * act_size(act), i, acc, act);
	}
}
