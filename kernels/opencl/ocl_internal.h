/*
 * The host layer that the opencl and level_zero backends share: both run
 * the same OpenCL C kernels (the .cl files of this folder), so the ops are
 * composed once (kernels.c, ops.c, block.c, step.c) on top of four calls
 * that each platform provides (struct ocl_dev_ops): enqueue a kernel with
 * flattened arguments, allocate and release device memory, copy between
 * buffers. Everything else that is not a vendor call (argument packing,
 * launch geometry, scratch, device pick, build log, timer arithmetic) is
 * in dev_common.c and kernels.c, and so runs under OpenCL in CI.
 *
 * A buffer is a handle and a byte offset (struct ocl_buf): a cl_mem cannot
 * be offset by pointer arithmetic, so every kernel takes (pointer, byte
 * offset) pairs; a Level Zero device pointer is passed the same way.
 */
#ifndef MTP_OCL_INTERNAL_H
#define MTP_OCL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mtp/backend.h"

/* Work-group size of the row kernels: MTP_WG of common.cl. */
#define OCL_WG 128
/* GEMM tile: GEMM_TILE of gemm.cl. */
#define OCL_TILE 16
/* Largest hc_mult of the mHC kernels: HC_MAX_M of hc_common.cl. */
#define OCL_HC_MAX_M 8
#define OCL_HC_MAX_MIX (2 * OCL_HC_MAX_M + OCL_HC_MAX_M * OCL_HC_MAX_M)
/* Work-group width of the element-wise kernels. */
#define OCL_EW 64

/* Local memory of each kernel (its last argument `lm`), in bytes. */
#define OCL_LM_ROW (OCL_WG * 4)
#define OCL_LM_HC_PRE ((OCL_WG + OCL_HC_MAX_MIX + 1 + OCL_HC_MAX_M) * 4)
#define OCL_LM_HC_HEAD ((OCL_WG + 2 * OCL_HC_MAX_M + 1) * 4)
#define OCL_LM_GEMM (2 * OCL_TILE * (OCL_TILE + 1) * 4)
#define OCL_LM_ARGMAX (OCL_WG * (4 + 8))

/* Activation types: ACT_* of common.cl. */
enum ocl_act { OCL_BF16 = 0, OCL_F32 = 1, OCL_F16 = 2 };

/* Rounding of the norms: ROUND_* of common.cl (and enum mtp_rounding). */
#define OCL_EAGER 0
#define OCL_FUSED 1

enum ocl_kernel {
	OCL_K_RMSNORM,
	OCL_K_ADD_RMSNORM,
	OCL_K_EMBED,
	OCL_K_POSITIONS_ADD,
	OCL_K_ALL_REDUCE,
	OCL_K_ADD_BCAST,
	OCL_K_SWIGLU,
	OCL_K_GEMM,
	OCL_K_ARGMAX,
	OCL_K_HC_PRE,
	OCL_K_HC_POST,
	OCL_K_HC_HEAD,
	OCL_K_COUNT
};

/* The kernels' names in the program, indexed by enum ocl_kernel. */
extern const char *const mtp_ocl_kernel_names[OCL_K_COUNT];

/* A device buffer (cl_mem or Level Zero device pointer) at a byte offset;
 * mem == NULL is an absent optional input. */
struct ocl_buf {
	void *mem;
	size_t off;
};

static inline struct ocl_buf ocl_at(struct ocl_buf b, size_t bytes)
{
	b.off += bytes;
	return b;
}

enum ocl_arg_kind { OCL_A_BUF, OCL_A_I32, OCL_A_I64, OCL_A_F32, OCL_A_LOCAL };

/* One kernel argument; a buffer becomes two (pointer, long byte offset);
 * a local one is a size in bytes (the runtime allocates it). */
struct ocl_arg {
	enum ocl_arg_kind kind;
	union {
		struct ocl_buf b;
		int32_t i;
		int64_t l;
		float f;
		size_t local;
	} v;
};

/* clang-format off */
#define OA_BUF(x) {.kind = OCL_A_BUF, .v.b = (x)}
#define OA_I32(x) {.kind = OCL_A_I32, .v.i = (int32_t)(x)}
#define OA_I64(x) {.kind = OCL_A_I64, .v.l = (int64_t)(x)}
#define OA_F32(x) {.kind = OCL_A_F32, .v.f = (float)(x)}
#define OA_LOCAL(x) {.kind = OCL_A_LOCAL, .v.local = (size_t)(x)}
/* clang-format on */

/* One flattened kernel argument, as clSetKernelArg and
 * zeKernelSetArgumentValue take it: size bytes at value (NULL: local
 * memory of that size, or a NULL pointer); value points into v. */
struct ocl_flat_arg {
	size_t size;
	const void *value;
	union {
		void *p;
		int64_t l;
		int32_t i;
		float f;
	} v;
};

/* Flat arguments of the largest kernel (hc_pre: 27), with room. */
#define OCL_MAX_FLAT 48

/* What a platform provides to the shared host code: its vendor calls. */
struct ocl_dev_ops {
	/* Sets the arguments a[0..n) of kernel k and enqueues it over
	 * groups[0] x groups[1] work-groups of lws[0] x lws[1] items. */
	enum mtp_status (*run)(struct mtp_backend *be, enum ocl_kernel k,
			       const struct ocl_flat_arg *a, int n,
			       const uint32_t groups[2], const uint32_t lws[2]);
	/* Device memory (a buffer handle or device pointer), and its release
	 * once the commands queued so far no longer need it. */
	enum mtp_status (*alloc)(struct mtp_backend *be, size_t bytes,
				 void **mem);
	enum mtp_status (*release)(struct mtp_backend *be, void *mem);
	/* Device copy, in queue order. */
	enum mtp_status (*copy)(struct mtp_backend *be, struct ocl_buf dst,
				struct ocl_buf src, size_t bytes);
};

#define OCL_SCRATCH_MAX 96

/* Every backend's context starts with this. */
struct ocl_dev {
	const struct ocl_dev_ops *ops;
	void *scratch[OCL_SCRATCH_MAX]; /* of the current launch */
	int n_scratch;
};

static inline struct ocl_dev *ocl_dev(struct mtp_backend *be)
{
	return (struct ocl_dev *)be->ctx;
}

static inline const struct ocl_dev_ops *ocl_ops(struct mtp_backend *be)
{
	return ocl_dev(be)->ops;
}

/* Propagates a status. */
#define OCL_TRY(call)                                                          \
	do {                                                                   \
		enum mtp_status ocl_st_ = (call);                              \
		if (ocl_st_ != MTP_OK)                                         \
			return ocl_st_;                                        \
	} while (0)

/* ---- device-neutral platform helpers (dev_common.c) -------------------- */

/* Flattens a[0..n) (a buffer becomes its pointer and its byte offset)
 * into out[0..max); the count, or -1 if more than max. */
int mtp_ocl_flatten(const struct ocl_arg *a, int n, struct ocl_flat_arg *out,
		    int max);
/* Scratch for the current launch (bytes == 0 gives a NULL buffer), and
 * the release of all of it when the launch ends (the first failure). */
enum mtp_status mtp_ocl_scratch(struct mtp_backend *be, size_t bytes,
				struct ocl_buf *out);
enum mtp_status mtp_ocl_scratch_release(struct mtp_backend *be);
/* Of n devices, GPUs first (in order), then the others: the one that $env
 * (a decimal index into that order, default 0) names, as an index into
 * is_gpu. MTP_ERR_UNAVAILABLE ("no <what> device") when there is none. */
enum mtp_status mtp_ocl_pick(struct mtp_backend *be, const bool *is_gpu, int n,
			     const char *env, const char *what, int *pick);
/* Appends ": <log>" (on one line) to be->error. */
void mtp_ocl_append_log(struct mtp_backend *be, char *log);
/* Seconds from timestamp t0 to t1 of a counter of valid_bits bits. */
double mtp_ocl_span_seconds(uint64_t t0, uint64_t t1, unsigned valid_bits,
			    double ns_per_tick);
/* Whether b[0..n) starts like a SPIR-V module. */
bool mtp_ocl_spirv_magic(const unsigned char *b, size_t n);
/* "SPIR-V <origin> (N bytes, fnv1a64 H)" into buf. */
void mtp_ocl_spirv_describe(const unsigned char *b, size_t n,
			    const char *origin, char *buf, size_t len);

/* The kernels as one SPIR-V module (kernels/opencl/spirv.cmake; empty when
 * the build had no SPIR-V toolchain): what the level_zero backend submits
 * and `--backend opencl:spirv` loads. */
extern const unsigned char mtp_ocl_spirv[];
extern const size_t mtp_ocl_spirv_len;

/* ---- kernel launchers (kernels.c) ------------------------------------- */

/*
 * One set of rows to RMS-normalise: row r reads x + r * x_stride, or
 * x + ids[r] * x_stride when ids is given (an embedding gather); it reads
 * as zeros when pos is given and pos[r] == 0 (the position-0 mask); it
 * writes y + r * y_stride. Strides in elements.
 */
struct ocl_norm_job {
	struct ocl_buf x, ids, pos, w, y;
	int64_t x_stride, y_stride, rows;
	bool ids64, pos64;
};

enum mtp_status mtp_ocl_rmsnorm(struct mtp_backend *be, enum ocl_act act,
				const struct ocl_norm_job *j, int64_t h,
				float eps, int rounding);
enum mtp_status mtp_ocl_add_rmsnorm(struct mtp_backend *be, enum ocl_act act,
				    struct ocl_buf x, struct ocl_buf res,
				    struct ocl_buf w, struct ocl_buf y,
				    struct ocl_buf rout, int64_t rows,
				    int64_t h, float eps, int rounding);
enum mtp_status mtp_ocl_embed(struct mtp_backend *be, enum ocl_act act,
			      struct ocl_buf table, struct ocl_buf ids,
			      bool ids64, struct ocl_buf out, int64_t t,
			      int64_t h);
/* out[t] = pos[t] + add, as int64. */
enum mtp_status mtp_ocl_positions_add(struct mtp_backend *be,
				      struct ocl_buf pos, bool pos64,
				      int64_t add, struct ocl_buf out,
				      int64_t t);
enum mtp_status mtp_ocl_all_reduce(struct mtp_backend *be, enum ocl_act act,
				   struct ocl_buf parts, int64_t p, int64_t n,
				   struct ocl_buf out);
/* out[(r*rep + k)*h + i] = act(a[same] + b[r*h + i]), r < rows. */
enum mtp_status mtp_ocl_add_bcast(struct mtp_backend *be, enum ocl_act act,
				  struct ocl_buf a, struct ocl_buf b,
				  struct ocl_buf out, int64_t rows, int64_t rep,
				  int64_t h);
enum mtp_status mtp_ocl_swiglu(struct mtp_backend *be, enum ocl_act act,
			       struct ocl_buf gate, struct ocl_buf up,
			       struct ocl_buf g, int64_t n);
/* y [rows,out] = x [rows,in] . w [out,in]^T, float32 accumulation, one
 * rounding to act (or float32 when logits). */
enum mtp_status mtp_ocl_linear(struct mtp_backend *be, enum ocl_act act,
			       bool logits, struct ocl_buf x, struct ocl_buf w,
			       struct ocl_buf y, int64_t rows, int64_t in,
			       int64_t out);
enum mtp_status mtp_ocl_argmax(struct mtp_backend *be, struct ocl_buf logits,
			       struct ocl_buf token, bool tok64, int64_t rows,
			       int64_t v);

/* [§4.4.1] hc_pre of t tokens. */
struct ocl_hc_pre_args {
	struct ocl_buf residual, fn, scale, base, norm_w; /* norm_w optional */
	struct ocl_buf post_mix, comb_mix, layer_input;
	int64_t t, m, h;
	float rms_eps, pre_eps, sinkhorn_eps, post_mult, norm_eps;
	int sinkhorn_iters;
};

enum mtp_status mtp_ocl_hc_pre(struct mtp_backend *be, enum ocl_act act,
			       const struct ocl_hc_pre_args *a);
enum mtp_status mtp_ocl_hc_post(struct mtp_backend *be, enum ocl_act act,
				struct ocl_buf x, struct ocl_buf res,
				struct ocl_buf post, struct ocl_buf comb,
				struct ocl_buf out, int64_t t, int64_t m,
				int64_t h);
enum mtp_status mtp_ocl_hc_head(struct mtp_backend *be, enum ocl_act act,
				struct ocl_buf x, struct ocl_buf fn,
				struct ocl_buf scale, struct ocl_buf base,
				struct ocl_buf y, int64_t t, int64_t m,
				int64_t h, float rms_eps, float hc_eps,
				bool rocm);

/* ---- the ops (ops.c, block.c, step.c) ---------------------------------- */

/* The input (out = false) or output named pfx + name, as a buffer. */
struct ocl_buf mtp_ocl_tensor(const struct mtp_call *c, bool out,
			      const char *pfx, const char *name);
bool mtp_ocl_is64(const struct mtp_call *c, bool out, const char *pfx,
		  const char *name);

/* Settings of one op, block or step, from the call's parameters. */
struct ocl_cfg {
	enum ocl_act act;
	size_t es; /* bytes per activation */
	int64_t t, h, m, v, f;
	float eps;
	int rounding;
	float hc_eps, post_mult;
	int sinkhorn_iters;
	int contract; /* enum mtp_contract */
	bool rocm_head;
};

void mtp_ocl_cfg_init(const struct mtp_call *c, struct ocl_cfg *cfg);

bool mtp_ocl_supports(const struct mtp_call *c);
/* Runs one call (every op of the table); releases its scratch. */
enum mtp_status mtp_ocl_launch(struct mtp_backend *be,
			       const struct mtp_call *c);

enum mtp_status mtp_ocl_op_simple(struct mtp_backend *be,
				  const struct mtp_call *c);
enum mtp_status mtp_ocl_op_block(struct mtp_backend *be,
				 const struct mtp_call *c);
enum mtp_status mtp_ocl_op_step(struct mtp_backend *be,
				const struct mtp_call *c);
enum mtp_status mtp_ocl_op_chain(struct mtp_backend *be,
				 const struct mtp_call *c);

/* Building blocks shared by ops.c, block.c and step.c. */
enum mtp_status mtp_ocl_norm_rows(struct mtp_backend *be,
				  const struct ocl_cfg *cfg, struct ocl_buf x,
				  struct ocl_buf w, struct ocl_buf y,
				  int64_t rows);
enum mtp_status mtp_ocl_swiglu_ffn(struct mtp_backend *be,
				   const struct ocl_cfg *cfg, struct ocl_buf x,
				   struct ocl_buf w_gate, struct ocl_buf w_up,
				   struct ocl_buf w_down, struct ocl_buf out);
/* [Step V4-3] x [T,M,H] = act(act(h_proj(p)) + act(e_proj(e))). */
enum mtp_status mtp_ocl_eh_proj_hc(struct mtp_backend *be,
				   const struct ocl_cfg *cfg, struct ocl_buf e,
				   struct ocl_buf p, struct ocl_buf we,
				   struct ocl_buf wh, struct ocl_buf x);
enum mtp_status mtp_ocl_lm_head(struct mtp_backend *be,
				const struct ocl_cfg *cfg, struct ocl_buf x,
				struct ocl_buf w, struct ocl_buf logits,
				struct ocl_buf token, bool tok64);

struct ocl_v3_block {
	struct ocl_buf w_in, W_a, w_post, W_gate, W_up, W_down;
};

struct ocl_v4_block {
	struct ocl_buf attn_fn, attn_scale, attn_base;
	struct ocl_buf ffn_fn, ffn_scale, ffn_base;
	struct ocl_buf attn_norm_w, ffn_norm_w, W_a, W_gate, W_up, W_down;
};

void mtp_ocl_v3_block_get(const struct mtp_call *c, const char *pfx,
			  struct ocl_v3_block *b);
void mtp_ocl_v4_block_get(const struct mtp_call *c, const char *pfx,
			  struct ocl_v4_block *b);

/* [§10.1] (h, r1) = block(x, residual or absent). */
enum mtp_status mtp_ocl_v3_block(struct mtp_backend *be,
				 const struct ocl_cfg *cfg, struct ocl_buf x,
				 struct ocl_buf residual,
				 const struct ocl_v3_block *b,
				 struct ocl_buf h_out, struct ocl_buf r_out);

/* [§10.2] Deferred form from the streams r0 [T,M,H]: f [T,H], R1 [T,M,H],
 * post_f [T,M], C_f [T,M,M]. */
enum mtp_status mtp_ocl_v4_block(struct mtp_backend *be,
				 const struct ocl_cfg *cfg, struct ocl_buf r0,
				 const struct ocl_v4_block *b,
				 struct ocl_buf f_out, struct ocl_buf r1_out,
				 struct ocl_buf post_out,
				 struct ocl_buf comb_out);

#endif
