// The epilogues of the wgmma_tma kernels (12_wgmma_tma.cuh): a consumer warpgroup's
// accumulators to C, either stored from the registers (any alpha/beta, any C alignment;
// beta == 0 never reads C) or, with beta == 0 and C that TMA can address, written into
// 128-byte-swizzled staging boxes in shared memory and handed to TMA stores, which drain
// to global memory while the consumer runs the next tile's wgmmas. Storing from the
// registers leaves the tensor cores idle while the scattered 4-byte writes issue: the
// TMA-store form is what brings the rung level with cuBLAS.
//
// The fused epilogue (bias over N, activation; cuda/gemm/epilogue.cuh) of
// wgmma_tma_kernel runs on the accumulators before either form stores them, so C is
// rounded once: alpha * acc (+ beta * C when C is read) + bias, then the activation, in
// one rolled loop through shared memory (fuse_wgmma_epilogue: small code); the store
// then runs with alpha 1, beta 0. Calls without an epilogue pass one uniform branch
// per tile and store as before.
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

/// C(row, col) of the TcProblem's C (f32, or the 16-bit input type T) in f32.
template <class T>
__device__ __forceinline__ float load_c(const TcProblem& p, int row, int col) {
  const int64_t i = static_cast<int64_t>(row) * p.ldc + col;
  if constexpr (sizeof(T) == 2) {
    if (!p.c_f32) return gpu::to_float(static_cast<const T*>(p.c)[i]);
  }
  return static_cast<const float*>(p.c)[i];
}

/// The fused epilogue of a consumer thread of wgmma_tma_kernel: acc = act(alpha * acc
/// (+ beta * C when `read_c`) + bias[col]), where acc[4i + 2h + p] is C(row0 + 8h, col0 +
/// 8i + p) of the item's C `q`. The arithmetic runs in one rolled loop (one copy of the
/// activation and bias code per kernel, whatever the types: unrolled over 128
/// accumulators it was thousands of instructions a kernel and slowed the build) over
/// chunks of 32 values that each thread parks in its own column of `scratch` (word
/// 128 e + thread: conflict-free, read by no other thread, so no barrier); the chunks
/// are parked and taken back with register indices fixed at compile time.
template <class T, int kAcc>
__device__ __forceinline__ void fuse_wgmma_epilogue(float (&acc)[kAcc], const TcProblem& q, bool read_c,
                                                    const Epilogue& epi, float alpha, int item, int row0, int col0,
                                                    uint32_t scratch) {
  constexpr int kChunk = 32, kChunks = kAcc / kChunk;
  static_assert(kAcc % kChunk == 0, "whole chunks");
  const uint32_t mine = scratch + (threadIdx.x % 128) * 4;
#pragma unroll 1
  for (int c = 0; c < kChunks; ++c) {
#pragma unroll
    for (int k = 0; k < kChunks; ++k)
      if (k == c) {
#pragma unroll
        for (int e = 0; e < kChunk; ++e) arch::st_shared_f32(mine + e * 512, acc[k * kChunk + e]);
      }
#pragma unroll 1
    for (int e = 0; e < kChunk; ++e) {
      const int j = c * kChunk + e;
      const int row = row0 + 8 * ((j % 4) / 2), col = col0 + 8 * (j / 4) + j % 2;
      const uint32_t addr = mine + e * 512;
      float v = alpha * __uint_as_float(arch::ld_shared_u32(addr));
      if (read_c && row < q.m && col < q.n) v += q.beta * load_c<T>(q, row, col);
      if (col < q.n) v += epi.bias_at(item, col);  // 0 without a bias; the bias has n values
      arch::st_shared_f32(addr, core::activate(v, epi.act));
    }
#pragma unroll
    for (int k = 0; k < kChunks; ++k)
      if (k == c) {
#pragma unroll
        for (int e = 0; e < kChunk; ++e) acc[k * kChunk + e] = __uint_as_float(arch::ld_shared_u32(mine + e * 512));
      }
  }
}

/// The epilogue of one consumer warpgroup of wgmma_tma_kernel: its 64 x kBlockN slice of
/// the tile at `o` (origin and batch item). `OutT` = void: stores from the registers;
/// otherwise (beta == 0, TMA-addressable C of type OutT) through the consumer's staging
/// boxes and `map_c`. A call with an epilogue (x.epi) first runs fuse_wgmma_epilogue
/// (one uniform branch per tile; the store code is shared).
template <class Cfg, class T, class OutT>
__device__ __forceinline__ void store_wgmma_tile(const TcProblem& p, const WgmmaExtras& x, const CUtensorMap& map_c,
                                                 const WgmmaSmem<Cfg>& sm, int consumer, int warp_in_group, int lane,
                                                 float (&acc)[Cfg::kAcc], const TileOrigin& o) {
  // Thread (warp w, lane l) holds rows 16w + l/4 and +8, columns 8i + 2(l%4) and +1
  // (i = 0 .. kBlockN / 8 - 1) of its consumer's 64 x kBlockN slice.
  const int m0 = o.m0, n0 = o.n0;
  float alpha = p.alpha;
  if constexpr (std::is_void_v<OutT>) {
    TcProblem q = p;  // this item's C
    q.c = static_cast<char*>(p.c) +
          static_cast<int64_t>(o.item) * x.stride_c * static_cast<int64_t>(p.c_f32 || sizeof(T) == 4 ? 4 : 2);
    const int row = m0 + consumer * 64 + warp_in_group * 16 + lane / 4;
    const int col = n0 + 2 * (lane % 4);
    if (x.epi.active()) {  // the staging boxes are free: this path issues no TMA stores
      fuse_wgmma_epilogue<T>(acc, q, p.beta != 0.0f, x.epi, alpha, o.item, row, col, sm.c_staging(consumer));
      q.alpha = 1.0f;
      q.beta = 0.0f;
    }
#pragma unroll
    for (int i = 0; i < Cfg::kBlockN / 8; ++i) {
      store_c_pair<T>(q, row, col + 8 * i, acc[4 * i], acc[4 * i + 1]);
      store_c_pair<T>(q, row + 8, col + 8 * i, acc[4 * i + 2], acc[4 * i + 3]);
    }
  } else {
    if (x.epi.active()) {
      // The staging boxes hold the previous tile's C until its TMA stores have read them.
      if (threadIdx.x % 128 == 0) arch::bulk_wait_group_read<0>();
      arch::named_barrier_sync(1 + consumer, 128);
      fuse_wgmma_epilogue<T>(acc, p, false, x.epi, alpha, o.item, 0, n0 + 2 * (lane % 4), sm.c_staging(consumer));
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
          tma_store_item(&map_c, staging + Cfg::kBoxBytes, n0 + 64 * consumer + 32, m0 + 64 * round, x.maps_3d, o.item);
        });
  }
}

}  // namespace gpukern::cuda::gemm
