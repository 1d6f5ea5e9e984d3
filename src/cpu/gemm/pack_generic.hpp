// Element-by-element packing loops (layout in kernel.hpp), written once over a conversion
// policy `Cvt` (static float of(T) for float, Half, BFloat16). Each kernel file passes a
// Cvt type from its own anonymous namespace: the instantiations then have internal linkage,
// so an AVX-512-compiled copy can never be the one the linker keeps for the baseline path.
// The ISA files use these for the cases they have no vector code for (transposed
// 16-bit sources); the scalar path uses them for everything.
#pragma once

#include "cpu/gemm/kernel.hpp"
#include "cpu/storage_types.hpp"

#include <cstdint>

namespace gpukern::cpu::pack_generic {

/// op(A) rows [i0, i0 + rows) x depth [p0, p0 + kc) into MR-row panels.
template <class Cvt, int MR, class T>
void pack_a_typed(const PackSource& a, int64_t i0, int64_t rows, int64_t p0, int64_t kc, float* dst) {
  const T* base = static_cast<const T*>(a.data);
  for (int64_t first = 0; first < rows; first += MR, dst += MR * kc) {
    const int64_t r = rows - first < MR ? rows - first : MR;
    if (a.trans) {
      // Stored k x m: the MR values of one depth step are contiguous.
      for (int64_t p = 0; p < kc; ++p) {
        const T* src = base + (p0 + p) * a.ld + i0 + first;
        for (int64_t i = 0; i < r; ++i) dst[p * MR + i] = Cvt::of(src[i]);
        for (int64_t i = r; i < MR; ++i) dst[p * MR + i] = 0.0f;
      }
    } else {
      // Stored m x k: read each row contiguously, write it with stride MR.
      for (int64_t i = 0; i < r; ++i) {
        const T* src = base + (i0 + first + i) * a.ld + p0;
        for (int64_t p = 0; p < kc; ++p) dst[p * MR + i] = Cvt::of(src[p]);
      }
      for (int64_t i = r; i < MR; ++i)
        for (int64_t p = 0; p < kc; ++p) dst[p * MR + i] = 0.0f;
    }
  }
}

/// op(B) depth [p0, p0 + kc) x columns [j0, j0 + cols) into NR-column panels.
template <class Cvt, int NR, class T>
void pack_b_typed(const PackSource& b, int64_t p0, int64_t kc, int64_t j0, int64_t cols, float* dst) {
  const T* base = static_cast<const T*>(b.data);
  for (int64_t first = 0; first < cols; first += NR, dst += NR * kc) {
    const int64_t c = cols - first < NR ? cols - first : NR;
    if (!b.trans) {
      // Stored k x n: the NR values of one depth step are contiguous.
      for (int64_t p = 0; p < kc; ++p) {
        const T* src = base + (p0 + p) * b.ld + j0 + first;
        for (int64_t j = 0; j < c; ++j) dst[p * NR + j] = Cvt::of(src[j]);
        for (int64_t j = c; j < NR; ++j) dst[p * NR + j] = 0.0f;
      }
    } else {
      // Stored n x k: read each column of op(B) contiguously, write it with stride NR.
      for (int64_t j = 0; j < c; ++j) {
        const T* src = base + (j0 + first + j) * b.ld + p0;
        for (int64_t p = 0; p < kc; ++p) dst[p * NR + j] = Cvt::of(src[p]);
      }
      for (int64_t j = c; j < NR; ++j)
        for (int64_t p = 0; p < kc; ++p) dst[p * NR + j] = 0.0f;
    }
  }
}

template <class Cvt, int MR>
void pack_a(const PackSource& a, int64_t i0, int64_t rows, int64_t p0, int64_t kc, float* dst) {
  switch (a.type) {
    case core::DType::F16:
      return pack_a_typed<Cvt, MR, Half>(a, i0, rows, p0, kc, dst);
    case core::DType::BF16:
      return pack_a_typed<Cvt, MR, BFloat16>(a, i0, rows, p0, kc, dst);
    default:
      return pack_a_typed<Cvt, MR, float>(a, i0, rows, p0, kc, dst);
  }
}

template <class Cvt, int NR>
void pack_b(const PackSource& b, int64_t p0, int64_t kc, int64_t j0, int64_t cols, float* dst) {
  switch (b.type) {
    case core::DType::F16:
      return pack_b_typed<Cvt, NR, Half>(b, p0, kc, j0, cols, dst);
    case core::DType::BF16:
      return pack_b_typed<Cvt, NR, BFloat16>(b, p0, kc, j0, cols, dst);
    default:
      return pack_b_typed<Cvt, NR, float>(b, p0, kc, j0, cols, dst);
  }
}

}  // namespace gpukern::cpu::pack_generic
