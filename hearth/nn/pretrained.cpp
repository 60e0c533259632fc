#include "hearth/nn/pretrained.h"

#include <sstream>
#include <vector>

#include "hearth/core/errors.h"
#include "hearth/io/safetensors.h"

namespace hearth::nn {
namespace {

// Long lists (a wrong architecture misses hundreds of keys) are cut, keeping
// the message readable while still saying how many there are.
constexpr size_t kMaxListed = 20;

void append_list(std::ostringstream& msg, const char* what, const std::vector<std::string>& items) {
  if (items.empty()) return;
  msg << "\n  " << items.size() << " " << what << ":";
  for (size_t i = 0; i < items.size() && i < kMaxListed; ++i) msg << "\n    " << items[i];
  if (items.size() > kMaxListed) msg << "\n    ... and " << items.size() - kMaxListed << " more";
}

}  // namespace

LoadStateDictResult load_pretrained(Module& module, const std::string& path, bool strict) {
  const StateDict file = io::load_safetensors(path);
  const StateDict own = module.state_dict();

  LoadStateDictResult result;
  std::vector<std::string> mismatched;
  for (const auto& [name, t] : own) {
    auto it = file.find(name);
    if (it == file.end()) {
      result.missing_keys.push_back(name);
    } else if (it->second.shape() != t.shape()) {
      mismatched.push_back(name + ": file " + it->second.shape_string() + ", model " + t.shape_string());
    }
  }
  for (const auto& [name, t] : file)
    if (!own.count(name)) result.unexpected_keys.push_back(name);

  const bool keys_differ = !result.missing_keys.empty() || !result.unexpected_keys.empty();
  if (!mismatched.empty() || (strict && keys_differ)) {
    std::ostringstream msg;
    msg << "[load_pretrained] " << path << ": the weights do not fit " << module.type_name() << " (" << own.size()
        << " entries in the model, " << file.size() << " in the file)";
    append_list(msg, "missing from the file", result.missing_keys);
    append_list(msg, "unexpected in the file", result.unexpected_keys);
    append_list(msg, "with a different shape", mismatched);
    throw ValueError(msg.str());
  }
  module.load_state_dict(file, strict);
  return result;
}

}  // namespace hearth::nn
