/*
 * Shared helpers of the reference's tests: a tiny deterministic LCG for
 * inputs rounded to bf16, allocation, exact comparisons with NaN-aware
 * messages, and builders of random synthetic MTP layers and step outputs.
 */
#ifndef MTP_TEST_UTIL_H
#define MTP_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "mtp/ref.h"

struct test_rng {
	uint64_t s;
};

struct test_rng test_rng_init(uint64_t seed);
/* Uniform in [-1, 1), 24 random bits. */
double test_uniform(struct test_rng *g);
/* a[i] = act(scale * uniform) */
void test_fill(struct test_rng *g, double *a, size_t n, double scale,
	       enum mtp_dtype act);
/* a[i] = act(1 + spread * uniform): norm weights */
void test_fill_around_one(struct test_rng *g, double *a, size_t n,
			  double spread);

/* Zeroed, never NULL (aborts). Release with free(). */
double *test_alloc(size_t n);
int64_t *test_alloc_i64(size_t n);

/* Exact equality of every element, NaN equal to NaN; fails the test with
 * the first differing index otherwise. */
void test_assert_same(const double *a, const double *b, size_t n,
		      const char *what);
/* |a - b| <= tol for every element (no NaN allowed). */
void test_assert_close(const double *a, const double *b, size_t n, double tol,
		       const char *what);
/* Distance between two bf16 values in units of the bf16 spacing at the
 * smaller magnitude (0 if equal). */
double test_bf16_ulps(double a, double b);

/* Arrays allocated one by one, so that the sanitizers see any overrun. */
struct test_bufs {
	double *p[32];
	int n;
};

double *test_bufs_take(struct test_bufs *b, size_t n);
void test_bufs_free(struct test_bufs *b);

/* Random weights of one synthetic layer (§10), owned by bufs. */
struct test_v3 {
	struct mtp_ref_v3_layer layer;
	struct test_bufs bufs;
};

struct test_v4 {
	struct mtp_ref_v4_layer layer;
	struct test_bufs bufs;
};

void test_v3_init(struct test_v3 *w, const struct mtp_ref_dims *d,
		  uint64_t seed);
void test_v3_fini(struct test_v3 *w);
void test_v4_init(struct test_v4 *w, const struct mtp_ref_dims *d,
		  uint64_t seed);
void test_v4_fini(struct test_v4 *w);

/* Every output array of one step of a family, owned by bufs. */
struct test_out {
	struct mtp_ref_step_out o;
	struct test_bufs bufs;
};

void test_out_init(struct test_out *out, const struct mtp_ref_dims *d,
		   enum mtp_family family);
void test_out_fini(struct test_out *out);
/* Every array of two step outputs identical (family's arrays only). */
void test_assert_same_out(const struct test_out *a, const struct test_out *b,
			  const struct mtp_ref_dims *d, enum mtp_family family);

/* Case settings: bf16, eps 1e-6, eager rounding; V4 adds hc_eps 1e-6,
 * 20 Sinkhorn iterations, post_mult 2 and the given contract/variant. */
struct mtp_ref_step_cfg test_cfg_v3(void);
struct mtp_ref_step_cfg test_cfg_v4(enum mtp_contract contract,
				    enum mtp_hc_head_variant variant);

#endif
