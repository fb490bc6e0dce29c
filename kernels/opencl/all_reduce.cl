/*
 * The tensor-parallel all-reduce [SPEC.md §2.4]: out[i] = act(sum_p
 * parts[p, i]), the partial outputs summed in float32 in rank order and
 * rounded once.
 */
__kernel void mtp_all_reduce(__global const uchar *parts, long po, long p,
			     long n, __global uchar *out, long oo, int act)
{
	const long i = get_global_id(0);
	float acc = 0.0f;

	if (i >= n)
		return;
	for (long k = 0; k < p; k++)
		acc += ld_act(BUF(parts, po), k * n + i, act);
	st_act(BUF(out, oo), i, acc, act);
}
