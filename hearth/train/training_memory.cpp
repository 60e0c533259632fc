#include "hearth/train/training_memory.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "hearth/core/device_runtime.h"
#include "hearth/core/errors.h"

namespace hearth::train {
namespace {

size_t physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page_size = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page_size > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(page_size) : 0;
}

// cgroup v2's memory.max ("max" when unlimited), else v1's limit; 0 when none.
size_t cgroup_memory_limit() {
  for (const char* path : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    std::ifstream in(path);
    unsigned long long limit = 0;
    if (in >> limit && limit > 0) return static_cast<size_t>(limit);
  }
  return 0;
}

std::string gib(size_t bytes) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(1) << static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0) << " GiB";
  return os.str();
}

}  // namespace

TrainingMemory training_memory(const std::vector<Tensor>& params, const std::string& optim) {
  TrainingMemory m;
  for (const Tensor& p : params) m.parameters += p.nbytes();
  m.gradients = m.parameters;
  // Adam and AdamW keep two moments of each parameter, SGD with momentum one.
  m.optimizer_state = (optim == "sgd" ? 1 : 2) * m.parameters;
  return m;
}

size_t device_memory_bytes(Device device) {
  if (!device.is_cpu() && has_device_runtime(device.kind)) {
    size_t free_bytes = 0, total_bytes = 0;
    device_runtime(device.kind).memory_info(device.index, &free_bytes, &total_bytes);
    if (total_bytes > 0) return total_bytes;
  }
  size_t bytes = physical_memory_bytes();
  const size_t limit = cgroup_memory_limit();
  if (limit > 0 && (bytes == 0 || limit < bytes)) bytes = limit;
  return bytes;
}

void check_training_memory_fits(const TrainingMemory& need, size_t available, const std::string& device_name) {
  if (available == 0 || need.total() <= available) return;
  HEARTH_THROW(OutOfMemoryError, "[trainer] training this model holds ", gib(need.total()),
               " before any activation (parameters ", gib(need.parameters), ", gradients ", gib(need.gradients),
               ", optimizer state ", gib(need.optimizer_state), "), more than the ", gib(available), " of ",
               device_name,
               "; choose a smaller model (hidden_size, num_hidden_layers, vocab_size), or a device with more "
               "memory");
}

}  // namespace hearth::train
