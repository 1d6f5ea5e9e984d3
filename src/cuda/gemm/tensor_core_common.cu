// The out-of-line parts of tensor_core_common.cuh: the degenerate calls of the
// tensor-core rungs (M or N = 0; K = 0, which scales C), in one unit of the module's
// fat binary.
#include "cuda/gemm/tensor_core_common.cuh"

namespace gpukern::cuda::gemm {
namespace {

/// K == 0: C = beta * C (zeros when beta == 0, without reading C) for batch item
/// first + blockIdx.y (C at c + item * stride_c); kEpilogue: C = act(beta * C + bias).
template <class OutT, bool kEpilogue>
__global__ void scale_c_kernel(OutT* c, int64_t ldc, int64_t stride_c, int64_t first, int m, int n, float beta,
                               Epilogue epi) {
  const int64_t item = first + blockIdx.y;
  c += item * stride_c;
  const int64_t total = static_cast<int64_t>(m) * n;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t col = i % n;
    OutT* dst = c + (i / n) * ldc + col;
    float v = beta == 0.0f ? 0.0f : beta * gpu::to_float(*dst);
    if constexpr (kEpilogue) v = epi.apply(v, item, col);
    *dst = gpu::from_float<OutT>(v);
  }
}

}  // namespace

bool tc_trivial_call(const core::GemmArgs& args, const CudaContext& ctx, const Epilogue& epi, int64_t batch) {
  if (args.m == 0 || args.n == 0 || batch == 0) return true;
  if (args.k != 0) return false;
  const int m = static_cast<int>(args.m), n = static_cast<int>(args.n);
  for_batch_chunks(batch, batch_strides_of(args), [&](const BatchLaunch& items, unsigned count) {
    // Enough blocks to fill the GPU, fewer per item the more items there are.
    const int64_t per_item = std::max<int64_t>(1, 4096 / count);
    const int blocks = static_cast<int>(std::min<int64_t>(ceil_div<int64_t>(args.m * args.n, 256), per_item));
    const dim3 grid(blocks, count);
    gpu::with_storage_type(args.c_type, [&](auto t) {
      using CT = decltype(t);
      CT* c = static_cast<CT*>(args.c);
      const int64_t sc = args.stride_c, first = items.first;
      if (epi.active())
        scale_c_kernel<CT, true><<<grid, 256, 0, ctx.stream>>>(c, args.ldc, sc, first, m, n, args.beta, epi);
      else
        scale_c_kernel<CT, false><<<grid, 256, 0, ctx.stream>>>(c, args.ldc, sc, first, m, n, args.beta, epi);
    });
    GK_LAUNCH_CHECK();
  });
  return true;
}

}  // namespace gpukern::cuda::gemm
