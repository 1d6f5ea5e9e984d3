// GPUKERN_* options: the gk_set_option override, else the environment. Read at each
// use (cheap), so a process can change them between calls; malformed values are
// errors naming the variable and the accepted values. GPUKERN_MODULE_PATH is the one
// exception: it is fixed once a backend module has been loaded with it.
#include "core/config.hpp"

#include <cctype>
#include <cstdlib>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>

namespace gpukern::core {
namespace {

const char* const kKnownOptions[] = {"GPUKERN_BACKEND",    "GPUKERN_GEMM_VARIANT", "GPUKERN_SOFTMAX_VARIANT",
                                     "GPUKERN_LOG",        "GPUKERN_NUM_THREADS",  "GPUKERN_CPU_ISA",
                                     "GPUKERN_MODULE_PATH"};

std::mutex& overrides_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, std::string>& overrides() {
  static std::map<std::string, std::string> m;
  return m;
}
// Whether any override is set (written under overrides_mutex): calls read several options
// each, and with none set (the common case) a read is one getenv, without the lock.
std::atomic<bool>& any_override() {
  static std::atomic<bool> any{false};
  return any;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

Error bad_value(const char* name, const std::string& value, const char* accepted) {
  return Error(Status::InvalidArgument, std::string(name) + "='" + value + "' is not valid; expected " + accepted);
}

LogLevel parse_log(const std::string& raw) {
  std::string v = lower(raw);
  if (v.empty() || v == "warn" || v == "warning") return LogLevel::Warn;
  if (v == "info") return LogLevel::Info;
  if (v == "debug") return LogLevel::Debug;
  throw bad_value("GPUKERN_LOG", raw, "warn, info or debug");
}

int parse_threads(const std::string& raw) {
  if (raw.empty()) return 0;
  const int limit = max_num_threads();
  long long v = 0;
  if (!parse_whole_number(raw, limit, &v) || v < 1)
    throw bad_value("GPUKERN_NUM_THREADS", raw,
                    ("a whole number from 1 to " + std::to_string(limit) + " (" + std::to_string(kThreadsPerCpu) +
                     " threads per online CPU)")
                        .c_str());
  return static_cast<int>(v);
}

CpuIsa parse_isa(const std::string& raw) {
  std::string v = lower(raw);
  if (v.empty() || v == "auto") return CpuIsa::Auto;
  if (v == "avx512") return CpuIsa::Avx512;
  if (v == "avx2") return CpuIsa::Avx2;
  if (v == "scalar") return CpuIsa::Scalar;
  throw bad_value("GPUKERN_CPU_ISA", raw, "auto, avx512, avx2 or scalar");
}

std::string parse_variant(const char* name, const std::string& raw) {
  if (raw.empty()) return "auto";
  for (char c : raw)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
      throw bad_value(name, raw, "auto or a rung name (letters, digits, '_')");
  return raw;
}

std::string parse_backend(const std::string& raw) { return raw.empty() ? std::string("auto") : lower(raw); }

/// Guards GPUKERN_MODULE_PATH: held while modules are looked for with it and while
/// gk_set_option changes it, so a change never races a load. Recursive, so a module
/// that reads the options while it is probed does not deadlock.
struct ModulePathState {
  std::recursive_mutex mutex;
  std::string fixed_by;     // module whose loading fixed the path; "" = not fixed
  std::string fixed_value;  // the path it was loaded with
};
ModulePathState& module_path_state() {
  static ModulePathState state;
  return state;
}

/// Validates a value for `name` (throws on bad values).
void validate(const std::string& name, const std::string& value) {
  if (name == "GPUKERN_LOG")
    parse_log(value);
  else if (name == "GPUKERN_NUM_THREADS")
    parse_threads(value);
  else if (name == "GPUKERN_CPU_ISA")
    parse_isa(value);
  else if (name == "GPUKERN_GEMM_VARIANT" || name == "GPUKERN_SOFTMAX_VARIANT")
    parse_variant(name.c_str(), value);
}

}  // namespace

std::string option_value(const char* name) {
  if (any_override().load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(overrides_mutex());
    auto it = overrides().find(name);
    if (it != overrides().end()) return it->second;
  }
  const char* env = std::getenv(name);
  return env ? std::string(env) : std::string();
}

void set_option(const std::string& name, const std::string& value) {
  bool known = false;
  for (const char* k : kKnownOptions) known = known || name == k;
  if (!known) {
    std::string list;
    for (const char* k : kKnownOptions) list += std::string(list.empty() ? "" : ", ") + k;
    throw Error(Status::InvalidArgument, "unknown option '" + name + "'; known options: " + list);
  }
  if (!value.empty()) validate(name, value);
  auto store = [&] {
    std::lock_guard<std::mutex> lock(overrides_mutex());
    if (value.empty())
      overrides().erase(name);
    else
      overrides()[name] = value;
    any_override().store(!overrides().empty(), std::memory_order_release);
  };
  if (name != "GPUKERN_MODULE_PATH") return store();
  ModulePathState& state = module_path_state();
  std::lock_guard<std::recursive_mutex> lock(state.mutex);
  if (!state.fixed_by.empty()) {
    const char* env = std::getenv("GPUKERN_MODULE_PATH");
    const std::string effective = value.empty() ? std::string(env ? env : "") : value;
    if (effective != state.fixed_value)
      throw Error(Status::InvalidArgument,
                  "GPUKERN_MODULE_PATH='" + effective + "' cannot take effect: " + state.fixed_by +
                      " is already loaded (with GPUKERN_MODULE_PATH='" + state.fixed_value +
                      "') and stays loaded; set it before the first backend is opened or listed");
  }
  store();
}

std::string backend_spec() { return parse_backend(option_value("GPUKERN_BACKEND")); }
std::string gemm_variant() { return parse_variant("GPUKERN_GEMM_VARIANT", option_value("GPUKERN_GEMM_VARIANT")); }
std::string softmax_variant() {
  return parse_variant("GPUKERN_SOFTMAX_VARIANT", option_value("GPUKERN_SOFTMAX_VARIANT"));
}
LogLevel log_level() { return parse_log(option_value("GPUKERN_LOG")); }
int num_threads() { return parse_threads(option_value("GPUKERN_NUM_THREADS")); }
CpuIsa cpu_isa_cap() { return parse_isa(option_value("GPUKERN_CPU_ISA")); }
std::string module_path() {
  ModulePathState& state = module_path_state();
  std::lock_guard<std::recursive_mutex> lock(state.mutex);
  return state.fixed_by.empty() ? option_value("GPUKERN_MODULE_PATH") : state.fixed_value;
}

void with_module_path(const std::function<std::string(const ModulePath&)>& load) {
  ModulePathState& state = module_path_state();
  std::lock_guard<std::recursive_mutex> lock(state.mutex);
  ModulePath path;
  path.fixed_by = state.fixed_by;
  path.value = state.fixed_by.empty() ? option_value("GPUKERN_MODULE_PATH") : state.fixed_value;
  const std::string loaded = load(path);
  if (!loaded.empty() && state.fixed_by.empty()) {
    state.fixed_by = loaded;
    state.fixed_value = path.value;
  }
}

int max_num_threads() {
  // Read once: glibc's sysconf opens and parses /sys/devices/system/cpu/online each time,
  // ~20 us in a VM, and GPUKERN_NUM_THREADS is checked against this on every call.
  static const int limit = [] {
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    const long cpus = online > 0 ? std::min(online, 1L << 16) : 1L;
    return static_cast<int>(cpus) * kThreadsPerCpu;
  }();
  return limit;
}

bool parse_whole_number(const std::string& text, long long max, long long* value) {
  if (text.empty() || text.size() > 18) return false;  // 18 digits cannot overflow
  long long v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  if (v > max) return false;
  *value = v;
  return true;
}

const char* cpu_isa_name(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::Scalar:
      return "scalar";
    case CpuIsa::Avx2:
      return "avx2";
    case CpuIsa::Avx512:
      return "avx512";
    case CpuIsa::Auto:
      return "auto";
  }
  return "unknown";
}

}  // namespace gpukern::core
