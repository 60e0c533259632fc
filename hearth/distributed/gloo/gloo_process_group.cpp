#include "hearth/distributed/gloo/gloo_process_group.h"

#include <unistd.h>

#include <condition_variable>
#include <cstring>
#include <deque>
#include <future>
#include <mutex>
#include <sstream>
#include <thread>

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>

#include "hearth/autograd/grad_mode.h"
#include "hearth/core/env.h"
#include "hearth/core/half.h"
#include "hearth/distributed/flat_buffer.h"
#include "hearth/distributed/process_group_registry.h"
#include "hearth/distributed/tcp_store.h"

namespace hearth::distributed {
namespace {

using ReduceFn = std::function<void(void*, const void*, const void*, size_t)>;

// Gloo reads its addresses from a gloo::rendezvous::Store; ours serves them,
// under a prefix of the group's own.
class StoreAdapter : public gloo::rendezvous::Store {
 public:
  StoreAdapter(std::shared_ptr<TcpStore> store, std::string prefix, std::chrono::milliseconds timeout)
      : store_(std::move(store)), prefix_(std::move(prefix)), timeout_(timeout) {}
  void set(const std::string& key, const std::vector<char>& data) override { store_->set(prefix_ + key, data); }
  std::vector<char> get(const std::string& key) override { return store_->get(prefix_ + key, timeout_); }
  void wait(const std::vector<std::string>& keys) override { wait(keys, timeout_); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
    std::vector<std::string> full;
    for (const std::string& k : keys) full.push_back(prefix_ + k);
    store_->wait(full, timeout);
  }

 private:
  std::shared_ptr<TcpStore> store_;
  std::string prefix_;
  std::chrono::milliseconds timeout_;
};

// Elementwise reductions for the 16-bit floats, computed in float.
template <typename T, typename F>
ReduceFn half_reduce(F f) {
  return [f](void* c, const void* a, const void* b, size_t n) {
    auto* out = static_cast<T*>(c);
    const auto* x = static_cast<const T*>(a);
    const auto* y = static_cast<const T*>(b);
    for (size_t i = 0; i < n; ++i) out[i] = T(f(static_cast<float>(x[i]), static_cast<float>(y[i])));
  };
}

template <typename T>
ReduceFn native_reduce(ReduceOp op) {
  switch (op) {
    case ReduceOp::max:
      return [](void* c, const void* a, const void* b, size_t n) { gloo::max<T>(c, a, b, n); };
    case ReduceOp::min:
      return [](void* c, const void* a, const void* b, size_t n) { gloo::min<T>(c, a, b, n); };
    default:
      return [](void* c, const void* a, const void* b, size_t n) { gloo::sum<T>(c, a, b, n); };
  }
}

template <typename T>
ReduceFn converted_reduce(ReduceOp op) {
  switch (op) {
    case ReduceOp::max:
      return half_reduce<T>([](float x, float y) { return x > y ? x : y; });
    case ReduceOp::min:
      return half_reduce<T>([](float x, float y) { return x < y ? x : y; });
    default:
      return half_reduce<T>([](float x, float y) { return x + y; });
  }
}

ReduceFn reduce_function(DType dtype, ReduceOp op) {
  switch (dtype) {
    case DType::float32:
      return native_reduce<float>(op);
    case DType::float64:
      return native_reduce<double>(op);
    case DType::int32:
      return native_reduce<int32_t>(op);
    case DType::int64:
      return native_reduce<int64_t>(op);
    case DType::uint8:
      return native_reduce<uint8_t>(op);
    case DType::float16:
      return converted_reduce<Half>(op);
    case DType::bfloat16:
      return converted_reduce<BFloat16>(op);
    default:
      HEARTH_THROW(TypeError, "[gloo] cannot reduce tensors of dtype ", dtype_name(dtype));
  }
}

// Divides in place by the world size (Gloo has no average: sum, then scale).
void divide(void* data, DType dtype, size_t n, int world) {
  auto scale = [&](auto* p) {
    using T = std::remove_pointer_t<decltype(p)>;
    for (size_t i = 0; i < n; ++i) p[i] = T(static_cast<float>(p[i]) / static_cast<float>(world));
  };
  switch (dtype) {
    case DType::float32: {
      auto* p = static_cast<float*>(data);
      const float inv = 1.0f / static_cast<float>(world);
      for (size_t i = 0; i < n; ++i) p[i] *= inv;
      break;
    }
    case DType::float64: {
      auto* p = static_cast<double*>(data);
      for (size_t i = 0; i < n; ++i) p[i] /= world;
      break;
    }
    case DType::float16:
      scale(static_cast<Half*>(data));
      break;
    case DType::bfloat16:
      scale(static_cast<BFloat16*>(data));
      break;
    default:
      HEARTH_THROW(TypeError, "[gloo] avg needs floating tensors, got ", dtype_name(dtype));
  }
}

// Gloo's typed buffer setters only use sizeof(T): any type of the right width does.
template <size_t Bytes>
struct Elem {
  char bytes[Bytes];
};

// A collective handed to the group's thread; wait() then copies results back
// on the caller's thread (the only one that touches hearth tensors).
class GlooWork : public Work {
 public:
  GlooWork(std::shared_future<void> done, std::function<void()> finish)
      : done_(std::move(done)), finish_(std::move(finish)) {}
  void wait() override {
    if (waited_) return;
    waited_ = true;
    if (done_.valid()) done_.get();
    if (finish_) finish_();
  }

 private:
  std::shared_future<void> done_;
  std::function<void()> finish_;
  bool waited_ = false;
};

class GlooProcessGroup : public ProcessGroup {
 public:
  GlooProcessGroup(const std::shared_ptr<TcpStore>& store, const ProcessGroupOptions& o)
      : ProcessGroup(o.rank, o.world_size), timeout_(o.timeout) {
    // Each group gets keys of its own, so groups made one after another never
    // read a previous group's addresses.
    const int64_t id = store->add("gloo/groups/" + std::to_string(o.rank), 1);
    StoreAdapter adapter(store, "gloo/" + std::to_string(id) + "/", o.timeout);
    gloo::transport::tcp::attr attr;
    std::string iface = outside_env("GLOO_SOCKET_IFNAME");
    if (!iface.empty()) {
      attr.iface = iface;
    } else {
      attr.hostname = gloo_hostname(o.master_addr);
    }
    try {
      auto device = gloo::transport::tcp::CreateDevice(attr);
      auto context = std::make_shared<gloo::rendezvous::Context>(o.rank, o.world_size);
      context->setTimeout(o.timeout);
      context->connectFullMesh(adapter, device);
      context_ = context;
    } catch (const Error&) {
      throw;  // the store's own timeout already names the rank and the key
    } catch (const std::exception& e) {
      HEARTH_THROW(DistError, "[gloo] rank ", o.rank, " could not connect to the other ", o.world_size - 1,
                   " ranks: ", e.what());
    }
    worker_ = std::thread([this] { run(); });
  }

  ~GlooProcessGroup() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    worker_.join();
  }

  std::string backend() const override { return "gloo"; }

  WorkPtr all_reduce(const std::vector<Tensor>& tensors, ReduceOp op) override {
    check_collective_tensors("gloo all_reduce", tensors);
    check_cpu("all_reduce", tensors[0]);
    Tensor flat = tensors.size() == 1 ? tensors[0] : flatten_tensors(tensors);
    const DType dtype = flat.dtype();
    ReduceFn fn = reduce_function(dtype, op);
    if (op == ReduceOp::avg) divide(nullptr, dtype, 0, 1);  // rejects integer avg now, not on the thread
    const int world = world_size();
    auto finish = tensors.size() == 1 ? std::function<void()>() : [flat, tensors] { unflatten_into(flat, tensors); };
    return submit(
        "all_reduce",
        [this, flat, fn, op, dtype, world](uint32_t tag) {
          gloo::AllreduceOptions opts(context_);
          with_bytes(flat.element_size(), [&](auto elem) {
            using E = decltype(elem);
            opts.setOutput(static_cast<E*>(flat.data_ptr()), static_cast<size_t>(flat.numel()));
          });
          opts.setReduceFunction(fn);
          opts.setTag(tag);
          opts.setTimeout(timeout_);
          gloo::allreduce(opts);
          if (op == ReduceOp::avg) divide(flat.data_ptr(), dtype, static_cast<size_t>(flat.numel()), world);
        },
        std::move(finish));
  }

  WorkPtr broadcast(const std::vector<Tensor>& tensors, int root) override {
    check_collective_tensors("gloo broadcast", tensors);
    check_cpu("broadcast", tensors[0]);
    HEARTH_CHECK(root >= 0 && root < world_size(), ValueError, "[gloo] broadcast root ", root, " is outside [0, ",
                 world_size(), ")");
    Tensor flat = tensors.size() == 1 ? tensors[0] : flatten_tensors(tensors);
    auto finish = tensors.size() == 1 ? std::function<void()>() : [flat, tensors] { unflatten_into(flat, tensors); };
    return submit(
        "broadcast",
        [this, flat, root](uint32_t tag) {
          gloo::BroadcastOptions opts(context_);
          with_bytes(flat.element_size(), [&](auto elem) {
            using E = decltype(elem);
            opts.setOutput(static_cast<E*>(flat.data_ptr()), static_cast<size_t>(flat.numel()));
          });
          opts.setRoot(root);
          opts.setTag(tag);
          opts.setTimeout(timeout_);
          gloo::broadcast(opts);
        },
        std::move(finish));
  }

  WorkPtr all_gather(const Tensor& input, const Tensor& output) override {
    check_collective_tensors("gloo all_gather", {input, output});
    check_cpu("all_gather", input);
    HEARTH_CHECK(output.numel() == input.numel() * world_size(), ShapeError, "[gloo] all_gather output has ",
                 output.numel(), " elements; expected world_size ", world_size(), " x input's ", input.numel());
    return submit(
        "all_gather",
        [this, input, output](uint32_t tag) {
          gloo::AllgatherOptions opts(context_);
          with_bytes(input.element_size(), [&](auto elem) {
            using E = decltype(elem);
            opts.setInput(static_cast<E*>(input.data_ptr()), static_cast<size_t>(input.numel()));
            opts.setOutput(static_cast<E*>(output.data_ptr()), static_cast<size_t>(output.numel()));
          });
          opts.setTag(tag);
          opts.setTimeout(timeout_);
          gloo::allgather(opts);
        },
        nullptr);
  }

  // Gloo 0.5 offers reduce-scatter only through its older typed classes; an
  // all-reduce of a copy of the input gives the same result for twice the
  // traffic, which the CPU backend (small models, one host) can afford.
  WorkPtr reduce_scatter(const Tensor& input, const Tensor& output, ReduceOp op) override {
    check_collective_tensors("gloo reduce_scatter", {input, output});
    check_cpu("reduce_scatter", input);
    HEARTH_CHECK(input.numel() == output.numel() * world_size(), ShapeError, "[gloo] reduce_scatter input has ",
                 input.numel(), " elements; expected world_size ", world_size(), " x output's ", output.numel());
    Tensor scratch;
    {
      NoGradGuard no_grad;
      scratch = input.reshape({input.numel()}).clone();
    }
    WorkPtr reduced = all_reduce({scratch}, op);
    const int64_t n = output.numel();
    const int64_t start = rank() * n;
    return std::make_shared<GlooWork>(std::shared_future<void>(), [reduced, scratch, output, start, n] {
      reduced->wait();
      NoGradGuard no_grad;
      output.copy_(scratch.narrow(0, start, n).view(output.shape()));
    });
  }

  WorkPtr barrier() override {
    return submit(
        "barrier",
        [this](uint32_t tag) {
          gloo::BarrierOptions opts(context_);
          opts.setTag(tag);
          opts.setTimeout(timeout_);
          gloo::barrier(opts);
        },
        nullptr);
  }

 private:
  struct Task {
    std::string name;
    uint64_t sequence;
    std::function<void(uint32_t)> run;
    std::promise<void> done;
  };

  template <typename F>
  static void with_bytes(size_t bytes, F&& f) {
    switch (bytes) {
      case 1:
        f(Elem<1>{});
        break;
      case 2:
        f(Elem<2>{});
        break;
      case 4:
        f(Elem<4>{});
        break;
      case 8:
        f(Elem<8>{});
        break;
      default:
        HEARTH_THROW(TypeError, "[gloo] elements of ", bytes, " bytes are not supported");
    }
  }

  void check_cpu(const char* what, const Tensor& t) const {
    if (t.device().is_cpu()) return;
    // The way out: the backend registered for the tensor's device kind.
    const DeviceKind kind = t.device().kind;
    std::string way_out;
    try {
      way_out = "; use the " + process_group_backend_for(kind) + " backend for " + device_kind_name(kind) + " tensors";
    } catch (const ValueError&) {
      way_out = "; this build has no process group backend for " + device_kind_name(kind) + " tensors";
    }
    HEARTH_THROW(DeviceError, "[gloo] ", what, " needs CPU tensors, got one on ", t.device().str(), way_out);
  }

  WorkPtr submit(const char* name, std::function<void(uint32_t)> run, std::function<void()> finish) {
    auto task = std::make_unique<Task>();
    task->name = name;
    task->run = std::move(run);
    std::shared_future<void> done = task->done.get_future().share();
    {
      std::lock_guard lock(mutex_);
      task->sequence = ++sequence_;
      queue_.push_back(std::move(task));
    }
    wake_.notify_one();
    return std::make_shared<GlooWork>(std::move(done), std::move(finish));
  }

  void run() {
    for (;;) {
      std::unique_ptr<Task> task;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;
        task = std::move(queue_.front());
        queue_.pop_front();
      }
      if (failed_.empty()) {
        try {
          task->run(static_cast<uint32_t>(task->sequence));
          task->done.set_value();
          continue;
        } catch (const std::exception& e) {
          std::ostringstream os;
          os << "[gloo] rank " << rank() << " of " << world_size() << ": " << task->name << " (collective #"
             << task->sequence << ") failed: " << e.what()
             << ". Another rank exited, hung for longer than the timeout (" << timeout_.count() / 1000.0
             << " s), or called a different collective; see the other ranks' output.";
          failed_ = os.str();
        }
      }
      // After a failure the group is unusable: every later collective fails too.
      task->done.set_exception(std::make_exception_ptr(DistError(failed_)));
    }
  }

  std::shared_ptr<gloo::Context> context_;
  std::chrono::milliseconds timeout_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::unique_ptr<Task>> queue_;
  uint64_t sequence_ = 0;
  bool stopping_ = false;
  std::string failed_;  // the first failure, touched by the worker thread only
  std::thread worker_;
};

bool is_loopback(const std::string& addr) { return addr == "localhost" || addr == "::1" || addr.rfind("127.", 0) == 0; }

const bool registered = [] {
  register_process_group_backend("gloo", {kCpu}, new_gloo_process_group);
  return true;
}();

}  // namespace

std::string gloo_hostname(const std::string& master_addr) {
  if (is_loopback(master_addr)) return "127.0.0.1";
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "127.0.0.1";
  return name;
}

ProcessGroupPtr new_gloo_process_group(const std::shared_ptr<TcpStore>& store, const ProcessGroupOptions& options) {
  (void)registered;
  return std::make_shared<GlooProcessGroup>(store, options);
}

}  // namespace hearth::distributed
