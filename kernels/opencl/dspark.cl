/*
 * The kernels that the synthetic DSpark step [SPEC.md §13.9] needs beyond
 * the ops of §13.8, and the logit scale of DSpark's Markov bias [Step
 * DS-6]: a scale with one rounding, the rotary embedding of the step's
 * single head, and its attention of the draft block over the context keys
 * and the block's own (scores, softmax and sums in float32).
 * kernels/cuda/dspark.cu computes the same, in the same order; there the
 * rotary angles are plain double, here (no double: see common.cl) a
 * float-float pair carries them, so that a position in the thousands keeps
 * its phase to float32 precision.
 */

/* [Step DS-6] y[i] = act(s * x[i]): the float32 product, one rounding. */
__kernel void mtp_scale(__global const uchar *x, long xo, __global uchar *y,
			long yo, long n, float s, int act)
{
	const long i = get_global_id(0);

	if (i < n)
		st_act(BUF(y, yo), i, s * ld_act(BUF(x, xo), i, act), act);
}

/*
 * Float-float arithmetic: a value is hi + lo (a float2, x = hi, y = lo)
 * with |lo| <= ulp(hi) / 2, about 48 bits. Error-free sums and products
 * (Knuth's two-sum, the fma product); none of these expressions may be
 * reassociated, which OpenCL C never does without -cl-fast-relaxed-math.
 */
static inline float2 ff_two_sum(float a, float b)
{
	const float s = a + b, bb = s - a;

	return (float2)(s, (a - (s - bb)) + (b - bb));
}

static inline float2 ff_add(float2 a, float2 b)
{
	const float2 s = ff_two_sum(a.x, b.x);

	return ff_two_sum(s.x, s.y + a.y + b.y);
}

/* a * b for a float b. */
static inline float2 ff_mul_f(float2 a, float b)
{
	const float p = a.x * b;

	return ff_two_sum(p, fma(a.x, b, -p) + a.y * b);
}

static inline float2 ff_mul(float2 a, float2 b)
{
	const float p = a.x * b.x;

	return ff_two_sum(p, fma(a.x, b.x, -p) + (a.x * b.y + a.y * b.x));
}

/* a / b for a float b: the fma remainder of the first quotient is exact. */
static inline float2 ff_div_f(float2 a, float b)
{
	const float q = a.x / b;

	return ff_two_sum(q, (fma(-q, b, a.x) + a.y) / b);
}

/* theta_i = 10000^(-2i/h) as exp(-(2i ln 10000) / h): 2^n e^y with
 * |y| <= ln2 / 2 and e^y from its Taylor series in float-float (degree 13:
 * the remainder is below 2^-52). */
static float2 rope_theta(long i, long h)
{
	const float2 ln1e4 = (float2)(0x1.26bb1cp+3f, -0x1.12aabap-23f);
	const float2 ln2 = (float2)(0x1.62e430p-1f, -0x1.05c610p-29f);
	float2 x = ff_div_f(ff_mul_f(ln1e4, -2.0f * (float)i), (float)h);
	const float n = rint(x.x * 0x1.715476p+0f);
	float2 e = (float2)(1.0f, 0.0f);

	x = ff_add(x, ff_mul_f(ln2, -n));
	for (int k = 13; k >= 1; k--)
		e = ff_add((float2)(1.0f, 0.0f), ff_div_f(ff_mul(x, e), (float)k));
	return (float2)(ldexp(e.x, (int)n), ldexp(e.y, (int)n));
}

/* cos and sin of p * theta_i: the angle in float-float (p split into two
 * exact floats), reduced by 2 pi in float-float, its low part applied to
 * first order. */
static float2 rope_cos_sin(long p, long i, long h)
{
	const float2 two_pi = (float2)(0x1.921fb6p+2f, -0x1.777a5cp-23f);
	const float2 th = rope_theta(i, h);
	const long p_lo = p & 4095;
	float2 a = ff_add(ff_mul_f(th, (float)(p - p_lo)),
			  ff_mul_f(th, (float)p_lo));
	const float k = rint(a.x * 0x1.45f306p-3f);
	float c, s;

	a = ff_add(a, ff_mul_f(two_pi, -k));
	s = sincos(a.x, &c);
	return (float2)(c - s * a.y, s + c * a.y);
}

/*
 * [§13.9] rope of rows [rows,h] at pos[r]: work-item (i, r) rotates the
 * pair (i, i + h/2), float32 products, one rounding each; for an odd h the
 * item i = h/2 copies the last element. y may be x.
 */
__kernel void mtp_rope(__global const uchar *x, long xo,
		       __global const uchar *pos, long po, int pos64,
		       __global uchar *y, long yo, long rows, long h, int act)
{
	const long i = get_global_id(0), r = get_global_id(1), h2 = h / 2;
	__global const uchar *xr = BUF(x, xo) + r * h * act_size(act);
	__global uchar *yr = BUF(y, yo) + r * h * act_size(act);
	float2 cs;
	float x1, x2;

	if (r >= rows || i >= h - h2)
		return;
	if (i == h2) { /* odd h: the last element unrotated */
		st_act(yr, h - 1, ld_act(xr, h - 1, act), act);
		return;
	}
	cs = rope_cos_sin(ld_idx(BUF(pos, po), r, pos64), i, h);
	x1 = ld_act(xr, i, act);
	x2 = ld_act(xr, i + h2, act);
	st_act(yr, i, fma(x1, cs.x, -(x2 * cs.y)), act);
	st_act(yr, i + h2, fma(x2, cs.x, x1 * cs.y), act);
}

/*
 * [§13.9] The attention scores of query i against key j < n = c + t
 * (the c context keys, then the t block keys): s[i * n + j] = (q_i . k_j)
 * / sqrt(h), the dot in float32 in index order (fused multiply-adds); keys that the causal mask
 * hides are not computed (mtp_block_attend never reads them).
 */
__kernel void mtp_block_scores(__global const uchar *q, long qo,
			       __global const uchar *kc, long kco,
			       __global const uchar *kb, long kbo,
			       __global uchar *sc, long so, long c, long t,
			       long h, int causal, int act)
{
	const long j = get_global_id(0), i = get_global_id(1), n = c + t;
	const int es = act_size(act);
	__global const uchar *qr = BUF(q, qo) + i * h * es;
	__global const uchar *kr;
	float d = 0.0f;

	if (j >= n || i >= t || (causal && j > c + i))
		return;
	kr = j < c ? BUF(kc, kco) + j * h * es : BUF(kb, kbo) + (j - c) * h * es;
	for (long k = 0; k < h; k++)
		d = fma(ld_act(qr, k, act), ld_act(kr, k, act), d);
	((__global float *)BUF(sc, so))[i * n + j] = d / sqrt((float)h);
}

/*
 * [§13.9] One work-group per query i over its nk keys (c + t, or c + i + 1
 * under the causal mask): the maximum, e_j = exp(s_j - max) stored back,
 * their sum (fixed trees), then o[i,k] = act(sum_j (e_j / sum) v_j[k]) in
 * key order, float32.
 */
__kernel void mtp_block_attend(__global uchar *sc, long so,
			       __global const uchar *vc, long vco,
			       __global const uchar *vb, long vbo,
			       __global uchar *o, long oo, long c, long t,
			       long h, int causal, int act, __local float *red)
{
	const long i = get_group_id(0), n = c + t;
	const long nk = causal ? c + i + 1 : n;
	const int es = act_size(act);
	__global float *s = (__global float *)BUF(sc, so) + i * n;
	float mx = -INFINITY, sum = 0.0f;

	for (long j = get_local_id(0); j < nk; j += MTP_WG)
		mx = fmax(mx, s[j]);
	mx = wg_reduce(mx, red, 1);
	for (long j = get_local_id(0); j < nk; j += MTP_WG) {
		s[j] = exp(s[j] - mx);
		sum += s[j];
	}
	sum = wg_sum(sum, red);
	barrier(CLK_GLOBAL_MEM_FENCE); /* every e_j stored */
	for (long k = get_local_id(0); k < h; k += MTP_WG) {
		float acc = 0.0f;

		for (long j = 0; j < nk; j++) {
			__global const uchar *v =
				j < c ? BUF(vc, vco) + j * h * es
				      : BUF(vb, vbo) + (j - c) * h * es;

			acc = fma(s[j] / sum, ld_act(v, k, act), acc);
		}
		st_act(BUF(o, oo), i * h + k, acc, act);
	}
}
