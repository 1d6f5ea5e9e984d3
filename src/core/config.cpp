// GPUKERN_* options: the gk_set_option override, else the environment. Read at each
// use (cheap), so a process can change them between calls; malformed values are
// errors naming the variable and the accepted values.
#include "core/config.hpp"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <map>
#include <mutex>

namespace gpukern::core {
namespace {

const char* const kKnownOptions[] = {"GPUKERN_BACKEND",      "GPUKERN_GEMM_VARIANT",
                                     "GPUKERN_SOFTMAX_VARIANT", "GPUKERN_LOG",
                                     "GPUKERN_NUM_THREADS",  "GPUKERN_CPU_ISA",
                                     "GPUKERN_MODULE_PATH"};

std::mutex& overrides_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, std::string>& overrides() {
  static std::map<std::string, std::string> m;
  return m;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

Error bad_value(const char* name, const std::string& value, const char* accepted) {
  return Error(Status::InvalidArgument,
               std::string(name) + "='" + value + "' is not valid; expected " + accepted);
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
  errno = 0;
  char* end = nullptr;
  long v = std::strtol(raw.c_str(), &end, 10);
  if (errno != 0 || end == raw.c_str() || *end != '\0' || v < 1 || v > 4096)
    throw bad_value("GPUKERN_NUM_THREADS", raw, "a whole number from 1 to 4096");
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

std::string parse_backend(const std::string& raw) {
  return raw.empty() ? std::string("auto") : lower(raw);
}

/// Validates a value for `name` (throws on bad values).
void validate(const std::string& name, const std::string& value) {
  if (name == "GPUKERN_LOG") parse_log(value);
  else if (name == "GPUKERN_NUM_THREADS") parse_threads(value);
  else if (name == "GPUKERN_CPU_ISA") parse_isa(value);
  else if (name == "GPUKERN_GEMM_VARIANT" || name == "GPUKERN_SOFTMAX_VARIANT")
    parse_variant(name.c_str(), value);
}

}  // namespace

std::string option_value(const char* name) {
  {
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
  std::lock_guard<std::mutex> lock(overrides_mutex());
  if (value.empty()) overrides().erase(name);
  else overrides()[name] = value;
}

std::string backend_spec() { return parse_backend(option_value("GPUKERN_BACKEND")); }
std::string gemm_variant() {
  return parse_variant("GPUKERN_GEMM_VARIANT", option_value("GPUKERN_GEMM_VARIANT"));
}
std::string softmax_variant() {
  return parse_variant("GPUKERN_SOFTMAX_VARIANT", option_value("GPUKERN_SOFTMAX_VARIANT"));
}
LogLevel log_level() { return parse_log(option_value("GPUKERN_LOG")); }
int num_threads() { return parse_threads(option_value("GPUKERN_NUM_THREADS")); }
CpuIsa cpu_isa_cap() { return parse_isa(option_value("GPUKERN_CPU_ISA")); }
std::string module_path() { return option_value("GPUKERN_MODULE_PATH"); }

const char* cpu_isa_name(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::Scalar: return "scalar";
    case CpuIsa::Avx2: return "avx2";
    case CpuIsa::Avx512: return "avx512";
    case CpuIsa::Auto: return "auto";
  }
  return "unknown";
}

}  // namespace gpukern::core
