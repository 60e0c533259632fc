#include "hearth/backends/cuda/distributed/nccl_process_group.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "hearth/backends/cuda/context.h"
#include "hearth/backends/cuda/cuda_check.h"
#include "hearth/distributed/flat_buffer.h"
#include "hearth/distributed/process_group_registry.h"
#include "hearth/distributed/tcp_store.h"

namespace hearth::distributed {
namespace {

#define HEARTH_NCCL_CHECK(expr, comm)                                                                    \
  do {                                                                                                   \
    ncclResult_t st_ = (expr);                                                                           \
    if (st_ != ncclSuccess) {                                                                            \
      const char* last_ = (comm) != nullptr ? ncclGetLastError(comm) : "";                               \
      HEARTH_THROW(DistError, "[nccl] rank ", rank(), ": ", #expr, " failed: ", ncclGetErrorString(st_), \
                   (last_ && *last_ ? std::string(" (") + last_ + ")" : std::string()));                 \
    }                                                                                                    \
  } while (0)

bool is_cuda(const Device& d) { return !d.is_cpu() && device_kind_name(d.kind) == "cuda"; }

ncclDataType_t nccl_type(DType t) {
  switch (t) {
    case DType::float32:
      return ncclFloat32;
    case DType::float64:
      return ncclFloat64;
    case DType::float16:
      return ncclFloat16;
    case DType::bfloat16:
      return ncclBfloat16;
    case DType::int32:
      return ncclInt32;
    case DType::int64:
      return ncclInt64;
    case DType::uint8:
      return ncclUint8;
    default:
      HEARTH_THROW(TypeError, "[nccl] tensors of dtype ", dtype_name(t), " cannot be communicated");
  }
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum:
      return ncclSum;
    case ReduceOp::avg:
      return ncclAvg;
    case ReduceOp::max:
      return ncclMax;
    case ReduceOp::min:
      return ncclMin;
  }
  return ncclSum;
}

// Collectives run on a communication stream of their own, after the compute
// stream's work queued so far, so that backward keeps computing while a
// gradient bucket is reduced (and while the collective waits for slower
// ranks). wait() makes the compute stream wait for the collective, without
// blocking the host; the tensors stay referenced until then, so their memory
// is not handed to another compute-stream tensor while NCCL still uses it.
// A Work dropped without wait() waits when destroyed.
// Reused CUDA events, shared by the group and its Work objects (a Work may
// outlive its group).
class EventPool {
 public:
  EventPool() = default;
  EventPool(const EventPool&) = delete;
  EventPool& operator=(const EventPool&) = delete;
  ~EventPool() {
    for (cudaEvent_t e : free_) cudaEventDestroy(e);
  }
  cudaEvent_t take() {
    std::lock_guard lock(mutex_);
    if (!free_.empty()) {
      cudaEvent_t e = free_.back();
      free_.pop_back();
      return e;
    }
    cudaEvent_t e = nullptr;
    HEARTH_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    return e;
  }
  void give_back(cudaEvent_t e) {
    std::lock_guard lock(mutex_);
    free_.push_back(e);
  }

 private:
  std::mutex mutex_;
  std::vector<cudaEvent_t> free_;
};

class NcclWork : public Work {
 public:
  NcclWork(cudaEvent_t done, cudaStream_t compute, std::vector<Tensor> keep, std::shared_ptr<EventPool> events)
      : done_(done), compute_(compute), keep_(std::move(keep)), events_(std::move(events)) {}
  ~NcclWork() override {
    wait_on_stream();
    events_->give_back(done_);
  }
  NcclWork(const NcclWork&) = delete;
  NcclWork& operator=(const NcclWork&) = delete;
  void wait() override { wait_on_stream(); }

 private:
  void wait_on_stream() {
    if (waited_) return;
    waited_ = true;
    cudaStreamWaitEvent(compute_, done_, 0);
    keep_.clear();  // frees now queue on the compute stream after the collective
  }
  cudaEvent_t done_;
  cudaStream_t compute_;
  std::vector<Tensor> keep_;
  std::shared_ptr<EventPool> events_;
  bool waited_ = false;
};

class NcclProcessGroup : public ProcessGroup {
 public:
  NcclProcessGroup(const std::shared_ptr<TcpStore>& store, const ProcessGroupOptions& o)
      : ProcessGroup(o.rank, o.world_size), timeout_(o.timeout) {
    HEARTH_CHECK(is_cuda(o.device), DeviceError, "[nccl] rank ", o.rank, ": the nccl backend needs a CUDA device, got ",
                 o.device.str(), "; use gloo for CPU tensors");
    // NVLink multicast stays off in every hearth process.
    ::setenv("NCCL_NVLS_ENABLE", "0", 1);
    device_ = o.device.index;
    compute_ = cuda::stream(device_);  // also makes the device current
    int least = 0, greatest = 0;
    HEARTH_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    HEARTH_CUDA_CHECK(cudaStreamCreateWithPriority(&stream_, cudaStreamNonBlocking, greatest));
    const int64_t id = store->add("nccl/groups/" + std::to_string(o.rank), 1);
    const std::string key = "nccl/" + std::to_string(id) + "/unique_id";
    ncclUniqueId uid{};
    if (o.rank == 0) {
      HEARTH_NCCL_CHECK(ncclGetUniqueId(&uid), nullptr);
      store->set(key, std::vector<char>(uid.internal, uid.internal + sizeof uid.internal));
    } else {
      std::vector<char> bytes = store->get(key);
      HEARTH_CHECK(bytes.size() == sizeof uid.internal, DistError, "[nccl] rank ", o.rank, ": the unique id in '", key,
                   "' has ", bytes.size(), " bytes, expected ", sizeof uid.internal);
      std::memcpy(uid.internal, bytes.data(), bytes.size());
    }
    // The monitor runs first: setting up the communicator blocks until every
    // rank has joined, and a rank that never does must not hang this one.
    heartbeat_ns_ = now_ns();
    monitor_ = std::thread([this] { monitor(); });
    try {
      HostCall guard(*this, "communicator setup (ncclCommInitRank)", 0);
      HEARTH_NCCL_CHECK(ncclCommInitRank(&comm_, o.world_size, uid, o.rank), comm_);
    } catch (...) {
      monitor_stop_.store(true);
      monitor_.join();
      cudaStreamDestroy(stream_);
      throw;
    }
    watchdog_ = std::thread([this] { watch(); });
  }

  ~NcclProcessGroup() override {
    // Finish what is queued while the watchdog still guards it.
    cudaSetDevice(device_);
    cudaStreamSynchronize(stream_);
    cudaStreamSynchronize(compute_);
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    watchdog_.join();
    monitor_stop_.store(true);
    monitor_.join();
    for (const Pending& p : pending_) cudaEventDestroy(p.event);
    for (cudaEvent_t e : free_events_) cudaEventDestroy(e);
    if (barrier_buffer_ != nullptr) cudaFree(barrier_buffer_);
    if (comm_ != nullptr) ncclCommDestroy(comm_);
    cudaStreamDestroy(stream_);
  }

  std::string backend() const override { return "nccl"; }

  WorkPtr all_reduce(const std::vector<Tensor>& tensors, ReduceOp op) override {
    check_collective_tensors("nccl all_reduce", tensors);
    check_device("all_reduce", tensors[0]);
    Tensor flat = tensors.size() == 1 ? tensors[0] : flatten_tensors(tensors);
    cuda::activate(device_);
    follow_compute_stream();
    HostCall guard(*this, "all_reduce", next_sequence());
    HEARTH_NCCL_CHECK(ncclAllReduce(flat.data_ptr(), flat.data_ptr(), static_cast<size_t>(flat.numel()),
                                    nccl_type(flat.dtype()), nccl_op(op), comm_, stream_),
                      comm_);
    track("all_reduce");
    return finish_in_place(flat, tensors);
  }

  WorkPtr broadcast(const std::vector<Tensor>& tensors, int root) override {
    check_collective_tensors("nccl broadcast", tensors);
    check_device("broadcast", tensors[0]);
    HEARTH_CHECK(root >= 0 && root < world_size(), ValueError, "[nccl] broadcast root ", root, " is outside [0, ",
                 world_size(), ")");
    Tensor flat = tensors.size() == 1 ? tensors[0] : flatten_tensors(tensors);
    cuda::activate(device_);
    follow_compute_stream();
    HostCall guard(*this, "broadcast", next_sequence());
    HEARTH_NCCL_CHECK(ncclBroadcast(flat.data_ptr(), flat.data_ptr(), static_cast<size_t>(flat.numel()),
                                    nccl_type(flat.dtype()), root, comm_, stream_),
                      comm_);
    track("broadcast");
    return finish_in_place(flat, tensors);
  }

  WorkPtr all_gather(const Tensor& input, const Tensor& output) override {
    check_collective_tensors("nccl all_gather", {input, output});
    check_device("all_gather", input);
    HEARTH_CHECK(output.numel() == input.numel() * world_size(), ShapeError, "[nccl] all_gather output has ",
                 output.numel(), " elements; expected world_size ", world_size(), " x input's ", input.numel());
    cuda::activate(device_);
    follow_compute_stream();
    HostCall guard(*this, "all_gather", next_sequence());
    HEARTH_NCCL_CHECK(ncclAllGather(input.data_ptr(), output.data_ptr(), static_cast<size_t>(input.numel()),
                                    nccl_type(input.dtype()), comm_, stream_),
                      comm_);
    track("all_gather");
    return make_work({input, output});
  }

  WorkPtr reduce_scatter(const Tensor& input, const Tensor& output, ReduceOp op) override {
    check_collective_tensors("nccl reduce_scatter", {input, output});
    check_device("reduce_scatter", input);
    HEARTH_CHECK(input.numel() == output.numel() * world_size(), ShapeError, "[nccl] reduce_scatter input has ",
                 input.numel(), " elements; expected world_size ", world_size(), " x output's ", output.numel());
    cuda::activate(device_);
    follow_compute_stream();
    HostCall guard(*this, "reduce_scatter", next_sequence());
    HEARTH_NCCL_CHECK(ncclReduceScatter(input.data_ptr(), output.data_ptr(), static_cast<size_t>(output.numel()),
                                        nccl_type(input.dtype()), nccl_op(op), comm_, stream_),
                      comm_);
    track("reduce_scatter");
    return make_work({input, output});
  }

  // A barrier is a host-side promise: a one-element all-reduce, then the host
  // waits for it (the watchdog ends a wait that never returns).
  WorkPtr barrier() override {
    cuda::activate(device_);
    follow_compute_stream();
    if (barrier_buffer_ == nullptr) HEARTH_CUDA_CHECK(cudaMalloc(&barrier_buffer_, sizeof(float)));
    {
      HostCall guard(*this, "barrier", next_sequence());
      HEARTH_NCCL_CHECK(ncclAllReduce(barrier_buffer_, barrier_buffer_, 1, ncclFloat32, ncclSum, comm_, stream_),
                        comm_);
    }
    track("barrier");
    HEARTH_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return make_work({});
  }

 private:
  // A call into NCCL can block on the host, not only on the device: NCCL sets
  // up its connections on the first collective of each kind, which waits for
  // every peer to take part. While such a call runs the watchdog has nothing
  // to watch, so the monitor times the call itself.
  class HostCall {
   public:
    HostCall(NcclProcessGroup& g, const char* name, uint64_t sequence) : g_(g) {
      g_.host_call_name_.store(name);
      g_.host_call_sequence_.store(sequence);
      g_.host_call_start_ns_.store(now_ns());
    }
    ~HostCall() { g_.host_call_start_ns_.store(0); }
    HostCall(const HostCall&) = delete;
    HostCall& operator=(const HostCall&) = delete;

   private:
    NcclProcessGroup& g_;
  };

  // The communication stream starts after everything the compute stream has
  // queued so far (the tensors' producers).
  void follow_compute_stream() {
    cudaEvent_t ready = events_->take();
    HEARTH_CUDA_CHECK(cudaEventRecord(ready, compute_));
    HEARTH_CUDA_CHECK(cudaStreamWaitEvent(stream_, ready, 0));
    events_->give_back(ready);  // the wait above holds this record, a later one does not change it
  }

  WorkPtr make_work(std::vector<Tensor> keep) {
    cudaEvent_t done = events_->take();
    HEARTH_CUDA_CHECK(cudaEventRecord(done, stream_));
    return std::make_shared<NcclWork>(done, compute_, std::move(keep), events_);
  }

  // In-place collectives: a single tensor is the buffer; several were
  // flattened, and the result is copied back into them on the compute stream
  // once it has waited for the collective.
  WorkPtr finish_in_place(const Tensor& flat, const std::vector<Tensor>& tensors) {
    WorkPtr work = make_work({flat});
    if (tensors.size() > 1) {
      work->wait();
      unflatten_into(flat, tensors);
    }
    return work;
  }

  uint64_t next_sequence() {
    std::lock_guard lock(mutex_);
    return sequence_ + 1;
  }

  struct Pending {
    cudaEvent_t event;
    uint64_t sequence;
    const char* name;
    std::chrono::steady_clock::time_point start;
  };

  void check_device(const char* what, const Tensor& t) const {
    HEARTH_CHECK(is_cuda(t.device()) && t.device().index == device_, DeviceError, "[nccl] rank ", rank(), ": ", what,
                 " needs tensors on cuda:", device_, " (this rank's device), got one on ", t.device().str());
  }

  // Records an event after the collective for the watchdog to watch.
  void track(const char* name) {
    std::lock_guard lock(mutex_);
    cudaEvent_t e = nullptr;
    if (!free_events_.empty()) {
      e = free_events_.back();
      free_events_.pop_back();
    } else {
      HEARTH_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    }
    HEARTH_CUDA_CHECK(cudaEventRecord(e, stream_));
    pending_.push_back({e, ++sequence_, name, std::chrono::steady_clock::now()});
    publish_oldest();
  }

  // What the monitor may read without the lock: the oldest collective in flight.
  void publish_oldest() {
    if (pending_.empty()) {
      oldest_sequence_.store(0);
      return;
    }
    oldest_name_.store(pending_.front().name);
    oldest_start_ns_.store(pending_.front().start.time_since_epoch().count());
    oldest_sequence_.store(pending_.front().sequence);
  }

  static int64_t now_ns() { return std::chrono::steady_clock::now().time_since_epoch().count(); }

  // The watchdog asks CUDA whether collectives finished; while another thread
  // of this process blocks inside the driver (a synchronous copy waiting on the
  // hung collective), that question itself can block. This thread uses no
  // CUDA: when the oldest collective is older than the timeout and the
  // watchdog has not come round for as long, it reports the collective and
  // ends the process (the launcher then stops the other ranks).
  void monitor() {
    const int64_t limit = std::chrono::duration_cast<std::chrono::nanoseconds>(timeout_).count();
    while (!monitor_stop_.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      const int64_t now = now_ns();
      const int64_t host_start = host_call_start_ns_.load();
      if (host_start != 0 && now - host_start > limit) {
        const uint64_t n = host_call_sequence_.load();
        std::fprintf(stderr,
                     "[nccl] rank %d of %d: %s%s did not finish within %lld s (blocked in NCCL on the host, waiting "
                     "for the other ranks to take part). Exiting: another rank probably exited or hangs; see its "
                     "output.\n",
                     rank(), world_size(), host_call_name_.load(),
                     n == 0 ? "" : (" (collective #" + std::to_string(n) + ")").c_str(),
                     static_cast<long long>(std::chrono::duration_cast<std::chrono::seconds>(timeout_).count()));
        std::fflush(stderr);
        std::_Exit(1);
      }
      const uint64_t seq = oldest_sequence_.load();
      if (seq == 0 || now - heartbeat_ns_.load() <= limit / 2 || now - oldest_start_ns_.load() <= limit) continue;
      std::fprintf(stderr,
                   "[nccl] rank %d of %d: %s (collective #%llu) did not finish within %lld s (the watchdog is stuck "
                   "in the CUDA driver). Exiting: another rank probably exited or hangs; see its output.\n",
                   rank(), world_size(), oldest_name_.load(), static_cast<unsigned long long>(seq),
                   static_cast<long long>(std::chrono::duration_cast<std::chrono::seconds>(timeout_).count()));
      std::fflush(stderr);
      std::_Exit(1);
    }
  }

  [[noreturn]] void fail(const std::string& why) {
    std::fprintf(stderr,
                 "[nccl] rank %d of %d: %s. Aborting the communicator and exiting: another rank probably exited "
                 "or hangs; see its output.\n",
                 rank(), world_size(), why.c_str());
    std::fflush(stderr);
    ncclCommAbort(comm_);
    std::_Exit(1);
  }

  void watch() {
    cudaSetDevice(device_);
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      wake_.wait_for(lock, std::chrono::milliseconds(100));
      heartbeat_ns_.store(now_ns());
      while (!pending_.empty()) {
        Pending& p = pending_.front();
        cudaError_t q = cudaEventQuery(p.event);
        if (q == cudaSuccess) {
          free_events_.push_back(p.event);
          pending_.pop_front();
          publish_oldest();
          continue;
        }
        if (q != cudaErrorNotReady) {
          fail(std::string(p.name) + " (collective #" + std::to_string(p.sequence) +
               ") failed on the device: " + cudaGetErrorString(q));
        }
        const auto waited = std::chrono::steady_clock::now() - p.start;
        if (waited > timeout_) {
          fail(std::string(p.name) + " (collective #" + std::to_string(p.sequence) + ") did not finish within " +
               std::to_string(std::chrono::duration_cast<std::chrono::seconds>(timeout_).count()) + " s");
        }
        break;  // collectives complete in order: the rest are younger
      }
      ncclResult_t async = ncclSuccess;
      if (ncclCommGetAsyncError(comm_, &async) == ncclSuccess && async != ncclSuccess && async != ncclInProgress) {
        fail(std::string("NCCL reported an asynchronous error: ") + ncclGetErrorString(async) + " (" +
             ncclGetLastError(comm_) + ")");
      }
    }
  }

  ncclComm_t comm_ = nullptr;
  int device_ = 0;
  cudaStream_t stream_ = nullptr;   // the communication stream, owned
  cudaStream_t compute_ = nullptr;  // the device's compute stream, hearth's
  std::chrono::milliseconds timeout_;
  std::shared_ptr<EventPool> events_ = std::make_shared<EventPool>();
  void* barrier_buffer_ = nullptr;

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Pending> pending_;
  std::vector<cudaEvent_t> free_events_;
  uint64_t sequence_ = 0;
  bool stopping_ = false;
  std::thread watchdog_;

  // For the CUDA-free monitor thread.
  std::atomic<int64_t> heartbeat_ns_{0};
  std::atomic<uint64_t> oldest_sequence_{0};  // 0: nothing in flight
  std::atomic<const char*> oldest_name_{""};
  std::atomic<int64_t> oldest_start_ns_{0};
  std::atomic<bool> monitor_stop_{false};
  std::atomic<const char*> host_call_name_{""};
  std::atomic<uint64_t> host_call_sequence_{0};  // 0: not a collective
  std::atomic<int64_t> host_call_start_ns_{0};   // 0: no call into NCCL in progress
  std::thread monitor_;
};

const bool registered = [] {
  register_process_group_backend("nccl", {register_device_kind("cuda")}, new_nccl_process_group);
  return true;
}();

}  // namespace

ProcessGroupPtr new_nccl_process_group(const std::shared_ptr<TcpStore>& store, const ProcessGroupOptions& options) {
  (void)registered;
  return std::make_shared<NcclProcessGroup>(store, options);
}

}  // namespace hearth::distributed
