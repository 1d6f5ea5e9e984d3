// What the tensor-core development driver's files share (gemm_tc_bench: tc_bench.cu,
// tc_power.cu): the CUDA error check, a benchmark problem with its buffers, cuBLAS as the
// reference, the optional cache flush between timed calls, and a named way to run a call.
#pragma once

#include "cuda/context.cuh"

#include <cublas_v2.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace gpukern::dev {

using cuda::CudaContext;

#define CHECK(x)                                                                           \
  do {                                                                                     \
    cudaError_t e_ = (x);                                                                  \
    if (e_ != cudaSuccess) {                                                               \
      std::printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); \
      std::exit(2);                                                                        \
    }                                                                                      \
  } while (0)

/// A named way to run a call (a rung or a configuration outside the rung table).
using Variant = std::pair<std::string, std::function<void(const core::GemmArgs&)>>;

/// A row-major problem with random A and B in the storage type, C in the input type, and
/// an f32 buffer for cuBLAS's result (the reference every output is compared with).
struct Bench {
  core::GemmArgs g;
  void *a = nullptr, *b = nullptr, *c = nullptr, *cref = nullptr;
  void *raw_a = nullptr, *raw_b = nullptr, *raw_c = nullptr;  // the allocations (TC_ALIGN_MB)
};
Bench make_bench(int64_t m, int64_t n, int64_t k, core::DType ab, bool tf32, bool ta, bool tb, cudaStream_t s);
void free_bench(Bench& x);

/// cublasGemmEx for the row-major call `g`, writing C of type `c_type` to `c`.
void run_cublas(cublasHandle_t h, const core::GemmArgs& g, void* c, core::DType c_type);

/// TC_FLUSH_MB=N: an untimed memset of N MiB before every timed call, as gpukern-bench
/// does (the GPU then starts each call with cold caches and rested power); no-op unset.
void flush_before_call(int i, cudaStream_t s);

const char* dtype_label(core::DType t);

/// power mode (tc_power.cu): `rung` and the TC_RUNGS entries of `variants` back to back
/// beside cuBLAS while NVML is sampled.
int power_mode(const CudaContext& ctx, cublasHandle_t h, const std::vector<std::array<int64_t, 3>>& shapes,
               const Variant& rung, const std::vector<Variant>& variants);

}  // namespace gpukern::dev
