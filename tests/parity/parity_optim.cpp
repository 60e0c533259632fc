// Parity cases for the fused optimizer steps: three updates of SGD (momentum,
// Nesterov, weight decay) and Adam/AdamW (with amsgrad), compared after each
// run; and the foreach gradient clipping (every norm type, gradients of many
// sizes, clipped and left as they are).
#include <limits>

#include "hearth/autograd/grad_mode.h"
#include "hearth/optim/functional.h"
#include "tests/parity/parity.h"

namespace hearth::parity {
namespace {

const std::vector<DType> kFloat = {DType::float32, DType::float64, DType::bfloat16, DType::float16};

const ParityRegistrar sgd({"sgd_step momentum+nesterov+wd, 3 steps",
                           {"sgd_step"},
                           kFloat,
                           [](DType dt) {
                             return std::vector<Tensor>{random_input({1031}, dt), random_input({1031}, dt)};
                           },
                           [](const std::vector<Tensor>& in, Device) {
                             NoGradGuard no_grad;
                             Tensor p = in[0].clone(), buf = in[0].clone();
                             for (int step = 0; step < 3; ++step) {
                               SgdStepAttrs a;
                               a.lr = 0.1;
                               a.momentum = 0.9;
                               a.weight_decay = 0.01;
                               a.nesterov = true;
                               a.init_buffer = step == 0;
                               optim::sgd_step_(p, in[1], buf, a);
                             }
                             return std::vector<Tensor>{p, buf};
                           },
                           false});

ParityCase adam_case(bool decoupled, bool amsgrad) {
  return ParityCase{std::string(decoupled ? "adamw" : "adam") + (amsgrad ? " amsgrad" : "") + " 3 steps",
                    {"adam_step"},
                    kFloat,
                    [](DType dt) {
                      return std::vector<Tensor>{random_input({777}, dt), random_input({777}, dt)};
                    },
                    [decoupled, amsgrad](const std::vector<Tensor>& in, Device) {
                      NoGradGuard no_grad;
                      Tensor p = in[0].clone();
                      Tensor m = in[0].clone().zero_(), v = in[0].clone().zero_(), vmax = in[0].clone().zero_();
                      for (int step = 1; step <= 3; ++step) {
                        AdamStepAttrs a;
                        a.lr = 1e-2;
                        a.weight_decay = 0.1;
                        a.step = step;
                        a.amsgrad = amsgrad;
                        a.decoupled_weight_decay = decoupled;
                        optim::adam_step_(p, in[1], m, v, amsgrad ? vmax : Tensor(), a);
                      }
                      return std::vector<Tensor>{p, m, v};
                    },
                    false};
}

const ParityRegistrar adam(adam_case(false, false));
const ParityRegistrar adamw(adam_case(true, true));

// Foreach steps over many parameters: more tensors than one launch takes, sizes
// around the chunk length, and (float32 only) one tensor longer than a launch's
// blocks cover, so packing carries a tensor over to the next launch.
std::vector<int64_t> foreach_sizes(bool huge) {
  std::vector<int64_t> sizes;
  for (int i = 0; i < 40; ++i) sizes.push_back(1 + i * 1733);
  sizes.insert(sizes.end(), {65535, 65536, 65537, 1});
  if (huge) sizes.push_back(320 * 65536 + 5);
  return sizes;
}

ParityCase foreach_case(const char* name, std::vector<DType> dtypes, bool huge) {
  return ParityCase{name,
                    {"sgd_step_foreach", "adam_step_foreach"},
                    std::move(dtypes),
                    [huge](DType dt) {
                      std::vector<Tensor> in;
                      for (int64_t n : foreach_sizes(huge)) {
                        in.push_back(random_input({n}, dt));
                        in.push_back(random_input({n}, dt));
                      }
                      return in;
                    },
                    [](const std::vector<Tensor>& in, Device) {
                      NoGradGuard no_grad;
                      std::vector<Tensor> ps, qs, gs, bufs, ms, vs, vmaxs;
                      for (size_t i = 0; i < in.size(); i += 2) {
                        ps.push_back(in[i].clone());
                        qs.push_back(in[i].clone());
                        gs.push_back(in[i + 1]);
                        bufs.push_back(in[i].clone());
                        ms.push_back(in[i].clone().zero_());
                        vs.push_back(in[i].clone().zero_());
                        vmaxs.push_back(in[i].clone().zero_());
                      }
                      for (int step = 1; step <= 2; ++step) {
                        SgdStepAttrs s;
                        s.lr = 0.1;
                        s.momentum = 0.9;
                        s.weight_decay = 0.01;
                        s.init_buffer = step == 1;
                        optim::sgd_step_foreach_(ps, gs, bufs, s);
                        AdamStepAttrs a;
                        a.lr = 1e-2;
                        a.weight_decay = 0.1;
                        a.step = step;
                        a.amsgrad = true;
                        a.decoupled_weight_decay = true;
                        optim::adam_step_foreach_(qs, gs, ms, vs, vmaxs, a);
                      }
                      std::vector<Tensor> out;
                      for (size_t i = 0; i < ps.size(); ++i) {
                        out.push_back(ps[i]);
                        out.push_back(bufs[i]);
                        out.push_back(qs[i]);
                        out.push_back(vmaxs[i]);
                      }
                      return out;
                    },
                    false};
}

const ParityRegistrar foreach_many(foreach_case("sgd/adamw foreach, 44 tensors, 2 steps", kFloat, false));
const ParityRegistrar foreach_huge(accelerator_scale(foreach_case("sgd/adamw foreach, one tensor over a launch",
                                                                  {DType::float32}, true)));

ParityCase clip_case(double norm_type, double max_norm, std::vector<DType> dtypes = kFloat, bool huge = false) {
  return ParityCase{
      "clip_grad_norm_foreach p=" + std::to_string(norm_type) + " max_norm=" + std::to_string(max_norm) +
          (huge ? ", one tensor over a launch" : ""),
      {"clip_grad_norm_foreach"},
      std::move(dtypes),
      [huge](DType dt) {
        std::vector<Tensor> in;
        for (int64_t n : foreach_sizes(huge)) in.push_back(random_input({n}, dt));
        return in;
      },
      [norm_type, max_norm](const std::vector<Tensor>& in, Device) {
        NoGradGuard no_grad;
        std::vector<Tensor> grads;
        for (const Tensor& t : in) grads.push_back(t.clone());
        bool done = false;
        const Tensor total = optim::clip_grad_norm_foreach_(grads, ClipGradNormAttrs{max_norm, norm_type}, &done);
        std::vector<Tensor> out{total.reshape({1})};
        out.insert(out.end(), grads.begin(), grads.end());
        return out;
      },
      false};
}

const ParityRegistrar clip_two(clip_case(2.0, 1.0));
const ParityRegistrar clip_inf(clip_case(std::numeric_limits<double>::infinity(), 0.5));
const ParityRegistrar clip_three(clip_case(3.0, 1e9));  // above the norm: left as they are
const ParityRegistrar clip_huge(accelerator_scale(clip_case(2.0, 1.0, {DType::float32}, true)));

}  // namespace
}  // namespace hearth::parity
