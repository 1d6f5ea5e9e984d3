// The kernel of rung 06 `vectorized` (see 06_vectorized.cu), which rung 07 `rect_tile`
// runs with another tile shape: each thread accumulates a kThreadM x kThreadN register
// tile of C from K-major shared tiles filled by 16-byte global loads
// (load_tile_vec4_kmajor), reads its fragments with 16-byte shared loads, and writes C
// four columns at a time. The launcher and the supports check are shared too; each rung
// file keeps its config and says why its tile shape is faster.
#pragma once

#include "cuda/gemm/gemm_common.cuh"

#include <string>

namespace gpukern::cuda::gemm {

/// Tile shape of a register-tile rung: a kBlockM x kBlockN block tile of C, stepped
/// kBlockK along K, each thread holding kThreadM x kThreadN outputs. Shared rows are
/// padded by kPad floats so the transposing stores of a K-contiguous operand spread
/// over the banks while each row stays 16-byte aligned.
template <int kBlockM_, int kBlockN_, int kBlockK_, int kThreadM_, int kThreadN_, int kPad_ = 4>
struct RegisterTileConfig {
  static constexpr int kBlockM = kBlockM_, kBlockN = kBlockN_, kBlockK = kBlockK_;
  static constexpr int kThreadM = kThreadM_, kThreadN = kThreadN_;
  static constexpr int kPad = kPad_;
  static constexpr int kThreads = (kBlockM / kThreadM) * (kBlockN / kThreadN);
  static_assert(kThreadM % 4 == 0 && kThreadN % 4 == 0, "fragments are read as float4s");
  static_assert(kPad % 4 == 0, "padded shared rows must stay 16-byte aligned");
  static_assert(kBlockM % kThreadM == 0 && kBlockN % kThreadN == 0, "the per-thread tile must divide the block tile");
  static_assert(kThreads <= 1024, "a thread block holds at most 1024 threads");
};

template <class Cfg, bool kTransA, bool kTransB>
__global__ void __launch_bounds__(Cfg::kThreads) register_tile_kernel(SgemmProblem p, bool c_vec) {
  constexpr int kLdA = Cfg::kBlockM + Cfg::kPad, kLdB = Cfg::kBlockN + Cfg::kPad;
  __shared__ __align__(16) float a_tile[Cfg::kBlockK * kLdA];  // (kk, row)
  __shared__ __align__(16) float b_tile[Cfg::kBlockK * kLdB];  // (kk, col)

  constexpr int kThreadCols = Cfg::kBlockN / Cfg::kThreadN;
  const int tx = static_cast<int>(threadIdx.x) % kThreadCols;
  const int ty = static_cast<int>(threadIdx.x) / kThreadCols;
  const int row0 = static_cast<int>(blockIdx.y) * Cfg::kBlockM, col0 = static_cast<int>(blockIdx.x) * Cfg::kBlockN;

  float acc[Cfg::kThreadM][Cfg::kThreadN] = {};
  float a_reg[Cfg::kThreadM], b_reg[Cfg::kThreadN];
  for (int k0 = 0; k0 < p.k; k0 += Cfg::kBlockK) {
    load_tile_vec4_kmajor<Cfg::kBlockM, Cfg::kBlockK, Cfg::kThreads, a_is_k_contiguous<kTransA>>(
        p.a, p.lda, row0, k0, p.m, p.k, a_tile, kLdA);
    load_tile_vec4_kmajor<Cfg::kBlockN, Cfg::kBlockK, Cfg::kThreads, b_is_k_contiguous<kTransB>>(
        p.b, p.ldb, col0, k0, p.n, p.k, b_tile, kLdB);
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < Cfg::kBlockK; ++kk) {
#pragma unroll
      for (int i = 0; i < Cfg::kThreadM; i += 4)
        *reinterpret_cast<float4*>(&a_reg[i]) =
            *reinterpret_cast<const float4*>(&a_tile[kk * kLdA + ty * Cfg::kThreadM + i]);
#pragma unroll
      for (int j = 0; j < Cfg::kThreadN; j += 4)
        *reinterpret_cast<float4*>(&b_reg[j]) =
            *reinterpret_cast<const float4*>(&b_tile[kk * kLdB + tx * Cfg::kThreadN + j]);
#pragma unroll
      for (int i = 0; i < Cfg::kThreadM; ++i)
#pragma unroll
        for (int j = 0; j < Cfg::kThreadN; ++j) acc[i][j] += a_reg[i] * b_reg[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < Cfg::kThreadM; ++i)
#pragma unroll
    for (int j = 0; j < Cfg::kThreadN; j += 4)
      store_c4(p, row0 + ty * Cfg::kThreadM + i, col0 + tx * Cfg::kThreadN + j,
               make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]), c_vec);
}

/// Why register_tile_kernel<Cfg> cannot serve the call ("" when it can): int
/// dimensions, 16-byte aligned A and B with lda/ldb % 4 == 0, and a grid within limits.
template <class Cfg>
core::Verdict register_tile_supports(const core::GemmArgs& args) {
  if (core::Verdict v = check_int_dims(args); !v.accepted()) return v;
  if (core::Verdict v = check_vec4_operands(args); !v.accepted()) return v;
  return check_block_tile_grid<Cfg>(args);
}

/// Launches register_tile_kernel<Cfg> for the call's layout.
template <class Cfg>
void launch_register_tile(const core::GemmArgs& args, const CudaContext& ctx) {
  const SgemmProblem p = make_problem(args);
  launch_block_tiles<Cfg>(
      p, ctx, [](auto ta, auto tb) { return register_tile_kernel<Cfg, decltype(ta)::value, decltype(tb)::value>; },
      c_vector_ok(p));
}

}  // namespace gpukern::cuda::gemm
