// The CUDA-core path of rung 14 `skinny` (see 14_skinny.cu) for 32-bit elements at T <= 4:
// a GEMV-style kernel. At one or two tokens the tensor-core kernels waste most of their work
// (7 of 8 columns of an n8 tile of T; exact f32 spends three mma on every product) and, with
// N-contiguous W, load their fragments a 4-byte word at a time; here every thread streams W
// in 16-byte loads straight into registers and does T f32 FMAs per element, so the call is
// the read of W and nothing else. Products and sums are plain f32 FMAs: exact f32 as it is
// (no 3xTF32 split), and tf32 calls get the same, more accurate, result.
//  * K-contiguous W (a linear layer's weight): each warp takes kRows rows of W and walks K
//    in steps of 128 elements (a 16-byte load per lane and row), kUnrollK steps of loads in
//    flight before their FMAs; X's four elements per step come through L1 (ld.global.nc;
//    every warp of the block reads the same ones). The 32 lanes' sums meet by shuffles.
//  * N-contiguous W: each lane takes 4 adjacent columns (a 16-byte load per K row, a warp
//    512 contiguous bytes of a row; kColVecs such chunks), the block 128 columns (times
//    kColVecs), its warps interleaved over the block's K rows, several rows of loads in
//    flight; X's element per row is one address for the whole warp (a broadcast). The
//    warps' sums meet in shared memory.
// K split: a group (a block's rows or columns) may be cut into `splits` K ranges, one block
// each, so that few groups still fill the SMs; every block parks its f32 sums and the last of
// the group to arrive (arrival_ticket.cuh) adds them in split order and writes C
// (deterministic; nobody waits). C is written as skinny_kernel writes it: through its strides,
// alpha/beta, and the fused epilogue (bias, activation) in f32, once.
#pragma once

#include "cuda/gemm/arrival_ticket.cuh"
#include "cuda/gemm/skinny/skinny.cuh"
#include "cuda/gemm/tensor_core_common.cuh"

#include <cstdint>

namespace gpukern::cuda::gemm {

/// The configuration of skinny_gemv_kernel: kWarps warps a block. K-contiguous W: kRows W
/// rows per warp, kUnrollK 16-byte loads of each row in flight per lane before their FMAs.
/// N-contiguous W: kColVecs 16-byte column chunks per lane (a block 128 kColVecs columns),
/// kUnrollN K rows of them in flight per lane at T <= 2, half as many at T 3-4 (whose X
/// values and sums take the registers).
template <int kRows_, int kUnrollK_, int kUnrollN_, int kColVecs_ = 1, int kWarps_ = 8>
struct SkinnyGemvConfig {
  static constexpr int kRows = kRows_, kUnrollK = kUnrollK_, kUnrollN = kUnrollN_, kColVecs = kColVecs_;
  static constexpr int kWarps = kWarps_, kThreads = kWarps * 32;
  static constexpr int kMaxT = 4;  // rows of X the kernel takes
  /// W rows (K-contiguous) or columns (N-contiguous) of a group.
  static constexpr int block_n(bool w_k_major) { return w_k_major ? kWarps * kRows : 128 * kColVecs; }
  /// Loads of each row (K-contiguous) or K rows (N-contiguous) in flight per lane, for the
  /// kernel of `t_rows` rows of X.
  static constexpr int unroll(bool w_k_major, int t_rows) {
    return w_k_major ? kUnrollK : t_rows <= 2 ? kUnrollN : (kUnrollN + 1) / 2;
  }
  /// K elements a range of a split group is a multiple of: a warp's step of K (K-contiguous
  /// W) or the block's rows of one unrolled round (N-contiguous).
  static constexpr int k_grain(bool w_k_major, int t_rows) { return w_k_major ? 128 : kWarps * unroll(false, t_rows); }
  static_assert(kRows * kMaxT <= 32, "one lane stores each of a warp's sums");
};

/// The shipped configuration (notes/llm-gemm.md, "A CUDA-core GEMV for 32-bit decode").
using SkinnyGemvCfg = SkinnyGemvConfig<1, 2, 8>;

/// A launch of skinny_gemv_kernel: the groups, the K split, and its workspace.
struct SkinnyGemvWork {
  int splits = 1;                // K ranges per group, one block each (blockIdx.x % splits)
  int k_range = 0;               // K elements of a range (the last may be shorter)
  float* partials = nullptr;     // splits > 1: (group, split) x kT x block_n f32 sums
  uint64_t* arrivals = nullptr;  // splits > 1: one arrival word per group
  uint64_t tag = 0;              // splits > 1: this launch's arrival tag
};

/// One block: group blockIdx.x / splits of W (kWKMajor: block_n rows; else 128 columns) over
/// K range blockIdx.x % splits, against the p.t <= kT rows of X (stored K-contiguous; rows
/// past p.t read row p.t - 1 and are never stored). f32 data; one batch item.
template <class Cfg, int kT, bool kWKMajor, bool kEpilogue = false>
__global__ void __launch_bounds__(Cfg::kThreads) skinny_gemv_kernel(SkinnyProblem p, SkinnyGemvWork wk) {
  constexpr int BN = Cfg::block_n(kWKMajor), U = Cfg::unroll(kWKMajor, kT);
  static_assert(kT >= 1 && kT <= Cfg::kMaxT, "T rows of X: 1..kMaxT");
  const int group = static_cast<int>(blockIdx.x) / wk.splits, split = static_cast<int>(blockIdx.x) % wk.splits;
  const int n0 = group * BN;
  const int k_begin = split * wk.k_range, k_end = min(p.k, k_begin + wk.k_range);
  const int lane = static_cast<int>(threadIdx.x) % 32, warp = static_cast<int>(threadIdx.x) / 32;
  arch::wait_grid_dependency();  // launched as a programmatic dependent (launch_kernel)
  const float* w = static_cast<const float*>(p.w);
  const float* xrow[kT];
#pragma unroll
  for (int t = 0; t < kT; ++t) xrow[t] = static_cast<const float*>(p.x) + min(t, p.t - 1) * p.ldx;

  // The block's sums, sums[t * BN + n]; N-contiguous W first reduces its warps' sums here.
  __shared__ float sums[kT * BN];
  if constexpr (kWKMajor) {
    // Lane l covers K elements k0 + 4l .. + 3 of each 128-element step; rows past N read row
    // 0 of W (never stored).
    constexpr int kStep = 128;
    const float* wrow[Cfg::kRows];
#pragma unroll
    for (int r = 0; r < Cfg::kRows; ++r) {
      const int row = n0 + warp * Cfg::kRows + r;
      wrow[r] = w + static_cast<int64_t>(row < p.n ? row : 0) * p.ldw;
    }
    float acc[Cfg::kRows][kT];
#pragma unroll
    for (int r = 0; r < Cfg::kRows; ++r)
#pragma unroll
      for (int t = 0; t < kT; ++t) acc[r][t] = 0.0f;
    auto fma4 = [](float& a, const float4& wv, const float4& xv) {
      a = fmaf(wv.x, xv.x, a);
      a = fmaf(wv.y, xv.y, a);
      a = fmaf(wv.z, xv.z, a);
      a = fmaf(wv.w, xv.w, a);
    };
    int k = k_begin + 4 * lane;
    // Whole rounds: U steps whose four elements all lie inside the range.
    for (; k + (U - 1) * kStep + 4 <= k_end; k += U * kStep) {
      float4 wv[U][Cfg::kRows], xv[U][kT];
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int r = 0; r < Cfg::kRows; ++r)
          wv[u][r] = __ldcs(reinterpret_cast<const float4*>(wrow[r] + k + u * kStep));
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int t = 0; t < kT; ++t) xv[u][t] = __ldg(reinterpret_cast<const float4*>(xrow[t] + k + u * kStep));
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int r = 0; r < Cfg::kRows; ++r)
#pragma unroll
          for (int t = 0; t < kT; ++t) fma4(acc[r][t], wv[u][r], xv[u][t]);
    }
    // The rest of the range, element by element (K past the end reads nothing).
    for (; k < k_end; k += kStep)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        if (k + e < k_end)
#pragma unroll
          for (int r = 0; r < Cfg::kRows; ++r) {
            const float wv = __ldcs(wrow[r] + k + e);
#pragma unroll
            for (int t = 0; t < kT; ++t) acc[r][t] = fmaf(wv, __ldg(xrow[t] + k + e), acc[r][t]);
          }
#pragma unroll
    for (int r = 0; r < Cfg::kRows; ++r)
#pragma unroll
      for (int t = 0; t < kT; ++t) {
        float v = acc[r][t];
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
        if (lane == r * kT + t) sums[t * BN + warp * Cfg::kRows + r] = v;
      }
    __syncthreads();
  } else {
    // Lane l covers columns n0 + 4l .. + 3 (and + 128, ... with kColVecs > 1); warp w K rows
    // k_begin + w, + kWarps, ...
    constexpr int V = Cfg::kColVecs;
    const float* wcol[V];
    bool whole[V];
    int col[V];
#pragma unroll
    for (int v = 0; v < V; ++v) {
      col[v] = n0 + 128 * v + 4 * lane;
      whole[v] = col[v] + 4 <= p.n;
      wcol[v] = w + (col[v] < p.n ? col[v] : 0);
    }
    float acc[kT][V][4];
#pragma unroll
    for (int t = 0; t < kT; ++t)
#pragma unroll
      for (int v = 0; v < V; ++v)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[t][v][e] = 0.0f;
    auto load_w = [&](int v, int krow) {
      const float* src = wcol[v] + static_cast<int64_t>(krow) * p.ldw;
      if (whole[v]) return __ldcs(reinterpret_cast<const float4*>(src));
      float4 r = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      if (col[v] + 0 < p.n) r.x = __ldcs(src + 0);
      if (col[v] + 1 < p.n) r.y = __ldcs(src + 1);
      if (col[v] + 2 < p.n) r.z = __ldcs(src + 2);
      return r;
    };
    auto fma_row = [&](const float4(&wv)[V], const float(&xv)[kT]) {
#pragma unroll
      for (int t = 0; t < kT; ++t)
#pragma unroll
        for (int v = 0; v < V; ++v) {
          acc[t][v][0] = fmaf(wv[v].x, xv[t], acc[t][v][0]);
          acc[t][v][1] = fmaf(wv[v].y, xv[t], acc[t][v][1]);
          acc[t][v][2] = fmaf(wv[v].z, xv[t], acc[t][v][2]);
          acc[t][v][3] = fmaf(wv[v].w, xv[t], acc[t][v][3]);
        }
    };
    constexpr int kRowStep = Cfg::kWarps;
    int k = k_begin + warp;
    for (; k + (U - 1) * kRowStep < k_end; k += U * kRowStep) {
      float4 wv[U][V];
      float xv[U][kT];
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int v = 0; v < V; ++v) wv[u][v] = load_w(v, k + u * kRowStep);
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int t = 0; t < kT; ++t) xv[u][t] = __ldg(xrow[t] + k + u * kRowStep);
#pragma unroll
      for (int u = 0; u < U; ++u) fma_row(wv[u], xv[u]);
    }
    for (; k < k_end; k += kRowStep) {
      float4 wv[V];
      float xv[kT];
#pragma unroll
      for (int v = 0; v < V; ++v) wv[v] = load_w(v, k);
#pragma unroll
      for (int t = 0; t < kT; ++t) xv[t] = __ldg(xrow[t] + k);
      fma_row(wv, xv);
    }
    // The warps' sums meet in shared memory (red[warp][t][column]), added in warp order.
    __shared__ float4 red[Cfg::kWarps][kT][32 * V];
#pragma unroll
    for (int t = 0; t < kT; ++t)
#pragma unroll
      for (int v = 0; v < V; ++v)
        red[warp][t][32 * v + lane] = make_float4(acc[t][v][0], acc[t][v][1], acc[t][v][2], acc[t][v][3]);
    __syncthreads();
    for (int idx = static_cast<int>(threadIdx.x); idx < kT * BN; idx += Cfg::kThreads) {
      const int t = idx / BN, n = idx % BN;
      float v = 0.0f;
#pragma unroll
      for (int s = 0; s < Cfg::kWarps; ++s) v += reinterpret_cast<const float*>(&red[s][t][0])[n];
      sums[idx] = v;
    }
    __syncthreads();
  }

  auto store = [&](int idx, float v) {
    const int t = idx / BN, n = n0 + idx % BN;
    if (t >= p.t || n >= p.n) return;
    const int64_t offset = static_cast<int64_t>(t) * p.c_stride_t + static_cast<int64_t>(n) * p.c_stride_n;
    float bias = 0.0f;
    if constexpr (kEpilogue) bias = p.epi.bias_at(0, p.bias_along_t ? t : n);
    store_one<float, kEpilogue>(static_cast<float*>(p.c) + offset, v, p.alpha, p.beta, bias, p.epi.act);
  };
  if (wk.splits == 1) {
    for (int idx = static_cast<int>(threadIdx.x); idx < kT * BN; idx += Cfg::kThreads) store(idx, sums[idx]);
    return;
  }
  // Split K: park, take a ticket, and the group's last block adds the ranges in order.
  float* part = wk.partials + static_cast<int64_t>(group) * wk.splits * (kT * BN);
  for (int idx = static_cast<int>(threadIdx.x); idx < kT * BN; idx += Cfg::kThreads)
    __stcg(part + static_cast<int64_t>(split) * (kT * BN) + idx, sums[idx]);
  __threadfence();
  __syncthreads();
  __shared__ int last;
  if (threadIdx.x == 0) last = take_arrival_ticket(wk.arrivals + group, wk.tag) == static_cast<uint32_t>(wk.splits - 1);
  __syncthreads();
  if (!last) return;
  __threadfence();
  for (int idx = static_cast<int>(threadIdx.x); idx < kT * BN; idx += Cfg::kThreads) {
    float v = 0.0f;
#pragma unroll 8
    for (int s = 0; s < wk.splits; ++s) v += __ldcg(part + static_cast<int64_t>(s) * (kT * BN) + idx);
    store(idx, v);
  }
}

}  // namespace gpukern::cuda::gemm
