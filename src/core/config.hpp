// GPUKERN_* configuration: read from the environment (or set through gk_set_option,
// which takes precedence), validated with errors that name the variable.
#pragma once

#include "core/types.hpp"

#include <functional>
#include <string>

namespace gpukern::core {

enum class LogLevel : int { Warn = 0, Info = 1, Debug = 2 };
enum class CpuIsa : int { Scalar = 0, Avx2 = 1, Avx512 = 2, Auto = 3 };

/// Raw value of an option: the gk_set_option override, else the environment, else "".
GK_CORE_API std::string option_value(const char* name);
/// Overrides an option for this process ("" removes the override). Throws on unknown names.
GK_CORE_API void set_option(const std::string& name, const std::string& value);

// Typed accessors. Each throws Error(InvalidArgument) naming the variable and the
// accepted values when the value is malformed.
GK_CORE_API std::string backend_spec();     // GPUKERN_BACKEND, default "auto"
GK_CORE_API std::string gemm_variant();     // GPUKERN_GEMM_VARIANT, default "auto"
GK_CORE_API std::string softmax_variant();  // GPUKERN_SOFTMAX_VARIANT, default "auto"
GK_CORE_API LogLevel log_level();           // GPUKERN_LOG, default warn
GK_CORE_API int num_threads();              // GPUKERN_NUM_THREADS, default 0 = all cores
GK_CORE_API CpuIsa cpu_isa_cap();           // GPUKERN_CPU_ISA, default auto
GK_CORE_API std::string module_path();      // GPUKERN_MODULE_PATH in effect, default ""

GK_CORE_API const char* cpu_isa_name(CpuIsa isa);  // "scalar", "avx2", "avx512", "auto"

/// The largest GPUKERN_NUM_THREADS accepted: kThreadsPerCpu x the CPUs online. More
/// threads than CPUs never speed the CPU backend up, and the OpenMP runtime ends the
/// process when it cannot start the threads it is asked for (address space or process
/// limits), so the value is bounded well below what such limits allow.
constexpr int kThreadsPerCpu = 4;
GK_CORE_API int max_num_threads();

/// Parses a whole number written with decimal digits only (no sign, no spaces, as
/// every integer option is) that is at most `max`; false when it is anything else.
GK_CORE_API bool parse_whole_number(const std::string& text, long long max, long long* value);

/// GPUKERN_MODULE_PATH as the module loader sees it. `value` is the path in effect;
/// `fixed_by` names the module whose loading fixed it ("" while it may still change).
struct ModulePath {
  std::string value;
  std::string fixed_by;
};
/// Runs `load` with the module path in effect, while no gk_set_option of it can run.
/// `load` returns the module it loaded (its file), or "" when it loaded none. A loaded
/// module stays loaded, so from then on the path is fixed: a later gk_set_option that
/// would change it is refused naming that module, and the environment is not re-read.
GK_CORE_API void with_module_path(const std::function<std::string(const ModulePath&)>& load);

}  // namespace gpukern::core
