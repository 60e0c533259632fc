# Process group backends of hearth/distributed. Appends to HEARTH_DIST_SOURCES and
# sets HEARTH_DIST_LIBS and HEARTH_DIST_STATUS.
#   gloo: CPU tensors over TCP, from Debian's libgloo-dev. Found by header and
#         library rather than through its GlooConfig.cmake, whose imported
#         target names /usr/lib/libgloo.so.0.5.0 by absolute path and only for
#         RelWithDebInfo: a package unpacked elsewhere (CMAKE_PREFIX_PATH) would
#         not link. Its link line is just -lgloo (libgloo.so.0 brings its own
#         hiredis and ibverbs dependencies).
#   nccl: CUDA tensors, built with the CUDA backend when nccl.h and libnccl are
#         found: in the CUDA toolkit, or in Python's site-packages (the
#         nvidia-nccl wheel), the way cmake/cuda.cmake finds cuDNN.
set(HEARTH_DIST_LIBS "")
set(HEARTH_DIST_STATUS "")
set(HEARTH_GLOO_ENABLED OFF)
set(HEARTH_NCCL_ENABLED OFF)

find_path(GLOO_INCLUDE_DIR gloo/allreduce.h)
find_library(GLOO_LIBRARY gloo)
if(GLOO_INCLUDE_DIR AND GLOO_LIBRARY)
  file(GLOB _gloo_sources CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/hearth/distributed/gloo/*.cpp)
  list(APPEND HEARTH_DIST_SOURCES ${_gloo_sources})
  list(APPEND HEARTH_DIST_LIBS ${GLOO_LIBRARY})
  set(HEARTH_GLOO_ENABLED ON)
  list(APPEND HEARTH_DIST_STATUS gloo)
else()
  message(STATUS "hearth: Gloo not found (install libgloo-dev): no CPU data-parallel training")
endif()

if(HEARTH_CUDA_ENABLED)
  # Site-packages of the Python interpreters present, where pip puts nvidia/nccl.
  set(_nccl_hints ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}/lib64)
  set(_nccl_include_hints ${CUDAToolkit_INCLUDE_DIRS})
  find_program(_python NAMES python3 python)
  if(_python)
    execute_process(COMMAND ${_python} -c "import site, sys; print(';'.join(site.getsitepackages() + [site.getusersitepackages()]))"
                    OUTPUT_VARIABLE _site OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    foreach(_dir ${_site})
      list(APPEND _nccl_hints ${_dir}/nvidia/nccl/lib)
      list(APPEND _nccl_include_hints ${_dir}/nvidia/nccl/include)
    endforeach()
  endif()
  find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${_nccl_include_hints})
  find_library(NCCL_LIBRARY NAMES nccl libnccl.so.2 HINTS ${_nccl_hints})
  if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
    file(GLOB _nccl_sources CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/hearth/distributed/nccl/*.cpp)
    list(APPEND HEARTH_DIST_SOURCES ${_nccl_sources})
    list(APPEND HEARTH_DIST_LIBS ${NCCL_LIBRARY})
    set(HEARTH_NCCL_ENABLED ON)
    list(APPEND HEARTH_DIST_STATUS "nccl (${NCCL_LIBRARY})")
  else()
    message(STATUS "hearth: NCCL not found (nccl.h, libnccl): no GPU data-parallel training")
  endif()
endif()
if(NOT HEARTH_DIST_STATUS)
  set(HEARTH_DIST_STATUS "none")
endif()
string(REPLACE ";" ", " HEARTH_DIST_STATUS "${HEARTH_DIST_STATUS}")
