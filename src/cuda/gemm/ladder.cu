// The CUDA GEMM ladder as data: every rung in ladder order (naive first, the cuBLAS
// reference last), and auto's preference for a call.
#include "cuda/context.cuh"
#include "cuda/gemm/gemm_rungs.cuh"

namespace gpukern::cuda {

const core::Ladder<core::GemmArgs, CudaContext>& gemm_ladder() {
  using namespace gemm;
  constexpr uint32_t kF32 = core::kMaskF32;
  constexpr uint32_t kAll = core::kMaskF32 | core::kMaskTF32 | core::kMaskF16 | core::kMaskBF16;
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
      {"double_buffer", "cp.async multi-stage pipeline, register double buffering, L2 block swizzle", kF32, 80,
       "sm_80", false, double_buffer_supports, double_buffer_run},
      {"cublas", "cuBLAS cublasGemmEx (vendor reference)", kAll, 0, "", true, cublas_supports, cublas_run},
  };
  return table;
}

std::vector<std::string> gemm_auto_order(const core::GemmArgs& args, const CudaContext&) {
  // Exact f32: our best SIMT rung first (it declines only for reasons it states, e.g.
  // an architecture below sm_80), then cuBLAS, which accepts every valid call.
  // tf32, f16, bf16: only cuBLAS has tensor-core rungs here.
  if (args.type() == core::GemmType::F32) return {"double_buffer", "cublas"};
  return {"cublas"};
}

}  // namespace gpukern::cuda
