// What rungs may ask of the CUDA backend that owns their CudaContext: library
// handles created lazily, once per device, and bound to the call's stream.
#pragma once

#include "cuda/context.cuh"

#include <cublas_v2.h>

#include <functional>

namespace gpukern::cuda {

/// Runs `use` with the backend's cuBLAS handle (created on first use), bound to
/// ctx.stream, while holding the backend's library lock: the handle's stream binding
/// and the call that relies on it cannot interleave with another thread's.
void with_cublas(const CudaContext& ctx, const std::function<void(cublasHandle_t)>& use);

}  // namespace gpukern::cuda
