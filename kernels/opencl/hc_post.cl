/*
 * mHC hc_post [SPEC.md §4.4.2]: the new streams after a sublayer,
 * out[t,j,:] = act(post[t,j] x[t,:] + sum_i C[t,i,j] R[t,i,:]), row i of C
 * the source stream and column j the destination; float32 in the spec's
 * order, one rounding on store. Work-item (i, r) of a 2-D range writes
 * element i of token r in every destination stream.
 */
__kernel void mtp_hc_post(__global const uchar *x, long xo,
			  __global const uchar *res, long ro,
			  __global const uchar *post, long po,
			  __global const uchar *comb, long co,
			  __global uchar *out, long oo, long t, int m, long h,
			  int act)
{
	const long i = get_global_id(0), r = get_global_id(1);
	__global const float *pm = (__global const float *)BUF(post, po);
	__global const float *c = (__global const float *)BUF(comb, co);

	if (i >= h || r >= t)
		return;
	pm += r * m;
	c += r * m * m;
	const float xv = ld_act(BUF(x, xo), r * h + i, act);

	for (int j = 0; j < m; j++) {
		float acc = pm[j] * xv;

		for (int s = 0; s < m; s++)
			acc += c[s * m + j] *
			       ld_act(BUF(res, ro), (r * m + s) * h + i, act);
		st_act(BUF(out, oo), (r * m + j) * h + i, acc, act);
	}
}
