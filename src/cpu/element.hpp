// Storage element types of the CPU backend as distinct C++ types (f16 and bf16 are both
// 16-bit words, so they need tags), with float conversions, and the dispatch from the
// runtime dtypes of a call to templates over them.
//
// Only for baseline-compiled files: the ISA files (-mavx2 / -mavx512*) must not call
// these inline non-template functions (an out-of-line copy compiled with AVX-512 could
// be the one the linker keeps); they convert with their own intrinsics.
#pragma once

#include "core/half.hpp"
#include "core/types.hpp"
#include "cpu/storage_types.hpp"

#include <cstdint>
#include <string>

namespace gpukern::cpu {

inline float to_float(float v) { return v; }
inline float to_float(Half v) { return core::f16_to_float(v.bits); }
inline float to_float(BFloat16 v) { return core::bf16_to_float(v.bits); }

template <class T>
T from_float(float v);
template <>
inline float from_float<float>(float v) {
  return v;
}
template <>
inline Half from_float<Half>(float v) {
  return Half{core::float_to_f16(v)};
}
template <>
inline BFloat16 from_float<BFloat16>(float v) {
  return BFloat16{core::float_to_bf16(v)};
}

/// Calls fn(T{}) with T the C++ type of `type`.
template <class Fn>
decltype(auto) with_element_type(core::DType type, Fn&& fn) {
  switch (type) {
    case core::DType::F16:
      return fn(Half{});
    case core::DType::BF16:
      return fn(BFloat16{});
    default:
      return fn(float{});
  }
}

/// Calls fn(AB{}, C{}) for a gemm's (ab_type, c_type); the core has checked that C is
/// the input type or f32.
template <class Fn>
void with_gemm_types(const core::GemmArgs& args, Fn&& fn) {
  with_element_type(args.ab_type, [&](auto ab) {
    if (args.c_type == core::DType::F32)
      fn(ab, float{});
    else
      fn(ab, ab);
  });
}

}  // namespace gpukern::cpu
