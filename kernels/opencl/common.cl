/*
 * What every OpenCL C kernel of mtpcheck shares (the opencl backend builds
 * these sources with clCreateProgramWithSource, the level_zero backend runs
 * the same sources compiled to SPIR-V): activation loads and stores with
 * the one round-to-nearest-even of SPEC.md §10, index loads of either
 * width, the work-group sum, and the power-of-two rescaling that keeps a
 * sum of squares finite.
 *
 * Written in the common subset of OpenCL C 1.2 and 2.0 (PoCL 3.1 reports
 * OpenCL C 1.2; clang -cl-std=CL2.0 makes the SPIR-V). Buffers are passed as
 * a byte pointer and a byte offset, so that one host layer serves OpenCL
 * (cl_mem handles, no pointer arithmetic) and Level Zero (device pointers).
 * Everything accumulates in float32; no double, which Intel GPUs may lack.
 *
 * Local memory comes in as the last kernel argument (`lm`, sized by the
 * host) rather than as kernel-scope __local arrays: with those, PoCL 3.1's
 * pthread device gave wrong work-group sums now and then when work-groups
 * ran on several threads at once (seen here on add_rmsnorm: a row's scale
 * off by a factor, never with POCL_MAX_PTHREAD_COUNT=1); arguments are
 * also what every runtime handles the same way.
 */

/* Work-group size of every row kernel; the host uses the same number. */
#define MTP_WG 128

/* Activation types, as the host's enum ocl_act. */
#define ACT_BF16 0
#define ACT_F32 1
#define ACT_F16 2

#define ROUND_EAGER 0
#define ROUND_FUSED 1
/* Or'ed into a norm's rounding: the weight multiplies as f32(1 + w), a
 * zero-centred family's norm (SPEC.md §2.6; gpu.h's GPU_NORM_ONE_PLUS). */
#define NORM_ONE_PLUS 4

/* Rows whose float32 sum of squares overflows (values near bf16's limit,
 * about 3.4e38) are summed again scaled by 2^-80, which is exact for every
 * value that matters there; eps scales by 2^-160 (to 0) with it. */
#define WIDE_SCALE 0x1p-80f

#define BUF(p, o) ((p) + (o))

static inline float bf16_to_f32(ushort b)
{
	return as_float((uint)b << 16);
}

/* Round to nearest even; a NaN stays a quiet NaN with its sign, values
 * past the largest finite bf16 become Inf. */
static inline ushort f32_to_bf16(float f)
{
	uint u = as_uint(f);

	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (ushort)((u >> 16) | 0x40u);
	u += 0x7fffu + ((u >> 16) & 1u);
	return (ushort)(u >> 16);
}

static inline float ld_act(__global const uchar *p, long i, int act)
{
	if (act == ACT_F32)
		return ((__global const float *)p)[i];
	if (act == ACT_F16)
		return vload_half((size_t)i, (__global const half *)p);
	return bf16_to_f32(((__global const ushort *)p)[i]);
}

static inline void st_act(__global uchar *p, long i, float v, int act)
{
	if (act == ACT_F32)
		((__global float *)p)[i] = v;
	else if (act == ACT_F16)
		vstore_half_rte(v, (size_t)i, (__global half *)p);
	else
		((__global ushort *)p)[i] = f32_to_bf16(v);
}

/* v rounded to the activation type and widened back: a rounding point. */
static inline float round_act(float v, int act)
{
	ushort h; /* a half variable needs cl_khr_fp16; a pointer does not */

	if (act == ACT_F32)
		return v;
	if (act == ACT_F16) {
		vstore_half_rte(v, 0, (__private half *)&h);
		return vload_half(0, (__private const half *)&h);
	}
	return bf16_to_f32(f32_to_bf16(v));
}

/* Element i of an index tensor (int32 or int64). */
static inline long ld_idx(__global const uchar *p, long i, int is64)
{
	if (is64)
		return ((__global const long *)p)[i];
	return ((__global const int *)p)[i];
}

static inline float sigmoid_f(float z)
{
	return 1.0f / (1.0f + exp(-z));
}

/*
 * Sum (or, with take_max, the maximum) of v over the work-group of MTP_WG
 * items, returned to every item. A fixed tree, so the result does not
 * depend on scheduling. red holds MTP_WG floats; the leading barrier lets
 * a previous reduction finish reading it.
 */
static float wg_reduce(float v, __local float *red, int take_max)
{
	const int lid = (int)get_local_id(0);

	barrier(CLK_LOCAL_MEM_FENCE);
	red[lid] = v;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int s = MTP_WG / 2; s > 0; s >>= 1) {
		if (lid < s)
			red[lid] = take_max ? fmax(red[lid], red[lid + s])
					    : red[lid] + red[lid + s];
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	return red[0];
}

static float wg_sum(float v, __local float *red)
{
	return wg_reduce(v, red, 0);
}

/*
 * The RMS scale of a row: y = (x * pre) * r. pre is 1, or WIDE_SCALE when
 * the float32 sum of squares overflowed and r was computed from the
 * rescaled row.
 */
struct rms_scale {
	float pre, r;
};

static inline float rms_inv(float ss, long n, float eps)
{
	return 1.0f / sqrt(ss / (float)n + eps);
}

static inline float scaled(float x, struct rms_scale s)
{
	return x * s.pre * s.r;
}

/* One RMSNorm output: eager act(act(x r) w) [§2.1], fused act(x r w) [§2.2]
 * (the caller's store is the last rounding); w is f32(1 + w) under
 * NORM_ONE_PLUS [§2.6]. */
static inline float norm_elem(float x, struct rms_scale s, float w,
			      int rounding, int act)
{
	if (rounding & NORM_ONE_PLUS)
		w = 1.0f + w;
	rounding &= ~NORM_ONE_PLUS;
	if (rounding == ROUND_EAGER)
		return round_act(round_act(scaled(x, s), act) * w, act);
	return scaled(x, s) * w;
}

/* Sum over the work-group of (x[i] * pre)^2 for i < n, in float32. */
static float row_sumsq(__global const uchar *x, long n, int act, float pre,
		       __local float *red)
{
	float ss = 0.0f;

	for (long i = get_local_id(0); i < n; i += MTP_WG) {
		const float a = ld_act(x, i, act) * pre;

		ss += a * a;
	}
	return wg_sum(ss, red);
}

/* The RMS scale of a row of n activations (x NULL: a row of zeros, the
 * position-0 mask), rescaled when the float32 sum overflowed. */
static struct rms_scale row_scale(__global const uchar *x, long n, int act,
				  float eps, __local float *red)
{
	struct rms_scale s = {1.0f, 0.0f};
	float ss = x ? row_sumsq(x, n, act, 1.0f, red) : 0.0f;

	if (isinf(ss)) {
		s.pre = WIDE_SCALE;
		ss = row_sumsq(x, n, act, WIDE_SCALE, red);
		eps = 0.0f; /* eps * 2^-160 is 0 in float32 */
	}
	s.r = rms_inv(ss, n, eps);
	return s;
}

static inline int act_size(int act)
{
	return act == ACT_F32 ? 4 : 2;
}
