// Entry point of the CPU backend, which is built into libgpukern (always available).
#pragma once

#include "core/backend.hpp"

#include <memory>

namespace gpukern::cpu {

/// Opens the CPU "device" (the host). Never fails.
std::unique_ptr<core::Backend> create_backend();

}  // namespace gpukern::cpu
