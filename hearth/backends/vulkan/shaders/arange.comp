#version 450
// arange_: t[i] = start + i * step over a contiguous 1-D tensor
// (hearth/dispatch/schemas/range.h). OP 0 in int64 (integer start and step),
// OP 1 in float32 (the CPU computes in double, then rounds: equal wherever
// float32 represents start + i * step exactly, off by float32 rounding elsewhere).
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint OP = 0;
layout(constant_id = 2) const uint DT = 0;

layout(std430, set = 0, binding = 0) readonly buffer Params {
  uint off_t;
  uint n;
  uint start_lo;
  int start_hi;
  uint step_lo;
  int step_hi;
  float fstart;
  float fstep;
}
p;
layout(std430, set = 0, binding = 1) writeonly buffer TF { float tf[]; };
layout(std430, set = 0, binding = 1) writeonly buffer TL { int64_t tl[]; };
layout(std430, set = 0, binding = 1) writeonly buffer TI { int ti[]; };

void main() {
  const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
    if (OP == 0u) {
      const int64_t v = ((int64_t(p.start_hi) << 32) | int64_t(p.start_lo)) +
                        int64_t(i) * ((int64_t(p.step_hi) << 32) | int64_t(p.step_lo));
      if (DT == 0u) tf[p.off_t + i] = float(v);
      else if (DT == 4u) tl[p.off_t + i] = v;
      else ti[p.off_t + i] = int(v);
    } else {
      const float v = p.fstart + float(i) * p.fstep;
      if (DT == 0u) tf[p.off_t + i] = v;
      else if (DT == 4u) tl[p.off_t + i] = int64_t(v);
      else ti[p.off_t + i] = int(v);
    }
  }
}
