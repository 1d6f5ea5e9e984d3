// AVX-512 helpers shared by the AVX-512 kernel files (include it ONLY from files compiled
// with the AVX-512 flags): loads of 16 stored elements as f32, stores with rounding to
// f16 / bf16, lane masks, and exp.
//
// Everything here is in an unnamed namespace on purpose: each including file gets its
// own internal copy, so no out-of-line AVX-512 function can ever be shared with (and
// picked by the linker for) code of the baseline path.
#pragma once

#include "cpu/storage_types.hpp"

#include <immintrin.h>

#include <cstdint>

namespace gpukern::cpu::avx512 {
namespace {

/// Lanes [0, count) on (count clamped to 16).
inline __mmask16 first_lanes(int64_t count) {
  return count >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << (count < 0 ? 0 : count)) - 1u);
}

// ---- up to 16 consecutive stored elements as f32; masked-off lanes read nothing and are 0 ----
inline __m512 load16(const float* src, __mmask16 mask) { return _mm512_maskz_loadu_ps(mask, src); }
inline __m512 load16(const Half* src, __mmask16 mask) { return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(mask, src)); }
inline __m512 load16(const BFloat16* src, __mmask16 mask) {
  // bf16 is the high half of a float: widen and shift.
  const __m512i wide = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(mask, src));
  return _mm512_castsi512_ps(_mm512_slli_epi32(wide, 16));
}

// ---- f32 -> f16 / bf16, round to nearest even (bit-identical to core/half.hpp) ----
inline __m256i to_half(__m512 v) { return _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
inline __m256i to_bfloat16(__m512 v) {
  const __m512i u = _mm512_castps_si512(v);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  const __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(_mm512_set1_epi32(0x7fff), lsb)), 16);
  // NaN must stay NaN: rounding could carry a NaN's payload into infinity.
  const __m512i quiet_nan = _mm512_or_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x40));
  const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  return _mm512_cvtepi32_epi16(_mm512_mask_blend_epi32(nan, rounded, quiet_nan));
}

inline void store16(float* dst, __m512 v, __mmask16 mask) { _mm512_mask_storeu_ps(dst, mask, v); }
inline void store16(Half* dst, __m512 v, __mmask16 mask) { _mm256_mask_storeu_epi16(dst, mask, to_half(v)); }
inline void store16(BFloat16* dst, __m512 v, __mmask16 mask) { _mm256_mask_storeu_epi16(dst, mask, to_bfloat16(v)); }

/// Non-temporal store of 16 elements; dst aligned to 16 * sizeof(T) bytes.
inline void stream16(float* dst, __m512 v) { _mm512_stream_ps(dst, v); }
inline void stream16(Half* dst, __m512 v) { _mm256_stream_si256(reinterpret_cast<__m256i*>(dst), to_half(v)); }
inline void stream16(BFloat16* dst, __m512 v) { _mm256_stream_si256(reinterpret_cast<__m256i*>(dst), to_bfloat16(v)); }

/// exp(x) for x <= 0, -inf (-> 0) and NaN (-> NaN): Cody-Waite range reduction
/// x = n ln2 + r, |r| <= ln2 / 2, Cephes' degree-6 polynomial for exp(r) (max relative
/// error ~2 ulp), then scalef(p, n) = p * 2^n, which rounds into the subnormals and to 0
/// below them instead of wrapping the exponent.
inline __m512 exp(__m512 x) {
  // exp(-104) is below half the smallest subnormal: clamping there costs nothing and turns
  // -inf into a finite input (no inf - inf below). maxps returns its second operand when
  // either is NaN, so NaN passes through.
  x = _mm512_max_ps(_mm512_set1_ps(-104.0f), x);
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  // ln2 split so that n * 0.693359375 is exact for |n| < 2^15.
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  const __m512 e = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  return _mm512_scalef_ps(e, n);
}

}  // namespace
}  // namespace gpukern::cpu::avx512
