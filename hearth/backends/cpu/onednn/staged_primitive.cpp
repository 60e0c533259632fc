#include "hearth/backends/cpu/onednn/staged_primitive.h"

#include "hearth/backends/cpu/onednn/engine.h"
#include "hearth/backends/cpu/onednn/reordered_weights.h"

namespace hearth::cpu::onednn {

StagedArg StagedPrimitive::stage(int arg, int operand, bool read, bool written, const dnnl::memory::desc& user,
                                 const dnnl::memory::desc& inner) {
  StagedArg a{arg, operand, read, written, false, user, inner, std::nullopt, std::nullopt};
  if (user != inner) {
    dnnl::engine& e = cpu_engine();
    if (read) a.to_inner = dnnl::reorder(dnnl::reorder::primitive_desc(e, user, e, inner));
    if (written) a.to_user = dnnl::reorder(dnnl::reorder::primitive_desc(e, inner, e, user));
  }
  return a;
}

StagedArg StagedPrimitive::stage_weights(int operand, const dnnl::memory::desc& user, const dnnl::memory::desc& inner) {
  StagedArg a = stage(DNNL_ARG_WEIGHTS, operand, true, false, user, inner);
  a.weights = true;
  return a;
}

void StagedPrimitive::run(const std::vector<Tensor>& operands) const {
  dnnl::engine& e = cpu_engine();
  dnnl::stream& s = cpu_stream();
  std::unordered_map<int, dnnl::memory> args;
  std::vector<std::pair<const StagedArg*, std::pair<dnnl::memory, dnnl::memory>>> write_back;
  for (const StagedArg& a : args_) {
    const Tensor& t = operands[a.operand];
    if (a.weights && a.to_inner) {
      args.emplace(a.arg, reordered_weights().get(t, a.user, a.inner, *a.to_inner));
      continue;
    }
    dnnl::memory user(a.user, e, t.data_ptr());
    if (a.user == a.inner) {
      args.emplace(a.arg, user);
      continue;
    }
    dnnl::memory inner(a.inner, e);  // scratch in the primitive's layout
    if (a.to_inner) a.to_inner->execute(s, user, inner);
    if (a.to_user) write_back.push_back({&a, {inner, user}});
    args.emplace(a.arg, inner);
  }
  primitive_.execute(s, args);
  for (auto& [a, mems] : write_back) a->to_user->execute(s, mems.first, mems.second);
  s.wait();
}

}  // namespace hearth::cpu::onednn
