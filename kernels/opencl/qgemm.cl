/*
 * FP8 block-scaled projections [SPEC.md §12.2]: the float8_e4m3fn weight
 * [out,in] read as stored and decoded per element, its block scales
 * [ceil(out/128), ceil(in/128)] float32 or e8m0. Under W8A8, mtp_fp8_quant
 * first quantizes each activation row per group of 128 (scale
 * max(amax, act_eps) / 448 with a correctly rounded division, e4m3 round to
 * nearest even with saturation: the reference's values bit for bit) into
 * float32 scratch: q [rows,in], then the scales [rows,ng]. mtp_fp8_gemm: one
 * work-item per output, each 128-input block's products summed in float32
 * in k order, scaled by the block's scales and added in float32; one
 * rounding of the result.
 */
#define QB 128

static inline float e4m3_f32(uchar b)
{
	const int e = (b >> 3) & 15, m = b & 7;
	float v;

	if ((b & 0x7f) == 0x7f)
		return NAN;
	v = e ? ldexp((float)(8 + m), e - 10) : (float)m * 0x1p-9f;
	return (b & 0x80) ? -v : v;
}

static inline float e8m0_f32(uchar b)
{
	return b == 0xff ? NAN : ldexp(1.0f, (int)b - 127);
}

/* v rounded to e4m3 (nearest even, saturating to +-448), as float. */
static inline float e4m3_round(float v)
{
	float a = fabs(v), q;
	int e;

	if (isnan(v))
		return v;
	if (a >= 448.0f) {
		q = 448.0f;
	} else {
		(void)frexp(a, &e); /* a = f 2^e, f in [0.5, 1) */
		e = max(e - 1, -6) - 3; /* the exponent of the spacing */
		q = ldexp(rint(ldexp(a, -e)), e);
	}
	return copysign(q, v);
}

/* One work-item per (row, group) of rows * ng. */
__kernel void mtp_fp8_quant(__global const uchar *x, long xo,
			    __global uchar *xq, long xqo, long rows, long in,
			    float eps, int act)
{
	const long ng = (in + QB - 1) / QB, i = get_global_id(0);
	const long r = i / ng, c0 = i % ng * QB;
	__global float *q = (__global float *)BUF(xq, xqo);
	float amax = 0.0f, s;
	int nan = 0;
	long n;

	if (i >= rows * ng)
		return;
	n = min(in - c0, (long)QB);
	for (long k = 0; k < n; k++) {
		const float v = ld_act(BUF(x, xo), r * in + c0 + k, act);

		nan |= isnan(v);
		amax = fmax(amax, fabs(v));
	}
	s = nan ? NAN : fmax(amax, eps) / 448.0f;
	for (long k = 0; k < n; k++)
		q[r * in + c0 + k] =
			e4m3_round(ld_act(BUF(x, xo), r * in + c0 + k, act) / s);
	q[rows * in + i] = s;
}

/* w8a8: x is mtp_fp8_quant's scratch (float32 q, then the scales). */
__kernel void mtp_fp8_gemm(__global const uchar *x, long xo,
			   __global const uchar *w, long wo,
			   __global const uchar *ws, long wso,
			   __global uchar *y, long yo, long rows, long in,
			   long out, int e8m0, int w8a8, int logits, int act)
{
	const long o = get_global_id(0), r = get_global_id(1);
	const long ng = (in + QB - 1) / QB;
	__global const float *xf = (__global const float *)BUF(x, xo);
	__global const uchar *wr = BUF(w, wo) + o * in;
	float acc = 0.0f;

	if (o >= out || r >= rows)
		return;
	for (long g = 0; g < ng; g++) {
		const long c0 = g * QB, n = min(in - c0, (long)QB);
		const long si = o / QB * ng + g;
		float p = 0.0f, sw;

		for (long k = 0; k < n; k++) {
			const float xv =
				w8a8 ? xf[r * in + c0 + k]
				     : ld_act(BUF(x, xo), r * in + c0 + k, act);

			p = fma(xv, e4m3_f32(wr[c0 + k]), p);
		}
		sw = e8m0 ? e8m0_f32(BUF(ws, wso)[si])
			  : ((__global const float *)BUF(ws, wso))[si];
		acc = fma(p, w8a8 ? xf[rows * in + r * ng + g] * sw : sw, acc);
	}
	if (logits)
		((__global float *)BUF(y, yo))[r * out + o] = acc;
	else
		st_act(BUF(y, yo), r * out + o, acc, act);
}
