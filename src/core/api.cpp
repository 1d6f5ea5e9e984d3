// The C API: every public function catches internal errors and turns them into a
// status plus a per-thread message (and, for a rung's decline, its reason). Handles,
// timers and blocks are checked against the registry of live objects (api_objects.hpp)
// before use. Rung selection and the per-call log line are core::Dispatch (dispatch.cpp).
#include <gpukern/gpukern.h>

#include "core/api_objects.hpp"
#include "core/backend.hpp"
#include "core/config.hpp"
#include "core/dispatch.hpp"
#include "core/log.hpp"
#include "core/registry.hpp"
#include "core/rung_table.hpp"
#include "core/validate.hpp"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <new>
#include <sstream>
#include <string>

using gpukern::core::Error;
using gpukern::core::Status;
namespace core = gpukern::core;

namespace {

thread_local std::string t_last_error;
thread_local core::Decline t_last_decline = core::Decline::None;

template <class F>
gk_status guarded(F&& f) noexcept {
  t_last_decline = core::Decline::None;
  try {
    f();
    return GK_SUCCESS;
  } catch (const Error& e) {
    t_last_error = e.what();
    t_last_decline = e.decline();
    return static_cast<gk_status>(e.status());
  } catch (const std::bad_alloc&) {
    t_last_error = "out of host memory";
    return GK_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    t_last_error = std::string("internal error: ") + e.what();
    return GK_INTERNAL_ERROR;
  } catch (...) {
    t_last_error = "internal error: unknown exception";
    return GK_INTERNAL_ERROR;
  }
}

Error invalid(const std::string& m) { return Error(Status::InvalidArgument, m); }

template <class T>
T* need(T* p, const char* name) {
  if (!p) throw invalid(std::string(name) + " is null");
  return p;
}

core::LiveObjects& objects() { return core::LiveObjects::instance(); }

/// The open handle `handle` stands for, or InvalidArgument naming it (null, closed, or
/// not a value gk_open returned).
core::LiveHandle live(gk_handle handle) { return objects().handle(handle); }

void copy_text(char* dst, std::size_t cap, const std::string& src) {
  if (cap == 0) return;
  std::size_t n = std::min(cap - 1, src.size());
  std::memcpy(dst, src.data(), n);
  dst[n] = '\0';
}
template <std::size_t N>
void copy_text(char (&dst)[N], const std::string& src) {
  copy_text(dst, N, src);
}

core::OpKind op_kind(const gk_op& op) {
  const int32_t raw = core::raw_enum(op);  // range-checked before it is used as a gk_op
  if (raw != GK_OP_GEMM && raw != GK_OP_SOFTMAX)
    throw invalid("op = " + std::to_string(raw) + " is not GK_OP_GEMM or GK_OP_SOFTMAX");
  return static_cast<core::OpKind>(raw);
}

void fill_device_info(const core::DeviceInfo& d, gk_device_info* out) {
  *out = gk_device_info{};
  copy_text(out->backend, d.backend);
  out->index = d.index;
  copy_text(out->name, d.name);
  copy_text(out->arch, d.arch);
  out->arch_number = d.arch_number;
  out->compute_units = d.compute_units;
  out->clock_mhz = d.clock_mhz;
  out->memory_bytes = d.memory_bytes;
  copy_text(out->driver_version, d.driver_version);
  copy_text(out->runtime_version, d.runtime_version);
  out->peak_f32_gflops = d.peak_f32_gflops;
  out->peak_tensor_gflops = d.peak_tensor_gflops;
  out->peak_bandwidth_gbps = d.peak_bandwidth_gbps;
  std::string extra;
  for (const auto& kv : d.extra) extra += kv.first + "=" + kv.second + ";";
  copy_text(out->extra, extra);
}

// One body for the plain and the extended calls: validate (the plain descriptor is the
// extended one with one item and nothing fused), select, record, run.
template <class Desc>
void run_gemm(gk_handle handle, const Desc* desc) {
  const core::LiveHandle h = live(handle);
  core::GemmArgs args = core::validate_gemm(desc);
  const int rung = h->dispatch->select(args, desc->variant, core::gemm_variant());
  {
    std::lock_guard<std::mutex> lock(h->mutex);
    h->last_gemm = h->dispatch->rungs(core::OpKind::Gemm)[static_cast<std::size_t>(rung)].name;
  }
  if (args.m == 0 || args.n == 0 || args.batch == 0) return;  // empty calls never reach a rung
  h->dispatch->run(args, rung);
}

template <class Desc>
void run_softmax(gk_handle handle, const Desc* desc) {
  const core::LiveHandle h = live(handle);
  core::SoftmaxArgs args = core::validate_softmax(desc);
  const int rung = h->dispatch->select(args, desc->variant, core::softmax_variant());
  {
    std::lock_guard<std::mutex> lock(h->mutex);
    h->last_softmax = h->dispatch->rungs(core::OpKind::Softmax)[static_cast<std::size_t>(rung)].name;
  }
  if (args.rows == 0 || args.cols == 0 || args.batch == 0) return;  // empty calls never reach a rung
  h->dispatch->run(args, rung);
}

template <class Desc>
void select_gemm(gk_handle handle, const Desc* desc, char* name, size_t len) {
  const core::LiveHandle h = live(handle);
  need(name, "name");
  core::GemmArgs args = core::validate_gemm(desc);
  const int rung = h->dispatch->select(args, desc->variant, core::gemm_variant());
  copy_text(name, len, h->dispatch->rungs(core::OpKind::Gemm)[static_cast<std::size_t>(rung)].name);
}

template <class Desc>
void select_softmax(gk_handle handle, const Desc* desc, char* name, size_t len) {
  const core::LiveHandle h = live(handle);
  need(name, "name");
  core::SoftmaxArgs args = core::validate_softmax(desc);
  const int rung = h->dispatch->select(args, desc->variant, core::softmax_variant());
  copy_text(name, len, h->dispatch->rungs(core::OpKind::Softmax)[static_cast<std::size_t>(rung)].name);
}

}  // namespace

extern "C" {

const char* gk_status_name(gk_status s) {
  switch (s) {
    case GK_SUCCESS:
      return "Success";
    case GK_INVALID_ARGUMENT:
      return "InvalidArgument";
    case GK_UNSUPPORTED:
      return "Unsupported";
    case GK_UNAVAILABLE:
      return "Unavailable";
    case GK_OUT_OF_MEMORY:
      return "OutOfMemory";
    case GK_DEVICE_ERROR:
      return "DeviceError";
    case GK_INTERNAL_ERROR:
      return "InternalError";
  }
  return "UnknownStatus";
}

const char* gk_last_error(void) { return t_last_error.c_str(); }

gk_decline gk_last_decline(void) { return static_cast<gk_decline>(t_last_decline); }

const char* gk_decline_name(gk_decline d) {
  if (d < GK_DECLINE_NONE || d > GK_DECLINE_FEATURE) return "Unknown";
  return core::decline_name(static_cast<core::Decline>(d));
}

const char* gk_version(void) { return GPUKERN_VERSION_TEXT; }

gk_status gk_set_option(const char* name, const char* value) {
  return guarded([&] { core::set_option(need(name, "name"), value ? value : ""); });
}

gk_status gk_backend_count(int* count) {
  return guarded([&] { *need(count, "count") = static_cast<int>(core::backends().size()); });
}

gk_status gk_get_backend_info(int index, gk_backend_info* info) {
  return guarded([&] {
    need(info, "info");
    const auto& all = core::backends();
    if (index < 0 || index >= static_cast<int>(all.size()))
      throw invalid("backend index " + std::to_string(index) + " out of range (0.." + std::to_string(all.size() - 1) +
                    ")");
    const auto& e = all[static_cast<std::size_t>(index)];
    *info = gk_backend_info{};
    copy_text(info->name, e.name);
    info->available = e.available() ? 1 : 0;
    info->device_count = e.device_count;
    copy_text(info->reason, e.reason);
    copy_text(info->note, e.note);
  });
}

gk_status gk_open(const char* spec, gk_handle* handle) {
  return guarded([&] {
    need(handle, "handle");
    *handle = nullptr;
    const bool from_env = !(spec && *spec);
    std::string s = from_env ? core::backend_spec() : std::string(spec);
    auto h = std::make_unique<gk_handle_s>();
    try {
      h->opened = core::open_backend(s);
    } catch (const Error& e) {
      if (!from_env) throw;
      throw Error(e.status(), "GPUKERN_BACKEND=" + s + ": " + e.what());
    }
    if (core::log_enabled(core::LogLevel::Info))
      core::log_line(core::LogLevel::Info, "opened " + h->opened.name + ":" + std::to_string(h->opened.index) + " (" +
                                               h->opened.backend->device_info().name + ")");
    h->dispatch =
        std::make_unique<core::Dispatch>(*h->opened.backend, h->opened.name + ":" + std::to_string(h->opened.index));
    *handle = objects().add_handle(std::move(h));
  });
}

gk_status gk_close(gk_handle handle) {
  return guarded([&] {
    core::ClosedHandle closed = objects().remove_handle(handle);
    closed.timers.clear();  // their events belong to the backend: destroyed before it
    for (void* block : closed.blocks) closed.handle->opened.backend->free(block);
    // The backend itself goes when the last call still running on it returns.
  });
}

gk_status gk_get_device_info(gk_handle handle, gk_device_info* info) {
  return guarded([&] {
    const core::LiveHandle h = live(handle);
    fill_device_info(h->opened.backend->device_info(), need(info, "info"));
  });
}

gk_status gk_malloc(gk_handle handle, size_t bytes, void** ptr) {
  return guarded([&] {
    const core::LiveHandle h = live(handle);
    need(ptr, "ptr");
    *ptr = nullptr;
    if (bytes == 0) return;
    // No object can be larger than PTRDIFF_MAX bytes (differences of pointers into it
    // would overflow) and no device has that much memory. Refusing such sizes here also
    // keeps a backend's rounding up from wrapping to a small block.
    if (bytes > static_cast<size_t>(PTRDIFF_MAX))
      throw Error(Status::OutOfMemory,
                  "bytes = " + std::to_string(bytes) +
                      " is more than any allocation can hold (PTRDIFF_MAX = " + std::to_string(PTRDIFF_MAX) + ")");
    void* block = h->opened.backend->alloc(bytes);
    try {
      objects().add_block(handle, block, bytes);
    } catch (...) {  // the handle was closed meanwhile
      h->opened.backend->free(block);
      throw;
    }
    *ptr = block;
  });
}

gk_status gk_free(gk_handle handle, void* ptr) {
  return guarded([&] {
    const core::LiveHandle h = live(handle);
    if (!ptr) return;
    objects().remove_block(handle, ptr);  // throws for anything but this handle's live block
    h->opened.backend->free(ptr);
  });
}

gk_status gk_memcpy(gk_handle handle, void* dst, const void* src, size_t bytes, gk_copy_kind kind) {
  return guarded([&] {
    const core::LiveHandle h = live(handle);
    const int32_t raw_kind = core::raw_enum(kind);
    if (raw_kind != GK_HOST_TO_DEVICE && raw_kind != GK_DEVICE_TO_HOST && raw_kind != GK_DEVICE_TO_DEVICE)
      throw invalid("kind = " + std::to_string(raw_kind) + " is not a gk_copy_kind");
    if (bytes == 0) return;
    need(dst, "dst");
    need(src, "src");
    h->opened.backend->copy(dst, src, bytes, static_cast<core::CopyKind>(raw_kind));
  });
}

gk_status gk_memset(gk_handle handle, void* dst, int value, size_t bytes) {
  return guarded([&] {
    const core::LiveHandle h = live(handle);
    if (bytes == 0) return;
    h->opened.backend->memset(need(dst, "dst"), value, bytes);
  });
}

gk_status gk_memread(gk_handle handle, const void* src, size_t bytes, uint64_t* sum) {
  return guarded([&] {
    const core::LiveHandle h = live(handle);
    if (sum) *sum = 0;
    if (bytes == 0) return;
    h->opened.backend->memread(need(src, "src"), bytes, sum);
  });
}

gk_status gk_synchronize(gk_handle handle) {
  return guarded([&] { live(handle)->opened.backend->synchronize(); });
}

gk_status gk_set_stream(gk_handle handle, void* stream) {
  return guarded([&] { live(handle)->opened.backend->set_stream(stream); });
}

gk_status gk_gemm(gk_handle handle, const gk_gemm_desc* desc) {
  return guarded([&] { run_gemm(handle, desc); });
}
gk_status gk_gemm_ex(gk_handle handle, const gk_gemm_ex_desc* desc) {
  return guarded([&] { run_gemm(handle, desc); });
}
gk_status gk_softmax(gk_handle handle, const gk_softmax_desc* desc) {
  return guarded([&] { run_softmax(handle, desc); });
}
gk_status gk_softmax_ex(gk_handle handle, const gk_softmax_ex_desc* desc) {
  return guarded([&] { run_softmax(handle, desc); });
}
gk_status gk_gemm_select(gk_handle handle, const gk_gemm_desc* desc, char* name, size_t len) {
  return guarded([&] { select_gemm(handle, desc, name, len); });
}
gk_status gk_gemm_ex_select(gk_handle handle, const gk_gemm_ex_desc* desc, char* name, size_t len) {
  return guarded([&] { select_gemm(handle, desc, name, len); });
}
gk_status gk_softmax_select(gk_handle handle, const gk_softmax_desc* desc, char* name, size_t len) {
  return guarded([&] { select_softmax(handle, desc, name, len); });
}
gk_status gk_softmax_ex_select(gk_handle handle, const gk_softmax_ex_desc* desc, char* name, size_t len) {
  return guarded([&] { select_softmax(handle, desc, name, len); });
}

gk_status gk_variant_count(gk_handle handle, gk_op op, int* count) {
  return guarded([&] {
    const core::LiveHandle h = live(handle);
    *need(count, "count") = static_cast<int>(h->dispatch->rungs(op_kind(op)).size());
  });
}

gk_status gk_get_variant_info(gk_handle handle, gk_op op, int index, gk_variant_info* info) {
  return guarded([&] {
    const core::LiveHandle h = live(handle);
    need(info, "info");
    const auto& all = h->dispatch->rungs(op_kind(op));
    if (index < 0 || index >= static_cast<int>(all.size()))
      throw invalid("variant index " + std::to_string(index) + " out of range (" + std::to_string(all.size()) +
                    " variants)");
    const auto& r = all[static_cast<std::size_t>(index)];
    *info = gk_variant_info{};
    copy_text(info->name, r.name);
    copy_text(info->description, r.description);
    copy_text(info->dtypes, core::mask_names(r.dtypes));
    copy_text(info->min_arch, r.arch);
    info->runs_here = r.unavailable.accepted() ? 1 : 0;
    copy_text(info->reason, r.unavailable.detail);
    info->decline = static_cast<gk_decline>(r.unavailable.reason);
    info->is_reference = r.kind == core::RungKind::Reference ? 1 : 0;
    info->experimental = r.kind == core::RungKind::Experimental ? 1 : 0;
    info->auto_position = r.auto_position;
  });
}

gk_status gk_auto_entry_count(gk_handle handle, gk_op op, int* count) {
  return guarded([&] {
    const core::LiveHandle h = live(handle);
    *need(count, "count") = static_cast<int>(h->dispatch->auto_table(op_kind(op)).size());
  });
}

gk_status gk_get_auto_entry(gk_handle handle, gk_op op, int index, gk_auto_entry* entry) {
  return guarded([&] {
    const core::LiveHandle h = live(handle);
    need(entry, "entry");
    const auto& all = h->dispatch->auto_table(op_kind(op));
    if (index < 0 || index >= static_cast<int>(all.size()))
      throw invalid("auto table index " + std::to_string(index) + " out of range (" + std::to_string(all.size()) +
                    " entries)");
    const auto& e = all[static_cast<std::size_t>(index)];
    *entry = gk_auto_entry{};
    copy_text(entry->label, e.label);
    copy_text(entry->shape, e.shape);
    copy_text(entry->variant, e.rung);
    copy_text(entry->arch, e.arch);
  });
}

gk_status gk_last_variant(gk_handle handle, gk_op op, char* name, size_t len) {
  return guarded([&] {
    const core::LiveHandle h = live(handle);
    need(name, "name");
    core::OpKind k = op_kind(op);
    std::lock_guard<std::mutex> lock(h->mutex);
    copy_text(name, len, k == core::OpKind::Gemm ? h->last_gemm : h->last_softmax);
  });
}

gk_status gk_timer_create(gk_handle handle, gk_timer* timer) {
  return guarded([&] {
    const core::LiveHandle h = live(handle);
    need(timer, "timer");
    *timer = nullptr;
    auto t = std::make_shared<gk_timer_s>();
    t->handle = h.shared();
    t->timer = h->opened.backend->create_timer();
    *timer = objects().add_timer(handle, std::move(t));
  });
}

gk_status gk_timer_start(gk_timer timer) {
  return guarded([&] {
    const auto t = objects().timer(timer);
    std::lock_guard<std::mutex> lock(t->mutex);
    t->timer->start();
    t->started = true;
    t->stopped = false;
  });
}

gk_status gk_timer_stop(gk_timer timer) {
  return guarded([&] {
    const auto t = objects().timer(timer);
    std::lock_guard<std::mutex> lock(t->mutex);
    if (!t->started) throw invalid("timer: gk_timer_stop before any gk_timer_start");
    t->timer->stop();
    t->stopped = true;
  });
}

// Only a start followed by a stop makes a time; the backends' clocks and events hold
// nothing meaningful otherwise.
gk_status gk_timer_elapsed_ms(gk_timer timer, double* ms) {
  return guarded([&] {
    const auto t = objects().timer(timer);
    need(ms, "ms");
    std::lock_guard<std::mutex> lock(t->mutex);
    if (!t->started)
      throw invalid(
          "timer was never started: gk_timer_elapsed_ms needs gk_timer_start, "
          "then gk_timer_stop");
    if (!t->stopped)
      throw invalid(
          "timer was started but not stopped: call gk_timer_stop before "
          "gk_timer_elapsed_ms");
    *ms = t->timer->elapsed_ms();
  });
}

gk_status gk_timer_destroy(gk_timer timer) {
  return guarded([&] { objects().remove_timer(timer); });
}

}  // extern "C"
