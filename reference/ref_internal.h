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

static inline double mtp_ref_sigmoid(double z)
{
	return 1.0 / (1.0 + exp(-z));
}

#endif
