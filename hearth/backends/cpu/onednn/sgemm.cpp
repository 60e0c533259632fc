// Float32 GEMMs through oneDNN's sgemm. OpenBLAS picks its kernels by CPU
// model, and on a model it does not know (a new one, or one a virtual machine
// hides) it falls back to older instruction sets: AVX2 kernels on an AVX-512
// machine, ~115 against oneDNN's ~210 GFLOP/s per core here, and far slower
// on the 16-core GPU hosts, where BERT-base's CPU step spent 92% of its time in
// GEMMs at ~17 GFLOP/s per core. oneDNN dispatches on the instruction sets
// the CPU reports.
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <atomic>

#include "hearth/backends/cpu/onednn/onednn.h"
#include "hearth/backends/cpu/parallel.h"
#include "hearth/dispatch/cpu_reference.h"

namespace hearth::cpu::onednn {
namespace {

std::atomic<uint64_t> g_sgemm_calls{0};

// oneDNN threads a call over omp_get_max_threads() unless it runs inside a
// parallel region; a small product (or one the caller wants on its own
// thread) is run with the calling thread's team size set to 1 for the call.
class OneThread {
 public:
  OneThread() : saved_(omp_get_max_threads()) { omp_set_num_threads(1); }
  ~OneThread() { omp_set_num_threads(saved_); }

 private:
  int saved_;
};

}  // namespace

bool sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
           const float* b, int64_t ldb, float beta, float* c, int64_t ldc, bool threaded) {
  if (cpu_reference_forced()) return false;
  // oneDNN checks leading dimensions against the row length even for one row.
  lda = std::max<int64_t>({lda, trans_a ? m : k, 1});
  ldb = std::max<int64_t>({ldb, trans_b ? k : n, 1});
  ldc = std::max<int64_t>({ldc, n, 1});
  dnnl_status_t status;
  if (threaded && !in_parallel_region()) {
    status = dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  } else {
    OneThread one;
    status = dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
  if (status != dnnl_success) return false;  // nothing written: the reference computes it
  g_sgemm_calls.fetch_add(1, std::memory_order_relaxed);
  return true;
}

uint64_t sgemm_calls() { return g_sgemm_calls.load(std::memory_order_relaxed); }

}  // namespace hearth::cpu::onednn
