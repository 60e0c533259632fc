// Data-parallel gradient averaging, overlapped with backward (what PyTorch's
// DistributedDataParallel does). Parameters are grouped into buckets of about
// bucket_bytes, in reverse order of registration (backward produces the last
// layers' gradients first). A hook on each parameter's gradient accumulation
// (hearth/autograd/accumulate_grad.h) counts the bucket down; once a bucket's
// gradients are all there, and every earlier bucket was launched, its
// gradients are copied into one flat buffer and all-reduced (averaged)
// asynchronously while backward goes on. finish() launches what is left
// (parameters that got no gradient contribute zeros), waits for every bucket
// and points each .grad at its averaged slice.
//
//   GradientReducer reducer(group, params);
//   for (micro_batch i of the step) {
//     reducer.prepare_for_backward(/*sync=*/i == last);  // earlier ones accumulate locally
//     loss.backward();
//   }
//   reducer.finish();     // before clipping and the optimizer step
//
// Buckets launch in the same order on every rank, as collectives must.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "hearth/core/tensor.h"
#include "hearth/distributed/process_group.h"

namespace hearth::distributed {

inline constexpr size_t kDefaultBucketBytes = size_t{25} << 20;

class GradientReducer {
 public:
  GradientReducer(ProcessGroupPtr group, std::vector<Tensor> params, size_t bucket_bytes = kDefaultBucketBytes);
  ~GradientReducer();
  GradientReducer(const GradientReducer&) = delete;
  GradientReducer& operator=(const GradientReducer&) = delete;

  // sync: the coming backward completes this step's gradients, so buckets
  // launch as they fill; otherwise gradients only accumulate locally.
  void prepare_for_backward(bool sync);
  // Waits for every bucket; each parameter's .grad becomes the average over
  // ranks. Does nothing unless a sync backward was prepared.
  void finish();

  size_t num_buckets() const;
  // Parameter indices (into params) of each bucket, in launch order.
  std::vector<std::vector<size_t>> bucket_layout() const;
  // Buckets launched during the last sync backward, before finish() (for
  // checking that communication overlaps backward).
  size_t launched_during_backward() const;
  // Mean device time per sync step, since the last call, between the end of
  // backward and the moment every bucket's all-reduce had finished: the
  // communication backward did not hide. Measured with the device's timing
  // events once measure_exposed_communication(true) asked for them (off by
  // default: training steps make no events); 0 where the device has none,
  // e.g. the CPU. The reading waits for the events.
  void measure_exposed_communication(bool on);
  double exposed_communication_ms();

  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace hearth::distributed
