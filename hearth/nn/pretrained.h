// Loading weights saved by another framework (a torchvision or Hugging Face
// state dict written as safetensors) into a module built with the same names.
#pragma once

#include <string>

#include "hearth/nn/module.h"

namespace hearth::nn {

// Reads the safetensors file at `path` and loads it into `module`. Every key
// must match in name and shape; otherwise nothing is written and a ValueError
// names the file, the module and every missing key (the module has it, the
// file does not), unexpected key (the file has it, the module does not) and
// shape mismatch. With strict = false only the shapes must agree, and the
// result lists what was missing or left unused. dtypes are converted to the
// module's. IoError when the file cannot be read.
LoadStateDictResult load_pretrained(Module& module, const std::string& path, bool strict = true);

}  // namespace hearth::nn
