/*
 * The captured-block step on the CPU [SPEC.md §12.3]: the block is the
 * engine's and arrives as inputs. The step recomputes the glue before it
 * (returned as block_in, which the harness judges against the captured
 * one), takes the captured block outputs as given and recomputes
 * everything after them: V3 family the final add and norm, the recycled
 * hidden and the LM head; V4 the one final hc_post (the layer's over the
 * captured post_mix / comb_mix under the deferred contract; the block's
 * own under the internal one, whose block_out already is the streams),
 * the recycled streams, hc_head, the shared-head norm and the LM head.
 * The §12.1 conventions the form exercises (pos0_mask, add_norm_input,
 * final_add, logits_dtype) are honoured. mtp_step.c and draft_chain.c
 * call it; the chain feeds each step the previous step's recomputed
 * recycled state.
 */
#include "cpu_internal.h"

bool mtp_cpu_captured_get(const struct mtp_call *c, const char *pfx,
			  struct mtp_cpu_captured *cap)
{
	memset(cap, 0, sizeof(*cap));
	if (!c->params || !c->params->v2.captured)
		return false;
	cap->block_out = mtp_cpu_in(c, pfx, "block_out");
	cap->block_residual = mtp_cpu_in(c, pfx, "block_residual");
	cap->post_mix = mtp_cpu_in(c, pfx, "post_mix");
	cap->comb_mix = mtp_cpu_in(c, pfx, "comb_mix");
	return true;
}

enum mtp_status mtp_cpu_captured_step(
	const struct mtp_cpu_cfg *cfg, const struct mtp_cpu_layer *w,
	const void *embeds, const int64_t *positions, const void *prev,
	const struct mtp_cpu_captured *cap, const struct mtp_cpu_step_out *o)
{
	const int64_t ns = cfg->t * cfg->m * cfg->h;
	enum mtp_status st;

	if (!cap->block_out)
		return MTP_ERR_INVALID;
	st = mtp_cpu_glue(cfg, w, embeds, positions, prev, o->block_in);
	if (st)
		return st;
	if (!mtp_family_mhc(cfg->family))
		return cap->block_residual
			       ? mtp_cpu_after_v3(cfg, w, cap->block_out,
						  cap->block_residual, o)
			       : MTP_ERR_INVALID;
	if (cfg->contract == MTP_CONTRACT_INTERNAL) {
		memcpy(o->streams, cap->block_out,
		       (size_t)ns * mtp_dtype_size(cfg->act));
	} else {
		if (!cap->block_residual || !cap->post_mix || !cap->comb_mix)
			return MTP_ERR_INVALID;
		st = mtp_cpu_hc_post_rows(cfg->act, cap->block_out,
					  cap->block_residual, cap->post_mix,
					  cap->comb_mix, cfg->t, cfg->m, cfg->h,
					  o->streams);
		if (st)
			return st;
	}
	return mtp_cpu_after_v4(cfg, w, o);
}
