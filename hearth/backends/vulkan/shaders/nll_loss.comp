#version 450
// nll_loss (OP 0: one invocation per row) and nll_loss_backward (OP 1: one
// invocation per element of grad_input) over dense [M, C]
// (hearth/dispatch/schemas/loss.h). A bad target: NaN loss and weight, zero gradient.
//   OP 0: b1 log_probs, b2 target, b3 weight?, b4 loss, b5 target_weight
//   OP 1: b1 grad_loss, b2 target, b3 weight?, b4 grad_input
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint OP = 0;

layout(std430, set = 0, binding = 0) readonly buffer Params {
  uint off_1;
  uint off_t;
  uint off_w;
  uint off_4;
  uint off_5;
  uint rows;
  uint classes;
  uint has_weight;
  uint ignore_lo;
  int ignore_hi;
}
p;
layout(std430, set = 0, binding = 1) readonly buffer B1 { float b1[]; };
layout(std430, set = 0, binding = 2) readonly buffer T { int64_t target[]; };
layout(std430, set = 0, binding = 3) readonly buffer W { float w[]; };
layout(std430, set = 0, binding = 4) writeonly buffer B4 { float b4[]; };
layout(std430, set = 0, binding = 5) writeonly buffer B5 { float b5[]; };

void main() {
  const int64_t ignore = (int64_t(p.ignore_hi) << 32) | int64_t(p.ignore_lo);
  const uint C = p.classes;
  const uint n = OP == 0u ? p.rows : p.rows * C;
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < n; i += step) {
    const uint r = OP == 0u ? i : i / C;
    const int64_t t = target[p.off_t + r];
    const bool ignored = t == ignore;
    const bool bad = !ignored && (t < 0 || t >= int64_t(C));
    const float wt = (ignored || bad) ? 0.0 : (p.has_weight != 0u ? w[p.off_w + uint(t)] : 1.0);
    if (OP == 0u) {
      if (ignored) {
        b4[p.off_4 + r] = 0.0;
        b5[p.off_5 + r] = 0.0;
      } else if (bad) {
        b4[p.off_4 + r] = 0.0 / 0.0;
        b5[p.off_5 + r] = 0.0 / 0.0;
      } else {
        b4[p.off_4 + r] = -wt * b1[p.off_1 + r * C + uint(t)];
        b5[p.off_5 + r] = wt;
      }
    } else {
      const uint c = i % C;
      b4[p.off_4 + i] = (!ignored && !bad && int64_t(c) == t) ? -b1[p.off_1 + r] * wt : 0.0;
    }
  }
}
