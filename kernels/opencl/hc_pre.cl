/*
 * mHC hc_pre [SPEC.md §4.4.1], one work-group per token: the mix GEMV
 * with the RMS scale, the sigmoids of pre and post, the Sinkhorn
 * normalisation of the comb matrix ("softmax, then column-first"), and the
 * sublayer input sum_m pre_m R[m], optionally with the tilelang with_norm
 * RMSNorm (variance of the unrounded sum, applied to the rounded sum).
 * float32 throughout; post_mix and comb_mix are stored as float32,
 * layer_input in act.
 */

/* c[a][b] /= (sum over row a, or column a) + eps, for m x m c. */
static void hc_normalise(float *c, int m, int rows, float eps)
{
	for (int a = 0; a < m; a++) {
		float s = 0.0f;

		for (int b = 0; b < m; b++)
			s += rows ? c[a * m + b] : c[b * m + a];
		for (int b = 0; b < m; b++) {
			if (rows)
				c[a * m + b] /= s + eps;
			else
				c[b * m + a] /= s + eps;
		}
	}
}

static void hc_sinkhorn(float *c, int m, int iters, float eps)
{
	for (int i = 0; i < m; i++) {
		float *row = c + i * m, mx = row[0], s = 0.0f;

		for (int j = 1; j < m; j++)
			mx = row[j] > mx ? row[j] : mx;
		for (int j = 0; j < m; j++) {
			row[j] = exp(row[j] - mx);
			s += row[j];
		}
		for (int j = 0; j < m; j++)
			row[j] = row[j] / s + eps;
	}
	hc_normalise(c, m, 0, eps);
	for (int it = 1; it < iters; it++) {
		hc_normalise(c, m, 1, eps);
		hc_normalise(c, m, 0, eps);
	}
}

struct hc_pre_cfg {
	int m, iters;
	long k_len;
	float rms_eps, pre_eps, sinkhorn_eps, post_mult;
};

/* One work-item: pre (local), post_mix and comb_mix of one token. */
static void hc_pre_mixes(const struct hc_pre_cfg *p, __local const float *mix,
			 int wide, __global const float *sc,
			 __global const float *b, __local float *pre,
			 __global float *post, __global float *comb)
{
	const int m = p->m, nmix = 2 * m + m * m;
	const float rho = rms_inv(mix[nmix], p->k_len, wide ? 0.0f : p->rms_eps);
	float c[HC_MAX_M * HC_MAX_M];

	for (int s = 0; s < m; s++) {
		pre[s] = sigmoid_f(rho * mix[s] * sc[0] + b[s]) + p->pre_eps;
		post[s] = sigmoid_f(rho * mix[m + s] * sc[1] + b[m + s]) *
			  p->post_mult;
	}
	for (int k = 0; k < m * m; k++)
		c[k] = rho * mix[2 * m + k] * sc[2] + b[2 * m + k];
	hc_sinkhorn(c, m, p->iters, p->sinkhorn_eps);
	for (int k = 0; k < m * m; k++)
		comb[k] = c[k];
}

/* u = sum_s pre_s (x[s, i] * scale), float32, streams in order. */
static float hc_layer_sum(__global const uchar *x, long h, long i, int m,
			  int act, __local const float *pre, float scale)
{
	float u = 0.0f;

	for (int s = 0; s < m; s++)
		u += pre[s] * (ld_act(x, s * h + i, act) * scale);
	return u;
}

/* layer_input with the with_norm RMSNorm, or plain when w is NULL. */
static void hc_layer_input(__global const uchar *x, __global const uchar *w,
			   __global uchar *out, long h, int m, int act,
			   float eps, __local const float *pre,
			   __local float *red)
{
	struct rms_scale s = {1.0f, 0.0f};
	float ss = 0.0f;

	for (long i = get_local_id(0); i < h; i += MTP_WG) {
		const float u = hc_layer_sum(x, h, i, m, act, pre, 1.0f);

		if (!w)
			st_act(out, i, u, act);
		ss += u * u;
	}
	if (!w)
		return;
	ss = wg_sum(ss, red);
	if (isinf(ss)) {
		s.pre = WIDE_SCALE;
		ss = 0.0f;
		for (long i = get_local_id(0); i < h; i += MTP_WG) {
			const float u = hc_layer_sum(x, h, i, m, act, pre,
						     WIDE_SCALE);

			ss += u * u;
		}
		ss = wg_sum(ss, red);
		eps = 0.0f;
	}
	s.r = rms_inv(ss, h, eps);
	for (long i = get_local_id(0); i < h; i += MTP_WG) {
		const float u = hc_layer_sum(x, h, i, m, act, pre, 1.0f);

		st_act(out, i, scaled(round_act(u, act), s) * ld_act(w, i, act),
		       act);
	}
}

__kernel void mtp_hc_pre(__global const uchar *res, long reso,
			 __global const uchar *fn, long fno,
			 __global const uchar *sc, long sco,
			 __global const uchar *base, long bo,
			 __global const uchar *nw, long nwo,
			 __global uchar *post, long posto,
			 __global uchar *comb, long combo,
			 __global uchar *out, long outo, int m, long h,
			 float rms_eps, float pre_eps, float sinkhorn_eps,
			 float post_mult, float norm_eps, int iters,
			 int has_norm, int act, __local float *lm)
{
	/* lm: MTP_WG + HC_MAX_MIX + 1 + HC_MAX_M floats */
	__local float *red = lm, *mix = lm + MTP_WG;
	__local float *pre = mix + HC_MAX_MIX + 1;
	const long t = get_group_id(0);
	const struct hc_pre_cfg p = {m, iters, m * h, rms_eps, pre_eps,
				     sinkhorn_eps, post_mult};
	__global const uchar *x = BUF(res, reso) + t * m * h * act_size(act);
	__global const float *f = (__global const float *)BUF(fn, fno);
	const int wide = hc_mix_safe(x, m * h, act, f, 2 * m + m * m, red, mix);

	if (get_local_id(0) == 0)
		hc_pre_mixes(&p, mix, wide, (__global const float *)BUF(sc, sco),
			     (__global const float *)BUF(base, bo), pre,
			     (__global float *)BUF(post, posto) + t * m,
			     (__global float *)BUF(comb, combo) + t * m * m);
	barrier(CLK_LOCAL_MEM_FENCE);
	hc_layer_input(x, has_norm ? BUF(nw, nwo) : 0,
		       BUF(out, outo) + t * h * act_size(act), h, m, act,
		       norm_eps, pre, red);
}
