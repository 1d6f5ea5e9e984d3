// skinny's TMA path (rung 14, see 14_skinny.cu): f16/bf16, tf32 and exact f32 (3xTF32), T <= 16
// activation rows stored K-contiguous, on sm_90. The same product as skinny_kernel (Y(t, n) = sum_k X(t, k) W(n, k),
// swap AB: W is mma.sync's m16 operand, X its n8 operand), with the loads and the work
// split changed so that every SM streams the same bytes at the copy engine's rate:
//  * One wave, persistent: the grid is at most one CTA per SM (or a few), and the work units,
//    (N tile of kBlockN rows, K block of 64 elements) in tile-major order, are cut into one
//    equal contiguous range per CTA ("stream-K"). Every CTA reads the same number of bytes,
//    give or take one unit, so no SM idles while a tail of blocks finishes. A grid of
//    tiles x S CTAs makes the ranges the S equal K chunks of every tile (a plain split-K, S = 1:
//    one CTA per tile, nothing cut); skinny_tma_plan picks the grid per shape.
//  * Weights by TMA: one producer thread issues each unit's W box (kBlockN rows x 128 bytes,
//    or 64 x 64 boxes of N-contiguous W) and X box (16 rows, rows past T zero-filled) into a
//    ring of stages, completing on a "full" mbarrier; W (read once) evict-first in L2 up to
//    8 times the L2's size and without a policy beyond (arch::once_read_evict_first), X
//    evict-last (every CTA reads it). The bytes in flight per SM are set by the
//    ring, not by how many 16-byte cp.async the threads can keep outstanding.
//  * Consumer warps, 16 rows of the tile each, read fragments with ldmatrix from the 128-byte
//    swizzle TMA writes and hand the stage back on its "empty" mbarrier. A box row is 128 bytes
//    of K whatever the element: 64 16-bit or 32 32-bit elements, four mma K steps (k16 or the
//    tf32 k8) either way, and ldmatrix's 8 x 8 16-bit matrices are the tf32 fragments' 8 x 4
//    32-bit ones, so the same loads serve both; only N-contiguous 32-bit W (which
//    ldmatrix.trans cannot transpose) reads its fragments a word at a time.
//  * A CTA's range covers the middle of some tiles wholly and cuts at most two (its first and
//    last). A wholly covered tile is stored from the registers; a cut one is parked as f32
//    (only T columns, rounded up to even) per (CTA, first/last) slot and, per consumer warp's
//    rows, the last of the tile's CTAs to arrive (a tagged ticket word, no clearing pass) adds
//    the parked sums in CTA order, which is fixed by the grid: the result is deterministic for
//    a given grid. Nobody waits.
#pragma once

#include "cuda/arch/bulk_copy.cuh"
#include "cuda/arch/cache_policy.cuh"
#include "cuda/arch/mbarrier.cuh"
#include "cuda/arch/mma_sm80.cuh"
#include "cuda/arch/shared_memory.cuh"
#include "cuda/gemm/arrival_ticket.cuh"
#include "cuda/gemm/skinny/skinny.cuh"

#include <cuda.h>  // CUtensorMap (types only)

#include <cstdint>

namespace gpukern::cuda::gemm {

/// The TMA path's layout for a tuning `Tile` with the named fields kBlockN (rows of W per
/// work unit, a multiple of 64 up to 256), kKBoxes (128-byte K boxes per unit, 1 to 4) and
/// kMmaM (m16 tiles per consumer warp, 1 or 2), for elements of kElemBytes (2 or 4): kElems =
/// 128 / kElemBytes elements of K per box, kElems kKBoxes per unit, T padded to 16 (two n8
/// tiles), one consumer warp per 16 kMmaM rows. A stage holds W as kKBoxes boxes of kBlockN
/// rows x 128 bytes (K-contiguous W) or kBlockN / kElems boxes of kBlockK rows (K) x 128 bytes
/// (N-contiguous W), then X as kKBoxes boxes of 16 rows x 128 bytes; every box in the 128-byte
/// swizzle. The bytes of a stage do not depend on the element size.
template <class Tile, int kElemBytes = 2>
struct SkinnyTmaConfig {
  static constexpr int kBlockN = Tile::kBlockN;
  static constexpr int kKBoxes = Tile::kKBoxes;
  static constexpr int kRowBytes = 128;
  static constexpr int kElems = kRowBytes / kElemBytes;  // K elements per box row
  static constexpr int kBlockK = kElems * kKBoxes;       // K elements per unit
  static constexpr int kMaxT = 16;
  static constexpr int kMmaM = Tile::kMmaM;     // m16 tiles per consumer warp
  static constexpr int kWarpRows = 16 * kMmaM;  // W rows per consumer warp
  static constexpr int kConsumerWarps = kBlockN / kWarpRows;
  static constexpr int kThreads = (kConsumerWarps + 1) * 32;
  static constexpr int kWBytes = kBlockN * kKBoxes * kRowBytes;
  static constexpr int kXBytes = kKBoxes * kMaxT * kRowBytes;
  static constexpr int kStageBytes = kWBytes + kXBytes;
  static constexpr int kWKBoxBytes = kBlockN * kRowBytes;  // K-contiguous W: one K box
  static constexpr int kWNBoxBytes = kBlockK * kRowBytes;  // N-contiguous W: one box of kElems columns
  static constexpr int kWNBoxes = kBlockN / kElems;        // N-contiguous W: boxes per unit
  static constexpr int kXBoxBytes = kMaxT * kRowBytes;
  static_assert(kElemBytes == 2 || kElemBytes == 4, "16- or 32-bit elements");
  static_assert(kBlockN % 64 == 0 && kBlockN <= 256, "whole 64-row boxes, at most 256 rows a TMA box");
  static_assert(kKBoxes >= 1 && kBlockK <= 256, "at most 256 K rows a TMA box (N-contiguous W)");
  static_assert(kMmaM == 1 || kMmaM == 2, "one or two m16 tiles per consumer warp");
  static_assert(kStageBytes % 1024 == 0 && kXBoxBytes % 1024 == 0 && kWKBoxBytes % 1024 == 0,
                "the 128-byte swizzle needs every box 1024-byte aligned");
  /// Shared memory per stage beyond its boxes: a full and an empty barrier.
  static constexpr int kStageExtraBytes = 16;
  /// Shared memory of `stages` stages: the ring, the per-stage extras, and the slack that
  /// aligns the ring to 1024 bytes.
  static constexpr int smem_bytes(int stages) { return stages * (kStageBytes + kStageExtraBytes) + 1024; }
};

/// The grid's share of the work and the workspace of cut tiles, passed by value.
struct SkinnyTmaWork {
  int n_tiles = 0;               // N tiles of kBlockN rows
  int k_blocks = 0;              // K blocks of kBlockK elements
  int stages = 2;                // ring depth
  int park_pitch = 16;           // f32 per parked row: T rounded up to even
  float* partials = nullptr;     // 2 slots per CTA x kBlockN x park_pitch f32 sums (cut tiles only)
  uint64_t* arrivals = nullptr;  // one ticket word per (N tile, consumer warp)
  uint64_t tag = 0;              // this launch's arrival tag (arrival_tag)
  bool w_evict_first = true;     // W's copies evict_first in L2, else without a policy
};

/// The tile-major units [units * cta / ctas, units * (cta + 1) / ctas) of CTA `cta`, and the
/// CTA whose range holds unit u (the largest cta whose range starts at or before u).
__device__ __forceinline__ int64_t skinny_tma_first_unit(int64_t units, int cta, int ctas) {
  return units * cta / ctas;
}
__device__ __forceinline__ int skinny_tma_owner(int64_t units, int ctas, int64_t u) {
  return static_cast<int>(((u + 1) * ctas + units - 1) / units - 1);
}

/// C[offset] = act(alpha * v + beta * C + bias[bias_col]) of one element, rounded once. Not
/// inlined: the 32 stores of a warp's tile share one copy of the activation code.
template <class T>
__device__ __noinline__ void skinny_tma_store(void* c, int64_t offset, bool c_f32, float v, float alpha, float beta,
                                              Epilogue epi, int bias_col) {
  if (epi.active()) {
    const float bias = epi.bias_at(0, bias_col);
    if (c_f32)
      store_one<float, true>(static_cast<float*>(c) + offset, v, alpha, beta, bias, epi.act);
    else
      store_one<T, true>(static_cast<T*>(c) + offset, v, alpha, beta, bias, epi.act);
  } else if (c_f32) {
    store_one<float, false>(static_cast<float*>(c) + offset, v, alpha, beta);
  } else {
    store_one<T, false>(static_cast<T*>(c) + offset, v, alpha, beta);
  }
}

/// One CTA of the persistent grid (see the top of this file). `kWKMajor`: W stored (n, k) at
/// n * ldw + k (a linear layer's weight, trans_b); else at k * ldw + n. X is stored (t, k).
/// T = float: tf32 products (both fragments rounded), or with `kSplitF32` exact f32 (3xTF32,
/// as skinny_kernel: each K box's products summed apart and added to the sums in f32).
/// `kXTiles`: the n8 tiles of T computed, 2 (T <= 16), or 1 (T <= 8, 32-bit elements only: a
/// tf32 or 3xTF32 product costs the tensor cores more than a 16-bit one, and at T = 1 the
/// second tile is all zeros; the 16-bit kernel is memory-bound either way).
/// Batches are not fused here (the launcher keeps them on skinny_kernel).
template <class Cfg, class T, bool kWKMajor, bool kSplitF32 = false, int kXTiles = 2>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    skinny_tma_kernel(const __grid_constant__ CUtensorMap map_w, const __grid_constant__ CUtensorMap map_x,
                      SkinnyProblem p, SkinnyTmaWork wk) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  static_assert(sizeof(T) * Cfg::kElems == Cfg::kRowBytes, "the configuration's element size is T's");
  static_assert(!kSplitF32 || sizeof(T) == 4, "3xTF32 splits f32 elements");
  constexpr bool k32 = sizeof(T) == 4;
  static_assert(kXTiles == 2 || (kXTiles == 1 && k32), "one n8 tile of T for 32-bit elements only");
  constexpr int BN = Cfg::kBlockN, kWarps = Cfg::kConsumerWarps;
  extern __shared__ uint8_t smem_raw[];
  const uint32_t base = (arch::smem_addr(smem_raw) + 1023) & ~1023u;
  const int stages = wk.stages;
  auto w_tile = [&](int s) { return base + static_cast<uint32_t>(s * Cfg::kStageBytes); };
  auto x_tile = [&](int s) { return w_tile(s) + Cfg::kWBytes; };
  auto full = [&](int s) { return base + static_cast<uint32_t>(stages * Cfg::kStageBytes + 8 * s); };
  auto empty = [&](int s) { return full(stages + s); };

  // Warp-uniform role (broadcast from lane 0, so the branches below are uniform).
  const int warp = __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x) / 32, 0);
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int cta = static_cast<int>(blockIdx.x), ctas = static_cast<int>(gridDim.x);
  const int64_t kb_count = wk.k_blocks;
  const int64_t units = static_cast<int64_t>(wk.n_tiles) * kb_count;
  const int64_t u_begin = skinny_tma_first_unit(units, cta, ctas), u_end = skinny_tma_first_unit(units, cta + 1, ctas);
  // The producer's tensor-map prefetches, L2 policies and first unit come before the CTA's
  // sync, while a consumer thread sets up the barriers: its first copy waits for the
  // barriers only, not for its divisions as well.
  uint64_t stream = 0, keep = 0;
  int first_tile = 0, first_kb = 0;
  if (warp == kWarps && lane == 0) {
    arch::prefetch_tensor_map(&map_w);
    arch::prefetch_tensor_map(&map_x);
    stream = arch::l2_evict_first_policy();
    keep = arch::l2_evict_last_policy();
    first_tile = static_cast<int>(u_begin / kb_count);
    first_kb = static_cast<int>(u_begin - first_tile * kb_count);
  }
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      arch::mbar_init(full(s), 1);
      arch::mbar_init(empty(s), kWarps);
    }
    arch::fence_barrier_init();
  }
  __syncthreads();
  // Launched as a programmatic dependent (launch_kernel): the set-up above overlapped the
  // stream's previous kernel; global memory from here on.
  arch::wait_grid_dependency();

  if (warp == kWarps) {
    // ---------------- producer: one thread ----------------
    if (lane != 0) return;
    int s = 0;
    uint32_t phase = 0;
    int tile = first_tile, kb = first_kb;
    // A box of W into `dst`: evict_first in L2, or without a policy (wk.w_evict_first).
    const auto load_w = [&](uint32_t dst, uint32_t bar, int c0, int c1) {
      if (wk.w_evict_first)
        arch::tma_load_2d_hint(dst, &map_w, bar, c0, c1, stream);
      else
        arch::tma_load_2d(dst, &map_w, bar, c0, c1);
    };
    for (int64_t u = u_begin; u < u_end; ++u) {
      const int n0 = tile * BN, k0 = kb * Cfg::kBlockK;
      if (++kb == wk.k_blocks) kb = 0, ++tile;
      arch::mbar_wait(empty(s), phase ^ 1);  // a fresh barrier passes parity 1 at once
      arch::mbar_arrive_expect_tx(full(s), Cfg::kStageBytes);
      constexpr int E = Cfg::kElems;
      if constexpr (kWKMajor) {
#pragma unroll
        for (int b = 0; b < Cfg::kKBoxes; ++b) load_w(w_tile(s) + b * Cfg::kWKBoxBytes, full(s), k0 + E * b, n0);
      } else {
#pragma unroll
        for (int b = 0; b < Cfg::kWNBoxes; ++b) load_w(w_tile(s) + b * Cfg::kWNBoxBytes, full(s), n0 + E * b, k0);
      }
#pragma unroll
      for (int b = 0; b < Cfg::kKBoxes; ++b)
        arch::tma_load_2d_hint(x_tile(s) + b * Cfg::kXBoxBytes, &map_x, full(s), k0 + E * b, 0, keep);
      if (++s == stages) s = 0, phase ^= 1;
    }
    return;
  }

  // ------------ consumers: warp `warp` owns rows kWarpRows warp .. of every tile ------------
  const int g = lane >> 2, q = lane & 3;  // mma fragment coordinates
  const int mat = lane >> 3;              // the 8x8 matrix whose row address this lane gives to ldmatrix
  // Two sets of sums, for even and odd K steps: each mma depends on the one two steps back,
  // so a burst of stages drains at twice the rate of a single chain.
  float acc2[2][Cfg::kMmaM][2][4];
  auto clear = [&] {
#pragma unroll
    for (int p2 = 0; p2 < 2; ++p2)
#pragma unroll
      for (int i = 0; i < Cfg::kMmaM; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc2[p2][i][j][e] = 0.0f;
  };
  clear();

  // Element (i, j, e) of a fragment-shaped sum: W row (n) and X row (t) of the tile.
  auto frag_n = [&](int i, int e) { return warp * Cfg::kWarpRows + 16 * i + g + 8 * (e >> 1); };
  auto frag_t = [&](int j, int e) { return 8 * j + 2 * q + (e & 1); };
  auto store = [&](int tile, const float(&v)[Cfg::kMmaM][2][4]) {
#pragma unroll
    for (int i = 0; i < Cfg::kMmaM; ++i)
#pragma unroll
      for (int j = 0; j < 2; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int n = tile * BN + frag_n(i, e), t = frag_t(j, e);
          if (n < p.n && t < p.t)
            skinny_tma_store<T>(p.c, static_cast<int64_t>(t) * p.c_stride_t + static_cast<int64_t>(n) * p.c_stride_n,
                                p.c_f32, v[i][j][e], p.alpha, p.beta, p.epi, p.bias_along_t ? t : n);
        }
  };
  // A parking slot holds a piece's kBlockN x park_pitch sums (row-major), two per CTA (its
  // first and last tile); this warp's rows start kWarpRows warp rows in.
  const int pitch = wk.park_pitch;
  auto slot_of = [&](int owner, int64_t tile_first_unit) {
    const bool first = skinny_tma_first_unit(units, owner, ctas) >= tile_first_unit;  // the tile is owner's first
    return wk.partials + ((2 * owner + (first ? 0 : 1)) * static_cast<int64_t>(BN) + warp * Cfg::kWarpRows) * pitch;
  };

  // The end of this CTA's piece of a tile: store a whole tile, or park the piece and let the
  // tile's last arriving piece add all of them in CTA order (deterministic for a given grid:
  // the order is fixed by the grid, not by who arrives last). Nobody waits.
  auto finish = [&](int tile) {
    // This piece's sums (the two K-step sets added in a fixed order).
    float acc[Cfg::kMmaM][2][4];
#pragma unroll
    for (int i = 0; i < Cfg::kMmaM; ++i)
#pragma unroll
      for (int j = 0; j < 2; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[i][j][e] = acc2[0][i][j][e] + acc2[1][i][j][e];
    clear();
    // The tile's pieces 0 .. pieces - 1 (CTAs first_owner ..) and this one's index `mine`.
    const int64_t tile_first = tile * kb_count;
    const int first_owner = skinny_tma_owner(units, ctas, tile_first);
    const int pieces = skinny_tma_owner(units, ctas, tile_first + kb_count - 1) - first_owner + 1;
    const int mine = cta - first_owner;
    if (pieces == 1) {
      store(tile, acc);
      return;
    }
    auto slot = [&](int i) { return slot_of(first_owner + i, tile_first); };
    // Only the pitch's columns (T rounded up to even) are parked and read back.
    float* park = slot(mine);
#pragma unroll
    for (int i = 0; i < Cfg::kMmaM; ++i)
#pragma unroll
      for (int j = 0; j < 2; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h)
          if (8 * j + 2 * q < pitch)
            __stcg(reinterpret_cast<float2*>(park + (16 * i + g + 8 * h) * pitch + 8 * j + 2 * q),
                   make_float2(acc[i][j][2 * h], acc[i][j][2 * h + 1]));
    __threadfence();
    __syncwarp();
    int is_last = 0;
    if (lane == 0) {
      uint64_t* word = wk.arrivals + static_cast<int64_t>(tile) * kWarps + warp;
      is_last = take_arrival_ticket(word, wk.tag) == static_cast<uint32_t>(pieces - 1);
    }
    if (!__shfl_sync(0xffffffffu, is_last, 0)) return;
    __threadfence();
    // Sum in piece order (this piece from its registers, the same values it parked); the
    // loads of up to kGroup pieces are issued before any is added, so the sum costs
    // ceil(pieces / kGroup) dependent L2 round trips.
    constexpr int kGroup = 8;
    float sum[Cfg::kMmaM][2][4] = {};
    for (int o0 = 0; o0 < pieces; o0 += kGroup) {
      float2 v[kGroup][Cfg::kMmaM][2][2];
#pragma unroll
      for (int d = 0; d < kGroup; ++d) {
        const int o = o0 + d;
        const float* src = o < pieces && o != mine ? slot(o) : nullptr;
#pragma unroll
        for (int i = 0; i < Cfg::kMmaM; ++i)
#pragma unroll
          for (int j = 0; j < 2; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h)
              v[d][i][j][h] =
                  src && 8 * j + 2 * q < pitch
                      ? __ldcg(reinterpret_cast<const float2*>(src + (16 * i + g + 8 * h) * pitch + 8 * j + 2 * q))
                  : o == mine ? make_float2(acc[i][j][2 * h], acc[i][j][2 * h + 1])
                              : make_float2(0.0f, 0.0f);
      }
#pragma unroll
      for (int d = 0; d < kGroup; ++d)
#pragma unroll
        for (int i = 0; i < Cfg::kMmaM; ++i)
#pragma unroll
          for (int j = 0; j < 2; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              if (o0 + d >= pieces) continue;
              sum[i][j][2 * h] += v[d][i][j][h].x;
              sum[i][j][2 * h + 1] += v[d][i][j][h].y;
            }
    }
    store(tile, sum);
  };

  int s = 0;
  uint32_t phase = 0;
  for (int64_t u = u_begin; u < u_end;) {
    const int tile = static_cast<int>(u / kb_count);
    const int64_t seg_end = u_end < (tile + 1) * kb_count ? u_end : (tile + 1) * kb_count;
    for (; u < seg_end; ++u) {
      arch::mbar_wait(full(s), phase);
#pragma unroll
      for (int kb = 0; kb < Cfg::kKBoxes; ++kb) {
        const uint32_t xs = x_tile(s) + kb * Cfg::kXBoxBytes;
        // X fragments: n8 tile j, K step kk (16 16-bit or 8 32-bit elements), 2 registers;
        // ldmatrix matrix `mat` is rows 8j.. and 16-byte chunk 4h + mat of the 128-byte row.
        uint32_t xf[2][4][2];
#pragma unroll
        for (int j = 0; j < kXTiles; ++j)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            uint32_t r[4];
            arch::ldmatrix_x4<false>(r, xs + arch::sw128_offset(8 * j + (lane & 7), 4 * h + mat));
#pragma unroll
            for (int e = 0; e < 4; ++e) xf[j][2 * h + e / 2][e % 2] = r[e];
          }
        // Exact f32: this K box's 3xTF32 products, summed apart (12 mma deep: the tensor
        // cores' f32 accumulation does not round to nearest) and added in f32 below.
        float blk[Cfg::kMmaM][2][4] = {};
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) {
          uint32_t xs_small[2][2];  // 3xTF32: X's rest
          if constexpr (k32) {
#pragma unroll
            for (int j = 0; j < kXTiles; ++j)
#pragma unroll
              for (int e = 0; e < 2; ++e) {
                if constexpr (kSplitF32)
                  arch::split_tf32(xf[j][kk][e], xf[j][kk][e], xs_small[j][e]);
                else
                  xf[j][kk][e] = arch::round_tf32(xf[j][kk][e]);
              }
          }
#pragma unroll
          for (int i = 0; i < Cfg::kMmaM; ++i) {
            const int mm = warp * Cfg::kWarpRows + 16 * i;  // first W row of the m16 tile
            uint32_t a[4];
            if constexpr (kWKMajor) {
              // Stored (n, k) in K box kb: rows mm + lane % 16, chunk 2 kk + lane / 16.
              arch::ldmatrix_x4<false>(
                  a, w_tile(s) + kb * Cfg::kWKBoxBytes + arch::sw128_offset(mm + (lane & 15), 2 * kk + (lane >> 4)));
            } else if constexpr (!k32) {
              // Stored (k, n) in 64-column boxes: k rows 64 kb + 16 kk + 8 (mat / 2).., n chunk
              // mm / 8 + mat % 2.
              const int chunk = mm / 8 + (mat & 1);
              arch::ldmatrix_x4<true>(
                  a, w_tile(s) + (chunk / 8) * Cfg::kWNBoxBytes +
                         arch::sw128_offset(64 * kb + 16 * kk + (mat >> 1) * 8 + (lane & 7), chunk % 8));
            } else {
              // Stored (k, n) in 32-column boxes; tf32 A fragment a0 = W(g, q), a1 = W(g + 8, q),
              // a2 = W(g, q + 4), a3 = W(g + 8, q + 4), a word each.
#pragma unroll
              for (int e = 0; e < 4; ++e) {
                const int n = mm + g + (e & 1) * 8, k = 32 * kb + 8 * kk + q + (e >> 1) * 4;
                a[e] = arch::ld_shared_u32(w_tile(s) + (n / 32) * Cfg::kWNBoxBytes +
                                           arch::sw128_offset(k, (n % 32) / 4) + (n % 4) * 4);
              }
            }
            if constexpr (kSplitF32) {
              uint32_t a_small[4];
#pragma unroll
              for (int e = 0; e < 4; ++e) arch::split_tf32(a[e], a[e], a_small[e]);
#pragma unroll
              for (int j = 0; j < kXTiles; ++j) mma_3xtf32(blk[i][j], a, a_small, xf[j][kk], xs_small[j]);
            } else {
              if constexpr (k32) {
#pragma unroll
                for (int e = 0; e < 4; ++e) a[e] = arch::round_tf32(a[e]);
              }
#pragma unroll
              for (int j = 0; j < kXTiles; ++j) arch::mma_16x8<T>(acc2[kk & 1][i][j], a, xf[j][kk]);
            }
          }
        }
        if constexpr (kSplitF32) {
#pragma unroll
          for (int i = 0; i < Cfg::kMmaM; ++i)
#pragma unroll
            for (int j = 0; j < kXTiles; ++j)
#pragma unroll
              for (int e = 0; e < 4; ++e) acc2[kb & 1][i][j][e] += blk[i][j][e];
        }
      }
      // The mma consumed every fragment, so this warp's reads of the stage are done.
      __syncwarp();
      if (lane == 0) arch::mbar_arrive(empty(s));
      if (++s == stages) s = 0, phase ^= 1;
    }
    finish(tile);
  }
#endif
}

}  // namespace gpukern::cuda::gemm
