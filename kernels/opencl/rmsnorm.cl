/*
 * RMSNorm rows [SPEC.md §2.1 eager, §2.2 fused], one work-group per row.
 * One kernel serves rmsnorm, the shared head's norm and each half of the
 * fused MTP input norms (fused_eh_norm, fused_embed_eh_norm,
 * fused_mtp_input_rmsnorm): row r reads x + r * x_stride, or
 * x + ids[r] * x_stride when ids64 >= 0 (the embedding gather), reads as
 * zeros when pos64 >= 0 and pos[r] == 0 (the position-0 mask is a select:
 * a masked row is exact zeros even if it held a NaN), and writes
 * y + r * y_stride. Strides in elements, offsets in bytes.
 */
__kernel void mtp_rmsnorm(__global const uchar *x, long xo, long x_stride,
			  __global const uchar *ids, long ido, int ids64,
			  __global const uchar *pos, long po, int pos64,
			  __global const uchar *w, long wo,
			  __global uchar *y, long yo, long y_stride, long h,
			  float eps, int rounding, int act, __local float *red)
{
	const long r = get_group_id(0), es = act_size(act);
	const int zero = pos64 >= 0 && ld_idx(BUF(pos, po), r, pos64) == 0;
	const long src = ids64 >= 0 ? ld_idx(BUF(ids, ido), r, ids64) : r;
	__global const uchar *xr = BUF(x, xo) + src * x_stride * es;
	__global const uchar *wr = BUF(w, wo);
	__global uchar *yr = BUF(y, yo) + r * y_stride * es;
	const struct rms_scale s = row_scale(zero ? 0 : xr, h, act, eps, red);

	for (long i = get_local_id(0); i < h; i += MTP_WG) {
		const float a = zero ? 0.0f : ld_act(xr, i, act);

		st_act(yr, i,
		       norm_elem(a, s, ld_act(wr, i, act), rounding, act), act);
	}
}
