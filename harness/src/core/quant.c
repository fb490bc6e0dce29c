/*
 * FP8 projection weights: companion names and input checks; see
 * mtp/quant.h. Part of mtp_base, so that backend modules have it too.
 */
#include "mtp/quant.h"

#include <stdio.h>
#include <string.h>

bool mtp_quant_scale_name(const char *weight, char *buf, size_t n)
{
	size_t len = strlen(weight);
	const char *suffix = "weight";
	size_t sl = strlen(suffix);

	if (len < sl || strcmp(weight + len - sl, suffix) != 0)
		return false;
	/* "weight" alone keeps its name (vLLM's weight_scale_inv); "x_weight"
	 * drops it (FORMAT.md: X_weight -> X_scale_inv) */
	if (len == sl || weight[len - sl - 1] == '/')
		return snprintf(buf, n, "%s_scale_inv", weight) < (int)n;
	return snprintf(buf, n, "%.*sscale_inv", (int)(len - sl), weight) <
	       (int)n;
}

static enum mtp_status check_one(const struct mtp_tspec *ws,
				 const struct mtp_params *p,
				 const struct mtp_tensor_list *inputs,
				 char *err, size_t errn)
{
	const struct mtp_named *w = mtp_list_find(inputs, ws->name);
	const struct mtp_named *s;
	char sname[MTP_NAME_MAX];
	bool fp8 = w && w->t.dtype == MTP_F8E4M3;

	if (!mtp_quant_scale_name(ws->name, sname, sizeof(sname)))
		return MTP_OK;
	s = mtp_list_find(inputs, sname);
	if (fp8 && !s) {
		snprintf(err, errn,
			 "input '%s': float8_e4m3fn without its block scale "
			 "'%s'",
			 ws->name, sname);
		return MTP_ERR_INVALID;
	}
	if (!fp8 && s) {
		snprintf(err, errn,
			 "input '%s': a block scale for '%s', which is not "
			 "float8_e4m3fn",
			 sname, ws->name);
		return MTP_ERR_INVALID;
	}
	if (fp8 && p->proj_quant_declared &&
	    p->proj_quant == MTP_PROJ_QUANT_NONE) {
		snprintf(err, errn,
			 "input '%s': float8_e4m3fn under proj_quant = none",
			 ws->name);
		return MTP_ERR_INVALID;
	}
	return MTP_OK;
}

enum mtp_status mtp_quant_check(const struct mtp_signature *sig,
				const struct mtp_params *p,
				const struct mtp_tensor_list *inputs, char *err,
				size_t errn)
{
	for (int i = 0; i < sig->n_in; i++) {
		enum mtp_status st;

		if (sig->in[i].cls != MTP_TC_QWEIGHT)
			continue;
		st = check_one(&sig->in[i], p, inputs, err, errn);
		if (st)
			return st;
	}
	return MTP_OK;
}

bool mtp_call_has_fp8(const struct mtp_call *c)
{
	for (int i = 0; i < c->n_in; i++)
		if (c->in[i].data && mtp_dtype_is_fp8(c->in[i].dtype))
			return true;
	return false;
}
