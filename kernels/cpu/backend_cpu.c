/*
 * The `cpu` backend: optimized host kernels (fp32 arithmetic as in the
 * engines, OpenMP over rows, batch-invariant dot tiles for the matrix products) behind
 * the backend interface. Its "device" is host memory, 64-byte aligned. Every
 * op of the table is implemented for bfloat16, float16 and float32
 * activations with float32 mHC parameters; anything else is reported
 * unsupported, never computed another way.
 */
#define _DEFAULT_SOURCE /* madvise's MADV_HUGEPAGE */
#include "cpu_internal.h"

#include <stdlib.h>
#include <sys/mman.h>

#include <stdio.h>
#include <emmintrin.h>
#include <omp.h>
#include <stdint.h>
#include <string.h>

static const mtp_cpu_op_fn op_fns[MTP_OP_COUNT] = {
	[MTP_OP_RMSNORM] = mtp_cpu_op_rmsnorm,
	[MTP_OP_ADD_RMSNORM] = mtp_cpu_op_add_rmsnorm,
	[MTP_OP_EMBED] = mtp_cpu_op_embed,
	[MTP_OP_FUSED_EH_NORM] = mtp_cpu_op_fused_eh_norm,
	[MTP_OP_FUSED_EMBED_EH_NORM] = mtp_cpu_op_fused_embed_eh_norm,
	[MTP_OP_EH_PROJ] = mtp_cpu_op_eh_proj,
	[MTP_OP_FUSED_MTP_INPUT_RMSNORM] = mtp_cpu_op_fused_mtp_input_rmsnorm,
	[MTP_OP_EH_PROJ_HC] = mtp_cpu_op_eh_proj_hc,
	[MTP_OP_HC_PRE] = mtp_cpu_op_hc_pre,
	[MTP_OP_HC_POST] = mtp_cpu_op_hc_post,
	[MTP_OP_HC_FUSED_POST_PRE] = mtp_cpu_op_hc_fused_post_pre,
	[MTP_OP_HC_HEAD] = mtp_cpu_op_hc_head,
	[MTP_OP_MTP_SHARED_HEAD_RMSNORM] = mtp_cpu_op_shared_head_rmsnorm,
	[MTP_OP_LM_HEAD] = mtp_cpu_op_lm_head,
	[MTP_OP_ALL_REDUCE] = mtp_cpu_op_all_reduce,
	[MTP_OP_MTP_BLOCK] = mtp_cpu_op_mtp_block,
	[MTP_OP_MTP_STEP] = mtp_cpu_op_mtp_step,
	[MTP_OP_DRAFT_CHAIN] = mtp_cpu_op_draft_chain,
	[MTP_OP_MAIN_PROJ_NORM] = mtp_cpu_op_main_proj_norm,
	[MTP_OP_HC_COLLAPSE] = mtp_cpu_op_hc_collapse,
	[MTP_OP_MARKOV_BIAS] = mtp_cpu_op_markov_bias,
	[MTP_OP_CONFIDENCE] = mtp_cpu_op_confidence,
	[MTP_OP_HC_PRE_DELAYED] = mtp_cpu_op_hc_pre_delayed,
	[MTP_OP_TARGET_HANDOFF] = mtp_cpu_op_target_handoff,
	[MTP_OP_DSPARK_STEP] = mtp_cpu_op_dspark_step,
};

void *mtp_cpu_in(const struct mtp_call *c, const char *pfx, const char *name)
{
	const struct mtp_tensor *t = mtp_call_tensor(c, false, pfx, name);

	return t ? t->data : NULL;
}

void *mtp_cpu_out(const struct mtp_call *c, const char *pfx, const char *name)
{
	const struct mtp_tensor *t = mtp_call_tensor(c, true, pfx, name);

	return t ? t->data : NULL;
}

const struct mtp_tensor *mtp_cpu_in_tensor(const struct mtp_call *c,
					   const char *name)
{
	return mtp_call_tensor(c, false, NULL, name);
}

static enum mtp_status cpu_open(struct mtp_backend *be)
{
	(void)be;
	return MTP_OK;
}

static void cpu_close(struct mtp_backend *be)
{
	(void)be;
}

/* Buffers of 2 MiB or more (weights, activations of big T, the probe's)
 * are 2 MiB aligned and asked for transparent huge pages, as an engine
 * maps its weights: on 4 KiB pages the hardware prefetchers stop at every
 * page and each page costs a table walk, which a decode kernel streaming
 * a cold 2.75 MB fn pays ~700 times. */
#define CPU_HUGE (2u << 20)

static void *cpu_alloc_big(size_t bytes)
{
	const size_t n = (bytes + CPU_HUGE - 1) / CPU_HUGE * CPU_HUGE;
	void *p = NULL;

	if (posix_memalign(&p, CPU_HUGE, n))
		return NULL;
#ifdef MADV_HUGEPAGE
	madvise(p, n, MADV_HUGEPAGE); /* a hint: no huge pages is no error */
#endif
	return p;
}

static enum mtp_status cpu_alloc(struct mtp_backend *be, size_t bytes,
				 void **ptr)
{
	*ptr = bytes >= CPU_HUGE ? cpu_alloc_big(bytes) : mtp_cpu_alloc(bytes);
	if (!*ptr)
		return mtp_backend_fail(be, MTP_ERR_NOMEM,
					"cannot allocate %zu bytes", bytes);
	return MTP_OK;
}

static void cpu_free(struct mtp_backend *be, void *ptr)
{
	(void)be;
	mtp_cpu_free(ptr);
}

/* Copies one piece with streaming (non-temporal) 16-byte stores, as the
 * kernels store large outputs: SSE2, so every x86-64 CPU has it. */
static void stream_copy(char *dst, const char *src, size_t n)
{
	size_t head = (16 - ((uintptr_t)dst & 15)) & 15, i;

	if (head > n)
		head = n;
	memcpy(dst, src, head);
	for (i = head; i + 16 <= n; i += 16)
		_mm_stream_si128((__m128i *)(dst + i),
				 _mm_loadu_si128((const __m128i *)(src + i)));
	memcpy(dst + i, src + i, n - i);
}

/* The bandwidth probe's copy: all threads, as the kernels run, streaming
 * stores (a cached memcpy read 37 to 78 GB/s from run to run here, and
 * below what the kernels themselves reach: not a peak). */
static enum mtp_status cpu_copy_parallel(struct mtp_backend *be, void *dst,
					 const void *src, size_t bytes)
{
	const size_t chunk = 1u << 20;
	long n = (long)((bytes + chunk - 1) / chunk);

	(void)be;
#pragma omp parallel for schedule(static)
	for (long i = 0; i < n; i++) {
		size_t off = (size_t)i * chunk;

		stream_copy((char *)dst + off, (const char *)src + off,
			    bytes - off < chunk ? bytes - off : chunk);
	}
	_mm_sfence();
	return MTP_OK;
}

/* Activations bf16/f16/f32; mHC parameters (inputs) float32. */
static bool cpu_supports(struct mtp_backend *be, const struct mtp_call *c)
{
	(void)be;
	if ((unsigned)c->op->id >= MTP_OP_COUNT || !op_fns[c->op->id])
		return false;
	if (c->act != MTP_BF16 && c->act != MTP_F16 && c->act != MTP_F32)
		return false;
	for (int i = 0; i < c->n_in; i++) {
		if (c->sig->in[i].cls == MTP_TC_PARAM && c->in[i].data &&
		    c->in[i].dtype != MTP_F32)
			return false;
	}
	return true;
}

static enum mtp_status cpu_launch(struct mtp_backend *be,
				  const struct mtp_call *c)
{
	enum mtp_status st;

	if (!cpu_supports(be, c))
		return mtp_backend_fail(be, MTP_ERR_UNSUPPORTED,
					"cpu: %s not supported", c->op->name);
	if (mtp_call_empty(c))
		return MTP_OK; /* an empty batch: nothing to compute */
	mtp_cpu_set_norm_offset((float)mtp_call_norm_offset(c));
	st = op_fns[c->op->id](c);
	mtp_cpu_set_norm_offset(0.0f);
	if (st)
		return mtp_backend_fail(be, st, "cpu: %s: %s", c->op->name,
					mtp_status_name(st));
	return MTP_OK;
}

static void cpu_device_info(struct mtp_backend *be, char *buf, size_t n)
{
	(void)be;
	static const int lanes[] = {1, 8, 16};

	snprintf(buf, n,
		 "host CPU, %d OpenMP threads, batch-invariant fp32 dots "
		 "(%d lanes)",
		 omp_get_max_threads(), lanes[mtp_cpu_dot_lanes()]);
}

const struct mtp_backend_iface mtp_cpu_backend = {
	.api_version = MTP_BACKEND_API_VERSION,
	.name = "cpu",
	.description = "optimized CPU kernels: fp32 arithmetic, OpenMP, "
		       "batch-invariant GEMM; host memory",
	.open = cpu_open,
	.close = cpu_close,
	.alloc = cpu_alloc,
	.free = cpu_free,
	.upload = mtp_host_copy,
	.download = mtp_host_copy,
	.supports = cpu_supports,
	.launch = cpu_launch,
	.device_info = cpu_device_info,
	.copy = cpu_copy_parallel,
};
