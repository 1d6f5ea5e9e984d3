/// @file half.hpp
/// Host conversions between float and the 16-bit storage types of libgpukern
/// (GK_F16: IEEE 754 binary16; GK_BF16: bfloat16), header-only, C++17.
///
/// Use them to fill f16/bf16 buffers before `Device::upload` and to read results after
/// `Device::download`:
/// @code
///   std::vector<uint16_t> a(n);
///   for (std::size_t i = 0; i < n; ++i) a[i] = gpukern::float_to_f16(values[i]);
///   ...
///   float y0 = gpukern::f16_to_float(out[0]);
/// @endcode
/// Rounding is to nearest, ties to even, as the library's kernels convert; NaN stays NaN
/// (quiet), values beyond the range become infinities, f16 subnormals are kept.
#ifndef GPUKERN_HALF_HPP
#define GPUKERN_HALF_HPP

#include <cmath>
#include <cstdint>
#include <cstring>

namespace gpukern {

namespace half_detail {
inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
}  // namespace half_detail

/// float -> bfloat16 bits, round to nearest even; NaN stays a (quiet) NaN.
inline uint16_t float_to_bf16(float f) {
  uint32_t u = half_detail::float_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

/// bfloat16 bits -> float (exact).
inline float bf16_to_float(uint16_t h) { return half_detail::bits_float(static_cast<uint32_t>(h) << 16); }

/// float -> IEEE half bits, round to nearest even, overflow to inf, subnormals kept.
inline uint16_t float_to_f16(float f) {
  using half_detail::bits_float;
  uint32_t u = half_detail::float_bits(f);
  uint32_t sign = (u >> 16) & 0x8000u;
  uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);   // NaN
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow / inf
  if (abs < 0x38800000u) {                                               // subnormal or zero
    // Scale into the subnormal range with float arithmetic (exact rounding by the FPU).
    float v = bits_float(abs) * 16777216.0f;  // 2^24: one half ulp unit = 1
    uint32_t m = static_cast<uint32_t>(std::nearbyint(v));
    return static_cast<uint16_t>(sign | m);
  }
  uint32_t mant = abs + 0xfffu + ((abs >> 13) & 1u);  // round mantissa to 10 bits
  return static_cast<uint16_t>(sign | ((mant - 0x38000000u) >> 13));
}

/// IEEE half bits -> float (exact).
inline float f16_to_float(uint16_t h) {
  using half_detail::bits_float;
  uint32_t sign = (static_cast<uint32_t>(h) & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0) {  // zero or subnormal
    float v = static_cast<float>(mant) * (1.0f / 16777216.0f);
    return bits_float(half_detail::float_bits(v) | sign);
  }
  if (exp == 31) return bits_float(sign | 0x7f800000u | (mant << 13));
  return bits_float(sign | ((exp + 112u) << 23) | (mant << 13));
}

}  // namespace gpukern

#endif  // GPUKERN_HALF_HPP
