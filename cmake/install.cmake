# What `cmake --install` puts where, the CMake package and pkg-config file that
# let a program outside this tree use hearth, and the Debian packages CPack
# makes from the same rules (`make package` / `cpack -G DEB` in the build).
#
# Two components, which become the two .deb packages:
#   runtime      libhearth.so.<version>, the `hearth` command and the examples
#   development  the public headers, the CMake package, hearth.pc, libhearth.so
include(CMakePackageConfigHelpers)

set(HEARTH_CMAKE_PACKAGE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/hearth)

# ---- version.h: the version as a header, in the build and installed ----------
configure_file(${CMAKE_SOURCE_DIR}/cmake/version.h.in ${CMAKE_BINARY_DIR}/include/hearth/version.h @ONLY)
target_include_directories(hearth PUBLIC $<BUILD_INTERFACE:${CMAKE_BINARY_DIR}/include>)

# ---- relocatable run paths ----------------------------------------------------
# The programs find the library next to them (<prefix>/bin -> <prefix>/lib),
# wherever the prefix is. The library keeps the directories outside the system
# ones that it was linked from (the CUDA toolkit's, in a CUDA build), so its
# CUDA libraries are found without LD_LIBRARY_PATH on the machine it was built for.
file(RELATIVE_PATH _bin_to_lib ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_LIBDIR})
set(HEARTH_INSTALLED_PROGRAMS hearth_cli cv_example run_glue)
set_target_properties(${HEARTH_INSTALLED_PROGRAMS} PROPERTIES INSTALL_RPATH "$ORIGIN/${_bin_to_lib}")
set_target_properties(hearth PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)

install(TARGETS hearth EXPORT hearthTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT development)
install(TARGETS ${HEARTH_INSTALLED_PROGRAMS} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)

# ---- public headers ----------------------------------------------------------
# Everything under hearth/ but the backends' own headers (CUDA, cuDNN, the CPU
# kernels' helpers), Gloo's adapter, and the one header that joins a file to its
# per-CPU-level copies. tests/unit/packaging checks that the installed set
# compiles on its own, strictly, with nothing of the build tree on the path.
install(DIRECTORY ${CMAKE_SOURCE_DIR}/hearth/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/hearth COMPONENT development
        FILES_MATCHING PATTERN "*.h"
        PATTERN "backends" EXCLUDE
        PATTERN "gloo" EXCLUDE
        PATTERN "image_resize_passes.h" EXCLUDE)
install(FILES ${CMAKE_BINARY_DIR}/include/hearth/version.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/hearth
        COMPONENT development)

# ---- the CMake package: find_package(hearth 0.1 CONFIG) -----------------------
install(EXPORT hearthTargets NAMESPACE hearth:: DESTINATION ${HEARTH_CMAKE_PACKAGE_DIR} COMPONENT development)
set(HEARTH_PACKAGE_CUDA ${HEARTH_CUDA_ENABLED})
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/hearthConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/package/hearthConfig.cmake
                              INSTALL_DESTINATION ${HEARTH_CMAKE_PACKAGE_DIR})
# Before 1.0 a minor version may break the API: 0.1 accepts 0.1.x only.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/package/hearthConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/package/hearthConfig.cmake ${CMAKE_BINARY_DIR}/package/hearthConfigVersion.cmake
        DESTINATION ${HEARTH_CMAKE_PACKAGE_DIR} COMPONENT development)

# ---- pkg-config ---------------------------------------------------------------
# The prefix is found from the .pc file's own place, so the file is relocatable too.
file(RELATIVE_PATH _pc_to_prefix ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" _pc_to_prefix "${_pc_to_prefix}")
configure_file(${CMAKE_SOURCE_DIR}/cmake/hearth.pc.in ${CMAKE_BINARY_DIR}/package/hearth.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/package/hearth.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig
        COMPONENT development)

# ---- Debian packages (cpack -G DEB) ----------------------------------------------
include(cmake/debian_package.cmake)
