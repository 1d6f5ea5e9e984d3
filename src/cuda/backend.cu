// The GPU backend glue of the CUDA and HIP modules (libgpukern_cuda.so,
// libgpukern_hip.so): device discovery that never crashes without a driver, one Backend
// per device with its own stream, memory and timing, device description, and dispatch
// through the module's ladder tables. Runtime calls go through the gpu:: wrappers of
// portable.cuh; what differs per vendor is vendor:: (src/cuda/device.cu for CUDA,
// src/hip/device.hip for HIP) and the ladder tables each module defines.
#include "core/backend.hpp"
#include "core/log.hpp"
#include "core/rung_table.hpp"
#include "cuda/context.cuh"
#include "cuda/memread.cuh"

#include <memory>
#include <mutex>
#include <string>

namespace gpukern::cuda {
namespace {

using core::Error;
using core::Status;

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
    GK_GPU_CHECK(gpu::set_device(device));
    desc_ = vendor::describe_device(device);
    GK_GPU_CHECK(gpu::stream_create_non_blocking(&own_stream_));
    ctx_ = make_context(device, desc_, own_stream_, &libraries_);
  }

  ~CudaBackend() override {
    (void)gpu::set_device(ctx_.device);
    if (libraries_.cublas) libraries_.destroy_cublas(libraries_.cublas);
    (void)gpu::stream_synchronize(own_stream_);
    (void)gpu::stream_destroy(own_stream_);
  }

  core::DeviceInfo device_info() const override {
    core::DeviceInfo info;
    info.backend = vendor::backend_name();
    info.name = desc_.name;
    info.index = ctx_.device;
    info.arch_number = ctx_.arch.vendor == core::Vendor::Amd ? ctx_.arch.gfx : ctx_.arch.cc;
    info.arch = ctx_.arch.name;
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
      throw Error(Status::OutOfMemory,
                  "device allocation of " + std::to_string(bytes) + " bytes failed: out of device memory");
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

  void memread(const void* src, std::size_t bytes, uint64_t* sum) override {
    select_device();
    cuda::memread(src, bytes, sum, context());
  }

  void synchronize() override {
    select_device();
    GK_GPU_CHECK(gpu::stream_synchronize(stream()));
  }

  void set_stream(void* stream) override {
    std::lock_guard<std::mutex> lock(mutex_);
    ctx_.stream = stream ? static_cast<gpu::stream_t>(stream) : own_stream_;
  }

  std::unique_ptr<core::Timer> create_timer() override { return std::make_unique<CudaTimer>(ctx_.device, stream()); }

  std::vector<core::RungInfo> variants(core::OpKind op) const override {
    return op == core::OpKind::Gemm ? gemm_ladder().infos(ctx_.arch) : softmax_ladder().infos(ctx_.arch);
  }

  core::Verdict supports(const core::GemmArgs& args, int rung) const override {
    return gemm_ladder().supports(rung, args, context(), ctx_.arch);
  }
  core::Verdict supports(const core::SoftmaxArgs& args, int rung) const override {
    return softmax_ladder().supports(rung, args, context(), ctx_.arch);
  }
  bool auto_candidate(const core::GemmArgs& args, int rung) const override {
    return gemm_ladder().auto_candidate(rung, args, context());
  }
  bool auto_candidate(const core::SoftmaxArgs& args, int rung) const override {
    return softmax_ladder().auto_candidate(rung, args, context());
  }
  std::vector<core::AutoEntryInfo> auto_table(core::OpKind op) const override {
    return op == core::OpKind::Gemm ? gemm_ladder().auto_table() : softmax_ladder().auto_table();
  }
  core::AutoPick auto_pick(const core::GemmArgs& args) const override {
    return gemm_ladder().auto_pick(args, ctx_.arch);
  }
  core::AutoPick auto_pick(const core::SoftmaxArgs& args) const override {
    return softmax_ladder().auto_pick(args, ctx_.arch);
  }

  void gemm(const core::GemmArgs& args, int rung) override {
    select_device();
    gemm_ladder().run(rung, args, context());
  }
  void softmax(const core::SoftmaxArgs& args, int rung) override {
    select_device();
    softmax_ladder().run(rung, args, context());
  }

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
  LibraryHandles libraries_;
  CudaContext ctx_;
  gpu::stream_t own_stream_ = nullptr;
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
    throw Error(Status::Unavailable, count == 0
                                         ? why
                                         : std::string(vendor::backend_name()) + " device " + std::to_string(index) +
                                               " does not exist (" + std::to_string(count) + " found)");
  return new CudaBackend(index);
}

}  // namespace

}  // namespace gpukern::cuda

extern "C" __attribute__((visibility("default"))) const gpukern::core::ModuleApi* gpukern_module_api() {
  namespace cuda = gpukern::cuda;
  static const gpukern::core::ModuleApi api = {gpukern::core::kModuleAbiVersion, cuda::vendor::backend_name(),
                                               cuda::vendor::module_note(), &cuda::device_count, &cuda::create};
  return &api;
}
