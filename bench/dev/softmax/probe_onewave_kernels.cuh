// The timeline probe's one-wave kernels (softmax_phase_probe.cu): the whole 64x262144
// tensor on chip at once, folded in bulk-copy pieces, in other orders, or in arrival
// order.
#pragma once

#include "cuda/arch/bulk_copy.cuh"
#include "cuda/arch/mbarrier.cuh"
#include "cuda/arch/shared_memory.cuh"
#include "probe_fold.cuh"

// ---- bulk one-wave: the CTA's shared-memory part as 16 KB bulk copies (cp.async.bulk,
// one thread issues them in order, one mbarrier each), folded chunk by chunk as they
// complete; the register part (kRegs packs a thread) loaded with ld.global. 16-bit only,
// clusters of 2 (one row per cluster), 1024 threads, the whole chunk on chip.
namespace bulk_probe {
/// One bulk copy global -> this CTA's shared memory, completing `bytes` on `bar`
/// (mbarriers themselves: gemm's sm90 helpers).
__device__ __forceinline__ void bulk(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}
}  // namespace bulk_probe

// kPrefetch: one thread first asks L2 for the whole chunk (cp.async.bulk.prefetch.L2, in
// piece order), so the bulk copies to shared memory meet data in (or on its way to) L2.
// kRegsLate: the register part is loaded after the shared part has been folded.
// kAhead > 0: at most kAhead pieces in flight; piece c + kAhead is issued once piece c
// landed (thread 0, after its wait), so the copies stay ordered.
template <class T, int kRegs, int kPiece, bool kPrefetch = false, bool kRegsLate = false, int kAhead = 0>
__global__ void __launch_bounds__(1024, 1) bulk_onewave(const T* __restrict__ x, T* __restrict__ y, int64_t cols) {
#if defined(GPUKERN_SOFTMAX_HYBRID_CLUSTER)
  namespace bp = bulk_probe;
  namespace sm90 = gpukern::cuda::arch;
  constexpr int V = 16 / sizeof(T);
  constexpr int kPieceVecs = kPiece / 16;
  extern __shared__ uint4 smem_raw[];
  sm::Pack<T, V>* const staged = reinterpret_cast<sm::Pack<T, V>*>(smem_raw);
  __shared__ uint64_t bars[32];
  __shared__ sm::RowStats scratch[32];
  __shared__ alignas(8) sm::RowStats cta_stats;
  probe_trace(0);
  const unsigned rank = arch::cluster_rank();
  const int64_t row = blockIdx.x / 2;
  const int64_t chunk_vecs = cols / V / 2;
  const T* xc = x + row * cols + int64_t(rank) * chunk_vecs * V;
  T* yc = y + row * cols + int64_t(rank) * chunk_vecs * V;
  const int tid = threadIdx.x;
  const int reg_vecs = kRegs * 1024;
  const int smem_vecs = static_cast<int>(chunk_vecs) - reg_vecs;
  const int pieces = smem_vecs / kPieceVecs;
  if (tid == 0) {
    for (int c = 0; c < pieces; ++c) sm90::mbar_init(sm90::smem_addr(&bars[c]), 1);
    sm90::fence_barrier_init();
  }
  __syncthreads();
  if (tid == 0) {
    if constexpr (kPrefetch) {
      for (int c = 0; c < pieces; ++c)
        asm volatile(
            "cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(xc + (int64_t(reg_vecs) + int64_t(c) * kPieceVecs) * V),
            "r"(kPiece)
            : "memory");
      asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(xc), "r"(reg_vecs * 16) : "memory");
    }
  }
  auto issue = [&](int c) {
    sm90::mbar_arrive_expect_tx(sm90::smem_addr(&bars[c]), kPiece);
    bp::bulk(sm90::smem_addr(staged + c * kPieceVecs), xc + (int64_t(reg_vecs) + int64_t(c) * kPieceVecs) * V, kPiece,
             sm90::smem_addr(&bars[c]));
  };
  if (tid == 0) {
    for (int c = 0; c < (kAhead > 0 && kAhead < pieces ? kAhead : pieces); ++c) issue(c);
  }
  sm::Pack<T, V> regs[kRegs];
  if constexpr (!kRegsLate) {
#pragma unroll
    for (int r = 0; r < kRegs; ++r)
      regs[r] = *reinterpret_cast<const sm::Pack<T, V>*>(xc + int64_t(tid + r * 1024) * V);
  }
  probe_fold::Online<T> acc;
  auto fold = [&](const sm::Pack<T, V>& p) { acc.add(p); };
  // Each piece holds kPieceVecs vectors: thread t folds vectors t, t + 1024, ... of it.
  for (int c = 0; c < pieces; ++c) {
    if (c < 14) probe_trace(4 + 2 * c);
    sm90::mbar_wait(sm90::smem_addr(&bars[c]), 0);
    if (c < 14) probe_trace(5 + 2 * c);
    if (kAhead > 0 && tid == 0 && c + kAhead < pieces) issue(c + kAhead);
#pragma unroll
    for (int v = 0; v < kPieceVecs / 1024; ++v) fold(staged[c * kPieceVecs + v * 1024 + tid]);
  }
  if constexpr (kRegsLate) {
#pragma unroll
    for (int r = 0; r < kRegs; ++r)
      regs[r] = *reinterpret_cast<const sm::Pack<T, V>*>(xc + int64_t(tid + r * 1024) * V);
  }
#pragma unroll
  for (int r = 0; r < kRegs; ++r) fold(regs[r]);
  sm::RowStats stats = sm::block_reduce<1024>(acc.stats(), scratch);
  probe_trace(1);
  stats = probe_fold::pair_merge(stats, &cta_stats);
  probe_trace(2);
  const sm::OutputScale o = sm::output_scale(stats, false);
  auto out = [&](const sm::Pack<T, V>& p, T* dst) {
    uint4 u;
    memcpy(&u, &p, 16);
    probe_fold::store_out<T>(u, reinterpret_cast<uint4*>(dst), o);
  };
#pragma unroll
  for (int r = 0; r < kRegs; ++r) out(regs[r], yc + int64_t(tid + r * 1024) * V);
  for (int j = tid; j < smem_vecs; j += 1024) out(staged[j], yc + (int64_t(reg_vecs) + j) * V);
  arch::cluster_sync_aligned();
  probe_trace(3);
#endif
}

// ---- one-wave fold orders: 16-bit, 1024 threads, clusters of 2 (a row a
// cluster), kPacks register vectors + kVecs shared-memory vectors a thread, every copy in
// flight at once (one commit group per shared-memory vector); the register part loaded
// evict-first (.cg, plain and .nc.L1::no_allocate.L2::256B measured alike).
// kFold: 0 registers first, then the shared part in issue order (the policy's order);
// 1 the shared part in issue order, registers last; 2 the shared part in arrival order
// (slots pre-filled with a sentinel and polled), registers last.

template <class T, int kPacks, int kVecs, int kFold>
__global__ void __launch_bounds__(1024, 1) onewave_fold(const T* __restrict__ x, T* __restrict__ y, int64_t cols) {
#if defined(GPUKERN_SOFTMAX_HYBRID_CLUSTER)
  extern __shared__ uint4 smem_raw[];
  __shared__ sm::RowStats scratch[32];
  __shared__ alignas(8) sm::RowStats cta_stats;
  const int tid = threadIdx.x;
  const probe_fold::PairChunk chunk(x, y, cols);  // 1024 * (kPacks + kVecs) vectors
  const uint4* xc = chunk.x;
  const uint4* xs = xc + 1024 * kPacks;
  if constexpr (kFold == 2) {
#pragma unroll
    for (int k = 0; k < kVecs; ++k) smem_raw[tid + k * 1024] = make_uint4(~0u, ~0u, ~0u, ~0u);
  }
  probe_trace(0);
  uint4 r[kPacks];
  if constexpr (kFold == 0) {
    probe_fold::load_regs(r, xc);
  }
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    arch::cp_async_16(smem_raw + tid + k * 1024, xs + tid + k * 1024);
    arch::cp_async_commit();
  }
  if constexpr (kFold != 0) {
    probe_fold::load_regs(r, xc);
  }
  probe_fold::Online<T> acc;
  auto fold = [&](const uint4& u) { acc.add(u); };
  if constexpr (kFold == 0) {
#pragma unroll
    for (int k = 0; k < kPacks; ++k) fold(r[k]);
  }
  if constexpr (kFold == 2) {
    const volatile unsigned* words = reinterpret_cast<const volatile unsigned*>(smem_raw);
    unsigned done = 0;
    while (done != (1u << kVecs) - 1) {
#pragma unroll
      for (int k = 0; k < kVecs; ++k) {
        if (!(done >> k & 1) && words[4 * (tid + k * 1024) + 3] != ~0u) {
          done |= 1u << k;
          fold(smem_raw[tid + k * 1024]);  // (a vector whose data is the sentinel: folded after the wait below)
        }
      }
    }
    arch::cp_async_wait<0>();
  } else {
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      if (k < 12) probe_trace(4 + 2 * k);
      onewave::wait_pending<kVecs - 1>(kVecs - 1 - k);
      if (k < 12) probe_trace(5 + 2 * k);
      fold(smem_raw[tid + k * 1024]);
    }
  }
  if constexpr (kFold != 0) {
#pragma unroll
    for (int k = 0; k < kPacks; ++k) fold(r[k]);
  }
  probe_fold::finish_pair<T, kPacks, kVecs>(acc, r, smem_raw, chunk.y, scratch, &cta_stats);
#endif
}

// ---- arrival-order fold, warp-compacted: each thread's shared-memory slots are
// pre-filled with a sentinel; a pass polls one word of each pending slot, then every lane
// folds its own landed vectors (whichever k), so a warp's fold steps keep all lanes busy
// as long as each has something landed. A per-warp mbarrier fed by
// cp.async.mbarrier.arrive.noinc says when all the warp's copies landed (then the rest is
// folded without checks: a vector whose data equals the sentinel cannot hang it). A
// vector is taken when none of its four words is the sentinel. Registers folded last.
namespace arrival_detail {
__device__ __forceinline__ bool test_wait(uint32_t bar) {
  uint32_t ok;
  asm volatile("{\n .reg .pred p;\n mbarrier.test_wait.parity.shared::cta.b64 p, [%1], 0;\n selp.u32 %0, 1, 0, p;\n}\n"
               : "=r"(ok)
               : "r"(bar)
               : "memory");
  return ok != 0;
}
__device__ __forceinline__ uint4 vload(const uint4* p) {
  uint4 u;
  asm volatile("ld.volatile.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(u.x), "=r"(u.y), "=r"(u.z), "=r"(u.w)
               : "r"(static_cast<uint32_t>(__cvta_generic_to_shared(p))));
  return u;
}
__device__ __forceinline__ uint32_t vword(const uint4* p) {
  uint32_t w;
  asm volatile("ld.volatile.shared.u32 %0, [%1];"
               : "=r"(w)
               : "r"(static_cast<uint32_t>(__cvta_generic_to_shared(p)) + 12));
  return w;
}
}  // namespace arrival_detail

template <class T, int kPacks, int kVecs, bool kRegFirst, int kSleep>
__global__ void __launch_bounds__(1024, 1) arrival_fold(const T* __restrict__ x, T* __restrict__ y, int64_t cols) {
#if defined(GPUKERN_SOFTMAX_HYBRID_CLUSTER)
  namespace ad = arrival_detail;
  namespace sm90 = gpukern::cuda::arch;
  constexpr uint32_t kS = ~0u;
  extern __shared__ uint4 smem_raw[];
  __shared__ sm::RowStats scratch[32];
  __shared__ alignas(8) sm::RowStats cta_stats;
  __shared__ uint64_t bars[32];
  const int tid = threadIdx.x;
  const int warp = tid / 32;
  const probe_fold::PairChunk chunk(x, y, cols);  // 1024 * (kPacks + kVecs) vectors
  const uint4* xc = chunk.x;
  const uint4* xs = xc + 1024 * kPacks;
#pragma unroll
  for (int k = 0; k < kVecs; ++k) smem_raw[tid + k * 1024] = make_uint4(kS, kS, kS, kS);
  if (tid % 32 == 0) sm90::mbar_init(sm90::smem_addr(&bars[warp]), 32);
  sm90::fence_barrier_init();
  __syncwarp();
  probe_trace(0);
  uint4 r[kPacks];
  if constexpr (kRegFirst) {
    probe_fold::load_regs(r, xc);
  }
#pragma unroll
  for (int k = 0; k < kVecs; ++k) arch::cp_async_16(smem_raw + tid + k * 1024, xs + tid + k * 1024);
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(sm90::smem_addr(&bars[warp])) : "memory");
  if constexpr (!kRegFirst) {
    probe_fold::load_regs(r, xc);
  }
  probe_fold::Online<T> acc;
  auto fold = [&](const uint4& u) { acc.add(u); };
  unsigned pending = (1u << kVecs) - 1;
  bool all_in = false;
  int passes = 0;
  // Warp-uniform loop (lanes done early keep calling the vote with the others).
  while (__any_sync(~0u, pending != 0)) {
    if (!all_in) all_in = ad::test_wait(sm90::smem_addr(&bars[warp])) || passes > (1 << 20);
    if (all_in && passes > (1 << 20)) sm90::mbar_wait(sm90::smem_addr(&bars[warp]), 0);
    unsigned ready = 0;
    if (all_in) {
      ready = pending;
    } else {
#pragma unroll
      for (int k = 0; k < kVecs; ++k)
        if ((pending >> k & 1) && ad::vword(smem_raw + tid + k * 1024) != kS) ready |= 1u << k;
    }
    ++passes;
    if (!__any_sync(~0u, ready != 0)) {
      if constexpr (kSleep > 0) __nanosleep(kSleep);
      continue;
    }
    while (ready) {
      const int k = __ffs(ready) - 1;
      ready &= ready - 1;
      const uint4 u = ad::vload(smem_raw + tid + k * 1024);
      if (!all_in && (u.x == kS || u.y == kS || u.z == kS || u.w == kS)) continue;
      fold(u);
      pending &= ~(1u << k);
    }
  }
  if (tid == 0 && blockIdx.x < 4096) g_trace[blockIdx.x][30] = passes;
  probe_trace(4);
#pragma unroll
  for (int k = 0; k < kPacks; ++k) fold(r[k]);
  probe_trace(5);
  probe_fold::finish_pair<T, kPacks, kVecs>(acc, r, smem_raw, chunk.y, scratch, &cta_stats);
#endif
}
