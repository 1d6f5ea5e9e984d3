// Argument validation, done once here before any backend sees a call.
// Each check throws Error(InvalidArgument) with a message naming the argument.
#pragma once

#include "core/types.hpp"

namespace gpukern::core {

/// Checks a C descriptor and converts it to the internal, validated form.
GemmArgs validate_gemm(const gk_gemm_desc* desc);
SoftmaxArgs validate_softmax(const gk_softmax_desc* desc);

}  // namespace gpukern::core
