/*
 * Mutants: backend wrappers that reproduce a known bug on purpose over any
 * correct backend (ARCHITECTURE.md "Rules and diagnoses"). The bug is made with the
 * base backend's own kernels (sub-calls on its device buffers), never with
 * the reference, so `mutant:X:cuda` really is CUDA with bug X. Ops the bug
 * does not touch go straight to the base.
 */
#include "mutant_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mtp/diagnose.h"

struct mutant {
	const struct mtp_bug_class *row;
};

/* A tensor of the parent call by prefix + name (inputs, then outputs). */
static const struct mtp_tensor *T(const struct mtp_call *c, const char *pfx,
				  const char *name)
{
	char full[MTP_NAME_MAX];
	int i;

	snprintf(full, sizeof(full), "%s%s", pfx, name);
	i = mtp_call_in_index(c, full);
	if (i >= 0)
		return &c->in[i];
	i = mtp_call_out_index(c, full);
	return i >= 0 ? &c->out[i] : NULL;
}

/* Device-to-device copy through the host (any backend can do it). */
static enum mtp_status dcopy(struct mtp_backend *base,
			     const struct mtp_tensor *dst,
			     const struct mtp_tensor *src)
{
	size_t n = mtp_tensor_nbytes(src);
	void *h = malloc(n ? n : 1);
	enum mtp_status st = h ? MTP_OK : MTP_ERR_NOMEM;

	if (!st)
		st = mtp_backend_download(base, h, src->data, n);
	if (!st)
		st = mtp_backend_upload(base, dst->data, h, n);
	free(h);
	return st;
}

/* logits, token = lm_head(RMSNorm(x; shared head of layer lp)), or
 * lm_head(x) when !norm. */
static enum mtp_status head_logits(struct mtp_backend *base,
				   const struct mtp_call *c, const char *lp,
				   const char *sp, const struct mtp_tensor *x,
				   bool norm)
{
	struct mtp_subcall *s = malloc(sizeof(*s));
	struct mtp_tensor tmp = {0};
	int64_t th[2] = {c->dims.t, c->dims.h};
	enum mtp_status st =
		!s     ? MTP_ERR_NOMEM
		: norm ? mtp_mutant_scratch(base, &tmp, c->act, 2, th)
		       : MTP_OK;

	if (!st && norm)
		st = mtp_mutant_sub_init(s, MTP_OP_RMSNORM, c);
	if (!st && norm) {
		mtp_mutant_sub_set(s, false, "x", x);
		mtp_mutant_sub_set(s, false, "weight",
				   T(c, lp, "shared_head_norm_weight"));
		mtp_mutant_sub_set(s, true, "y", &tmp);
		st = mtp_mutant_sub_run(base, s);
	}
	if (!st)
		st = mtp_mutant_sub_init(s, MTP_OP_LM_HEAD, c);
	if (!st) {
		mtp_mutant_sub_set(s, false, "x", norm ? &tmp : x);
		mtp_mutant_sub_set(s, false, "weight", T(c, lp, "head_weight"));
		mtp_mutant_sub_set(s, false, "weight_scale_inv",
				   T(c, lp, "head_scale_inv"));
		mtp_mutant_sub_set(s, true, "logits", T(c, sp, "logits"));
		mtp_mutant_sub_set(s, true, "token", T(c, sp, "token"));
		st = mtp_mutant_sub_run(base, s);
	}
	if (s)
		mtp_backend_free(base, tmp.data);
	free(s);
	return st;
}

/* V4: head_hidden = hc_head(streams; hc_head params of layer hp), then the
 * logits with the shared head of layer lp. */
static enum mtp_status v4_head(struct mtp_backend *base,
			       const struct mtp_call *c, const char *lp,
			       const char *hp, const char *sp)
{
	struct mtp_subcall *s = malloc(sizeof(*s));
	enum mtp_status st =
		s ? mtp_mutant_sub_init(s, MTP_OP_HC_HEAD, c) : MTP_ERR_NOMEM;

	if (!st) {
		mtp_mutant_sub_set(s, false, "x", T(c, sp, "streams"));
		mtp_mutant_sub_set(s, false, "fn", T(c, hp, "hc_head_fn"));
		mtp_mutant_sub_set(s, false, "scale",
				   T(c, hp, "hc_head_scale"));
		mtp_mutant_sub_set(s, false, "base", T(c, hp, "hc_head_base"));
		mtp_mutant_sub_set(s, true, "y", T(c, sp, "head_hidden"));
		st = mtp_mutant_sub_run(base, s);
	}
	free(s);
	return st ? st
		  : head_logits(base, c, lp, sp, T(c, sp, "head_hidden"), true);
}

/* streams <- hc_post(block_out, streams, post_mix, comb_mix): the second post. */
static enum mtp_status post_again(struct mtp_backend *base,
				  const struct mtp_call *c, const char *sp)
{
	struct mtp_subcall *s = malloc(sizeof(*s));
	const struct mtp_tensor *streams = T(c, sp, "streams");
	struct mtp_tensor tmp;
	enum mtp_status st =
		s ? mtp_mutant_scratch(base, &tmp, c->act, 3, streams->shape)
		  : MTP_ERR_NOMEM;

	if (!st)
		st = mtp_mutant_sub_init(s, MTP_OP_HC_POST, c);
	if (!st) {
		mtp_mutant_sub_set(s, false, "x", T(c, sp, "block_out"));
		mtp_mutant_sub_set(s, false, "residual", streams);
		mtp_mutant_sub_set(s, false, "post_mix", T(c, sp, "post_mix"));
		mtp_mutant_sub_set(s, false, "comb_mix", T(c, sp, "comb_mix"));
		mtp_mutant_sub_set(s, true, "out", &tmp);
		st = mtp_mutant_sub_run(base, s);
	}
	if (!st)
		st = dcopy(base, streams, &tmp);
	if (s)
		mtp_backend_free(base, tmp.data);
	free(s);
	return st;
}

/* The mutant's side of a step bug (mtp/bugclass.h): step sp (layer
 * prefix lp) of the call, on the base's device buffers and kernels. */
struct dev_step {
	struct mtp_bug_step s; /* first: the row sees this */
	struct mtp_backend *base;
	const char *lp, *sp;
};

#define DS(s) ((const struct dev_step *)(s))

static enum mtp_status ds_copy(const struct mtp_bug_step *s, const char *dst,
			       const char *src)
{
	const struct mtp_tensor *d = T(s->c, DS(s)->sp, dst);
	const struct mtp_tensor *f = T(s->c, DS(s)->sp, src);

	return d && f ? dcopy(DS(s)->base, d, f) : MTP_ERR_INVALID;
}

static enum mtp_status ds_head(const struct mtp_bug_step *s, const char *x,
			       bool norm)
{
	const struct mtp_tensor *t = T(s->c, DS(s)->sp, x);

	return t ? head_logits(DS(s)->base, s->c, DS(s)->lp, DS(s)->sp, t, norm)
		 : MTP_ERR_INVALID;
}

static enum mtp_status ds_mhc_head(const struct mtp_bug_step *s, int64_t hc)
{
	char hp[32] = "";

	if (s->c->op->id == MTP_OP_DRAFT_CHAIN)
		snprintf(hp, sizeof(hp), "layer.%lld/", (long long)hc);
	return v4_head(DS(s)->base, s->c, DS(s)->lp, hp, DS(s)->sp);
}

static enum mtp_status ds_hc_post_again(const struct mtp_bug_step *s)
{
	return post_again(DS(s)->base, s->c, DS(s)->sp);
}

static const struct mtp_bug_step_ops dev_ops = {ds_copy, ds_head, ds_mhc_head,
						ds_hc_post_again};

/* Turns one correct step's outputs (prefix sp, layer prefix lp, layer l)
 * into what the buggy code produces: the row's after_step. */
static enum mtp_status fixup(struct mtp_backend *base,
			     const struct mtp_bug_class *row,
			     const struct mtp_call *c, const char *lp,
			     const char *sp, int64_t step, int64_t l)
{
	struct dev_step x = {
		{&dev_ops, c, step, l, mtp_bug_mhc(c)}, base, lp, sp};

	return row->after_step(&x.s);
}

/* Uploads n int64 values into a fresh device tensor of shape [n]. */
static enum mtp_status upload_i64(struct mtp_backend *base,
				  struct mtp_tensor *t, const int64_t *v,
				  int64_t n)
{
	enum mtp_status st = mtp_mutant_scratch(base, t, MTP_I64, 1, &n);

	return st ? st : mtp_backend_upload(base, t->data, v, (size_t)n * 8);
}

static enum mtp_status download_i64(struct mtp_backend *base,
				    const struct mtp_tensor *t, int64_t *v)
{
	int64_t n = mtp_tensor_numel(t);
	enum mtp_status st = mtp_backend_download(
		base, v, t->data, (size_t)n * mtp_dtype_size(t->dtype));

	if (!st && t->dtype == MTP_I32)
		for (int64_t i = n - 1; i >= 0; i--)
			v[i] = ((int32_t *)v)[i];
	return st;
}

struct chain_state {
	int64_t *pos,
		*ids; /* host: positions [T]; input_ids then next_tokens */
	struct mtp_tensor dpos, dids, emb;
	struct mtp_subcall *sub;
};

static void chain_free(struct mtp_backend *base, struct chain_state *cs)
{
	mtp_backend_free(base, cs->dpos.data);
	mtp_backend_free(base, cs->dids.data);
	mtp_backend_free(base, cs->emb.data);
	free(cs->pos);
	free(cs->ids);
	free(cs->sub);
}

/* One chain step as an mtp_step sub-call on the chain's own buffers. */
static enum mtp_status chain_step(struct mtp_backend *base,
				  const struct mtp_call *c,
				  struct chain_state *cs, int64_t s,
				  const char *lp, const char *sp,
				  const struct mtp_tensor *prev)
{
	int64_t t = c->dims.t;
	struct mtp_subcall *sc = cs->sub;
	enum mtp_status st;

	mtp_backend_free(base, cs->dpos.data);
	mtp_backend_free(base, cs->dids.data);
	cs->dpos.data = cs->dids.data = NULL;
	for (int64_t i = 0; i < t; i++) /* FORMAT.md v2 rule 15 */
		cs->pos[t + i] = cs->pos[i] + s < c->params->v2.max_position
					 ? cs->pos[i] + s
					 : c->params->v2.max_position;
	st = upload_i64(base, &cs->dpos, cs->pos + t, t);
	if (!st)
		st = upload_i64(base, &cs->dids, cs->ids + s * t, t);
	if (!st)
		st = mtp_mutant_sub_init(sc, MTP_OP_EMBED, c);
	if (!st) {
		mtp_mutant_sub_set(sc, false, "input_ids", &cs->dids);
		mtp_mutant_sub_set(sc, false, "embed_table",
				   T(c, "", "embed_table"));
		mtp_mutant_sub_set(sc, true, "out", &cs->emb);
		st = mtp_mutant_sub_run(base, sc);
	}
	if (!st)
		st = mtp_mutant_sub_init(sc, MTP_OP_MTP_STEP, c);
	if (st)
		return st;
	for (int i = 0; i < sc->sig.n_in; i++) {
		const struct mtp_tensor *w = T(c, lp, sc->sig.in[i].name);

		if (!w) /* a captured step's block tensors */
			w = T(c, sp, sc->sig.in[i].name);
		if (w)
			sc->in[i] = *w; /* layer l's weights */
	}
	mtp_mutant_sub_set(sc, false, "embeds", &cs->emb);
	mtp_mutant_sub_set(sc, false, "positions", &cs->dpos);
	mtp_mutant_sub_set(sc, false, "prev_hidden", prev);
	for (int i = 0; i < sc->sig.n_out; i++)
		sc->out[i] = *mtp_call_tensor(c, true, sp, sc->sig.out[i].name);
	return mtp_mutant_sub_run(base, sc);
}

/* The chain run step by step, the bug applied to each step before the next
 * one receives its recycled hidden. */
static enum mtp_status chain_steps(struct mtp_backend *base,
				   const struct mtp_bug_class *row,
				   const struct mtp_call *c)
{
	const struct mtp_params *p = c->params;
	int64_t t = c->dims.t, k = p->num_steps;
	int64_t th[2] = {t, c->dims.h};
	struct chain_state cs = {0};
	const struct mtp_tensor *prev = T(c, "", "prev_hidden");
	enum mtp_status st = MTP_ERR_NOMEM;

	cs.pos = malloc((size_t)t * 16); /* positions, then step s's */
	cs.ids = malloc((size_t)(k * t) * 8);
	cs.sub = malloc(sizeof(*cs.sub));
	if (!cs.pos || !cs.ids || !cs.sub)
		goto out;
	st = download_i64(base, T(c, "", "positions"), cs.pos);
	if (!st)
		st = download_i64(base, T(c, "", "input_ids"), cs.ids);
	if (!st && k > 1)
		st = download_i64(base, T(c, "", "next_tokens"), cs.ids + t);
	if (!st)
		st = mtp_mutant_scratch(base, &cs.emb, c->act, 2, th);
	for (int64_t s = 0; !st && s < k; s++) {
		int64_t l = p->pass_step_idx ? s % p->num_layers : 0;
		char lp[32], sp[32];

		snprintf(lp, sizeof(lp), "layer.%lld/", (long long)l);
		snprintf(sp, sizeof(sp), "step.%lld/", (long long)s);
		st = chain_step(base, c, &cs, s, lp, sp, prev);
		if (!st)
			st = fixup(base, row, c, lp, sp, s, l);
		prev = T(c, sp, "recycled");
	}
out:
	chain_free(base, &cs);
	return st;
}

/* The base's run of a step or chain, then the row's after_step on each
 * step (a change that feeds no later step). */
static enum mtp_status steps_after(struct mtp_backend *base,
				   const struct mtp_bug_class *row,
				   const struct mtp_call *c)
{
	const struct mtp_params *p = c->params;
	bool chain = c->op->id == MTP_OP_DRAFT_CHAIN;
	enum mtp_status st = mtp_backend_launch(base, c);

	if (!st)
		st = mtp_backend_synchronize(base);
	for (int64_t s = 0; !st && s < (chain ? p->num_steps : 1); s++) {
		char lp[32] = "", sp[32] = "";
		int64_t l = p->pass_step_idx ? s % p->num_layers : 0;

		if (chain) {
			snprintf(lp, sizeof(lp), "layer.%lld/", (long long)l);
			snprintf(sp, sizeof(sp), "step.%lld/", (long long)s);
		}
		st = fixup(base, row, c, lp, sp, s, chain ? l : 0);
	}
	return st;
}

static enum mtp_status plain(struct mtp_backend *base, const struct mtp_call *c)
{
	enum mtp_status st = mtp_backend_launch(base, c);

	return st ? st : mtp_backend_synchronize(base);
}

/* The base with the row's change: its refusal, its edit of the inputs, its
 * partials (where the judge would try them), its after_step on each step where the judge would try it (a chain run step
 * by step when the change feeds the next step), its after_run. */
static enum mtp_status mutant_launch(struct mtp_backend *be,
				     const struct mtp_call *c)
{
	const struct mutant *m = be->ctx;
	const struct mtp_bug_class *row = m->row;
	struct mtp_backend *base = be->base;
	bool chain = c->op->id == MTP_OP_DRAFT_CHAIN;
	enum mtp_status st;

	if (row->refuses && row->refuses(c))
		st = mtp_backend_fail(base, MTP_ERR_DEVICE, row->refusal);
	else if (row->edit)
		st = mtp_mutant_edit_launch(base, row, c);
	else if (row->partials && row->applies(c))
		st = mtp_mutant_partials(base, row, c);
	else if (!row->after_step || !row->applies(c))
		st = plain(base, c);
	else if (chain && (row->flags & MTP_BUG_STEPWISE))
		st = chain_steps(base, row, c);
	else
		st = steps_after(base, row, c);
	if (!st && row->after_run)
		st = mtp_mutant_after_run(base, row, c);
	if (st)
		snprintf(be->error, sizeof(be->error), "%s", base->error);
	return st;
}

static enum mtp_status mutant_open_dev(struct mtp_backend *be)
{
	(void)be;
	return MTP_OK; /* the base was opened by mtp_mutant_open */
}

static void mutant_close(struct mtp_backend *be)
{
	free(be->ctx);
	be->ctx = NULL;
}

static enum mtp_status mutant_alloc(struct mtp_backend *be, size_t n, void **p)
{
	return mtp_backend_alloc(be->base, n, p);
}

static void mutant_free(struct mtp_backend *be, void *p)
{
	mtp_backend_free(be->base, p);
}

static enum mtp_status mutant_upload(struct mtp_backend *be, void *dst,
				     const void *src, size_t n)
{
	return mtp_backend_upload(be->base, dst, src, n);
}

static enum mtp_status mutant_download(struct mtp_backend *be, void *dst,
				       const void *src, size_t n)
{
	return mtp_backend_download(be->base, dst, src, n);
}

static bool mutant_supports(struct mtp_backend *be, const struct mtp_call *c)
{
	return mtp_backend_supports(be->base, c);
}

static enum mtp_status mutant_sync(struct mtp_backend *be)
{
	return mtp_backend_synchronize(be->base);
}

static void mutant_info(struct mtp_backend *be, char *buf, size_t n)
{
	char b[200];

	mtp_backend_device_info(be->base, b, sizeof(b));
	snprintf(buf, n, "mutant %s over %s",
		 ((struct mutant *)be->ctx)->row->name, b);
}

static const struct mtp_backend_iface mutant_iface = {
	.api_version = MTP_BACKEND_API_VERSION,
	.name = "mutant",
	.description =
		"a backend wrapper that reproduces a known bug on purpose",
	.open = mutant_open_dev,
	.close = mutant_close,
	.alloc = mutant_alloc,
	.free = mutant_free,
	.upload = mutant_upload,
	.download = mutant_download,
	.supports = mutant_supports,
	.launch = mutant_launch,
	.synchronize = mutant_sync,
	.device_info = mutant_info,
};

/* The bug classes a mutant reproduces (the rows flagged so). */
bool mtp_mutant_exists(enum mtp_diag d)
{
	return d != MTP_DIAG_NONE && (mtp_bug_get(d)->flags & MTP_BUG_MUTANT);
}

enum mtp_status mtp_mutant_open(const char *spec, mtp_backend_opener open_base,
				struct mtp_backend **out, char *why,
				size_t whyn)
{
	char name[64];
	const char *colon = strchr(spec, ':');
	const char *base_name = colon ? colon + 1 : "";
	struct mtp_backend *be = NULL;
	enum mtp_diag d;
	enum mtp_status st;

	*out = NULL;
	snprintf(name, sizeof(name), "%.*s",
		 colon ? (int)(colon - spec) : (int)strlen(spec), spec);
	if (!mtp_diag_parse(name, &d) || !mtp_mutant_exists(d)) {
		snprintf(why, whyn,
			 "mutant '%s': not a diagnosis with a mutant (mtpcheck "
			 "list mutants)",
			 name);
		return MTP_ERR_INVALID;
	}
	be = calloc(1, sizeof(*be));
	struct mutant *m = calloc(1, sizeof(*m));

	if (!be || !m) {
		free(be);
		free(m);
		snprintf(why, whyn, "out of memory");
		return MTP_ERR_NOMEM;
	}
	st = open_base(base_name, NULL, &be->base, why, whyn);
	if (st) {
		free(be);
		free(m);
		return st;
	}
	m->row = mtp_bug_get(d);
	be->iface = &mutant_iface;
	be->ctx = m;
	snprintf(be->name, sizeof(be->name), "mutant:%s:%s", name, base_name);
	*out = be;
	return MTP_OK;
}
