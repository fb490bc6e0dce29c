/*
 * Activation loads, stores and roundings with the type as a run-time
 * argument (enum mtp_nv_act), for the small kernels that are not timed and
 * not specialised per type: steps.cu and dspark.cu (the same helpers as
 * ld_act / st_act / round_act of kernels/opencl/common.cl).
 */
#ifndef MTP_NV_ACT_RT_CUH
#define MTP_NV_ACT_RT_CUH

#include "nv_common.cuh"

static __device__ float ld_act(const void *p, int64_t i, int act)
{
	if (act == MTP_NV_F32)
		return ((const float *)p)[i];
	if (act == MTP_NV_F16)
		return nv_f32(((const mtp_gpu_f16 *)p)[i]);
	return nv_f32(((const mtp_gpu_bf16 *)p)[i]);
}

static __device__ void st_act(void *p, int64_t i, float v, int act)
{
	if (act == MTP_NV_F32)
		((float *)p)[i] = v;
	else if (act == MTP_NV_F16)
		((mtp_gpu_f16 *)p)[i] = nv_from<mtp_gpu_f16>(v);
	else
		((mtp_gpu_bf16 *)p)[i] = nv_from<mtp_gpu_bf16>(v);
}

/* v rounded to act and widened back: a rounding point. */
static __device__ __attribute__((unused)) float round_act(float v, int act)
{
	if (act == MTP_NV_F32)
		return v;
	if (act == MTP_NV_F16)
		return nv_round<mtp_gpu_f16>(v);
	return nv_round<mtp_gpu_bf16>(v);
}

static __device__ __forceinline__ size_t act_size(int act)
{
	return act == MTP_NV_F32 ? 4 : 2;
}

#endif
