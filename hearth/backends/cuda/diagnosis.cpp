#include "hearth/backends/cuda/diagnosis.h"

#include <cctype>

namespace hearth::cuda {
namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

// A device index ("0"), a GPU or MIG UUID ("GPU-8932f937-...", "MIG-..."):
// what CUDA accepts as an entry of CUDA_VISIBLE_DEVICES.
bool is_device_entry(const std::string& entry) {
  if (entry.empty()) return false;
  bool digits = true;
  for (char c : entry) digits = digits && std::isdigit(static_cast<unsigned char>(c));
  if (digits) return true;
  return entry.rfind("GPU-", 0) == 0 || entry.rfind("MIG-", 0) == 0;
}

}  // namespace

bool cuda_visible_devices_hides_all(const std::string& value) {
  std::string first = trim(value.substr(0, value.find(',')));
  return !is_device_entry(first);
}

std::string cuda_version_string(int v) {
  if (v <= 0) return "unknown";
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::string describe_cuda_problem(const CudaProbe& p) {
  switch (p.problem) {
    case CudaProblem::none:
      return {};
    case CudaProblem::built_without_cuda:
      return "hearth was built without CUDA (the CUDA toolkit was not found at configure time). Rebuild on a "
             "machine with the CUDA toolkit (nvcc), or configure with -DHEARTH_CUDA=ON to make its absence an error.";
    case CudaProblem::devices_hidden:
      return "CUDA_VISIBLE_DEVICES='" + p.visible_devices +
             "' hides every GPU. Unset it, or list the GPUs to use (CUDA_VISIBLE_DEVICES=0,1).";
    case CudaProblem::driver_not_loaded:
      return "the NVIDIA driver library (" + (p.driver_library.empty() ? "libcuda.so.1" : p.driver_library) +
             ") could not be loaded" + (p.error_text.empty() ? "" : " (" + p.error_text + ")") +
             ": no NVIDIA driver is installed on this machine, or it is not on the library path. Install the "
             "driver, check that `nvidia-smi` works, and in a container pass the GPU in (docker run --gpus all).";
    case CudaProblem::driver_too_old:
      return "the NVIDIA driver supports CUDA " + cuda_version_string(p.driver_version) +
             ", older than the CUDA runtime " + cuda_version_string(p.runtime_version) +
             " hearth was built with. Update the NVIDIA driver, or rebuild hearth with a CUDA toolkit no newer "
             "than " +
             cuda_version_string(p.driver_version) + ".";
    case CudaProblem::no_device:
      return "the NVIDIA driver (CUDA " + cuda_version_string(p.driver_version) +
             ") found no CUDA device (CUDA_VISIBLE_DEVICES=" + p.visible_devices +
             "). Check `nvidia-smi`, and in a container that the GPU is passed in (docker run --gpus all).";
    case CudaProblem::compute_prohibited:
      return "every CUDA device is in the prohibited compute mode, which forbids any process from using it. "
             "An administrator can allow use with `nvidia-smi -c DEFAULT`.";
    case CudaProblem::devices_busy:
      return "every CUDA device is in an exclusive compute mode and already used by another process. Wait for "
             "it to finish (`nvidia-smi` lists it), pick another GPU, or ask for `nvidia-smi -c DEFAULT`.";
    case CudaProblem::other:
      break;
  }
  return "the CUDA driver could not be initialised (" + p.error_text +
         "). Check that the NVIDIA driver is installed and `nvidia-smi` works.";
}

}  // namespace hearth::cuda
