// Entry point of the CPU backend, which is built into libgpukern (always available).
#pragma once

#include "core/backend.hpp"

#include <memory>

namespace gpukern::cpu {

/// Opens the CPU "device" (the host). Never fails.
GK_CORE_API std::unique_ptr<core::Backend> create_backend();  // exported for tests/cpu

}  // namespace gpukern::cpu
