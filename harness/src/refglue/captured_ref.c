/*
 * The reference run and the bug hypotheses of a captured-block call: the
 * call's widened tensors (ref_io.h) are laid out as a run of captured steps
 * (mtp/ref_captured.h). A hypothesis is the same run with the bug applied
 * to each step's outputs before the next step is fed its recycled state
 * (SPEC.md §8, §10.2), so that a chain's later block inputs show it.
 */
#include "captured.h"

#include "bug_step.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mtp/ref_captured.h"

#define PFX_MAX 32

struct cap_setup {
	struct mtp_ref_captured_run run;
	struct mtp_ref_dims d;
	struct mtp_ref_step_cfg cfg;
	struct mtp_ref_conv cv;
	struct mtp_ref_v3_layer *v3;
	struct mtp_ref_v4_layer *v4;
	struct mtp_ref_captured *cap;
	struct mtp_ref_captured_out *out;
	double *tp_block_out; /* [Step V3-8] the reduced partials */
};

static void setup_fini(struct cap_setup *s)
{
	free(s->v3);
	free(s->v4);
	free(s->cap);
	free(s->out);
	free(s->tp_block_out);
}

static double *out_at(const struct mtp_ref_io *io, const char *pfx,
		      const char *name)
{
	char full[MTP_NAME_MAX];

	snprintf(full, sizeof(full), "%s%s", pfx, name);
	return mtp_refio_out(io, full);
}

static void step_io(const struct mtp_ref_io *io, const char *pfx,
		    struct mtp_ref_captured *cap,
		    struct mtp_ref_captured_out *o)
{
	char full[MTP_NAME_MAX];

	cap->block_out = mtp_refio_inp(io, pfx, "block_out");
	cap->block_residual = mtp_refio_inp(io, pfx, "block_residual");
	cap->post_mix = mtp_refio_inp(io, pfx, "post_mix");
	cap->comb_mix = mtp_refio_inp(io, pfx, "comb_mix");
	o->block_in = out_at(io, pfx, "block_in");
	o->hidden_pre = out_at(io, pfx, "hidden_pre");
	o->hidden_post = out_at(io, pfx, "hidden_post");
	o->streams = out_at(io, pfx, "streams");
	o->head_hidden = out_at(io, pfx, "head_hidden");
	o->recycled = out_at(io, pfx, "recycled");
	o->logits = out_at(io, pfx, "logits");
	snprintf(full, sizeof(full), "%stoken", pfx);
	o->token = mtp_refio_iout(io, full);
}

static enum mtp_status setup(const struct mtp_ref_io *io, struct cap_setup *s)
{
	const struct mtp_params *p = io->c->params;
	bool chain = io->c->op->scope == MTP_SCOPE_CHAIN;
	int64_t k = chain ? p->num_steps : 1, l = chain ? p->num_layers : 1;
	char pfx[PFX_MAX] = "";

	memset(s, 0, sizeof(*s));
	mtp_refio_cfg(io->c, &s->cfg, &s->d);
	mtp_ref_conv_init(&s->cv);
	/* the conventions of the case (or of a hypothesis): undeclared is v1 */
	s->cv.pos0_mask = p->conv.pos0_mask == MTP_POS0_MASKED;
	s->v3 = calloc((size_t)l, sizeof(*s->v3));
	s->v4 = calloc((size_t)l, sizeof(*s->v4));
	s->cap = calloc((size_t)k, sizeof(*s->cap));
	s->out = calloc((size_t)k, sizeof(*s->out));
	if (!s->v3 || !s->v4 || !s->cap || !s->out)
		return MTP_ERR_NOMEM;
	for (int64_t i = 0; i < l; i++) {
		if (chain)
			snprintf(pfx, sizeof(pfx), "layer.%lld/", (long long)i);
		mtp_refio_v3_layer(io, pfx, &s->v3[i]);
		mtp_refio_v4_layer(io, pfx, &s->v4[i]);
	}
	for (int64_t i = 0; i < k; i++) {
		if (chain)
			snprintf(pfx, sizeof(pfx), "step.%lld/", (long long)i);
		step_io(io, chain ? pfx : "", &s->cap[i], &s->out[i]);
	}
	if (p->tp.step) {
		s->tp_block_out = mtp_captured_tp_block_out(io, &s->cfg);
		if (!s->tp_block_out)
			return MTP_ERR_NOMEM;
		s->cap[0].block_out = s->tp_block_out;
	}
	s->run = (struct mtp_ref_captured_run){
		.k = k,
		.l = l,
		.pass_step_idx = chain && p->pass_step_idx,
		.embeds = chain ? NULL : mtp_refio_in(io, "embeds"),
		.embed_table = mtp_refio_in(io, "embed_table"),
		.input_ids = mtp_refio_iin(io, "input_ids"),
		.next_tokens = mtp_refio_iin(io, "next_tokens"),
		.positions = mtp_refio_iin(io, "positions"),
		.max_position = p->v2.max_position,
		.prev_hidden = mtp_refio_in(io, "prev_hidden"),
		.v3 = s->v3,
		.v4 = s->v4,
		.cap = s->cap,
	};
	return MTP_OK;
}

enum mtp_status mtp_captured_run(const struct mtp_ref_io *io)
{
	struct cap_setup s;
	enum mtp_status st = setup(io, &s);

	if (!st)
		mtp_ref_captured_steps(&s.run, &s.d, &s.cfg, &s.cv, s.out);
	setup_fini(&s);
	return st;
}

struct hyp {
	const struct cap_setup *s;
	const struct mtp_call *c;
	const struct mtp_bug_class *row;
	enum mtp_status st;
};

/* The row's after_step on step `step` (layer l): the captured block's
 * outputs and state are the step's buffers. */
static void apply_bug(void *ctx, int64_t step, int64_t l,
		      struct mtp_ref_captured_out *o)
{
	struct hyp *h = ctx;
	const struct cap_setup *s = h->s;
	const struct mtp_ref_captured *cap = &s->cap[step];
	struct mtp_ref_bug_step x = {
		.s = {.c = h->c,
		      .step = step,
		      .layer = l,
		      .mhc = mtp_family_mhc(s->cfg.family)},
		.d = &s->d,
		.cfg = &s->cfg,
		.v3 = s->v3,
		.v4 = s->v4,
		.o = {.block_out = (double *)cap->block_out,
		      .block_residual = (double *)cap->block_residual,
		      .hidden_pre = o->hidden_pre,
		      .hidden_post = o->hidden_post,
		      .post_mix = (double *)cap->post_mix,
		      .comb_mix = (double *)cap->comb_mix,
		      .streams = o->streams,
		      .head_hidden = o->head_hidden,
		      .recycled = o->recycled,
		      .logits = o->logits,
		      .token = o->token},
	};

	if (!h->st)
		h->st = mtp_ref_bug_step_apply(&x, h->row);
}

enum mtp_status mtp_captured_hypothesis(const struct mtp_ref_io *io,
					const struct mtp_bug_class *row)
{
	struct cap_setup s;
	struct hyp h = {&s, io->c, row, MTP_OK};
	enum mtp_status st = setup(io, &s);

	if (!st) {
		s.run.after_step = apply_bug;
		s.run.ctx = &h;
		mtp_ref_captured_steps(&s.run, &s.d, &s.cfg, &s.cv, s.out);
		st = h.st;
	}
	setup_fini(&s);
	return st;
}
