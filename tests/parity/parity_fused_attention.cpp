// Parity cases for fused_attention: cuDNN's fused attention against the CPU's
// reference kernel, forward and backward, without dropout (the two backends
// draw different masks; test_fused_attention_cuda.cpp checks dropout). A
// shape the engines refuse fails here with the kernel's message, so the table
// also says which graphs this GPU's cuDNN takes.
#include "hearth/autograd/grad_mode.h"
#include "hearth/ops/attention.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/view.h"
#include "tests/parity/parity.h"

namespace hearth::parity {
namespace {

const std::vector<DType> kHalf = {DType::bfloat16, DType::float16};
const std::vector<std::string> kCovers = {"fused_attention", "fused_attention_backward"};

// A padding mask for [B, 1, 1, S]: float's lowest on the last `padded` keys
// of each batch row, the rest small random values.
Tensor padding_mask(const Tensor& noise, int64_t padded) {
  Tensor m = noise.detach().clone();
  const int64_t S = m.size(-1);
  fill_(narrow(m, -1, S - padded, padded), lowest_finite(DType::float32));
  return m;
}

const ParityRegistrar
    bert_case(accelerator_scale({"fused_attention: BERT [2,12,128,64], mask [B,1,1,S]", kCovers, kHalf,
                                 [](DType dt) {
                                   return std::vector<Tensor>{random_input({2, 12, 128, 64}, dt),
                                                              random_input({2, 12, 128, 64}, dt),
                                                              random_input({2, 12, 128, 64}, dt),
                                                              random_input({2, 1, 1, 128}, DType::float32)};
                                 },
                                 [](const std::vector<Tensor>& in, Device) {
                                   const Tensor mask = padding_mask(in[3], 27);
                                   return std::vector<Tensor>{fused_attention(in[0], in[1], in[2], mask)};
                                 }}));

// The same mask stored in full, [B, 1, L, S], rather than broadcast over the
// query rows by stride 0.
const ParityRegistrar stored_mask_case(accelerator_scale(
    {"fused_attention: BERT mask stored [B,1,L,S]", kCovers, kHalf,
     [](DType dt) {
       return std::vector<Tensor>{random_input({2, 12, 128, 64}, dt), random_input({2, 12, 128, 64}, dt),
                                  random_input({2, 12, 128, 64}, dt), random_input({2, 1, 1, 128}, DType::float32)};
     },
     [](const std::vector<Tensor>& in, Device) {
       const Tensor mask = padding_mask(in[3], 27).expand({2, 1, 128, 128}).contiguous();
       return std::vector<Tensor>{fused_attention(in[0], in[1], in[2], mask)};
     }}));

// Odd lengths, L != S, a mask of its own per query row ([B, 1, L, S]), Dv != D.
const ParityRegistrar odd_case({"fused_attention: odd L=37 S=53, [B,1,L,S] mask, Dv 32", kCovers, kHalf,
                                [](DType dt) {
                                  return std::vector<Tensor>{
                                      random_input({2, 3, 37, 64}, dt), random_input({2, 3, 53, 64}, dt),
                                      random_input({2, 3, 53, 32}, dt), random_input({2, 1, 37, 53}, DType::float32)};
                                },
                                [](const std::vector<Tensor>& in, Device) {
                                  const Tensor mask = mul(in[3].detach(), 2.0);
                                  return std::vector<Tensor>{
                                      fused_attention(in[0], in[1], in[2], mask, 0.0, false, 0.2)};
                                }});

// Rows masked everywhere (batch 1 masks every key) beside partly masked rows;
// head dim 128.
const ParityRegistrar masked_rows_case({"fused_attention: rows masked everywhere, D 128", kCovers, kHalf,
                                        [](DType dt) {
                                          return std::vector<Tensor>{random_input({2, 2, 40, 128}, dt),
                                                                     random_input({2, 2, 40, 128}, dt),
                                                                     random_input({2, 2, 40, 128}, dt),
                                                                     random_input({2, 1, 1, 40}, DType::float32)};
                                        },
                                        [](const std::vector<Tensor>& in, Device) {
                                          Tensor mask = padding_mask(in[3], 9);
                                          fill_(select(mask, 0, 1), lowest_finite(DType::float32));
                                          return std::vector<Tensor>{fused_attention(in[0], in[1], in[2], mask)};
                                        }});

// BERT's layout: q, k and v are the heads of [B, L, H, D] tensors, read in
// place; no mask; head dim 16.
const ParityRegistrar split_heads_case({"fused_attention: split heads [B,L,H,D], no mask, D 16", kCovers, kHalf,
                                        [](DType dt) {
                                          return std::vector<Tensor>{random_input({3, 50, 4, 16}, dt),
                                                                     random_input({3, 50, 4, 16}, dt),
                                                                     random_input({3, 50, 4, 16}, dt)};
                                        },
                                        [](const std::vector<Tensor>& in, Device) {
                                          auto heads = [](const Tensor& t) { return permute(t, {0, 2, 1, 3}); };
                                          return std::vector<Tensor>{
                                              fused_attention(heads(in[0]), heads(in[1]), heads(in[2]))};
                                        }});

// Inference: no log-sum-exp is written, the forward graph without statistics.
const ParityRegistrar inference_case(
    {"fused_attention: inference, mask [B,1,1,S]", kCovers, kHalf,
     [](DType dt) {
       return std::vector<Tensor>{random_input({4, 4, 64, 64}, dt), random_input({4, 4, 64, 64}, dt),
                                  random_input({4, 4, 64, 64}, dt), random_input({4, 1, 1, 64}, DType::float32)};
     },
     [](const std::vector<Tensor>& in, Device) {
       NoGradGuard no_grad;
       return std::vector<Tensor>{fused_attention(in[0], in[1], in[2], padding_mask(in[3], 5))};
     },
     /*backward=*/false});

}  // namespace
}  // namespace hearth::parity
