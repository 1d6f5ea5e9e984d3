// Rung 06 `vectorized`: 16-byte global loads, A transposed in shared memory, 16-byte
// shared loads of the register fragments.
//
// Change from 05: the tile copy reads float4s along the operand's contiguous storage
// (a quarter of the load instructions) and stores both tiles K-major: a_tile[kk][row],
// b_tile[kk][col]. With A transposed, a thread's 8 values of A for one kk are
// contiguous, so its fragments arrive in two 16-byte shared loads per operand instead
// of eight scalar ones (05 read A down a column: 8 loads, 2-way bank conflicts).
// Shared rows are padded by 4 floats so the transposing stores of a K-contiguous
// operand spread over the banks while each row stays 16-byte aligned.
// Declines when A or B is not 16-byte aligned or lda/ldb % 4 != 0 (the float4 loads
// need it); edge tiles read their partial groups element by element.
//
// Measured: 32177 GFLOP/s at 4096^3 row-major NN = 63.4% of cuBLAS SGEMM in the same run
// (H100 80GB HBM3, CUDA 13.0, 2026-11-21, scripts/cuda_gemm_device.sh).
#include "cuda/gemm/gemm_common.cuh"
#include "cuda/gemm/gemm_rungs.cuh"

namespace gpukern::cuda::gemm {
namespace {

struct VectorizedConfig {
  static constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 8;
  static constexpr int kThreadM = 8, kThreadN = 8;
  static constexpr int kPad = 4;  // floats: keeps rows 16-byte aligned, shifts banks by 4 per row
  static constexpr int kThreads = (kBlockM / kThreadM) * (kBlockN / kThreadN);
  static_assert(kThreadM % 4 == 0 && kThreadN % 4 == 0, "fragments are read as float4s");
  static_assert(kBlockM % kThreadM == 0 && kBlockN % kThreadN == 0, "the per-thread tile must divide the block tile");
  static_assert(kThreads <= 1024, "a thread block holds at most 1024 threads");
};

template <bool kTransA, bool kTransB>
__global__ void __launch_bounds__(VectorizedConfig::kThreads) vectorized_kernel(SgemmProblem p, bool c_vec) {
  using Cfg = VectorizedConfig;
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

}  // namespace

std::string vectorized_supports(const core::GemmArgs& args, const CudaContext&) {
  if (auto why = check_int_dims(args); !why.empty()) return why;
  if (auto why = check_vec4_operands(args); !why.empty()) return why;
  return check_grid(ceil_div<int64_t>(args.n, VectorizedConfig::kBlockN),
                    ceil_div<int64_t>(args.m, VectorizedConfig::kBlockM));
}

void vectorized_run(const core::GemmArgs& args, const CudaContext& ctx) {
  using Cfg = VectorizedConfig;
  const SgemmProblem p = make_problem(args);
  if (empty_output(p)) return;
  const dim3 grid(ceil_div(p.n, Cfg::kBlockN), ceil_div(p.m, Cfg::kBlockM));
  const bool c_vec = c_vector_ok(p);
  dispatch_layout(p.trans_a, p.trans_b, [&](auto ta, auto tb) {
    vectorized_kernel<decltype(ta)::value, decltype(tb)::value><<<grid, Cfg::kThreads, 0, ctx.stream>>>(p, c_vec);
  });
  GK_LAUNCH_CHECK();
}

}  // namespace gpukern::cuda::gemm
