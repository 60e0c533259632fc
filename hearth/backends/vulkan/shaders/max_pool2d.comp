#version 450
// max_pool2d (OP 0: one invocation per output) and its backward (OP 1: one
// invocation per grad_x element, gathering from the outputs whose window
// holds it), float32, any memory format through strides
// (hearth/dispatch/schemas/pooling.h): padded cells are skipped, NaN wins,
// the first maximum in window order wins; indices are uint8 ky * kW + kx.
//   OP 0: b1 x, b2 out, b3 indices?
//   OP 1: b1 x? (when no indices), b2 grad_out, b3 indices?, b4 grad_x
#extension GL_EXT_shader_8bit_storage : require
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint OP = 0;

layout(std430, set = 0, binding = 0) readonly buffer Params {
  uint off_x;
  uint off_o;
  uint off_i;
  uint off_g;
  uint N, C, H, W, OH, OW, KH, KW;
  int sh, sw, ph, pw, dh, dw;
  uint has_indices;
  int x_s[4];
  int o_s[4];  // of out / grad_out and indices (one layout)
  int g_s[4];  // of grad_x
}
p;
layout(std430, set = 0, binding = 1) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 2) buffer O { float o[]; };
layout(std430, set = 0, binding = 3) buffer I { uint8_t idx[]; };
layout(std430, set = 0, binding = 4) writeonly buffer G { float gx[]; };

int xo(uint n, uint c, int h, int w) { return int(n) * p.x_s[0] + int(c) * p.x_s[1] + h * p.x_s[2] + w * p.x_s[3]; }
int oo(uint n, uint c, uint h, uint w) {
  return int(n) * p.o_s[0] + int(c) * p.o_s[1] + int(h) * p.o_s[2] + int(w) * p.o_s[3];
}

// The forward's argmax (ky * KW + kx) of output (n, c, oh, ow), and its value.
uint argmax_of(uint n, uint c, uint oh, uint ow, out float best) {
  uint arg = 0xffffffffu;
  best = 0.0;
  for (uint ky = 0; ky < p.KH; ++ky) {
    const int ih = int(oh) * p.sh - p.ph + int(ky) * p.dh;
    if (ih < 0 || ih >= int(p.H)) continue;
    for (uint kx = 0; kx < p.KW; ++kx) {
      const int iw = int(ow) * p.sw - p.pw + int(kx) * p.dw;
      if (iw < 0 || iw >= int(p.W)) continue;
      const float v = x[int(p.off_x) + xo(n, c, ih, iw)];
      if (arg == 0xffffffffu || (!isnan(best) && (isnan(v) || v > best))) {
        best = v;
        arg = ky * p.KW + kx;
      }
    }
  }
  return arg;
}

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  if (OP == 0u) {
    const uint total = p.N * p.C * p.OH * p.OW;
    for (uint i = gl_GlobalInvocationID.x; i < total; i += step) {
      const uint ow = i % p.OW, oh = (i / p.OW) % p.OH, c = (i / (p.OW * p.OH)) % p.C, n = i / (p.OW * p.OH * p.C);
      float best;
      const uint arg = argmax_of(n, c, oh, ow, best);
      const int at = oo(n, c, oh, ow);
      o[int(p.off_o) + at] = best;
      if (p.has_indices != 0u) idx[int(p.off_i) + at] = uint8_t(arg);
    }
  } else {
    const uint total = p.N * p.C * p.H * p.W;
    for (uint i = gl_GlobalInvocationID.x; i < total; i += step) {
      const uint iw = i % p.W, ih = (i / p.W) % p.H, c = (i / (p.W * p.H)) % p.C, n = i / (p.W * p.H * p.C);
      float acc = 0.0;
      for (uint ky = 0; ky < p.KH; ++ky) {
        const int th = int(ih) + p.ph - int(ky) * p.dh;
        if (th < 0 || th % p.sh != 0 || uint(th / p.sh) >= p.OH) continue;
        const uint oh = uint(th / p.sh);
        for (uint kx = 0; kx < p.KW; ++kx) {
          const int tw = int(iw) + p.pw - int(kx) * p.dw;
          if (tw < 0 || tw % p.sw != 0 || uint(tw / p.sw) >= p.OW) continue;
          const uint ow = uint(tw / p.sw);
          const int at = oo(n, c, oh, ow);
          uint arg;
          if (p.has_indices != 0u) {
            arg = uint(idx[int(p.off_i) + at]);
          } else {
            float best;
            arg = argmax_of(n, c, oh, ow, best);
          }
          if (arg == ky * p.KW + kx) acc += o[int(p.off_o) + at];
        }
      }
      gx[int(p.off_g) + int(n) * p.g_s[0] + int(c) * p.g_s[1] + int(ih) * p.g_s[2] + int(iw) * p.g_s[3]] = acc;
    }
  }
}
