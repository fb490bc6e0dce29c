/*
 * Captured-block steps in sequence [SPEC.md §12.3, §5]: one mtp_step, or
 * a teacher-forced chain whose step s runs on layer s % L (layer 0 when
 * spec_step_idx is not passed), is fed the token's embedding, positions + s
 * clamped to max_position (FORMAT.md v2 rule 15) and the previous step's
 * recomputed recycled state; its glue output is what step s's captured
 * block input is judged against, and its own captured block output is what
 * the rest of the step starts from.
 */
#include "ref_internal.h"

#include "mtp/ref_captured.h"

static void one_step(const struct mtp_ref_captured_run *run, int64_t s,
		     int64_t l, const struct mtp_ref_step_in *in,
		     const struct mtp_ref_dims *d,
		     const struct mtp_ref_step_cfg *c,
		     const struct mtp_ref_conv *cv,
		     struct mtp_ref_captured_out *o)
{
	if (mtp_family_mhc(c->family)) {
		mtp_ref_glue_v4(in, &run->v4[l], d, c, cv, o->block_in);
		mtp_ref_after_block_v4(&run->cap[s], &run->v4[l], d, c, o);
	} else {
		mtp_ref_glue_v3(in, &run->v3[l], d, c, cv, o->block_in);
		mtp_ref_after_block_v3(&run->cap[s], &run->v3[l], d, c, o);
	}
}

void mtp_ref_captured_steps(const struct mtp_ref_captured_run *run,
			    const struct mtp_ref_dims *d,
			    const struct mtp_ref_step_cfg *c,
			    const struct mtp_ref_conv *cv,
			    struct mtp_ref_captured_out *out)
{
	const int64_t t = d->t;
	double *embeds = mtp_ref_scratch((size_t)(t * d->h) + 1);
	int64_t *positions = mtp_ref_alloc((size_t)t * sizeof(int64_t) + 8);

	for (int64_t s = 0; s < run->k; s++) {
		const int64_t l = run->pass_step_idx ? s % run->l : 0;
		struct mtp_ref_step_in in = {
			.embeds = run->embeds ? run->embeds : embeds,
			.positions = positions,
			.prev_hidden =
				s ? out[s - 1].recycled : run->prev_hidden,
		};

		if (!run->embeds)
			mtp_ref_embed(run->embed_table,
				      s ? run->next_tokens + (s - 1) * t
					: run->input_ids,
				      t, d->h, embeds);
		for (int64_t r = 0; r < t; r++)
			positions[r] = run->positions[r] + s < run->max_position
					       ? run->positions[r] + s
					       : run->max_position;
		one_step(run, s, l, &in, d, c, cv, &out[s]);
		if (run->after_step)
			run->after_step(run->ctx, s, l, &out[s]);
	}
	free(positions);
	free(embeds);
}
