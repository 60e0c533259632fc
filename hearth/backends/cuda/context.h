// Per-device state of the CUDA backend: the stream every op runs on, library
// handles and a workspace. Created on first use of a device.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <cstddef>

namespace hearth::cuda {

struct DeviceContext {
  int device = 0;
  cudaStream_t stream = nullptr;
  cublasLtHandle_t cublaslt = nullptr;
  cudnnHandle_t cudnn = nullptr;
  void* workspace = nullptr;  // for cuBLASLt
  size_t workspace_bytes = 0;
  cudaDeviceProp props{};
};

// Makes `device` current on this thread and returns its context.
DeviceContext& context(int device);
// The stream ops on `device` are ordered on.
inline cudaStream_t stream(int device) { return context(device).stream; }

// Device of a kernel's tensors, made current; used at the top of every kernel.
DeviceContext& activate(int device);

}  // namespace hearth::cuda
