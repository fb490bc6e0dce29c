/*
 * The empty kernel: the floor under which no launch of this backend can go.
 * Timed by bench_empty.c (MTP_CUDA_EMPTY_BENCH=1) in the same process as the
 * benchmark, so T = 1 figures can be set against it [issue 5].
 */
#include "nv_common.cuh"

__global__ void empty_kernel(void)
{
}

extern "C" cudaError_t mtp_nv_empty(cudaStream_t s)
{
	empty_kernel<<<1, 32, 0, s>>>();
	return cudaGetLastError();
}
