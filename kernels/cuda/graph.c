/*
 * Graph replay for the timing engine (`mtpcheck bench --graph`): one launch
 * of a call is captured on the backend's stream and instantiated, so that
 * replays time the kernels as an engine running CUDA graphs sees them,
 * without the host launch path. Scratch comes from cudaMallocAsync and
 * cudaFreeAsync, which capture as graph memory nodes, so nothing in a
 * captured launch allocates outside the stream.
 */
#include "nv_internal.h"

enum mtp_status mtp_nv_graph_capture(struct mtp_backend *be,
				     const struct mtp_call *call, void **graph)
{
	return mtp_nv_graph_capture_calls(be, call, 1, graph);
}

/* n launches, in order, in one graph (backend.h, api_version 4). */
enum mtp_status mtp_nv_graph_capture_calls(struct mtp_backend *be,
					   const struct mtp_call *calls, int n,
					   void **graph)
{
	struct nv_ctx *x = nv_ctx(be);
	cudaGraph_t g = NULL;
	cudaGraphExec_t ge = NULL;
	enum mtp_status st;
	cudaError_t e;

	*graph = NULL;
	NV_CUDA(be, cudaStreamBeginCapture(x->stream,
					   cudaStreamCaptureModeThreadLocal));
	st = MTP_OK;
	for (int i = 0; !st && i < n; i++)
		st = be->iface->launch(be, &calls[i]);
	/* the capture is always ended, also after a failed launch */
	e = cudaStreamEndCapture(x->stream, &g);
	if (st || e != cudaSuccess) {
		if (g)
			cudaGraphDestroy(g);
		return st ? st
			  : mtp_nv_fail_cuda(be, "cudaStreamEndCapture", e);
	}
	e = cudaGraphInstantiate(&ge, g, 0);
	cudaGraphDestroy(g);
	NV_CUDA(be, e);
	*graph = ge;
	return MTP_OK;
}

enum mtp_status mtp_nv_graph_launch(struct mtp_backend *be, void *graph)
{
	NV_CUDA(be,
		cudaGraphLaunch((cudaGraphExec_t)graph, nv_ctx(be)->stream));
	return MTP_OK;
}

void mtp_nv_graph_destroy(struct mtp_backend *be, void *graph)
{
	cudaError_t e = cudaGraphExecDestroy((cudaGraphExec_t)graph);

	if (e != cudaSuccess && !be->error[0])
		mtp_nv_fail_cuda(be, "cudaGraphExecDestroy", e);
}
