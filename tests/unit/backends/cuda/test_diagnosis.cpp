// Why CUDA cannot be used (hearth/backends/cuda/diagnosis.h): every message,
// in every build, with or without a GPU or the CUDA toolkit.
#include <gtest/gtest.h>

#include "hearth/backends/cuda/diagnosis.h"
#include "hearth/core/device_runtime.h"

namespace hearth::cuda {
namespace {

std::string message(CudaProblem problem, CudaProbe p = {}) {
  p.problem = problem;
  return describe_cuda_problem(p);
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(CudaDiagnosis, VisibleDevicesThatSelectNothing) {
  for (const char* hidden : {"", " ", "-1", "none", "NoDevFiles", "-1,0", "abc"})
    EXPECT_TRUE(cuda_visible_devices_hides_all(hidden)) << "'" << hidden << "'";
  for (const char* shown : {"0", "1,0", " 2 ,3", "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6", "MIG-1234"})
    EXPECT_FALSE(cuda_visible_devices_hides_all(shown)) << "'" << shown << "'";
}

TEST(CudaDiagnosis, OneCausePerCaseEachWithWhatToDo) {
  EXPECT_EQ(message(CudaProblem::none), "");
  std::string built = message(CudaProblem::built_without_cuda);
  EXPECT_TRUE(has(built, "built without CUDA")) << built;
  EXPECT_TRUE(has(built, "Rebuild")) << built;

  CudaProbe hidden;
  hidden.visible_devices = "";
  std::string h = message(CudaProblem::devices_hidden, hidden);
  EXPECT_TRUE(has(h, "CUDA_VISIBLE_DEVICES='' hides every GPU")) << h;
  EXPECT_TRUE(has(h, "Unset it")) << h;

  CudaProbe missing;
  missing.driver_library = "/nowhere/libcuda.so.1";
  missing.error_text = "/nowhere/libcuda.so.1: cannot open shared object file";
  std::string d = message(CudaProblem::driver_not_loaded, missing);
  EXPECT_TRUE(has(d, "NVIDIA driver library (/nowhere/libcuda.so.1) could not be loaded (/nowhere")) << d;
  EXPECT_TRUE(has(d, "Install the driver")) << d;

  CudaProbe old;
  old.driver_version = 11040;
  old.runtime_version = 12060;
  std::string o = message(CudaProblem::driver_too_old, old);
  EXPECT_TRUE(has(o, "supports CUDA 11.4, older than the CUDA runtime 12.6")) << o;
  EXPECT_TRUE(has(o, "Update the NVIDIA driver")) << o;

  std::string none = message(CudaProblem::no_device, old);
  EXPECT_TRUE(has(none, "found no CUDA device")) << none;
  EXPECT_TRUE(has(none, "nvidia-smi")) << none;

  std::string prohibited = message(CudaProblem::compute_prohibited);
  EXPECT_TRUE(has(prohibited, "prohibited compute mode")) << prohibited;
  EXPECT_TRUE(has(prohibited, "nvidia-smi -c DEFAULT")) << prohibited;

  EXPECT_TRUE(has(message(CudaProblem::devices_busy), "exclusive compute mode"));

  CudaProbe other;
  other.error_text = "unknown error";
  EXPECT_TRUE(has(message(CudaProblem::other, other), "(unknown error)"));
}

TEST(CudaDiagnosis, VersionsReadAsPeopleWriteThem) {
  EXPECT_EQ(cuda_version_string(12040), "12.4");
  EXPECT_EQ(cuda_version_string(13000), "13.0");
  EXPECT_EQ(cuda_version_string(0), "unknown");
}

#if !HEARTH_TEST_CUDA_BUILT
// A CPU-only build says so, and how to get a GPU build (the generic stub
// registers the kind with the reason cmake/cuda.cmake gave: no toolkit found,
// or CUDA turned off).
TEST(CudaDiagnosis, ACpuOnlyBuildSaysItWasBuiltWithoutCuda) {
  DeviceRuntime& rt = device_runtime(Device::parse("cuda").kind);
  EXPECT_FALSE(rt.is_available());
  const std::string reason = rt.unavailable_reason();
  EXPECT_NE(reason.find("hearth was built without CUDA"), std::string::npos) << reason;
  EXPECT_NE(reason.find("-DHEARTH_CUDA=ON"), std::string::npos) << reason;
  EXPECT_NE(reason.find("nvcc"), std::string::npos) << reason;
}
#endif

}  // namespace
}  // namespace hearth::cuda
