/*
 * The HIP backend's GEMM [SPEC.md §10]: nn.Linear layout, y = x . W^T.
 * One thread per output element, 16x16 tiles staged in shared memory; each
 * thread sums its dot product in float32 in ascending k (no split-K), and
 * rounds it once to the output type. No wavefront shuffles, so the result
 * does not depend on the wavefront width.
 */
#include "amd_kernels.h"
#include "nv_common.cuh"

#define AMD_TILE 16

template <typename T, typename U>
__global__ void linear_kernel(const T *x, const T *w, U *y, int64_t rows,
			      int64_t in, int64_t out)
{
	__shared__ float xs[AMD_TILE][AMD_TILE + 1];
	__shared__ float ws[AMD_TILE][AMD_TILE + 1];
	const int tx = threadIdx.x, ty = threadIdx.y;
	const int64_t r = (int64_t)blockIdx.y * AMD_TILE + ty;
	const int64_t o = (int64_t)blockIdx.x * AMD_TILE + tx;
	const int64_t wo = (int64_t)blockIdx.x * AMD_TILE + ty;
	float acc = 0.0f;

	for (int64_t k0 = 0; k0 < in; k0 += AMD_TILE) {
		const int64_t k = k0 + tx;

		xs[ty][tx] = r < rows && k < in ? nv_f32(x[r * in + k]) : 0.0f;
		ws[ty][tx] = wo < out && k < in ? nv_f32(w[wo * in + k]) : 0.0f;
		__syncthreads();
		for (int j = 0; j < AMD_TILE && k0 + j < in; j++)
			acc = fmaf(xs[ty][j], ws[tx][j], acc);
		__syncthreads();
	}
	if (r < rows && o < out)
		y[r * out + o] = nv_from<U>(acc);
}

template <typename T>
static void launch_linear(int logits, const void *x, const void *w, void *y,
			  int64_t rows, int64_t in, int64_t out, hipStream_t s)
{
	const dim3 block(AMD_TILE, AMD_TILE);
	const dim3 grid((unsigned)((out + AMD_TILE - 1) / AMD_TILE),
			(unsigned)((rows + AMD_TILE - 1) / AMD_TILE));

	if (logits)
		linear_kernel<T, float><<<grid, block, 0, s>>>(
			(const T *)x, (const T *)w, (float *)y, rows, in, out);
	else
		linear_kernel<T, T><<<grid, block, 0, s>>>(
			(const T *)x, (const T *)w, (T *)y, rows, in, out);
}

extern "C" hipError_t mtp_amd_linear(enum mtp_nv_act act, int logits,
				     const void *x, const void *w, void *y,
				     int64_t rows, int64_t in, int64_t out,
				     hipStream_t s)
{
	if (rows == 0 || out == 0)
		return hipSuccess;
	if ((rows + AMD_TILE - 1) / AMD_TILE > 65535)
		return hipErrorInvalidValue; /* grid.y */
	NV_DISPATCH_ACT(act, launch_linear, logits, x, w, y, rows, in, out, s);
	return hipGetLastError();
}
