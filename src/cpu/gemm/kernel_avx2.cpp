// AVX2 kernels of `omp_simd` GEMM (compiled with -mavx2 -mfma -mf16c; called only when
// cpuid and the OS allow AVX2): a 6x16 micro-kernel, the BLIS Haswell shape.
//
// 6 rows x 16 columns of C in 12 ymm accumulators; per depth step 2 vector loads of packed
// B, 6 broadcasts of packed A, 12 FMAs. 12 + 2 + 1 = 15 of the 16 ymm registers, and 12
// independent FMA chains cover 2 FMA ports x 4-5 cycles latency. Packing uses the
// element loops of pack_generic.hpp (the compiler vectorizes the contiguous cases).
//
// Skinny kernels (skinny_simd.hpp) over 8-lane ymm vectors; tails through masked f32
// loads and stores, and for 16-bit W a zero-filled copy of the tail.
#include "cpu/gemm/kernel.hpp"
#include "cpu/gemm/pack_generic.hpp"
#include "cpu/gemm/skinny_simd.hpp"
#include "cpu/simd/avx2.hpp"
#include "cpu/storage_types.hpp"

#include <immintrin.h>

#include <cstdint>
#include <type_traits>

namespace gpukern::cpu {
namespace {

struct Avx2Tile {
  static constexpr int kLanes = 8;  // floats per ymm
  static constexpr int kMr = 6;
  static constexpr int kNr = 16;
  static constexpr int kNrVectors = kNr / kLanes;
  static constexpr int kRegisters = 16;
};
static_assert(Avx2Tile::kNr % Avx2Tile::kLanes == 0, "NR must be whole ymm vectors");
static_assert(Avx2Tile::kMr * Avx2Tile::kNrVectors + Avx2Tile::kNrVectors + 1 <= Avx2Tile::kRegisters,
              "accumulators + B vectors + one broadcast must fit the 16 ymm registers");

constexpr int kMr = Avx2Tile::kMr;
constexpr int kNr = Avx2Tile::kNr;
constexpr int kPrefetchBytesB = 512;

/// Conversions for the generic packers, with F16C instructions (this file's own copy).
struct Cvt {
  static float of(float v) { return v; }
  static float of(Half h) { return _cvtsh_ss(h.bits); }
  static float of(BFloat16 h) {
    const std::uint32_t u = static_cast<std::uint32_t>(h.bits) << 16;
    float f;
    __builtin_memcpy(&f, &u, 4);
    return f;
  }
};

/// Lane masks for maskload/maskstore: lanes [0, count) on.
__m256i first_lanes(int64_t count) {
  const __m256i index = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count > 8 ? 8 : count)), index);
}

void micro(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, float alpha, float beta, int mr, int nr) {
  __m256 acc0[kMr], acc1[kMr];  // (MR, 8) + (MR, 8) columns
#pragma GCC unroll 6
  for (int i = 0; i < kMr; ++i) acc0[i] = acc1[i] = _mm256_setzero_ps();
#pragma GCC unroll 6
  for (int i = 0; i < kMr; ++i) _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc), _MM_HINT_T0);
#pragma GCC unroll 4
  for (int64_t p = 0; p < kc; ++p) {
    const __m256 b0 = _mm256_load_ps(b), b1 = _mm256_load_ps(b + 8);
    _mm_prefetch(reinterpret_cast<const char*>(b) + kPrefetchBytesB, _MM_HINT_T0);
#pragma GCC unroll 6
    for (int i = 0; i < kMr; ++i) {
      const __m256 ai = _mm256_broadcast_ss(a + i);
      acc0[i] = _mm256_fmadd_ps(ai, b0, acc0[i]);
      acc1[i] = _mm256_fmadd_ps(ai, b1, acc1[i]);
    }
    a += kMr;
    b += kNr;
  }
  const __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
  const __m256i m0 = first_lanes(nr), m1 = first_lanes(nr > 8 ? nr - 8 : 0);
#pragma GCC unroll 6
  for (int i = 0; i < kMr; ++i) {
    if (i >= mr) break;
    float* row = c + i * ldc;
    __m256 v0 = _mm256_mul_ps(va, acc0[i]), v1 = _mm256_mul_ps(va, acc1[i]);
    if (beta != 0.0f) {  // beta == 0 must not read C (it may hold NaN)
      v0 = _mm256_fmadd_ps(vb, _mm256_maskload_ps(row, m0), v0);
      v1 = _mm256_fmadd_ps(vb, _mm256_maskload_ps(row + 8, m1), v1);
    }
    _mm256_maskstore_ps(row, m0, v0);
    _mm256_maskstore_ps(row + 8, m1, v1);
  }
}

// ---- f32 -> f16 / bf16, round to nearest even (bit-identical to core/half.hpp) ----
std::uint16_t to_half(float v) {
  return static_cast<std::uint16_t>(_mm_extract_epi16(_mm_cvtps_ph(_mm_set_ss(v), _MM_FROUND_TO_NEAREST_INT), 0));
}
std::uint16_t to_bfloat16(float v) {
  std::uint32_t u;
  __builtin_memcpy(&u, &v, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x40u);  // NaN stays NaN
  return static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

template <class T>
void store_c_typed(const float* s, int64_t lds, T* c, int64_t ldc, int64_t rows, int64_t cols, float beta) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      T& out = c[i * ldc + j];
      float v = s[i * lds + j];
      if (beta != 0.0f) v += beta * Cvt::of(out);
      out.bits = std::is_same<T, Half>::value ? to_half(v) : to_bfloat16(v);
    }
}

void store_c(const float* s, int64_t lds, void* c, int64_t ldc, core::DType c_type, int64_t rows, int64_t cols,
             float beta) {
  if (c_type == core::DType::F16)
    store_c_typed(s, lds, static_cast<Half*>(c), ldc, rows, cols, beta);
  else
    store_c_typed(s, lds, static_cast<BFloat16*>(c), ldc, rows, cols, beta);
}

/// The vector policy of the skinny kernels (skinny_simd.hpp).
struct Avx2Ops {
  using Vec = __m256;
  static constexpr int kLanes = 8;
  static constexpr int kRegisters = 16;
  static Vec zero() { return _mm256_setzero_ps(); }
  static Vec set1(float v) { return _mm256_set1_ps(v); }
  static Vec fma(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
  template <class T>
  static Vec load(const T* p) {
    return avx2::load8(p);
  }
  static Vec load_partial(const float* p, int count) { return _mm256_maskload_ps(p, first_lanes(count)); }
  template <class T>
  static Vec load_partial(const T* p, int count) {  // 16-bit: no masked load, copy the tail
    T tail[kLanes] = {};
    for (int i = 0; i < count; ++i) tail[i] = p[i];
    return avx2::load8(tail);
  }
  static Vec loadf(const float* p) { return _mm256_loadu_ps(p); }
  static Vec loadf_partial(const float* p, int count) { return _mm256_maskload_ps(p, first_lanes(count)); }
  static void storef(float* p, Vec v) { _mm256_storeu_ps(p, v); }
  static void storef_partial(float* p, Vec v, int count) { _mm256_maskstore_ps(p, first_lanes(count), v); }
  static Vec in_register(Vec v) {
    asm("" : "+x"(v));
    return v;
  }
  static float hsum(Vec v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
  template <int N>
  static void add_hsums(const Vec (&v)[N], float* out) {
    for (int i = 0; i < N; ++i) out[i] += hsum(v[i]);
  }
};

}  // namespace

const GemmKernel& gemm_kernel_avx2() {
  static constexpr GemmKernel kernel = {
      "avx2 6x16", kMr, kNr, pack_generic::pack_a<Cvt, kMr>, pack_generic::pack_b<Cvt, kNr>, micro, store_c};
  return kernel;
}

const SkinnyKernel& skinny_kernel_avx2() {
  static constexpr SkinnyKernel kernel = {"avx2", Avx2Ops::kLanes, skinny_simd::nn<Avx2Ops>, skinny_simd::nt<Avx2Ops>};
  return kernel;
}

}  // namespace gpukern::cpu
