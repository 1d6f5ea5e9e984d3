// Argument validation, done once here before any backend sees a call.
// Each check throws Error(InvalidArgument) with a message naming the argument.
#pragma once

#include "core/types.hpp"

namespace gpukern::core {

/// Checks a C descriptor and converts it to the internal, validated form. The plain
/// descriptors are the extended ones with one batch item and nothing fused; an extended
/// descriptor's `size` is checked first (see gk_gemm_ex_desc).
GemmArgs validate_gemm(const gk_gemm_desc* desc);
GemmArgs validate_gemm(const gk_gemm_ex_desc* desc);
GemmArgs validate_gemm(const gk_gemm_ex_desc& desc);
SoftmaxArgs validate_softmax(const gk_softmax_desc* desc);
SoftmaxArgs validate_softmax(const gk_softmax_ex_desc* desc);
SoftmaxArgs validate_softmax(const gk_softmax_ex_desc& desc);

/// A plain descriptor as the extended one it stands for (the variant pointer kept).
gk_gemm_ex_desc widen(const gk_gemm_desc& desc);
gk_softmax_ex_desc widen(const gk_softmax_desc& desc);

}  // namespace gpukern::core
