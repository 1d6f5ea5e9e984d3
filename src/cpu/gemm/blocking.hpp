// Cache blocking and thread partition of `omp_simd` GEMM, chosen at run time from the
// cache sizes of the CPU and the micro-tile of the kernel; separate from the loops so
// tests can force small blocks (every edge and multi-block path at small sizes) and the
// choice itself can be tested.
#pragma once

#include "cpu/cpu_context.hpp"
#include "cpu/gemm/kernel.hpp"

#include <cstdint>

namespace gpukern::cpu {

/// Loop blocking (BLIS names): a kc-deep block of op(A) with mc rows is packed once,
/// by all threads together, and shared (lives in L3); each thread packs kc x nc blocks of op(B) (in its
/// L2) and runs the micro-kernel over them with one MR x kc panel of A held in L1.
struct GemmBlocking {
  int64_t mc = 0;  // rows of the packed A block, a multiple of MR
  int64_t kc = 0;  // depth of one packed block
  int64_t nc = 0;  // columns of one packed B block, a multiple of NR
};

/// Fractions of each cache level the packed blocks may use (the rest holds the C tile,
/// the other operand's stream and whatever else runs).
struct CacheBudget {
  static constexpr double kL1 = 0.80;  // one A micro-panel + one B micro-panel (MR + NR) x kc
  static constexpr double kL2 = 0.50;  // one kc x nc block of B
  static constexpr double kL3 = 0.50;  // two mc x kc blocks of A (double-buffered), shared by the threads
  static constexpr int64_t kMinKc = 64, kMaxKc = 1024;
  /// f16/bf16 C is accumulated in an f32 buffer of mc x n; at most this many bytes.
  static constexpr int64_t kMaxF32CBytes = 8 << 20;
};
static_assert(CacheBudget::kL1 + 0.0 < 1.0 && CacheBudget::kL2 < 1.0 && CacheBudget::kL3 < 1.0,
              "budgets are fractions of a cache level");
static_assert(CacheBudget::kMinKc % 16 == 0 && CacheBudget::kMaxKc % 16 == 0,
              "kc bounds are multiples of 16 (the transposing packers work on 16 depth steps)");

GK_CPU_TESTED GemmBlocking choose_blocking(const CacheSizes& caches, const GemmKernel& kernel, int64_t m, int64_t n,
                             int64_t k, bool f32_c);

/// Threads as a tm x tn grid: tn split the columns of C (each with its own B blocks),
/// tm split the rows of every A block.
struct ThreadGrid {
  int tm = 1, tn = 1;
};
GK_CPU_TESTED ThreadGrid choose_grid(int threads, int64_t m, int64_t n, int mr, int nr);

/// The `omp_simd` algorithm with an explicit kernel and blocking (the rung picks both from
/// the context; tests pass their own).
GK_CPU_TESTED void gemm_blocked(const core::GemmArgs& args, const GemmKernel& kernel, const GemmBlocking& blocking,
                  int threads);

/// The kernel of a path.
GK_CPU_TESTED const GemmKernel& gemm_kernel_for(Isa isa);

}  // namespace gpukern::cpu
