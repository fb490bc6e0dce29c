/*
 * The element-wise steps of a draft step and of the synthetic block
 * [SPEC.md §10]: the activation-type adds (h + r; h_proj + e_proj
 * broadcast over the streams) and the SwiGLU product. Each output is
 * computed in float32 and rounded once.
 */

/* out[(r*rep + k)*h + i] = act(a[same] + b[r*h + i]); work-item (i, row)
 * of a 2-D range over rows = r*rep + k. */
__kernel void mtp_add_bcast(__global const uchar *a, long ao,
			    __global const uchar *b, long bo,
			    __global uchar *out, long oo, long rows, long rep,
			    long h, int act)
{
	const long i = get_global_id(0), row = get_global_id(1), e = row * h + i;

	if (i >= h || row >= rows)
		return;
	st_act(BUF(out, oo), e,
	       ld_act(BUF(a, ao), e, act) +
		       ld_act(BUF(b, bo), row / rep * h + i, act),
	       act);
}

/* g = act(silu(gate) * up), silu(z) = z * sigmoid(z) in float32. */
__kernel void mtp_swiglu(__global const uchar *gate, long go,
			 __global const uchar *up, long uo,
			 __global uchar *g, long gg, long n, int act)
{
	const long e = get_global_id(0);

	if (e >= n)
		return;
	const float z = ld_act(BUF(gate, go), e, act);

	st_act(BUF(g, gg), e, z * sigmoid_f(z) * ld_act(BUF(up, uo), e, act),
	       act);
}
