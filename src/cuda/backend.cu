// The CUDA backend module (libgpukern_cuda.so): device discovery that never crashes
// without a driver, one Backend per device with its own stream, memory and timing,
// device description, and dispatch through the GEMM and softmax ladders.
// Runtime calls go through the gpu:: wrappers of portable.cuh, so the HIP module
// (src/hip) compiles this glue too; what differs per vendor is in vendor:: (the CUDA
// part at the end of this file, the HIP part in src/hip/device.hip). cuBLAS is CUDA only.
#include "core/backend.hpp"
#include "core/log.hpp"
#include "core/rung_table.hpp"
#include "cuda/context.cuh"

#if defined(GPUKERN_CUDA)
#include "cuda/backend.cuh"

#include <cublas_v2.h>
#endif

#include <memory>
#include <mutex>
#include <string>

namespace gpukern::cuda {
namespace {

using core::Error;
using core::Status;

#if defined(GPUKERN_CUDA)
/// "13.0" from 13000.
std::string version_string(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

/// FP32 lanes per SM: 64 on the data-centre Ampere part (sm_80), 128 on every other
/// architecture we build for (sm_86, sm_89, sm_90, sm_120).
int fp32_lanes_per_sm(int arch) { return arch == 80 ? 64 : 128; }

/// Dense f16 tensor-core FLOP per clock per SM with f32 accumulation: an estimate for
/// the device report (A100: 2048, H100: 4096, GeForce Ampere/Ada/Blackwell: 1024).
int tensor_flops_per_clock_per_sm(int arch) {
  if (arch >= 90 && arch < 100) return 4096;
  if (arch == 80) return 2048;
  if (arch == 100 || arch == 103) return 8192;
  return 1024;
}

/// Why no device can be used, in words, for gpukern-info.
std::string describe_count_error(cudaError_t e) {
  switch (e) {
    case cudaErrorNoDevice: return "no CUDA device found";
    case cudaErrorInsufficientDriver:
      return "the NVIDIA driver is missing or older than this build's CUDA runtime (" +
             version_string(CUDART_VERSION) + ")";
    case cudaErrorStubLibrary: return "only the CUDA driver stub library was found (no NVIDIA driver installed)";
    default: return std::string("cudaGetDeviceCount failed: ") + cudaGetErrorString(e);
  }
}
#endif

class CudaTimer final : public core::Timer {
 public:
  CudaTimer(int device, gpu::stream_t stream) : device_(device), stream_(stream) {
    GK_GPU_CHECK(gpu::set_device(device_));
    GK_GPU_CHECK(gpu::event_create(&start_));
    if (auto e = gpu::event_create(&stop_); e != gpu::kSuccess) {
      (void)gpu::event_destroy(start_);
      GK_GPU_CHECK(e);
    }
  }
  ~CudaTimer() override {
    (void)gpu::event_destroy(start_);
    (void)gpu::event_destroy(stop_);
  }
  void start() override { GK_GPU_CHECK(gpu::event_record(start_, stream_)); }
  void stop() override { GK_GPU_CHECK(gpu::event_record(stop_, stream_)); }
  double elapsed_ms() override {
    GK_GPU_CHECK(gpu::event_synchronize(stop_));
    float ms = 0.0f;
    GK_GPU_CHECK(gpu::event_elapsed_ms(&ms, start_, stop_));
    return ms;
  }

 private:
  int device_;
  gpu::stream_t stream_;  // the stream current when the timer was created
  gpu::event_t start_ = nullptr, stop_ = nullptr;
};

class CudaBackend final : public core::Backend {
 public:
  explicit CudaBackend(int device) {
    ctx_.device = device;
    GK_GPU_CHECK(gpu::set_device(device));
    desc_ = vendor::describe_device(device);
    ctx_.arch = desc_.arch;
    ctx_.sm_count = desc_.compute_units;
    ctx_.warp_size = desc_.warp_size;
    ctx_.smem_per_block_optin = desc_.smem_per_block_optin;
    ctx_.l2_bytes = desc_.l2_bytes;
    ctx_.cluster_launch = desc_.cluster_launch;
    GK_GPU_CHECK(gpu::stream_create_non_blocking(&own_stream_));
    ctx_.stream = own_stream_;
    ctx_.backend = this;
  }

  ~CudaBackend() override {
    (void)gpu::set_device(ctx_.device);
#if defined(GPUKERN_CUDA)
    if (cublas_) cublasDestroy(cublas_);
#endif
    (void)gpu::stream_synchronize(own_stream_);
    (void)gpu::stream_destroy(own_stream_);
  }

  core::DeviceInfo device_info() const override {
    core::DeviceInfo info;
    info.backend = vendor::backend_name();
    info.name = desc_.name;
    info.index = ctx_.device;
    info.arch_number = ctx_.arch;
    info.arch = desc_.arch_name;
    info.compute_units = ctx_.sm_count;
    info.clock_mhz = desc_.clock_mhz;
    info.memory_bytes = desc_.memory_bytes;
    info.driver_version = desc_.driver_version;
    info.runtime_version = desc_.runtime_version;
    info.peak_f32_gflops = desc_.peak_f32_gflops;
    info.peak_tensor_gflops = desc_.peak_tensor_gflops;
    info.peak_bandwidth_gbps = desc_.peak_bandwidth_gbps;
    info.extra.emplace_back("warp_size", std::to_string(ctx_.warp_size));
    info.extra.emplace_back("l2_bytes", std::to_string(ctx_.l2_bytes));
    info.extra.emplace_back("smem_per_block_optin", std::to_string(ctx_.smem_per_block_optin));
    return info;
  }

  void* alloc(std::size_t bytes) override {
    select_device();
    void* ptr = nullptr;
    if (bytes == 0) return nullptr;
    const gpu::error_t e = gpu::device_malloc(&ptr, bytes);
    if (gpu::is_out_of_memory(e)) {
      gpu::clear_last_error();  // reset the runtime's last-error slot so later launch checks stay clean
      throw Error(Status::OutOfMemory, "device allocation of " + std::to_string(bytes) + " bytes failed: out of device memory");
    }
    GK_GPU_CHECK(e);
    return ptr;
  }

  void free(void* ptr) noexcept override {
    if (!ptr) return;
    (void)gpu::set_device(ctx_.device);
    if (gpu::error_t e = gpu::device_free(ptr); e != gpu::kSuccess)
      core::log_line(core::LogLevel::Warn, std::string("freeing device memory failed: ") + gpu::error_string(e));
  }

  void copy(void* dst, const void* src, std::size_t bytes, core::CopyKind kind) override {
    if (bytes == 0) return;
    select_device();
    const gpu::stream_t s = stream();
    const gpu::memcpy_kind_t k = kind == core::CopyKind::HostToDevice   ? gpu::kHostToDevice
                                 : kind == core::CopyKind::DeviceToHost ? gpu::kDeviceToHost
                                                                        : gpu::kDeviceToDevice;
    GK_GPU_CHECK(gpu::memcpy_async(dst, src, bytes, k, s));
    // The host owns one side of H2D/D2H copies: it may reuse the source or read the
    // destination as soon as we return. Device-to-device copies stay queued.
    if (kind != core::CopyKind::DeviceToDevice) GK_GPU_CHECK(gpu::stream_synchronize(s));
  }

  void memset(void* dst, int value, std::size_t bytes) override {
    if (bytes == 0) return;
    select_device();
    GK_GPU_CHECK(gpu::memset_async(dst, value, bytes, stream()));
  }

  void synchronize() override {
    select_device();
    GK_GPU_CHECK(gpu::stream_synchronize(stream()));
  }

  void set_stream(void* stream) override {
    std::lock_guard<std::mutex> lock(mutex_);
    ctx_.stream = stream ? static_cast<gpu::stream_t>(stream) : own_stream_;
  }

  std::unique_ptr<core::Timer> create_timer() override {
    return std::make_unique<CudaTimer>(ctx_.device, stream());
  }

  std::vector<core::RungInfo> variants(core::OpKind op) const override {
    return op == core::OpKind::Gemm ? core::rung_infos(gemm_ladder(), ctx_.arch)
                                    : core::rung_infos(softmax_ladder(), ctx_.arch);
  }

  std::vector<std::string> auto_order(const core::GemmArgs& args) const override {
    return gemm_auto_order(args, context());
  }
  std::vector<std::string> auto_order(const core::SoftmaxArgs& args) const override {
    return softmax_auto_order(args, context());
  }

  std::string supports(const core::GemmArgs& args, std::string_view rung) const override {
    return core::ladder_supports(gemm_ladder(), args, context(), ctx_.arch, rung);
  }
  std::string supports(const core::SoftmaxArgs& args, std::string_view rung) const override {
    return core::ladder_supports(softmax_ladder(), args, context(), ctx_.arch, rung);
  }

  void gemm(const core::GemmArgs& args, std::string_view rung) override {
    select_device();
    core::ladder_run(gemm_ladder(), args, context(), rung);
  }
  void softmax(const core::SoftmaxArgs& args, std::string_view rung) override {
    select_device();
    core::ladder_run(softmax_ladder(), args, context(), rung);
  }

#if defined(GPUKERN_CUDA)
  /// See with_cublas in backend.cuh.
  void run_with_cublas(cudaStream_t stream, const std::function<void(cublasHandle_t)>& use) {
    std::lock_guard<std::mutex> lock(library_mutex_);
    select_device();
    if (!cublas_) {
      if (cublasStatus_t s = cublasCreate(&cublas_); s != CUBLAS_STATUS_SUCCESS) {
        cublas_ = nullptr;
        throw Error(s == CUBLAS_STATUS_ALLOC_FAILED ? Status::OutOfMemory : Status::DeviceError,
                    std::string("cublasCreate failed: ") + cublasGetStatusString(s));
      }
    }
    if (cublasStatus_t s = cublasSetStream(cublas_, stream); s != CUBLAS_STATUS_SUCCESS)
      throw Error(Status::DeviceError, std::string("cublasSetStream failed: ") + cublasGetStatusString(s));
    use(cublas_);
  }
#endif

 private:
  /// The calling thread's current device must be ours before any runtime call.
  void select_device() const { GK_GPU_CHECK(gpu::set_device(ctx_.device)); }

  gpu::stream_t stream() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return ctx_.stream;
  }

  /// A snapshot of the per-call state (the stream may be swapped by another thread).
  CudaContext context() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return ctx_;
  }

  mutable std::mutex mutex_;  // guards ctx_.stream
  std::mutex library_mutex_;  // guards the lazily created library handles
  CudaContext ctx_;
  gpu::stream_t own_stream_ = nullptr;
#if defined(GPUKERN_CUDA)
  cublasHandle_t cublas_ = nullptr;
#endif
  DeviceDescription desc_;
};

int device_count(std::string* reason) {
  int count = 0;
  const gpu::error_t e = gpu::device_count(&count);
  if (e != gpu::kSuccess) {
    gpu::clear_last_error();  // leave no sticky error behind for the application
    if (reason) *reason = vendor::no_device_reason(e);
    return 0;
  }
  if (count == 0 && reason) *reason = vendor::no_device_reason(e);
  return count;
}

core::Backend* create(int index) {
  std::string why;
  const int count = device_count(&why);
  if (index < 0 || index >= count)
    throw Error(Status::Unavailable, count == 0 ? why
                                                : std::string(vendor::backend_name()) + " device " + std::to_string(index) +
                                                      " does not exist (" + std::to_string(count) + " found)");
  return new CudaBackend(index);
}

}  // namespace

#if defined(GPUKERN_CUDA)
void with_cublas(const CudaContext& ctx, const std::function<void(cublasHandle_t)>& use) {
  static_cast<CudaBackend*>(ctx.backend)->run_with_cublas(ctx.stream, use);
}

// ---- the CUDA part of vendor:: (the HIP part is src/hip/device.hip) ----
namespace vendor {

const char* backend_name() { return "cuda"; }
const char* module_note() { return "SIMT and tensor-core GEMM ladders, softmax ladder; cuBLAS and cuDNN references"; }

std::string no_device_reason(cudaError_t e) {
  return e == cudaSuccess ? "no CUDA device found" : describe_count_error(e);
}

DeviceDescription describe_device(int index) {
  cudaDeviceProp prop{};
  GK_GPU_CHECK(cudaGetDeviceProperties(&prop, index));
  int clock_khz = 0, memory_clock_khz = 0;
  GK_GPU_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, index));
  GK_GPU_CHECK(cudaDeviceGetAttribute(&memory_clock_khz, cudaDevAttrMemoryClockRate, index));
  DeviceDescription d;
  d.name = prop.name;
  d.arch = prop.major * 10 + prop.minor;
  d.arch_name = "sm_" + std::to_string(d.arch);
  d.compute_units = prop.multiProcessorCount;
  d.warp_size = prop.warpSize;
  d.smem_per_block_optin = prop.sharedMemPerBlockOptin;
  d.l2_bytes = static_cast<size_t>(prop.l2CacheSize);
  d.cluster_launch = prop.major >= 9;
  d.memory_bytes = prop.totalGlobalMem;
  d.clock_mhz = clock_khz / 1000;
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  d.driver_version = version_string(driver);
  d.runtime_version = version_string(runtime);
  const double ghz = clock_khz / 1e6;
  d.peak_f32_gflops = double(d.compute_units) * fp32_lanes_per_sm(d.arch) * 2.0 * ghz;
  d.peak_tensor_gflops = double(d.compute_units) * tensor_flops_per_clock_per_sm(d.arch) * ghz;
  // Double data rate: two transfers per memory clock over the whole bus.
  d.peak_bandwidth_gbps = 2.0 * memory_clock_khz * 1e3 * (prop.memoryBusWidth / 8.0) / 1e9;
  return d;
}

}  // namespace vendor
#endif

}  // namespace gpukern::cuda

extern "C" __attribute__((visibility("default"))) const gpukern::core::ModuleApi* gpukern_module_api() {
  namespace cuda = gpukern::cuda;
  static const gpukern::core::ModuleApi api = {gpukern::core::kModuleAbiVersion, cuda::vendor::backend_name(),
                                               cuda::vendor::module_note(), &cuda::device_count, &cuda::create};
  return &api;
}
