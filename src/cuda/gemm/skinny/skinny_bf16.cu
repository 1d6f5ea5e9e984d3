// The bf16 kernels of rung 14 `skinny` (see 14_skinny.cu), in a unit of their own.
#include "cuda/gemm/skinny/skinny_launch.cuh"

namespace gpukern::cuda::gemm {

void skinny_launch_bf16(const SkinnyCall& call, const CudaContext& ctx) {
  launch_skinny_typed<gpu::bf16_t, false>(call, ctx);
}

}  // namespace gpukern::cuda::gemm
