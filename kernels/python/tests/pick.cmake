# cmake -P: a python3 first on PATH without NumPy (a pyenv shim's case, here
# a script that fails every import) loses to the next one with NumPy and
# Python.h (CTest python.cmake_pick). Needs -DSRC (the source tree) and
# -DWANT (the python3 expected, which has NumPy).
cmake_minimum_required(VERSION 3.20) # policies (IN_LIST) in script mode
execute_process(COMMAND ${WANT} -c "import numpy" RESULT_VARIABLE rc
  OUTPUT_QUIET ERROR_QUIET)
if(NOT rc EQUAL 0)
  message(STATUS "SKIPPED: ${WANT}, the embedded Python, has no NumPy")
  return()
endif()
include(${SRC}/cmake/PythonPick.cmake)
set(dir ${CMAKE_CURRENT_BINARY_DIR}/pick-fake-bin)
file(MAKE_DIRECTORY ${dir})
file(WRITE ${dir}/python3 "#!/bin/sh\nexit 1\n")
file(CHMOD ${dir}/python3 PERMISSIONS OWNER_READ OWNER_EXECUTE OWNER_WRITE)
get_filename_component(want_dir ${WANT} DIRECTORY)
set(ENV{PATH} "${dir}:${want_dir}")
mtp_python_with_numpy(got tried)
file(REMOVE_RECURSE ${dir})
if(NOT got STREQUAL WANT)
  message(FATAL_ERROR "picked '${got}' (tried ${tried}), want ${WANT}")
endif()
message(STATUS "picked ${got} over ${dir}/python3 (no NumPy)")
