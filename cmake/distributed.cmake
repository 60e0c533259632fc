# Process group backends of hearth/distributed. Appends to HEARTH_DIST_SOURCES
# and sets HEARTH_DIST_LIBS, HEARTH_DIST_INCLUDE_DIRS and HEARTH_DIST_STATUS.
#   gloo: CPU tensors over TCP, from Debian's libgloo-dev. Found by header and
#         library rather than through its GlooConfig.cmake, whose imported
#         target names /usr/lib/libgloo.so.0.5.0 by absolute path and only for
#         RelWithDebInfo: a package unpacked elsewhere (CMAKE_PREFIX_PATH) would
#         not link. Its link line is just -lgloo (libgloo.so.0 brings its own
#         hiredis and ibverbs dependencies).
# An accelerator's backend lives in its backend folder and is found by that
# backend's CMake file (NCCL: cmake/cuda.cmake), which lists what it found in
# HEARTH_BACKEND_PROCESS_GROUPS for the status line.
set(HEARTH_DIST_LIBS "")
set(HEARTH_DIST_INCLUDE_DIRS "")
set(HEARTH_DIST_STATUS "")
set(HEARTH_GLOO_ENABLED OFF)

find_path(GLOO_INCLUDE_DIR gloo/allreduce.h)
find_library(GLOO_LIBRARY gloo)
if(GLOO_INCLUDE_DIR AND GLOO_LIBRARY)
  file(GLOB _gloo_sources CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/hearth/distributed/gloo/*.cpp)
  list(APPEND HEARTH_DIST_SOURCES ${_gloo_sources})
  list(APPEND HEARTH_DIST_LIBS ${GLOO_LIBRARY})
  list(APPEND HEARTH_DIST_INCLUDE_DIRS ${GLOO_INCLUDE_DIR})
  set(HEARTH_GLOO_ENABLED ON)
  list(APPEND HEARTH_DIST_STATUS gloo)
else()
  message(STATUS "hearth: Gloo not found (install libgloo-dev): no CPU data-parallel training")
endif()

list(APPEND HEARTH_DIST_STATUS ${HEARTH_BACKEND_PROCESS_GROUPS})
if(NOT HEARTH_DIST_STATUS)
  set(HEARTH_DIST_STATUS "none")
endif()
string(REPLACE ";" ", " HEARTH_DIST_STATUS "${HEARTH_DIST_STATUS}")
