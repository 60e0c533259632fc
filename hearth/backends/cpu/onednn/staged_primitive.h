// A oneDNN primitive together with how each of its arguments reaches it from
// a hearth tensor. Primitives created with format `any` choose their own
// (blocked) layouts; an argument whose chosen layout differs from the
// tensor's goes through a scratch buffer and a reorder, in before the
// primitive for inputs, out after it for outputs; weights read through a
// reorder keep their reordered copy between calls (reordered_weights.h). Both
// the primitive and the reorders are built once per cache key
// (primitive_cache.h) and only executed per call.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <optional>
#include <unordered_map>
#include <vector>

#include "hearth/core/tensor.h"

namespace hearth::cpu::onednn {

struct StagedArg {
  int arg = 0;               // DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, ...
  int operand = 0;           // index into the operands passed to run()
  bool read = false;         // the primitive reads it (inputs; a `sum` post-op's destination)
  bool written = false;      // the primitive writes it
  bool weights = false;      // read-only weights: their reordered copy is kept (reordered_weights.h)
  dnnl::memory::desc user;   // the tensor's layout
  dnnl::memory::desc inner;  // the primitive's layout
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
  // The same for weights the primitive only reads.
  static StagedArg stage_weights(int operand, const dnnl::memory::desc& user, const dnnl::memory::desc& inner);

  // operands[operand]: the tensors, in the users' layouts (undefined where no argument names them).
  void run(const std::vector<Tensor>& operands) const;

 private:
  dnnl::primitive primitive_;
  std::vector<StagedArg> args_;
};

}  // namespace hearth::cpu::onednn
