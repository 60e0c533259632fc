# oneDNN for the CPU backend's convolutions (hearth/backends/cpu/onednn/).
# HEARTH_ONEDNN: AUTO (use it where found), ON (fail without it), OFF (never).
# Without it, hearth/backends/cpu/no_onednn/ is built instead and the CPU
# backend keeps its own im2col + OpenBLAS kernels for everything.
#
# Found by header and library rather than through dnnl-config.cmake: Debian's
# config (libdnnl-dev 2.6) demands OpenCL (its GPU runtime) with REQUIRED,
# which fails the whole configure where the OpenCL headers are absent, and its
# imported target exists only for RelWithDebInfo. A oneDNN built with another
# CPU runtime than OpenMP (TBB, threadpool) is refused: its threads would
# compete with hearth's OpenMP team for the cores.
#
# The wrappers are compiled once, for the baseline, and not once per CPU level
# like conv2d.cpp, which calls them (cmake/cpu_dispatch.cmake): the arithmetic
# is oneDNN's, JIT-compiled for the CPU it runs on (`hearth env` prints the ISA
# it chose), and the wrappers' own work (building primitives, reorders, the
# memory-bound ReLU pass) gains nothing from wider vectors. One copy also keeps
# one primitive cache and one count of the calls oneDNN took.
#
# oneDNN is a private dependency: no installed header names it and the library
# links it PRIVATE, so the CMake package and hearth.pc pass nothing of it on
# (tests/packaging/consume_installed.sh checks); the .deb depends on the
# package that owns it (cmake/debian_package.cmake).
#
# Sets HEARTH_ONEDNN_SOURCES, HEARTH_ONEDNN_LIBS, HEARTH_ONEDNN_INCLUDE_DIRS,
# HEARTH_ONEDNN_ENABLED and HEARTH_ONEDNN_STATUS.
set(HEARTH_ONEDNN "AUTO" CACHE STRING "Run CPU convolutions through oneDNN: AUTO, ON or OFF")
set_property(CACHE HEARTH_ONEDNN PROPERTY STRINGS AUTO ON OFF)

set(HEARTH_ONEDNN_ENABLED OFF)
set(HEARTH_ONEDNN_LIBS "")
set(HEARTH_ONEDNN_INCLUDE_DIRS "")
set(_onednn_why "HEARTH_ONEDNN=OFF")

if(NOT HEARTH_ONEDNN STREQUAL "OFF")
  find_path(DNNL_INCLUDE_DIR NAMES oneapi/dnnl/dnnl.hpp)
  find_library(DNNL_LIBRARY NAMES dnnl)
  if(NOT "gomp" IN_LIST OpenMP_CXX_LIB_NAMES)
    # Debian's oneDNN runs on libgomp; a second OpenMP runtime (clang's libomp)
    # in the process would keep two thread teams busy at once.
    set(_onednn_why "the compiler's OpenMP runtime (${OpenMP_CXX_LIB_NAMES}) is not libgomp, which oneDNN uses")
  elseif(DNNL_INCLUDE_DIR AND DNNL_LIBRARY)
    file(STRINGS "${DNNL_INCLUDE_DIR}/oneapi/dnnl/dnnl_config.h" _dnnl_runtime REGEX "^#define DNNL_CPU_RUNTIME ")
    if(_dnnl_runtime MATCHES "DNNL_RUNTIME_OMP")
      set(HEARTH_ONEDNN_ENABLED ON)
    else()
      set(_onednn_why "${DNNL_LIBRARY} is not built with the OpenMP CPU runtime (${_dnnl_runtime})")
    endif()
  else()
    set(_onednn_why "not found (install libdnnl-dev)")
  endif()
endif()

if(HEARTH_ONEDNN_ENABLED)
  file(GLOB HEARTH_ONEDNN_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/hearth/backends/cpu/onednn/*.cpp)
  set(HEARTH_ONEDNN_LIBS ${DNNL_LIBRARY})
  set(HEARTH_ONEDNN_INCLUDE_DIRS ${DNNL_INCLUDE_DIR})
  file(STRINGS "${DNNL_INCLUDE_DIR}/oneapi/dnnl/dnnl_version.h" _dnnl_version REGEX "^#define DNNL_VERSION_(MAJOR|MINOR|PATCH) ")
  string(REGEX REPLACE "[^0-9;]" "" _dnnl_version "${_dnnl_version}")
  string(REPLACE ";" "." _dnnl_version "${_dnnl_version}")
  set(HEARTH_ONEDNN_STATUS "oneDNN ${_dnnl_version} (${DNNL_LIBRARY})")
else()
  if(HEARTH_ONEDNN STREQUAL "ON")
    message(FATAL_ERROR "HEARTH_ONEDNN=ON but oneDNN is unusable: ${_onednn_why}")
  endif()
  file(GLOB HEARTH_ONEDNN_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/hearth/backends/cpu/no_onednn/*.cpp)
  set(HEARTH_ONEDNN_STATUS "off: ${_onednn_why}")
endif()
