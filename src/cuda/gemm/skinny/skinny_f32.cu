// The f32-data kernels of rung 14 `skinny` (see 14_skinny.cu), in a unit of their own:
// tf32 (allow_tf32) and exact f32 (3xTF32).
#include "cuda/gemm/skinny/skinny_launch.cuh"

namespace gpukern::cuda::gemm {

void skinny_launch_tf32(const SkinnyCall& call, const CudaContext& ctx) {
  launch_skinny_typed<float, false>(call, ctx);
}

void skinny_launch_f32(const SkinnyCall& call, const CudaContext& ctx) { launch_skinny_typed<float, true>(call, ctx); }

}  // namespace gpukern::cuda::gemm
