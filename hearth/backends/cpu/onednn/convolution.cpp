// conv2d forward (the residual as a `sum` post-op, the bias in the primitive,
// the ReLU in a pass of its own: relu_in_place), backward-data and
// backward-weights through oneDNN's convolution primitives. The tensors come
// as the schema gives them: dense NCHW or dense NHWC, read in place through
// their strides (no NCHW detour). The primitives may compute on blocked
// layouts (staged_primitive.h reorders to and from them); the weight of a
// grouped convolution is the 5-D [G, O/G, C/G, kH, kW] view of the same memory.
// Where blocked layouts would lose float32's accuracy (the float32
// backward-weights of NCHW convolutions), the reference computes the pass.
#include <oneapi/dnnl/dnnl.hpp>

#include <atomic>
#include <cstring>
#include <string>

#include "hearth/backends/cpu/cpu_switches.h"
#include "hearth/backends/cpu/onednn/engine.h"
#include "hearth/backends/cpu/parallel.h"
#include "hearth/backends/cpu/onednn/onednn.h"
#include "hearth/backends/cpu/onednn/primitive_cache.h"
#include "hearth/backends/cpu/onednn/size_rule.h"
#include "hearth/dispatch/cpu_reference.h"
#include "hearth/dispatch/schemas/conv2d.h"

namespace hearth::cpu::onednn {
namespace {

using dnnl::memory;
using Dims = memory::dims;

// How a primitive sees the operands. Activations (`images`): as the tensors
// are, or reordered to channel blocks of 16 (nChw16c, named rather than left
// to oneDNN: see below); weights: as they are, or in a layout the primitive
// chooses (blocked, reordered once: reordered_weights.h).
// Measured on AVX-512 (bench/NOTES.md, section 27): NHWC activations have
// direct kernels of their own, but only with blocked weights (plain NHWC
// weights have nothing but oneDNN's naive reference implementation); for
// NCHW, 3x3 convolutions run twice as fast blocked, reorders included, while
// 1x1 ones are plain GEMMs on NCHW (three times faster than blocked, where the
// reorders of large activations cost more than the product), and so are
// convolutions of few input channels (a 1- or 3-channel stem), which blocked
// layouts pad to 16 channels.
// Blocked float32 activations are nChw16c by name because the layout decides
// the implementation, and with it the accuracy (section 48): left to oneDNN
// (`any`), the forward took NHWC and its brgemm kernel, whose float32 error
// grows with C * kH * kW (6 times the reference's at 512 channels), where the
// direct kernel on nChw16c stays within the reference's at the same speed.
// bfloat16 leaves the choice to oneDNN: its AMX kernels want their own layouts
// (4.5-5.3x the reference's speed; on nChw16c it fell back to AVX-512 ones,
// 1.1-1.3x), and bfloat16's rounding of the result is far above any of its
// kernels' float32 sums.
// HEARTH_ONEDNN_LAYOUT=plain|blocked overrides the choice, for measuring.
enum class Images { own, channel_blocks };

struct Layouts {
  Images images = Images::own;
  bool weights = false;
};

const std::string& forced_layout() {
  static const std::string forced = switches::onednn_layout().get();  // auto, plain or blocked
  return forced;
}

Layouts choose_layouts(const Tensor& image, const Tensor& weight) {
  if (forced_layout() == "plain") return {Images::own, false};
  if (forced_layout() == "blocked") return {Images::channel_blocks, true};
  if (!image.is_contiguous()) return {Images::own, true};  // NHWC
  const bool pointwise = weight.shape()[2] == 1 && weight.shape()[3] == 1;
  const bool few_input_channels = weight.shape()[1] < 16;
  if (pointwise || few_input_channels) return {Images::own, false};
  return {Images::channel_blocks, true};
}

// oneDNN's backward-weights on nChw16c loses float32's accuracy as the
// positions it sums grow: its error grows with the square root of N * OH * OW
// (15 times the reference's at 2 images of 224 x 224, section 48), and no
// other layout or implementation of it kept up with the reference at its
// speed. The reference kernel (im2col + GEMM, whose blocked products sum short
// runs; its GEMM is oneDNN's) stays accurate at every size and took about as
// long (0.9-1.2x), so it computes this pass, unless blocked layouts are forced.
bool inaccurate(Pass pass, const Layouts& layouts, DType dtype) {
  return pass == Pass::backward_weight && dtype == DType::float32 && layouts.images == Images::channel_blocks &&
         forced_layout() != "blocked";
}

// oneDNN's reference implementations ("ref:any") are naive loops, far slower
// than hearth's own im2col + GEMM: a call that would get one is declined.
bool naive(const dnnl::primitive_desc_base& pd) { return std::string(pd.impl_info_str()).rfind("ref", 0) == 0; }

Dims dims_of(const Tensor& t) { return Dims(t.shape().begin(), t.shape().end()); }
Dims strides_of(const Tensor& t) { return Dims(t.strides().begin(), t.strides().end()); }

memory::desc image_desc(const Tensor& t) { return memory::desc(dims_of(t), to_dnnl(t.dtype()), strides_of(t)); }

// [O, C/G, kH, kW], or [G, O/G, C/G, kH, kW] for groups > 1 over the same memory.
memory::desc weight_desc(const Tensor& w, int64_t groups) {
  if (groups == 1) return image_desc(w);
  const Shape& s = w.shape();
  const Strides& st = w.strides();
  return memory::desc({groups, s[0] / groups, s[1], s[2], s[3]}, to_dnnl(w.dtype()),
                      {st[0] * (s[0] / groups), st[0], st[1], st[2], st[3]});
}

memory::desc any_like(const memory::desc& d, bool choose) {
  return choose ? memory::desc(d.dims(), d.data_type(), memory::format_tag::any) : d;
}

// Activations as the primitive computes on them: blocked ones nChw16c in
// float32, oneDNN's choice in bfloat16 (see above).
memory::desc image_as(const memory::desc& d, Images images) {
  if (images == Images::own) return d;
  const bool float32 = d.data_type() == memory::data_type::f32;
  return memory::desc(d.dims(), d.data_type(), float32 ? memory::format_tag::nChw16c : memory::format_tag::any);
}

struct Geometry {
  Dims strides, dilates, padding;  // oneDNN counts dilation from 0
};

Geometry geometry(const Conv2dAttrs& a) {
  return {{a.stride[0], a.stride[1]}, {a.dilation[0] - 1, a.dilation[1] - 1}, {a.padding[0], a.padding[1]}};
}

// Every tensor's shape and strides, the attributes, the pass and the post-ops:
// all a primitive depends on.
PrimitiveKey key_of(Pass pass, const OpCall& call, int64_t post_ops) {
  const Conv2dAttrs& a = call.attrs<Conv2dAttrs>();
  PrimitiveKey k{static_cast<int64_t>(pass), static_cast<int64_t>(call.out(0).dtype()), post_ops,   a.stride[0],
                 a.stride[1],                a.padding[0],                                a.padding[1], a.dilation[0],
                 a.dilation[1],              a.groups};
  auto add = [&](const Tensor& t) {
    k.push_back(t.defined() ? static_cast<int64_t>(t.dim()) : -1);
    if (!t.defined()) return;
    k.insert(k.end(), t.shape().begin(), t.shape().end());
    k.insert(k.end(), t.strides().begin(), t.strides().end());
  };
  for (const Tensor& t : call.inputs) add(t);
  for (const Tensor& t : call.outputs) add(t);
  return k;
}

std::atomic<uint64_t> g_calls_taken{0};

PrimitiveCache& cache() {
  static PrimitiveCache* c = new PrimitiveCache;  // primitives outlive static destruction order
  return *c;
}

bool takes(Pass pass, const OpCall& call) {
  if (cpu_reference_forced() || !supports(call.out(0).dtype())) return false;
  for (const Tensor& t : call.inputs)
    if (t.defined() && t.dtype() != call.out(0).dtype()) return false;
  return measured_faster(pass, call);
}


// max(v, 0) over the dense output, keeping NaN as the relu op does. oneDNN's
// eltwise_relu post-op maps NaN to 0, which would hide a diverging step from
// every later check, so the ReLU is this pass instead: one read and write of
// the output, small beside the convolution that produced it.
void relu_in_place(const Tensor& y) {
  const int64_t n = y.numel();
  if (y.dtype() == DType::float32) {
    float* p = y.data<float>();
    parallel_for(n, kGrainElementwise, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) p[i] = p[i] < 0.f ? 0.f : p[i];
    });
    return;
  }
  // bfloat16 by its bits: negative (sign set, magnitude above zero) and not NaN
  // (magnitude at most infinity's, 0x7f80) becomes +0.
  auto* p = static_cast<uint16_t*>(y.data_ptr());
  parallel_for(n, kGrainElementwise, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const uint16_t magnitude = p[i] & 0x7fff;
      if ((p[i] & 0x8000) && magnitude != 0 && magnitude <= 0x7f80) p[i] = 0;
    }
  });
}

template <typename Build>
bool run_cached(const PrimitiveKey& key, Build&& build, const std::vector<Tensor>& operands) {
  auto entry = cache().get(key, [&]() -> std::shared_ptr<const StagedPrimitive> {
    try {
      return build();
    } catch (const dnnl::error&) {
      return nullptr;  // oneDNN has no implementation for this call: the reference takes it
    }
  });
  if (!entry) return false;
  entry->run(operands);
  g_calls_taken.fetch_add(1, std::memory_order_relaxed);
  return true;
}

dnnl::convolution_forward::primitive_desc forward_desc(dnnl::prop_kind prop, const memory::desc& x,
                                                       const memory::desc& w, const memory::desc* bias,
                                                       const memory::desc& y, const Geometry& g,
                                                       const dnnl::primitive_attr& attr) {
  auto d = bias ? dnnl::convolution_forward::desc(prop, dnnl::algorithm::convolution_direct, x, w, *bias, y,
                                                  g.strides, g.dilates, g.padding, g.padding)
                : dnnl::convolution_forward::desc(prop, dnnl::algorithm::convolution_direct, x, w, y, g.strides,
                                                  g.dilates, g.padding, g.padding);
  return dnnl::convolution_forward::primitive_desc(d, attr, cpu_engine());
}

}  // namespace

uint64_t calls_taken() { return g_calls_taken.load(std::memory_order_relaxed); }

bool conv2d_forward(OpCall& call) {
  if (!takes(Pass::forward, call)) return false;
  const Conv2dAttrs& a = call.attrs<Conv2dAttrs>();
  const Tensor& x = call.in(0);
  const Tensor& w = call.in(1);
  const Tensor& bias = call.in(2);
  const Tensor residual = call.inputs.size() > 3 ? call.in(3) : Tensor();
  const Tensor& y = call.out(0);
  const int64_t sum_post_op = residual.defined() ? 1 : 0;
  // The sum post-op accumulates into the destination: it starts as the residual.
  if (residual.defined()) {
    std::memcpy(y.data_ptr(), residual.data_ptr(), y.nbytes());
  }
  auto build = [&]() -> std::shared_ptr<const StagedPrimitive> {
    const Layouts choose = choose_layouts(x, w);
    const memory::desc xd = image_desc(x), wd = weight_desc(w, a.groups), yd = image_desc(y);
    const memory::desc bd = bias.defined() ? image_desc(bias) : memory::desc();
    dnnl::post_ops ops;
    if (residual.defined()) ops.append_sum(1.f);
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    auto pd =
        forward_desc(dnnl::prop_kind::forward_inference, image_as(xd, choose.images), any_like(wd, choose.weights),
                     bias.defined() ? &bd : nullptr, image_as(yd, choose.images), geometry(a), attr);
    if (naive(pd)) return nullptr;
    std::vector<StagedArg> args{StagedPrimitive::stage(DNNL_ARG_SRC, 0, true, false, xd, pd.src_desc()),
                                StagedPrimitive::stage_weights(1, wd, pd.weights_desc()),
                                StagedPrimitive::stage(DNNL_ARG_DST, 3, residual.defined(), true, yd, pd.dst_desc())};
    if (bias.defined()) args.push_back(StagedPrimitive::stage(DNNL_ARG_BIAS, 2, true, false, bd, pd.bias_desc()));
    return std::make_shared<StagedPrimitive>(dnnl::convolution_forward(pd), std::move(args));
  };
  // Declined: the reference overwrites y, residual copy included.
  if (!run_cached(key_of(Pass::forward, call, sum_post_op), build, {x, w, bias, y})) return false;
  if (a.relu) relu_in_place(y);
  return true;
}

bool conv2d_backward_input(OpCall& call) {
  if (!takes(Pass::backward_input, call)) return false;
  const Conv2dAttrs& a = call.attrs<Conv2dAttrs>();
  const Tensor& gy = call.in(0);
  const Tensor& w = call.in(1);
  const Tensor& gx = call.out(0);
  auto build = [&]() -> std::shared_ptr<const StagedPrimitive> {
    const Layouts choose = choose_layouts(gy, w);
    const memory::desc gyd = image_desc(gy), wd = weight_desc(w, a.groups), gxd = image_desc(gx);
    const Geometry g = geometry(a);
    const memory::desc x_any = image_as(gxd, choose.images), w_any = any_like(wd, choose.weights),
                       y_any = image_as(gyd, choose.images);
    auto hint = forward_desc(dnnl::prop_kind::forward_training, x_any, w_any, nullptr, y_any, g, dnnl::primitive_attr());
    dnnl::convolution_backward_data::desc d(dnnl::algorithm::convolution_direct, x_any, w_any, y_any, g.strides,
                                            g.dilates, g.padding, g.padding);
    dnnl::convolution_backward_data::primitive_desc pd(d, cpu_engine(), hint);
    if (naive(pd)) return nullptr;
    std::vector<StagedArg> args{
        StagedPrimitive::stage(DNNL_ARG_DIFF_DST, 0, true, false, gyd, pd.diff_dst_desc()),
        StagedPrimitive::stage_weights(1, wd, pd.weights_desc()),
        StagedPrimitive::stage(DNNL_ARG_DIFF_SRC, 2, false, true, gxd, pd.diff_src_desc())};
    return std::make_shared<StagedPrimitive>(dnnl::convolution_backward_data(pd), std::move(args));
  };
  return run_cached(key_of(Pass::backward_input, call, 0), build, {gy, w, gx});
}

bool conv2d_backward_weight(OpCall& call) {
  if (!takes(Pass::backward_weight, call)) return false;
  const Conv2dAttrs& a = call.attrs<Conv2dAttrs>();
  const Tensor& gy = call.in(0);
  const Tensor& x = call.in(1);
  const Tensor& gw = call.out(0);
  auto build = [&]() -> std::shared_ptr<const StagedPrimitive> {
    const Layouts choose = choose_layouts(x, gw);
    if (inaccurate(Pass::backward_weight, choose, gw.dtype())) return nullptr;
    const memory::desc gyd = image_desc(gy), xd = image_desc(x), gwd = weight_desc(gw, a.groups);
    const Geometry g = geometry(a);
    const memory::desc x_any = image_as(xd, choose.images), w_any = any_like(gwd, choose.weights),
                       y_any = image_as(gyd, choose.images);
    auto hint = forward_desc(dnnl::prop_kind::forward_training, x_any, w_any, nullptr, y_any, g, dnnl::primitive_attr());
    dnnl::convolution_backward_weights::desc d(dnnl::algorithm::convolution_direct, x_any, w_any, y_any, g.strides,
                                               g.dilates, g.padding, g.padding);
    dnnl::convolution_backward_weights::primitive_desc pd(d, cpu_engine(), hint);
    if (naive(pd)) return nullptr;
    std::vector<StagedArg> args{
        StagedPrimitive::stage(DNNL_ARG_DIFF_DST, 0, true, false, gyd, pd.diff_dst_desc()),
        StagedPrimitive::stage(DNNL_ARG_SRC, 1, true, false, xd, pd.src_desc()),
        StagedPrimitive::stage(DNNL_ARG_DIFF_WEIGHTS, 2, false, true, gwd, pd.diff_weights_desc())};
    return std::make_shared<StagedPrimitive>(dnnl::convolution_backward_weights(pd), std::move(args));
  };
  return run_cached(key_of(Pass::backward_weight, call, 0), build, {gy, x, gw});
}

}  // namespace hearth::cpu::onednn
