// CPU GEMM rung 2, `omp_simd`: the BLIS/Goto algorithm. Changes vs `naive`:
//  * packing: op(A) and op(B) are copied, per cache block, into panels laid out in the
//    exact order the micro-kernel reads them (converting f16/bf16 to f32 and resolving
//    the transposes), so the inner loop only streams contiguous memory;
//  * cache blocking (blocking.hpp): a kc x nc block of B stays in L2, an MR x kc panel of A
//    in L1 while it multiplies the whole B block, the packed mc x kc A block in L3;
//  * register blocking: an MR x NR tile of C stays in vector registers for the whole kc
//    loop (kernel_avx512.cpp 14x32, kernel_avx2.cpp 6x16, kernel_scalar.cpp 6x8), so each
//    loaded value feeds MR or NR FMAs instead of one;
//  * threads: OpenMP over the columns of C (and the rows when C is narrow), sharing the
//    packed A block, which all threads pack together.
// Together these take the FMA units from waiting on memory to running nearly every cycle.
// Edges (M, N not multiples of the tile) use zero-padded panels and masked stores.
#include "cpu/element.hpp"
#include "cpu/gemm/blocking.hpp"
#include "cpu/rungs.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdlib>

namespace gpukern::cpu {
namespace {

/// A 64-byte aligned float buffer that only grows. One per thread (thread_local), so
/// repeated calls do not pay for fresh pages (page faults cost several % at N = 1024).
class ScratchBuffer {
 public:
  ~ScratchBuffer() { std::free(data_); }
  float* get(std::size_t floats) {
    if (floats > capacity_) {
      std::free(data_);
      const std::size_t bytes = core::ceil_div<std::size_t>(floats * sizeof(float), 64) * 64;
      data_ = static_cast<float*>(std::aligned_alloc(64, bytes));
      if (!data_) {
        capacity_ = 0;
        throw core::Error(core::Status::OutOfMemory,
                          "omp_simd: cannot allocate " + std::to_string(bytes) + " bytes of packing buffer");
      }
      capacity_ = floats;
    }
    return data_;
  }

 private:
  float* data_ = nullptr;
  std::size_t capacity_ = 0;
};

thread_local ScratchBuffer tls_a_block, tls_b_block, tls_c_block;

int64_t round_up(int64_t v, int64_t multiple) { return core::ceil_div(v, multiple) * multiple; }

/// [begin, end) of part `index` when `count` units are split into `parts` near-equal parts.
void split(int64_t count, int parts, int index, int64_t* begin, int64_t* end) {
  const int64_t base = count / parts, extra = count % parts;
  *begin = index * base + std::min<int64_t>(index, extra);
  *end = *begin + base + (index < extra ? 1 : 0);
}

}  // namespace

GemmBlocking choose_blocking(const CacheSizes& caches, const GemmKernel& kernel, int64_t m, int64_t n,
                             int64_t k, bool f32_c) {
  GemmBlocking b;
  // kc: one A micro-panel and one B micro-panel fit in L1 together.
  int64_t kc = static_cast<int64_t>(caches.l1d * CacheBudget::kL1) / ((kernel.mr + kernel.nr) * 4);
  kc = std::clamp<int64_t>(kc / 16 * 16, CacheBudget::kMinKc, CacheBudget::kMaxKc);
  // Equal depth blocks: no thin last block paying a full C read/write for little work.
  b.kc = round_up(core::ceil_div(k, core::ceil_div(k, kc)), 16);
  // nc: one kc x nc block of B fits in the L2 budget.
  const int64_t nc = static_cast<int64_t>(caches.l2 * CacheBudget::kL2) / (b.kc * 4);
  b.nc = std::max<int64_t>(kernel.nr, nc / kernel.nr * kernel.nr);
  // mc: the two shared mc x kc blocks of A (double-buffered) fit in the L3 budget;
  // f16/bf16 C also needs an mc x n f32 accumulator.
  int64_t mc = static_cast<int64_t>(caches.l3 * CacheBudget::kL3) / (2 * b.kc * 4);
  if (!f32_c) mc = std::min<int64_t>(mc, CacheBudget::kMaxF32CBytes / (std::max<int64_t>(n, 1) * 4));
  mc = std::max<int64_t>(kernel.mr, mc / kernel.mr * kernel.mr);
  b.mc = round_up(core::ceil_div(m, core::ceil_div(m, mc)), kernel.mr);
  return b;
}

ThreadGrid choose_grid(int threads, int64_t m, int64_t n, int mr, int nr) {
  ThreadGrid best;
  int64_t best_tiles = -1;
  const int64_t m_panels = core::ceil_div<int64_t>(m, mr), n_panels = core::ceil_div<int64_t>(n, nr);
  for (int tn = threads; tn >= 1; --tn) {  // prefer splitting columns: each thread keeps its B
    if (threads % tn != 0) continue;
    const int tm = threads / tn;
    const int64_t tiles = core::ceil_div<int64_t>(m_panels, tm) * core::ceil_div<int64_t>(n_panels, tn);
    if (best_tiles < 0 || tiles < best_tiles) {
      best_tiles = tiles;
      best = ThreadGrid{tm, tn};
    }
  }
  return best;
}

const GemmKernel& gemm_kernel_for(Isa isa) {
  switch (isa) {
    case Isa::Avx512: return gemm_kernel_avx512();
    case Isa::Avx2: return gemm_kernel_avx2();
    default: return gemm_kernel_scalar();
  }
}

void gemm_blocked(const core::GemmArgs& g, const GemmKernel& kernel, const GemmBlocking& blk, int threads) {
  if (g.m == 0 || g.n == 0) return;
  if (g.k == 0) return scale_c(g);
  const PackSource a{g.a, g.lda, g.trans_a, g.ab_type};
  const PackSource b{g.b, g.ldb, g.trans_b, g.ab_type};
  const bool f32_c = g.c_type == core::DType::F32;
  const int mr = kernel.mr, nr = kernel.nr;

  // Shared buffers of the calling thread: two packed A blocks (double buffering: a thread
  // may pack the next depth block while another still multiplies with the current one,
  // so one barrier per depth block suffices), and the f32 accumulator of an mc x n block
  // of C when C is f16/bf16.
  const std::size_t a_block_floats = static_cast<std::size_t>(round_up(std::min(blk.mc, g.m), mr) * blk.kc);
  float* a_blocks = tls_a_block.get(2 * a_block_floats);
  float* c_block = f32_c ? nullptr : tls_c_block.get(static_cast<std::size_t>(std::min(blk.mc, g.m) * g.n));

#pragma omp parallel num_threads(threads)
  {
    const int team = omp_get_num_threads(), tid = omp_get_thread_num();  // team may be < threads
    const ThreadGrid grid = choose_grid(team, std::min(blk.mc, g.m), g.n, mr, nr);
    const int ti = tid / grid.tn, tj = tid % grid.tn;
    int64_t n_begin, n_end;  // this thread's columns, whole NR panels
    split(core::ceil_div<int64_t>(g.n, nr), grid.tn, tj, &n_begin, &n_end);
    n_begin = std::min(n_begin * nr, g.n);
    n_end = std::min(n_end * nr, g.n);
    float* b_block = tls_b_block.get(static_cast<std::size_t>(blk.kc * blk.nc));

    int64_t step = 0;  // depth blocks done, over all A blocks: selects the A buffer
    for (int64_t ic = 0; ic < g.m; ic += blk.mc) {
      const int64_t mcur = std::min(blk.mc, g.m - ic);
      const int64_t panels = core::ceil_div<int64_t>(mcur, mr);
      int64_t q_begin, q_end;  // this thread's A panels for the multiply
      split(panels, grid.tm, ti, &q_begin, &q_end);
      int64_t pack_begin, pack_end;  // and for the shared packing
      split(panels, team, tid, &pack_begin, &pack_end);

      for (int64_t pc = 0; pc < g.k; pc += blk.kc) {
        const int64_t kcur = std::min(blk.kc, g.k - pc);
        float* a_block = a_blocks + (step++ % 2) * a_block_floats;
        if (pack_end > pack_begin) {
          const int64_t first_row = pack_begin * mr;
          kernel.pack_a(a, ic + first_row, std::min(pack_end * mr, mcur) - first_row, pc, kcur,
                        a_block + pack_begin * mr * kcur);
        }
        // After this barrier every thread has packed its share of this block and finished
        // multiplying with the previous one, whose buffer the next depth block reuses.
#pragma omp barrier
        // The first depth block applies the caller's beta; later ones accumulate. An f32
        // accumulator for f16/bf16 C starts from zero (beta is applied when storing C).
        const float beta = pc > 0 ? 1.0f : f32_c ? g.beta : 0.0f;
        float* c_base = f32_c ? static_cast<float*>(g.c) + ic * g.ldc : c_block;
        const int64_t ldc = f32_c ? g.ldc : g.n;
        for (int64_t jc = n_begin; jc < n_end; jc += blk.nc) {
          const int64_t ncur = std::min(blk.nc, n_end - jc);
          kernel.pack_b(b, pc, kcur, jc, ncur, b_block);
          for (int64_t q = q_begin; q < q_end; ++q) {
            const float* a_panel = a_block + q * mr * kcur;
            const int mr_here = static_cast<int>(std::min<int64_t>(mr, mcur - q * mr));
            for (int64_t jr = 0; jr < ncur; jr += nr) {
              const int nr_here = static_cast<int>(std::min<int64_t>(nr, ncur - jr));
              kernel.micro(kcur, a_panel, b_block + jr * kcur, c_base + q * mr * ldc + jc + jr, ldc,
                           g.alpha, beta, mr_here, nr_here);
            }
          }
        }
      }
      if (!f32_c && q_end > q_begin && n_end > n_begin) {
        const int64_t row = q_begin * mr, rows = std::min(q_end * mr, mcur) - row;
        char* c = static_cast<char*>(g.c) + ((ic + row) * g.ldc + n_begin) * 2;
        kernel.store_c(c_block + row * g.n + n_begin, g.n, c, g.ldc, g.c_type, rows, n_end - n_begin, g.beta);
      }
      // Each thread stores only the C rows and columns it computed; the accumulator rows are
      // rewritten only after the next barrier, which every thread reaches after its store.
    }
  }
}

void gemm_omp_simd(const core::GemmArgs& args, const CpuContext& ctx) {
  const GemmKernel& kernel = gemm_kernel_for(ctx.isa);
  const GemmBlocking blocking = choose_blocking(ctx.features->caches, kernel, args.m, args.n, args.k,
                                                args.c_type == core::DType::F32);
  // Below ~1 MFLOP a second thread costs more to wake than it saves.
  const double flops = 2.0 * static_cast<double>(args.m) * args.n * args.k;
  gemm_blocked(args, kernel, blocking, flops < 1e6 ? 1 : ctx.threads);
}

}  // namespace gpukern::cpu
