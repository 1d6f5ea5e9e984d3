// Warp-level tensor-core primitives of sm_80 and later: ldmatrix (8x8 16-bit matrices
// from shared memory into the mma fragment layout, optionally transposed), mma.sync
// m16n8k16 (f16, bf16) and m16n8k8 (tf32) with f32 accumulation, the f32 -> tf32
// rounding and the 3xTF32 split. One thin wrapper per PTX instruction. NVIDIA only: call
// from device code compiled for sm_80 or later.
#pragma once

#include "cuda/portable.cuh"

#include <cstdint>
#include <type_traits>

namespace gpukern::cuda::arch {

/// ldmatrix .x4: lane l gives the shared-window address of row l % 8 of matrix l / 8
/// (16 bytes); register i receives matrix i in the fragment layout (thread t: row t / 4,
/// elements 2 (t % 4) and +1). `kTrans` transposes each matrix on the way.
template <bool kTrans>
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
  if constexpr (kTrans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

/// D(16x8) += A(16xK) * B(Kx8), f32 accumulators, A row-major and B column-major
/// fragments: K = 16 for T = half_t / bf16_t, K = 8 for T = float (tf32 inputs).
template <class T>
__device__ __forceinline__ void mma_16x8(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  if constexpr (std::is_same_v<T, gpu::half_t>)
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  else if constexpr (std::is_same_v<T, gpu::bf16_t>)
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  else
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/// The f32 bit pattern `bits` rounded to tf32 as the tf32 mma expects its inputs: to
/// nearest, ties to even on sm_90 and later (cvt.rn.tf32.f32, one F2FP instruction there),
/// ties away from zero before (cvt.rna.tf32.f32, which sm_80 has alone: a compare with
/// infinity, an add and a mask). The 13 low bits of a finite or infinite result are zero.
__device__ __forceinline__ uint32_t round_tf32(uint32_t bits) {
  uint32_t t;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm("cvt.rn.tf32.f32 %0, %1;\n" : "=r"(t) : "f"(__uint_as_float(bits)));
#else
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(t) : "f"(__uint_as_float(bits)));
#endif
  return t;
}

/// f32 `x` as two tf32 parts (3xTF32): `big`, x rounded to nearest, and `small`, the rest
/// x - big, exact in f32 and passed as it is: the tf32 mma reads only its 19 high bits
/// (truncation; the error is below 2^-21 of |x|). big * big + big * small + small * big
/// keeps f32 accuracy (small * small lies below f32's rounding). On sm_90 big is
/// round_tf32 (one instruction); before, half a tf32 unit added to the bit pattern and the
/// 13 low bits cleared (ties away from zero, two integer instructions against cvt.rna's
/// three), which keeps every special value: infinity stays infinity in big and makes small
/// NaN, as with cvt.rna, and a NaN whose big part wraps to a zero or an infinity
/// (0x7fffffff + half a unit) keeps its NaN in small. Rounding small as well would cost as
/// much again for an error below f32's. In place when `big` is `x`.
__device__ __forceinline__ void split_tf32(uint32_t x, uint32_t& big, uint32_t& small) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const uint32_t b = round_tf32(x);
#else
  const uint32_t b = (x + 0x1000u) & 0xffffe000u;
#endif
  small = __float_as_uint(__uint_as_float(x) - __uint_as_float(b));
  big = b;
}

}  // namespace gpukern::cuda::arch
