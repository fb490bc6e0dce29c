# The OpenCL C kernels and the host code that launches them (the
# composition layer's primitives, kernels.c), shared by the opencl backend
# (which builds the sources at run time) and the level_zero backend (which
# compiles them to SPIR-V at build time). The ops themselves are composed
# by kernels/gpu/ (the mtp_gpu library).
# common.cl and hc_common.cl come first: the others use their helpers.
set(MTP_OCL_DIR ${CMAKE_CURRENT_LIST_DIR})
set(MTP_OCL_CL_SOURCES
  ${MTP_OCL_DIR}/common.cl
  ${MTP_OCL_DIR}/hc_common.cl
  ${MTP_OCL_DIR}/rmsnorm.cl
  ${MTP_OCL_DIR}/add_rmsnorm.cl
  ${MTP_OCL_DIR}/embed.cl
  ${MTP_OCL_DIR}/all_reduce.cl
  ${MTP_OCL_DIR}/elementwise.cl
  ${MTP_OCL_DIR}/gemm.cl
  ${MTP_OCL_DIR}/qgemm.cl
  ${MTP_OCL_DIR}/argmax.cl
  ${MTP_OCL_DIR}/hc_pre.cl
  ${MTP_OCL_DIR}/hc_post.cl
  ${MTP_OCL_DIR}/hc_head.cl
  ${MTP_OCL_DIR}/steps.cl
  ${MTP_OCL_DIR}/dspark.cl
)
set(MTP_OCL_HOST_SOURCES
  ${MTP_OCL_DIR}/dev_common.c
  ${MTP_OCL_DIR}/kernels.c
)
string(REPLACE ";" "|" MTP_OCL_CL_JOINED "${MTP_OCL_CL_SOURCES}")
