/*
 * The teacher-forced draft chain [SPEC.md §5, FORMAT.md draft_chain]:
 * K steps, step s on layer s % L (or layer 0 when spec_step_idx is not
 * passed), fed the next token's embedding, positions + s and the previous
 * step's recycled hidden, so that every step can be judged on its own.
 */
#include "ref_internal.h"

int64_t mtp_ref_chain_layer(const struct mtp_ref_chain_in *in, int64_t s)
{
	return in->pass_step_idx ? s % in->l : 0;
}

static void chain_step(const struct mtp_ref_chain_in *in, int64_t s,
		       const struct mtp_ref_step_in *step_in,
		       const struct mtp_ref_dims *d,
		       const struct mtp_ref_step_cfg *c,
		       struct mtp_ref_step_out *out)
{
	const int64_t l = mtp_ref_chain_layer(in, s);

	if (mtp_family_mhc(c->family))
		mtp_ref_mtp_step_v4(step_in, &in->v4[l], d, c, out);
	else
		mtp_ref_mtp_step_v3(step_in, &in->v3[l], d, c, out);
}

void mtp_ref_draft_chain(const struct mtp_ref_chain_in *in,
			 const struct mtp_ref_dims *d,
			 const struct mtp_ref_step_cfg *c,
			 struct mtp_ref_step_out *steps)
{
	const int64_t t = d->t;
	double *embeds = mtp_ref_scratch((size_t)(t * d->h));
	int64_t *positions = mtp_ref_alloc((size_t)t * sizeof(*positions));

	for (int64_t s = 0; s < in->k; s++) {
		const int64_t *ids =
			s ? in->next_tokens + (s - 1) * t : in->input_ids;
		const struct mtp_ref_step_in step_in = {
			.embeds = embeds,
			.positions = positions,
			.prev_hidden =
				s ? steps[s - 1].recycled : in->prev_hidden,
		};

		mtp_ref_embed(in->embed_table, ids, t, d->h, embeds);
		for (int64_t r = 0; r < t; r++)
			positions[r] = in->positions[r] + s;
		chain_step(in, s, &step_in, d, c, &steps[s]);
	}
	free(positions);
	free(embeds);
}
