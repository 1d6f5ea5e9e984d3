// Per-device state that every rung of the CUDA and HIP modules receives, and the two
// ladders (tables of rungs) the backend glue dispatches through: each module defines
// its own (src/cuda/{gemm,softmax}/ladder.cu, src/hip/ladders.hip).
#pragma once

#include "core/rung_table.hpp"
#include "cuda/portable.cuh"

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace gpukern::cuda {

/// Vendor-library handles of one opened device, created lazily by the rungs that use
/// them (cublas.cu, cublaslt.cu) and destroyed with the device. `mutex` serializes a
/// handle's creation, a handle's stream binding and the call that relies on it.
struct LibraryHandles {
  std::mutex mutex;
  void* cublas = nullptr;  // destroyed by the backend, which owns these handles
  void (*destroy_cublas)(void*) = nullptr;
  void* cublaslt = nullptr;  // takes the stream per call: no binding to serialize
  void (*destroy_cublaslt)(void*) = nullptr;

  LibraryHandles() = default;
  LibraryHandles(const LibraryHandles&) = delete;
  LibraryHandles& operator=(const LibraryHandles&) = delete;
  ~LibraryHandles() {
    if (cublaslt) destroy_cublaslt(cublaslt);
  }
};

/// What a rung may use: the stream to launch on and the device's properties.
/// Library handles (cuBLAS, cuDNN) are created lazily by the rungs that need
/// them, through the accessors of the backend, and bound to `stream`.
struct CudaContext {
  gpu::stream_t stream = nullptr;
  int device = 0;
  core::DeviceArch arch;  // per vendor: arch.cc on NVIDIA (90 for sm_90), arch.gfx on AMD (0x90a)
  int sm_count = 0;       // SMs (HIP: compute units)
  int warp_size = 32;     // lanes per warp of this device (HIP: 64 on CDNA, 32 on RDNA); see gpu::with_warp_size
  size_t smem_per_block_optin = 0;  // bytes a block can opt in to
  size_t l2_bytes = 0;
  bool cluster_launch = false;          // thread-block clusters (sm_90+)
  LibraryHandles* libraries = nullptr;  // the device's vendor-library handles (cuBLAS)
};

/// A device as the backend glue (backend.cu) reports it. The vendor part of each
/// module fills it: backend.cu for CUDA, src/hip/device.hip for HIP.
struct DeviceDescription {
  std::string name;       // product name
  core::DeviceArch arch;  // vendor, cc or gfx, "sm_90" / "gfx90a"
  int compute_units = 0;  // SMs / CUs
  int warp_size = 32;
  size_t smem_per_block_optin = 0;
  size_t l2_bytes = 0;
  bool cluster_launch = false;
  uint64_t memory_bytes = 0;
  int clock_mhz = 0;
  double peak_f32_gflops = 0, peak_tensor_gflops = 0, peak_bandwidth_gbps = 0;
  std::string driver_version, runtime_version;
};

/// What differs between the vendors in the backend glue; everything else in
/// backend.cu goes through the gpu:: wrappers of portable.cuh.
namespace vendor {
const char* backend_name();  // "cuda", "hip": the name gpukern-info and GPUKERN_BACKEND use
const char* module_note();   // ModuleApi::note
/// Why no device can be used, after the device count failed with `e` (or found none: kSuccess).
std::string no_device_reason(gpu::error_t e);
/// Properties of device `index` (the calling thread's current device is set). Throws core::Error.
DeviceDescription describe_device(int index);
}  // namespace vendor

/// The context of device `device` as `d` describes it, launching on `stream`, with the
/// device's library handles (nullptr where no rung that needs them runs: tests and
/// development drivers that launch kernels directly).
inline CudaContext make_context(int device, const DeviceDescription& d, gpu::stream_t stream,
                                LibraryHandles* libraries = nullptr) {
  CudaContext ctx;
  ctx.stream = stream;
  ctx.device = device;
  ctx.arch = d.arch;
  ctx.sm_count = d.compute_units;
  ctx.warp_size = d.warp_size;
  ctx.smem_per_block_optin = d.smem_per_block_optin;
  ctx.l2_bytes = d.l2_bytes;
  ctx.cluster_launch = d.cluster_launch;
  ctx.libraries = libraries;
  return ctx;
}

/// What `compute()` returns for `key`, computed once and kept for the process: one cache
/// per instantiation (each call site passes its own lambda). A `compute` that throws
/// keeps nothing, so the next call asks again.
template <class Key, class Compute>
auto cached_per_key(const Key& key, Compute&& compute) {
  using Value = std::decay_t<decltype(compute())>;
  static std::mutex mutex;
  static std::map<Key, Value> cache;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (const auto it = cache.find(key); it != cache.end()) return it->second;
  }
  const Value value = compute();
  std::lock_guard<std::mutex> lock(mutex);
  return cache.emplace(key, value).first->second;
}

/// An occupancy answer (CTAs or clusters that fit at once), asked once per `key` and
/// kept: for a given device, kernel and launch shape it never changes. `query(int*)`
/// makes the occupancy call and returns its error; a failed query counts as 0 (its
/// error cleared).
template <class Key, class Query>
int cached_occupancy(const Key& key, Query&& query) {
  return cached_per_key(key, [&] {
    int count = 0;
    if (query(&count) != gpu::kSuccess) {
      gpu::clear_last_error();
      count = 0;
    }
    return count;
  });
}

#if defined(GPUKERN_CUDA)
/// Lets `kernel` use `bytes` of dynamic shared memory on `device` (gpu::allow_dynamic_smem;
/// above 48 KB a CUDA kernel must opt in), asking the runtime once per device, kernel and
/// size: the attribute stays set for the process, and asking on every call costs a locked
/// runtime call in each launch of a microsecond-scale GEMM.
template <class Kernel>
void allow_dynamic_smem_once(Kernel kernel, int bytes, int device) {
  cached_per_key(std::make_tuple(device, reinterpret_cast<const void*>(kernel), bytes), [&] {
    GK_GPU_CHECK(gpu::allow_dynamic_smem(kernel, static_cast<size_t>(bytes)));
    return true;
  });
}

/// A cudaLaunchKernelEx configuration with up to two launch attributes (`add`). `config`
/// points at `attribute`: use it where it is made (no copies).
struct ExLaunch {
  cudaLaunchAttribute attribute[2];
  cudaLaunchConfig_t config = {};

  ExLaunch(int64_t blocks, int threads, size_t smem_bytes, cudaStream_t stream)
      : ExLaunch(dim3(static_cast<unsigned>(blocks)), threads, smem_bytes, stream) {}
  ExLaunch(dim3 grid, int threads, size_t smem_bytes, cudaStream_t stream) {
    config.gridDim = grid;
    config.blockDim = dim3(threads);
    config.dynamicSmemBytes = smem_bytes;
    config.stream = stream;
    config.attrs = attribute;
    config.numAttrs = 0;
  }
  ExLaunch(const ExLaunch&) = delete;
  ExLaunch& operator=(const ExLaunch&) = delete;

  void add(const cudaLaunchAttribute& attr) { attribute[config.numAttrs++] = attr; }
};

/// Whether kernels that wait for their grid dependency (arch/grid_dependency.cuh) are
/// launched as programmatic dependents of the kernel before them: they then start while
/// that kernel finishes, and their set-up runs meanwhile. GPUKERN_PDL=off launches them
/// plainly (for measurement).
bool programmatic_launch_enabled();

/// Programmatic dependent launch on this device: sm_90 and later, unless GPUKERN_PDL=off.
inline bool dependent_launch(const CudaContext& ctx) { return ctx.arch.cc >= 90 && programmatic_launch_enabled(); }

/// The launch attribute that makes a kernel a programmatic dependent of the stream's
/// previous kernel.
inline cudaLaunchAttribute programmatic_attribute() {
  cudaLaunchAttribute a = {};
  a.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  a.val.programmaticStreamSerializationAllowed = 1;
  return a;
}

/// Launches `kernel` on `stream`, as a programmatic dependent of the stream's previous
/// kernel where `dependent` (dependent_launch(ctx)). The kernel must pass
/// arch::wait_grid_dependency before it touches global memory.
template <class... Params, class... Args>
void launch_kernel(bool dependent, void (*kernel)(Params...), dim3 grid, int threads, size_t smem_bytes,
                   cudaStream_t stream, Args&&... args) {
  ExLaunch launch(grid, threads, smem_bytes, stream);
  if (dependent) launch.add(programmatic_attribute());
  GK_GPU_CHECK(cudaLaunchKernelEx(&launch.config, kernel, std::forward<Args>(args)...));
}

/// A launch in clusters of `cluster_size` CTAs along x. Clusters of one CTA get no
/// attribute (a plain launch: on sm_90 every CTA is a cluster of one): launched with an
/// attribute of size 1, wgmma_tma's one-wave calls and split_row's one-CTA plans ran
/// markedly slower (notes/llm-gemm.md, "Plain launches"). `dependent`: as launch_kernel's.
struct ClusterLaunch : ExLaunch {
  ClusterLaunch(int64_t blocks, int threads, size_t smem_bytes, cudaStream_t stream, int cluster_size,
                bool dependent = false)
      : ExLaunch(blocks, threads, smem_bytes, stream) {
    if (cluster_size != 1) add(cluster_attribute(cluster_size));
    if (dependent) add(programmatic_attribute());
  }

 private:
  static cudaLaunchAttribute cluster_attribute(int cluster_size) {
    cudaLaunchAttribute a = {};
    a.id = cudaLaunchAttributeClusterDimension;
    a.val.clusterDim.x = static_cast<unsigned>(cluster_size);
    a.val.clusterDim.y = 1;
    a.val.clusterDim.z = 1;
    return a;
  }
};

/// A cooperative launch: every CTA resident at once (or the launch is refused).
struct CooperativeLaunch : ExLaunch {
  CooperativeLaunch(int64_t blocks, int threads, size_t smem_bytes, cudaStream_t stream)
      : ExLaunch(blocks, threads, smem_bytes, stream) {
    add(cooperative_attribute());
  }

 private:
  static cudaLaunchAttribute cooperative_attribute() {
    cudaLaunchAttribute a = {};
    a.id = cudaLaunchAttributeCooperative;
    a.val.cooperative = 1;
    return a;
  }
};
#endif

using GemmRung = core::Rung<core::GemmArgs, CudaContext>;
using SoftmaxRung = core::Rung<core::SoftmaxArgs, CudaContext>;
using GemmLadder = core::Ladder<core::GemmArgs, CudaContext>;
using SoftmaxLadder = core::Ladder<core::SoftmaxArgs, CudaContext>;

/// This module's GEMM and softmax ladders: CUDA's in src/cuda/{gemm,softmax}/ladder.cu,
/// HIP's in src/hip/ladders.hip.
const GemmLadder& gemm_ladder();
const SoftmaxLadder& softmax_ladder();

}  // namespace gpukern::cuda

namespace gpukern::core {
/// The module's part of the core's generic paths (core/decompose.hpp), in
/// src/cuda/gemm/epilogue_pass.cu (CUDA and HIP): the epilogue pass kernel on the context's
/// stream, the workspace stream-ordered (cuda/workspace.cuh's pool on CUDA).
template <>
struct GenericPaths<cuda::CudaContext> {
  static constexpr std::size_t kWorkspaceAlignment = 256;
  static void epilogue_pass(const EpiloguePassArgs& args, const cuda::CudaContext& ctx);
  static void* workspace(std::size_t bytes, const cuda::CudaContext& ctx);
  static void release(void* workspace, const cuda::CudaContext& ctx) noexcept;
};
}  // namespace gpukern::core
