#include "hearth/backends/common/host_decode_pool.h"

#include <cstdlib>
#include <string>

#include "hearth/backends/common/common_switches.h"
#include "hearth/core/errors.h"

namespace hearth::backends {

HostDecodePool::HostDecodePool(size_t threads) {
  threads_.reserve(threads);
  for (size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { work(); });
}

HostDecodePool::~HostDecodePool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  has_work_.notify_all();
  for (std::thread& t : threads_) t.join();
}

std::shared_ptr<HostDecodePool::JobSet> HostDecodePool::start(size_t count, std::function<void(size_t)> job) {
  auto set = std::make_shared<JobSet>(count, std::move(job));
  if (count == 0 || threads_.empty()) return set;
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(set);
  }
  // As many threads as there are jobs, at most: the rest stay asleep.
  if (count >= threads_.size())
    has_work_.notify_all();
  else
    for (size_t i = 0; i < count; ++i) has_work_.notify_one();
  return set;
}

bool HostDecodePool::claim(JobSet& set, size_t* index) {
  if (set.next_ >= set.count_) return false;
  *index = set.next_++;
  return true;
}

void HostDecodePool::run(JobSet& set, size_t index) {
  std::exception_ptr error;
  try {
    set.job_(index);
  } catch (...) {
    error = std::current_exception();
  }
  std::lock_guard<std::mutex> lock(set.mu_);
  if (error && !set.error_) set.error_ = error;
  ++set.done_;
  set.done_changed_.notify_all();
}

void HostDecodePool::work() {
  for (;;) {
    std::shared_ptr<JobSet> set;
    size_t index = 0;
    {
      std::unique_lock<std::mutex> lock(mu_);
      has_work_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      set = queue_.front();
      if (!claim(*set, &index)) {  // its starter took the rest
        queue_.pop_front();
        continue;
      }
      if (set->next_ >= set->count_) queue_.pop_front();
    }
    run(*set, index);
  }
}

size_t HostDecodePool::finish(JobSet& set) {
  size_t ran = 0;
  for (;;) {
    size_t index = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!claim(set, &index)) break;
    }
    run(set, index);
    ++ran;
  }
  {
    // Taken to the last job: no thread will take more from it.
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = queue_.begin(); it != queue_.end(); ++it)
      if (it->get() == &set) {
        queue_.erase(it);
        break;
      }
  }
  std::unique_lock<std::mutex> lock(set.mu_);
  set.done_changed_.wait(lock, [&] { return set.done_ == set.count_; });
  if (set.error_) std::rethrow_exception(set.error_);
  return ran;
}

size_t host_decode_threads_from_env() {
  const IntegerSwitch& threads = switches::image_host_threads();  // from 0 to 256
  if (!threads.is_set()) {
    const unsigned cores = std::thread::hardware_concurrency();
    return cores > 4 ? cores - 4 : 0;
  }
  return static_cast<size_t>(threads.get());
}

}  // namespace hearth::backends
