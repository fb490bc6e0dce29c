# mtp_python_with_numpy(OUT TRIED): the first python3 on PATH (then
# /usr/bin, /usr/local/bin) that imports NumPy and has Python.h, into OUT
# ("" if none), and the candidates tried, into TRIED. Toolchains.cmake embeds
# it unless -DPython3_EXECUTABLE is given; kernels/python/tests/pick.cmake
# tests it (cmake -P: no project needed).
function(mtp_python_with_numpy out tried)
  string(REPLACE ":" ";" _dirs "$ENV{PATH}")
  set(_cands)
  foreach(_d IN LISTS _dirs ITEMS /usr/bin /usr/local/bin)
    if(_d AND EXISTS "${_d}/python3" AND NOT "${_d}/python3" IN_LIST _cands)
      list(APPEND _cands "${_d}/python3")
    endif()
  endforeach()
  set(_probe "import numpy, os, sysconfig; assert os.path.exists(os.path.join(sysconfig.get_paths()['include'], 'Python.h'))")
  foreach(_c IN LISTS _cands)
    execute_process(COMMAND ${_c} -c "${_probe}" RESULT_VARIABLE _rc
      OUTPUT_QUIET ERROR_QUIET TIMEOUT 30)
    if(_rc EQUAL 0)
      set(${out} ${_c} PARENT_SCOPE)
      set(${tried} "${_cands}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
  set(${out} "" PARENT_SCOPE)
  set(${tried} "${_cands}" PARENT_SCOPE)
endfunction()
