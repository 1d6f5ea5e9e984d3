// Logging to stderr, gated by GPUKERN_LOG: warn (default), info (one line per call), debug.
#pragma once

#include "core/config.hpp"
#include "core/types.hpp"

#include <string>

namespace gpukern::core {

GK_CORE_API bool log_enabled(LogLevel level);
/// Writes "[gpukern level] message\n" atomically with respect to other log lines.
GK_CORE_API void log_line(LogLevel level, const std::string& message);

}  // namespace gpukern::core
