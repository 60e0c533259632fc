#include <array>
#include <mutex>

#include "hearth/backends/cuda/cudnn_util.h"

namespace hearth::cuda {

cudnnHandle_t cudnn_handle(int device) {
  DeviceContext& ctx = context(device);
  static std::mutex mu;
  if (!ctx.cudnn) {
    std::lock_guard<std::mutex> lock(mu);
    if (!ctx.cudnn) {
      cudnnHandle_t h;
      HEARTH_CUDNN_CHECK(cudnnCreate(&h));
      HEARTH_CUDNN_CHECK(cudnnSetStream(h, ctx.stream));
      ctx.cudnn = h;
    }
  }
  return ctx.cudnn;
}

cudnnDataType_t cudnn_dtype(DType t) {
  switch (t) {
    case DType::float32: return CUDNN_DATA_FLOAT;
    case DType::float64: return CUDNN_DATA_DOUBLE;
    case DType::float16: return CUDNN_DATA_HALF;
    case DType::bfloat16: return CUDNN_DATA_BFLOAT16;
    default: HEARTH_THROW(NotImplementedError, "[cudnn] no cuDNN data type for ", dtype_name(t));
  }
}

void TensorDesc::set(const Tensor& t) {
  HEARTH_CHECK(t.dim() == 4, ShapeError, "[cudnn] expected a 4-D tensor, got ", t.shape_string());
  std::array<int, 4> dims, strides;
  for (int i = 0; i < 4; ++i) {
    dims[i] = static_cast<int>(t.shape()[i]);
    strides[i] = static_cast<int>(t.strides()[i]);
  }
  HEARTH_CUDNN_CHECK(cudnnSetTensorNdDescriptor(d, cudnn_dtype(t.dtype()), 4, dims.data(), strides.data()));
}

void TensorDesc::set_nchw(DType dt, int n, int c, int h, int w) {
  HEARTH_CUDNN_CHECK(cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NCHW, cudnn_dtype(dt), n, c, h, w));
}

}  // namespace hearth::cuda
