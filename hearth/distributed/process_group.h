// ProcessGroup: the collectives of data-parallel training, one object per
// group of processes (ranks), implemented by a backend: Gloo over TCP for CPU
// tensors (hearth/distributed/gloo/gloo_process_group.h), NCCL for CUDA tensors
// (hearth/backends/cuda/distributed/). Backends register a factory by name and
// by the device kinds they serve (hearth/distributed/process_group_registry.h),
// so a build without NCCL simply does not offer "nccl".
//
// Every collective is called by every rank in the same order with tensors of
// the same shapes and dtype; it works in place and returns a Work to wait on.
// Lists of tensors are coalesced into one flat buffer per call. The Gloo
// backend runs collectives on a thread of its own (wait() blocks until done);
// the NCCL backend enqueues them on the device's stream (wait() orders the
// host only when it must). A peer that fails or hangs makes wait() throw
// DistError within the group's timeout, naming this rank and the collective.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "hearth/core/device.h"
#include "hearth/core/errors.h"
#include "hearth/core/tensor.h"

namespace hearth::distributed {

class TcpStore;

// A collective failed: a peer exited, hung past the timeout, or the transport broke.
class DistError : public Error {
 public:
  using Error::Error;
};

enum class ReduceOp { sum, avg, max, min };
const char* reduce_op_name(ReduceOp op);

class Work {
 public:
  virtual ~Work() = default;
  // Blocks until the collective's result may be used by this rank's next ops;
  // rethrows its failure as DistError.
  virtual void wait() = 0;
};
using WorkPtr = std::shared_ptr<Work>;

class ProcessGroup {
 public:
  ProcessGroup(int rank, int world_size) : rank_(rank), world_size_(world_size) {}
  virtual ~ProcessGroup() = default;
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const { return rank_; }
  int world_size() const { return world_size_; }
  virtual std::string backend() const = 0;

  // Each tensor becomes the reduction of that tensor over all ranks.
  virtual WorkPtr all_reduce(const std::vector<Tensor>& tensors, ReduceOp op) = 0;
  // Each tensor becomes root's.
  virtual WorkPtr broadcast(const std::vector<Tensor>& tensors, int root) = 0;
  // output (contiguous, world_size * input.numel() elements) receives every
  // rank's input, rank 0's first.
  virtual WorkPtr all_gather(const Tensor& input, const Tensor& output) = 0;
  // input (world_size * output.numel() elements): output receives the
  // reduction over ranks of the input's rank-th chunk.
  virtual WorkPtr reduce_scatter(const Tensor& input, const Tensor& output, ReduceOp op) = 0;
  // Returns once every rank reached it.
  virtual WorkPtr barrier() = 0;

  // The rendezvous store the group was made with (kept alive with it, since
  // rank 0 serves it to the others).
  const std::shared_ptr<TcpStore>& store() const { return store_; }
  void set_store(std::shared_ptr<TcpStore> store) { store_ = std::move(store); }

 private:
  int rank_, world_size_;
  std::shared_ptr<TcpStore> store_;
};
using ProcessGroupPtr = std::shared_ptr<ProcessGroup>;

struct ProcessGroupOptions {
  int rank = 0;
  int world_size = 1;
  Device device;  // where the group's tensors live (a device of a kind the backend serves)
  std::chrono::milliseconds timeout = std::chrono::minutes(30);
  // The address rank 0 is reached at (Gloo advertises a loopback address
  // when it is a loopback one, this host's name otherwise).
  std::string master_addr = "127.0.0.1";
};

// Checks shared by the backends: contiguous tensors of one dtype and device.
void check_collective_tensors(const std::string& what, const std::vector<Tensor>& tensors);

}  // namespace hearth::distributed
