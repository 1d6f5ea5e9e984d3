// The few core symbols the CUDA module uses, for gemm_check builds that do not link
// libgpukern (so the ladder can be checked while the core changes). Same behaviour
// as src/core for what the driver needs; not part of the module.
#include "core/log.hpp"
#include "core/types.hpp"

#include <cstdio>

namespace gpukern::core {

const char* dtype_name(DType t) { return t == DType::F16 ? "f16" : t == DType::BF16 ? "bf16" : "f32"; }

const char* gemm_type_name(GemmType t) {
  switch (t) {
    case GemmType::TF32: return "tf32";
    case GemmType::F16: return "f16";
    case GemmType::BF16: return "bf16";
    default: return "f32";
  }
}

std::string mask_names(uint32_t mask) {
  std::string out;
  const char* names[] = {"f32", "tf32", "f16", "bf16"};
  for (int i = 0; i < 4; ++i)
    if (mask & (1u << i)) out += (out.empty() ? "" : ",") + std::string(names[i]);
  return out;
}

bool log_enabled(LogLevel level) { return level == LogLevel::Warn; }
void log_line(LogLevel level, const std::string& message) {
  if (log_enabled(level)) std::fprintf(stderr, "[gpukern warn] %s\n", message.c_str());
}

}  // namespace gpukern::core
