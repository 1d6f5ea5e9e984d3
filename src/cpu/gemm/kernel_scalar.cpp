// Portable kernels of `omp_simd` GEMM (baseline x86-64 flags; the path when neither AVX2
// nor AVX-512 may be used, and under GPUKERN_CPU_ISA=scalar): the same packed algorithm
// with a plain C++ 6x8 micro-kernel. The tile is small enough (48 floats) for the
// compiler to keep it in the 16 SSE registers and vectorize the 8 columns with SSE2.
#include "cpu/element.hpp"
#include "cpu/gemm/kernel.hpp"
#include "cpu/gemm/pack_generic.hpp"

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

}  // namespace

const GemmKernel& gemm_kernel_scalar() {
  static constexpr GemmKernel kernel = {
      "scalar 6x8", kMr, kNr, pack_generic::pack_a<Cvt, kMr>, pack_generic::pack_b<Cvt, kNr>, micro, store_c};
  return kernel;
}

}  // namespace gpukern::cpu
