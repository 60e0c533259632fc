#include "hearth/autograd/checkpoint.h"

#include "hearth/autograd/engine.h"
#include "hearth/autograd/function.h"
#include "hearth/autograd/grad_mode.h"
#include "hearth/autograd/node.h"
#include "hearth/core/generator.h"
#include "hearth/ops/autocast.h"

namespace hearth::autograd {

std::vector<Tensor> checkpoint(const CheckpointedFn& fn, const std::vector<Tensor>& inputs) {
  if (!any_requires_grad(inputs)) return fn(inputs);
  const Generator& gen = default_generator();
  const uint64_t seed = gen.seed(), offset = gen.offset();
  DeviceKind kind = kCpu;
  for (const Tensor& t : inputs)
    if (t.defined()) {
      kind = t.device().kind;
      break;
    }
  const bool autocast = autocast_enabled(kind);
  const DType autocast_to = autocast_dtype(kind);
  std::vector<Tensor> outputs;
  {
    NoGradGuard no_grad;
    outputs = fn(inputs);
  }
  std::vector<SavedTensor> saved;
  std::vector<bool> wanted;
  for (const Tensor& t : inputs) {
    saved.emplace_back(t.defined() ? SavedTensor(t) : SavedTensor());
    wanted.push_back(t.defined() && t.requires_grad());
  }
  record("CheckpointBackward", inputs, outputs,
         [fn, saved, wanted, seed, offset, kind, autocast, autocast_to](const BackwardContext& c) {
           std::vector<Tensor> again;
           for (size_t i = 0; i < saved.size(); ++i) {
             Tensor t = saved[i].defined() ? saved[i].unpack(c.name()).detach() : Tensor();
             if (wanted[i]) t.requires_grad_();
             again.push_back(t);
           }
           // The forward's random draws and autocast, then the generator back
           // where this backward found it.
           Generator& g = default_generator();
           const uint64_t now_seed = g.seed(), now_offset = g.offset();
           g.set_state(seed, offset);
           std::vector<Tensor> redone;
           try {
             EnableGradGuard grad;
             AutocastResume resume;  // backward passes suspend autocast
             AutocastGuard cast(kind, autocast_to, autocast);
             redone = fn(again);
           } catch (...) {
             g.set_state(now_seed, now_offset);
             throw;
           }
           g.set_state(now_seed, now_offset);
           std::vector<Tensor> roots, grads;
           for (size_t i = 0; i < redone.size() && i < c.num_grads(); ++i)
             if (redone[i].defined() && redone[i].requires_grad() && c.grad(i).defined()) {
               roots.push_back(redone[i]);
               grads.push_back(c.grad(i));
             }
           if (!roots.empty()) run_backward(roots, grads, false);
           std::vector<Tensor> out;
           for (size_t i = 0; i < again.size(); ++i) out.push_back(wanted[i] ? again[i].grad() : Tensor());
           return out;
         });
  return outputs;
}

}  // namespace hearth::autograd
