// Weights in the layouts oneDNN's primitives chose for them, kept between
// calls. A forward or backward-data primitive on blocked weights reads them
// through a reorder; evaluation reads the same weights batch after batch, so
// each is reordered twice (below) instead of at every call. A weight is found
// again by its storage, held weakly (a freed storage can neither be kept
// alive nor mistaken for a new one at its address), the storage's version
// counter (an optimizer step, a loaded state dict or any in-place write bumps
// it, and the next call reorders again), the first element's address, and
// both layouts.
//
// A copy is kept only from the second call that finds its weight unchanged:
// in training every step changes the weights before they are read again (the
// forward and the backward-data choose different layouts), so keeping the
// first copy would hold a blocked duplicate of every convolution's weights
// for nothing. In evaluation the price is one such duplicate, as long as the
// weights live.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "hearth/core/tensor.h"

namespace hearth::cpu::onednn {

class ReorderedWeights {
 public:
  // `weight` (whose layout is `user`) in layout `inner`: the kept copy, or a
  // new one made by `reorder` (user -> inner), kept if this is the second
  // call to find the weight unchanged.
  dnnl::memory get(const Tensor& weight, const dnnl::memory::desc& user, const dnnl::memory::desc& inner,
                   const dnnl::reorder& reorder);

  // Reorders made and calls served from a kept copy, for tests and benchmarks.
  size_t reorders() const;
  size_t hits() const;

 private:
  struct Entry {
    std::weak_ptr<Storage> storage;
    uint32_t version = 0;
    dnnl::memory::desc user, inner;
    dnnl::memory copy;  // empty until a second call finds the weight unchanged
  };
  // A model has tens of convolutions.
  static constexpr size_t kMaxEntries = 512;

  // Drops the entries of freed weights; all entries if that is not enough.
  void forget_freed_weights();

  mutable std::mutex mutex_;
  std::map<const void*, std::vector<Entry>> by_address_;
  size_t entries_ = 0;
  size_t reorders_ = 0, hits_ = 0;
};

// The process's one cache.
ReorderedWeights& reordered_weights();

}  // namespace hearth::cpu::onednn
