// The one portability header between CUDA and HIP: every kernel in src/cuda uses
// these typed wrappers instead of vendor intrinsics, so src/hip can compile the
// same sources. The warp size is a compile-time constant of the target, never a
// literal 32.
#pragma once

#if defined(__HIPCC__) || defined(__HIP_PLATFORM_AMD__)
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#include <hip/hip_bf16.h>
#define GPUKERN_HIP 1
#else
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#define GPUKERN_CUDA 1
#endif

#include "core/types.hpp"

#include <cstdint>
#include <string>

namespace gpukern::gpu {

#if defined(GPUKERN_HIP)
using error_t = hipError_t;
constexpr error_t kSuccess = hipSuccess;
inline const char* error_string(error_t e) { return hipGetErrorString(e); }
inline error_t last_launch_error() { return hipGetLastError(); }
#else
using error_t = cudaError_t;
constexpr error_t kSuccess = cudaSuccess;
inline const char* error_string(error_t e) { return cudaGetErrorString(e); }
inline error_t last_launch_error() { return cudaGetLastError(); }
#endif

/// Throws core::Error(DeviceError) naming the call site; out-of-memory maps to OutOfMemory.
inline void check(error_t e, const char* what, const char* file, int line) {
  if (e == kSuccess) return;
#if defined(GPUKERN_HIP)
  bool oom = e == hipErrorOutOfMemory;
#else
  bool oom = e == cudaErrorMemoryAllocation;
#endif
  throw core::Error(oom ? core::Status::OutOfMemory : core::Status::DeviceError,
                    std::string(what) + " failed: " + error_string(e) + " (" + file + ":" +
                        std::to_string(line) + ")");
}

}  // namespace gpukern::gpu

/// Checks a runtime call: GK_GPU_CHECK(cudaMemsetAsync(...)).
#define GK_GPU_CHECK(call) ::gpukern::gpu::check((call), #call, __FILE__, __LINE__)
/// Checks the last kernel launch.
#define GK_LAUNCH_CHECK() \
  ::gpukern::gpu::check(::gpukern::gpu::last_launch_error(), "kernel launch", __FILE__, __LINE__)

namespace gpukern::gpu {

#if defined(GPUKERN_HIP)
// 64 lanes on CDNA (gfx9xx), 32 on RDNA; __AMDGCN_WAVEFRONT_SIZE is set per target.
#if defined(__AMDGCN_WAVEFRONT_SIZE)
constexpr int kWarpSize = __AMDGCN_WAVEFRONT_SIZE;
#else
constexpr int kWarpSize = 64;  // host pass: the value is not used for device layouts
#endif
using lane_mask_t = uint64_t;
#else
constexpr int kWarpSize = 32;
using lane_mask_t = uint32_t;
#endif
constexpr lane_mask_t kFullMask = ~lane_mask_t(0);

/// Butterfly exchange within a warp (all lanes participate).
template <class T>
__device__ __forceinline__ T shfl_xor(T value, int lane_mask) {
#if defined(GPUKERN_HIP)
  return __shfl_xor(value, lane_mask, kWarpSize);
#else
  return __shfl_xor_sync(kFullMask, value, lane_mask, kWarpSize);
#endif
}

/// Value of `src_lane` broadcast to the warp.
template <class T>
__device__ __forceinline__ T shfl(T value, int src_lane) {
#if defined(GPUKERN_HIP)
  return __shfl(value, src_lane, kWarpSize);
#else
  return __shfl_sync(kFullMask, value, src_lane, kWarpSize);
#endif
}

__device__ __forceinline__ int lane_id() { return static_cast<int>(threadIdx.x) % kWarpSize; }
__device__ __forceinline__ int warp_id() { return static_cast<int>(threadIdx.x) / kWarpSize; }

/// Storage types: the same names on both vendors.
#if defined(GPUKERN_HIP)
using half_t = __half;
using bf16_t = hip_bfloat16;
#else
using half_t = __half;
using bf16_t = __nv_bfloat16;
#endif

/// Element load/store with f32 math.
__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(half_t v) { return __half2float(v); }
#if defined(GPUKERN_HIP)
__device__ __forceinline__ float to_float(bf16_t v) { return static_cast<float>(v); }
#else
__device__ __forceinline__ float to_float(bf16_t v) { return __bfloat162float(v); }
#endif

template <class T>
__device__ __forceinline__ T from_float(float v);
template <>
__device__ __forceinline__ float from_float<float>(float v) { return v; }
template <>
__device__ __forceinline__ half_t from_float<half_t>(float v) { return __float2half_rn(v); }
#if defined(GPUKERN_HIP)
template <>
__device__ __forceinline__ bf16_t from_float<bf16_t>(float v) { return bf16_t(v); }
#else
template <>
__device__ __forceinline__ bf16_t from_float<bf16_t>(float v) { return __float2bfloat16_rn(v); }
#endif

}  // namespace gpukern::gpu

// ---- Additions for the GEMM ladder (additive; existing names above are unchanged) ----

namespace gpukern::gpu {

/// __CUDA_ARCH__ of the device pass being compiled (e.g. 900), 0 in the host pass.
/// Kernels tuned for one architecture family compile their body only for it
/// (`if constexpr (Config::compiled_for(kDeviceArch))`), which keeps the fat binary
/// and its build time small. The HIP device pass reports a large value so that
/// configs meant for "any architecture" still compile there.
#if defined(__CUDA_ARCH__)
constexpr int kDeviceArch = __CUDA_ARCH__;
#elif defined(__HIP_DEVICE_COMPILE__)
constexpr int kDeviceArch = 100000;
#else
constexpr int kDeviceArch = 0;
#endif

/// Asynchronous global -> shared copies (cp.async, sm_80+). `src_bytes` below the
/// copy size fills the rest of the destination with zeros, so edge tiles need no
/// separate path: out-of-range elements are copied with src_bytes = 0. Where
/// cp.async does not exist (HIP, older CUDA targets) the copy is done synchronously,
/// which keeps the same results and only loses the overlap.
__device__ __forceinline__ void cp_async_4(float* smem, const float* gmem, int src_bytes) {
#if defined(GPUKERN_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(gmem),
               "r"(src_bytes)
               : "memory");
#else
  *smem = src_bytes > 0 ? *gmem : 0.0f;
#endif
}

/// 16-byte variant; both addresses must be 16-byte aligned. Bypasses L1 (.cg).
__device__ __forceinline__ void cp_async_16(float* smem, const float* gmem, int src_bytes) {
#if defined(GPUKERN_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem),
               "r"(src_bytes)
               : "memory");
#else
  for (int i = 0; i < 4; ++i) smem[i] = 4 * i < src_bytes ? gmem[i] : 0.0f;
#endif
}

/// Closes the group of copies issued since the previous commit.
__device__ __forceinline__ void cp_async_commit() {
#if defined(GPUKERN_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

/// Waits until at most `kPending` committed groups are still in flight.
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
#if defined(GPUKERN_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
#endif
}

}  // namespace gpukern::gpu
