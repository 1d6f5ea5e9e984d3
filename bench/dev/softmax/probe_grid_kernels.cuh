// The timeline probe's multi-step kernels (softmax_phase_probe.cu): a persistent stepped
// grid, two steps of half the rows, and two rows a CTA with bulk stores; partials
// exchanged through global memory (grid_row.cuh's tagged words).
#pragma once

#include "cuda/arch/bulk_copy.cuh"
#include "cuda/arch/mbarrier.cuh"
#include "cuda/arch/shared_memory.cuh"
#include "probe_fold.cuh"

// ---- stepped grid: a persistent grid of G CTAs (one an SM,
// cooperative launch), rows cut into q parts of part_vecs vectors; item = (row, part),
// CTA c takes items c, c + G, ... (G a multiple of q, so each step holds whole rows).
// Items go through a ring of kAhead + 1 shared-memory buffers, kAhead items in flight
// ahead of the one being worked on; per item: wait, fold (max, then sum of exps), block
// reduction, publish the CTA's partial (GridPartial, tagged, no reset), gather the row's
// q partials (warp 0), store. kAfter: the next item's copies are issued after the wait
// for this one (else before it). Stamps: 4 + 4k + {0 landed, 1 reduced, 2 merged, 3 stored}.
template <class T, int kThreads, int kAhead, bool kAfter>
__global__ void __launch_bounds__(kThreads, 1)
    stepped_row(sm::RowArgs<T> a, int q, int part_vecs, sm::dev::GridPartial* ws, unsigned long long tag_base) {
  constexpr int V = 16 / sizeof(T);
  constexpr int kRing = kAhead + 1;
  extern __shared__ uint4 smem_raw[];
  sm::Pack<T, V>* const ring = reinterpret_cast<sm::Pack<T, V>*>(smem_raw);
  __shared__ sm::RowStats scratch[2][kThreads / 32];
  __shared__ sm::RowStats row_stats[2];
  probe_trace(0);
  const int tid = threadIdx.x;
  const int64_t G = gridDim.x;
  const int64_t items = a.rows * q;
  const int n = blockIdx.x < items ? static_cast<int>((items - blockIdx.x + G - 1) / G) : 0;
  const int64_t num_vec = a.cols / V;
  auto where = [&](int i, int64_t& row, int& part, int64_t& begin, int& count) {
    const int64_t it = blockIdx.x + int64_t(i) * G;
    row = it / q;
    part = static_cast<int>(it % q);
    begin = int64_t(part) * part_vecs;
    count = static_cast<int>(begin + part_vecs < num_vec ? part_vecs : num_vec - begin);
  };
  auto issue = [&](int i) {
    if (i < n) {
      int64_t row, begin;
      int part, count;
      where(i, row, part, begin, count);
      const T* x = a.x + row * a.ldx + begin * V;
      sm::Pack<T, V>* buf = ring + int64_t(i % kRing) * part_vecs;
      for (int v = tid; v < count; v += kThreads) arch::cp_async_16(buf + v, x + int64_t(v) * V);
    }
    arch::cp_async_commit();
  };
#pragma unroll
  for (int i = 0; i < kAhead; ++i) issue(i);
  int parity = 0;
  for (int i = 0; i < n; ++i) {
    if constexpr (kAfter) {
      arch::cp_async_wait<kAhead - 1>();
      issue(i + kAhead);
    } else {
      issue(i + kAhead);
      arch::cp_async_wait<kAhead>();
    }
    if (i < 7) probe_trace(4 + 4 * i);
    int64_t row, begin;
    int part, count;
    where(i, row, part, begin, count);
    const sm::Pack<T, V>* buf = ring + int64_t(i % kRing) * part_vecs;
    probe_fold::Online<T> acc;
    for (int v = tid; v < count; v += kThreads) acc.add(buf[v]);
    const sm::RowStats st = probe_fold::row_exchange<kThreads>(acc.stats(), ws, q, part, row, tag_base, scratch[parity],
                                                               &row_stats[parity], i < 7 ? 5 + 4 * i : -1);
    if (i < 7) probe_trace(6 + 4 * i);
    const sm::OutputScale o = sm::output_scale(st, a.log);
    uint4* y = reinterpret_cast<uint4*>(a.y + row * a.ldy + begin * V);
    for (int v = tid; v < count; v += kThreads)
      probe_fold::store_out<T>(reinterpret_cast<const uint4&>(buf[v]), y + v, o);
    if (i < 7) probe_trace(7 + 4 * i);
    parity ^= 1;
  }
  arch::cp_async_wait<0>();
  probe_trace(3);
}

// ---- two steps (16-bit): 128 co-resident CTAs (cooperative launch, one an SM),
// each row cut in 4 parts of 128 KB; step A holds rows 0-31 (64 KB in registers + 64 KB
// in shared memory), step B rows 32-63 (128 KB in shared memory). The 4 partials of a row
// are exchanged through global memory (GridPartial). A's stores overlap B's loads; only
// B's statistics sit between the last loads and the last stores. kIssueB: 0 B's copies
// issued once A has landed, 1 together with A's. kPipeB: B's copies in 8 groups, folded
// in order as they land (else one group, folded after it landed).
template <class T, int kIssueB, bool kPipeB>
__global__ void __launch_bounds__(1024, 1) twostep_row(const T* __restrict__ x, T* __restrict__ y, int64_t cols,
                                                       sm::dev::GridPartial* ws, unsigned long long tag_base) {
  namespace pf = probe_fold;
  constexpr int kPacks = 4, kVecsA = 4, kVecsB = 8;
  const auto [sa, sb] = pf::two_row_staging<kVecsA>();
  __shared__ pf::RowPair::Smem xs;
  const int tid = threadIdx.x;
  const pf::RowPair rp(x, y, cols);  // a part is 1024 * (kPacks + kVecsA) == 1024 * kVecsB vectors
  probe_trace(0);
  // Step A's loads: shared part (one group), then registers.
  pf::copy_vecs<kVecsA>(sa, rp.xa + 4096);
  uint4 r[kPacks];
  pf::load_regs(r, rp.xa);
  if constexpr (kIssueB == 1) pf::copy_vecs<kVecsB, kPipeB>(sb, rp.xb);
  // Step A.
  if constexpr (kIssueB == 1)
    arch::cp_async_wait<kPipeB ? kVecsB : 1>();
  else
    arch::cp_async_wait<0>();
  probe_trace(4);
  if constexpr (kIssueB == 0) pf::copy_vecs<kVecsB, kPipeB>(sb, rp.xb);
  pf::Online<T> acc_a;
  pf::fold_vecs<kVecsA>(acc_a, sa);
  pf::fold_regs(acc_a, r);
  const sm::OutputScale oa = rp.scale(acc_a, 0, ws, tag_base, xs);
  probe_trace(5);
  pf::store_regs<T>(r, rp.ya, oa);
  pf::store_vecs<kVecsA, T>(sa, rp.ya + 4096, oa);
  probe_trace(6);
  // Step B.
  pf::Online<T> acc_b;
  if constexpr (kPipeB) {
#pragma unroll
    for (int k = 0; k < kVecsB; ++k) {
      onewave::wait_pending<kVecsB - 1>(kVecsB - 1 - k);
      acc_b.add(sb[tid + k * 1024]);
    }
  } else {
    arch::cp_async_wait<0>();
    probe_trace(7);
    pf::fold_vecs<kVecsB>(acc_b, sb);
  }
  const sm::OutputScale ob = rp.scale(acc_b, 1, ws, tag_base, xs);
  probe_trace(8);
  pf::store_vecs<kVecsB, T>(sb, rp.yb, ob);
  probe_trace(3);
}

// ---- two steps, registers in the second: as twostep_row, but step A (rows
// 0-31) is all in shared memory (128 KB), step B (rows 32-63) 64 KB in registers + 64 KB
// in shared memory, issued once A's copies landed (kRegsFirst: B's register loads before
// its copies).
template <class T, bool kRegsFirst>
__global__ void __launch_bounds__(1024, 1) twostep2_row(const T* __restrict__ x, T* __restrict__ y, int64_t cols,
                                                        sm::dev::GridPartial* ws, unsigned long long tag_base) {
  namespace pf = probe_fold;
  constexpr int kVecsA = 8, kPacks = 4, kVecsB = 4;
  const auto [sa, sb] = pf::two_row_staging<kVecsA>();
  __shared__ pf::RowPair::Smem xs;
  const pf::RowPair rp(x, y, cols);  // a part is 1024 * kVecsA == 1024 * (kPacks + kVecsB) vectors
  probe_trace(0);
  pf::copy_vecs<kVecsA>(sa, rp.xa);
  arch::cp_async_wait<0>();
  probe_trace(4);
  uint4 r[kPacks];
  if constexpr (kRegsFirst) {
    pf::load_regs(r, rp.xb);
  }
  pf::copy_vecs<kVecsB>(sb, rp.xb + 4096);
  if constexpr (!kRegsFirst) {
    pf::load_regs(r, rp.xb);
  }
  pf::Online<T> acc_a;
  pf::fold_vecs<kVecsA>(acc_a, sa);
  const sm::OutputScale oa = rp.scale(acc_a, 0, ws, tag_base, xs);
  probe_trace(5);
  pf::store_vecs<kVecsA, T>(sa, rp.ya, oa);
  probe_trace(6);
  arch::cp_async_wait<0>();
  probe_trace(7);
  pf::Online<T> acc_b;
  pf::fold_vecs<kVecsB>(acc_b, sb);
  pf::fold_regs(acc_b, r);
  const sm::OutputScale ob = rp.scale(acc_b, 1, ws, tag_base, xs);
  probe_trace(8);
  pf::store_regs<T>(r, rp.yb, ob);
  pf::store_vecs<kVecsB, T>(sb, rp.yb + 4096, ob);
  probe_trace(3);
}

// ---- one wave, two rows a CTA, stores through the bulk engine (16-bit): 128
// co-resident CTAs, each row in 4 parts of 128 KB; a CTA holds part A of row c / 4 (128 KB
// in shared memory) and part B of row 32 + c / 4 (64 KB registers + 64 KB shared memory),
// every copy in flight at once. Then: A's statistics (fold, block reduction, the row's 4
// partials through global memory), A's outputs written in place 16 KB at a time and each
// piece sent with a bulk store (cp.async.bulk global <- shared, which does not queue ahead
// of the SM's own loads), B's statistics while A's pieces drain, B's shared part the same
// way, B's register part last with ordinary stores.

template <class T>
__global__ void __launch_bounds__(1024, 1) overlap_row(const T* __restrict__ x, T* __restrict__ y, int64_t cols,
                                                       sm::dev::GridPartial* ws, unsigned long long tag_base) {
  namespace pf = probe_fold;
  namespace sm90 = gpukern::cuda::arch;
  constexpr int kVecsA = 8, kPacks = 4, kVecsB = 4;
  const auto [sa, sb] = pf::two_row_staging<kVecsA>();
  __shared__ pf::RowPair::Smem xs;
  const int tid = threadIdx.x;
  const pf::RowPair rp(x, y, cols);
  probe_trace(0);
#pragma unroll
  for (int k = 0; k < kVecsA; ++k) arch::cp_async_16(sa + tid + k * 1024, rp.xa + tid + k * 1024);
  pf::copy_vecs<kVecsB>(sb, rp.xb + 4096);  // one commit group for both parts
  uint4 r[kPacks];
  pf::load_regs(r, rp.xb);
  // Outputs of `vecs` 16 KB pieces at `buf` written in place and sent to `dst` piece by piece.
  auto store_pieces = [&](uint4* buf, uint4* dst, int vecs, const sm::OutputScale& o) {
    for (int k = 0; k < vecs; ++k) {
      uint4* v = buf + tid + k * 1024;
      *v = pf::Online<T>::outputs(*v, o);
      sm90::fence_proxy_async();
      __syncthreads();
      if (tid == 0) {
        flavor::bulk_store(dst + k * 1024, sm90::smem_addr(buf + k * 1024), 16384);
        sm90::bulk_commit_group();
      }
    }
  };
  arch::cp_async_wait<0>();
  probe_trace(4);
  pf::Online<T> acc_a;
  pf::fold_vecs<kVecsA>(acc_a, sa);
  const sm::OutputScale oa = rp.scale(acc_a, 0, ws, tag_base, xs);
  probe_trace(5);
  store_pieces(sa, rp.ya, kVecsA, oa);
  probe_trace(6);
  pf::Online<T> acc_b;
  pf::fold_vecs<kVecsB>(acc_b, sb);
  pf::fold_regs(acc_b, r);
  const sm::OutputScale ob = rp.scale(acc_b, 1, ws, tag_base, xs);
  probe_trace(8);
  store_pieces(sb, rp.yb + 4096, kVecsB, ob);
  pf::store_regs<T>(r, rp.yb, ob);
  if (tid == 0) sm90::bulk_wait_group<0>();
  probe_trace(3);
}
