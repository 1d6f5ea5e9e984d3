// CPU softmax rung 2, `omp_simd`. Changes vs `naive`:
//  * two passes over each row instead of three: the maximum and the sum of exponentials
//    are computed together online (running max, sum rescaled when the max grows; once
//    per block of the row, not per element: kernel.hpp);
//  * a vectorized exp (range reduction + polynomial, simd/avx512.hpp, simd/avx2.hpp), 16
//    or 8 lanes at a time, instead of one libm call per element;
//  * each exponential computed once: rows up to kSoftmaxScratch keep them in an L2-resident
//    scratch row between the passes;
//  * OpenMP over rows (those of every batch item), each thread prefetching its next row
//    while it works on this one;
//  * non-temporal stores of y when the data is far larger than the last-level cache (and
//    y != x), so writing y does not first read it: memory then sees what a copy does.
// Memory-bound like a copy; the vector exp keeps the arithmetic under the memory time.
// Fuses batches, the input scale and the causal mask (kernel.hpp): a masked row reads only
// its kept columns.
#include "cpu/rungs.hpp"
#include "cpu/scratch.hpp"
#include "cpu/softmax/kernel.hpp"

#include <omp.h>

#include <algorithm>

namespace gpukern::cpu {
namespace {

thread_local ScratchBuffer tls_scratch_rows;

}  // namespace

const SoftmaxKernel& softmax_kernel_for(Isa isa) {
  switch (isa) {
    case Isa::Avx512:
      return softmax_kernel_avx512();
    case Isa::Avx2:
      return softmax_kernel_avx2();
    default:
      return softmax_kernel_scalar();
  }
}

void softmax::omp_simd_run(const core::SoftmaxArgs& args, const CpuContext& ctx) {
  const SoftmaxKernel& kernel = softmax_kernel_for(ctx.isa);
  const int64_t rows = args.rows * args.batch;  // threads share the rows of every batch item
  const double bytes = static_cast<double>(rows) * args.cols * core::dtype_size(args.dtype) * 2;
  // Streaming pays off only when y would not stay in cache anyway (2x the L3: the input
  // alone then evicts it) and not in place (there y's lines were just read into cache).
  const bool stream = args.y != args.x && bytes > 2.0 * ctx.features->caches.l3;
  // Enough rows per thread to amortize waking it: about 64 KiB of data each.
  const int64_t rows_per_64k = std::max<int64_t>(1, (64 << 10) / std::max<int64_t>(1, args.cols * 4));
  const int threads = static_cast<int>(std::clamp<int64_t>(rows / rows_per_64k, 1, ctx.threads));
  float* scratch = tls_scratch_rows.get(static_cast<std::size_t>(threads) * kSoftmaxScratch);
#pragma omp parallel num_threads(threads)
  {
    const int team = omp_get_num_threads(), tid = omp_get_thread_num();
    float* const mine = scratch + tid * kSoftmaxScratch;
    if (!args.causal) {
      const int64_t first = rows * tid / team, last = rows * (tid + 1) / team;
      kernel.rows(args, first, last, stream, mine);
    } else {
      // Causal rows grow along each item (row r keeps r + offset + 1 columns), so equal
      // ranges of rows would be unequal work: the threads take runs of about 64 KiB of
      // rows in turn instead.
      const int64_t runs = core::ceil_div(rows, rows_per_64k);
      for (int64_t run = tid; run < runs; run += team)
        kernel.rows(args, run * rows_per_64k, std::min(rows, (run + 1) * rows_per_64k), stream, mine);
    }
  }
}

}  // namespace gpukern::cpu
