// Portable kernels of `omp_simd` GEMM (baseline x86-64 flags; the path when neither AVX2
// nor AVX-512 may be used, and under GPUKERN_CPU_ISA=scalar): the same packed algorithm
// with a plain C++ 6x8 micro-kernel. The tile is small enough (48 floats) for the
// compiler to keep it in the 16 SSE registers and vectorize the 8 columns with SSE2.
//
// Skinny kernels (skinny_simd.hpp) over 4-float GCC vectors (SSE2 registers; no FMA in
// baseline x86-64, so a multiply and an add).
#include "cpu/element.hpp"
#include "cpu/gemm/kernel.hpp"
#include "cpu/gemm/pack_generic.hpp"
#include "cpu/gemm/skinny_simd.hpp"

#include <cstring>

namespace gpukern::cpu {
namespace {

struct ScalarTile {
  static constexpr int kMr = 6;
  static constexpr int kNr = 8;
};
static_assert(ScalarTile::kMr * ScalarTile::kNr / 4 + 3 <= 16,
              "the tile in 4-float SSE registers, plus B and a broadcast, must fit 16 registers");

constexpr int kMr = ScalarTile::kMr;
constexpr int kNr = ScalarTile::kNr;

struct Cvt {
  static float of(float v) { return v; }
  static float of(Half h) { return to_float(h); }
  static float of(BFloat16 h) { return to_float(h); }
};

void micro(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, float alpha, float beta, int mr, int nr) {
  float acc[kMr][kNr] = {};  // (MR, NR)
  for (int64_t p = 0; p < kc; ++p, a += kMr, b += kNr)
    for (int i = 0; i < kMr; ++i)
      for (int j = 0; j < kNr; ++j) acc[i][j] += a[i] * b[j];
  for (int i = 0; i < mr; ++i)
    for (int j = 0; j < nr; ++j) {
      float& out = c[i * ldc + j];
      out = alpha * acc[i][j] + (beta == 0.0f ? 0.0f : beta * out);  // beta == 0 never reads C
    }
}

template <class T>
void store_c_typed(const float* s, int64_t lds, T* c, int64_t ldc, int64_t rows, int64_t cols, float beta) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      T& out = c[i * ldc + j];
      out = from_float<T>(s[i * lds + j] + (beta == 0.0f ? 0.0f : beta * to_float(out)));
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
struct ScalarOps {
  using Vec = float __attribute__((vector_size(16)));
  static constexpr int kLanes = 4;
  static constexpr int kRegisters = 16;
  static Vec zero() { return Vec{0.0f, 0.0f, 0.0f, 0.0f}; }
  static Vec set1(float v) { return Vec{v, v, v, v}; }
  static Vec fma(Vec a, Vec b, Vec c) { return a * b + c; }
  template <class T>
  static Vec load(const T* p) {
    return Vec{to_float(p[0]), to_float(p[1]), to_float(p[2]), to_float(p[3])};
  }
  template <class T>
  static Vec load_partial(const T* p, int count) {
    Vec v = zero();
    for (int i = 0; i < count; ++i) v[i] = to_float(p[i]);
    return v;
  }
  static Vec loadf(const float* p) {
    Vec v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  static Vec loadf_partial(const float* p, int count) { return load_partial(p, count); }
  static void storef(float* p, Vec v) { std::memcpy(p, &v, sizeof v); }
  static void storef_partial(float* p, Vec v, int count) {
    for (int i = 0; i < count; ++i) p[i] = v[i];
  }
  static Vec in_register(Vec v) {
    asm("" : "+x"(v));
    return v;
  }
  static float hsum(Vec v) { return (v[0] + v[1]) + (v[2] + v[3]); }
  template <int N>
  static void add_hsums(const Vec (&v)[N], float* out) {
    for (int i = 0; i < N; ++i) out[i] += hsum(v[i]);
  }
};

}  // namespace

const GemmKernel& gemm_kernel_scalar() {
  static constexpr GemmKernel kernel = {
      "scalar 6x8", kMr, kNr, pack_generic::pack_a<Cvt, kMr>, pack_generic::pack_b<Cvt, kNr>, micro, store_c};
  return kernel;
}

const SkinnyKernel& skinny_kernel_scalar() {
  static constexpr SkinnyKernel kernel = {"scalar", ScalarOps::kLanes, skinny_simd::nn<ScalarOps>,
                                          skinny_simd::nt<ScalarOps>};
  return kernel;
}

}  // namespace gpukern::cpu
