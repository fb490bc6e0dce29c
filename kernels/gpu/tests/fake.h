/*
 * The recording stand-in for a GPU device of the composition layer's tests
 * (fake.c): the primitives, their counters, and generated cases as host
 * calls.
 */
#ifndef MTP_GPU_TEST_FAKE_H
#define MTP_GPU_TEST_FAKE_H

#include "gpu.h"
#include "mtp/fixture.h"

struct fake {
	struct gpu_dev gpu; /* first, as in every GPU backend */
	int calls;	    /* kernel launches and copies */
	int fail_at;	    /* that call fails (1-based; 0: none) */
	int allocs, frees, fail_free_at, norm_jobs_max, norm_calls;
	int live, hc_post_calls, hc_pre_calls, hc_pre_fused;
	int fp8_calls, fp8_w8a8, fp8_e8m0; /* linear_fp8 */
	int reduce_order; /* of the last reduce_ordered (-1: none) */
	int scale_calls, rope_calls, attn_calls, attn_causal;
	int n_embed;		      /* embed calls, the ids of each: */
	struct gpu_buf embed_ids[64]; /* the first 64 */
};

static inline struct fake *F(struct mtp_backend *be)
{
	return (struct fake *)be->ctx;
}

/* Every primitive, the optional ones included. */
extern const struct gpu_prims fake_prims;
/* The same without gpu.h's optional primitives (the HIP module's set). */
struct gpu_prims core_prims(void);
enum mtp_status fake_linear_fp8(struct mtp_backend *be, enum gpu_act a, bool l,
				struct gpu_buf x, struct gpu_buf w,
				const struct gpu_fp8 *q, struct gpu_buf y,
				int64_t r, int64_t i, int64_t o);

/* A generated case of op (family, contract as given) as a host call. */
struct gen {
	struct mtp_case c;
	struct mtp_case_call cc;
};

/* The op's default family. */
#define DEFAULT_FAMILY (-1)

void gen(struct gen *g, const char *op, int fam, const char *contract);
void gen_fini(struct gen *g);
void fake_init(struct mtp_backend *be, struct fake *f, int fail_at);
/* Fails each primitive call of a launch of op in turn: each failure is the
 * launch's status, nothing runs after it, scratch is released. */
void fail_each(const char *op, int fam, const char *contract);

#endif
