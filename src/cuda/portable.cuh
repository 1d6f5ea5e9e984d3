// The one portability header between CUDA and HIP: every kernel in src/cuda uses
// these typed wrappers instead of vendor intrinsics, so src/hip can compile the
// same sources. The warp size is a compile-time constant of the target, never a
// literal 32.
#pragma once

#include "cuda/arch/vendor.cuh"  // GPUKERN_CUDA or GPUKERN_HIP, the vendor's runtime headers

#include "core/types.hpp"

#include <cstdint>
#include <string>
#include <type_traits>

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
                    std::string(what) + " failed: " + error_string(e) + " (" + file + ":" + std::to_string(line) + ")");
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
__device__ __forceinline__ float from_float<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ half_t from_float<half_t>(float v) {
  return __float2half_rn(v);
}
#if defined(GPUKERN_HIP)
template <>
__device__ __forceinline__ bf16_t from_float<bf16_t>(float v) {
  return bf16_t(v);
}
#else
template <>
__device__ __forceinline__ bf16_t from_float<bf16_t>(float v) {
  return __float2bfloat16_rn(v);
}
#endif

/// Calls fn(T{}) with T the device storage type of `dtype` (float, half_t, bf16_t): the
/// one switch from a call's dtype to the kernels' element type.
template <class Fn>
void with_storage_type(core::DType dtype, Fn&& fn) {
  switch (dtype) {
    case core::DType::F32:
      fn(float{});
      break;
    case core::DType::F16:
      fn(half_t{});
      break;
    case core::DType::BF16:
      fn(bf16_t{});
      break;
  }
}

/// The dtype of a device storage type (float, half_t, bf16_t): with_storage_type's inverse.
template <class T>
constexpr core::DType storage_dtype() {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, half_t> || std::is_same_v<T, bf16_t>,
                "a device storage type");
  if constexpr (std::is_same_v<T, float>) return core::DType::F32;
  if constexpr (std::is_same_v<T, half_t>) return core::DType::F16;
  return core::DType::BF16;
}

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

}  // namespace gpukern::gpu

// ---- Warp size on the host side (additive) ----
//
// gpu::kWarpSize is a constant of the *device* pass. A HIP host pass serves targets
// of both wavefront sizes at once (gfx90a/gfx940: 64 lanes, gfx1030: 32), so host code
// never derives launch shapes from gpu::kWarpSize: a kernel whose layout depends on the
// warp size takes it as a template parameter, the launcher picks the instantiation
// matching the device's warp size (read at run time, CudaContext::warp_size), and each
// device pass compiles only the instantiation of its own wavefront size.

namespace gpukern::gpu {

/// Calls f(std::integral_constant<int, W>{}) with W = `warp_size` (32 or 64 on AMD).
/// NVIDIA warps are always 32 lanes: CUDA builds instantiate that variant only.
template <class F>
void with_warp_size(int warp_size, F&& f) {
#if defined(GPUKERN_HIP)
  if (warp_size == 32)
    f(std::integral_constant<int, 32>{});
  else
    f(std::integral_constant<int, 64>{});
#else
  (void)warp_size;
  f(std::integral_constant<int, 32>{});
#endif
}

/// True in the device pass whose warp size is kWarp, and in the host pass. A kernel
/// instantiated for another warp size is never launched on this target: it compiles
/// to an empty body (`if constexpr (!gpu::warp_size_compiled<kWarp>()) return;`).
template <int kWarp>
constexpr bool warp_size_compiled() {
#if defined(__HIP_DEVICE_COMPILE__) || defined(__CUDA_ARCH__)
  return kWarp == kWarpSize;
#else
  return true;
#endif
}

}  // namespace gpukern::gpu

// ---- Host runtime calls used by the backend glue and the launchers (additive) ----

namespace gpukern::gpu {

#if defined(GPUKERN_HIP)
using stream_t = hipStream_t;
using event_t = hipEvent_t;
using memcpy_kind_t = hipMemcpyKind;
constexpr memcpy_kind_t kHostToDevice = hipMemcpyHostToDevice;
constexpr memcpy_kind_t kDeviceToHost = hipMemcpyDeviceToHost;
constexpr memcpy_kind_t kDeviceToDevice = hipMemcpyDeviceToDevice;

inline error_t set_device(int device) { return hipSetDevice(device); }
inline error_t device_count(int* count) { return hipGetDeviceCount(count); }
/// Resets the runtime's last-error slot (after an expected failure).
inline void clear_last_error() { (void)hipGetLastError(); }
inline bool is_out_of_memory(error_t e) { return e == hipErrorOutOfMemory; }
inline error_t device_malloc(void** ptr, size_t bytes) { return hipMalloc(ptr, bytes); }
inline error_t device_free(void* ptr) { return hipFree(ptr); }
inline error_t memcpy_async(void* dst, const void* src, size_t bytes, memcpy_kind_t kind, stream_t s) {
  return hipMemcpyAsync(dst, src, bytes, kind, s);
}
inline error_t memset_async(void* dst, int value, size_t bytes, stream_t s) {
  return hipMemsetAsync(dst, value, bytes, s);
}
/// Stream-ordered allocation (freed after the work queued before free_async).
inline error_t malloc_async(void** ptr, size_t bytes, stream_t s) { return hipMallocAsync(ptr, bytes, s); }
inline error_t free_async(void* ptr, stream_t s) { return hipFreeAsync(ptr, s); }
inline error_t stream_create_non_blocking(stream_t* s) { return hipStreamCreateWithFlags(s, hipStreamNonBlocking); }
inline error_t stream_destroy(stream_t s) { return hipStreamDestroy(s); }
inline error_t stream_synchronize(stream_t s) { return hipStreamSynchronize(s); }
inline error_t event_create(event_t* e) { return hipEventCreate(e); }
inline error_t event_destroy(event_t e) { return hipEventDestroy(e); }
inline error_t event_record(event_t e, stream_t s) { return hipEventRecord(e, s); }
inline error_t event_synchronize(event_t e) { return hipEventSynchronize(e); }
inline error_t event_elapsed_ms(float* ms, event_t start, event_t stop) { return hipEventElapsedTime(ms, start, stop); }
/// Lets `kernel` use `bytes` of dynamic shared memory. AMD gives a workgroup the whole
/// LDS (64 KB) without an opt-in, so there is nothing to set.
template <class Kernel>
error_t allow_dynamic_smem(Kernel, size_t) {
  return hipSuccess;
}
#else
using stream_t = cudaStream_t;
using event_t = cudaEvent_t;
using memcpy_kind_t = cudaMemcpyKind;
constexpr memcpy_kind_t kHostToDevice = cudaMemcpyHostToDevice;
constexpr memcpy_kind_t kDeviceToHost = cudaMemcpyDeviceToHost;
constexpr memcpy_kind_t kDeviceToDevice = cudaMemcpyDeviceToDevice;

inline error_t set_device(int device) { return cudaSetDevice(device); }
inline error_t device_count(int* count) { return cudaGetDeviceCount(count); }
/// Resets the runtime's last-error slot (after an expected failure).
inline void clear_last_error() { (void)cudaGetLastError(); }
inline bool is_out_of_memory(error_t e) { return e == cudaErrorMemoryAllocation; }
inline error_t device_malloc(void** ptr, size_t bytes) { return cudaMalloc(ptr, bytes); }
inline error_t device_free(void* ptr) { return cudaFree(ptr); }
inline error_t memcpy_async(void* dst, const void* src, size_t bytes, memcpy_kind_t kind, stream_t s) {
  return cudaMemcpyAsync(dst, src, bytes, kind, s);
}
inline error_t memset_async(void* dst, int value, size_t bytes, stream_t s) {
  return cudaMemsetAsync(dst, value, bytes, s);
}
/// Stream-ordered allocation (freed after the work queued before free_async).
inline error_t malloc_async(void** ptr, size_t bytes, stream_t s) { return cudaMallocAsync(ptr, bytes, s); }
inline error_t free_async(void* ptr, stream_t s) { return cudaFreeAsync(ptr, s); }
inline error_t stream_create_non_blocking(stream_t* s) { return cudaStreamCreateWithFlags(s, cudaStreamNonBlocking); }
inline error_t stream_destroy(stream_t s) { return cudaStreamDestroy(s); }
inline error_t stream_synchronize(stream_t s) { return cudaStreamSynchronize(s); }
inline error_t event_create(event_t* e) { return cudaEventCreate(e); }
inline error_t event_destroy(event_t e) { return cudaEventDestroy(e); }
inline error_t event_record(event_t e, stream_t s) { return cudaEventRecord(e, s); }
inline error_t event_synchronize(event_t e) { return cudaEventSynchronize(e); }
inline error_t event_elapsed_ms(float* ms, event_t start, event_t stop) {
  return cudaEventElapsedTime(ms, start, stop);
}
/// Lets `kernel` use `bytes` of dynamic shared memory (beyond 48 KB needs the opt-in).
template <class Kernel>
error_t allow_dynamic_smem(Kernel kernel, size_t bytes) {
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
}
#endif

}  // namespace gpukern::gpu

// ---- Register-level helpers (additive) ----

namespace gpukern::gpu {

/// An empty asm that "may change" a 32-bit register: the compiler forgets what it
/// holds (and so cannot keep derived values alive across it). The register class
/// differs: any register on NVIDIA, a per-lane VGPR on AMD (an SGPR would be illegal
/// for a per-lane value).
__device__ __forceinline__ void forget_value(uint32_t& word) {
#if defined(GPUKERN_HIP)
  asm volatile("" : "+v"(word));
#else
  asm volatile("" : "+r"(word));
#endif
}

}  // namespace gpukern::gpu
