/*
 * The runtime half of the CUDA backend's interface, shared with the HIP
 * backend (which compiles it through kernels/hip/vendor/, CUDA runtime names
 * mapped to HIP): device memory, copies, scratch, launch, synchronisation
 * and event timers. Every runtime call is checked; an error is the
 * backend's message, never an abort.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nv_internal.h"

enum mtp_status mtp_nv_fail_cuda(struct mtp_backend *be, const char *what,
				 cudaError_t e)
{
	return mtp_backend_fail(be, MTP_ERR_DEVICE, "%s: %s", what,
				cudaGetErrorString(e));
}

enum mtp_status mtp_nv_alloc(struct mtp_backend *be, size_t bytes, void **ptr)
{
	NV_CUDA(be, cudaMalloc(ptr, bytes));
	return MTP_OK;
}

void mtp_nv_free(struct mtp_backend *be, void *ptr)
{
	cudaError_t e = cudaFree(ptr);

	if (e != cudaSuccess && !be->error[0])
		mtp_nv_fail_cuda(be, "cudaFree",
				 e); /* the first message wins */
}

enum mtp_status mtp_nv_upload(struct mtp_backend *be, void *dst,
			      const void *src, size_t bytes)
{
	struct nv_ctx *x = nv_ctx(be);

	/* synchronous: the host buffer may be freed right after */
	NV_CUDA(be, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice,
				    x->stream));
	NV_CUDA(be, cudaStreamSynchronize(x->stream));
	return MTP_OK;
}

enum mtp_status mtp_nv_download(struct mtp_backend *be, void *dst,
				const void *src, size_t bytes)
{
	struct nv_ctx *x = nv_ctx(be);

	NV_CUDA(be, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost,
				    x->stream));
	NV_CUDA(be, cudaStreamSynchronize(x->stream));
	return MTP_OK;
}

enum mtp_status mtp_nv_copy(struct mtp_backend *be, void *dst, const void *src,
			    size_t bytes)
{
	if (!bytes)
		return MTP_OK;
	NV_CUDA(be, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice,
				    nv_ctx(be)->stream));
	return MTP_OK;
}

enum mtp_status mtp_nv_scratch(struct mtp_backend *be, size_t bytes, void **ptr)
{
	struct nv_ctx *x = nv_ctx(be);

	*ptr = NULL;
	if (x->n_scratch == NV_SCRATCH_MAX)
		return mtp_backend_fail(
			be, MTP_ERR_LIMIT,
			"more than %d scratch buffers in one call",
			NV_SCRATCH_MAX);
	NV_CUDA(be, cudaMallocAsync(ptr, bytes ? bytes : 1, x->stream));
	x->scratch[x->n_scratch++] = *ptr;
	return MTP_OK;
}

enum mtp_status mtp_nv_scratch_release(struct mtp_backend *be)
{
	struct nv_ctx *x = nv_ctx(be);
	cudaError_t first = cudaSuccess;

	while (x->n_scratch > 0) {
		cudaError_t e =
			cudaFreeAsync(x->scratch[--x->n_scratch], x->stream);

		if (first == cudaSuccess)
			first = e;
	}
	NV_CUDA(be, first);
	return MTP_OK;
}

bool mtp_nv_supports_call(struct mtp_backend *be, const struct mtp_call *c)
{
	(void)be;
	return mtp_nv_op_supported(c);
}

enum mtp_status mtp_nv_launch(struct mtp_backend *be, const struct mtp_call *c)
{
	enum mtp_status st, rel;

	switch (c->op->id) {
	case MTP_OP_MTP_BLOCK: st = mtp_nv_op_block(be, c); break;
	case MTP_OP_MTP_STEP: st = mtp_nv_op_step(be, c); break;
	case MTP_OP_DRAFT_CHAIN: st = mtp_nv_op_chain(be, c); break;
	default: st = mtp_nv_op_simple(be, c); break;
	}
	rel = mtp_nv_scratch_release(be);
	return st ? st : rel;
}

enum mtp_status mtp_nv_synchronize(struct mtp_backend *be)
{
	NV_CUDA(be, cudaStreamSynchronize(nv_ctx(be)->stream));
	return MTP_OK;
}

enum mtp_status mtp_nv_timer_begin(struct mtp_backend *be)
{
	struct nv_ctx *x = nv_ctx(be);

	NV_CUDA(be, cudaEventRecord(x->ev_begin, x->stream));
	return MTP_OK;
}

enum mtp_status mtp_nv_timer_end(struct mtp_backend *be, double *seconds)
{
	struct nv_ctx *x = nv_ctx(be);
	float ms = 0.0f;

	NV_CUDA(be, cudaEventRecord(x->ev_end, x->stream));
	NV_CUDA(be, cudaEventSynchronize(x->ev_end));
	NV_CUDA(be, cudaEventElapsedTime(&ms, x->ev_begin, x->ev_end));
	*seconds = ms * 1e-3;
	return MTP_OK;
}
