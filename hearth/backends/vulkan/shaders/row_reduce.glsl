// Workgroup-wide reductions for shaders that give one workgroup to one row.
// Needs `#define WG gl_WorkGroupSize.x` (a power of two) before inclusion.
// Every invocation of the workgroup must call them (they hold barriers).
shared float s_reduce[WG];

float workgroup_sum(float v) {
  const uint t = gl_LocalInvocationID.x;
  s_reduce[t] = v;
  barrier();
  for (uint s = WG / 2; s > 0; s >>= 1) {
    if (t < s) s_reduce[t] += s_reduce[t + s];
    barrier();
  }
  const float r = s_reduce[0];
  barrier();
  return r;
}

// NaN propagates.
float workgroup_max(float v) {
  const uint t = gl_LocalInvocationID.x;
  s_reduce[t] = v;
  barrier();
  for (uint s = WG / 2; s > 0; s >>= 1) {
    if (t < s) {
      const float o = s_reduce[t + s];
      if (isnan(o) || o > s_reduce[t]) s_reduce[t] = o;
    }
    barrier();
  }
  const float r = s_reduce[0];
  barrier();
  return r;
}
