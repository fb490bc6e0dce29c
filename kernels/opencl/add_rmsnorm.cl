/*
 * The residual-add RMSNorm [SPEC.md §2.3], one work-group per row:
 * residual_out = act(x + residual) is stored, the variance comes from the
 * UNROUNDED float32 sum, and y normalises the stored (rounded) residual,
 * or the unrounded sum when NORM_SUM is or'ed into rounding (SPEC.md §12.1
 * add_norm_input = sum).
 */

/* The host's GPU_NORM_SUM (kernels/gpu/gpu.h). */
#define NORM_SUM 2

/* Sum over the work-group of ((x + res) * pre)^2, both scaled first. */
static float add_sumsq(__global const uchar *x, __global const uchar *res,
		       long h, int act, float pre, __local float *red)
{
	float ss = 0.0f;

	for (long i = get_local_id(0); i < h; i += MTP_WG) {
		const float s = ld_act(x, i, act) * pre + ld_act(res, i, act) * pre;

		ss += s * s;
	}
	return wg_sum(ss, red);
}

__kernel void mtp_add_rmsnorm(__global const uchar *x, long xo,
			      __global const uchar *res, long ro,
			      __global const uchar *w, long wo,
			      __global uchar *y, long yo,
			      __global uchar *rout, long rto, long h, float eps,
			      int rounding, int act, __local float *red)
{
	const long off = (long)get_group_id(0) * h * act_size(act);
	__global const uchar *xr = BUF(x, xo) + off;
	__global const uchar *rr = BUF(res, ro) + off;
	__global const uchar *wr = BUF(w, wo);
	struct rms_scale s = {1.0f, 0.0f};
	float ss = add_sumsq(xr, rr, h, act, 1.0f, red);
	const int on_sum = rounding & NORM_SUM;

	rounding &= ~NORM_SUM;
	if (isinf(ss)) {
		s.pre = WIDE_SCALE;
		ss = add_sumsq(xr, rr, h, act, WIDE_SCALE, red);
		eps = 0.0f;
	}
	s.r = rms_inv(ss, h, eps);
	for (long i = get_local_id(0); i < h; i += MTP_WG) {
		const float sum = ld_act(xr, i, act) + ld_act(rr, i, act);
		const float r1 = round_act(sum, act);

		st_act(BUF(rout, rto) + off, i, r1, act);
		st_act(BUF(y, yo) + off, i,
		       norm_elem(on_sum ? sum : r1, s, ld_act(wr, i, act),
				 rounding, act),
		       act);
	}
}
