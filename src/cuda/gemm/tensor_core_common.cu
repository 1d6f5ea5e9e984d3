// The out-of-line parts of tensor_core_common.cuh: the degenerate calls of the
// tensor-core rungs (M or N = 0; K = 0, which scales C), in one unit of the module's
// fat binary.
#include "cuda/gemm/tensor_core_common.cuh"

namespace gpukern::cuda::gemm {
namespace {

/// K == 0: C = beta * C (zeros when beta == 0, without reading C).
template <class OutT>
__global__ void scale_c_kernel(OutT* c, int64_t ldc, int m, int n, float beta) {
  const int64_t total = static_cast<int64_t>(m) * n;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    OutT* dst = c + (i / n) * ldc + i % n;
    *dst = gpu::from_float<OutT>(beta == 0.0f ? 0.0f : beta * gpu::to_float(*dst));
  }
}

}  // namespace

bool tc_trivial_call(const core::GemmArgs& args, const CudaContext& ctx) {
  if (args.m == 0 || args.n == 0) return true;
  if (args.k != 0) return false;
  const int m = static_cast<int>(args.m), n = static_cast<int>(args.n);
  const int blocks = static_cast<int>(std::min<int64_t>(ceil_div<int64_t>(args.m * args.n, 256), 4096));
  gpu::with_storage_type(args.c_type, [&](auto t) {
    using CT = decltype(t);
    scale_c_kernel<<<blocks, 256, 0, ctx.stream>>>(static_cast<CT*>(args.c), args.ldc, m, n, args.beta);
  });
  GK_LAUNCH_CHECK();
  return true;
}

}  // namespace gpukern::cuda::gemm
