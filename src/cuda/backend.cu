// The CUDA backend module (libgpukern_cuda.so): device discovery that never crashes
// without a driver, one Backend per device with its own stream, memory and timing,
// device description, and dispatch through the GEMM and softmax ladders.
#include "cuda/backend.cuh"

#include "core/backend.hpp"
#include "core/log.hpp"
#include "core/rung_table.hpp"
#include "cuda/context.cuh"

#include <cublas_v2.h>

#include <memory>
#include <mutex>
#include <string>

namespace gpukern::cuda {
namespace {

using core::Error;
using core::Status;

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

class CudaTimer final : public core::Timer {
 public:
  CudaTimer(int device, cudaStream_t stream) : device_(device), stream_(stream) {
    GK_GPU_CHECK(cudaSetDevice(device_));
    GK_GPU_CHECK(cudaEventCreate(&start_));
    if (auto e = cudaEventCreate(&stop_); e != cudaSuccess) {
      cudaEventDestroy(start_);
      GK_GPU_CHECK(e);
    }
  }
  ~CudaTimer() override {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  void start() override { GK_GPU_CHECK(cudaEventRecord(start_, stream_)); }
  void stop() override { GK_GPU_CHECK(cudaEventRecord(stop_, stream_)); }
  double elapsed_ms() override {
    GK_GPU_CHECK(cudaEventSynchronize(stop_));
    float ms = 0.0f;
    GK_GPU_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return ms;
  }

 private:
  int device_;
  cudaStream_t stream_;  // the stream current when the timer was created
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

class CudaBackend final : public core::Backend {
 public:
  explicit CudaBackend(int device) {
    ctx_.device = device;
    GK_GPU_CHECK(cudaSetDevice(device));
    cudaDeviceProp prop{};
    GK_GPU_CHECK(cudaGetDeviceProperties(&prop, device));
    name_ = prop.name;
    ctx_.arch = prop.major * 10 + prop.minor;
    ctx_.sm_count = prop.multiProcessorCount;
    ctx_.smem_per_block_optin = prop.sharedMemPerBlockOptin;
    ctx_.l2_bytes = static_cast<size_t>(prop.l2CacheSize);
    ctx_.cluster_launch = prop.major >= 9;
    memory_bytes_ = prop.totalGlobalMem;
    bus_width_bits_ = prop.memoryBusWidth;
    GK_GPU_CHECK(cudaDeviceGetAttribute(&clock_khz_, cudaDevAttrClockRate, device));
    GK_GPU_CHECK(cudaDeviceGetAttribute(&memory_clock_khz_, cudaDevAttrMemoryClockRate, device));
    GK_GPU_CHECK(cudaStreamCreateWithFlags(&own_stream_, cudaStreamNonBlocking));
    ctx_.stream = own_stream_;
    ctx_.backend = this;
  }

  ~CudaBackend() override {
    cudaSetDevice(ctx_.device);
    if (cublas_) cublasDestroy(cublas_);
    cudaStreamSynchronize(own_stream_);
    cudaStreamDestroy(own_stream_);
  }

  core::DeviceInfo device_info() const override {
    core::DeviceInfo info;
    info.backend = "cuda";
    info.name = name_;
    info.index = ctx_.device;
    info.arch_number = ctx_.arch;
    info.arch = "sm_" + std::to_string(ctx_.arch);
    info.compute_units = ctx_.sm_count;
    info.clock_mhz = clock_khz_ / 1000;
    info.memory_bytes = memory_bytes_;
    int driver = 0, runtime = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    info.driver_version = version_string(driver);
    info.runtime_version = version_string(runtime);
    const double ghz = clock_khz_ / 1e6;
    info.peak_f32_gflops = double(ctx_.sm_count) * fp32_lanes_per_sm(ctx_.arch) * 2.0 * ghz;
    info.peak_tensor_gflops = double(ctx_.sm_count) * tensor_flops_per_clock_per_sm(ctx_.arch) * ghz;
    // Double data rate: two transfers per memory clock over the whole bus.
    info.peak_bandwidth_gbps = 2.0 * memory_clock_khz_ * 1e3 * (bus_width_bits_ / 8.0) / 1e9;
    info.extra.emplace_back("l2_bytes", std::to_string(ctx_.l2_bytes));
    info.extra.emplace_back("smem_per_block_optin", std::to_string(ctx_.smem_per_block_optin));
    return info;
  }

  void* alloc(std::size_t bytes) override {
    select_device();
    void* ptr = nullptr;
    if (bytes == 0) return nullptr;
    const cudaError_t e = cudaMalloc(&ptr, bytes);
    if (e == cudaErrorMemoryAllocation) {
      cudaGetLastError();  // reset the runtime's last-error slot so later launch checks stay clean
      throw Error(Status::OutOfMemory, "cudaMalloc of " + std::to_string(bytes) + " bytes failed: out of device memory");
    }
    GK_GPU_CHECK(e);
    return ptr;
  }

  void free(void* ptr) noexcept override {
    if (!ptr) return;
    cudaSetDevice(ctx_.device);
    if (cudaError_t e = cudaFree(ptr); e != cudaSuccess)
      core::log_line(core::LogLevel::Warn, std::string("cudaFree failed: ") + cudaGetErrorString(e));
  }

  void copy(void* dst, const void* src, std::size_t bytes, core::CopyKind kind) override {
    if (bytes == 0) return;
    select_device();
    const cudaStream_t s = stream();
    const cudaMemcpyKind k = kind == core::CopyKind::HostToDevice   ? cudaMemcpyHostToDevice
                             : kind == core::CopyKind::DeviceToHost ? cudaMemcpyDeviceToHost
                                                                    : cudaMemcpyDeviceToDevice;
    GK_GPU_CHECK(cudaMemcpyAsync(dst, src, bytes, k, s));
    // The host owns one side of H2D/D2H copies: it may reuse the source or read the
    // destination as soon as we return. Device-to-device copies stay queued.
    if (kind != core::CopyKind::DeviceToDevice) GK_GPU_CHECK(cudaStreamSynchronize(s));
  }

  void memset(void* dst, int value, std::size_t bytes) override {
    if (bytes == 0) return;
    select_device();
    GK_GPU_CHECK(cudaMemsetAsync(dst, value, bytes, stream()));
  }

  void synchronize() override {
    select_device();
    GK_GPU_CHECK(cudaStreamSynchronize(stream()));
  }

  void set_stream(void* stream) override {
    std::lock_guard<std::mutex> lock(mutex_);
    ctx_.stream = stream ? static_cast<cudaStream_t>(stream) : own_stream_;
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
    const auto* r = core::find_rung(gemm_ladder(), rung);
    if (!r) return "unknown rung " + std::string(rung);
    return core::rung_supports(*r, args, context(), ctx_.arch);
  }
  std::string supports(const core::SoftmaxArgs& args, std::string_view rung) const override {
    const auto* r = core::find_rung(softmax_ladder(), rung);
    if (!r) return "unknown rung " + std::string(rung);
    return core::rung_supports(*r, args, context(), ctx_.arch);
  }

  void gemm(const core::GemmArgs& args, std::string_view rung) override {
    const auto* r = core::find_rung(gemm_ladder(), rung);
    if (!r) throw Error(Status::InvalidArgument, "unknown gemm rung " + std::string(rung));
    select_device();
    r->run(args, context());
  }
  void softmax(const core::SoftmaxArgs& args, std::string_view rung) override {
    const auto* r = core::find_rung(softmax_ladder(), rung);
    if (!r) throw Error(Status::InvalidArgument, "unknown softmax rung " + std::string(rung));
    select_device();
    r->run(args, context());
  }

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

 private:
  /// The calling thread's current device must be ours before any runtime call.
  void select_device() const { GK_GPU_CHECK(cudaSetDevice(ctx_.device)); }

  cudaStream_t stream() const {
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
  cudaStream_t own_stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  std::string name_;
  uint64_t memory_bytes_ = 0;
  int clock_khz_ = 0, memory_clock_khz_ = 0, bus_width_bits_ = 0;
};

int device_count(std::string* reason) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();  // leave no sticky error behind for the application
    if (reason) *reason = describe_count_error(e);
    return 0;
  }
  if (count == 0 && reason) *reason = "no CUDA device found";
  return count;
}

core::Backend* create(int index) {
  std::string why;
  const int count = device_count(&why);
  if (index < 0 || index >= count)
    throw Error(Status::Unavailable, count == 0 ? why
                                                : "CUDA device " + std::to_string(index) + " does not exist (" +
                                                      std::to_string(count) + " found)");
  return new CudaBackend(index);
}

constexpr core::ModuleApi kApi = {
    core::kModuleAbiVersion, "cuda",
    "SIMT SGEMM ladder and softmax ladder; cuBLAS reference",
    &device_count, &create};

}  // namespace

void with_cublas(const CudaContext& ctx, const std::function<void(cublasHandle_t)>& use) {
  static_cast<CudaBackend*>(ctx.backend)->run_with_cublas(ctx.stream, use);
}

}  // namespace gpukern::cuda

extern "C" __attribute__((visibility("default"))) const gpukern::core::ModuleApi* gpukern_module_api() {
  return &gpukern::cuda::kApi;
}
