/*
 * Helpers shared by the reference's op files and nothing else: the one
 * scratch allocator, the RMSNorm row kernel, the dot product, sigmoid and
 * the SwiGLU FFN. Not part of the contract in mtp/ref.h.
 */
#ifndef MTP_REF_INTERNAL_H
#define MTP_REF_INTERNAL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "mtp/ref.h"

/*
 * Zeroed scratch of `bytes` bytes (at least one). The reference's functions
 * cannot fail by contract, so running out of memory for scratch is treated
 * as a resource error of the caller: one line on stderr, then abort().
 * Release with free().
 */
void *mtp_ref_alloc(size_t bytes);

/* mtp_ref_alloc() of n doubles. */
double *mtp_ref_scratch(size_t n);

/* 1/sqrt(mean(x[0..n-1]^2) + eps), the mean in double. */
double mtp_ref_rms_inv(const double *x, int64_t n, double eps);

/*
 * y[i] = x[i]*r*w[i] with the RMSNorm rounding rnd [§2.1/§2.2]:
 * eager act(act(x*r)*w), fused act(x*r*w).
 */
void mtp_ref_norm_row(const double *x, double r, const double *w, int64_t h,
		      enum mtp_rounding rnd, enum mtp_dtype act, double *y);

/* Writes rows [T,H] into the first (second false) or second half of each
 * row of z [T,2H]: the fused input in the family's order [Step V3-2]. */
void mtp_ref_v3_put_half(double *z, const double *rows, int64_t t, int64_t h,
			 bool second);

/* e [T,H] = RMSNorm(x; enorm), or RMSNorm(RMSNorm(x; pre); enorm) for a row
 * that norms the embedding twice [Step V3-9]; tmp is scratch [T,H]. */
void mtp_ref_v3_embed_norm(const double *x, const double *pre_w,
			   const double *enorm_w, const struct mtp_ref_dims *d,
			   const struct mtp_ref_step_cfg *c, double *tmp,
			   double *e);

/* recycled [T,H] = the row's choice [§8.1]: hidden_pre for a family that
 * recycles the pre-norm sum, else hidden_post. */
void mtp_ref_v3_recycle(const double *hidden_pre, const double *hidden_post,
			const struct mtp_ref_dims *d,
			const struct mtp_ref_step_cfg *c, double *recycled);

/*
 * fn(ctx, lo, hi) over [0, n) in contiguous ranges, on up to 16 threads
 * (MTP_REF_THREADS caps them; 1 is serial) when work (multiply-adds) is
 * large enough, else on the calling thread alone; returns when every range
 * is done. fn must write only the elements of its range.
 */
void mtp_ref_parallel(int64_t n, double work,
		      void (*fn)(void *ctx, int64_t lo, int64_t hi), void *ctx);

/* sum_i a[i]*b[i] in double, i ascending. */
double mtp_ref_dot(const double *a, const double *b, int64_t n);

/*
 * [§10] out [rows,H] = act(W_down . act(silu(act(W_gate x)) * act(W_up x)))
 * for x [rows,H]; W_gate and W_up are [F,H], W_down [H,F]. With
 * MTP_SILU_TWICE [§12.1] silu(.) is rounded to act before the product.
 */
void mtp_ref_swiglu(const double *x, const double *w_gate, const double *w_up,
		    const double *w_down, int64_t rows, int64_t h, int64_t f,
		    enum mtp_silu_rounding silu, enum mtp_dtype act,
		    double *out);

/* The index of the largest of l[0..v-1] with torch.argmax's rules: the
 * first index on ties, the first NaN beats every number. */
int64_t mtp_ref_argmax(const double *l, int64_t v);

/* The scalars of every hc_pre of a synthetic block, from the case [§1,
 * §10.2]: rms_eps = norm_eps = eps, pre_eps = sinkhorn_eps = hc_eps. */
struct mtp_hc_params mtp_ref_block_hc_params(const struct mtp_ref_step_cfg *c);

/* [§13 DS-5..7] The head of both DSpark forms (dspark_head.c): base logits
 * act(head_w . hn), times logit_scale to act when it is not 1; the Markov
 * loop keyed on ids[0], then on each drawn token (on ids[k] under
 * markov_on_ids, DSPARK_MARKOV_KEYED_ON_IDS); the confidence of h. */
struct mtp_ref_dspark_head {
	const int64_t *ids;   /* [T] */
	const double *hn, *h; /* [T,H]: the head's input, the hidden */
	const double *head_w, *markov_w1, *markov_w2;
	const double *conf_w, *conf_b; /* conf_b NULL: no bias */
	double logit_scale;
	bool markov_on_ids;
};
struct mtp_ref_dspark_head_out {
	double *base_logits, *markov_embed, *logits, *confidence;
	int64_t *token;
};
void mtp_ref_dspark_head(const struct mtp_ref_dspark_head *hd, int64_t t,
			 int64_t h, int64_t v, int64_t r, enum mtp_dtype act,
			 const struct mtp_ref_dspark_head_out *out);

static inline double mtp_ref_sigmoid(double z)
{
	return 1.0 / (1.0 + exp(-z));
}

#endif
