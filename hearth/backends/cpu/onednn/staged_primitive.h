// A oneDNN primitive together with how each of its arguments reaches it from
// a hearth tensor. Primitives created with format `any` choose their own
// (blocked) layouts; an argument whose chosen layout differs from the
// tensor's goes through a scratch buffer and a reorder, in before the
// primitive for inputs, out after it for outputs. Both the primitive and the
// reorders are built once per cache key (primitive_cache.h) and only executed
// per call.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <optional>
#include <unordered_map>
#include <vector>

namespace hearth::cpu::onednn {

struct StagedArg {
  int arg = 0;                  // DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, ...
  int operand = 0;              // index into the `data` pointers passed to run()
  bool read = false;            // the primitive reads it (inputs; a `sum` post-op's destination)
  bool written = false;         // the primitive writes it
  dnnl::memory::desc user;      // the tensor's layout
  dnnl::memory::desc inner;     // the primitive's layout
  std::optional<dnnl::reorder> to_inner, to_user;  // set exactly when the layouts differ
};

class StagedPrimitive {
 public:
  StagedPrimitive(dnnl::primitive primitive, std::vector<StagedArg> args)
      : primitive_(std::move(primitive)), args_(std::move(args)) {}

  // Builds the argument for `arg` whose user layout is `user` and whose
  // primitive layout is `inner` (the primitive descriptor's desc for it).
  static StagedArg stage(int arg, int operand, bool read, bool written, const dnnl::memory::desc& user,
                         const dnnl::memory::desc& inner);

  // data[operand]: the tensors' first elements, in the users' layouts.
  void run(const std::vector<void*>& data) const;

 private:
  dnnl::primitive primitive_;
  std::vector<StagedArg> args_;
};

}  // namespace hearth::cpu::onednn
