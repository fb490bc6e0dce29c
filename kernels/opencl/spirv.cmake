# The OpenCL C kernels of this folder as one SPIR-V module, made at build
# time and embedded (symbol mtp_ocl_spirv) in an object library,
# mtp_ocl_spirv, that both GPU-side modules link: the level_zero backend
# submits it to zeModuleCreate and the opencl backend loads the very same
# bytes with clCreateProgramWithIL (`--backend opencl:spirv`). The module
# is also left in the build folder as mtp_kernels.spv.
#
# MTP_SPIRV_OPT picks how the LLVM IR is optimised before llvm-spirv-14:
#   O0    clang -O0 (optnone off), no LLVM passes: the runtime's compiler
#         does all the optimising;
#   safe  clang's unoptimised IR, then the scalar passes of
#         MTP_SPIRV_PASSES (inlining, SROA, CSE, GVN, LICM, ...), which
#         llvm-spirv-14 translates into valid SPIR-V. Loop rotation and
#         unrolling (in every -O1..-O3 pipeline) are left out: after them
#         llvm-spirv-14 writes blocks out of dominance order or two loops
#         sharing one merge block, and spirv-val rejects the module.
# Either way spirv-val checks the result, and the build stops if it fails.
# "safe" without opt-14 (Debian: llvm-14) falls back to O0. Without
# clang-14, llvm-spirv-14 or spirv-val the embedded module is empty and
# both backends say so when opened.
include(${CMAKE_CURRENT_LIST_DIR}/sources.cmake)
if(TARGET mtp_ocl_spirv) # made by the first backend that includes this
  return()
endif()

set(MTP_SPIRV_OPT safe CACHE STRING "SPIR-V optimisation: O0 or safe (see kernels/opencl/spirv.cmake)")
set_property(CACHE MTP_SPIRV_OPT PROPERTY STRINGS O0 safe)
set(MTP_SPIRV_PASSES
  "inline,function(sroa,early-cse,instcombine,simplifycfg,reassociate,gvn,sccp,loop-mssa(licm),dse,adce,instcombine,simplifycfg)")

find_program(MTP_CLANG_SPIR NAMES clang-14 clang)
find_program(MTP_LLVM_SPIRV NAMES llvm-spirv-14 llvm-spirv)
find_program(MTP_SPIRV_VAL NAMES spirv-val)
find_program(MTP_LLVM_OPT NAMES opt-14 opt)

set(_dir ${CMAKE_BINARY_DIR}/spirv)
set(_all ${_dir}/mtp_kernels.cl)
set(_bc ${_dir}/mtp_kernels.bc)
set(MTP_SPIRV_FILE ${_dir}/mtp_kernels.spv)
set(_spv_c ${_dir}/mtp_ocl_spirv.c)
set(_clang ${MTP_CLANG_SPIR} -cl-std=CL2.0 -target spir64
    -Xclang -finclude-default-header -cl-fp32-correctly-rounded-divide-sqrt
    -Wall -Wextra -emit-llvm -c ${_all})
if(NOT MTP_SPIRV_OPT MATCHES "^(O0|safe)$")
  message(FATAL_ERROR "MTP_SPIRV_OPT=${MTP_SPIRV_OPT}: O0 or safe")
endif()

set(_level ${MTP_SPIRV_OPT})
if(_level STREQUAL "safe" AND NOT MTP_LLVM_OPT)
  set(_level O0) # no opt-14 (Debian package llvm-14)
endif()
if(MTP_CLANG_SPIR AND MTP_LLVM_SPIRV AND MTP_SPIRV_VAL)
  if(_level STREQUAL "O0")
    set(_to_bc COMMAND ${_clang} -O0 -Xclang -disable-O0-optnone -o ${_bc})
  else()
    # -O2 without its passes: IR free of the noinline that -O0 adds
    set(_to_bc COMMAND ${_clang} -O2 -Xclang -disable-llvm-passes -o ${_bc}.raw
               COMMAND ${MTP_LLVM_OPT} -passes=${MTP_SPIRV_PASSES} ${_bc}.raw -o ${_bc})
  endif()
  add_custom_command(
    OUTPUT ${MTP_SPIRV_FILE}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${_dir}
    COMMAND ${CMAKE_COMMAND} "-DINPUTS=${MTP_OCL_CL_JOINED}" -DOUT=${_all} -DRAW=1
            -P ${MTP_OCL_DIR}/embed.cmake
    ${_to_bc}
    COMMAND ${MTP_LLVM_SPIRV} ${_bc} -o ${MTP_SPIRV_FILE}
    COMMAND ${MTP_SPIRV_VAL} ${MTP_SPIRV_FILE}
    DEPENDS ${MTP_OCL_CL_SOURCES} ${MTP_OCL_DIR}/embed.cmake ${MTP_OCL_DIR}/spirv.cmake
    COMMENT "Compiling the OpenCL C kernels to SPIR-V (${_level})"
    VERBATIM)
  set(_spv_inputs ${MTP_SPIRV_FILE})
  set(MTP_SPIRV_WHY "SPIR-V by ${MTP_CLANG_SPIR} + ${MTP_LLVM_SPIRV}, ${_level}" CACHE INTERNAL "")
else()
  set(MTP_SPIRV_FILE "")
  set(_spv_inputs "")
  set(MTP_SPIRV_WHY "NO SPIR-V: clang-14, llvm-spirv-14 or spirv-val missing" CACHE INTERNAL "")
endif()
add_custom_command(
  OUTPUT ${_spv_c}
  COMMAND ${CMAKE_COMMAND} "-DINPUTS=${_spv_inputs}" -DOUT=${_spv_c} -DNAME=mtp_ocl_spirv
          -P ${MTP_OCL_DIR}/embed.cmake
  DEPENDS ${MTP_SPIRV_FILE} ${MTP_OCL_DIR}/embed.cmake
  COMMENT "Embedding the SPIR-V kernels"
  VERBATIM)
add_library(mtp_ocl_spirv OBJECT ${_spv_c})
set_target_properties(mtp_ocl_spirv PROPERTIES C_VISIBILITY_PRESET hidden)
target_compile_definitions(mtp_ocl_spirv INTERFACE "MTP_SPIRV_OPT_NAME=\"${_level}\"")
