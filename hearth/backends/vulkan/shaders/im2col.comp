#version 450
// The column matrix of a convolution and its reverse, for convolutions as
// GEMMs (conv2d.cpp), float32. For channels [c0, c0 + Cg) of x [N, C, H, W]
// (any strides), cols [N, Cg * KH * KW, OH * OW] is dense:
//   OP 0 im2col: cols[n, (c, kh, kw), (oh, ow)] = x[n, c0 + c, oh sh - ph + kh dh, ow sw - pw + kw dw] (0 outside)
//   OP 1 col2im: gx[n, c0 + c, ih, iw] = sum of the cols entries that im2col took from there (+ partial)
//   b1 x or grad_x, b2 cols, b3 partial? (grad_x's layout)
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint OP = 0;

layout(std430, set = 0, binding = 0) readonly buffer Params {
  uint off_x;
  uint off_c;
  uint off_p;
  uint N, Cg, c0, H, W, OH, OW, KH, KW;
  int sh, sw, ph, pw, dh, dw;
  uint has_partial;
  int x_s[4];
}
p;
layout(std430, set = 0, binding = 1) buffer X { float x[]; };
layout(std430, set = 0, binding = 2) buffer Cols { float cols[]; };
layout(std430, set = 0, binding = 3) readonly buffer Partial { float partial[]; };

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  const uint S = p.OH * p.OW, K = p.Cg * p.KH * p.KW;
  if (OP == 0u) {
    const uint total = p.N * K * S;
    for (uint i = gl_GlobalInvocationID.x; i < total; i += step) {
      const uint s = i % S, k = (i / S) % K, n = i / (S * K);
      const uint kw = k % p.KW, kh = (k / p.KW) % p.KH, c = k / (p.KW * p.KH);
      const uint ow = s % p.OW, oh = s / p.OW;
      const int ih = int(oh) * p.sh - p.ph + int(kh) * p.dh;
      const int iw = int(ow) * p.sw - p.pw + int(kw) * p.dw;
      float v = 0.0;
      if (ih >= 0 && ih < int(p.H) && iw >= 0 && iw < int(p.W))
        v = x[int(p.off_x) + int(n) * p.x_s[0] + int(p.c0 + c) * p.x_s[1] + ih * p.x_s[2] + iw * p.x_s[3]];
      cols[p.off_c + i] = v;
    }
  } else {
    const uint total = p.N * p.Cg * p.H * p.W;
    for (uint i = gl_GlobalInvocationID.x; i < total; i += step) {
      const uint iw = i % p.W, ih = (i / p.W) % p.H, c = (i / (p.W * p.H)) % p.Cg, n = i / (p.W * p.H * p.Cg);
      float acc = 0.0;
      for (uint kh = 0; kh < p.KH; ++kh) {
        const int th = int(ih) + p.ph - int(kh) * p.dh;
        if (th < 0 || th % p.sh != 0 || uint(th / p.sh) >= p.OH) continue;
        for (uint kw = 0; kw < p.KW; ++kw) {
          const int tw = int(iw) + p.pw - int(kw) * p.dw;
          if (tw < 0 || tw % p.sw != 0 || uint(tw / p.sw) >= p.OW) continue;
          const uint s = uint(th / p.sh) * p.OW + uint(tw / p.sw);
          acc += cols[p.off_c + (n * K + (c * p.KH + kh) * p.KW + kw) * S + s];
        }
      }
      const int at = int(n) * p.x_s[0] + int(p.c0 + c) * p.x_s[1] + int(ih) * p.x_s[2] + int(iw) * p.x_s[3];
      if (p.has_partial != 0u) acc += partial[int(p.off_p) + at];
      x[int(p.off_x) + at] = acc;
    }
  }
}
