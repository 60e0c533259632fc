#version 450
// Direct 2-D convolution, float32, any memory format (every image tensor is
// read and written through its strides; shapes are logical [N, C, H, W]),
// with groups, stride, padding and dilation (hearth/dispatch/schemas/conv2d.h).
//   OP 0 forward:          one invocation per out element; b1 x, b2 weight, b3 out, b4 bias?
//   OP 1 backward_input:   one invocation per grad_x element; b1 grad_x, b2 weight, b3 grad_out, b5 partial?
//   OP 2 backward_weight:  one workgroup per grad_weight element, reducing over (n, oh, ow);
//                          b1 x, b2 grad_weight, b3 grad_out
//   OP 3 backward_bias:    one workgroup per channel o, reducing over (n, oh, ow); b3 grad_out, b4 grad_bias
layout(local_size_x_id = 0) in;
#define WG gl_WorkGroupSize.x
layout(constant_id = 1) const uint OP = 0;

layout(std430, set = 0, binding = 0) readonly buffer Params {
  uint off_img;
  uint off_w;
  uint off_out;
  uint off_bias;
  uint off_partial;
  uint N, C, H, W, O, OH, OW, KH, KW;
  int sh, sw, ph, pw, dh, dw;
  uint groups;
  uint has_bias;
  uint has_partial;
  int img_s[4];  // strides of x / grad_x (n, c, h, w)
  int w_s[4];    // of weight / grad_weight (o, cg, kh, kw)
  int out_s[4];  // of out / grad_out (n, o, oh, ow)
}
p;
layout(std430, set = 0, binding = 1) buffer Img { float img[]; };
layout(std430, set = 0, binding = 2) buffer Wt { float wt[]; };
layout(std430, set = 0, binding = 3) buffer Out { float outv[]; };
layout(std430, set = 0, binding = 4) buffer Bias { float bias[]; };
layout(std430, set = 0, binding = 5) readonly buffer Partial { float partial[]; };

#include "row_reduce.glsl"

uint img_at(uint n, uint c, int h, int w) {
  return uint(int(p.off_img) + int(n) * p.img_s[0] + int(c) * p.img_s[1] + h * p.img_s[2] + w * p.img_s[3]);
}
uint w_at(uint o, uint cg, uint kh, uint kw) {
  return uint(int(p.off_w) + int(o) * p.w_s[0] + int(cg) * p.w_s[1] + int(kh) * p.w_s[2] + int(kw) * p.w_s[3]);
}
uint out_at(uint n, uint o, uint oh, uint ow) {
  return uint(int(p.off_out) + int(n) * p.out_s[0] + int(o) * p.out_s[1] + int(oh) * p.out_s[2] + int(ow) * p.out_s[3]);
}

void main() {
  const uint Cg = p.C / p.groups, Og = p.O / p.groups;
  if (OP == 0u) {
    const uint total = p.N * p.O * p.OH * p.OW;
    const uint step = gl_NumWorkGroups.x * WG;
    for (uint i = gl_GlobalInvocationID.x; i < total; i += step) {
      const uint ow = i % p.OW, oh = (i / p.OW) % p.OH, o = (i / (p.OW * p.OH)) % p.O, n = i / (p.OW * p.OH * p.O);
      const uint g = o / Og;
      float acc = p.has_bias != 0u ? bias[p.off_bias + o] : 0.0;
      for (uint cg = 0; cg < Cg; ++cg)
        for (uint kh = 0; kh < p.KH; ++kh) {
          const int ih = int(oh) * p.sh - p.ph + int(kh) * p.dh;
          if (ih < 0 || ih >= int(p.H)) continue;
          for (uint kw = 0; kw < p.KW; ++kw) {
            const int iw = int(ow) * p.sw - p.pw + int(kw) * p.dw;
            if (iw < 0 || iw >= int(p.W)) continue;
            acc += img[img_at(n, g * Cg + cg, ih, iw)] * wt[w_at(o, cg, kh, kw)];
          }
        }
      outv[out_at(n, o, oh, ow)] = acc;
    }
  } else if (OP == 1u) {
    const uint total = p.N * p.C * p.H * p.W;
    const uint step = gl_NumWorkGroups.x * WG;
    for (uint i = gl_GlobalInvocationID.x; i < total; i += step) {
      const uint iw = i % p.W, ih = (i / p.W) % p.H, c = (i / (p.W * p.H)) % p.C, n = i / (p.W * p.H * p.C);
      const uint g = c / Cg, cg = c % Cg;
      float acc = 0.0;
      for (uint kh = 0; kh < p.KH; ++kh) {
        const int th = int(ih) + p.ph - int(kh) * p.dh;
        if (th < 0 || th % p.sh != 0) continue;
        const uint oh = uint(th / p.sh);
        if (oh >= p.OH) continue;
        for (uint kw = 0; kw < p.KW; ++kw) {
          const int tw = int(iw) + p.pw - int(kw) * p.dw;
          if (tw < 0 || tw % p.sw != 0) continue;
          const uint ow = uint(tw / p.sw);
          if (ow >= p.OW) continue;
          for (uint og = 0; og < Og; ++og) {
            const uint o = g * Og + og;
            acc += outv[out_at(n, o, oh, ow)] * wt[w_at(o, cg, kh, kw)];
          }
        }
      }
      const uint at = img_at(n, c, int(ih), int(iw));
      if (p.has_partial != 0u) acc += partial[p.off_partial + (at - p.off_img)];
      img[at] = acc;
    }
  } else {
    const uint per = p.N * p.OH * p.OW;
    const uint items = OP == 2u ? p.O * Cg * p.KH * p.KW : p.O;
    for (uint item = gl_WorkGroupID.x; item < items; item += gl_NumWorkGroups.x) {
      uint o, cg = 0, kh = 0, kw = 0;
      if (OP == 2u) {
        kw = item % p.KW;
        kh = (item / p.KW) % p.KH;
        cg = (item / (p.KW * p.KH)) % Cg;
        o = item / (p.KW * p.KH * Cg);
      } else {
        o = item;
      }
      const uint c = (o / Og) * Cg + cg;
      float acc = 0.0;
      for (uint j = gl_LocalInvocationID.x; j < per; j += WG) {
        const uint ow = j % p.OW, oh = (j / p.OW) % p.OH, n = j / (p.OW * p.OH);
        const float go = outv[out_at(n, o, oh, ow)];
        if (OP == 3u) {
          acc += go;
          continue;
        }
        const int ih = int(oh) * p.sh - p.ph + int(kh) * p.dh;
        const int iw = int(ow) * p.sw - p.pw + int(kw) * p.dw;
        if (ih < 0 || ih >= int(p.H) || iw < 0 || iw >= int(p.W)) continue;
        acc += go * img[img_at(n, c, ih, iw)];
      }
      acc = workgroup_sum(acc);
      if (gl_LocalInvocationID.x == 0u) {
        if (OP == 2u)
          wt[w_at(o, cg, kh, kw)] = acc;
        else
          bias[p.off_bias + o] = acc;
      }
    }
  }
}
