/*
 * The embedding gather [Step V3-0], an exact copy of table rows, and the
 * draft chain's positions + s [§5]. Work-item (i, r) of a 2-D range
 * copies element i of row r (2-D: no division of a flat index, whose
 * div/rem pair clang 14 lowers to a `freeze` that llvm-spirv 14 rejects).
 */
__kernel void mtp_embed(__global const uchar *table, long tbo,
			__global const uchar *ids, long ido, int ids64,
			__global uchar *out, long oo, long t, long h, int act)
{
	const long i = get_global_id(0), r = get_global_id(1), e = r * h + i;

	if (i >= h || r >= t)
		return;
	const long src = ld_idx(BUF(ids, ido), r, ids64) * h + i;

	if (act_size(act) == 4)
		((__global uint *)BUF(out, oo))[e] =
			((__global const uint *)BUF(table, tbo))[src];
	else
		((__global ushort *)BUF(out, oo))[e] =
			((__global const ushort *)BUF(table, tbo))[src];
}

__kernel void mtp_positions_add(__global const uchar *pos, long po, int pos64,
				long add, __global uchar *out, long oo, long t)
{
	const long e = get_global_id(0);

	if (e < t)
		((__global long *)BUF(out, oo))[e] =
			ld_idx(BUF(pos, po), e, pos64) + add;
}
