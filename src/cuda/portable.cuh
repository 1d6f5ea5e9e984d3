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
