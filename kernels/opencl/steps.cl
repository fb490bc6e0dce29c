/*
 * The kernels that the captured-block and tensor-parallel steps and the
 * DSpark ops need beyond the block's [SPEC.md §2.5, §12.1, §13]: a
 * conversion between activation types, the all-reduce in a declared order,
 * the collapse of a token's streams with a given pre-mix, and DSpark's
 * confidence head. kernels/cuda/steps.cu computes the same, in the same
 * order.
 */

/* y[i] = to(from(x[i])): widening is exact, narrowing rounds once. */
__kernel void mtp_convert(__global const uchar *x, long xo,
			  __global uchar *y, long yo, long n, int from, int to)
{
	const long i = get_global_id(0);

	if (i >= n)
		return;
	st_act(BUF(y, yo), i, ld_act(BUF(x, xo), i, from), to);
}

/* Reduction orders, as enum mtp_reduce_order. */
#define RED_EXACT 0
#define RED_ONE_SHOT 1
#define RED_TWO_SHOT 2
#define RED_RING 3
#define RED_TREE 4
#define RED_MAX_P 64

/*
 * [§2.5] Element e (hidden index j) of parts [p, n] in order: exact and
 * one_shot in rank order, fp32; two_shot from the chunk's owner
 * c = j * p / h; ring from c + 1, each hop stored in act; tree pairwise,
 * each level stored in act, an unpaired last value carried up.
 */
__kernel void mtp_reduce_ordered(__global const uchar *parts, long po, long p,
				 long n, long h, __global uchar *out, long oo,
				 int order, int act)
{
	const long e = get_global_id(0);
	__global const uchar *x = BUF(parts, po);
	float v[RED_MAX_P], s = 0.0f;
	long c, len = p;

	if (e >= n)
		return;
	c = e % h * p / h;
	if (p > 0 && order == RED_RING) {
		s = ld_act(x, (c + 1) % p * n + e, act);
		for (long k = 2; k <= p; k++)
			s = round_act(s + ld_act(x, (c + k) % p * n + e, act),
				      act);
	} else if (p > 0 && order == RED_TREE) {
		for (long k = 0; k < p; k++)
			v[k] = ld_act(x, k * n + e, act);
		while (len > 1) {
			long m = 0;

			for (long i = 0; i + 1 < len; i += 2)
				v[m++] = round_act(v[i] + v[i + 1], act);
			if (len % 2)
				v[m++] = v[len - 1];
			len = m;
		}
		s = v[0];
	} else if (p > 0) {
		const long c0 = order == RED_TWO_SHOT ? c : 0;

		s = ld_act(x, c0 * n + e, act);
		for (long k = 1; k < p; k++)
			s += ld_act(x, (c0 + k) % p * n + e, act);
	}
	st_act(BUF(out, oo), e, s, act);
}

/* [§13 Step DS-5] y[t,i] = act(sum_s pre[t,s] x[t,s,i]), streams in
 * order; work-item (i, t). */
__kernel void mtp_hc_collapse(__global const uchar *xs, long xo,
			      __global const uchar *pre, long po,
			      __global uchar *ys, long yo, long t, int m,
			      long h, int act)
{
	const long i = get_global_id(0), r = get_global_id(1);
	__global const uchar *x = BUF(xs, xo) + r * m * h * act_size(act);
	__global const float *w = (__global const float *)BUF(pre, po) + r * m;
	float acc;

	if (i >= h || r >= t)
		return;
	acc = w[0] * ld_act(x, i, act);
	for (int s = 1; s < m; s++)
		acc += w[s] * ld_act(x, s * h + i, act);
	st_act(BUF(ys, yo), r * h + i, acc, act);
}

/* [§13 Step DS-7] conf[t] = sigmoid(w . [hidden[t]; embed[t]] + bias),
 * float32, one work-group per token. */
__kernel void mtp_confidence(__global const uchar *hidden, long ho,
			     __global const uchar *embed, long eo,
			     __global const uchar *wt, long wo,
			     __global const uchar *bias, long bo, int has_bias,
			     __global uchar *conf, long co, long h, long r,
			     int act, __local float *red)
{
	const long t = get_group_id(0);
	__global const uchar *x = BUF(hidden, ho) + t * h * act_size(act);
	__global const float *w = (__global const float *)BUF(wt, wo);
	float z = 0.0f;

	for (long i = get_local_id(0); i < h; i += MTP_WG)
		z += w[i] * ld_act(x, i, act);
	for (long i = get_local_id(0); i < r; i += MTP_WG)
		z += w[h + i] * ld_act(BUF(embed, eo) + t * r * act_size(act),
				       i, act);
	z = wg_sum(z, red);
	if (get_local_id(0) == 0) {
		if (has_bias)
			z += ((__global const float *)BUF(bias, bo))[0];
		((__global float *)BUF(conf, co))[t] = sigmoid_f(z);
	}
}

/*
 * [§13 Step DS-4] DSpark's delayed hc_pre, one work-group per token: the
 * mixes of hc_pre (hc_pre.cl), this sublayer's pre-mix stored as an output,
 * and the layer input collapsed with the pre-mix carried in (absent: layer
 * 0's identity pre-mix, stream 0 as it is: a sum over that stream alone).
 */
__kernel void mtp_hc_pre_delayed(
	__global const uchar *res, long reso, __global const uchar *fn,
	long fno, __global const uchar *sc, long sco,
	__global const uchar *base, long bo, __global const uchar *nw,
	long nwo, __global uchar *post, long posto, __global uchar *comb,
	long combo, __global uchar *out, long outo, __global const uchar *pin,
	long pino, int has_pin, __global uchar *pout, long pouto, int m,
	long h, float rms_eps, float pre_eps, float sinkhorn_eps,
	float post_mult, float norm_eps, int iters, int has_norm, int act,
	__local float *lm)
{
	/* lm: MTP_WG + HC_MAX_MIX + 1 + HC_MAX_M floats */
	__local float *red = lm, *mix = lm + MTP_WG;
	__local float *pre = mix + HC_MAX_MIX + 1;
	const long t = get_group_id(0);
	const int lid = (int)get_local_id(0);
	const struct hc_pre_cfg p = {m, iters, m * h, rms_eps, pre_eps,
				     sinkhorn_eps, post_mult};
	__global const uchar *x = BUF(res, reso) + t * m * h * act_size(act);
	__global const float *f = (__global const float *)BUF(fn, fno);
	const int wide = hc_mix_safe(x, m * h, act, f, 2 * m + m * m, red, mix);

	if (lid == 0)
		hc_pre_mixes(&p, mix, wide, (__global const float *)BUF(sc, sco),
			     (__global const float *)BUF(base, bo), pre,
			     (__global float *)BUF(post, posto) + t * m,
			     (__global float *)BUF(comb, combo) + t * m * m);
	barrier(CLK_LOCAL_MEM_FENCE);
	if (lid < m)
		((__global float *)BUF(pout, pouto))[t * m + lid] = pre[lid];
	barrier(CLK_LOCAL_MEM_FENCE);
	if (lid < m)
		pre[lid] = has_pin ? ((__global const float *)BUF(pin, pino))[
						     t * m + lid]
				   : 1.0f;
	barrier(CLK_LOCAL_MEM_FENCE);
	hc_layer_input(x, has_norm ? BUF(nw, nwo) : 0,
		       BUF(out, outo) + t * h * act_size(act), h,
		       has_pin ? m : 1, act, norm_eps, pre, red);
}
