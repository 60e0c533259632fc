// Turning CUDA, cuBLASLt and cuDNN status codes into hearth errors that say
// which call failed and why.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include "hearth/core/errors.h"

#define HEARTH_CUDA_CHECK(expr)                                                                          \
  do {                                                                                                   \
    cudaError_t err_ = (expr);                                                                           \
    if (err_ != cudaSuccess) {                                                                           \
      (void)cudaGetLastError();                                                                          \
      HEARTH_THROW(::hearth::DeviceError, "[cuda] ", #expr, " failed: ", cudaGetErrorString(err_), " (", \
                   __FILE__, ":", __LINE__, ")");                                                        \
    }                                                                                                    \
  } while (0)

// After a kernel launch: launch-configuration errors surface here, not later.
#define HEARTH_CUDA_CHECK_LAUNCH() HEARTH_CUDA_CHECK(cudaGetLastError())

#define HEARTH_CUBLAS_CHECK(expr)                                                                     \
  do {                                                                                                \
    cublasStatus_t st_ = (expr);                                                                      \
    if (st_ != CUBLAS_STATUS_SUCCESS)                                                                 \
      HEARTH_THROW(::hearth::DeviceError, "[cublasLt] ", #expr, " failed with status ", static_cast<int>(st_), \
                   " (", __FILE__, ":", __LINE__, ")");                                               \
  } while (0)

#define HEARTH_CUDNN_CHECK(expr)                                                                            \
  do {                                                                                                      \
    cudnnStatus_t st_ = (expr);                                                                             \
    if (st_ != CUDNN_STATUS_SUCCESS)                                                                        \
      HEARTH_THROW(::hearth::DeviceError, "[cudnn] ", #expr, " failed: ", cudnnGetErrorString(st_), " (", \
                   __FILE__, ":", __LINE__, ")");                                                           \
  } while (0)
