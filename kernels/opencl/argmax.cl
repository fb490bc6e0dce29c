/*
 * Greedy token of each logits row with torch.argmax's rules [Step V3-6]:
 * the first NaN wins over every number, otherwise the largest value, and
 * the first index among equal values. One work-group per row.
 */

/* Whether (av, ai) comes before (bv, bi) in torch.argmax's order. */
static int argmax_better(float av, long ai, float bv, long bi)
{
	if (isnan(av))
		return !isnan(bv) || ai < bi;
	if (isnan(bv))
		return 0;
	return av > bv || (av == bv && ai < bi);
}

__kernel void mtp_argmax(__global const uchar *logits, long lo,
			 __global uchar *token, long to, int tok64, long v,
			 __local float *lm)
{
	/* lm: MTP_WG floats, then MTP_WG longs (8-byte aligned) */
	__local float *bv = lm;
	__local long *bi = (__local long *)(lm + MTP_WG);
	const int lid = (int)get_local_id(0);
	const long row = get_group_id(0);
	__global const float *l = (__global const float *)BUF(logits, lo) + row * v;
	float best = -INFINITY;
	long idx = LONG_MAX;

	for (long i = lid; i < v; i += MTP_WG) {
		if (argmax_better(l[i], i, best, idx)) {
			best = l[i];
			idx = i;
		}
	}
	bv[lid] = best;
	bi[lid] = idx;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int s = MTP_WG / 2; s > 0; s >>= 1) {
		if (lid < s && argmax_better(bv[lid + s], bi[lid + s], bv[lid],
					     bi[lid])) {
			bv[lid] = bv[lid + s];
			bi[lid] = bi[lid + s];
		}
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	if (lid != 0)
		return;
	if (tok64)
		((__global long *)BUF(token, to))[row] = bi[0];
	else
		((__global int *)BUF(token, to))[row] = (int)bi[0];
}
