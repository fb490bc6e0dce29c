/*
 * The teacher-forced draft chain [SPEC.md §5, FORMAT.md draft_chain] on
 * the CPU: K steps, step s on layer s % L (layer 0 when spec_step_idx is
 * not passed), fed embed_table[ids_s], positions + s and the previous
 * step's recycled hidden, each step exactly one mtp_step. A chain of
 * captured-block steps (captured.c) gets each step's captured block and
 * positions clamped to max_position; the recycled state it feeds on is the
 * recomputed one.
 */
#include "cpu_internal.h"

#include <stdio.h>

struct chain {
	const struct mtp_call *c;
	struct mtp_cpu_cfg cfg;
	int64_t *ids, *next, *pos, *pos_s;
	void *embeds;
};

static enum mtp_status chain_step(struct chain *ch, int64_t s)
{
	const struct mtp_params *p = ch->c->params;
	const struct mtp_cpu_cfg *cfg = &ch->cfg;
	const int64_t t = cfg->t;
	const int64_t l = p->pass_step_idx ? s % p->num_layers : 0;
	const int64_t *ids = s ? ch->next + (s - 1) * t : ch->ids;
	struct mtp_cpu_layer w;
	struct mtp_cpu_step_out o, prev_o;
	struct mtp_cpu_captured cap;
	bool captured;
	char pfx[32];
	enum mtp_status st;

	st = mtp_cpu_embed_rows(cfg->act, mtp_cpu_in(ch->c, "", "embed_table"),
				cfg->v, ids, t, cfg->h, ch->embeds);
	if (st)
		return st;
	/* a captured chain clamps to max_position (FORMAT.md v2) */
	for (int64_t r = 0; r < t; r++)
		ch->pos_s[r] = ch->pos[r] + s < cfg->max_position
				       ? ch->pos[r] + s
				       : cfg->max_position;
	snprintf(pfx, sizeof(pfx), "layer.%lld/", (long long)l);
	mtp_cpu_layer_get(ch->c, pfx, &w);
	snprintf(pfx, sizeof(pfx), "step.%lld/", (long long)s);
	mtp_cpu_step_out_get(ch->c, pfx, &o);
	captured = mtp_cpu_captured_get(ch->c, pfx, &cap);
	if (s) {
		snprintf(pfx, sizeof(pfx), "step.%lld/", (long long)(s - 1));
		mtp_cpu_step_out_get(ch->c, pfx, &prev_o);
	}
	return mtp_cpu_step(cfg, &w, ch->embeds, ch->pos_s,
			    s ? prev_o.recycled
			      : mtp_cpu_in(ch->c, "", "prev_hidden"),
			    captured ? &cap : NULL, &o);
}

enum mtp_status mtp_cpu_op_draft_chain(const struct mtp_call *c)
{
	const struct mtp_tensor *next = mtp_cpu_in_tensor(c, "next_tokens");
	struct chain ch = {.c = c};
	enum mtp_status st = MTP_ERR_NOMEM;

	mtp_cpu_cfg_init(c, &ch.cfg);
	ch.ids = mtp_cpu_indices(mtp_cpu_in_tensor(c, "input_ids"));
	ch.pos = mtp_cpu_indices(mtp_cpu_in_tensor(c, "positions"));
	ch.pos_s = mtp_cpu_alloc((size_t)ch.cfg.t * sizeof(int64_t));
	ch.embeds =
		mtp_cpu_act_alloc(ch.cfg.act, (size_t)(ch.cfg.t * ch.cfg.h));
	if (next && next->data)
		ch.next = mtp_cpu_indices(next);
	if (!ch.ids || !ch.pos || !ch.pos_s || !ch.embeds)
		goto out_free;
	st = MTP_OK;
	if (c->params->num_steps > 1 && !ch.next)
		st = next ? MTP_ERR_NOMEM : MTP_ERR_INVALID;
	for (int64_t s = 0; !st && s < c->params->num_steps; s++)
		st = chain_step(&ch, s);
out_free:
	mtp_cpu_free(ch.embeds);
	mtp_cpu_free(ch.pos_s);
	mtp_cpu_free(ch.pos);
	mtp_cpu_free(ch.next);
	mtp_cpu_free(ch.ids);
	return st;
}
