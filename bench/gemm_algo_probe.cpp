// cuBLASLt's ranking of algorithms for BERT-base's linear GEMMs (batch 64 x
// 128 tokens: 8192 rows; hidden 768, intermediate 3072), in TF32 and bf16:
// for each product, the heuristic's first 8 algorithms with their waves,
// tile, split-K and measured time. Whether the first-ranked is the fastest
// is what decides if timing a few at first use (as cuDNN's benchmark mode
// does for convolutions) would pay. A program that prints; it asserts nothing.
//
//   bench_gemm_algo_probe [--iters N]
//
// Operands are zero-filled (the time of a tensor-core GEMM depends a little
// on its values: compare rows, not absolute figures, with a training step's).
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

bool ok(int status, const char* what) {
  if (status != 0) std::printf("  %s failed (status %d)\n", what, status);
  return status == 0;
}

// D [m, n] = op(A) op(B), column-major, as hearth's gemm.cu lays linear out
// (the row-major product swapped): forward T,N; input gradient N,N; weight
// gradient N,T with K the 8192 rows.
struct Product {
  const char* name;
  int m, n, k;
  cublasOperation_t ta, tb;
  cublasLtEpilogue_t epilogue;
  bool float_out_for_half;  // a weight gradient: float32 D beside bf16 operands
};

struct Buffers {
  void *a = nullptr, *b = nullptr, *d = nullptr, *bias = nullptr, *workspace = nullptr;
  size_t workspace_bytes = 32u << 20;
};

void probe(cublasLtHandle_t h, const Product& p, bool tf32, const Buffers& buf, int iters) {
  const cudaDataType_t in = tf32 ? CUDA_R_32F : CUDA_R_16BF;
  const cudaDataType_t out = tf32 || p.float_out_for_half ? CUDA_R_32F : CUDA_R_16BF;
  cublasLtMatmulDesc_t op = nullptr;
  if (!ok(cublasLtMatmulDescCreate(&op, tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, CUDA_R_32F),
          "descriptor"))
    return;
  cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &p.ta, sizeof(p.ta));
  cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &p.tb, sizeof(p.tb));
  cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &p.epilogue, sizeof(p.epilogue));
  if (p.epilogue != CUBLASLT_EPILOGUE_DEFAULT)
    cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &buf.bias, sizeof(buf.bias));
  const int a_rows = p.ta == CUBLAS_OP_N ? p.m : p.k, a_cols = p.ta == CUBLAS_OP_N ? p.k : p.m;
  const int b_rows = p.tb == CUBLAS_OP_N ? p.k : p.n, b_cols = p.tb == CUBLAS_OP_N ? p.n : p.k;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
  cublasLtMatrixLayoutCreate(&la, in, a_rows, a_cols, a_rows);
  cublasLtMatrixLayoutCreate(&lb, in, b_rows, b_cols, b_rows);
  cublasLtMatrixLayoutCreate(&ld, out, p.m, p.n, p.m);
  cublasLtMatmulPreference_t pref = nullptr;
  cublasLtMatmulPreferenceCreate(&pref);
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &buf.workspace_bytes,
                                       sizeof(buf.workspace_bytes));
  cublasLtMatmulHeuristicResult_t results[8];
  int found = 0;
  const bool asked = ok(cublasLtMatmulAlgoGetHeuristic(h, op, la, lb, ld, ld, pref, 8, results, &found), "heuristic");
  const double gflop = 2.0 * p.m * p.n * static_cast<double>(p.k) / 1e9;
  std::printf("%s %s (m %d, n %d, k %d): %d algorithms\n", tf32 ? "tf32" : "bf16", p.name, p.m, p.n, p.k,
              asked ? found : 0);
  const float one = 1.f, zero = 0.f;
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  for (int i = 0; asked && i < found; ++i) {
    auto run = [&] {
      return cublasLtMatmul(h, op, &one, buf.a, la, buf.b, lb, &zero, buf.d, ld, buf.d, ld, &results[i].algo,
                            buf.workspace, buf.workspace_bytes, nullptr);
    };
    if (!ok(run(), "matmul")) continue;
    for (int w = 0; w < 2; ++w) run();
    cudaEventRecord(start);
    for (int r = 0; r < iters; ++r) run();
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms = 0.f;
    cudaEventElapsedTime(&ms, start, stop);
    ms /= static_cast<float>(iters);
    int tile = 0, split_k = 0;
    size_t written = 0;
    cublasLtMatmulAlgoConfigGetAttribute(&results[i].algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof(tile), &written);
    cublasLtMatmulAlgoConfigGetAttribute(&results[i].algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &split_k, sizeof(split_k),
                                         &written);
    std::printf("  #%d waves %5.2f workspace %9zu tile %3d split-K %2d %9.4f ms %7.1f TFLOP/s\n", i,
                static_cast<double>(results[i].wavesCount), results[i].workspaceSize, tile, split_k,
                static_cast<double>(ms), gflop / static_cast<double>(ms));
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatrixLayoutDestroy(la);
  cublasLtMatrixLayoutDestroy(lb);
  cublasLtMatrixLayoutDestroy(ld);
  cublasLtMatmulDescDestroy(op);
}

}  // namespace

int main(int argc, char** argv) {
  int iters = 20;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--iters") == 0 && i + 1 < argc) {
      iters = std::max(1, std::atoi(argv[++i]));
    } else {
      std::printf("usage: bench_gemm_algo_probe [--iters N]\n");
      return 2;
    }
  }
  cublasLtHandle_t h = nullptr;
  if (!ok(cublasLtCreate(&h), "cublasLtCreate")) return 1;
  Buffers buf;
  const size_t largest = size_t{8192} * 3072 * sizeof(float);
  for (void** p : {&buf.a, &buf.b, &buf.d}) {
    if (!ok(cudaMalloc(p, largest), "cudaMalloc")) return 1;
    cudaMemset(*p, 0, largest);
  }
  if (!ok(cudaMalloc(&buf.bias, 3072 * sizeof(float)), "cudaMalloc") ||
      !ok(cudaMalloc(&buf.workspace, buf.workspace_bytes), "cudaMalloc"))
    return 1;
  cudaMemset(buf.bias, 0, 3072 * sizeof(float));
  const std::vector<Product> products = {
      {"weight gradient 768x768 + bias gradient", 768, 768, 8192, CUBLAS_OP_N, CUBLAS_OP_T, CUBLASLT_EPILOGUE_BGRADB, true},
      {"weight gradient 768x768", 768, 768, 8192, CUBLAS_OP_N, CUBLAS_OP_T, CUBLASLT_EPILOGUE_DEFAULT, true},
      {"weight gradient 768x3072 + bias gradient", 768, 3072, 8192, CUBLAS_OP_N, CUBLAS_OP_T, CUBLASLT_EPILOGUE_BGRADB,
       true},
      {"weight gradient 3072x768 + bias gradient", 3072, 768, 8192, CUBLAS_OP_N, CUBLAS_OP_T, CUBLASLT_EPILOGUE_BGRADB,
       true},
      {"forward 768 -> 768 + bias", 768, 8192, 768, CUBLAS_OP_T, CUBLAS_OP_N, CUBLASLT_EPILOGUE_BIAS, false},
      {"forward 768 -> 3072 + bias", 3072, 8192, 768, CUBLAS_OP_T, CUBLAS_OP_N, CUBLASLT_EPILOGUE_BIAS, false},
      {"forward 3072 -> 768 + bias", 768, 8192, 3072, CUBLAS_OP_T, CUBLAS_OP_N, CUBLASLT_EPILOGUE_BIAS, false},
      {"input gradient 768 <- 768", 768, 8192, 768, CUBLAS_OP_N, CUBLAS_OP_N, CUBLASLT_EPILOGUE_DEFAULT, false},
      {"input gradient 768 <- 3072", 768, 8192, 3072, CUBLAS_OP_N, CUBLAS_OP_N, CUBLASLT_EPILOGUE_DEFAULT, false},
  };
  for (bool tf32 : {true, false})
    for (const Product& p : products) probe(h, p, tf32, buf, iters);
  cublasLtDestroy(h);
  return 0;
}
