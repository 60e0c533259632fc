// cuDNN plumbing shared by the convolution (and later pooling/normalisation)
// kernels: the per-device handle, data types, and RAII descriptors.
#pragma once

#include <cudnn.h>

#include "hearth/backends/cuda/context.h"
#include "hearth/backends/cuda/cuda_check.h"
#include "hearth/core/tensor.h"

namespace hearth::cuda {

// The device's cuDNN handle, created on first use and bound to its stream.
cudnnHandle_t cudnn_handle(int device);

cudnnDataType_t cudnn_dtype(DType t);

struct TensorDesc {
  cudnnTensorDescriptor_t d = nullptr;
  TensorDesc() { HEARTH_CUDNN_CHECK(cudnnCreateTensorDescriptor(&d)); }
  ~TensorDesc() { cudnnDestroyTensorDescriptor(d); }
  TensorDesc(const TensorDesc&) = delete;
  TensorDesc& operator=(const TensorDesc&) = delete;
  // NCHW with the tensor's own strides (4-D).
  void set(const Tensor& t);
  void set_nchw(DType dt, int n, int c, int h, int w);
};

struct FilterDesc {
  cudnnFilterDescriptor_t d = nullptr;
  FilterDesc() { HEARTH_CUDNN_CHECK(cudnnCreateFilterDescriptor(&d)); }
  ~FilterDesc() { cudnnDestroyFilterDescriptor(d); }
  FilterDesc(const FilterDesc&) = delete;
  FilterDesc& operator=(const FilterDesc&) = delete;
};

struct ConvDesc {
  cudnnConvolutionDescriptor_t d = nullptr;
  ConvDesc() { HEARTH_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&d)); }
  ~ConvDesc() { cudnnDestroyConvolutionDescriptor(d); }
  ConvDesc(const ConvDesc&) = delete;
  ConvDesc& operator=(const ConvDesc&) = delete;
};

}  // namespace hearth::cuda
