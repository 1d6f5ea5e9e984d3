// stderr logging gated by GPUKERN_LOG. A malformed GPUKERN_LOG does not stop a call
// from running; it is reported once, and logging stays at warn.
#include "core/log.hpp"

#include <cstdio>
#include <mutex>

namespace gpukern::core {
namespace {
std::mutex& log_mutex() {
  static std::mutex m;
  return m;
}
}  // namespace

bool log_enabled(LogLevel level) {
  try {
    return static_cast<int>(log_level()) >= static_cast<int>(level);
  } catch (const Error& e) {
    static std::once_flag once;
    std::call_once(once, [&] { log_line(LogLevel::Warn, e.what()); });
    return level == LogLevel::Warn;
  }
}

void log_line(LogLevel level, const std::string& message) {
  static const char* const kNames[] = {"warn", "info", "debug"};
  std::lock_guard<std::mutex> lock(log_mutex());
  std::fprintf(stderr, "[gpukern %s] %s\n", kNames[static_cast<int>(level)], message.c_str());
  std::fflush(stderr);
}

}  // namespace gpukern::core
