# The OpenCL C kernels and the host code that composes the ops from them,
# shared by the opencl backend (which builds the sources at run time) and
# the level_zero backend (which compiles them to SPIR-V at build time).
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
  ${MTP_OCL_DIR}/argmax.cl
  ${MTP_OCL_DIR}/hc_pre.cl
  ${MTP_OCL_DIR}/hc_post.cl
  ${MTP_OCL_DIR}/hc_head.cl
)
set(MTP_OCL_HOST_SOURCES
  ${MTP_OCL_DIR}/dev_common.c
  ${MTP_OCL_DIR}/kernels.c
  ${MTP_OCL_DIR}/ops.c
  ${MTP_OCL_DIR}/block.c
  ${MTP_OCL_DIR}/step.c
)
string(REPLACE ";" "|" MTP_OCL_CL_JOINED "${MTP_OCL_CL_SOURCES}")
