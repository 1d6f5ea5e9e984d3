// AVX2 (+FMA, F16C) helpers shared by the AVX2 kernel files (include it ONLY from files
// compiled with the AVX2 flags): loads of 8 stored elements as f32, rounding stores to
// f16 / bf16, and exp. Unnamed namespace: each including file gets its own internal copy
// (see avx512.hpp for why).
#pragma once

#include "cpu/storage_types.hpp"

#include <immintrin.h>

#include <cstdint>

namespace gpukern::cpu::avx2 {
namespace {

/// 8 consecutive stored elements as f32 (full vectors only; tails go through a buffer).
inline __m256 load8(const float* src) { return _mm256_loadu_ps(src); }
inline __m256 load8(const Half* src) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src))); }
inline __m256 load8(const BFloat16* src) {
  const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src)));
  return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
}

// ---- f32 -> f16 / bf16, round to nearest even (bit-identical to core/half.hpp) ----
inline __m128i to_half(__m256 v) { return _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
inline __m128i to_bfloat16(__m256 v) {
  const __m256i u = _mm256_castps_si256(v);
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
  const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(u, _mm256_add_epi32(_mm256_set1_epi32(0x7fff), lsb)), 16);
  const __m256i quiet_nan = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40));
  const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  const __m256i bits = _mm256_blendv_epi8(rounded, quiet_nan, nan);  // 32-bit lanes, values < 2^16
  // Pack the low 16 bits of each lane: packus saturates at 0xffff, which no value exceeds.
  const __m256i packed = _mm256_packus_epi32(bits, bits);  // per 128-bit half: 4 words twice
  return _mm_unpacklo_epi64(_mm256_castsi256_si128(packed), _mm256_extracti128_si256(packed, 1));
}

inline void store8(float* dst, __m256 v) { _mm256_storeu_ps(dst, v); }
inline void store8(Half* dst, __m256 v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), to_half(v)); }
inline void store8(BFloat16* dst, __m256 v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), to_bfloat16(v)); }

/// Non-temporal store of 8 elements; dst aligned to 8 * sizeof(T) bytes.
inline void stream8(float* dst, __m256 v) { _mm256_stream_ps(dst, v); }
inline void stream8(Half* dst, __m256 v) { _mm_stream_si128(reinterpret_cast<__m128i*>(dst), to_half(v)); }
inline void stream8(BFloat16* dst, __m256 v) { _mm_stream_si128(reinterpret_cast<__m128i*>(dst), to_bfloat16(v)); }

/// exp(x) for x <= 0, -inf (-> 0) and NaN (-> NaN): the range reduction and polynomial of
/// avx512::exp; 2^n is built in the exponent field, which holds normal numbers only, so
/// results below FLT_MIN (x < -87.34) are flushed to 0 (at most 1.2e-38 lost, next to a
/// softmax sum >= 1).
inline __m256 exp(__m256 x) {
  constexpr float kMinNormalInput = -87.3365447f;                                     // ln(FLT_MIN)
  const __m256 tiny = _mm256_cmp_ps(x, _mm256_set1_ps(kMinNormalInput), _CMP_LT_OQ);  // false for NaN
  // maxps returns its second operand when either is NaN, so NaN passes through.
  x = _mm256_max_ps(_mm256_set1_ps(kMinNormalInput), x);
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  const __m256 e = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  // 2^n for n in [-126, 128]: (n + 127) << 23. n = -126 at the clamp: FLT_MIN scale, normal.
  const __m256i exponent = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  const __m256 result = _mm256_mul_ps(e, _mm256_castsi256_ps(exponent));
  return _mm256_andnot_ps(tiny, result);
}

}  // namespace
}  // namespace gpukern::cpu::avx2
