/*
 * The GEMM of every projection (eh_proj, e_proj/h_proj, the block's
 * matrices, lm_head) in nn.Linear layout: y [rows,out] = x [rows,in] .
 * w [out,in]^T [SPEC.md §10: activation operands, float32 accumulation,
 * one rounding of the result]. A plain 16 x 16 tiled kernel through local
 * memory; each output sums its products in k order, so the result does not
 * depend on the tiling. logits != 0 stores float32 (the LM head) instead
 * of the activation type.
 */
#define GEMM_TILE 16
/* Row pitch of a tile in local memory: one column of padding keeps the
 * column reads free of bank conflicts. */
#define GEMM_LD (GEMM_TILE + 1)

__kernel void mtp_gemm(__global const uchar *x, long xo,
		       __global const uchar *w, long wo,
		       __global uchar *y, long yo, long rows, long in,
		       long out, int logits, int act, __local float *lm)
{
	/* lm: two tiles of GEMM_TILE x GEMM_LD floats */
	__local float *xt = lm, *wt = lm + GEMM_TILE * GEMM_LD;
	const int lx = (int)get_local_id(0), ly = (int)get_local_id(1);
	const long o = get_global_id(0), r = get_global_id(1);
	const long xr = (long)get_group_id(1) * GEMM_TILE + ly;
	const long wr = (long)get_group_id(0) * GEMM_TILE + ly;
	float acc = 0.0f;

	for (long k0 = 0; k0 < in; k0 += GEMM_TILE) {
		const long k = k0 + lx;

		xt[ly * GEMM_LD + lx] = xr < rows && k < in ?
				     ld_act(BUF(x, xo), xr * in + k, act) : 0.0f;
		wt[ly * GEMM_LD + lx] = wr < out && k < in ?
				     ld_act(BUF(w, wo), wr * in + k, act) : 0.0f;
		barrier(CLK_LOCAL_MEM_FENCE);
		for (int kk = 0; kk < GEMM_TILE; kk++)
			acc += xt[ly * GEMM_LD + kk] * wt[lx * GEMM_LD + kk];
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	if (o >= out || r >= rows)
		return;
	if (logits)
		((__global float *)BUF(y, yo))[r * out + o] = acc;
	else
		st_act(BUF(y, yo), r * out + o, acc, act);
}
