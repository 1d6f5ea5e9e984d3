// Measurement knobs of the CUDA rungs (GPUKERN_WGMMA_SCHEDULE, GPUKERN_DOUBLE_BUFFER_TILE,
// GPUKERN_PDL):
// environment variables that force a choice a rung's policy otherwise makes, for tests
// and measurement. They are not library options (gk_set_option does not take them), and
// the test environment unsets them (tests/CMakeLists.txt).
#pragma once

#include "core/types.hpp"

#include <cstdlib>
#include <initializer_list>
#include <string>

namespace gpukern::cuda {

/// The knob `variable`'s text ("" when unset); callers read it once per process.
inline std::string knob_value(const char* variable) {
  const char* v = std::getenv(variable);
  return v ? std::string(v) : std::string();
}

/// Which of `values` the knob's text `value` names: its index + 1, or 0 when empty. Any
/// other text throws InvalidArgument naming the variable and the values it takes.
inline int knob_choice(const char* variable, const std::string& value, std::initializer_list<const char*> values) {
  if (value.empty()) return 0;
  int index = 0;
  std::string names;
  for (const char* v : values) {
    ++index;
    if (value == v) return index;
    names += std::string(names.empty() ? "" : " or ") + v;
  }
  throw core::Error(core::Status::InvalidArgument, std::string(variable) + "='" + value + "': expected " + names);
}

}  // namespace gpukern::cuda
