// The f16 kernels of rung 14 `skinny` (see 14_skinny.cu), in a unit of their own.
#include "cuda/gemm/skinny/skinny_launch.cuh"

namespace gpukern::cuda::gemm {

void skinny_launch_f16(const SkinnyCall& call, const CudaContext& ctx) {
  launch_skinny_typed<gpu::half_t, false>(call, ctx);
}

}  // namespace gpukern::cuda::gemm
