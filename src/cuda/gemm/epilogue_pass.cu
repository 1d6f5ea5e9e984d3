// The module's part of the core's generic paths (core/decompose.hpp), for rungs that do
// not fuse the epilogue: C = act(W + beta*C + bias) over a batch of m x n outputs as one
// separate kernel (C rounded once), and the f32 workspace W the core has a rung fill
// when C is 16-bit. W may be absent (0): the tensor-core rungs' K = 0 calls, C = act(beta
// * C + bias), go through the same kernel (tensor_core_common.cu), and so does wgmma_tma's
// tf32 NN kernel's pass over its f32 C (W = C). Built by the CUDA and the HIP module.
#include "core/decompose.hpp"
#include "core/log.hpp"
#include "cuda/context.cuh"
#include "cuda/gemm/epilogue.cuh"
#include "cuda/workspace.cuh"

#include <algorithm>

namespace gpukern::cuda::gemm {
namespace {

constexpr int kPassThreads = 256;
constexpr int kPassPerThread = 4;  ///< columns a thread handles, kPassThreads apart (coalesced)
constexpr int kPassColumns = kPassThreads * kPassPerThread;
constexpr int64_t kGridLimit = 65535;  ///< grid y and z

/// The pass's operands, by value (the bias and activation travel in an Epilogue).
struct PassOperands {
  int64_t m, n, batch;
  const float* w;  // null: W = 0
  int64_t ldw, stride_w;
  void* c;
  int64_t ldc, stride_c;
  float beta;
};

/// Block (x, y, z) covers kPassColumns columns of rows y, y + gridDim.y, ... of items z,
/// z + gridDim.z, ...: no division per element, every load of a thread's four columns
/// issued before any is used, the activation fixed at compile time (`kAct`).
template <class C, int kAct>
__global__ void __launch_bounds__(kPassThreads) epilogue_pass_kernel(PassOperands p, Epilogue e) {
  const int64_t col0 = static_cast<int64_t>(blockIdx.x) * kPassColumns + threadIdx.x;
  for (int64_t item = blockIdx.z; item < p.batch; item += gridDim.z)
    for (int64_t r = blockIdx.y; r < p.m; r += gridDim.y) {
      C* c = static_cast<C*>(p.c) + item * p.stride_c + r * p.ldc;
      float v[kPassPerThread];
#pragma unroll
      for (int j = 0; j < kPassPerThread; ++j) {
        const int64_t col = col0 + j * kPassThreads;
        // W is read before C is written: W may be C.
        v[j] = p.w != nullptr && col < p.n ? p.w[item * p.stride_w + r * p.ldw + col] : 0.0f;
      }
      if (p.beta != 0.0f) {
#pragma unroll
        for (int j = 0; j < kPassPerThread; ++j) {
          const int64_t col = col0 + j * kPassThreads;
          if (col < p.n) v[j] += p.beta * gpu::to_float(c[col]);
        }
      }
#pragma unroll
      for (int j = 0; j < kPassPerThread; ++j) {
        const int64_t col = col0 + j * kPassThreads;
        if (col < p.n) c[col] = gpu::from_float<C>(core::activate(v[j] + e.bias_at(item, col), kAct));
      }
    }
}

template <class C>
void launch_pass(const PassOperands& p, const Epilogue& e, dim3 grid, gpu::stream_t stream) {
  with_activation(
      e.act, [&](auto act) { epilogue_pass_kernel<C, decltype(act)::value><<<grid, kPassThreads, 0, stream>>>(p, e); });
}

}  // namespace
}  // namespace gpukern::cuda::gemm

namespace gpukern::core {

void GenericPaths<cuda::CudaContext>::epilogue_pass(const EpiloguePassArgs& a, const cuda::CudaContext& ctx) {
  namespace gemm = cuda::gemm;
  if (a.m == 0 || a.n == 0 || a.batch == 0) return;
  const gemm::PassOperands p{a.m, a.n, a.batch, a.w, a.ldw, a.stride_w, a.c, a.ldc, a.stride_c, a.beta};
  gemm::Epilogue e;
  e.bias = a.bias;
  e.stride_bias = a.stride_bias;
  e.bias_type = static_cast<int>(a.bias_type);
  e.act = static_cast<int>(a.act);
  const dim3 grid(static_cast<unsigned>(ceil_div<int64_t>(a.n, gemm::kPassColumns)),
                  static_cast<unsigned>(std::min(a.m, gemm::kGridLimit)),
                  static_cast<unsigned>(std::min(a.batch, gemm::kGridLimit)));
  gpu::with_storage_type(a.c_type, [&](auto tag) { gemm::launch_pass<decltype(tag)>(p, e, grid, ctx.stream); });
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
