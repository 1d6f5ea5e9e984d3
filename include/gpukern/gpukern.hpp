/// @file gpukern.hpp
/// libgpukern C++ API (C++17): the one header an application includes.
///
/// A thin, header-only layer over the C API in gpukern.h: the same calls, with
/// RAII for handles, buffers and timers, and gpukern::Error thrown on failure.
/// A Device's handle stays open while the Device or any Buffer or Timer made from it
/// exists, so these may be destroyed in any order.
///
/// @code
///   gpukern::Device dev;                       // GPUKERN_BACKEND, default auto
///   gpukern::Buffer a = dev.alloc(m * k * 4);  // device memory, freed on scope exit
///   dev.upload(a, host_a.data(), a.size());
///   gpukern::GemmDesc g; g.m = m; ... g.a = a.data();
///   dev.gemm(g);
///   dev.synchronize();
/// @endcode
#ifndef GPUKERN_GPUKERN_HPP
#define GPUKERN_GPUKERN_HPP

#include <gpukern/gpukern.h>

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace gpukern {

/// Status codes, same values as gk_status.
enum class Status {
  Success = GK_SUCCESS,
  InvalidArgument = GK_INVALID_ARGUMENT,
  Unsupported = GK_UNSUPPORTED,
  Unavailable = GK_UNAVAILABLE,
  OutOfMemory = GK_OUT_OF_MEMORY,
  DeviceError = GK_DEVICE_ERROR,
  InternalError = GK_INTERNAL_ERROR,
};

/// Thrown by every C++ call that fails; what() names the argument or the reason.
class Error : public std::runtime_error {
 public:
  Error(Status status, const std::string& message, gk_decline decline = GK_DECLINE_NONE)
      : std::runtime_error(message), status_(status), decline_(decline) {}
  /// The precise error kind.
  Status status() const noexcept { return status_; }
  /// For Unsupported: why the rung declined (GK_DECLINE_MISALIGNED, ...); else GK_DECLINE_NONE.
  gk_decline decline() const noexcept { return decline_; }

 private:
  Status status_;
  gk_decline decline_;
};

/// Throws gpukern::Error for a failed C call, with the thread's last message.
inline void check(gk_status status) {
  if (status != GK_SUCCESS)
    throw Error(static_cast<Status>(status), std::string(gk_status_name(status)) + ": " + gk_last_error(),
                gk_last_decline());
}

using DType = gk_dtype;
using Transpose = gk_transpose;
using Op = gk_op;
using BackendInfo = gk_backend_info;
using DeviceInfo = gk_device_info;
using VariantInfo = gk_variant_info;
using AutoEntry = gk_auto_entry;

/// gemm description; see gk_gemm_ex_desc (the gk_gemm_desc fields plus strided batches and a
/// fused bias + activation epilogue). Defaults (gk_gemm_ex_desc_init): no transposes, f32,
/// alpha 1, beta 0, auto, all sizes 0 and leading dimensions 1 (the least the rule
/// ld >= max(1, row length) allows), batch_count 1, no bias, no activation: a valid empty call.
struct GemmDesc : gk_gemm_ex_desc {
  GemmDesc() : gk_gemm_ex_desc{} { gk_gemm_ex_desc_init(this); }
};

/// softmax description; see gk_softmax_ex_desc. Defaults (gk_softmax_ex_desc_init): f32,
/// softmax (not log), auto, rows and cols 0, ldx = ldy = 1, batch_count 1, scale 1, no mask:
/// a valid empty call.
struct SoftmaxDesc : gk_softmax_ex_desc {
  SoftmaxDesc() : gk_softmax_ex_desc{} { gk_softmax_ex_desc_init(this); }
};

/// Size in bytes of one element of a storage type.
inline std::size_t dtype_size(DType t) { return t == GK_F32 ? 4 : 2; }

/// Every known backend and its state (unavailable ones carry the reason).
inline std::vector<BackendInfo> list_backends() {
  int count = 0;
  check(gk_backend_count(&count));
  std::vector<BackendInfo> out(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) check(gk_get_backend_info(i, &out[static_cast<std::size_t>(i)]));
  return out;
}

/// Overrides a GPUKERN_* option for this process (see gk_set_option).
inline void set_option(const std::string& name, const std::string& value) {
  check(gk_set_option(name.c_str(), value.c_str()));
}

class Device;

namespace detail {
/// A handle shared by a Device and the Buffers and Timers made from it; the last owner
/// closes it.
using SharedHandle = std::shared_ptr<gk_handle_s>;
}  // namespace detail

/// Device memory from Device::alloc; freed when the Buffer goes out of scope. It keeps
/// its Device's handle open, so it may outlive the Device object.
class Buffer {
 public:
  Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&& o) noexcept { swap(o); }
  Buffer& operator=(Buffer&& o) noexcept {
    Buffer tmp(std::move(o));
    swap(tmp);
    return *this;
  }
  ~Buffer() {
    if (ptr_) gk_free(handle_.get(), ptr_);
  }
  void* data() const noexcept { return ptr_; }
  template <class T>
  T* as() const noexcept {
    return static_cast<T*>(ptr_);
  }
  std::size_t size() const noexcept { return bytes_; }

 private:
  friend class Device;
  Buffer(detail::SharedHandle h, void* p, std::size_t n) : handle_(std::move(h)), ptr_(p), bytes_(n) {}
  void swap(Buffer& o) noexcept {
    std::swap(handle_, o.handle_);
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
  }
  detail::SharedHandle handle_;
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

/// Event timer on a device's stream (GPU events; a steady clock on the CPU). It keeps its
/// Device's handle open, so it may outlive the Device object.
class Timer {
 public:
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;
  Timer(Timer&& o) noexcept : handle_(std::move(o.handle_)), timer_(std::exchange(o.timer_, nullptr)) {}
  Timer& operator=(Timer&& o) noexcept {
    Timer tmp(std::move(o));
    std::swap(handle_, tmp.handle_);
    std::swap(timer_, tmp.timer_);
    return *this;
  }
  ~Timer() {
    if (timer_) gk_timer_destroy(timer_);
  }
  void start() { check(gk_timer_start(timer_)); }
  void stop() { check(gk_timer_stop(timer_)); }
  /// Waits for the stop event; milliseconds between start() and stop(). Throws
  /// InvalidArgument unless start() was followed by stop().
  double elapsed_ms() {
    double ms = 0;
    check(gk_timer_elapsed_ms(timer_, &ms));
    return ms;
  }

 private:
  friend class Device;
  Timer(detail::SharedHandle h, gk_timer t) : handle_(std::move(h)), timer_(t) {}
  detail::SharedHandle handle_;  // declared first: destroyed after the timer
  gk_timer timer_ = nullptr;
};

/// An opened backend device. Calls from several threads at once are safe.
class Device {
 public:
  /// Opens "cpu", "cuda", "cuda:1", "hip", "auto"; empty = GPUKERN_BACKEND (default auto).
  explicit Device(const std::string& spec = "") {
    gk_handle h = nullptr;
    check(gk_open(spec.empty() ? nullptr : spec.c_str(), &h));
    handle_ = detail::SharedHandle(h, [](gk_handle opened) { gk_close(opened); });
  }
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  Device(Device&& o) noexcept = default;
  /// Closes the handle unless a Buffer or Timer of this Device still holds it.
  ~Device() = default;

  /// The C handle, for calls of the C API; valid while this Device (or a Buffer or Timer
  /// made from it) exists.
  gk_handle handle() const noexcept { return handle_.get(); }
  DeviceInfo info() const {
    DeviceInfo i{};
    check(gk_get_device_info(handle(), &i));
    return i;
  }
  /// "cpu", "cuda" or "hip".
  std::string backend() const { return info().backend; }

  Buffer alloc(std::size_t bytes) {
    void* p = nullptr;
    check(gk_malloc(handle(), bytes, &p));
    return Buffer(handle_, p, bytes);
  }
  void upload(void* dst, const void* host, std::size_t bytes) {
    check(gk_memcpy(handle(), dst, host, bytes, GK_HOST_TO_DEVICE));
  }
  /// Copies `bytes` (at most dst.size(), else InvalidArgument) to the start of `dst`.
  void upload(Buffer& dst, const void* host, std::size_t bytes) {
    check_fits("Device::upload", bytes, dst);
    upload(dst.data(), host, bytes);
  }
  void download(void* host, const void* src, std::size_t bytes) {
    check(gk_memcpy(handle(), host, src, bytes, GK_DEVICE_TO_HOST));
  }
  /// Copies `bytes` (at most src.size(), else InvalidArgument) from the start of `src`.
  void download(void* host, const Buffer& src, std::size_t bytes) {
    check_fits("Device::download", bytes, src);
    download(host, src.data(), bytes);
  }
  void copy(void* dst, const void* src, std::size_t bytes) {
    check(gk_memcpy(handle(), dst, src, bytes, GK_DEVICE_TO_DEVICE));
  }
  void memset(void* dst, int value, std::size_t bytes) { check(gk_memset(handle(), dst, value, bytes)); }
  /// Reads `bytes` at `src` on the device's stream (gk_memread), queued.
  void memread(const void* src, std::size_t bytes) { check(gk_memread(handle(), src, bytes, nullptr)); }
  /// The same, waiting for the device: the sum of the bytes read, modulo 2^64.
  uint64_t memread_sum(const void* src, std::size_t bytes) {
    uint64_t sum = 0;
    check(gk_memread(handle(), src, bytes, &sum));
    return sum;
  }
  void synchronize() { check(gk_synchronize(handle())); }
  /// Use the application's cudaStream_t / hipStream_t (nullptr: the device's own).
  void set_stream(void* stream) { check(gk_set_stream(handle(), stream)); }

  void gemm(const gk_gemm_ex_desc& d) { check(gk_gemm_ex(handle(), &d)); }
  void softmax(const gk_softmax_ex_desc& d) { check(gk_softmax_ex(handle(), &d)); }
  /// The plain descriptors (no batches, nothing fused).
  void gemm(const gk_gemm_desc& d) { check(gk_gemm(handle(), &d)); }
  void softmax(const gk_softmax_desc& d) { check(gk_softmax(handle(), &d)); }

  /// The rungs of an operation's ladder on this device, in ladder order.
  std::vector<VariantInfo> variants(Op op) const {
    int count = 0;
    check(gk_variant_count(handle(), op, &count));
    std::vector<VariantInfo> out(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) check(gk_get_variant_info(handle(), op, i, &out[static_cast<std::size_t>(i)]));
    return out;
  }
  /// The measured auto table of an operation on this device, in the order auto consults it.
  std::vector<AutoEntry> auto_table(Op op) const {
    int count = 0;
    check(gk_auto_entry_count(handle(), op, &count));
    std::vector<AutoEntry> out(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) check(gk_get_auto_entry(handle(), op, i, &out[static_cast<std::size_t>(i)]));
    return out;
  }
  /// Rung that ran the last call of `op`.
  std::string last_variant(Op op) const {
    char name[GK_NAME_LEN] = {};
    check(gk_last_variant(handle(), op, name, sizeof name));
    return name;
  }
  /// Rung that a gemm / softmax call would run (auto's choice), without running it.
  std::string select(const gk_gemm_desc& d) const {
    char name[GK_NAME_LEN] = {};
    check(gk_gemm_select(handle(), &d, name, sizeof name));
    return name;
  }
  std::string select(const gk_softmax_desc& d) const {
    char name[GK_NAME_LEN] = {};
    check(gk_softmax_select(handle(), &d, name, sizeof name));
    return name;
  }
  std::string select(const gk_gemm_ex_desc& d) const {
    char name[GK_NAME_LEN] = {};
    check(gk_gemm_ex_select(handle(), &d, name, sizeof name));
    return name;
  }
  std::string select(const gk_softmax_ex_desc& d) const {
    char name[GK_NAME_LEN] = {};
    check(gk_softmax_ex_select(handle(), &d, name, sizeof name));
    return name;
  }
  Timer timer() {
    gk_timer t = nullptr;
    check(gk_timer_create(handle(), &t));
    return Timer(handle_, t);
  }

 private:
  static void check_fits(const char* call, std::size_t bytes, const Buffer& buffer) {
    if (bytes > buffer.size())
      throw Error(Status::InvalidArgument, std::string("InvalidArgument: ") + call +
                                               ": bytes = " + std::to_string(bytes) +
                                               " is more than the Buffer's size() = " + std::to_string(buffer.size()));
  }

  detail::SharedHandle handle_;
};

}  // namespace gpukern

#endif  // GPUKERN_GPUKERN_HPP
