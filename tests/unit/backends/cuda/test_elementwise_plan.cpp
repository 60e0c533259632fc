// The CUDA elementwise engine's host-side plan (hearth/backends/cuda/
// elementwise_plan.h), walked on the host: every element an operand layout
// reaches must be reached by the plan exactly once, with the same offsets in
// every operand, whether walked element by element or in vectors.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "hearth/backends/cuda/elementwise_plan.h"

namespace hearth::cuda {
namespace {

TEST(FastDivmod, MatchesIntegerDivision) {
  std::mt19937 rng(7);
  std::vector<uint32_t> divisors;
  for (uint32_t d = 1; d <= 3000; ++d) divisors.push_back(d);
  for (int s = 2; s < 31; ++s)
    for (int64_t delta : {-1, 0, 1}) divisors.push_back(static_cast<uint32_t>((int64_t{1} << s) + delta));
  for (int i = 0; i < 2000; ++i) divisors.push_back(1 + rng() % 0x7ffffffe);
  for (uint32_t d : divisors) {
    FastDivmod fd(d);
    std::vector<uint32_t> ns = {0, 1, d - 1, d, d + 1, 0x7fffffffu, 0x7fffffffu - d, 0x7fffffffu / d * d};
    for (int i = 0; i < 50; ++i) ns.push_back(rng() % 0x80000000u);
    for (uint32_t n : ns) {
      if (n > 0x7fffffffu) continue;
      uint32_t q, r;
      fd.divmod(n, q, r);
      ASSERT_EQ(q, n / d) << n << " / " << d;
      ASSERT_EQ(r, n % d) << n << " % " << d;
    }
  }
}

template <int N>
using Tuple = std::array<int64_t, N>;

// Byte offsets of every operand at every index of `shape`, the plain way.
template <int N>
std::vector<Tuple<N>> naive(const std::vector<int64_t>& shape, const std::array<std::vector<int64_t>, N>& strides) {
  std::vector<Tuple<N>> all;
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  for (int64_t lin = 0; lin < n; ++lin) {
    Tuple<N> t{};
    int64_t rest = lin;
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      const int64_t i = rest % shape[d];
      rest /= shape[d];
      for (int k = 0; k < N; ++k) t[k] += i * strides[k][d];
    }
    all.push_back(t);
  }
  std::sort(all.begin(), all.end());
  return all;
}

// The same offsets as the device would compute them from an element plan.
template <int N>
std::vector<Tuple<N>> walk_elements(const IterDims<N>& dims) {
  const OffsetCalc32<N> oc = make_offset_calc32(dims);
  std::vector<Tuple<N>> all;
  for (int64_t i = 0; i < dims.numel(); ++i) {
    int32_t off[N];
    oc.get(static_cast<uint32_t>(i), off);
    Tuple<N> t;
    for (int k = 0; k < N; ++k) t[k] = off[k];
    all.push_back(t);
  }
  std::sort(all.begin(), all.end());
  return all;
}

// ... and from a vector plan of width `vec` (elements j of a vector at
// j * element size, broadcast operands repeated), with its tail.
template <int N>
std::vector<Tuple<N>> walk_vectors(const VectorPlan<N>& plan, int vec, const std::array<int, N>& elem) {
  const OffsetCalc32<N> oc = make_offset_calc32(plan.dims);
  std::vector<Tuple<N>> all;
  const int64_t count = plan.dims.numel();
  for (int64_t v = 0; v < count; ++v) {
    int32_t off[N];
    oc.get(static_cast<uint32_t>(v), off);
    for (int j = 0; j < vec; ++j) {
      Tuple<N> t;
      for (int k = 0; k < N; ++k) t[k] = off[k] + (((plan.broadcast_mask >> k) & 1u) ? 0 : j * elem[k]);
      all.push_back(t);
    }
  }
  for (int64_t e = count * vec; e < count * vec + plan.tail; ++e) {
    Tuple<N> t;
    for (int k = 0; k < N; ++k) t[k] = e * plan.tail_strides[k];
    all.push_back(t);
  }
  std::sort(all.begin(), all.end());
  return all;
}

// Element strides -> byte strides.
template <int N>
std::array<std::vector<int64_t>, N> bytes(std::array<std::vector<int64_t>, N> s, const std::array<int, N>& elem) {
  for (int k = 0; k < N; ++k)
    for (int64_t& v : s[k]) v *= elem[k];
  return s;
}

template <int N>
IterDims<N> check_walks(const std::vector<int64_t>& shape, const std::array<std::vector<int64_t>, N>& elem_strides,
                        const std::array<int, N>& elem, int vec, bool expect_vectors) {
  const auto strides = bytes<N>(elem_strides, elem);
  const IterDims<N> dims = collapse_dims<N>(shape, strides);
  EXPECT_TRUE(fits_int32(dims));
  const auto expected = naive<N>(shape, strides);
  EXPECT_EQ(walk_elements(dims), expected);
  VectorPlan<N> plan;
  std::array<uintptr_t, N> aligned{};
  const bool vectors = plan_vectors<N>(dims, vec, elem, aligned, plan);
  EXPECT_EQ(vectors, expect_vectors);
  if (vectors) {
    EXPECT_EQ(walk_vectors<N>(plan, vec, elem), expected);
  }
  return dims;
}

TEST(ElementwisePlan, HeadSplitPermuteIsFourDimsOfVectors) {
  // [B,S,H,D] = [4,6,3,16] read as [B,H,S,D] into a contiguous output, bf16.
  const int64_t B = 4, S = 6, H = 3, D = 16;
  const IterDims<2> dims =
      check_walks<2>({B, H, S, D}, {{{H * S * D, S * D, D, 1}, {S * H * D, D, H * D, 1}}}, {2, 2}, 8, true);
  EXPECT_EQ(dims.ndim(), 4);
  TransposePlan tp;
  EXPECT_FALSE(plan_transpose(dims, 2, tp));  // innermost dim dense on both sides: vectors, not tiles
}

TEST(ElementwisePlan, MaskBroadcastOverHeadsAndRowsMergesThem) {
  // out, scores [B,H,S,S]; mask [B,1,1,S] broadcast (stride 0) over heads and rows.
  const int64_t B = 3, H = 4, S = 24;
  const IterDims<3> dims = check_walks<3>(
      {B, H, S, S}, {{{H * S * S, S * S, S, 1}, {H * S * S, S * S, S, 1}, {S, 0, 0, 1}}}, {2, 2, 2}, 8, true);
  ASSERT_EQ(dims.ndim(), 3);
  EXPECT_EQ(dims.sizes, (std::vector<int64_t>{S, H * S, B}));
  EXPECT_EQ(dims.strides[1][2], 0);
}

TEST(ElementwisePlan, ChannelBiasOverAnNhwcOutputIsTwoDimsOfVectors) {
  // A channels_last convolution's output [N,C,H,W] += bias [C] (as [1,C,1,1]):
  // the bias is dense along the innermost (channel) dim and broadcast over
  // the pixels, which merge into one dim.
  const int64_t N = 2, C = 64, H = 5, W = 7;
  const std::vector<int64_t> nhwc = {H * W * C, 1, W * C, C};
  const IterDims<3> dims = check_walks<3>({N, C, H, W}, {{nhwc, nhwc, {0, 1, 0, 0}}}, {2, 2, 2}, 8, true);
  ASSERT_EQ(dims.ndim(), 2);
  EXPECT_EQ(dims.sizes, (std::vector<int64_t>{C, N * H * W}));
  EXPECT_EQ(dims.strides[1][2], 0);  // dim 1 (the pixels), operand 2 (the bias)
}

TEST(ElementwisePlan, ScalarOperandIsOneBroadcastDim) {
  const IterDims<3> dims =
      check_walks<3>({5, 7, 24}, {{{168, 24, 1}, {168, 24, 1}, {0, 0, 0}}}, {2, 2, 2}, 8, true);
  EXPECT_EQ(dims.ndim(), 1);
  VectorPlan<3> plan;
  ASSERT_TRUE(plan_vectors<3>(dims, 8, {2, 2, 2}, {0, 0, 0}, plan));
  EXPECT_EQ(plan.broadcast_mask, 4u);
}

TEST(ElementwisePlan, OddDenseSizeLeavesATail) {
  const IterDims<2> dims = check_walks<2>({3, 37}, {{{37, 1}, {37, 1}}}, {2, 4}, 8, true);
  EXPECT_EQ(dims.ndim(), 1);
  VectorPlan<2> plan;
  ASSERT_TRUE(plan_vectors<2>(dims, 8, {2, 4}, {0, 0}, plan));
  EXPECT_EQ(plan.tail, 111 % 8);
  EXPECT_EQ(plan.dims.sizes[0], 111 / 8);
}

TEST(ElementwisePlan, OddInnerSizeOfSeveralDimsFallsBackToElements) {
  check_walks<2>({5, 3, 13}, {{{39, 13, 1}, {13, 65, 1}}}, {4, 4}, 4, false);
}

TEST(ElementwisePlan, MisalignedAddressOrStrideFallsBackToElements) {
  const auto strides = bytes<2>({{{64, 1}, {65, 1}}}, {2, 2});
  const IterDims<2> dims = collapse_dims<2>({9, 64}, strides);
  VectorPlan<2> plan;
  EXPECT_FALSE(plan_vectors<2>(dims, 8, {2, 2}, {0, 0}, plan));  // a source row starts every 130 bytes
  const IterDims<2> dense = collapse_dims<2>({9, 64}, bytes<2>({{{64, 1}, {64, 1}}}, {2, 2}));
  EXPECT_TRUE(plan_vectors<2>(dense, 8, {2, 2}, {0, 0}, plan));
  EXPECT_FALSE(plan_vectors<2>(dense, 8, {2, 2}, {0, 2}, plan));  // an offset view one element in
  // float -> bf16 with 8 per vector: the float operand takes two 16-byte accesses, 16-aligned.
  const IterDims<2> cast = collapse_dims<2>({9, 64}, bytes<2>({{{64, 1}, {64, 1}}}, {2, 4}));
  EXPECT_TRUE(plan_vectors<2>(cast, 8, {2, 4}, {16, 48}, plan));
  EXPECT_FALSE(plan_vectors<2>(cast, 8, {2, 4}, {16, 40}, plan));
}

TEST(ElementwisePlan, PermutedOutputIsWalkedInItsMemoryOrder) {
  // The output is a transposed view; inputs contiguous in the same permuted order.
  const IterDims<2> dims = check_walks<2>({6, 40}, {{{1, 6}, {1, 6}}}, {4, 4}, 4, true);
  EXPECT_EQ(dims.ndim(), 1);
  // channels_last [2,3,4,5] everywhere: one dense dim.
  const IterDims<3> cl =
      check_walks<3>({2, 3, 4, 5}, {{{60, 1, 15, 3}, {60, 1, 15, 3}, {60, 1, 15, 3}}}, {4, 4, 4}, 4, true);
  EXPECT_EQ(cl.ndim(), 1);
}

TEST(ElementwisePlan, FiveDimsWithMiddleBroadcastAndNegativeStride) {
  check_walks<3>({3, 2, 5, 4, 16}, {{{640, 320, 64, 16, 1}, {16, 0, 48, 0, 1}, {0, 32, 0, 16, -1}}}, {4, 4, 4}, 4,
                 false);
  check_walks<3>({3, 2, 5, 4, 16}, {{{640, 320, 64, 16, 1}, {16, 0, 48, 0, 1}, {0, 32, 0, 16, 1}}}, {4, 4, 4}, 4,
                 true);
}

TEST(ElementwisePlan, TransposeOfTheLastTwoDimsIsTiled) {
  // dst [5, 37, 19] contiguous from src [5, 19, 37] transposed.
  const auto strides = bytes<2>({{{703, 19, 1}, {703, 1, 37}}}, {2, 2});
  const IterDims<2> dims = collapse_dims<2>({5, 37, 19}, strides);
  TransposePlan tp;
  ASSERT_TRUE(plan_transpose(dims, 2, tp));
  EXPECT_EQ(tp.cols, 19);
  EXPECT_EQ(tp.rows, 37);
  EXPECT_EQ(tp.src_col_stride, 74);
  EXPECT_EQ(tp.dst_row_stride, 38);
  EXPECT_EQ(tp.batch.sizes, (std::vector<int64_t>{5}));
  // Too narrow a side (NCHW -> NHWC with 3 channels): elements instead.
  const IterDims<2> narrow = collapse_dims<2>({2, 3, 40}, bytes<2>({{{120, 40, 1}, {120, 1, 3}}}, {4, 4}));
  EXPECT_FALSE(plan_transpose(narrow, 4, tp));
}

TEST(ElementwisePlan, OffsetsPast32BitsUseTheWideCalculator) {
  const IterDims<2> dims = collapse_dims<2>({3, 1 << 20}, {{{int64_t{1} << 30, 2}, {0, 2}}});
  EXPECT_FALSE(fits_int32(dims));
  const IterDims<1> many = collapse_dims<1>({int64_t{1} << 31}, {{{1}}});
  EXPECT_FALSE(fits_int32(many));
}

}  // namespace
}  // namespace hearth::cuda
