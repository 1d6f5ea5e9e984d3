// The cuBLAS handle of an opened CUDA device, for the rungs that call cuBLAS: created
// on first use, kept in the device's LibraryHandles (context.cuh), destroyed with it.
#pragma once

#include "cuda/context.cuh"

#include <cublas_v2.h>

#include <mutex>
#include <string>

namespace gpukern::cuda {

/// Runs `use` with the device's cuBLAS handle (created on first use), bound to
/// ctx.stream, while holding the device's library lock: the handle's stream binding
/// and the call that relies on it cannot interleave with another thread's.
template <class Use>
void with_cublas(const CudaContext& ctx, Use&& use) {
  LibraryHandles& lib = *ctx.libraries;
  std::lock_guard<std::mutex> lock(lib.mutex);
  if (!lib.cublas) {
    cublasHandle_t handle = nullptr;
    if (cublasStatus_t s = cublasCreate(&handle); s != CUBLAS_STATUS_SUCCESS)
      throw core::Error(s == CUBLAS_STATUS_ALLOC_FAILED ? core::Status::OutOfMemory : core::Status::DeviceError,
                        std::string("cublasCreate failed: ") + cublasGetStatusString(s));
    lib.cublas = handle;
    lib.destroy_cublas = [](void* h) { cublasDestroy(static_cast<cublasHandle_t>(h)); };
  }
  const auto handle = static_cast<cublasHandle_t>(lib.cublas);
  if (cublasStatus_t s = cublasSetStream(handle, ctx.stream); s != CUBLAS_STATUS_SUCCESS)
    throw core::Error(core::Status::DeviceError, std::string("cublasSetStream failed: ") + cublasGetStatusString(s));
  use(handle);
}

}  // namespace gpukern::cuda
