# Decides whether the CUDA backend is built (cmake/backends.cmake includes it):
# sets HEARTH_CUDA_ENABLED and HEARTH_CUDA_STATUS and appends to
# HEARTH_BACKEND_SOURCES, HEARTH_BACKEND_LIBS, HEARTH_BACKEND_INCLUDE_DIRS and
# HEARTH_BACKEND_PROCESS_GROUPS. Without CUDA the generic stub
# (hearth/backends/unbuilt/) registers the "cuda" kind as unavailable.
#
# The backend's process group (hearth/backends/cuda/distributed/, NCCL) is
# built with it when nccl.h and libnccl are found: in the CUDA toolkit, or in
# Python's site-packages (the nvidia-nccl wheel).
set(HEARTH_NCCL_ENABLED OFF)
set(HEARTH_CUDA_ENABLED OFF)
set(_want_cuda OFF)
if(HEARTH_CUDA STREQUAL "ON" OR HEARTH_CUDA STREQUAL "AUTO")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    find_package(CUDAToolkit)
  endif()
  if(CMAKE_CUDA_COMPILER AND CUDAToolkit_FOUND AND EXISTS ${CMAKE_SOURCE_DIR}/hearth/backends/cuda/runtime.cu)
    set(_want_cuda ON)
  elseif(HEARTH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "HEARTH_CUDA=ON but no usable CUDA toolkit (nvcc) was found; install it or use -DHEARTH_CUDA=OFF")
  endif()
endif()

if(_want_cuda)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 90)
  endif()
  enable_language(CUDA)
  # CMake 3.25 predates nvcc 13 and does not know it speaks C++20: tell it the flag.
  set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA_STANDARD 20)
  file(GLOB_RECURSE _cuda_sources CONFIGURE_DEPENDS
    ${CMAKE_SOURCE_DIR}/hearth/backends/cuda/*.cpp ${CMAKE_SOURCE_DIR}/hearth/backends/cuda/*.cu)
  # The process group needs NCCL: added below when it is found.
  list(FILTER _cuda_sources EXCLUDE REGEX "/hearth/backends/cuda/distributed/")
  list(APPEND HEARTH_BACKEND_SOURCES ${_cuda_sources})
  find_library(CUDNN_LIBRARY cudnn HINTS ${CUDAToolkit_LIBRARY_DIR} REQUIRED)
  # dl: the runtime opens the driver library itself to say why it cannot be loaded.
  list(APPEND HEARTH_BACKEND_LIBS CUDA::cudart_static CUDA::cublasLt ${CUDNN_LIBRARY} ${CMAKE_DL_LIBS})
  set(HEARTH_CUDA_STATUS "ON (sm_${CMAKE_CUDA_ARCHITECTURES})")
  set(HEARTH_CUDA_ENABLED ON)
else()
  if(HEARTH_CUDA STREQUAL "OFF")
    hearth_backend_not_built(cuda "hearth was built without CUDA (turned off with -DHEARTH_CUDA=OFF). Rebuild with -DHEARTH_CUDA=ON on a machine with the CUDA toolkit (nvcc).")
  else()
    hearth_backend_not_built(cuda "hearth was built without CUDA (the CUDA toolkit was not found at configure time). Rebuild on a machine with the CUDA toolkit (nvcc), or configure with -DHEARTH_CUDA=ON to make its absence an error.")
  endif()
  # Why CUDA cannot be used, in words: plain C++, and so is nvJPEG's loader,
  # so their tests run in every build. Its switches are declared in every
  # build, so `hearth env` lists them.
  list(APPEND HEARTH_BACKEND_SOURCES ${CMAKE_SOURCE_DIR}/hearth/backends/cuda/diagnosis.cpp
       ${CMAKE_SOURCE_DIR}/hearth/backends/cuda/cuda_switches.cpp
       ${CMAKE_SOURCE_DIR}/hearth/backends/cuda/image/nvjpeg_library.cpp)
  list(APPEND HEARTH_BACKEND_LIBS ${CMAKE_DL_LIBS})
  if(HEARTH_CUDA STREQUAL "OFF")
    set(HEARTH_CUDA_STATUS "OFF (-DHEARTH_CUDA=OFF)")
  else()
    set(HEARTH_CUDA_STATUS "OFF (no CUDA toolkit found)")
  endif()
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
    file(GLOB _nccl_sources CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/hearth/backends/cuda/distributed/*.cpp)
    list(APPEND HEARTH_BACKEND_SOURCES ${_nccl_sources})
    list(APPEND HEARTH_BACKEND_LIBS ${NCCL_LIBRARY})
    list(APPEND HEARTH_BACKEND_INCLUDE_DIRS ${NCCL_INCLUDE_DIR})
    set(HEARTH_NCCL_ENABLED ON)
    list(APPEND HEARTH_BACKEND_PROCESS_GROUPS "nccl (${NCCL_LIBRARY})")
  else()
    message(STATUS "hearth: NCCL not found (nccl.h, libnccl): no GPU data-parallel training")
  endif()
endif()
