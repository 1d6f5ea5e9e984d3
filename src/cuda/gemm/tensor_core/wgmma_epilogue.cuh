// The epilogues of the wgmma_tma kernels (12_wgmma_tma.cuh): a consumer warpgroup's
// accumulators to C, either stored from the registers (any alpha/beta, any C alignment;
// beta == 0 never reads C) or, with beta == 0 and C that TMA can address, written into
// 128-byte-swizzled staging boxes in shared memory and handed to TMA stores, which drain
// to global memory while the consumer runs the next tile's wgmmas. Storing from the
// registers leaves the tensor cores idle while the scattered 4-byte writes issue: the
// TMA-store form is what brings the rung level with cuBLAS.
//
// The fused epilogue (bias over N, activation; cuda/gemm/epilogue.cuh) of
// wgmma_tma_kernel runs on the accumulators in registers before either form stores
// them, so C is rounded once: a
// pass adds alpha * acc (+ beta * C when C is read) and the bias, loading each bias
// value once per tile (a thread's columns repeat over its rows), then one pass applies
// the activation, chosen once per tile (a switch outside the unrolled loop, so each
// loop is straight-line code for one function). The store then runs with alpha 1, beta
// 0. Calls without an epilogue take the plain store, a separate instantiation chosen
// by one uniform branch per tile: their code is the same as without the feature.
#pragma once

#include "cuda/arch/bulk_copy.cuh"
#include "cuda/arch/barrier.cuh"
#include "cuda/arch/shared_memory.cuh"
#include "cuda/gemm/tensor_core/wgmma_batch.cuh"
#include "cuda/gemm/tensor_core/wgmma_mainloop.cuh"

#include <cuda.h>  // CUtensorMap

#include <type_traits>

namespace gpukern::cuda::gemm {

/// One consumer's TMA-store epilogue in kRounds rounds: its 128 threads write their
/// part of the round into the staging boxes (`write(round)`), then its first thread
/// hands them to TMA stores (`store(round)`), which read shared memory while the
/// consumer goes on; a round first waits until the previous stores have read it.
template <int kRounds, class Write, class Store>
__device__ __forceinline__ void tma_store_rounds(int consumer, Write write, Store store) {
  const bool leader = threadIdx.x % 128 == 0;
#pragma unroll
  for (int round = 0; round < kRounds; ++round) {
    if (leader) arch::bulk_wait_group_read<0>();
    arch::named_barrier_sync(1 + consumer, 128);
    write(round);
    arch::fence_proxy_async();  // the generic-proxy writes, before the async-proxy read
    arch::named_barrier_sync(1 + consumer, 128);
    if (leader) {
      store(round);
      arch::bulk_commit_group();
    }
  }
}

/// acc[j] = act(acc[j]) for the activation kAct (a compile-time constant: straight-line
/// code for one function).
template <int kAct, int kAcc>
__device__ __forceinline__ void activate_all(float (&acc)[kAcc]) {
#pragma unroll
  for (int j = 0; j < kAcc; ++j) acc[j] = core::activate(acc[j], kAct);
}

/// The activation pass over a thread's accumulators, the function chosen once.
template <int kAcc>
__device__ __forceinline__ void activate_tile(float (&acc)[kAcc], int act) {
  switch (act) {
    case GK_ACT_RELU:
      activate_all<GK_ACT_RELU>(acc);
      break;
    case GK_ACT_GELU_TANH:
      activate_all<GK_ACT_GELU_TANH>(acc);
      break;
    case GK_ACT_GELU_ERF:
      activate_all<GK_ACT_GELU_ERF>(acc);
      break;
    case GK_ACT_SILU:
      activate_all<GK_ACT_SILU>(acc);
      break;
    default:
      break;
  }
}

/// bias[col] of batch item `item` as stored (BiasT), in f32; 0 at or past column n
/// (those accumulators are never stored, and the bias has n values).
template <class BiasT>
__device__ __forceinline__ float bias_value(const Epilogue& epi, int item, int col, int n) {
  if (col >= n) return 0.0f;
  return gpu::to_float(static_cast<const BiasT*>(epi.bias)[static_cast<int64_t>(item) * epi.stride_bias + col]);
}

/// Stands for "no bias" where a callback takes the bias's storage type.
struct NoBias {};

/// f(BiasT{}) for the bias's storage type (f32, f16 or bf16).
template <class F>
__device__ __forceinline__ void with_bias_type(int bias_type, F&& f) {
  if (bias_type == GK_F16)
    f(gpu::half_t{});
  else if (bias_type == GK_BF16)
    f(gpu::bf16_t{});
  else
    f(float{});
}

/// acc = act(alpha * acc + bias[col]) over a consumer thread's accumulators of
/// wgmma_tma_kernel: acc[4i + 2h + p] is column col0 + 8i + p (h: the thread's two
/// rows), so each bias value is loaded once for both rows.
template <int kAcc>
__device__ __forceinline__ void fuse_wgmma_epilogue(float (&acc)[kAcc], const Epilogue& epi, float alpha, int item,
                                                    int col0, int n) {
  auto add_bias = [&](auto bias_type) {
    using BiasT = decltype(bias_type);
#pragma unroll
    for (int i = 0; i < kAcc / 4; ++i) {
      float b[2] = {0.0f, 0.0f};
      if constexpr (!std::is_same_v<BiasT, NoBias>) {
        b[0] = bias_value<BiasT>(epi, item, col0 + 8 * i, n);
        b[1] = bias_value<BiasT>(epi, item, col0 + 8 * i + 1, n);
      }
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[4 * i + e] = alpha * acc[4 * i + e] + b[e % 2];
    }
  };
  if (epi.bias == nullptr)
    add_bias(NoBias{});
  else
    with_bias_type(epi.bias_type, add_bias);
  activate_tile(acc, epi.act);
}

/// C(row, col) of the TcProblem's C (f32, or the 16-bit input type T) in f32.
template <class T>
__device__ __forceinline__ float load_c(const TcProblem& p, int row, int col) {
  const int64_t i = static_cast<int64_t>(row) * p.ldc + col;
  if constexpr (sizeof(T) == 2) {
    if (!p.c_f32) return gpu::to_float(static_cast<const T*>(p.c)[i]);
  }
  return static_cast<const float*>(p.c)[i];
}

/// The epilogue of one consumer warpgroup of wgmma_tma_kernel: its 64 x kBlockN slice of
/// the tile at `o` (origin and batch item). `OutT` = void: stores from the registers;
/// otherwise (beta == 0, TMA-addressable C of type OutT) through the consumer's staging
/// boxes and `map_c`. kEpilogue: the fused bias and activation first (x.epi).
template <class Cfg, class T, class OutT, bool kEpilogue>
__device__ __forceinline__ void store_wgmma_tile_as(const TcProblem& p, const WgmmaExtras& x,
                                                    const CUtensorMap& map_c, const WgmmaSmem<Cfg>& sm,
                                                    int consumer, int warp_in_group, int lane,
                                                    float (&acc)[Cfg::kAcc], const TileOrigin& o) {
  // Thread (warp w, lane l) holds rows 16w + l/4 and +8, columns 8i + 2(l%4) and +1
  // (i = 0 .. kBlockN / 8 - 1) of its consumer's 64 x kBlockN slice.
  const int m0 = o.m0, n0 = o.n0;
  float alpha = p.alpha;
  if constexpr (std::is_void_v<OutT>) {
    TcProblem q = p;  // this item's C
    q.c = static_cast<char*>(p.c) + static_cast<int64_t>(o.item) * x.stride_c *
                                        static_cast<int64_t>(p.c_f32 || sizeof(T) == 4 ? 4 : 2);
    const int row = m0 + consumer * 64 + warp_in_group * 16 + lane / 4;
    const int col = n0 + 2 * (lane % 4);
    if constexpr (kEpilogue) {
      if (p.beta != 0.0f) {  // alpha * acc + beta * C, then the bias and act, then store as is
#pragma unroll
        for (int i = 0; i < Cfg::kBlockN / 8; ++i)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int r = row + 8 * (e / 2), c = col + 8 * i + e % 2;
            float& v = acc[4 * i + e];
            v *= alpha;
            if (r < p.m && c < p.n) v += p.beta * load_c<T>(q, r, c);
          }
        alpha = 1.0f;
      }
      fuse_wgmma_epilogue(acc, x.epi, alpha, o.item, col, p.n);
      q.alpha = 1.0f;
      q.beta = 0.0f;
    }
#pragma unroll
    for (int i = 0; i < Cfg::kBlockN / 8; ++i) {
      store_c_pair<T>(q, row, col + 8 * i, acc[4 * i], acc[4 * i + 1]);
      store_c_pair<T>(q, row + 8, col + 8 * i, acc[4 * i + 2], acc[4 * i + 3]);
    }
  } else {
    if constexpr (kEpilogue) {
      fuse_wgmma_epilogue(acc, x.epi, alpha, o.item, n0 + 2 * (lane % 4), p.n);
      alpha = 1.0f;
    }
    // Stage kEpiBoxes boxes (64 rows x 128 bytes, 128-byte swizzle: 16-byte chunk
    // j of row r at j ^ (r % 8), conflict-free for these writes) and TMA store them;
    // the store clips whatever lies outside C.
    constexpr int kOutBytes = static_cast<int>(sizeof(OutT));
    constexpr int kBoxCols = Cfg::kRowBytes / kOutBytes;
    constexpr int kRoundCols = kBoxCols * Cfg::kEpiBoxes;
    const uint32_t staging = sm.c_staging(consumer);
    tma_store_rounds<Cfg::kBlockN / kRoundCols>(
        consumer,
        [&](int round) {
          if constexpr (kOutBytes == 2) {
            // stmatrix: 8-column groups g and g + 1 (one 16-byte chunk of a row
            // each) of the warp's 16 rows are four 8x8 matrices, one store; lane
            // l addresses row l % 8 of matrix l / 8 = (group g + l / 16, rows + 8
            // ((l / 8) % 2)). A quarter of the st.shared of the scalar form.
            const int mat = lane / 8;
            const int r = warp_in_group * 16 + 8 * (mat % 2) + lane % 8;
            auto write = [&](auto scaled) {
              auto packed = [&](int a) {
                if constexpr (decltype(scaled)::value)
                  return pack_pair<OutT>(alpha * acc[a], alpha * acc[a + 1]);
                else
                  return pack_pair<OutT>(acc[a], acc[a + 1]);
              };
#pragma unroll
              for (int g = 0; g < kRoundCols / 8; g += 2) {
                const int i = round * (kRoundCols / 8) + g;
                const int mine = g + mat / 2;  // the column group this lane addresses
                const uint32_t addr = staging + (mine / 8) * Cfg::kBoxBytes + arch::sw128_offset(r, mine % 8);
                arch::stmatrix_x4(addr, packed(4 * i), packed(4 * i + 2), packed(4 * i + 4), packed(4 * i + 6));
              }
            };
            // alpha = 1 (the common call) skips 128 multiplies a thread a tile.
            if (alpha != 1.0f)
              write(std::true_type{});
            else
              write(std::false_type{});
          } else {
            const int r_lo = warp_in_group * 16 + lane / 4;
#pragma unroll
            for (int j = 0; j < kRoundCols / 8; ++j) {
              const int i = round * (kRoundCols / 8) + j;
              const int cr = 8 * j + 2 * (lane % 4);
              const uint32_t box = staging + (cr / kBoxCols) * Cfg::kBoxBytes;
              const uint32_t byte = (cr % kBoxCols) * kOutBytes;
#pragma unroll
              for (int h = 0; h < 2; ++h) {
                const int r = r_lo + 8 * h;
                const uint32_t addr = box + arch::sw128_offset(r, byte >> 4) + (byte & 15);
                const float v0 = alpha * acc[4 * i + 2 * h], v1 = alpha * acc[4 * i + 2 * h + 1];
                arch::st_shared_v2f32(addr, v0, v1);
              }
            }
          }
        },
        [&](int round) {
#pragma unroll
          for (int b = 0; b < Cfg::kEpiBoxes; ++b)
            tma_store_item(&map_c, staging + b * Cfg::kBoxBytes, n0 + round * kRoundCols + b * kBoxCols,
                           m0 + consumer * 64, x.maps_3d, o.item);
        });
  }
}

/// store_wgmma_tile_as for the call: the fused form when the call has an epilogue (one
/// uniform branch per tile), else the plain one.
template <class Cfg, class T, class OutT>
__device__ __forceinline__ void store_wgmma_tile(const TcProblem& p, const WgmmaExtras& x, const CUtensorMap& map_c,
                                                 const WgmmaSmem<Cfg>& sm, int consumer, int warp_in_group, int lane,
                                                 float (&acc)[Cfg::kAcc], const TileOrigin& o) {
  if (x.epi.active())
    store_wgmma_tile_as<Cfg, T, OutT, true>(p, x, map_c, sm, consumer, warp_in_group, lane, acc, o);
  else
    store_wgmma_tile_as<Cfg, T, OutT, false>(p, x, map_c, sm, consumer, warp_in_group, lane, acc, o);
}

/// The epilogue of one consumer warpgroup of wgmma_tf32_nn_kernel (a kTileM x 128 tile
/// of C, the consumer's 64 columns of it, at `o`): acc[4i + 2h + p] holds C(m0 + 8i + 2q
/// + p, n0 + 64 consumer + col[h]), i = 0..31. `OutT` = void: stores from the registers;
/// otherwise (float: beta == 0, TMA-addressable C) through the staging boxes. The fused
/// epilogue is not applied here: this kernel's consumers hold 128 accumulators and 32
/// fragment registers, and the epilogue's code made ptxas spill in the main loop; C is
/// f32, so a pass after the kernel (wgmma_epilogue_pass) gives the same single rounding.
template <class Cfg, class OutT, int kTileM>
__device__ __forceinline__ void store_tf32_nn_tile(const TcProblem& p, const WgmmaExtras& x, const CUtensorMap& map_c,
                                                   const WgmmaSmem<Cfg>& sm, int consumer, int q, const int (&col)[2],
                                                   const float (&acc)[128], const TileOrigin& o) {
  // acc[4i + 2h + p] = C(m0 + 8i + 2q + p, n0 + 64 consumer + col[h]), i = 0..31.
  const int m0 = o.m0, n0 = o.n0;
  const float alpha = p.alpha, beta = p.beta;
  if constexpr (std::is_void_v<OutT>) {
    float* const c_item = static_cast<float*>(p.c) + static_cast<int64_t>(o.item) * x.stride_c;
#pragma unroll
    for (int i = 0; i < 32; ++i)
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int pp = 0; pp < 2; ++pp) {
          const int row = m0 + 8 * i + 2 * q + pp, c = n0 + 64 * consumer + col[h];
          if (row < p.m && c < p.n)
            store_one(c_item + static_cast<int64_t>(row) * p.ldc + c, acc[4 * i + 2 * h + pp], alpha, beta);
        }
  } else {
    // Rounds of 64 rows x the consumer's 64 columns (2 boxes of 32 f32 columns).
    const uint32_t staging = sm.c_staging(consumer);
    tma_store_rounds<kTileM / 64>(
        consumer,
        [&](int round) {
#pragma unroll
          for (int j = 0; j < 8; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h)
#pragma unroll
              for (int pp = 0; pp < 2; ++pp) {
                const int r = 8 * j + 2 * q + pp;
                const uint32_t addr = staging + (col[h] / 32) * Cfg::kBoxBytes +
                                      arch::sw128_offset(r, (col[h] % 32) / 4) + (col[h] % 4) * 4;
                arch::st_shared_f32(addr, alpha * acc[4 * (8 * round + j) + 2 * h + pp]);
              }
        },
        [&](int round) {
          tma_store_item(&map_c, staging, n0 + 64 * consumer, m0 + 64 * round, x.maps_3d, o.item);
          tma_store_item(&map_c, staging + Cfg::kBoxBytes, n0 + 64 * consumer + 32, m0 + 64 * round, x.maps_3d,
                         o.item);
        });
  }
}

}  // namespace gpukern::cuda::gemm
