# What `cmake --install` puts where (layout: docs/ARCHITECTURE.md,
# "Installed layout"), the CMake package and pkg-config file that an
# out-of-tree backend builds against (examples/backend/), and the .deb that
# `cpack -G DEB` makes (tools/ci/install.sh checks all of it).
#
#   bin/mtpcheck
#   lib/mtpcheck/mtp_backend_<name>.so     the GPU and python modules
#   lib/libmtpcheck_backend.a              mtp_base: what a backend links
#   include/mtpcheck/mtp/*.h               the backend interface
#   lib/cmake/mtpcheck/, lib/pkgconfig/mtpcheck.pc
#   share/mtpcheck/{cases,fixtures}/       the default suite and goldens
#   share/mtpcheck/python/mtpcheck/        the python backend's adapters
#   share/doc/mtpcheck/                    README and docs/
include(CMakePackageConfigHelpers)

install(TARGETS mtpcheck RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The backend modules this build made: each kernels/<name>/ whose target
# mtp_backend_<name> is a module (the backends are named in
# harness/src/backends/registry.c alone).
set(MTP_BUILT_MODULES)
file(GLOB _mtp_kernel_dirs LIST_DIRECTORIES true RELATIVE ${CMAKE_SOURCE_DIR}/kernels
  ${CMAKE_SOURCE_DIR}/kernels/*)
foreach(_b IN LISTS _mtp_kernel_dirs)
  if(TARGET mtp_backend_${_b})
    get_target_property(_type mtp_backend_${_b} TYPE)
    if(_type STREQUAL "MODULE_LIBRARY")
      list(APPEND MTP_BUILT_MODULES ${_b})
    endif()
  endif()
endforeach()
foreach(_b IN LISTS MTP_BUILT_MODULES)
  install(TARGETS mtp_backend_${_b} LIBRARY DESTINATION ${MTP_INSTALL_MODULE_DIR})
endforeach()

# The backend interface and the headers it includes, nothing of the
# harness's own (runner, fixtures, reports): backend.h's closure, and quant.h
# for a backend that reads float8 weights.
set(MTP_PUBLIC_HEADERS backend.h op.h ref.h conventions.h dtype.h family.h status.h
  tensor.h quant.h)
list(TRANSFORM MTP_PUBLIC_HEADERS PREPEND ${CMAKE_SOURCE_DIR}/harness/include/mtp/)
install(FILES ${MTP_PUBLIC_HEADERS} DESTINATION ${MTP_INSTALL_INCLUDE_DIR}/mtp)
# mtp_base (dtypes, tensors, the call and error helpers), position
# independent, under a name that says whose it is
install(FILES $<TARGET_FILE:mtp_base> DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RENAME ${CMAKE_STATIC_LIBRARY_PREFIX}mtpcheck_backend${CMAKE_STATIC_LIBRARY_SUFFIX})

file(STRINGS ${CMAKE_SOURCE_DIR}/harness/include/mtp/backend.h _api
  REGEX "^#define MTP_BACKEND_API_VERSION [0-9]+")
string(REGEX REPLACE ".* " "" MTP_BACKEND_API_VERSION "${_api}")

# The package files find their prefix from where they lie, so the install
# can be moved (the .deb's /usr, or unpacked with dpkg-deb -x anywhere).
mtp_install_rel(MTP_CMAKE_PREFIX_REL ${MTP_INSTALL_CMAKE_DIR} .)
mtp_install_rel(MTP_PC_PREFIX_REL ${MTP_INSTALL_PC_DIR} .)
configure_file(cmake/mtpcheck-config.cmake.in
  ${CMAKE_BINARY_DIR}/package/mtpcheck-config.cmake @ONLY)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/package/mtpcheck-config-version.cmake
  COMPATIBILITY SameMinorVersion)
configure_file(cmake/mtpcheck.pc.in ${CMAKE_BINARY_DIR}/package/mtpcheck.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/package/mtpcheck-config.cmake
  ${CMAKE_BINARY_DIR}/package/mtpcheck-config-version.cmake
  DESTINATION ${MTP_INSTALL_CMAKE_DIR})
install(FILES ${CMAKE_BINARY_DIR}/package/mtpcheck.pc DESTINATION ${MTP_INSTALL_PC_DIR})

# Case files name fixtures relative to themselves (fixtures=../fixtures),
# so the two folders keep their places side by side.
install(DIRECTORY cases fixtures DESTINATION ${MTP_INSTALL_DATA_DIR})
if(TARGET mtp_backend_python) # its adapters (kernels/python/backend_python.c)
  install(DIRECTORY python/mtpcheck DESTINATION ${MTP_INSTALL_PY_DIR}
    PATTERN __pycache__ EXCLUDE PATTERN "*.pyc" EXCLUDE)
endif()
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}
  FILES_MATCHING PATTERN "*.md" PATTERN "*.yml" PATTERN results.schema.json
  PATTERN screenshots EXCLUDE PATTERN bench EXCLUDE)

# The .deb. Its Depends are what the binary itself links (dpkg-shlibdeps
# over bin/mtpcheck, at package time: cmake/DebDepends.cmake); the modules'
# runtimes (OpenCL, Level Zero, CUDA, libpython) are only suggested, since a
# module whose runtime is missing is a clean SKIPPED, never a broken install.
set(CPACK_PACKAGE_NAME mtpcheck)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "numerical conformance harness for MTP draft layers (DeepSeek, GLM)")
set(CPACK_PACKAGE_CONTACT "mtpcheck maintainers <mtpcheck@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "python3-numpy") # the numpy adapter; the modules' own: DebDepends.cmake
set(MTP_DEB_BINARY $<TARGET_FILE:mtpcheck>)
set(MTP_DEB_MODULES)
foreach(_b IN LISTS MTP_BUILT_MODULES)
  list(APPEND MTP_DEB_MODULES $<TARGET_FILE:mtp_backend_${_b}>)
endforeach()
file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/package/deb-depends.cmake CONTENT
  "set(MTP_DEB_BINARY \"${MTP_DEB_BINARY}\")\nset(MTP_DEB_MODULES \"${MTP_DEB_MODULES}\")\ninclude(\"${CMAKE_SOURCE_DIR}/cmake/DebDepends.cmake\")\n")
set(CPACK_PROJECT_CONFIG_FILE ${CMAKE_BINARY_DIR}/package/deb-depends.cmake)
include(CPack)
