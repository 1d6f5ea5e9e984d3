// The contract between the blocked GEMM algorithm (02_omp_simd.cpp) and the per-ISA
// kernels (kernel_avx512.cpp, kernel_avx2.cpp, kernel_scalar.cpp), as in BLIS:
//
//   packed A: ceil(rows / MR) micro-panels; panel q holds op(A)(i0 + q*MR + r, p0 + p) at
//             [q*MR*kc + p*MR + r], rows past the matrix are zeros.            (kc, MR) per panel
//   packed B: ceil(cols / NR) micro-panels; panel q holds op(B)(p0 + p, j0 + q*NR + c) at
//             [q*NR*kc + p*NR + c], columns past the matrix are zeros.         (kc, NR) per panel
//   micro:    C[0:mr, 0:nr] = alpha * (A panel x B panel) + beta * C[0:mr, 0:nr]   (MR, NR) tile
//             with C an f32 row-major tile (leading dimension ldc). mr <= MR, nr <= NR: the
//             padded rows/columns are computed and never stored. beta == 0 never reads C.
//   store_c:  C (f16 or bf16) = S + beta * C for a rows x cols f32 block S, rounding to
//             nearest even: f16/bf16 C is accumulated in f32 over the whole depth first.
//
// Packing converts f16/bf16 to f32, so every micro-kernel works on f32 only, and handles the
// transposes, so the micro-kernel never sees a stride other than ldc.
#pragma once

#include "core/types.hpp"
#include "cpu/cpu_features.hpp"

#include <cstdint>

namespace gpukern::cpu {

/// One operand as stored: op(X)(r, c) = trans ? data[c * ld + r] : data[r * ld + c].
struct PackSource {
  const void* data = nullptr;
  int64_t ld = 0;
  bool trans = false;
  core::DType type = core::DType::F32;
};

struct GemmKernel {
  const char* name;  // "avx512 14x32"
  int mr, nr;        // micro-tile (rows from A broadcasts, columns from B vectors)
  /// Packs op(A) rows [i0, i0 + rows) x depth [p0, p0 + kc).
  void (*pack_a)(const PackSource& a, int64_t i0, int64_t rows, int64_t p0, int64_t kc, float* dst);
  /// Packs op(B) depth [p0, p0 + kc) x columns [j0, j0 + cols).
  void (*pack_b)(const PackSource& b, int64_t p0, int64_t kc, int64_t j0, int64_t cols, float* dst);
  void (*micro)(int64_t kc, const float* a_panel, const float* b_panel, float* c, int64_t ldc, float alpha, float beta,
                int mr, int nr);
  void (*store_c)(const float* s, int64_t lds, void* c, int64_t ldc, core::DType c_type, int64_t rows, int64_t cols,
                  float beta);
};

/// The kernels of each path. Only call one the CPU supports (see cpu_features.hpp).
GK_CPU_TESTED const GemmKernel& gemm_kernel_avx512();
GK_CPU_TESTED const GemmKernel& gemm_kernel_avx2();
GK_CPU_TESTED const GemmKernel& gemm_kernel_scalar();

}  // namespace gpukern::cpu
