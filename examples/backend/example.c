/*
 * A backend written outside the mtpcheck tree, as a vendor would: one table
 * of methods over host memory (the installed mtp_host_* helpers) and one op, rmsnorm [docs/SPEC.md §2.1 eager,
 * §2.2 fused], in double arithmetic. Every other op is declined in
 * supports(), which the harness reports as UNIMPLEMENTED (never computed
 * another way). Built with -DEXAMPLE_GEMMA_WEIGHT it scales by (1 + weight),
 * the Gemma convention, instead of weight: a wrong kernel that the suite
 * must fail.
 *
 *   mtpcheck run --backend example --backend-lib ./mtp_backend_example.so
 */
#include <math.h>
#include <stdio.h>

#include "mtp/backend.h"

#ifdef EXAMPLE_GEMMA_WEIGHT
#define WEIGHT_OFFSET 1.0
#else
#define WEIGHT_OFFSET 0.0
#endif

static enum mtp_status ex_open(struct mtp_backend *be)
{
	(void)be;
	return MTP_OK;
}

/* rmsnorm in bfloat16, float16 and float32 (float64 is declined, to show a
 * dtype left UNIMPLEMENTED). */
static bool ex_supports(struct mtp_backend *be, const struct mtp_call *c)
{
	(void)be;
	return c->op->id == MTP_OP_RMSNORM &&
	       (c->act == MTP_BF16 || c->act == MTP_F16 || c->act == MTP_F32);
}

/* One row, in double (a float mean square overflows on the edge fixtures'
 * rows near the format's largest value), with the rounding points of the
 * call's contract: eager rounds x * r and then the product with the weight,
 * fused rounds once. */
static void norm_row(const struct mtp_call *c, const void *x, const void *w,
		     void *y, int64_t row)
{
	const int64_t h = c->dims.h, o = row * h;
	const enum mtp_dtype dt = c->act;
	bool eager = c->params->rounding == MTP_ROUNDING_EAGER;
	double ss = 0.0, r;

	for (int64_t i = 0; i < h; i++) {
		double v = mtp_load(dt, x, (size_t)(o + i));

		ss += v * v;
	}
	r = 1.0 / sqrt(ss / (double)h + c->params->eps);
	for (int64_t i = 0; i < h; i++) {
		double v = mtp_load(dt, x, (size_t)(o + i));
		double g = mtp_load(dt, w, (size_t)i) + WEIGHT_OFFSET;
		double n = eager ? mtp_round(dt, v * r) : v * r;

		mtp_store(dt, y, (size_t)(o + i), n * g);
	}
}

static enum mtp_status ex_launch(struct mtp_backend *be,
				 const struct mtp_call *c)
{
	const struct mtp_tensor *x = mtp_call_tensor(c, false, NULL, "x");
	const struct mtp_tensor *w = mtp_call_tensor(c, false, NULL, "weight");
	const struct mtp_tensor *y = mtp_call_tensor(c, true, NULL, "y");

	if (!x || !w || !y)
		return mtp_backend_fail(be, MTP_ERR_INVALID,
					"example: rmsnorm without x, weight "
					"or y");
	for (int64_t row = 0; row < c->dims.r; row++)
		norm_row(c, x->data, w->data, y->data, row);
	return MTP_OK;
}

static void ex_device_info(struct mtp_backend *be, char *buf, size_t n)
{
	(void)be;
	snprintf(buf, n, "host memory (examples/backend%s)",
		 WEIGHT_OFFSET != 0.0 ? ", the wrong variant" : "");
}

static const struct mtp_backend_iface example = {
	.api_version = MTP_BACKEND_API_VERSION,
	.name = "example",
	.description = "out-of-tree example: rmsnorm on the host",
	.open = ex_open,
	.alloc = mtp_host_alloc,
	.free = mtp_host_free,
	.upload = mtp_host_copy,
	.download = mtp_host_copy,
	.supports = ex_supports,
	.launch = ex_launch,
	.copy = mtp_host_copy,
	.device_info = ex_device_info,
};

/* The one symbol mtpcheck looks up in a module it loads. */
const struct mtp_backend_iface *mtp_backend_entry(void)
{
	return &example;
}
