// The CUDA GEMM ladder as data: every rung in ladder order (naive first, the cuBLAS
// reference last), and auto's preference for a call. The SIMT rungs are declared in
// gemm_rungs.cuh, the tensor-core rungs in tensor_core.cuh.
#include "cuda/context.cuh"
#include "cuda/gemm/gemm_rungs.cuh"
#include "cuda/gemm/tensor_core.cuh"
#if defined(GPUKERN_HIP)
#include "hip/gemm/mfma.hpp"
#endif

namespace gpukern::cuda {

const core::Ladder<core::GemmArgs, CudaContext>& gemm_ladder() {
  using namespace gemm;
  constexpr uint32_t kF32 = core::kMaskF32;
  constexpr uint32_t kTF32 = core::kMaskTF32, kF16 = core::kMaskF16, kBF16 = core::kMaskBF16;
  constexpr uint32_t kAll = kF32 | kTF32 | kF16 | kBF16;
  static const core::Ladder<core::GemmArgs, CudaContext> table = {
      {"naive", "one thread per output, threads walk rows (uncoalesced)", kF32, 0, "", false,
       naive_supports, naive_run},
      {"coalesced", "one thread per output, a warp spans consecutive columns", kF32, 0, "", false,
       coalesced_supports, coalesced_run},
      {"smem_tiled", "32x32 tiles of A and B staged in shared memory", kF32, 0, "", false,
       smem_tiled_supports, smem_tiled_run},
      {"blocktile_1d", "64x64 block tile, 8 outputs per thread in a column", kF32, 0, "", false,
       blocktile_1d_supports, blocktile_1d_run},
      {"blocktile_2d", "128x128 block tile, 8x8 outputs per thread (outer products)", kF32, 0, "", false,
       blocktile_2d_supports, blocktile_2d_run},
      {"vectorized", "16-byte global loads, A transposed in shared memory, 16-byte shared loads", kF32, 0, "",
       false, vectorized_supports, vectorized_run},
      {"rect_tile", "64x64 block tile, 8x4 rectangular register tile per thread", kF32, 0, "", false,
       rect_tile_supports, rect_tile_run},
      {"warptile", "warp tiles of 32x64, interleaved 4x4 sub-tiles: conflict-free shared loads", kF32, 0, "",
       false, warptile_supports, warptile_run},
#if defined(GPUKERN_CUDA)
      {"double_buffer", "cp.async multi-stage pipeline, register double buffering, L2 block swizzle", kF32, 80,
       "sm_80", false, double_buffer_supports, double_buffer_run},
      // Tensor-core rungs (10_wmma.cu ... 13_tcgen05.cu; see tensor_core.cuh).
      {"wmma", "WMMA 16x16x16 tensor-core fragments, f32 accumulation", kF16 | kBF16, 80, "sm_80", false,
       gemm_wmma_supports, gemm_wmma},
      {"mma_multistage", "mma.sync + ldmatrix from swizzled shared memory, cp.async multi-stage pipeline",
       kTF32 | kF16 | kBF16, 80, "sm_80", false, gemm_mma_multistage_supports, gemm_mma_multistage},
      {"wgmma_tma", "Hopper wgmma fed by TMA, warp-specialized persistent kernel", kTF32 | kF16 | kBF16, 90,
       "sm_90a", false, gemm_wgmma_tma_supports, gemm_wgmma_tma},
      {"tcgen05",
       "Blackwell tcgen05.mma into tensor memory, TMA-fed, persistent; compile-verified only: never run (no sm_100 "
       "GPU available)",
       kTF32 | kF16 | kBF16, 100, "sm_100a", false, gemm_tcgen05_supports, gemm_tcgen05},
      {"cublas", "cuBLAS cublasGemmEx_64 (vendor reference)", kAll, 0, "", true, cublas_supports, cublas_run},
#else
      // AMD matrix cores (src/hip/gemm/mfma.hip); no vendor reference on HIP.
      {"mfma", "MFMA 32x32x8 matrix cores (CDNA: gfx90a, gfx940), f32 accumulation", kF16 | kBF16, 0, "", false,
       hip::gemm_mfma_supports, hip::gemm_mfma},
#endif
  };
  return table;
}

std::vector<std::string> gemm_auto_order([[maybe_unused]] const core::GemmArgs& args,
                                         [[maybe_unused]] const CudaContext& ctx) {
#if defined(GPUKERN_HIP)
  return hip::gemm_auto_order(args, ctx);  // src/hip/gemm/mfma.hip
#else
  // Fastest first, measured on the H100 (2026-11-21). Exact f32: cuBLAS leads our best
  // SIMT rung (double_buffer: 89-97% of cuBLAS from 1000^3 to 8192^3). f16/bf16 (and
  // tf32 with K-major A and B) on sm_90a: wgmma_tma is level with cuBLAS or ahead
  // (99-104% at 4096^3 and 8192^3) once the 128x256 tiles fill the SMs a few times
  // over, and 2-3x ahead when a row pitch is not a multiple of 16 bytes (cuBLAS then
  // takes a slow path; wgmma_tma repacks). Small grids stay with cuBLAS, which has
  // smaller tiles. wgmma_tma declines off sm_90a; cuBLAS accepts every valid call, so
  // it ends the list.
  if (args.type() != core::GemmType::F32 && ctx.arch == 90) {
    const std::size_t es = core::dtype_size(args.ab_type);
    const auto pitch_ok = [es](const void* p, int64_t ld) {
      return reinterpret_cast<uintptr_t>(p) % 16 == 0 && (ld * static_cast<int64_t>(es)) % 16 == 0;
    };
    const bool unaligned = !pitch_ok(args.a, args.lda) || !pitch_ok(args.b, args.ldb);
    const int64_t tiles = core::ceil_div<int64_t>(args.m, 128) * core::ceil_div<int64_t>(args.n, 256);
    if (unaligned || tiles >= 3 * static_cast<int64_t>(ctx.sm_count)) return {"wgmma_tma", "cublas"};
  }
  return {"cublas"};
#endif
}

}  // namespace gpukern::cuda
