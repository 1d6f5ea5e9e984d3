// GPUKERN_* configuration: read from the environment (or set through gk_set_option,
// which takes precedence), validated with errors that name the variable.
#pragma once

#include "core/types.hpp"

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
GK_CORE_API std::string backend_spec();               // GPUKERN_BACKEND, default "auto"
GK_CORE_API std::string gemm_variant();               // GPUKERN_GEMM_VARIANT, default "auto"
GK_CORE_API std::string softmax_variant();            // GPUKERN_SOFTMAX_VARIANT, default "auto"
GK_CORE_API LogLevel log_level();                     // GPUKERN_LOG, default warn
GK_CORE_API int num_threads();                        // GPUKERN_NUM_THREADS, default 0 = all cores
GK_CORE_API CpuIsa cpu_isa_cap();                     // GPUKERN_CPU_ISA, default auto
GK_CORE_API std::string module_path();                // GPUKERN_MODULE_PATH, default ""

GK_CORE_API const char* cpu_isa_name(CpuIsa isa);     // "scalar", "avx2", "avx512", "auto"

}  // namespace gpukern::core
