#include <array>
#include <atomic>
#include <cstdio>
#include <vector>

#include "hearth/backends/cuda/allocator.h"
#include "hearth/backends/cuda/context.h"
#include "hearth/backends/cuda/cuda_check.h"
#include "hearth/backends/cuda/step_graph.h"
#include "hearth/core/errors.h"
#include "hearth/core/generator.h"

namespace hearth::cuda {
namespace {

constexpr int kMaxDevices = 64;

struct GraphState {
  std::atomic<bool> watching{false};
  std::atomic<size_t> round_trips{0};
  // Non-null only while a step is being recorded on the device.
  std::atomic<const uint64_t*> recording_shift{nullptr};
  // The word replays set; made once, since cudaMalloc cannot be recorded.
  uint64_t* shift_word = nullptr;
};

std::array<GraphState, kMaxDevices>& states() {
  static std::array<GraphState, kMaxDevices> s;
  return s;
}

__global__ void set_word(uint64_t* word, uint64_t value) { *word = value; }

class CudaStepGraph final : public DeviceRuntime::StepGraph {
 public:
  CudaStepGraph(int device, cudaGraphExec_t exec, uint64_t first_draw, uint64_t draws, uint64_t* shift)
      : device_(device), exec_(exec), first_draw_(first_draw), draws_(draws), shift_(shift) {}
  ~CudaStepGraph() override {
    context(device_);
    cudaStreamSynchronize(stream(device_));
    cudaGraphExecDestroy(exec_);
    // The graph's memory stays reserved for relaunches until trimmed.
    cudaDeviceGraphMemTrim(device_);
  }
  CudaStepGraph(const CudaStepGraph&) = delete;
  CudaStepGraph& operator=(const CudaStepGraph&) = delete;

  void replay() override {
    context(device_);
    cudaStream_t s = stream(device_);
    if (draws_ > 0) {
      // This replay's random numbers: the counters the eager step would
      // reserve now, as a shift from the ones reserved while recording.
      const uint64_t now = default_generator().reserve(draws_);
      set_word<<<1, 1, 0, s>>>(shift_, now - first_draw_);
      HEARTH_CUDA_CHECK_LAUNCH();
    }
    HEARTH_CUDA_CHECK(cudaGraphLaunch(exec_, s));
  }

 private:
  int device_;
  cudaGraphExec_t exec_;
  uint64_t first_draw_, draws_;
  uint64_t* shift_;
};

std::string count(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

void note_host_round_trip(int device) {
  GraphState& g = states()[device];
  if (g.watching.load(std::memory_order_relaxed)) g.round_trips.fetch_add(1, std::memory_order_relaxed);
}

const uint64_t* philox_offset_shift(int device) {
  return states()[device].recording_shift.load(std::memory_order_relaxed);
}

std::string rehearse_step(int device, const std::function<void()>& step) {
  GraphState& g = states()[device];
  g.round_trips = 0;
  g.watching = true;
  begin_step_watch(device);
  try {
    step();
  } catch (...) {
    g.watching = false;
    end_step_watch(device);
    throw;
  }
  g.watching = false;
  const StepMemoryReport m = end_step_watch(device);
  std::vector<std::string> why;
  if (g.round_trips > 0)
    why.push_back("it copies between host and device or waits for the device (" +
                  count(g.round_trips, "time", "times") + ", e.g. a value read with .item())");
  if (m.freed_from_before > 0)
    why.push_back("it frees " + count(m.freed_from_before, "tensor", "tensors") +
                  " made before it (state replaced instead of updated in place)");
  if (m.outliving > 0) {
    char mib[32];
    std::snprintf(mib, sizeof mib, "%.1f MiB", static_cast<double>(m.outliving_bytes) / (1 << 20));
    why.push_back("it keeps " + count(m.outliving, "tensor", "tensors") + " (" + mib +
                  ") it made alive after it ends (state kept from the step)");
  }
  std::string out;
  for (const std::string& w : why) out += (out.empty() ? "" : "; ") + w;
  return out;
}

std::unique_ptr<DeviceRuntime::StepGraph> capture_step(int device, const std::function<void()>& step) {
  DeviceContext& ctx = context(device);
  GraphState& g = states()[device];
  if (!g.shift_word) {
    HEARTH_CUDA_CHECK(cudaMalloc(&g.shift_word, sizeof(uint64_t)));
    HEARTH_CUDA_CHECK(cudaMemsetAsync(g.shift_word, 0, sizeof(uint64_t), ctx.stream));
  }
  Generator& gen = default_generator();
  const uint64_t first_draw = gen.offset();
  begin_step_watch(device);
  g.watching = true;
  g.round_trips = 0;
  g.recording_shift = g.shift_word;
  set_recording(device, true);
  // Relaxed: calls that are not stream work (library set-up, attribute
  // queries) stay allowed on this thread; waits for the stream still fail the
  // recording, and the rehearsal has already ruled them out.
  HEARTH_CUDA_CHECK(cudaStreamBeginCapture(ctx.stream, cudaStreamCaptureModeRelaxed));
  std::string failure;
  try {
    step();
  } catch (const std::exception& e) {
    failure = e.what();
  }
  g.recording_shift = nullptr;
  g.watching = false;
  set_recording(device, false);
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(ctx.stream, &graph);
  const StepMemoryReport m = end_step_watch(device);
  (void)cudaGetLastError();
  // Recording ran no kernel and drew no number: the first replay draws what
  // the eager step would have drawn here.
  const uint64_t draws = gen.offset() - first_draw;
  gen.set_state(gen.seed(), first_draw);
  if (failure.empty() && ended != cudaSuccess) failure = cudaGetErrorString(ended);
  if (failure.empty() && (m.freed_from_before > 0 || m.outliving > 0 || g.round_trips > 0))
    failure = "the recorded step used memory or the host differently from its eager rehearsal";
  cudaGraphExec_t exec = nullptr;
  if (failure.empty()) {
    const cudaError_t made = cudaGraphInstantiate(&exec, graph, 0);
    if (made != cudaSuccess) {
      failure = std::string("instantiating the graph failed: ") + cudaGetErrorString(made);
      (void)cudaGetLastError();
    }
  }
  if (graph) cudaGraphDestroy(graph);
  if (!failure.empty())
    HEARTH_THROW(DeviceError, "[cuda] could not record the step as a CUDA graph on cuda:", device, ": ", failure);
  return std::make_unique<CudaStepGraph>(device, exec, first_draw, draws, g.shift_word);
}

}  // namespace hearth::cuda
