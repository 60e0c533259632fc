// A test hook in the allocator (Storage::allocate, every device): lets `n`
// more allocations succeed, then makes the next one throw OutOfMemoryError,
// once, as a full device would; negative disarms it. Tests use it to prove
// that a failure anywhere in a training step leaves model, optimizer and
// checkpoints consistent. Costs one relaxed atomic load per allocation.
#pragma once

#include <cstdint>

namespace hearth {

void inject_oom_after_allocations(int64_t n);
// Whether an injected failure is still armed.
bool oom_injection_armed();

}  // namespace hearth
