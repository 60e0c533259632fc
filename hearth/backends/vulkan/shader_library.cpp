#include "hearth/backends/vulkan/shader_library.h"

#include <string>

#include "hearth/core/errors.h"

namespace hearth::vulkan {

const EmbeddedShader& find_shader(std::string_view name) {
  for (const EmbeddedShader& s : embedded_shaders())
    if (name == s.name) return s;
  HEARTH_THROW(DeviceError, "[vulkan] no kernel named '", std::string(name),
               "' was compiled into this library (hearth/backends/vulkan/shaders/)");
}

}  // namespace hearth::vulkan
