/*
 * The head of a DSpark step [SPEC.md §13 DS-5..7], shared by the synthetic
 * step (§13.9) and the captured one (§13.9.1), so that the two forms, and
 * the bug rows that change it, cannot drift apart: the base logits through
 * the drafter's LogitsProcessor (its logit_scale on them too, rounded to
 * act), the sequential Markov loop keyed on the bonus token and then on
 * each drawn token, and the confidence of the hidden the drafter returns.
 */
#include "ref_internal.h"

void mtp_ref_dspark_head(const struct mtp_ref_dspark_head *hd, int64_t t,
			 int64_t h, int64_t v, int64_t r, enum mtp_dtype act,
			 const struct mtp_ref_dspark_head_out *out)
{
	int64_t prev = t ? hd->ids[0] : 0, tok; /* T = 0: nothing to draft */

	for (int64_t k = 0; k < t; k++) {
		double *base = out->base_logits + k * v;

		mtp_ref_lm_head_dt(hd->hn + k * h, hd->head_w, 1, v, h, act,
				   base, &tok);
		if (hd->logit_scale != 1.0)
			for (int64_t i = 0; i < v; i++)
				base[i] = mtp_round(act,
						    hd->logit_scale * base[i]);
	}
	for (int64_t k = 0; k < t; k++) {
		if (hd->markov_on_ids) /* DSPARK_MARKOV_KEYED_ON_IDS */
			prev = hd->ids[k];
		mtp_ref_markov_bias(out->base_logits + k * v, &prev,
				    hd->markov_w1, hd->markov_w2, 1, v, r,
				    hd->logit_scale, act,
				    out->markov_embed + k * r,
				    out->logits + k * v, out->token + k);
		prev = out->token[k];
	}
	mtp_ref_confidence(hd->h, out->markov_embed, hd->conf_w, hd->conf_b, t,
			   h, r, out->confidence);
}
