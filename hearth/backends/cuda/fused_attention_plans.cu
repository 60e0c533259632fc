// Flash attention as cuDNN operation graphs. cuDNN has no single attention
// operation that takes an additive mask and dropout; its runtime-fusion
// attention engines instead recognise a graph of matmul, pointwise, reduction
// and RNG operations in one particular arrangement and compile it into one
// kernel, the [B, H, L, S] scores and weights living only in its tiles. The
// graphs below are that arrangement, operation for operation and type for
// type, as cuDNN's documentation of the fused attention patterns and its
// frontend library (whose SDPA node builds them) give it:
//
// forward:  s = q @ kT; s = s * scale; s = s + mask; m = max_S(s); e = exp(s - m); z = sum_S(e);
//           lse = m + log(z) (to memory in training, a virtual tensor in inference); w = e / z;
//           dropout: w = w * bernoulli(1 - p) * (1 / (1 - p));  out = w (in T) @ v
// backward: r = sum_Dv(grad_out * out) * (1 - p, or 1)   (a float tensor of the plan's own)
//           s = q @ kT; s = s * scale; s = s + mask; w = exp(s - lse);
//           wd = w (* bernoulli * 1 / (1 - p));  grad_v = wd^T (in T) @ grad_out
//           dw = grad_out @ vT (* bernoulli);  ds = (dw - r) * w (* 1 / (1 - p)) * scale
//           grad_k = ds^T (in T) @ q;  grad_q = ds @ k, accumulated in float, then rounded
// (kT and vT are k and v described with their last two dims swapped; ^T is
// a reshape of a virtual tensor). The dropout mask is drawn twice from the
// same seed and offset, never stored.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <sstream>

#include "hearth/backends/cuda/cuda_switches.h"
#include "hearth/backends/cuda/cudnn_util.h"
#include "hearth/backends/cuda/fused_attention_plans.h"
#include "hearth/core/errors.h"

namespace hearth::cuda {
namespace {

namespace graph = cudnn_graph;
using Dims = std::vector<int64_t>;

enum Pass : int { kForward = 0, kBackward = 1 };

// Canonical strides of a [B, H, rows, cols] tensor: a size-1 dim takes the
// span of the dims inside it (the stride it would have, were the tensor dense
// in its own order; the mask's broadcast dims keep their stride 0).
std::array<int64_t, 4> canonical_strides(const Tensor& t) {
  std::array<int64_t, 4> s{t.strides()[0], t.strides()[1], t.strides()[2], t.strides()[3]};
  for (int d = 2; d >= 0; --d) {
    if (t.size(d) != 1) continue;
    s[d] = 1;
    for (int e = d + 1; e < 4; ++e) s[d] = std::max(s[d], s[e] * t.size(e));
  }
  return s;
}

Dims dense(const Dims& dims) {
  Dims s(dims.size(), 1);
  for (size_t i = dims.size() - 1; i > 0; --i) s[i - 1] = s[i] * dims[i];
  return s;
}

// A graph under construction: its tensors (kept alive until the plan is
// built) and operations, with a fresh uid for each virtual tensor.
class GraphBuilder {
 public:
  struct Node {
    graph::Descriptor desc;
    Dims dims;
  };

  const Node& tensor(int64_t uid, cudnnDataType_t type, Dims dims, Dims strides, int64_t alignment = 16) {
    return add(graph::TensorSpec{uid, type, std::move(dims), std::move(strides), alignment, false, false});
  }
  // A float scalar bound by value at execution.
  const Node& scalar(int64_t uid) {
    return add(graph::TensorSpec{uid, CUDNN_DATA_FLOAT, {1, 1, 1, 1}, {1, 1, 1, 1}, 16, false, true});
  }
  // An intermediate that never reaches memory, dense unless strides are given.
  const Node& virtual_tensor(Dims dims, cudnnDataType_t type = CUDNN_DATA_FLOAT, Dims strides = {}) {
    if (strides.empty()) strides = dense(dims);
    return add(graph::TensorSpec{next_virtual_++, type, std::move(dims), std::move(strides), 16, true, false});
  }

  // y = mode(x[, b]) into a new float virtual of x's dims (or into `y`).
  const Node& pointwise(cudnnPointwiseMode_t mode, const Node& x, const Node* b = nullptr) {
    const Node& y = virtual_tensor(x.dims);
    pointwise_into(mode, x, b, y);
    return y;
  }
  void pointwise_into(cudnnPointwiseMode_t mode, const Node& x, const Node* b, const Node& y) {
    ops_.push_back(graph::pointwise_op(mode, x.desc, b ? &b->desc : nullptr, y.desc));
  }
  void matmul(const Node& a, const Node& b, const Node& c) { ops_.push_back(graph::matmul_op(a.desc, b.desc, c.desc)); }
  void reduce(cudnnReduceTensorOp_t mode, const Node& x, const Node& y) {
    ops_.push_back(graph::reduction_op(mode, x.desc, y.desc));
  }
  void reshape(const Node& x, const Node& y) { ops_.push_back(graph::reshape_op(x.desc, y.desc)); }
  void bernoulli(double keep, const Node& seed, const Node& offset, const Node& y) {
    ops_.push_back(graph::bernoulli_op(keep, seed.desc, offset.desc, y.desc));
  }

  std::shared_ptr<graph::ExecutionPlan> build(cudnnHandle_t h, const std::string& what) {
    graph::EngineFilter filter;
    // Attention's engines compile the graph at first use (a second or so per
    // shape), and its only float tensors are intermediates.
    filter.allow_runtime_compiled = true;
    filter.allow_down_convert = true;
    return graph::build_plan(h, std::move(ops_), filter, what.c_str(),
                             "scaled_dot_product_attention stays unfused for this shape");
  }

 private:
  const Node& add(graph::TensorSpec spec) {
    Dims dims = spec.dims;
    nodes_.push_back(Node{graph::make_tensor(spec), std::move(dims)});
    return nodes_.back();
  }

  std::deque<Node> nodes_;  // stable addresses
  std::vector<graph::Descriptor> ops_;
  int64_t next_virtual_ = kAttnFirstVirtual;
};

Dims dims_of(const std::array<int64_t, 4>& a) { return Dims(a.begin(), a.end()); }
// [B, H, rows, cols] strides with the last two dims swapped (k as kT, v as vT).
Dims swapped(const std::array<int64_t, 4>& s) { return {s[0], s[1], s[3], s[2]}; }

// The softmax statistics' layout: [B, H, L, 1], dense.
Dims row_strides(const AttentionProblem& p) { return {p.H * p.L, p.L, 1, 1}; }

// q @ kT * scale (+ mask): the scores, in float.
const GraphBuilder::Node& scores(GraphBuilder& g, const AttentionProblem& p, const GraphBuilder::Node& q,
                                 const GraphBuilder::Node& kt, const GraphBuilder::Node& scale) {
  const GraphBuilder::Node& s = g.virtual_tensor({p.B, p.H, p.L, p.S});
  g.matmul(q, kt, s);
  const GraphBuilder::Node* x = &g.pointwise(CUDNN_POINTWISE_MUL, s, &scale);
  if (p.has_mask) {
    const GraphBuilder::Node& mask = g.tensor(kAttnMask, cudnn_dtype(p.dtype), dims_of(p.mask_dims), dims_of(p.mask));
    x = &g.pointwise(CUDNN_POINTWISE_ADD, *x, &mask);
  }
  return *x;
}

// The dropout mask of the call: 1 where kept, 0 where dropped.
const GraphBuilder::Node& keep_mask(GraphBuilder& g, const AttentionProblem& p) {
  // The seed and offset are two int64 words of one device buffer, the second 8 bytes in.
  const GraphBuilder::Node& seed = g.tensor(kAttnSeed, CUDNN_DATA_INT64, {1, 1, 1, 1}, {1, 1, 1, 1}, 8);
  const GraphBuilder::Node& offset = g.tensor(kAttnOffset, CUDNN_DATA_INT64, {1, 1, 1, 1}, {1, 1, 1, 1}, 8);
  const GraphBuilder::Node& keep = g.virtual_tensor({p.B, p.H, p.L, p.S});
  g.bernoulli(1.0 - p.p, seed, offset, keep);
  return keep;
}

std::shared_ptr<graph::ExecutionPlan> build_forward(const AttentionProblem& p, cudnnHandle_t h) {
  using N = GraphBuilder::Node;
  GraphBuilder g;
  const cudnnDataType_t t = cudnn_dtype(p.dtype);
  const N& q = g.tensor(kAttnQ, t, {p.B, p.H, p.L, p.D}, dims_of(p.q));
  const N& kt = g.tensor(kAttnK, t, {p.B, p.H, p.D, p.S}, swapped(p.k));
  const N& v = g.tensor(kAttnV, t, {p.B, p.H, p.S, p.Dv}, dims_of(p.v));
  const N& x = scores(g, p, q, kt, g.scalar(kAttnScale));
  // The softmax, with its statistics.
  const N& max = g.virtual_tensor({p.B, p.H, p.L, 1}, CUDNN_DATA_FLOAT, row_strides(p));
  g.reduce(CUDNN_REDUCE_TENSOR_MAX, x, max);
  const N& e = g.pointwise(CUDNN_POINTWISE_EXP, g.pointwise(CUDNN_POINTWISE_SUB, x, &max));
  const N& sum = g.virtual_tensor({p.B, p.H, p.L, 1}, CUDNN_DATA_FLOAT, row_strides(p));
  g.reduce(CUDNN_REDUCE_TENSOR_ADD, e, sum);
  // Inference computes the statistic too, into a virtual tensor: the engines
  // recognise the softmax by it.
  const N& lse = p.stats ? g.tensor(kAttnStats, CUDNN_DATA_FLOAT, {p.B, p.H, p.L, 1}, row_strides(p))
                         : g.virtual_tensor({p.B, p.H, p.L, 1}, CUDNN_DATA_FLOAT, row_strides(p));
  g.pointwise_into(CUDNN_POINTWISE_ADD, max, &g.pointwise(CUDNN_POINTWISE_LOG, sum), lse);
  const bool drop = p.p > 0.0;
  // The weights the second product reads are in T, as the engines require.
  const N& w = g.virtual_tensor({p.B, p.H, p.L, p.S}, drop ? CUDNN_DATA_FLOAT : t);
  g.pointwise_into(CUDNN_POINTWISE_DIV, e, &sum, w);
  const N* last = &w;
  if (drop) {
    const N& kept = g.pointwise(CUDNN_POINTWISE_MUL, w, &keep_mask(g, p));
    const N& scaled = g.virtual_tensor({p.B, p.H, p.L, p.S}, t);
    g.pointwise_into(CUDNN_POINTWISE_MUL, kept, &g.scalar(kAttnDropScale), scaled);
    last = &scaled;
  }
  const N& out = g.tensor(kAttnOut, t, {p.B, p.H, p.L, p.Dv}, dims_of(p.out));
  g.matmul(*last, v, out);
  return g.build(h, "fused attention forward " + p.describe());
}

std::shared_ptr<graph::ExecutionPlan> build_backward(const AttentionProblem& p, cudnnHandle_t h) {
  using N = GraphBuilder::Node;
  GraphBuilder g;
  const cudnnDataType_t t = cudnn_dtype(p.dtype);
  const bool drop = p.p > 0.0;
  const N& q = g.tensor(kAttnQ, t, {p.B, p.H, p.L, p.D}, dims_of(p.q));
  const N& kt = g.tensor(kAttnK, t, {p.B, p.H, p.D, p.S}, swapped(p.k));
  const N& vt = g.tensor(kAttnV, t, {p.B, p.H, p.Dv, p.S}, swapped(p.v));
  const N& out = g.tensor(kAttnOut, t, {p.B, p.H, p.L, p.Dv}, dims_of(p.out));
  const N& grad_out = g.tensor(kAttnGradOut, t, {p.B, p.H, p.L, p.Dv}, dims_of(p.out));
  const N& lse = g.tensor(kAttnStats, CUDNN_DATA_FLOAT, {p.B, p.H, p.L, 1}, row_strides(p));
  const N* keep = drop ? &keep_mask(g, p) : nullptr;
  const N* drop_scale = drop ? &g.scalar(kAttnDropScale) : nullptr;
  const N& scale = g.scalar(kAttnScale);

  // Row sums of grad_out * out, scaled by 1 - p (or 1): a float tensor in
  // memory, which the engines compute in a pass of their own first. The
  // product's virtual has the frontend's strides for it.
  const N& products =
      g.virtual_tensor({p.B, p.H, p.L, p.Dv}, CUDNN_DATA_FLOAT, {p.H * p.L * p.Dv, p.L * p.Dv, p.H * p.Dv, 1});
  g.pointwise_into(CUDNN_POINTWISE_MUL, grad_out, &out, products);
  const N& sums = g.virtual_tensor({p.B, p.H, p.L, 1}, CUDNN_DATA_FLOAT, row_strides(p));
  g.reduce(CUDNN_REDUCE_TENSOR_ADD, products, sums);
  const N& row_sums = g.tensor(kAttnRowSums, CUDNN_DATA_FLOAT, {p.B, p.H, p.L, 1}, row_strides(p));
  g.pointwise_into(CUDNN_POINTWISE_MUL, sums, drop ? &g.scalar(kAttnDropKeep) : &g.scalar(kAttnOne), row_sums);

  // The weights again, from the saved log-sum-exp; then grad_v.
  const N& w = g.pointwise(CUDNN_POINTWISE_EXP, g.pointwise(CUDNN_POINTWISE_SUB, scores(g, p, q, kt, scale), &lse));
  const N* wd = &w;
  if (drop) wd = &g.pointwise(CUDNN_POINTWISE_MUL, g.pointwise(CUDNN_POINTWISE_MUL, w, keep), drop_scale);
  const N& wd_t = g.virtual_tensor({p.B, p.H, p.S, p.L}, t, {p.H * p.L * p.S, p.L * p.S, 1, p.S});
  g.reshape(*wd, wd_t);
  g.matmul(wd_t, grad_out, g.tensor(kAttnGradV, t, {p.B, p.H, p.S, p.Dv}, dims_of(p.v)));

  // The scores' gradient.
  const N& dw = g.virtual_tensor({p.B, p.H, p.L, p.S});
  g.matmul(grad_out, vt, dw);
  const N* x = &dw;
  if (drop) x = &g.pointwise(CUDNN_POINTWISE_MUL, *x, keep);
  x = &g.pointwise(CUDNN_POINTWISE_MUL, g.pointwise(CUDNN_POINTWISE_SUB, *x, &row_sums), &w);
  if (drop) x = &g.pointwise(CUDNN_POINTWISE_MUL, *x, drop_scale);
  const N& ds = g.pointwise(CUDNN_POINTWISE_MUL, *x, &scale);

  // grad_k = ds^T @ q.
  const N& ds_t = g.virtual_tensor({p.B, p.H, p.S, p.L}, t, {p.H * p.L * p.S, p.L * p.S, 1, p.S});
  g.reshape(ds, ds_t);
  g.matmul(ds_t, q, g.tensor(kAttnGradK, t, {p.B, p.H, p.S, p.D}, dims_of(p.k)));

  // grad_q = ds @ k, accumulated in float memory of the plan's own, then rounded to T.
  const N& k = g.virtual_tensor({p.B, p.H, p.S, p.D}, CUDNN_DATA_FLOAT, dims_of(p.k));
  g.reshape(kt, k);
  const N& grad_q_float =
      g.tensor(kAttnGradQFloat, CUDNN_DATA_FLOAT, {p.B, p.H, p.L, p.D}, dense({p.B, p.H, p.L, p.D}));
  g.matmul(ds, k, grad_q_float);
  g.pointwise_into(CUDNN_POINTWISE_IDENTITY, grad_q_float, nullptr,
                   g.tensor(kAttnGradQ, t, {p.B, p.H, p.L, p.D}, dims_of(p.q)));
  return g.build(h, "fused attention backward " + p.describe());
}

// One plan per (pass, problem), null for a problem no engine takes: built
// once, refused once (build_plan says so under HEARTH_CUDNN_LOG=1).
std::shared_ptr<graph::ExecutionPlan> cached_plan(int pass, const AttentionProblem& p, cudnnHandle_t h) {
  static std::mutex mutex;
  static std::map<std::vector<int64_t>, std::shared_ptr<graph::ExecutionPlan>> cache;
  std::vector<int64_t> key = p.key(pass);
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  std::shared_ptr<graph::ExecutionPlan> plan;
  try {
    plan = pass == kForward ? build_forward(p, h) : build_backward(p, h);
  } catch (const Error& e) {
    // A descriptor this cuDNN does not accept: the same answer as no engine.
    if (switches::cudnn_log().get())
      std::fprintf(stderr, "[cudnn] fused attention %s %s: not described (%s); unfused for this shape\n",
                   pass == kForward ? "forward" : "backward", p.describe().c_str(), e.what());
  }
  std::lock_guard<std::mutex> lock(mutex);
  cache[std::move(key)] = plan;
  return plan;
}

}  // namespace

std::vector<int64_t> AttentionProblem::key(int pass) const {
  std::vector<int64_t> k{pass, device, static_cast<int64_t>(dtype), B, H, L, S, D, Dv};
  for (const auto* a : {&q, &this->k, &v, &out}) k.insert(k.end(), a->begin(), a->end());
  k.push_back(has_mask ? 1 : 0);
  if (has_mask) {
    k.insert(k.end(), mask_dims.begin(), mask_dims.end());
    k.insert(k.end(), mask.begin(), mask.end());
  }
  int64_t p_bits = 0;
  std::memcpy(&p_bits, &p, sizeof p_bits);
  k.insert(k.end(), {stats ? 1 : 0, p_bits});
  return k;
}

std::string AttentionProblem::describe() const {
  std::ostringstream s;
  s << "[B=" << B << " H=" << H << " L=" << L << " S=" << S << " D=" << D << " Dv=" << Dv << " " << dtype_name(dtype);
  if (has_mask)
    s << ", mask [" << mask_dims[0] << "," << mask_dims[1] << "," << mask_dims[2] << "," << mask_dims[3] << "]";
  if (p > 0) s << ", dropout " << p;
  s << (stats ? ", training]" : ", inference]");
  return s.str();
}

AttentionProblem attention_problem(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                                   const Tensor& mask, bool stats, double p) {
  AttentionProblem a;
  a.device = q.device().index;
  a.dtype = q.dtype();
  a.B = q.size(0);
  a.H = q.size(1);
  a.L = q.size(2);
  a.D = q.size(3);
  a.S = k.size(2);
  a.Dv = v.size(3);
  a.q = canonical_strides(q);
  a.k = canonical_strides(k);
  a.v = canonical_strides(v);
  a.out = canonical_strides(out);
  a.has_mask = mask.defined();
  if (a.has_mask) {
    a.mask_dims = {mask.size(0), mask.size(1), mask.size(2), mask.size(3)};
    a.mask = canonical_strides(mask);
  }
  a.stats = stats;
  a.p = p;
  return a;
}

std::shared_ptr<graph::ExecutionPlan> attention_forward_plan(const AttentionProblem& p, cudnnHandle_t h) {
  return cached_plan(kForward, p, h);
}

std::shared_ptr<graph::ExecutionPlan> attention_backward_plan(const AttentionProblem& p, cudnnHandle_t h) {
  return cached_plan(kBackward, p, h);
}

}  // namespace hearth::cuda
