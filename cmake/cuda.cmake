# Decides whether the CUDA backend is built. Sets HEARTH_BACKEND_SOURCES,
# HEARTH_BACKEND_LIBS and HEARTH_CUDA_STATUS. Without CUDA the stub in
# hearth/backends/no_cuda registers the "cuda" device kind as unavailable, so
# nothing above hearth/dispatch needs an #ifdef.
set(HEARTH_BACKEND_SOURCES "")
set(HEARTH_BACKEND_LIBS "")
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
  file(GLOB_RECURSE HEARTH_BACKEND_SOURCES CONFIGURE_DEPENDS
    ${CMAKE_SOURCE_DIR}/hearth/backends/cuda/*.cpp ${CMAKE_SOURCE_DIR}/hearth/backends/cuda/*.cu)
  find_library(CUDNN_LIBRARY cudnn HINTS ${CUDAToolkit_LIBRARY_DIR} REQUIRED)
  # dl: the runtime opens the driver library itself to say why it cannot be loaded.
  set(HEARTH_BACKEND_LIBS CUDA::cudart_static CUDA::cublasLt ${CUDNN_LIBRARY} ${CMAKE_DL_LIBS})
  set(HEARTH_CUDA_STATUS "ON (sm_${CMAKE_CUDA_ARCHITECTURES})")
  set(HEARTH_CUDA_ENABLED ON)
else()
  file(GLOB HEARTH_BACKEND_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/hearth/backends/no_cuda/*.cpp)
  set(HEARTH_CUDA_STATUS "OFF (CPU-only build)")
endif()
