// Blocking and work split of `omp_simd` GEMM, chosen at run time from the cache sizes of
// the CPU and the micro-tile of the kernel; separate from the loops so tests can force
// small blocks (every edge and multi-block path at small sizes) and check the choice.
#pragma once

#include "cpu/cpu_context.hpp"
#include "cpu/gemm/kernel.hpp"

#include <cstdint>

namespace gpukern::cpu {

/// Loop blocking (BLIS names). All of op(A) (or mc rows of it at a time) is packed once,
/// as kc-deep slices of MR-row panels, each row part by the first task that needs it;
/// each task (a row part x a chunk of at most nc columns of C, threads taking tasks
/// dynamically) walks the depth in kc steps: it packs its kc x nc block of op(B) and
/// multiplies each of its A panels (held in L1 across the chunk's column panels) with it
/// (B streaming from L2/L3).
struct GemmBlocking {
  int64_t mc = 0;  // rows of op(A) packed at once (all of M when it fits the budget)
  int64_t kc = 0;  // depth of one slice: an MR x kc panel of A stays in L1
  int64_t nc = 0;  // widest column chunk: its kc x nc block of B stays in the L3 share
};

/// The budgets, as fractions of a cache level (measured on Zen 5 against OpenBLAS: fewer,
/// larger blocks win; the B block need not fit L2, the per-tile costs of switching A
/// panels and of passes over C matter more).
struct CacheBudget {
  static constexpr double kL1 = 0.60;   // one MR x kc panel of A
  static constexpr double kL3 = 0.125;  // each thread's kc x nc block of B
  static constexpr int64_t kMinKc = 64, kMaxKc = 1024;
  static constexpr int64_t kMinNc = 256;  // narrower chunks switch A panels too often
  /// Packed op(A) held at once (f32), at most this many bytes...
  static constexpr int64_t kMaxPackedABytes = 64 << 20;
  /// ...and f16/bf16 C is accumulated in an f32 mc x nc buffer per thread of at most this.
  static constexpr int64_t kMaxF32CBytes = 4 << 20;
};
static_assert(CacheBudget::kL1 < 1.0 && CacheBudget::kL3 < 1.0, "budgets are fractions of a cache level");
static_assert(CacheBudget::kMinKc % 16 == 0 && CacheBudget::kMaxKc % 16 == 0,
              "kc bounds are multiples of 16 (the transposing packers work on 16 depth steps)");

GK_CPU_TESTED GemmBlocking choose_blocking(const CacheSizes& caches, const GemmKernel& kernel, int64_t m, int64_t n,
                                           int64_t k, bool f32_c, int threads);

/// The tasks of one packed A block: column chunks x row parts, taken dynamically by the
/// threads. Column chunks: enough that none is wider than nc, at least one per thread
/// while chunks stay kMinNc wide, whole NR panels each. Row parts split the A panels so
/// that there are about two tasks per thread (a preempted thread's work can be taken
/// over); each row part packs its own copy of its chunk's B block.
struct WorkSplit {
  int64_t column_chunks = 1;
  int64_t row_parts = 1;
};
GK_CPU_TESTED WorkSplit choose_split(int64_t m_rows, int64_t n, int64_t nc, int mr, int nr, int threads);

/// The `omp_simd` algorithm with an explicit kernel and blocking (the rung picks both from
/// the context; tests pass their own).
GK_CPU_TESTED void gemm_blocked(const core::GemmArgs& args, const GemmKernel& kernel, const GemmBlocking& blocking,
                                int threads);

/// The kernel of a path.
GK_CPU_TESTED const GemmKernel& gemm_kernel_for(Isa isa);

}  // namespace gpukern::cpu
