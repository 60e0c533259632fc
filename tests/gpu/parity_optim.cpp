// Parity cases for the fused optimizer steps: three updates of SGD (momentum,
// Nesterov, weight decay) and Adam/AdamW (with amsgrad), compared after each run.
#include "hearth/autograd/grad_mode.h"
#include "hearth/optim/functional.h"
#include "tests/gpu/parity.h"

namespace hearth::gpu_testing {
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

}  // namespace
}  // namespace hearth::gpu_testing
