// AVX-512 row kernel of `omp_simd` softmax (algorithm in kernel.hpp; compiled with the
// AVX-512 flags, called only when cpuid and the OS allow AVX-512). 16 lanes per vector,
// two vectors per step so the max and the exp sums run as two independent chains;
// tails with masked loads (masked-off lanes read as -inf, whose exp is 0).
#include "cpu/simd/avx512.hpp"
#include "cpu/softmax/kernel.hpp"

#include <math.h>
#include <cstdint>

namespace gpukern::cpu {
namespace {

using avx512::first_lanes;

/// Up to 16 elements; lanes past `mask` are -inf, so they neither raise the max nor add to a sum.
template <class T>
__m512 load_or_neg_inf(const T* src, __mmask16 mask) {
  return _mm512_mask_mov_ps(_mm512_set1_ps(-INFINITY), mask, avx512::load16(src, mask));
}

template <class T>
void fill_nan(T* y, int64_t n) {
  for (int64_t j = 0; j < n; j += 16) avx512::store16(y + j, _mm512_set1_ps(NAN), first_lanes(n - j));
}

template <class T>
void softmax_row(const T* x, T* y, int64_t n, bool log, bool stream) {
  constexpr __mmask16 kAll = 0xffff;
  float max = -INFINITY;
  __m512 sum = _mm512_setzero_ps();
  // ---- pass 1: online max and sum of exp, one block of the row at a time ----
  for (int64_t first = 0; first < n; first += kSoftmaxBlock) {
    const T* xb = x + first;
    const int64_t len = n - first < kSoftmaxBlock ? n - first : kSoftmaxBlock;
    __m512 max0 = _mm512_set1_ps(-INFINITY), max1 = max0;
    __mmask16 nan = 0;  // maxps drops NaN, so NaN is tracked on the side
    int64_t j = 0;
    for (; j + 32 <= len; j += 32) {
      const __m512 v0 = avx512::load16(xb + j, kAll), v1 = avx512::load16(xb + j + 16, kAll);
      max0 = _mm512_max_ps(max0, v0);
      max1 = _mm512_max_ps(max1, v1);
      nan |= _mm512_cmp_ps_mask(v0, v1, _CMP_UNORD_Q);  // unordered: a NaN in either
    }
    for (; j < len; j += 16) {
      const __m512 v = load_or_neg_inf(xb + j, first_lanes(len - j));
      max0 = _mm512_max_ps(max0, v);
      nan |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    }
    if (nan) return fill_nan(y, n);  // NaN anywhere makes the whole row NaN
    const float block_max = _mm512_reduce_max_ps(_mm512_max_ps(max0, max1));
    if (block_max == -INFINITY) continue;  // all -inf so far: exp(-inf) adds nothing
    if (block_max > max) {  // rescale what was summed against the old maximum
      sum = _mm512_mul_ps(sum, _mm512_set1_ps(::expf(max - block_max)));
      max = block_max;
    }
    // Second read of the block, from L1.
    const __m512 vmax = _mm512_set1_ps(max);
    __m512 sum0 = _mm512_setzero_ps(), sum1 = _mm512_setzero_ps();
    for (j = 0; j + 32 <= len; j += 32) {
      sum0 = _mm512_add_ps(sum0, avx512::exp(_mm512_sub_ps(avx512::load16(xb + j, kAll), vmax)));
      sum1 = _mm512_add_ps(sum1, avx512::exp(_mm512_sub_ps(avx512::load16(xb + j + 16, kAll), vmax)));
    }
    for (; j < len; j += 16)
      sum0 = _mm512_add_ps(sum0, avx512::exp(_mm512_sub_ps(load_or_neg_inf(xb + j, first_lanes(len - j)), vmax)));
    sum = _mm512_add_ps(sum, _mm512_add_ps(sum0, sum1));
  }
  if (max == -INFINITY) return fill_nan(y, n);  // a row of all -inf is NaN, as in PyTorch

  // ---- pass 2: the output ----
  const float total = _mm512_reduce_add_ps(sum);
  const __m512 vmax = _mm512_set1_ps(max);
  const __m512 scale = _mm512_set1_ps(log ? ::logf(total) : 1.0f / total);
  auto value = [&](__m512 v) {
    const __m512 shifted = _mm512_sub_ps(v, vmax);
    return log ? _mm512_sub_ps(shifted, scale) : _mm512_mul_ps(avx512::exp(shifted), scale);
  };
  int64_t j = 0;
  if (stream) {
    // Non-temporal stores need y + j aligned to a whole vector: do the head with a masked
    // ordinary store (if y is not even element-aligned, stream nothing).
    constexpr uintptr_t kVectorBytes = 16 * sizeof(T);
    const uintptr_t address = reinterpret_cast<uintptr_t>(y);
    if (address % sizeof(T) == 0) {
      const int64_t head = static_cast<int64_t>(((kVectorBytes - address % kVectorBytes) % kVectorBytes) / sizeof(T));
      if (head > 0) {
        const __mmask16 mask = first_lanes(head < n ? head : n);
        avx512::store16(y, value(avx512::load16(x, mask)), mask);
        j = head;
      }
      for (; j + 16 <= n; j += 16) avx512::stream16(y + j, value(avx512::load16(x + j, kAll)));
      _mm_sfence();  // order the non-temporal stores before anything that follows
    }
  }
  for (; j < n; j += 16) {
    const __mmask16 mask = first_lanes(n - j);
    avx512::store16(y + j, value(avx512::load16(x + j, mask)), mask);
  }
}

template <class T>
void rows_typed(const core::SoftmaxArgs& s, int64_t first, int64_t last, bool stream) {
  const T* x = static_cast<const T*>(s.x);
  T* y = static_cast<T*>(s.y);
  for (int64_t r = first; r < last; ++r) softmax_row(x + r * s.ldx, y + r * s.ldy, s.cols, s.log, stream);
}

void rows(const core::SoftmaxArgs& s, int64_t first, int64_t last, bool stream) {
  switch (s.dtype) {
    case core::DType::F16: return rows_typed<Half>(s, first, last, stream);
    case core::DType::BF16: return rows_typed<BFloat16>(s, first, last, stream);
    default: return rows_typed<float>(s, first, last, stream);
  }
}

void exp_array(const float* x, float* y, int64_t n) {
  for (int64_t j = 0; j < n; j += 16) {
    const __mmask16 mask = first_lanes(n - j);
    _mm512_mask_storeu_ps(y + j, mask, avx512::exp(_mm512_maskz_loadu_ps(mask, x + j)));
  }
}

}  // namespace

const SoftmaxKernel& softmax_kernel_avx512() {
  static constexpr SoftmaxKernel kernel = {"avx512", rows, exp_array};
  return kernel;
}

}  // namespace gpukern::cpu
