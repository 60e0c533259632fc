// How a Vulkan kernel runs a shader: the API every op family's file
// (hearth/backends/vulkan/<family>.cpp) is written against.
//
// A kernel is a GLSL compute shader, hearth/backends/vulkan/shaders/<name>.comp,
// compiled to SPIR-V at build time and embedded in the library (a variant
// compiled with other macros is a line of shaders/variants.txt). Its
// interface, by convention:
//
//   layout(local_size_x_id = 0) in;      // the workgroup size: constant 0, set from Dispatch::workgroup_size
//   layout(constant_id = 1) const uint K = 0;   // further specialisation constants 1, 2, ...
//   layout(std430, set = 0, binding = 0) readonly buffer Params {
//     uint off_x;  uint off_y;           // first: one word per tensor, in binding order
//     uint n; float alpha; ...           // then the words the kernel pushed, in order
//   };
//   layout(std430, set = 0, binding = 1) readonly buffer X { float x[]; };   // tensor 0
//   layout(std430, set = 0, binding = 2) writeonly buffer Y { float y[]; };  // tensor 1
//
// Tensors are bound in the order of Dispatch::tensors, at bindings 1, 2, ...
// A binding starts at an aligned offset at or before the tensor's first
// element, so the shader reads element i of tensor k at index off_k + i
// (off_k counts elements of the tensor's own dtype). Strides, shapes and
// scalars are parameters (Params); the shader does its own indexing. An
// undefined or empty Tensor binds a small dummy buffer (for an absent
// optional input; the kernel tells the shader through a parameter).
//
// On the host, a kernel file:
//   #include "hearth/backends/vulkan/kernel_launch.h"
//   void my_kernel(OpCall& call) {
//     const Tensor& x = call.in(0); const Tensor& y = call.out(0);
//     Dispatch d("my_shader", y.device().index);
//     d.tensors = {x, y};
//     d.params.u32(static_cast<uint32_t>(y.numel())).f32(2.0f);
//     d.groups_x = d.groups_for(y.numel());   // one invocation per element, grid-stride beyond the limit
//     d.run();
//   }
//   HEARTH_REGISTER_KERNEL(my_op, vulkan_kind(), my_kernel, {DType::float32});
// run() records the dispatch into the device's open batch and returns; the
// batch is submitted when the host needs a result. Dispatches on one device
// run in the order they were recorded, each seeing every earlier one's writes.
//
// Sizes come from the device (device_limits), never assumed: a shader that
// needs a workgroup size matched to the subgroup, or shared memory sized to
// the device, takes them as specialisation constants. A shader that gives
// one workgroup to one row and reduces it in shared memory declares
// `#define WG gl_WorkGroupSize.x` and includes shaders/row_reduce.glsl; its
// host side calls use_row_workgroup(row length) (a power of two).
//
// Shared pieces: elementwise.h runs any elementwise op (one shader, the op
// and dtypes as specialisation constants: add an op there, not a shader);
// row_reduction.h the row reductions; gemm.h the batched GEMM. Shaders
// include dtype_access.glsl for typed views of a binding, philox.glsl for
// random bits identical to the CPU's. Specialisation constants and tensor
// counts pick the pipeline: each distinct (shader, tensors, constants) is
// built once per process (and kept in the on-disk pipeline cache).
//
// Dtypes: float32, int64, int32, uint8 and bool everywhere; float64 only
// on devices with shaderFloat64 (call require_float64 before a double
// variant); float16 and bfloat16 only on devices with shaderFloat16 and 16-bit storage
// (require_float16 before a half variant: shaders defining HAS_FLOAT16 get a
// 16-bit word view from dtype_access.glsl, converted by shaders/half_words.glsl
// with the CPU's rounding, and compute in float32, as the CPU does for half
// inputs). Kernels without a half
// shader run their float32 shader on widened copies (half_widening.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hearth/core/device.h"
#include "hearth/core/tensor.h"

namespace hearth::vulkan {

DeviceKind vulkan_kind();

struct DeviceLimits {
  uint32_t subgroup_size = 1;
  uint32_t max_workgroup_size = 128;  // invocations, along x
  uint32_t max_shared_bytes = 16384;
  uint32_t max_groups_x = 65535;
  uint32_t default_workgroup_size = 64;  // a multiple of the subgroup size, at most 256
  bool float64 = false;                  // shaders may use doubles (not on Apple GPUs)
  bool float16 = false;                  // the half variants may run: float16, and bfloat16 as 16-bit words
  uint64_t max_binding_bytes = 1 << 27;  // the most bytes one tensor binding may span
};
// Throws NotImplementedError naming the op and the device when `device` has
// no 64-bit floats in shaders; kernels call it before a float64 variant.
void require_float64(int device, const char* op);
// Likewise for float16 and bfloat16 (shaderFloat16 and storageBuffer16BitAccess):
// before a half variant, for the device, or for any float16 or bfloat16
// tensor among `tensors`.
void require_float16(int device, const char* op);
void require_float16(const std::vector<Tensor>& tensors, const char* op);
const DeviceLimits& device_limits(int device);

// The words of binding 0 after the tensors' offsets; 4 bytes each (std430
// packs uint, int and float members and arrays of them without padding).
class KernelParams {
 public:
  KernelParams& u32(uint32_t v) {
    words_.push_back(v);
    return *this;
  }
  KernelParams& i32(int32_t v) { return u32(static_cast<uint32_t>(v)); }
  KernelParams& f32(float v);
  // A 64-bit value as two words, low first (the shader declares uvec2 or two uints).
  KernelParams& u64(uint64_t v) { return u32(static_cast<uint32_t>(v)).u32(static_cast<uint32_t>(v >> 32)); }
  const std::vector<uint32_t>& words() const { return words_; }

 private:
  std::vector<uint32_t> words_;
};

struct Dispatch {
  Dispatch(std::string shader_name, int device_index);

  std::string shader;
  int device = 0;
  std::vector<uint32_t> spec;   // specialisation constants 1, 2, ... (constant 0 is the workgroup size)
  uint32_t workgroup_size = 0;  // 0: device_limits(device).default_workgroup_size
  std::vector<Tensor> tensors;  // bindings 1, 2, ...
  KernelParams params;          // binding 0, after one offset word per tensor
  uint32_t groups_x = 1, groups_y = 1, groups_z = 1;

  // Workgroups along x for `n` invocations, capped at the device's limit
  // (the shader then loops: for (i = gl_GlobalInvocationID.x; i < n; i += gl_NumWorkGroups.x * size)).
  uint32_t groups_for(int64_t n) const;
  // A power-of-two workgroup size for one workgroup per row of `row_length`
  // elements (shaders that reduce a row in shared memory need a power of
  // two): the default size, or less for short rows. Sets workgroup_size.
  uint32_t use_row_workgroup(int64_t row_length);
  // The workgroup size run() will use.
  uint32_t effective_workgroup_size() const;
  void run() const;
};

// Every command recorded on `device` so far (tests check that work ran on it).
uint64_t commands_recorded(int device);

}  // namespace hearth::vulkan
