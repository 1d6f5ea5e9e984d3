// The backend boundary: what every backend (the built-in CPU one and the dlopen'ed
// GPU modules) implements, and the entry points a module exports.
// Backends may throw core::Error; the core catches it at the C API.
#pragma once

#include "core/types.hpp"

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace gpukern::core {

enum class OpKind : int { Gemm = GK_OP_GEMM, Softmax = GK_OP_SOFTMAX };

/// Who made the device: a rung's architecture requirement is read per vendor.
enum class Vendor : int { Host = 0, Nvidia = 1, Amd = 2 };

/// A device's architecture, per vendor (no overloaded integer).
struct DeviceArch {
  Vendor vendor = Vendor::Host;
  int cc = 0;        ///< NVIDIA: compute capability, 10*major+minor (90 for sm_90); else 0
  int gfx = 0;       ///< AMD: the gfx target number read as hex (gfx90a -> 0x90a); else 0
  std::string name;  ///< "sm_90", "gfx90a", "x86-64"
  /// The device's peak memory bandwidth in GB/s (0: not known). Two parts of one
  /// architecture can differ here (H100 SXM 3.35 TB/s, H200 4.8 TB/s), and with it where
  /// a memory-bound vendor kernel overtakes an own rung: measured table entries can be
  /// bounded by it (ArchSupport).
  int mem_gbps = 0;
};

enum class RungKind : int;

/// One rung as listed to users (gk_variant_info).
struct RungInfo {
  std::string name;
  std::string description;
  uint32_t dtypes = 0;     // kMask* bits
  std::string arch;        // where it runs: "sm_90a", "" if any
  RungKind kind{};         // ladder, reference or experimental
  Verdict unavailable;     // why this device cannot run it; accepted = runs here
  int auto_position = -1;  // place in auto's order; -1 = never picked by auto
};

/// An entry of a ladder's measured auto table, as listed to users (gk_auto_entry).
struct AutoEntryInfo {
  std::string label;  // "bf16/f16 decode"
  std::string shape;  // the class: "bf16,f16 T 1..16"
  std::string rung;   // the rung it sends those calls to
  std::string arch;   // the architectures it applies on ("" = every one)
};

/// Which measured auto-table entry a call falls in: the entry's index and its rung's
/// index; -1 for both when none (auto walks its ranked order).
struct AutoPick {
  int rung = -1;
  int entry = -1;
};

/// Device description (gk_device_info without the fixed-size strings).
struct DeviceInfo {
  std::string backend, name, arch, driver_version, runtime_version;
  int index = 0;
  int arch_number = 0;
  int compute_units = 0;
  int clock_mhz = 0;
  uint64_t memory_bytes = 0;
  double peak_f32_gflops = 0, peak_tensor_gflops = 0, peak_bandwidth_gbps = 0;
  std::vector<std::pair<std::string, std::string>> extra;  // cpu_isa, openblas_core, ...
};

/// Times work queued on a backend's stream.
class Timer {
 public:
  virtual ~Timer() = default;
  virtual void start() = 0;
  virtual void stop() = 0;
  virtual double elapsed_ms() = 0;  // waits for stop
};

enum class CopyKind : int { HostToDevice = 0, DeviceToHost = 1, DeviceToDevice = 2 };

/// One opened device of a backend. Arguments arrive validated by the core
/// (sizes, leading dimensions, pointers, dtypes); rungs check only what they
/// themselves need (architecture, alignment) in supports().
/// Implementations must be safe to call from several threads at once.
class Backend {
 public:
  virtual ~Backend() = default;

  virtual DeviceInfo device_info() const = 0;

  virtual void* alloc(std::size_t bytes) = 0;  // throws Error(OutOfMemory)
  virtual void free(void* ptr) noexcept = 0;
  virtual void copy(void* dst, const void* src, std::size_t bytes, CopyKind kind) = 0;
  virtual void memset(void* dst, int value, std::size_t bytes) = 0;
  /// Reads every byte of [src, src + bytes), bytes > 0, at the device's streaming rate,
  /// writing nothing the caller sees (gk_memread). sum: null (queued), or the host word
  /// that receives the sum of the bytes modulo 2^64 (waits for the device).
  virtual void memread(const void* src, std::size_t bytes, uint64_t* sum) = 0;
  virtual void synchronize() = 0;
  /// The application's stream (cudaStream_t, hipStream_t); nullptr = the backend's own.
  virtual void set_stream(void* stream) = 0;
  virtual std::unique_ptr<Timer> create_timer() = 0;

  /// The ladder in ladder order (naive first, reference last); rungs are named by
  /// their index in this list below. The list never changes for an opened device.
  virtual std::vector<RungInfo> variants(OpKind op) const = 0;

  /// Whether rung `rung` accepts the call (dtype, architecture, the rung's own limits).
  /// Authoritative: a rung that accepts a call runs it.
  virtual Verdict supports(const GemmArgs& args, int rung) const = 0;
  virtual Verdict supports(const SoftmaxArgs& args, int rung) const = 0;

  /// Whether `auto` tries rung `rung` for this call (its policy); auto walks the rungs
  /// in RungInfo::auto_position order and takes the first candidate that accepts.
  virtual bool auto_candidate(const GemmArgs& args, int rung) const = 0;
  virtual bool auto_candidate(const SoftmaxArgs& args, int rung) const = 0;
  /// The measured auto table: auto first tries the rung of the entry a call falls in,
  /// then walks the ranked order. The table never changes for an opened device.
  virtual std::vector<AutoEntryInfo> auto_table(OpKind op) const = 0;
  virtual AutoPick auto_pick(const GemmArgs& args) const = 0;
  virtual AutoPick auto_pick(const SoftmaxArgs& args) const = 0;

  /// Runs an accepted, non-empty call, asynchronously on GPUs.
  virtual void gemm(const GemmArgs& args, int rung) = 0;
  virtual void softmax(const SoftmaxArgs& args, int rung) = 0;
};

/// Bumped whenever Backend, ModuleApi or what crosses them (GemmArgs, SoftmaxArgs, Verdict...)
/// changes; a module built against another version is refused with a reason.
constexpr int kModuleAbiVersion = 5;

/// What a backend module exports (through gpukern_module_api below).
struct ModuleApi {
  int abi_version;   // kModuleAbiVersion of the module's build
  const char* name;  // "cuda", "hip"
  const char* note;  // shown by gpukern-info, e.g. "compile-verified only"
  /// Number of usable devices; 0 with *reason set when none (no driver, no device, old driver).
  int (*device_count)(std::string* reason);
  /// Opens device `index` (0 <= index < device_count). May throw Error.
  Backend* (*create)(int index);
};

}  // namespace gpukern::core

/// Symbol each module exports with C linkage (looked up with dlsym).
#define GPUKERN_MODULE_ENTRY "gpukern_module_api"
extern "C" {
typedef const gpukern::core::ModuleApi* (*gpukern_module_api_fn)(void);
}
