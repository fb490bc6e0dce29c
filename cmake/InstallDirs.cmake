# Where `cmake --install` and the .deb put things (GNUInstallDirs names), and
# the paths from the binary's folder to the module and data folders. The
# binary reads those two from config.h (harness/src/util/paths.c), so an install
# works under any prefix (cmake --install --prefix, the .deb's /usr, a
# tarball unpacked anywhere). cmake/Install.cmake holds the install rules.
include(GNUInstallDirs)
set(MTP_INSTALL_MODULE_DIR ${CMAKE_INSTALL_LIBDIR}/mtpcheck)
set(MTP_INSTALL_DATA_DIR ${CMAKE_INSTALL_DATADIR}/mtpcheck)
set(MTP_INSTALL_INCLUDE_DIR ${CMAKE_INSTALL_INCLUDEDIR}/mtpcheck)
set(MTP_INSTALL_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/mtpcheck)
set(MTP_INSTALL_PC_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
# the python backend's copy of the mtpcheck package (its adapters)
set(MTP_INSTALL_PY_DIR ${MTP_INSTALL_DATA_DIR}/python)

# REL: from the installed folder FROM to the installed folder TO (either may
# be absolute, as -DCMAKE_INSTALL_LIBDIR=/opt/lib makes it)
function(mtp_install_rel out from to)
  foreach(d from to)
    if(NOT IS_ABSOLUTE "${${d}}")
      set(${d} ${CMAKE_INSTALL_PREFIX}/${${d}})
    endif()
  endforeach()
  file(RELATIVE_PATH rel ${from} ${to})
  if(rel STREQUAL "")
    set(rel .)
  endif()
  set(${out} ${rel} PARENT_SCOPE)
endfunction()
mtp_install_rel(MTP_INSTALL_MODULE_REL ${CMAKE_INSTALL_BINDIR} ${MTP_INSTALL_MODULE_DIR})
mtp_install_rel(MTP_INSTALL_DATA_REL ${CMAKE_INSTALL_BINDIR} ${MTP_INSTALL_DATA_DIR})
# the python module finds the package from its own folder
mtp_install_rel(MTP_INSTALL_PY_REL ${MTP_INSTALL_MODULE_DIR} ${MTP_INSTALL_PY_DIR})
