#version 450
// Average pooling, float32, any memory format through strides
// (hearth/dispatch/schemas/pooling.h):
//   OP 0 avg_pool2d: window [o s - p, o s - p + k) clipped to [0, in + p), cells
//        outside [0, in) skipped; divisor the clipped size (count_include_pad) or
//        the cells inside
//   OP 2 adaptive_avg_pool2d: window [floor(o in / out), ceil((o + 1) in / out))
//   OP 1, 3: their backwards, one invocation per grad_x element gathering
//        from every output whose window holds it.
//   b1 x or grad_out (the read side), b2 out or grad_x (the written side)
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint OP = 0;

layout(std430, set = 0, binding = 0) readonly buffer Params {
  uint off_a;
  uint off_b;
  uint N, C, H, W, OH, OW, KH, KW;
  int sh, sw, ph, pw;
  uint count_pad;
  int a_s[4];
  int b_s[4];
}
p;
layout(std430, set = 0, binding = 1) readonly buffer A { float a[]; };
layout(std430, set = 0, binding = 2) writeonly buffer B { float b[]; };

// Output o's window along one dim: [begin, end) and its divisor extent.
ivec3 window(uint o, uint in_size, uint out_size, uint k, int s, int pad) {
  if (OP >= 2u) {
    const int begin = int((o * in_size) / out_size), end = int(((o + 1u) * in_size + out_size - 1u) / out_size);
    return ivec3(begin, end, end - begin);
  }
  int begin = int(o) * s - pad;
  int end = min(begin + int(k), int(in_size) + pad);
  const int padded = end - begin;
  begin = max(begin, 0);
  end = min(end, int(in_size));
  return ivec3(begin, end, p.count_pad != 0u ? padded : end - begin);
}

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  const bool forward = OP == 0u || OP == 2u;
  const uint total = forward ? p.N * p.C * p.OH * p.OW : p.N * p.C * p.H * p.W;
  for (uint i = gl_GlobalInvocationID.x; i < total; i += step) {
    if (forward) {
      const uint ow = i % p.OW, oh = (i / p.OW) % p.OH, c = (i / (p.OW * p.OH)) % p.C, n = i / (p.OW * p.OH * p.C);
      const ivec3 wy = window(oh, p.H, p.OH, p.KH, p.sh, p.ph), wx = window(ow, p.W, p.OW, p.KW, p.sw, p.pw);
      float s = 0.0;
      for (int y = wy.x; y < wy.y; ++y)
        for (int x = wx.x; x < wx.y; ++x)
          s += a[int(p.off_a) + int(n) * p.a_s[0] + int(c) * p.a_s[1] + y * p.a_s[2] + x * p.a_s[3]];
      b[int(p.off_b) + int(n) * p.b_s[0] + int(c) * p.b_s[1] + int(oh) * p.b_s[2] + int(ow) * p.b_s[3]] =
          s / float(wy.z * wx.z);
    } else {
      const uint iw = i % p.W, ih = (i / p.W) % p.H, c = (i / (p.W * p.H)) % p.C, n = i / (p.W * p.H * p.C);
      // The outputs whose (unclipped) windows can reach the cell; all of them for adaptive pooling.
      uint oh0 = 0, oh1 = p.OH, ow0 = 0, ow1 = p.OW;
      if (OP == 1u) {
        oh0 = uint(max(0, (int(ih) + p.ph - int(p.KH) + p.sh) / p.sh));
        oh1 = min(p.OH, uint((int(ih) + p.ph) / p.sh) + 1u);
        ow0 = uint(max(0, (int(iw) + p.pw - int(p.KW) + p.sw) / p.sw));
        ow1 = min(p.OW, uint((int(iw) + p.pw) / p.sw) + 1u);
      }
      float s = 0.0;
      for (uint oh = oh0; oh < oh1; ++oh) {
        const ivec3 wy = window(oh, p.H, p.OH, p.KH, p.sh, p.ph);
        if (int(ih) < wy.x || int(ih) >= wy.y) continue;
        for (uint ow = ow0; ow < ow1; ++ow) {
          const ivec3 wx = window(ow, p.W, p.OW, p.KW, p.sw, p.pw);
          if (int(iw) < wx.x || int(iw) >= wx.y) continue;
          s += a[int(p.off_a) + int(n) * p.a_s[0] + int(c) * p.a_s[1] + int(oh) * p.a_s[2] + int(ow) * p.a_s[3]] /
               float(wy.z * wx.z);
        }
      }
      b[int(p.off_b) + int(n) * p.b_s[0] + int(c) * p.b_s[1] + int(ih) * p.b_s[2] + int(iw) * p.b_s[3]] = s;
    }
  }
}
