# Detects the GPU toolchains. Each MTP_WITH_<X> is AUTO (use it if found), ON
# (fail if not found) or OFF. Sets MTP_HAVE_<X> and MTP_<X>_WHY for the summary.
include(CheckLanguage)

function(mtp_resolve name found why)
  string(TOUPPER "${MTP_WITH_${name}}" mode)
  if(mode STREQUAL "OFF")
    set(MTP_HAVE_${name} OFF PARENT_SCOPE)
    set(MTP_${name}_WHY "disabled (MTP_WITH_${name}=OFF)" PARENT_SCOPE)
  elseif(found)
    set(MTP_HAVE_${name} ON PARENT_SCOPE)
    set(MTP_${name}_WHY "${why}" PARENT_SCOPE)
  elseif(mode STREQUAL "ON")
    message(FATAL_ERROR "MTP_WITH_${name}=ON but ${why}")
  else()
    set(MTP_HAVE_${name} OFF PARENT_SCOPE)
    set(MTP_${name}_WHY "not found: ${why}" PARENT_SCOPE)
  endif()
endfunction()

# CUDA
set(_cuda_found OFF)
set(_cuda_why "no CUDA compiler (nvcc) found")
if(NOT MTP_WITH_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(_cuda_found ON)
    set(_cuda_why "${CMAKE_CUDA_COMPILER}")
  endif()
endif()
mtp_resolve(CUDA ${_cuda_found} "${_cuda_why}")

# HIP: Debian's layout needs find_package(hip CONFIG) (TOOLCHAIN-NOTES.md)
set(_hip_found OFF)
set(_hip_why "no hip CMake package (libamdhip64-dev) found")
if(NOT MTP_WITH_HIP STREQUAL "OFF")
  # hip-config.cmake reads CMAKE_CXX_COMPILER_ID: it fails in a C-only
  # project, so C++ is enabled first where the package is there.
  find_file(_hip_config hip-config.cmake PATHS /usr/lib/x86_64-linux-gnu/cmake/hip
    /opt/rocm/lib/cmake/hip NO_CACHE)
  check_language(CXX)
  if(_hip_config AND CMAKE_CXX_COMPILER)
    enable_language(CXX)
  endif()
  find_package(hip CONFIG QUIET PATHS /usr/lib/x86_64-linux-gnu/cmake/hip)
  if(hip_FOUND)
    set(_hip_found ON)
    set(_hip_why "hip ${hip_VERSION}")
  endif()
endif()
mtp_resolve(HIP ${_hip_found} "${_hip_why}")

# Level Zero
set(_ze_found OFF)
set(_ze_why "pkg-config module level-zero (libze-dev) not found")
if(NOT MTP_WITH_LEVEL_ZERO STREQUAL "OFF" AND PKG_CONFIG_FOUND)
  pkg_check_modules(LEVEL_ZERO QUIET level-zero)
  if(LEVEL_ZERO_FOUND)
    set(_ze_found ON)
    set(_ze_why "level-zero ${LEVEL_ZERO_VERSION}")
  endif()
endif()
mtp_resolve(LEVEL_ZERO ${_ze_found} "${_ze_why}")

# OpenCL
set(_ocl_found OFF)
set(_ocl_why "OpenCL headers and ICD loader (ocl-icd-opencl-dev) not found")
if(NOT MTP_WITH_OPENCL STREQUAL "OFF")
  find_package(OpenCL QUIET)
  if(OpenCL_FOUND)
    set(_ocl_found ON)
    set(_ocl_why "OpenCL ${OpenCL_VERSION_STRING}")
  endif()
endif()
mtp_resolve(OPENCL ${_ocl_found} "${_ocl_why}")

# Python (the python backend embeds it): the interpreter and its embedding
# files (python3-dev). -DPython3_EXECUTABLE=/path/to/venv/bin/python picks
# another one.
#
# Unless one is given, the first python3 on PATH that has NumPy and Python.h
# (then /usr/bin/python3, /usr/local/bin/python3): the first on PATH alone
# may be a pyenv shim without NumPy, and the interpreter cannot be swapped
# once built in (docs/PYTHON.md, "Building").
include(${CMAKE_CURRENT_LIST_DIR}/PythonPick.cmake)

set(_py_found OFF)
set(_py_why "Python 3 development files (python3-dev: Python.h, libpython3) not found")
if(NOT MTP_WITH_PYTHON STREQUAL "OFF")
  if(NOT DEFINED Python3_EXECUTABLE AND NOT DEFINED Python3_ROOT_DIR)
    mtp_python_with_numpy(_py_pick _py_tried)
    if(_py_pick)
      set(Python3_EXECUTABLE ${_py_pick} CACHE FILEPATH
        "the Python the python backend embeds (the first python3 with NumPy)")
    endif()
  endif()
  find_package(Python3 QUIET COMPONENTS Interpreter Development.Embed)
  if(Python3_Development.Embed_FOUND AND Python3_Interpreter_FOUND)
    set(_py_found ON)
    set(_py_why "Python ${Python3_VERSION}, ${Python3_EXECUTABLE}")
    execute_process(COMMAND ${Python3_EXECUTABLE} -c "import numpy"
      RESULT_VARIABLE _py_np OUTPUT_QUIET ERROR_QUIET TIMEOUT 30)
    if(NOT _py_np EQUAL 0)
      set(_py_why "${_py_why}, without NumPy")
      if(_py_tried)
        set(_py_how "none of ${_py_tried} has both NumPy and Python.h")
      else()
        set(_py_how "given with -DPython3_EXECUTABLE or -DPython3_ROOT_DIR")
      endif()
      message(WARNING "python backend: ${Python3_EXECUTABLE} (Python "
        "${Python3_VERSION}) has no NumPy, so --backend python:numpy will be "
        "SKIPPED (${_py_how}). Install numpy for it, or pick another with "
        "-DPython3_EXECUTABLE=/path/to/python3.")
    endif()
  endif()
endif()
mtp_resolve(PYTHON ${_py_found} "${_py_why}")
