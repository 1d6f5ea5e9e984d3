// CPU GEMM rung 2, `omp_simd`: the BLIS/Goto algorithm. Changes vs `naive`:
//  * packing: op(A) and op(B) are copied into panels laid out in the exact order the
//    micro-kernel reads them (converting f16/bf16 to f32 and resolving the transposes),
//    so the inner loop only streams contiguous memory;
//  * cache blocking (blocking.hpp): an MR x kc panel of A stays in L1 while it multiplies
//    a whole kc x nc block of B, which streams from L2/L3; C is visited once per kc;
//  * register blocking: an MR x NR tile of C stays in vector registers for the whole kc
//    loop (kernel_avx512.cpp 14x32, kernel_avx2.cpp 6x16, kernel_scalar.cpp 6x8), so each
//    loaded value feeds MR or NR FMAs instead of one;
//  * threads: tasks (row part x column chunk of C, each with its own B blocks) taken
//    dynamically; the first task of each row part packs that part of op(A) for all: no
//    barrier, so a thread the OS preempts delays nobody and the others take its tasks.
// Together these take the FMA units from waiting on memory to running nearly every cycle.
// Edges (M, N not multiples of the tile) use zero-padded panels and masked stores.
// Strided batches: many items (or small ones) are spread over the threads, each item run
// whole by one thread with its own packed panels; a few large items run one after another,
// each on the whole team. An op(B) all items share (stride 0) is packed once for all.
// The epilogue (bias, activation) is applied in f32 to each tile of C as the last depth
// slice stores it (f32 C), or to the f32 accumulator before it is rounded to f16/bf16 C.
#include "cpu/element.hpp"
#include "cpu/gemm/batch_epilogue.hpp"
#include "cpu/gemm/blocking.hpp"
#include "cpu/rungs.hpp"
#include "cpu/scratch.hpp"

#include <immintrin.h>  // _mm_pause (SSE2: baseline x86-64)
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <memory>
#include <thread>

namespace gpukern::cpu {
namespace {

thread_local ScratchBuffer tls_packed_a, tls_thread_blocks, tls_bias, tls_shared_b;

/// op(B) shared by every batch item (stride_b 0) is packed once for all items when its
/// panels take at most this many bytes; else each task packs its blocks per item.
constexpr int64_t kMaxSharedBBytes = 64 << 20;

int64_t round_up(int64_t v, int64_t multiple) { return core::ceil_div(v, multiple) * multiple; }
int64_t round_down(int64_t v, int64_t multiple) { return v / multiple * multiple; }

/// [begin, end) of part `index` when `count` units are split into `parts` near-equal parts.
void split(int64_t count, int64_t parts, int64_t index, int64_t* begin, int64_t* end) {
  const int64_t base = count / parts, extra = count % parts;
  *begin = index * base + std::min<int64_t>(index, extra);
  *end = *begin + base + (index < extra ? 1 : 0);
}

/// Waits until `done()`: short pauses first (the awaited work takes microseconds), then
/// yielding the core, which on a busy machine may be the one the awaited thread needs.
/// (OpenMP's own barriers spin without yielding: on a loaded 2-core machine that halved
/// the 2-thread speed of a 1024^3 GEMM.)
template <class Done>
void wait_yielding(Done done) {
  for (int spin = 0; !done(); ++spin) {
    if (spin < 4096)
      _mm_pause();
    else
      std::this_thread::yield();
  }
}

}  // namespace

GemmBlocking choose_blocking(const CacheSizes& caches, const GemmKernel& kernel, int64_t m, int64_t n, int64_t k,
                             bool f32_c, int threads) {
  GemmBlocking b;
  m = std::max<int64_t>(m, 1);  // empty products are handled before blocking matters
  n = std::max<int64_t>(n, 1);
  k = std::max<int64_t>(k, 1);
  // kc: the MR x kc panel of A fits the L1 budget; then equal depth slices, so there is
  // no thin last slice paying a full pass over C for little work.
  int64_t kc = static_cast<int64_t>(caches.l1d * CacheBudget::kL1) / (kernel.mr * 4);
  kc = std::clamp<int64_t>(round_down(kc, 16), CacheBudget::kMinKc, CacheBudget::kMaxKc);
  b.kc = round_up(core::ceil_div(k, core::ceil_div(k, kc)), 16);
  // nc: each thread's kc x nc block of B fits its share of the L3 budget.
  const int64_t nc = static_cast<int64_t>(caches.l3 * CacheBudget::kL3) / (std::max(threads, 1) * b.kc * 4);
  b.nc = std::max<int64_t>(std::max<int64_t>(kernel.nr, round_down(CacheBudget::kMinNc, kernel.nr)),
                           round_down(nc, kernel.nr));
  // mc: packed op(A) rows held at once (all of them when they fit); f16/bf16 C also
  // needs an f32 accumulator of mc x nc per thread.
  int64_t mc = CacheBudget::kMaxPackedABytes / (k * 4);
  if (!f32_c) mc = std::min<int64_t>(mc, CacheBudget::kMaxF32CBytes / (std::min(b.nc, n) * 4));
  mc = std::max<int64_t>(kernel.mr, round_down(mc, kernel.mr));
  b.mc = round_up(core::ceil_div(m, core::ceil_div(m, mc)), kernel.mr);  // equal blocks
  return b;
}

WorkSplit choose_split(int64_t m_rows, int64_t n, int64_t nc, int mr, int nr, int threads) {
  WorkSplit w;
  const int64_t n_panels = std::max<int64_t>(1, core::ceil_div<int64_t>(n, nr));
  const int64_t m_panels = std::max<int64_t>(1, core::ceil_div<int64_t>(m_rows, mr));
  w.column_chunks = std::clamp<int64_t>(core::ceil_div<int64_t>(n, nc), 1, n_panels);
  if (threads > 1) {
    // A row part per thread, so the threads pack A side by side from the start; about
    // kTasksPerThread tasks per thread, so a thread the OS preempts leaves work the others
    // can take. Extra tasks come from column chunks first (kept kMinNc wide), then from
    // more row parts (kept kMinRowPanels tall: each part packs its own B blocks).
    constexpr int64_t kTasksPerThread = 2, kMinRowPanels = 8;
    const int64_t max_parts = std::max<int64_t>(1, m_panels / kMinRowPanels);
    const int64_t max_chunks = std::max(w.column_chunks, n_panels / std::max<int64_t>(1, CacheBudget::kMinNc / nr));
    const int64_t tasks = kTasksPerThread * threads;
    w.row_parts = std::clamp<int64_t>(threads, 1, max_parts);
    w.column_chunks = std::clamp<int64_t>(core::ceil_div<int64_t>(tasks, w.row_parts), w.column_chunks, max_chunks);
    w.row_parts = std::clamp<int64_t>(core::ceil_div<int64_t>(tasks, w.column_chunks), w.row_parts,
                                      std::max(w.row_parts, max_parts));
    // Still fewer tasks than threads (a tiny C): the thinnest parts there are.
    if (w.column_chunks * w.row_parts < threads) {
      w.row_parts = std::clamp<int64_t>(core::ceil_div<int64_t>(threads, w.column_chunks), 1, m_panels);
      w.column_chunks = std::clamp<int64_t>(core::ceil_div<int64_t>(threads, w.row_parts), w.column_chunks, n_panels);
    }
  }
  return w;
}

const GemmKernel& gemm_kernel_for(Isa isa) {
  switch (isa) {
    case Isa::Avx512:
      return gemm_kernel_avx512();
    case Isa::Avx2:
      return gemm_kernel_avx2();
    default:
      return gemm_kernel_scalar();
  }
}

namespace {

/// s = act(s + beta * C + bias) over a rows x cols block: the f32 accumulator `s` (row
/// stride lds) of 16-bit C at `c` (C's leading dimension), whose first column is column
/// col0 of C. beta == 0 never reads C.
void add_beta_c_and_epilogue(float* s, int64_t lds, const void* c, const core::GemmArgs& g, int64_t rows, int64_t cols,
                             int64_t col0, const RowEpilogue& epi) {
  with_element_type(g.c_type, [&](auto tag) {
    using C = decltype(tag);
    const C* in = static_cast<const C*>(c);
    for (int64_t i = 0; i < rows; ++i) {
      float* row = s + i * lds;
      if (g.beta != 0.0f)
        for (int64_t j = 0; j < cols; ++j) row[j] += g.beta * to_float(in[i * g.ldc + j]);
      epi.apply(row, col0, cols);
    }
  });
}

/// One unbatched call on `threads` threads (1: the calling thread alone, no parallel
/// region), with its epilogue. Allocates from the calling threads' scratch buffers.
/// `packed_b`: all of op(B) already packed (depth slice pc at pc * round_up(n, NR), in the
/// order pack_b writes), or nullptr: each task packs its own blocks.
void blocked_item(const core::GemmArgs& g, const GemmKernel& kernel, const GemmBlocking& blk, int threads,
                  const RowEpilogue& epi, const float* packed_b = nullptr) {
  if (g.k == 0) return scale_c_with_epilogue(g, epi);
  const PackSource a{g.a, g.lda, g.trans_a, g.ab_type};
  const PackSource b{g.b, g.ldb, g.trans_b, g.ab_type};
  const bool f32_c = g.c_type == core::DType::F32;
  const int mr = kernel.mr, nr = kernel.nr;
  const int64_t mc = std::min(blk.mc, g.m), kc = blk.kc;
  const WorkSplit work = choose_split(mc, g.n, blk.nc, mr, nr, threads);
  const int64_t n_panels = core::ceil_div<int64_t>(g.n, nr);

  // Buffers, all allocated here (outside the parallel region): packed op(A) for mc rows,
  // slice after slice: slice s holds its panels at s * kc * mc_round, panel q of slice s
  // at + q * MR * (depth of s)); and per thread a B block, plus for f16/bf16 C an f32
  // accumulator of the chunk.
  const int64_t mc_round = round_up(mc, mr);
  float* packed_a = tls_packed_a.get(static_cast<std::size_t>(mc_round * g.k));
  const int64_t chunk_cols = round_up(core::ceil_div(n_panels, work.column_chunks), 1) * nr;
  const int64_t b_floats = round_up(kc * chunk_cols, 16);
  const int64_t c_floats = f32_c ? 0 : round_up(mc * chunk_cols, 16);
  float* thread_blocks = tls_thread_blocks.get(static_cast<std::size_t>((b_floats + c_floats) * threads));

  // Packing state of each (A block, row part): 0 not packed, 1 being packed, 2 packed.
  // The task that first needs a part packs it (for every depth slice): no barrier, the
  // threads pack different parts side by side, and a late thread delays nobody.
  const int64_t ic_blocks = core::ceil_div(g.m, mc);
  std::unique_ptr<std::atomic<int>[]> part_state(new std::atomic<int>[ic_blocks * work.row_parts]);
  for (int64_t i = 0; i < ic_blocks * work.row_parts; ++i) part_state[i].store(0, std::memory_order_relaxed);
  std::atomic<int64_t> arrived{0};  // threads done with A blocks, summed over the blocks

#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    const int tid = omp_get_thread_num(), team = omp_get_num_threads();
    float* b_block = thread_blocks + tid * (b_floats + c_floats);
    float* c_acc = b_block + b_floats;  // f16/bf16 C only

    for (int64_t ic = 0, block = 0; ic < g.m; ic += mc, ++block) {
      const int64_t mcur = std::min(mc, g.m - ic);
      const int64_t m_panels = core::ceil_div<int64_t>(mcur, mr);

      // ---- tasks: row part x column chunk, taken dynamically; consecutive tasks are
      // different row parts, so the first ones pack all of A between them ----
#pragma omp for schedule(dynamic, 1) nowait
      for (int64_t task = 0; task < work.column_chunks * work.row_parts; ++task) {
        const int64_t part = task % work.row_parts, chunk = task / work.row_parts;
        int64_t p_begin, p_end, q_begin, q_end;
        split(n_panels, work.column_chunks, chunk, &p_begin, &p_end);
        split(m_panels, work.row_parts, part, &q_begin, &q_end);
        const int64_t jc = p_begin * nr, ncur = std::min(p_end * nr, g.n) - jc;
        if (ncur <= 0 || q_end <= q_begin) continue;

        std::atomic<int>& state = part_state[block * work.row_parts + part];
        int unpacked = 0;
        if (state.compare_exchange_strong(unpacked, 1, std::memory_order_acq_rel)) {
          const int64_t row = q_begin * mr, rows = std::min(q_end * mr, mcur) - row;
          for (int64_t pc = 0; pc < g.k; pc += kc) {
            const int64_t kcur = std::min(kc, g.k - pc);
            kernel.pack_a(a, ic + row, rows, pc, kcur, packed_a + pc * mc_round + row * kcur);
          }
          state.store(2, std::memory_order_release);
        } else {
          wait_yielding([&] { return state.load(std::memory_order_acquire) == 2; });
        }

        // f32 C is updated in place; f16/bf16 C goes through the f32 accumulator, whose
        // row 0 is the task's first row.
        const int64_t ldc = f32_c ? g.ldc : ncur;
        auto c_panel = [&](int64_t q) {
          return f32_c ? static_cast<float*>(g.c) + (ic + q * mr) * g.ldc + jc : c_acc + (q - q_begin) * mr * ncur;
        };
        for (int64_t pc = 0; pc < g.k; pc += kc) {
          const int64_t kcur = std::min(kc, g.k - pc);
          const float* b_panels = b_block;
          if (packed_b)
            b_panels = packed_b + pc * n_panels * nr + jc * kcur;  // the chunk's panels of slice pc
          else
            kernel.pack_b(b, pc, kcur, jc, ncur, b_block);
          // The first slice applies the caller's beta; later ones accumulate. The f32
          // accumulator starts from zero (beta is applied when storing C).
          const float beta = pc > 0 ? 1.0f : f32_c ? g.beta : 0.0f;
          const float* a_slice = packed_a + pc * mc_round;
          const bool last_slice = pc + kcur == g.k;
          for (int64_t q = q_begin; q < q_end; ++q) {
            const float* a_panel = a_slice + q * mr * kcur;
            const int mr_here = static_cast<int>(std::min<int64_t>(mr, mcur - q * mr));
            for (int64_t jr = 0; jr < ncur; jr += nr) {
              const int nr_here = static_cast<int>(std::min<int64_t>(nr, ncur - jr));
              float* tile = c_panel(q) + jr;
              kernel.micro(kcur, a_panel, b_panels + jr * kcur, tile, ldc, g.alpha, beta, mr_here, nr_here);
              // f32 C: the last slice's store is final; the tile is still in L1.
              if (f32_c && last_slice && epi.active())
                for (int r = 0; r < mr_here; ++r) epi.apply(tile + r * ldc, jc + jr, nr_here);
            }
          }
        }
        if (!f32_c) {
          const int64_t row = q_begin * mr, rows = std::min(q_end * mr, mcur) - row;
          char* c = static_cast<char*>(g.c) + ((ic + row) * g.ldc + jc) * 2;
          if (epi.active()) {
            // act(acc + beta * C + bias) in f32 here, then a store with beta 0: C is
            // rounded once.
            add_beta_c_and_epilogue(c_acc, ncur, c, g, rows, ncur, jc, epi);
            kernel.store_c(c_acc, ncur, c, g.ldc, g.c_type, rows, ncur, 0.0f);
          } else {
            kernel.store_c(c_acc, ncur, c, g.ldc, g.c_type, rows, ncur, g.beta);
          }
        }
      }
      // Every thread is done with this A block before the next one overwrites the packed
      // panels, and before the region's own barrier, which then does not spin.
      arrived.fetch_add(1, std::memory_order_acq_rel);
      wait_yielding([&] { return arrived.load(std::memory_order_acquire) >= (block + 1) * team; });
    }
  }
}

/// Frees the calling thread's big scratch buffers (ScratchBuffer::trim).
void trim_scratch() {
  tls_packed_a.trim(ScratchBuffer::kKeepFloats);
  tls_thread_blocks.trim(ScratchBuffer::kKeepFloats);
  tls_shared_b.trim(ScratchBuffer::kKeepFloats);
}

/// A batch whose items share op(B) (stride_b 0): all of op(B) packed once, slice after
/// slice, for blocked_item. nullptr when B is not shared or its panels are too large.
const float* pack_shared_b(const core::GemmArgs& g, const GemmKernel& kernel, int64_t kc) {
  if (!g.batched() || g.stride_b != 0 || g.k == 0) return nullptr;
  const int64_t n_round = round_up(g.n, kernel.nr);
  if (g.k * n_round * 4 > kMaxSharedBBytes) return nullptr;
  float* packed = tls_shared_b.get(static_cast<std::size_t>(g.k * n_round));
  const PackSource b{g.b, g.ldb, g.trans_b, g.ab_type};
  for (int64_t pc = 0; pc < g.k; pc += kc) kernel.pack_b(b, pc, std::min(kc, g.k - pc), 0, g.n, packed + pc * n_round);
  return packed;
}

/// Whether a batch goes item by item over the threads (each item whole on one thread)
/// rather than each item over the whole team: when every thread gets several items, or
/// when the items are too small for a team to share one.
bool items_over_threads(const core::GemmArgs& g, int threads) {
  if (threads <= 1 || !g.batched()) return false;
  const double item_flops = 2.0 * static_cast<double>(g.m) * g.n * g.k;
  return g.batch >= 4 * threads || (g.batch >= threads && item_flops < 1e7) || item_flops < 1e6;
}

}  // namespace

void gemm_blocked(const core::GemmArgs& g, const GemmKernel& kernel, const GemmBlocking& blk, int threads) {
  if (g.m == 0 || g.n == 0) return;
  const float* shared_b = pack_shared_b(g, kernel, blk.kc);
  if (!items_over_threads(g, threads)) {
    for (int64_t item = 0; item < g.batch; ++item) {
      const core::GemmArgs one = g.batched() ? batch_item(g, item) : g;
      blocked_item(one, kernel, blk, threads, RowEpilogue{bias_f32(one, tls_bias), one.act}, shared_b);
    }
    trim_scratch();
    return;
  }
  // Items over the threads: each thread packs its own panels, so its share of the packed
  // A budget bounds the rows it packs at once.
  const int team = static_cast<int>(std::min<int64_t>(threads, g.batch));
  GemmBlocking own = blk;
  const int64_t rows_budget = CacheBudget::kMaxPackedABytes / team / (std::max<int64_t>(g.k, 1) * 4);
  own.mc = std::min(own.mc, std::max<int64_t>(kernel.mr, round_down(rows_budget, kernel.mr)));
  std::exception_ptr failure;
  std::atomic<bool> failed{false};
#pragma omp parallel num_threads(team)
  {
#pragma omp for schedule(dynamic, 1)
    for (int64_t item = 0; item < g.batch; ++item) {
      if (failed.load(std::memory_order_relaxed)) continue;
      try {
        const core::GemmArgs one = batch_item(g, item);
        blocked_item(one, kernel, own, 1, RowEpilogue{bias_f32(one, tls_bias), one.act}, shared_b);
      } catch (...) {  // an exception must not leave the parallel region
#pragma omp critical(gpukern_gemm_failure)
        if (!failure) failure = std::current_exception();
        failed.store(true, std::memory_order_relaxed);
      }
    }
    trim_scratch();
  }
  if (failure) std::rethrow_exception(failure);
}

void gemm::omp_simd_run(const core::GemmArgs& args, const CpuContext& ctx) {
  const GemmKernel& kernel = gemm_kernel_for(ctx.isa);
  // Below ~1 MFLOP (the whole batch) a second thread costs more to wake than it saves.
  const double flops = 2.0 * static_cast<double>(args.m) * args.n * args.k * args.batch;
  const int threads = flops < 1e6 ? 1 : ctx.threads;
  const GemmBlocking blocking =
      choose_blocking(ctx.features->caches, kernel, args.m, args.n, args.k, args.c_type == core::DType::F32, threads);
  gemm_blocked(args, kernel, blocking, threads);
}

}  // namespace gpukern::cpu
