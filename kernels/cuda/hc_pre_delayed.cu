/*
 * DSpark's delayed hc_pre [SPEC.md §13 Step DS-4], per token in one block
 * on the pieces of hc_pre's token kernel (hc_pre_common.cuh): the mixes,
 * this sublayer's pre-mix stored as an output, and the layer input
 * collapsed with the pre-mix carried in (absent: layer 0's identity
 * pre-mix, stream 0 as it is, a sum over that stream alone). The same
 * steps as mtp_hc_pre_delayed of kernels/opencl/steps.cl, which the opencl
 * CTest runs. CUDA only: the HIP build leaves the primitive NULL.
 */
#include "hc_pre_common.cuh"

template <typename T, int M>
__global__ void hc_pre_delayed_kernel(struct mtp_nv_hc_pre_args a,
				      const float *pre_in, float *pre_out,
				      bool vec)
{
	const int NMIX = 2 * M + M * M;
	__shared__ double mix[NMIX + 1];
	__shared__ float pre[M];
	const int64_t t = blockIdx.x, h = a.h;
	const T *x = (const T *)a.residual + t * M * h;
	const bool wide = hc_mix<T, NMIX>(x, a.fn, M * h, vec, NULL, mix);

	if (threadIdx.x == 0) {
		hc_pre_mixes<M>(&a, t, mix, wide, pre);
		for (int s = 0; s < M; s++) {
			pre_out[t * M + s] = pre[s];
			pre[s] = pre_in ? pre_in[t * M + s] : 1.0f;
		}
	}
	__syncthreads();
	if (pre_in) {
		hc_pre_layer_input<T, M>(&a, t, vec, pre);
		return;
	}
	/* stream 0 alone: token t's row read as row t of a one-stream
	 * tensor that starts t * (M - 1) * h elements in */
	a.residual = x - t * h;
	hc_pre_layer_input<T, 1>(&a, t, vec, pre);
}

template <typename T, int M>
static void launch_delayed(const struct mtp_nv_hc_pre_args *a,
			   const float *pre_in, float *pre_out, cudaStream_t s)
{
	bool vec = hc_vec_ok<T>(a->residual, a->fn, M * a->h) &&
		   a->h % nv_vec<T>::n == 0;

	hc_pre_delayed_kernel<T, M><<<(unsigned)a->t, NV_BLOCK, 0, s>>>(
		*a, pre_in, pre_out, vec);
}

extern "C" cudaError_t mtp_nv_hc_pre_delayed(enum mtp_nv_act act,
					     const struct mtp_nv_hc_pre_args *a,
					     const float *pre_in,
					     float *pre_out, cudaStream_t s)
{
	if (a->t == 0 || a->h == 0)
		return cudaSuccess;
	if (act == MTP_NV_BF16) {
		NV_HC_DISPATCH(a->m, launch_delayed, mtp_gpu_bf16, a, pre_in,
			       pre_out, s);
	} else if (act == MTP_NV_F16) {
		NV_HC_DISPATCH(a->m, launch_delayed, mtp_gpu_f16, a, pre_in,
			       pre_out, s);
	} else {
		NV_HC_DISPATCH(a->m, launch_delayed, float, a, pre_in, pre_out,
			       s);
	}
	return cudaGetLastError();
}
