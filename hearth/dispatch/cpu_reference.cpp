#include "hearth/dispatch/cpu_reference.h"

#include <atomic>

#include "hearth/core/switch_list.h"

namespace hearth {
namespace {

std::atomic<int> g_forced{0};

}  // namespace

bool cpu_reference_forced() { return g_forced.load(std::memory_order_relaxed) > 0 || switches::cpu_reference().get(); }

ForceCpuReference::ForceCpuReference() { g_forced.fetch_add(1, std::memory_order_relaxed); }
ForceCpuReference::~ForceCpuReference() { g_forced.fetch_sub(1, std::memory_order_relaxed); }

}  // namespace hearth
