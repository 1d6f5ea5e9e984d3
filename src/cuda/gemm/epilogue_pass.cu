// The module's part of the core's generic paths (core/decompose.hpp), for rungs that do
// not fuse the epilogue: C = act(W + beta*C + bias) over a batch of m x n outputs as one
// separate kernel (one thread per element, C rounded once), and the f32 workspace W the
// core has a rung fill when C is 16-bit. Built by the CUDA and the HIP module.
#include "core/decompose.hpp"
#include "core/log.hpp"
#include "cuda/context.cuh"
#include "cuda/gemm/epilogue.cuh"
#include "cuda/workspace.cuh"

#include <algorithm>

namespace gpukern::cuda::gemm {
namespace {

constexpr int kPassThreads = 256;
/// Blocks per SM of the grid-stride launch: enough loads in flight for a streaming pass.
constexpr int kPassBlocksPerSm = 8;

/// The pass's operands, by value (the bias and activation travel in an Epilogue).
struct PassOperands {
  int64_t m, n, batch;
  const float* w;
  int64_t ldw, stride_w;
  void* c;
  int64_t ldc, stride_c;
  float beta;
};

/// One block covers kPassThreads columns of one row of one item; blocks stride over
/// (item, row, column block) so any batch * m fits the grid.
template <class C>
__global__ void __launch_bounds__(kPassThreads) epilogue_pass_kernel(PassOperands p, Epilogue e) {
  const int64_t column_blocks = (p.n + kPassThreads - 1) / kPassThreads;
  const int64_t blocks = p.batch * p.m * column_blocks;
  for (int64_t block = blockIdx.x; block < blocks; block += gridDim.x) {
    const int64_t row = block / column_blocks;  // over every item's rows
    const int64_t col = (block - row * column_blocks) * kPassThreads + threadIdx.x;
    if (col >= p.n) continue;
    const int64_t item = row / p.m, r = row - item * p.m;
    float v = p.w[item * p.stride_w + r * p.ldw + col];  // read before C is written: W may be C
    C* c = static_cast<C*>(p.c) + item * p.stride_c + r * p.ldc + col;
    if (p.beta != 0.0f) v += p.beta * gpu::to_float(*c);
    *c = gpu::from_float<C>(e.apply(v, item, col));
  }
}

}  // namespace
}  // namespace gpukern::cuda::gemm

namespace gpukern::core {

void GenericPaths<cuda::CudaContext>::epilogue_pass(const EpiloguePassArgs& a, const cuda::CudaContext& ctx) {
  namespace gemm = cuda::gemm;
  const gemm::PassOperands p{a.m, a.n, a.batch, a.w, a.ldw, a.stride_w, a.c, a.ldc, a.stride_c, a.beta};
  gemm::Epilogue e;
  e.bias = a.bias;
  e.stride_bias = a.stride_bias;
  e.bias_type = static_cast<int>(a.bias_type);
  e.act = static_cast<int>(a.act);
  const int64_t blocks = a.batch * a.m * ceil_div<int64_t>(a.n, gemm::kPassThreads);
  const int64_t grid = std::max<int64_t>(1, std::min<int64_t>(blocks, int64_t{ctx.sm_count} * gemm::kPassBlocksPerSm));
  gpu::with_storage_type(a.c_type, [&](auto tag) {
    gemm::epilogue_pass_kernel<decltype(tag)><<<static_cast<unsigned>(grid), gemm::kPassThreads, 0, ctx.stream>>>(p, e);
  });
  GK_LAUNCH_CHECK();
}

void* GenericPaths<cuda::CudaContext>::workspace(std::size_t bytes, const cuda::CudaContext& ctx) {
#if defined(GPUKERN_CUDA)
  return cuda::workspace_alloc(bytes, ctx);
#else
  void* p = nullptr;
  GK_GPU_CHECK(gpu::malloc_async(&p, bytes, ctx.stream));
  return p;
#endif
}

void GenericPaths<cuda::CudaContext>::release(void* workspace, const cuda::CudaContext& ctx) noexcept {
  if (const gpu::error_t e = gpu::free_async(workspace, ctx.stream); e != gpu::kSuccess)
    log_line(LogLevel::Warn, std::string("freeing the epilogue workspace failed: ") + gpu::error_string(e));
}

}  // namespace gpukern::core
