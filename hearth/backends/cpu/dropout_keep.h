// Dropout's keep decision on the CPU, shared by every kernel that drops
// (dropout, attention_softmax, fused_attention, dropout_add_layer_norm), so
// they all drop the same elements for the same generator state: element i
// is kept when lane i % 4 of philox(offset + i / 4) maps to a value >= p
// (the CUDA kernels' dropout_keep in philox.cuh).
#pragma once

#include <array>
#include <cstdint>

#include "hearth/core/generator.h"

namespace hearth::cpu {

inline bool dropout_keeps(uint32_t lane_bits, double p) {
  return static_cast<double>(uint_to_unit_float(lane_bits)) >= p;
}

// Keep decisions for increasing (or repeated) element indices, drawing each
// Philox counter once for its four consecutive elements.
class DropoutKeep {
 public:
  DropoutKeep(uint64_t seed, uint64_t offset, double p) : seed_(seed), offset_(offset), p_(p) {}
  bool operator()(uint64_t i) {
    if (i / 4 != counter_) bits_ = philox4x32(offset_ + (counter_ = i / 4), 0, seed_);
    return dropout_keeps(bits_[i % 4], p_);
  }

 private:
  uint64_t seed_, offset_;
  double p_;
  uint64_t counter_ = ~uint64_t{0};
  std::array<uint32_t, 4> bits_{};
};

}  // namespace hearth::cpu
