// The contract between `omp_simd` softmax (02_omp_simd.cpp: threads over rows) and its
// per-ISA row kernels (kernel_avx512.cpp, kernel_avx2.cpp, kernel_scalar.cpp).
//
// Each kernel computes, per row, in f32 whatever the storage type:
//   pass 1 (one read of the row from memory): blocks of kSoftmaxBlock elements, summing
//          exp(x - running max) and rescaling the sum by exp(old max - new max) when the
//          max grows: the online softmax of the seeds, rescaled once per block instead of
//          per element. The AVX-512 kernel reads each block once (exponentials against
//          the running max, the block's max on the side; redone only when the max jumps
//          by more than 64); until a finite max exists, and in the AVX2 and scalar
//          kernels, a block is read twice (its max, then its exponentials, from L1).
//          Rows up to kSoftmaxScratch elements keep these exponentials in a per-thread
//          f32 scratch row (L2), with the reference each block used (AVX-512 kernel);
//   pass 2: y = scratch * exp(block max - max) / sum (one multiply: each exp computed
//          once), or exp(x - max) / sum for longer rows, or x - max - log(sum) for
//          log-softmax. Memory sees one read and one write per element, as a copy does.
// The row's sum: exponentials are summed in f32 over at most 128 terms (a vector lane of a
// block; the scalar kernel: runs of 64 elements), and those sums are added (and rescaled)
// in f64. One f32 sum over a whole row drifts past the f32 error bound from about 16k
// elements and stops growing at 2^24 equal ones; the f64 adds are too few to cost anything.
// Kept exponentials: pass 2 multiplies a block's kept values by exp(reference - max) / sum.
// When that factor falls below the normal range it loses precision (or is 0), which only
// loses outputs below the normal range as well while the kept values are at most 1. A
// block that raised the running max by up to 64 keeps values up to e^64 (read against the
// old max), so before such a block meets a factor below the normal range its values are
// brought down to its own maximum, and the factor taken from there: no output in the
// normal range is lost (a row of blocks at 0 | 64 | 100 once lost its 1e-19 outputs).
// During a row's first pass, the next row is prefetched (into L1) a little at a time, so the
// memory stream never stalls behind the arithmetic (AVX-512 kernel).
// Special values as PyTorch: NaN anywhere in a row -> the whole row NaN; a row of all -inf
// -> NaN. exp underflows to 0, never overflows (x - max <= 0).
// Scale and mask: the kernels take scale * x (in f32, right after the conversion) as the
// row, and the row's kept length as its length; the masked columns get the fill value.
#pragma once

#include "core/types.hpp"
#include "cpu/cpu_features.hpp"

#include <cstdint>

namespace gpukern::cpu {

/// Elements per online block: 8 KiB of f32, well inside L1 for the second read.
constexpr int64_t kSoftmaxBlock = 2048;
static_assert(kSoftmaxBlock % 16 == 0, "blocks are whole AVX-512 vectors");
/// Longest row whose exponentials are kept (256 KiB of f32 per thread, in L2).
constexpr int64_t kSoftmaxScratch = 65536;
static_assert(kSoftmaxScratch % kSoftmaxBlock == 0, "the scratch row holds whole blocks");

/// Global row g of a call (over every batch item: row g % rows of item g / rows): its
/// input, its output and the columns it keeps (the causal mask; cols without one).
template <class T>
struct SoftmaxRowRef {
  const T* x;
  T* y;
  int64_t kept;
};

// Internal linkage (static): each row kernel's translation unit, compiled for its own
// ISA, keeps its own copy instead of sharing one the linker might take from another ISA.
template <class T>
static inline SoftmaxRowRef<T> softmax_row_at(const core::SoftmaxArgs& s, int64_t g) {
  const int64_t item = s.batch > 1 ? g / s.rows : 0;
  const int64_t r = g - item * s.rows;
  int64_t kept = s.cols;
  if (s.causal) {
    kept = r + s.causal_offset + 1;
    kept = kept < 0 ? 0 : kept > s.cols ? s.cols : kept;
  }
  return {static_cast<const T*>(s.x) + item * s.stride_x + r * s.ldx,
          static_cast<T*>(s.y) + item * s.stride_y + r * s.ldy, kept};
}

struct SoftmaxKernel {
  const char* name;
  /// Global rows [first, last) of the call (the rows of every batch item, item by item):
  /// softmax of scale * x over each row's kept columns, the masked ones written 0
  /// (log-softmax: -inf) and never read; a row keeping no column is all 0 (log: -inf). stream: store y with
  /// non-temporal stores (the caller sets it when y != x and the data far exceeds the last-level cache, so the write
  /// does not first read every line of y into the cache). scratch: kSoftmaxScratch floats of this thread, 64-byte
  /// aligned.
  void (*rows)(const core::SoftmaxArgs& args, int64_t first, int64_t last, bool stream, float* scratch);
  /// y[i] = exp(x[i]) with this path's exp, for x[i] <= 0, -inf and NaN (what softmax
  /// feeds it). Exposed for the tests.
  void (*exp)(const float* x, float* y, int64_t n);
};

GK_CPU_TESTED const SoftmaxKernel& softmax_kernel_avx512();
GK_CPU_TESTED const SoftmaxKernel& softmax_kernel_avx2();
GK_CPU_TESTED const SoftmaxKernel& softmax_kernel_scalar();
GK_CPU_TESTED const SoftmaxKernel& softmax_kernel_for(Isa isa);

}  // namespace gpukern::cpu
