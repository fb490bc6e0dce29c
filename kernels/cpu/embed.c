/*
 * The embedding gather [SPEC.md Step V3-0]: an exact row copy, checked
 * against the table's bounds.
 */
#include "cpu_internal.h"

enum mtp_status mtp_cpu_embed_rows(enum mtp_dtype act, const void *table,
				   int64_t v, const int64_t *ids, int64_t t,
				   int64_t h, void *out)
{
	const size_t row = (size_t)h * mtp_dtype_size(act);

	for (int64_t r = 0; r < t; r++)
		if (ids[r] < 0 || ids[r] >= v)
			return MTP_ERR_INVALID;
	for (int64_t r = 0; r < t; r++)
		memcpy(mtp_cpu_at(act, out, r * h),
		       mtp_cpu_at(act, table, ids[r] * h), row);
	return MTP_OK;
}

enum mtp_status mtp_cpu_op_embed(const struct mtp_call *c)
{
	int64_t *ids = mtp_cpu_indices(mtp_cpu_in_tensor(c, "input_ids"));
	enum mtp_status st;

	if (!ids)
		return MTP_ERR_NOMEM;
	st = mtp_cpu_embed_rows(c->act, mtp_cpu_in(c, "", "embed_table"),
				c->dims.v, ids, c->dims.t, c->dims.h,
				mtp_cpu_out(c, "", "out"));
	mtp_cpu_free(ids);
	return st;
}
