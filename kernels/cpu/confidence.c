/*
 * DSpark's confidence head [SPEC.md §13 Step DS-7]: a float32 dot of the
 * weight with [hidden; markov_embed], plus the optional bias, through a
 * sigmoid, as vLLM's float32 ReplicatedLinear and torch.sigmoid do.
 */
#include "cpu_internal.h"

struct conf_args {
	enum mtp_dtype act;
	const void *hidden, *embed;
	const float *w, *bias;
	int64_t h, r;
	float *conf;
};

static void conf_one(const void *ctx, int64_t t, float *buf)
{
	const struct conf_args *g = ctx;
	float *x = buf;
	float z;

	mtp_cpu_load(g->act, g->hidden, t * g->h, g->h, x);
	if (g->r) /* R = 0: no embedding (it may have no storage) */
		mtp_cpu_load(g->act, g->embed, t * g->r, g->r, x + g->h);
	z = mtp_cpu_scaled_dot(1.0f, g->w, x, g->h + g->r);
	if (g->bias)
		z += g->bias[0];
	g->conf[t] = mtp_cpu_sigmoid(z);
}

enum mtp_status mtp_cpu_confidence_rows(enum mtp_dtype act, const void *hidden,
					const void *embed, const float *w,
					const float *bias, int64_t t, int64_t h,
					int64_t r, float *conf)
{
	const struct conf_args g = {act, hidden, embed, w, bias, h, r, conf};

	return mtp_cpu_rows(t, h + r, (size_t)(h + r), conf_one, &g);
}

enum mtp_status mtp_cpu_op_confidence(const struct mtp_call *c)
{
	return mtp_cpu_confidence_rows(
		c->act, mtp_cpu_in(c, "", "hidden"),
		mtp_cpu_in(c, "", "markov_embed"), mtp_cpu_in(c, "", "weight"),
		mtp_cpu_in(c, "", "bias"), c->dims.t, c->dims.h, c->dims.r,
		mtp_cpu_out(c, "", "confidence"));
}
