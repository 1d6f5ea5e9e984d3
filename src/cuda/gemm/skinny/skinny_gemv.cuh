// The CUDA-core path of rung 14 `skinny` (see 14_skinny.cu) at T <= 4: a GEMV-style kernel.
// At one or two tokens the tensor-core kernels waste most of their work (7 of 8 columns of
// an n8 tile of T; exact f32 spends three mma on every product) and, with N-contiguous W and
// 32-bit elements, load their fragments a 4-byte word at a time; here every thread streams W
// in 16-byte loads straight into registers and does T f32 FMAs per element, so the call is
// the read of W and nothing else. Products and sums are plain f32 FMAs: exact f32 as it is
// (no 3xTF32 split), tf32 calls get the same, more accurate, result, and f16 / bf16
// elements are widened to f32 as they arrive (kVec = 16 / element bytes: 4 or 8 a load).
//  * K-contiguous W (a linear layer's weight): each warp takes kRows rows of W and walks K
//    in steps of 32 kVec elements (a 16-byte load per lane and row), kUnrollK steps of loads
//    in flight before their FMAs; X's kVec elements per step come through L1 (ld.global.nc;
//    every warp of the block reads the same ones). The 32 lanes' sums meet by shuffles.
//  * N-contiguous W: each lane takes kVec adjacent columns (a 16-byte load per K row, a warp
//    512 contiguous bytes of a row; kColVecs such chunks), the block 32 kVec columns (times
//    kColVecs), its warps interleaved over the block's K rows, several rows of loads in
//    flight; X's element per row is one address for the whole warp (a broadcast). The
//    warps' sums meet in shared memory.
// W is read once: evict-first in L2 up to 8 times the L2's size (it then displaces itself,
// not lines still dirty from earlier work), plain loads beyond, where they read faster
// (arch::once_read_evict_first; the launch picks the kernel).
// K split: a group (a block's rows or columns) may be cut into `splits` K ranges, one block
// each, so that few groups still fill the SMs; every block parks its f32 sums and the last of
// the group to arrive (arrival_ticket.cuh) adds them in split order and writes C
// (deterministic; nobody waits). C is written as skinny_kernel writes it: through its strides,
// alpha/beta, and the fused epilogue (bias, activation) in f32, once.
#pragma once

#include "cuda/gemm/arrival_ticket.cuh"
#include "cuda/gemm/skinny/skinny.cuh"
#include "cuda/gemm/tensor_core_common.cuh"

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace gpukern::cuda::gemm {

/// The configuration of skinny_gemv_kernel: kWarps warps a block. K-contiguous W: kRows W
/// rows per warp, kUnrollK 16-byte loads of each row in flight per lane before their FMAs.
/// N-contiguous W: kColVecs 16-byte column chunks per lane (a block 32 kColVecs chunks of
/// 16 bytes: 128 kColVecs columns of 32-bit elements, 256 kColVecs of 16-bit ones),
/// kUnrollN K rows of them in flight per lane at T <= 2, half as many at T 3-4 (whose X
/// values and sums take the registers); at T = 2 the compiler keeps that kernel to the
/// registers of kMinBlocksN blocks an SM (0: no bound), and 16-bit elements, whose widening
/// takes registers of its own, then keep 3/4 of kUnrollN rows in flight (no spills). Sizes
/// in elements take the element's bytes.
template <int kRows_, int kUnrollK_, int kUnrollN_, int kColVecs_ = 1, int kWarps_ = 8, int kMinBlocksN_ = 0>
struct SkinnyGemvConfig {
  static constexpr int kRows = kRows_, kUnrollK = kUnrollK_, kUnrollN = kUnrollN_, kColVecs = kColVecs_;
  static constexpr int kWarps = kWarps_, kThreads = kWarps * 32;
  /// The blocks an SM the kernel of `t_rows` rows of X is compiled for (__launch_bounds__).
  static constexpr int min_blocks(bool w_k_major, int t_rows) { return !w_k_major && t_rows == 2 ? kMinBlocksN_ : 0; }
  static constexpr int kMaxT = 4;  // rows of X the kernel takes
  /// Elements of `elem_bytes` in one 16-byte load.
  static constexpr int vec(std::size_t elem_bytes) { return static_cast<int>(16 / elem_bytes); }
  /// W rows (K-contiguous) or columns (N-contiguous) of a group.
  static constexpr int block_n(bool w_k_major, std::size_t elem_bytes) {
    return w_k_major ? kWarps * kRows : 32 * vec(elem_bytes) * kColVecs;
  }
  /// Loads of each row (K-contiguous) or K rows (N-contiguous) in flight per lane, for the
  /// kernel of `t_rows` rows of X and elements of `elem_bytes`.
  static constexpr int unroll(bool w_k_major, int t_rows, std::size_t elem_bytes) {
    if (w_k_major) return kUnrollK;
    if (t_rows == 2 && kMinBlocksN_ > 0 && elem_bytes == 2) return kUnrollN * 3 / 4;
    return t_rows <= 2 ? kUnrollN : (kUnrollN + 1) / 2;
  }
  /// K elements a range of a split group is a multiple of: a warp's step of K (K-contiguous
  /// W: 32 loads of 16 bytes) or the block's rows of one unrolled round (N-contiguous).
  static constexpr int k_grain(bool w_k_major, int t_rows, std::size_t elem_bytes) {
    return w_k_major ? 32 * vec(elem_bytes) : kWarps * unroll(false, t_rows, elem_bytes);
  }
  static_assert(kRows * kMaxT <= 32, "one lane stores each of a warp's sums");
};

/// The shipped configuration (notes/llm-gemm.md, "A CUDA-core GEMV for 32-bit decode").
/// N-contiguous W at T = 2 is held to four blocks an SM, as at T = 1: at the vocabulary's
/// width (501 groups of 256 columns) they are then one wave of whole-K blocks, where three
/// blocks an SM (the 16-bit kernel's registers unbounded) cut each group's K in four over
/// five waves and read the weight ~7% slower ("The vocabulary's weight read without an L2
/// policy").
using SkinnyGemvCfg = SkinnyGemvConfig<1, 2, 8, 1, 8, 4>;

/// A launch of skinny_gemv_kernel: the groups, the K split, and its workspace.
struct SkinnyGemvWork {
  int splits = 1;                // K ranges per group, one block each (blockIdx.x % splits)
  int k_range = 0;               // K elements of a range (the last may be shorter)
  float* partials = nullptr;     // splits > 1: (group, split) x kT x block_n f32 sums
  uint64_t* arrivals = nullptr;  // splits > 1: one arrival word per group
  uint64_t tag = 0;              // splits > 1: this launch's arrival tag
};

/// A load of W: evict-first (ld.global.cs: W displaces itself, not lines still dirty or to be
/// reused) or plain (ld.global.nc), as arch::once_read_evict_first chooses by W's size.
template <bool kEvictFirst, class V>
__device__ __forceinline__ V gemv_load_w(const V* src) {
  if constexpr (kEvictFirst)
    return __ldcs(src);
  else
    return __ldg(src);
}

/// The kVec = 16 / sizeof(T) elements of one 16-byte load, in f32: 32-bit elements as they
/// are, 16-bit ones a pair per word (unpack_pair).
template <class T>
__device__ __forceinline__ void gemv_unpack(const uint4& raw, float (&out)[16 / sizeof(T)]) {
  const uint32_t words[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    if constexpr (sizeof(T) == 4) {
      out[i] = __uint_as_float(words[i]);
    } else {
      const float2 f = unpack_pair<T>(words[i]);
      out[2 * i] = f.x;
      out[2 * i + 1] = f.y;
    }
  }
}

/// One block: group blockIdx.x / splits of W (kWKMajor: block_n rows; else block_n columns)
/// over K range blockIdx.x % splits, against the p.t <= kT rows of X (stored K-contiguous;
/// rows past p.t read row p.t - 1 and are never stored). Elements of T (f32 for tf32 and
/// exact f32 calls, f16 or bf16), f32 products and sums; C in f32, or in T where p.c_f32 is
/// off. One batch item. W's loads evict-first in L2 (ld.global.cs) with kEvictFirst, else
/// plain (gemv_load_w).
template <class Cfg, class T, int kT, bool kWKMajor, bool kEpilogue = false, bool kEvictFirst = true>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::min_blocks(kWKMajor, kT))
    skinny_gemv_kernel(SkinnyProblem p, SkinnyGemvWork wk) {
  constexpr int kVec = Cfg::vec(sizeof(T));
  constexpr int BN = Cfg::block_n(kWKMajor, sizeof(T)), U = Cfg::unroll(kWKMajor, kT, sizeof(T));
  static_assert(kT >= 1 && kT <= Cfg::kMaxT, "T rows of X: 1..kMaxT");
  const int group = static_cast<int>(blockIdx.x) / wk.splits, split = static_cast<int>(blockIdx.x) % wk.splits;
  const int n0 = group * BN;
  const int k_begin = split * wk.k_range, k_end = min(p.k, k_begin + wk.k_range);
  const int lane = static_cast<int>(threadIdx.x) % 32, warp = static_cast<int>(threadIdx.x) / 32;
  arch::wait_grid_dependency();  // launched as a programmatic dependent (launch_kernel)
  const T* w = static_cast<const T*>(p.w);
  const T* xrow[kT];
#pragma unroll
  for (int t = 0; t < kT; ++t) xrow[t] = static_cast<const T*>(p.x) + min(t, p.t - 1) * p.ldx;

  // The block's sums, sums[t * BN + n]; N-contiguous W first reduces its warps' sums here.
  __shared__ float sums[kT * BN];
  if constexpr (kWKMajor) {
    // Lane l covers K elements k0 + kVec l .. + kVec - 1 of each step of 32 kVec; rows past N
    // read row 0 of W (never stored).
    constexpr int kStep = 32 * kVec;
    const T* wrow[Cfg::kRows];
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
    int k = k_begin + kVec * lane;
    // Whole rounds: U steps whose kVec elements all lie inside the range.
    for (; k + (U - 1) * kStep + kVec <= k_end; k += U * kStep) {
      uint4 wv[U][Cfg::kRows], xv[U][kT];
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int r = 0; r < Cfg::kRows; ++r)
          wv[u][r] = gemv_load_w<kEvictFirst>(reinterpret_cast<const uint4*>(wrow[r] + k + u * kStep));
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int t = 0; t < kT; ++t) xv[u][t] = __ldg(reinterpret_cast<const uint4*>(xrow[t] + k + u * kStep));
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int t = 0; t < kT; ++t) {
          float xf[kVec];
          gemv_unpack<T>(xv[u][t], xf);
#pragma unroll
          for (int r = 0; r < Cfg::kRows; ++r) {
            float wf[kVec];
            gemv_unpack<T>(wv[u][r], wf);  // the same for every t: the compiler keeps one
#pragma unroll
            for (int e = 0; e < kVec; ++e) acc[r][t] = fmaf(wf[e], xf[e], acc[r][t]);
          }
        }
    }
    // The rest of the range, element by element (K past the end reads nothing).
    for (; k < k_end; k += kStep)
#pragma unroll
      for (int e = 0; e < kVec; ++e)
        if (k + e < k_end)
#pragma unroll
          for (int r = 0; r < Cfg::kRows; ++r) {
            const float wv = gpu::to_float(gemv_load_w<kEvictFirst>(wrow[r] + k + e));
#pragma unroll
            for (int t = 0; t < kT; ++t) acc[r][t] = fmaf(wv, gpu::to_float(__ldg(xrow[t] + k + e)), acc[r][t]);
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
    // Lane l covers columns n0 + kVec l .. + kVec - 1 (and + 32 kVec, ... with kColVecs > 1);
    // warp w K rows k_begin + w, + kWarps, ...
    constexpr int V = Cfg::kColVecs;
    const T* wcol[V];
    bool whole[V];
    int col[V];
#pragma unroll
    for (int v = 0; v < V; ++v) {
      col[v] = n0 + 32 * kVec * v + kVec * lane;
      whole[v] = col[v] + kVec <= p.n;
      wcol[v] = w + (col[v] < p.n ? col[v] : 0);
    }
    float acc[kT][V][kVec];
#pragma unroll
    for (int t = 0; t < kT; ++t)
#pragma unroll
      for (int v = 0; v < V; ++v)
#pragma unroll
        for (int e = 0; e < kVec; ++e) acc[t][v][e] = 0.0f;
    auto fma_row = [&](const uint4(&wv)[V], const float(&xv)[kT]) {
#pragma unroll
      for (int v = 0; v < V; ++v) {
        float wf[kVec];
        gemv_unpack<T>(wv[v], wf);
#pragma unroll
        for (int t = 0; t < kT; ++t)
#pragma unroll
          for (int e = 0; e < kVec; ++e) acc[t][v][e] = fmaf(wf[e], xv[t], acc[t][v][e]);
      }
    };
    // The walk over the range's K rows. kWhole: every chunk of the lane lies inside N (all but
    // the last group's last lanes), so the loop has no column checks; else each chunk's
    // columns past N read as zeros.
    auto walk = [&](auto whole_tag) {
      constexpr bool kWhole = decltype(whole_tag)::value;
      auto load_w = [&](int v, int krow) {
        const T* src = wcol[v] + static_cast<int64_t>(krow) * p.ldw;
        if constexpr (kWhole) {
          return gemv_load_w<kEvictFirst>(reinterpret_cast<const uint4*>(src));
        } else {
          if (whole[v]) return gemv_load_w<kEvictFirst>(reinterpret_cast<const uint4*>(src));
          union {
            uint4 raw;
            T e[kVec];
          } part;
#pragma unroll
          for (int e = 0; e < kVec; ++e)
            part.e[e] = col[v] + e < p.n ? gemv_load_w<kEvictFirst>(src + e) : gpu::from_float<T>(0.0f);
          return part.raw;
        }
      };
      constexpr int kRowStep = Cfg::kWarps;
      int k = k_begin + warp;
      for (; k + (U - 1) * kRowStep < k_end; k += U * kRowStep) {
        uint4 wv[U][V];
        float xv[U][kT];
#pragma unroll
        for (int u = 0; u < U; ++u)
#pragma unroll
          for (int v = 0; v < V; ++v) wv[u][v] = load_w(v, k + u * kRowStep);
#pragma unroll
        for (int u = 0; u < U; ++u)
#pragma unroll
          for (int t = 0; t < kT; ++t) xv[u][t] = gpu::to_float(__ldg(xrow[t] + k + u * kRowStep));
#pragma unroll
        for (int u = 0; u < U; ++u) fma_row(wv[u], xv[u]);
      }
      for (; k < k_end; k += kRowStep) {
        uint4 wv[V];
        float xv[kT];
#pragma unroll
        for (int v = 0; v < V; ++v) wv[v] = load_w(v, k);
#pragma unroll
        for (int t = 0; t < kT; ++t) xv[t] = gpu::to_float(__ldg(xrow[t] + k));
        fma_row(wv, xv);
      }
    };
    bool all_whole = true;
#pragma unroll
    for (int v = 0; v < V; ++v) all_whole = all_whole && whole[v];
    if (all_whole)
      walk(std::true_type{});
    else
      walk(std::false_type{});
    // The warps' sums meet in shared memory (red[warp][t][column]), added in warp order.
    __shared__ __align__(16) float red[Cfg::kWarps][kT][BN];
#pragma unroll
    for (int t = 0; t < kT; ++t)
#pragma unroll
      for (int v = 0; v < V; ++v)
#pragma unroll
        for (int e = 0; e < kVec; e += 4)
          *reinterpret_cast<float4*>(&red[warp][t][32 * kVec * v + kVec * lane + e]) =
              make_float4(acc[t][v][e], acc[t][v][e + 1], acc[t][v][e + 2], acc[t][v][e + 3]);
    __syncthreads();
    for (int idx = static_cast<int>(threadIdx.x); idx < kT * BN; idx += Cfg::kThreads) {
      const int t = idx / BN, n = idx % BN;
      float v = 0.0f;
#pragma unroll
      for (int s = 0; s < Cfg::kWarps; ++s) v += red[s][t][n];
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
    if (sizeof(T) == 4 || p.c_f32)  // 32-bit elements: C is f32
      store_one<float, kEpilogue>(static_cast<float*>(p.c) + offset, v, p.alpha, p.beta, bias, p.epi.act);
    else
      store_one<T, kEpilogue>(static_cast<T*>(p.c) + offset, v, p.alpha, p.beta, bias, p.epi.act);
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
