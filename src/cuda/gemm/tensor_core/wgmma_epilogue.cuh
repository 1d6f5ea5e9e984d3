// The epilogues of the wgmma_tma kernels (12_wgmma_tma.cuh): a consumer warpgroup's
// accumulators to C, either stored from the registers (any alpha/beta, any C alignment;
// beta == 0 never reads C) or, with beta == 0 and C that TMA can address, written into
// 128-byte-swizzled staging boxes in shared memory and handed to TMA stores, which drain
// to global memory while the consumer runs the next tile's wgmmas. Storing from the
// registers leaves the tensor cores idle while the scattered 4-byte writes issue: the
// TMA-store form is what brings the rung level with cuBLAS.
#pragma once

#include "cuda/arch/bulk_copy.cuh"
#include "cuda/arch/barrier.cuh"
#include "cuda/arch/shared_memory.cuh"
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

/// The epilogue of one consumer warpgroup of wgmma_tma_kernel: its 64 x kBlockN slice of
/// the tile at (m0, n0). `OutT` = void: stores from the registers; otherwise (beta == 0,
/// TMA-addressable C of type OutT) through the consumer's staging boxes and `map_c`.
template <class Cfg, class T, class OutT>
__device__ __forceinline__ void store_wgmma_tile(const TcProblem& p, const CUtensorMap& map_c, const WgmmaSmem<Cfg>& sm,
                                                 int consumer, int warp_in_group, int lane,
                                                 const float (&acc)[Cfg::kAcc], int m0, int n0) {
  // Thread (warp w, lane l) holds rows 16w + l/4 and +8, columns 8i + 2(l%4) and +1
  // (i = 0 .. kBlockN / 8 - 1) of its consumer's 64 x kBlockN slice.
  if constexpr (std::is_void_v<OutT>) {
    const int row = m0 + consumer * 64 + warp_in_group * 16 + lane / 4;
    const int col = n0 + 2 * (lane % 4);
#pragma unroll
    for (int i = 0; i < Cfg::kBlockN / 8; ++i) {
      store_c_pair<T>(p, row, col + 8 * i, acc[4 * i], acc[4 * i + 1]);
      store_c_pair<T>(p, row + 8, col + 8 * i, acc[4 * i + 2], acc[4 * i + 3]);
    }
  } else {
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
                  return pack_pair<OutT>(p.alpha * acc[a], p.alpha * acc[a + 1]);
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
            if (p.alpha != 1.0f)
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
                const float v0 = p.alpha * acc[4 * i + 2 * h], v1 = p.alpha * acc[4 * i + 2 * h + 1];
                arch::st_shared_v2f32(addr, v0, v1);
              }
            }
          }
        },
        [&](int round) {
#pragma unroll
          for (int b = 0; b < Cfg::kEpiBoxes; ++b)
            arch::tma_store_2d(&map_c, staging + b * Cfg::kBoxBytes, n0 + round * kRoundCols + b * kBoxCols,
                               m0 + consumer * 64);
        });
  }
}

/// The epilogue of one consumer warpgroup of wgmma_tf32_nn_kernel (a kTileM x 128 tile
/// of C, the consumer's 64 columns of it): acc[4i + 2h + p] holds C(m0 + 8i + 2q + p,
/// n0 + 64 consumer + col[h]), i = 0..31. `OutT` = void: stores from the registers;
/// otherwise (float: beta == 0, TMA-addressable C) through the staging boxes.
template <class Cfg, class OutT, int kTileM>
__device__ __forceinline__ void store_tf32_nn_tile(const TcProblem& p, const CUtensorMap& map_c,
                                                   const WgmmaSmem<Cfg>& sm, int consumer, int q, const int (&col)[2],
                                                   const float (&acc)[128], int m0, int n0) {
  // acc[4i + 2h + p] = C(m0 + 8i + 2q + p, n0 + 64 consumer + col[h]), i = 0..31.
  if constexpr (std::is_void_v<OutT>) {
#pragma unroll
    for (int i = 0; i < 32; ++i)
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int pp = 0; pp < 2; ++pp) {
          const int row = m0 + 8 * i + 2 * q + pp, c = n0 + 64 * consumer + col[h];
          if (row < p.m && c < p.n)
            store_one(static_cast<float*>(p.c) + static_cast<int64_t>(row) * p.ldc + c, acc[4 * i + 2 * h + pp],
                      p.alpha, p.beta);
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
                arch::st_shared_f32(addr, p.alpha * acc[4 * (8 * round + j) + 2 * h + pp]);
              }
        },
        [&](int round) {
          arch::tma_store_2d(&map_c, staging, n0 + 64 * consumer, m0 + 64 * round);
          arch::tma_store_2d(&map_c, staging + Cfg::kBoxBytes, n0 + 64 * consumer + 32, m0 + 64 * round);
        });
  }
}

}  // namespace gpukern::cuda::gemm
