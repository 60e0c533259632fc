// The kernels' SPIR-V, compiled from shaders/*.comp at build time and embedded
// in the library (cmake/vulkan.cmake, embed_spirv.cmake), looked up by name:
// the shader's file stem, or its variant's name in shaders/variants.txt.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

namespace hearth::vulkan {

struct EmbeddedShader {
  const char* name;
  const unsigned char* spirv;  // 4-byte aligned
  size_t bytes;
};

std::span<const EmbeddedShader> embedded_shaders();  // generated
// Throws DeviceError naming the shader when the library has none of that name.
const EmbeddedShader& find_shader(std::string_view name);

}  // namespace hearth::vulkan
