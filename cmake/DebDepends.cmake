# Run by cpack (CPACK_PROJECT_CONFIG_FILE, written by cmake/Install.cmake):
# the .deb's Depends are dpkg-shlibdeps' answer for bin/mtpcheck alone; what
# the backend modules link (OpenCL's ICD loader, Level Zero's loader,
# libpython; CUDA's runtime is not a Debian package and is left out) goes
# into Suggests, because a module whose runtime is missing is reported as
# absent (SKIPPED) and everything else still works.
if(NOT CPACK_GENERATOR STREQUAL "DEB")
  return()
endif()
find_program(MTP_SHLIBDEPS dpkg-shlibdeps)
if(NOT MTP_SHLIBDEPS)
  message(FATAL_ERROR "cpack -G DEB needs dpkg-shlibdeps (apt-get install dpkg-dev) to name the package's dependencies")
endif()

# OUT: the "a (>= 1), b | c" list dpkg-shlibdeps gives for FILES
function(mtp_shlibdeps out)
  set(dir ${CPACK_PACKAGE_DIRECTORY}/_CPack_Packages/mtp-shlibdeps)
  file(MAKE_DIRECTORY ${dir}/debian)
  file(WRITE ${dir}/debian/control "") # dpkg-shlibdeps reads it, empty will do
  set(args)
  foreach(f IN LISTS ARGN)
    list(APPEND args -e${f})
  endforeach()
  execute_process(COMMAND ${MTP_SHLIBDEPS} -O --ignore-missing-info --warnings=0 ${args}
    WORKING_DIRECTORY ${dir} OUTPUT_VARIABLE o ERROR_VARIABLE e RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR NOT o MATCHES "shlibs:Depends=([^\n]*)")
    message(FATAL_ERROR "dpkg-shlibdeps ${ARGN} failed (${rc}): ${e}")
  endif()
  set(${out} "${CMAKE_MATCH_1}" PARENT_SCOPE)
endfunction()

mtp_shlibdeps(_depends ${MTP_DEB_BINARY})
set(CPACK_DEBIAN_PACKAGE_DEPENDS "${_depends}")
if(MTP_DEB_MODULES)
  mtp_shlibdeps(_mods ${MTP_DEB_MODULES})
  string(REPLACE ", " ";" _have "${_depends}")
  list(TRANSFORM _have REPLACE " .*" "") # the package names alone
  string(REPLACE ", " ";" _mods "${_mods}")
  set(_suggests "${CPACK_DEBIAN_PACKAGE_SUGGESTS}")
  foreach(d IN LISTS _mods)
    string(REGEX REPLACE " .*" "" name "${d}")
    list(FIND _have "${name}" i)
    if(i LESS 0) # once per first alternative
      string(APPEND _suggests ", ${d}")
      list(APPEND _have "${name}")
    endif()
  endforeach()
  string(REGEX REPLACE "^, " "" CPACK_DEBIAN_PACKAGE_SUGGESTS "${_suggests}")
endif()
message(STATUS "mtpcheck .deb Depends: ${CPACK_DEBIAN_PACKAGE_DEPENDS}")
message(STATUS "mtpcheck .deb Suggests: ${CPACK_DEBIAN_PACKAGE_SUGGESTS}")
