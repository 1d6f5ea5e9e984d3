// The 16-bit storage types as distinct C++ types (f16 and bf16 are both 16-bit words).
// Plain structs with no functions, so that the instruction-set files (-mavx2, -mavx512*)
// can use them without pulling in inline code of the baseline build (see element.hpp).
#pragma once

#include <cstdint>

namespace gpukern::cpu {

struct Half {
  std::uint16_t bits;
};  // IEEE binary16
struct BFloat16 {
  std::uint16_t bits;
};  // bfloat16: the high half of a float

static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2, "16-bit storage types must be 2 bytes");

}  // namespace gpukern::cpu
