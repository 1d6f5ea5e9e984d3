// The library's internal names for the host float <-> f16/bf16 conversions, which are
// public in <gpukern/half.hpp> (one implementation, used by the CPU backend, the tests'
// reference and the tools), plus the float <-> bits casts the core uses.
#pragma once

#include <gpukern/half.hpp>

namespace gpukern::core {

using gpukern::bf16_to_float;
using gpukern::f16_to_float;
using gpukern::float_to_bf16;
using gpukern::float_to_f16;
using half_detail::bits_float;
using half_detail::float_bits;

}  // namespace gpukern::core
