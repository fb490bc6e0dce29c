/*
 * The scalar reference of a captured-block step and chain (SPEC.md §12.3,
 * FORMAT.md version 2): the block is a black box whose input and outputs
 * the engine captured. The reference recomputes the glue before the block
 * (what the block must be fed: block_in), takes the captured block outputs
 * as given and recomputes everything after them; in a chain, step s+1's glue
 * is fed step s's recomputed recycled state. The contract of mtp/ref.h
 * holds (double arrays holding representable values, rounding where the
 * spec stores).
 */
#ifndef MTP_REF_CAPTURED_H
#define MTP_REF_CAPTURED_H

#include "mtp/ref.h"

/* Conventions that engines differ on (§12.1) as far as the captured glue
 * and the post-block path use them. mtp_ref_conv_init gives the version 1
 * behaviour; a caller that reads declared conventions overrides fields. */
struct mtp_ref_conv {
	bool pos0_mask; /* zero the embeddings at position 0 (vLLM) */
};

void mtp_ref_conv_init(struct mtp_ref_conv *cv);

/* One step's captured block tensors. V3: block_out h [T,H], block_residual
 * r1 [T,H]. V4 deferred: block_out f [T,H], block_residual R1 [T,M,H],
 * post_mix [T,M], comb_mix [T,M,M]; V4 internal: block_out the streams
 * [T,M,H] after the block's own hc_post (the rest unused, may be NULL). */
struct mtp_ref_captured {
	const double *block_out, *block_residual, *post_mix, *comb_mix;
};

/* One step's outputs (caller-allocated). V3: block_in [T,H], hidden_pre,
 * hidden_post, recycled [T,H]. V4: block_in [T,M,H], streams [T,M,H],
 * recycled [T,M*H], head_hidden [T,H]. Both: logits [T,V], token [T]. */
struct mtp_ref_captured_out {
	double *block_in;
	double *hidden_pre, *hidden_post; /* V3 */
	double *streams, *head_hidden;	  /* V4 */
	double *recycled, *logits;
	int64_t *token;
};

/* [Steps V3-1..3] block_in = eh_proj(cat(enorm(mask(E)), hnorm(P))). */
void mtp_ref_glue_v3(const struct mtp_ref_step_in *in,
		     const struct mtp_ref_v3_layer *w,
		     const struct mtp_ref_dims *d,
		     const struct mtp_ref_step_cfg *c,
		     const struct mtp_ref_conv *cv, double *block_in);

/* [Steps V4-1..3] block_in [T,M,H] = act(h_proj(hnorm(P)) +
 * e_proj(enorm(mask(E)))) broadcast over the streams. */
void mtp_ref_glue_v4(const struct mtp_ref_step_in *in,
		     const struct mtp_ref_v4_layer *w,
		     const struct mtp_ref_dims *d,
		     const struct mtp_ref_step_cfg *c,
		     const struct mtp_ref_conv *cv, double *block_in);

/* [Steps V3-5..6] hidden_pre, hidden_post (= recycled), logits, token from
 * the captured (h, r1). */
void mtp_ref_after_block_v3(const struct mtp_ref_captured *cap,
			    const struct mtp_ref_v3_layer *w,
			    const struct mtp_ref_dims *d,
			    const struct mtp_ref_step_cfg *c,
			    struct mtp_ref_captured_out *o);

/* [Steps V4-6..8] streams (hc_post once under deferred, the captured
 * streams under internal) = recycled, then hc_head with this layer's
 * parameters, the shared-head norm, logits, token. */
void mtp_ref_after_block_v4(const struct mtp_ref_captured *cap,
			    const struct mtp_ref_v4_layer *w,
			    const struct mtp_ref_dims *d,
			    const struct mtp_ref_step_cfg *c,
			    struct mtp_ref_captured_out *o);

/* [Step V4-8] head_hidden, logits, token from o->streams with the hc_head
 * parameters of `head` and the shared head of `w`. */
void mtp_ref_v4_logits(const struct mtp_ref_v4_layer *w,
		       const struct mtp_ref_v4_layer *head,
		       const struct mtp_ref_dims *d,
		       const struct mtp_ref_step_cfg *c,
		       struct mtp_ref_captured_out *o);

/* A run of captured steps: one mtp_step (embeds given, K = 1) or a
 * teacher-forced chain (embeds gathered from embed_table). */
struct mtp_ref_captured_run {
	int64_t k, l;
	bool pass_step_idx;
	const double *embeds;	   /* mtp_step: [T,H]; chains: NULL */
	const double *embed_table; /* chains: [V,H] */
	const int64_t *input_ids, *next_tokens;
	const int64_t *positions; /* step s: min(positions + s, max_position) */
	int64_t max_position;
	const double *prev_hidden;
	const struct mtp_ref_v3_layer *v3;  /* [L] */
	const struct mtp_ref_v4_layer *v4;  /* [L] */
	const struct mtp_ref_captured *cap; /* [K] */
	/* Optional: called after each step, before the next one is fed its
	 * recycled state; may change the step's outputs (the bug hypotheses
	 * of the diagnoses use it). NULL: none. */
	void (*after_step)(void *ctx, int64_t s, int64_t layer,
			   struct mtp_ref_captured_out *o);
	void *ctx;
};

/* out[s] receives step s's outputs. */
void mtp_ref_captured_steps(const struct mtp_ref_captured_run *run,
			    const struct mtp_ref_dims *d,
			    const struct mtp_ref_step_cfg *c,
			    const struct mtp_ref_conv *cv,
			    struct mtp_ref_captured_out *out);

/* The LM head of a V3-family step [Steps V3-6, V3-9]: the logits of x in
 * the declared dtype, divided by c->logits_mup first where it is set. */
void mtp_ref_v3_head(const double *x, const struct mtp_ref_v3_layer *w,
		     const struct mtp_ref_dims *d,
		     const struct mtp_ref_step_cfg *c, double *logits,
		     int64_t *token);

#endif
