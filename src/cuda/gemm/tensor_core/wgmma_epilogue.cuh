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
// rounded once: alpha * acc (+ beta * C when C is read) + bias, then the activation,
// on the registers (fuse_wgmma_epilogue); the store then runs with alpha 1, beta 0. Calls without an epilogue pass one
// uniform branch per tile and store as before.
#pragma once

#include "cuda/arch/bulk_copy.cuh"
#include "cuda/arch/cache_policy.cuh"
#include "cuda/arch/barrier.cuh"
#include "cuda/arch/shared_memory.cuh"
#include "cuda/gemm/tensor_core/wgmma_batch.cuh"
#include "cuda/gemm/tensor_core/wgmma_mainloop.cuh"

#include <cuda.h>  // CUtensorMap

#include <type_traits>

namespace gpukern::cuda::gemm {

/// One consumer's TMA-store epilogue in kRounds rounds: its 128 threads compute the
/// round's values in registers (`prepare(round)`: the fused epilogue, which so runs
/// while the previous round's stores still read their buffer), write their part of
/// the round into staging buffer `buffer` (`write(round, buffer)`), then its first
/// thread hands it to TMA stores (`store(round, buffer)`), which read shared memory
/// while the consumer goes on. The buffers form a ring of kBuffers over the consumer's
/// rounds (`rounds_done` counts them across tiles): a round's write first waits until
/// the stores of the round kBuffers back, which used its buffer, have read it.
template <int kRounds, int kBuffers, class Prepare, class Write, class Store>
__device__ __forceinline__ void tma_store_rounds(int consumer, int& rounds_done, Prepare prepare, Write write,
                                                 Store store) {
  const bool leader = threadIdx.x % 128 == 0;
#pragma unroll
  for (int round = 0; round < kRounds; ++round) {
    prepare(round);
    const int buffer = kBuffers == 1 ? 0 : rounds_done % kBuffers;
    if (leader) arch::bulk_wait_group_read<kBuffers - 1>();
    arch::named_barrier_sync(1 + consumer, 128);
    write(round, buffer);
    arch::fence_proxy_async();  // the generic-proxy writes, before the async-proxy read
    arch::named_barrier_sync(1 + consumer, 128);
    if (leader) {
      store(round, buffer);
      arch::bulk_commit_group();
    }
    ++rounds_done;
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

/// The bias of a tile's kCols columns from n0, spread over a warp: lane l holds
/// columns n0 + 32q + l (q < kCols / 32, rounded up) in f32, 0 past n or without a bias. A
/// consumer loads it as the tile's main loop starts, so the loads' latency passes
/// behind the wgmmas instead of stalling the epilogue, and the epilogue takes each
/// thread's columns from the lanes holding them (one shuffle a column pair element)
/// instead of a global load apiece.
template <int kCols>
struct TileBias {
  static constexpr int kRegs = (kCols + 31) / 32;
  float v[kRegs];
  __device__ __forceinline__ void load(const Epilogue& epi, int item, int n0, int n) {
    const int lane = static_cast<int>(threadIdx.x) % 32;
    auto fetch = [&](auto* bias) {
      bias += static_cast<int64_t>(item) * epi.stride_bias;
#pragma unroll
      for (int q = 0; q < kRegs; ++q) {
        const int col = n0 + 32 * q + lane;
        v[q] = col < n ? gpu::to_float(bias[col]) : 0.0f;
      }
    };
    if (epi.bias == nullptr) {
#pragma unroll
      for (int q = 0; q < kRegs; ++q) v[q] = 0.0f;
    } else if (epi.bias_type == GK_F16) {
      fetch(static_cast<const gpu::half_t*>(epi.bias));
    } else if (epi.bias_type == GK_BF16) {
      fetch(static_cast<const gpu::bf16_t*>(epi.bias));
    } else {
      fetch(static_cast<const float*>(epi.bias));
    }
  }
  /// The bias of column n0 + 8g + c (c < 8): register g / 4 of lane 8 (g % 4) + c.
  __device__ __forceinline__ float column(int g, int c) const {
    return __shfl_sync(0xffffffffu, v[g / 4], 8 * (g % 4) + c);
  }
};

/// The fused epilogue of a consumer thread of wgmma_tma_kernel over the accumulators
/// of column groups [g0, g0 + kGroups): acc = act(alpha * acc (+ beta * C when
/// `read_c`) + bias), where acc[4i + 2h + p] is C(row0 + 8h, col0 + 8i + p) of the
/// item's C `q` and col0 = n0 + 2 (lane % 4). Straight-line code over the registers:
/// the bias pair of each column pair taken from the tile's TileBias once for both
/// rows, the activation chosen by one uniform switch, unrolled over the accumulators
/// with no data-dependent branch and the tensor-core forms of the transcendentals
/// (activate_tc: one or two special-function instructions a value). Nothing goes
/// through memory, so the tensor cores wait only for the arithmetic.
template <class T, int kGroups, int kAcc, int kCols>
__device__ __forceinline__ void fuse_wgmma_epilogue(float (&acc)[kAcc], int g0, const TileBias<kCols>& bias,
                                                    const TcProblem& q, bool read_c, int act, float alpha, int row0,
                                                    int col0) {
  const int c = 2 * (static_cast<int>(threadIdx.x) % 4);
#pragma unroll
  for (int g = 0; g < kGroups; ++g) {
    const int i = g0 + g;
#pragma unroll
    for (int p = 0; p < 2; ++p) {
      const float b = bias.column(i, c + p);
      acc[4 * i + p] = fmaf(alpha, acc[4 * i + p], b);
      acc[4 * i + 2 + p] = fmaf(alpha, acc[4 * i + 2 + p], b);
    }
  }
  if (read_c) {
#pragma unroll
    for (int g = 0; g < kGroups; ++g)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int i = g0 + g;
        const int row = row0 + 8 * (e / 2), col = col0 + 8 * i + e % 2;
        if (row < q.m && col < q.n) acc[4 * i + e] += q.beta * load_c<T>(q, row, col);
      }
  }
  with_activation(act, [&](auto a) {
#pragma unroll
    for (int g = 0; g < kGroups; ++g)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[4 * (g0 + g) + e] = activate_tc<decltype(a)::value>(acc[4 * (g0 + g) + e]);
  });
}

/// The epilogue of one consumer warpgroup of wgmma_tma_kernel: its 64 x kBlockN slice of
/// the tile at `o` (origin and batch item). `OutT` = void: stores from the registers;
/// otherwise (beta == 0, TMA-addressable C of type OutT) through the consumer's staging
/// boxes and `map_c`. A call with an epilogue (x.epi) runs fuse_wgmma_epilogue with the
/// tile's bias (one uniform branch per tile or TMA-store round; the store code is
/// shared): before the stores from the registers, or round by round before each
/// round's staging.
template <class Cfg, class T, class OutT>
__device__ __forceinline__ void store_wgmma_tile(const TcProblem& p, const WgmmaExtras& x, const CUtensorMap& map_c,
                                                 const WgmmaSmem<Cfg>& sm, int consumer, int warp_in_group, int lane,
                                                 float (&acc)[Cfg::kAcc], const TileBias<Cfg::kBlockN>& bias,
                                                 const TileOrigin& o, int& rounds_done) {
  // Thread (warp w, lane l) holds rows 16w + l/4 and +8, columns 8i + 2(l%4) and +1
  // (i = 0 .. kBlockN / 8 - 1) of its consumer's 64 x kBlockN slice.
  const int m0 = o.m0, n0 = o.n0;
  float alpha = p.alpha;
  // Column groups [first, kBlockN / 8) stored from the registers into this item's C, the
  // fused epilogue (if any) applied to them first.
  auto store_from_registers = [&](auto first) {
    constexpr int kFirst = decltype(first)::value;
    TcProblem q = p;
    q.c = static_cast<char*>(p.c) +
          static_cast<int64_t>(o.item) * x.stride_c * static_cast<int64_t>(p.c_f32 || sizeof(T) == 4 ? 4 : 2);
    const int row = m0 + consumer * 64 + warp_in_group * 16 + lane / 4;
    const int col = n0 + 2 * (lane % 4);
    if (x.epi.active()) {
      fuse_wgmma_epilogue<T, Cfg::kBlockN / 8 - kFirst>(acc, kFirst, bias, q, q.beta != 0.0f, x.epi.act, q.alpha, row,
                                                        col);
      q.alpha = 1.0f;
      q.beta = 0.0f;
    }
#pragma unroll
    for (int i = kFirst; i < Cfg::kBlockN / 8; ++i) {
      store_c_pair<T>(q, row, col + 8 * i, acc[4 * i], acc[4 * i + 1]);
      store_c_pair<T>(q, row + 8, col + 8 * i, acc[4 * i + 2], acc[4 * i + 3]);
    }
  };
  if constexpr (std::is_void_v<OutT>) {
    store_from_registers(std::integral_constant<int, 0>{});
  } else {
    const bool fused = x.epi.active();
    if (fused) alpha = 1.0f;  // applied by the fused epilogue
    // Stage kEpiBoxes boxes (64 rows x 128 bytes, 128-byte swizzle: 16-byte chunk
    // j of row r at j ^ (r % 8), conflict-free for these writes) and TMA store them;
    // the store clips whatever lies outside C.
    constexpr int kOutBytes = static_cast<int>(sizeof(OutT));
    constexpr int kBoxCols = Cfg::kRowBytes / kOutBytes;
    constexpr int kRoundCols = kBoxCols * Cfg::kEpiBoxes;
    // Whole rounds; a tile width that is not a multiple of a round's (168; 32 with
    // 16-bit C, less than a round) stores the columns past them from the registers below.
    constexpr int kTmaCols = Cfg::kBlockN / kRoundCols * kRoundCols;
    if constexpr (kTmaCols > 0)
      tma_store_rounds<kTmaCols / kRoundCols, Cfg::kEpiBuffers>(
          consumer, rounds_done,
          [&](int round) {
            if (fused)
              fuse_wgmma_epilogue<T, kRoundCols / 8>(acc, round * (kRoundCols / 8), bias, p, false, x.epi.act, p.alpha,
                                                     0, 0);
          },
          [&](int round, int buffer) {
            const uint32_t staging = sm.c_staging(consumer, buffer);
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
          [&](int round, int buffer) {
            const uint32_t staging = sm.c_staging(consumer, buffer);
            const uint64_t policy = arch::l2_evict_first_policy();
#pragma unroll
            for (int b = 0; b < Cfg::kEpiBoxes; ++b)
              tma_store_item(&map_c, staging + b * Cfg::kBoxBytes, n0 + round * kRoundCols + b * kBoxCols,
                             m0 + consumer * 64, x.maps_3d, o.item, policy);
          });
    if constexpr (kTmaCols < Cfg::kBlockN) store_from_registers(std::integral_constant<int, kTmaCols / 8>{});
  }
}

/// The epilogue of one consumer warpgroup of wgmma_tf32_nn_kernel (a Cfg::kBlockN x 128
/// tile of C, the consumer's 64 columns of it, at `o`): acc[4i + 2h + p] holds C(m0 + 8i
/// + 2q + p, n0 + 64 consumer + col[h]), i < kBlockN / 8. `OutT` = void: stores from the
/// registers; otherwise (float: beta == 0, TMA-addressable C) through the staging boxes.
/// The fused epilogue is not applied here: this kernel's consumers hold up to 128
/// accumulators and 32 fragment registers, and the epilogue's code made ptxas spill in
/// the main loop; C is f32, so a pass after the kernel (wgmma_epilogue_pass) gives the
/// same single rounding.
template <class Cfg, class OutT>
__device__ __forceinline__ void store_tf32_nn_tile(const TcProblem& p, const WgmmaExtras& x, const CUtensorMap& map_c,
                                                   const WgmmaSmem<Cfg>& sm, int consumer, int q, const int (&col)[2],
                                                   const float (&acc)[Cfg::kAcc], const TileOrigin& o,
                                                   int& rounds_done) {
  constexpr int kTileM = Cfg::kBlockN;
  // acc[4i + 2h + p] = C(m0 + 8i + 2q + p, n0 + 64 consumer + col[h]), i < kTileM / 8.
  const int m0 = o.m0, n0 = o.n0;
  const float alpha = p.alpha, beta = p.beta;
  if constexpr (std::is_void_v<OutT>) {
    float* const c_item = static_cast<float*>(p.c) + static_cast<int64_t>(o.item) * x.stride_c;
#pragma unroll
    for (int i = 0; i < kTileM / 8; ++i)
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
    static_assert(Cfg::kEpiBuffers == 1, "one staging buffer a consumer");
    const uint32_t staging = sm.c_staging(consumer);
    tma_store_rounds<kTileM / 64, 1>(
        consumer, rounds_done, [](int) {},
        [&](int round, int) {
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
        [&](int round, int) {
          const uint64_t policy = arch::l2_evict_first_policy();
          tma_store_item(&map_c, staging, n0 + 64 * consumer, m0 + 64 * round, x.maps_3d, o.item, policy);
          tma_store_item(&map_c, staging + Cfg::kBoxBytes, n0 + 64 * consumer + 32, m0 + 64 * round, x.maps_3d, o.item,
                         policy);
        });
  }
}

}  // namespace gpukern::cuda::gemm
