// The hot CPU kernels' results at one CPU level (hearth/core/cpu_level.h), to
// compare across levels: run once with HEARTH_CPU_LEVEL=baseline to write the
// reference, then under each wider level to compare with it.
//   level_outputs write FILE      (the level in use must be the one HEARTH_CPU_LEVEL names)
//   level_outputs compare FILE
// Exits 77 (skipped) when this CPU or build lacks the level asked for, 1 when a
// result differs from the reference by more than float rounding allows (the
// wider levels may fuse a multiply and an add), 0 otherwise.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "hearth/core/cpu_level.h"
#include "hearth/core/generator.h"
#include "hearth/data/image_resize.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/reduction.h"
#include "hearth/optim/adam.h"

namespace {

using namespace hearth;
using Results = std::map<std::string, std::vector<float>>;

std::vector<float> values(const Tensor& t) { return t.contiguous().to(DType::float32).to_vector<float>(); }

// One of each kind of kernel compiled per level, on shapes with remainders
// after any vector width.
Results compute() {
  manual_seed(1234);
  Results r;
  Tensor a = randn({3, 5, 37}), b = randn({3, 5, 37});
  r["add"] = values(add(a, b));
  r["mul"] = values(mul(a, b));
  r["exp"] = values(exp(a));
  r["sqrt"] = values(sqrt(abs(a)));
  r["tanh"] = values(tanh(a));
  r["sigmoid"] = values(sigmoid(a));
  r["gelu"] = values(gelu(a));
  r["relu"] = values(relu(a));
  r["clamp"] = values(clamp(a, -0.5, 0.5));
  r["where"] = values(where(gt(a, b), a, b));
  r["sum"] = values(sum(a, {2}));
  r["amax"] = values(amax(a, {1}));
  r["var"] = values(var(a, {2}));
  r["norm"] = values(norm(a, 2.0, {2}));
  r["softmax"] = values(softmax(a, -1));
  r["log_softmax"] = values(log_softmax(a, 1));
  r["layer_norm"] = values(layer_norm(a, {37}));
  {  // dropout, the residual add and the layer norm in one kernel each way
    Tensor xd = randn({3, 5, 37}).requires_grad_();
    Tensor yd = dropout_add_layer_norm(xd, b, {37}, Tensor(), Tensor(), 0.3, true);
    sum(mul(yd, a)).backward();
    r["dropout_add_layer_norm"] = values(yd);
    r["dropout_add_layer_norm_dx"] = values(xd.grad());
  }

  // A convolution block forward and backward: im2col, batch norm, pooling.
  Tensor x = randn({2, 3, 13, 11}).requires_grad_();
  Tensor w = randn({5, 3, 3, 3}).requires_grad_();
  Tensor y = conv2d(x, w, Tensor(), {1, 1}, {1, 1});
  Tensor mean = zeros({5}), variance = ones({5});
  y = relu(batch_norm(y, mean, variance, Tensor(), Tensor(), /*training=*/true));
  y = add(max_pool2d(y, {2, 2}), avg_pool2d(y, {2, 2}));
  sum(mul(y, y)).backward();
  r["conv_block"] = values(y);
  r["conv_block_dx"] = values(x.grad());
  r["conv_block_dw"] = values(w.grad());

  // Two AdamW steps.
  Tensor p = randn({67}).requires_grad_();
  optim::AdamW adam({p}, {.lr = 0.1});
  for (int step = 0; step < 2; ++step) {
    adam.zero_grad();
    sum(mul(p, p)).backward();
    adam.step();
  }
  r["adamw"] = values(p.detach());

  // Image resizing, both the planar float path and the interleaved byte path.
  r["resize_float"] = values(data::resize_bilinear(rand({2, 3, 29, 31}), 13, 17));
  Tensor image = mul(rand({23, 19, 3}), 255.0).to(DType::uint8);
  r["resize_bytes"] = values(data::resize_bilinear(image, 9, 41));
  return r;
}

void write(const Results& r, const std::string& path) {
  std::ofstream out(path);
  out.precision(9);
  for (const auto& [name, v] : r) {
    out << name << ' ' << v.size();
    for (float f : v) out << ' ' << f;
    out << '\n';
  }
}

Results read(const std::string& path) {
  std::ifstream in(path);
  Results r;
  std::string name;
  size_t n = 0;
  while (in >> name >> n) {
    std::vector<float>& v = r[name];
    v.resize(n);
    for (float& f : v) in >> f;
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || (std::string(argv[1]) != "write" && std::string(argv[1]) != "compare")) {
    std::cerr << "usage: level_outputs write|compare FILE\n";
    return 2;
  }
  const char* asked = std::getenv("HEARTH_CPU_LEVEL");
  std::cout << "cpu kernels: " << cpu_level_description() << "\n";
  if (asked != nullptr && parse_cpu_level(asked) != cpu_level()) {
    std::cout << "skipped: this CPU or build does not support " << asked << "\n";
    return 77;
  }
  const Results now = compute();
  if (std::string(argv[1]) == "write") {
    write(now, argv[2]);
    return 0;
  }
  const Results reference = read(argv[2]);
  int failures = 0;
  for (const auto& [name, v] : now) {
    auto it = reference.find(name);
    if (it == reference.end() || it->second.size() != v.size()) {
      std::cout << name << ": missing from the reference or of another size\n";
      ++failures;
      continue;
    }
    double worst = 0.0;
    for (size_t i = 0; i < v.size(); ++i) {
      const double want = it->second[i], got = v[i];
      worst = std::max(worst, std::abs(got - want) / std::max(1.0, std::abs(want)));
    }
    const bool ok = worst <= 1e-5;
    std::printf("%-14s %8zu values, largest relative difference %.3g%s\n", name.c_str(), v.size(), worst,
                ok ? "" : "  FAIL");
    failures += ok ? 0 : 1;
  }
  return failures == 0 ? 0 : 1;
}
