// Warpgroup tensor-core primitives of Hopper (sm_90a): the shared-memory matrix
// descriptor with the 128-byte swizzle, wgmma.mma_async (k16 for f16/bf16 at N = 256, 192,
// 168, 128, 96, 64 and 32; k8 for tf32 at N = 256, 192, 128, 96 and 64, and with A from registers
// at N = 256, 128 and 64) with its fence / commit / wait, and setmaxnreg (register
// reallocation between warpgroups): thin wrappers of the PTX instructions. NVIDIA only:
// call from device code compiled for sm_90a (__CUDA_ARCH_FEAT_SM90_ALL).
#pragma once

#include "cuda/portable.cuh"

#include <cstdint>
#include <type_traits>

namespace gpukern::cuda::arch {

/// Register reallocation between warpgroups: producers give registers back, consumers
/// (which hold the accumulators) take them. Needs a register cap at kernel entry.
template <int kRegs>
__device__ __forceinline__ void warpgroup_reg_dealloc() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}
template <int kRegs>
__device__ __forceinline__ void warpgroup_reg_alloc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}

/// Shared-memory matrix descriptor, 128-byte swizzle: start address, leading and
/// stride byte offsets (each in 16-byte units, 14 bits), layout type 1 in bits 62-63.
/// The operand tiles start 1024-byte aligned, so the base-offset field stays 0.
__device__ __forceinline__ uint64_t make_sw128_desc(uint32_t addr, uint32_t lbo, uint32_t sbo) {
  return static_cast<uint64_t>((addr & 0x3FFFF) >> 4) | (static_cast<uint64_t>(lbo >> 4) << 16) |
         (static_cast<uint64_t>(sbo >> 4) << 32) | (1ull << 62);
}

/// `desc` moved on by `bytes16` x 16 bytes in shared memory: only the address field
/// (bits 0-13) changes, and the sum cannot carry out of it (shared addresses stay below
/// 2^18), so one 32-bit add on the low word does it; LBO, SBO and the swizzle stay.
__device__ __forceinline__ uint64_t desc_advance(uint64_t desc, uint32_t bytes16) {
  return (desc & 0xFFFFFFFF00000000ull) | static_cast<uint32_t>(static_cast<uint32_t>(desc) + bytes16);
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
/// Waits until at most `kPending` committed wgmma groups are still running.
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}

/// The accumulator registers of one m64n128 wgmma (64 f32 per thread), and of one
/// m64n256 wgmma (128): the first 64, then the rest.
#define GK_WGMMA_N128_D_REGS                                                         \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "           \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define GK_WGMMA_N256_D_REGS                                                                     \
  GK_WGMMA_N128_D_REGS                                                                           \
  ", "                                                                                           \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "             \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "             \
  "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
  "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"

/// The accumulator registers of one m64n192 wgmma (96 f32 per thread): the first 64,
/// then 32 more.
#define GK_WGMMA_N192_D_REGS                                                         \
  GK_WGMMA_N128_D_REGS                                                               \
  ", "                                                                               \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"

#define GK_WGMMA_N128_D_OPERANDS                                                                              \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), \
      "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),  \
      "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), \
      "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), \
      "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), \
      "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), \
      "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), \
      "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
#define GK_WGMMA_N256_D_OPERANDS                                                                                       \
  GK_WGMMA_N128_D_OPERANDS, "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), \
      "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]),          \
      "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]),          \
      "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]),          \
      "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]),       \
      "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]),  \
      "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]),  \
      "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]),  \
      "+f"(d[127])

#define GK_WGMMA_N192_D_OPERANDS                                                                                       \
  GK_WGMMA_N128_D_OPERANDS, "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), \
      "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]),          \
      "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]),          \
      "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]),          \
      "+f"(d[95])

/// The accumulator registers of one m64n168 wgmma (84 f32 per thread): the first 64,
/// then 20 more.
#define GK_WGMMA_N168_D_REGS                                                         \
  GK_WGMMA_N128_D_REGS                                                               \
  ", "                                                                               \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
  "%80, %81, %82, %83"

#define GK_WGMMA_N168_D_OPERANDS                                                                                       \
  GK_WGMMA_N128_D_OPERANDS, "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), \
      "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]),          \
      "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83])

/// The accumulator registers of one m64n32 wgmma (16 f32 per thread).
#define GK_WGMMA_N32_D_REGS "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15"
#define GK_WGMMA_N32_D_OPERANDS                                                                               \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), \
      "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])

/// The accumulator registers of one m64n64 wgmma (32 f32 per thread).
#define GK_WGMMA_N64_D_REGS                                                \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define GK_WGMMA_N64_D_OPERANDS                                                                               \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), \
      "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),  \
      "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), \
      "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])

/// The accumulator registers of one m64n96 wgmma (48 f32 per thread): the first 32,
/// then 16 more.
#define GK_WGMMA_N96_D_REGS \
  GK_WGMMA_N64_D_REGS       \
  ", "                      \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47"
#define GK_WGMMA_N96_D_OPERANDS                                                                                       \
  GK_WGMMA_N64_D_OPERANDS, "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), \
      "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]),         \
      "+f"(d[47])

/// The body of a wgmma with both operands from shared-memory descriptors: shape SHAPE
/// ("m64n256k16"), input type TYPE ("bf16", "f16", "tf32"), accumulators GK_WGMMA_<W>_D_*
/// (W = N256 ... N64), and the operand numbers after them as text: the two descriptors,
/// `accumulate`, then (16-bit inputs) the two transpose immediates. `accumulate` = 0
/// overwrites D (a tile's first K step); a transpose is 1 where that operand is MN-major.
#define GK_WGMMA_SS_16(SHAPE, TYPE, W, IA, IB, IP, ITA, ITB)                                 \
  asm volatile(                                                                              \
      "{\n"                                                                                  \
      ".reg .pred p;\n"                                                                      \
      "setp.ne.b32 p, %" IP                                                                  \
      ", 0;\n"                                                                               \
      "wgmma.mma_async.sync.aligned." SHAPE ".f32." TYPE "." TYPE " {" GK_WGMMA_##W##_D_REGS \
      "},"                                                                                   \
      " %" IA ", %" IB ", p, 1, 1, %" ITA ", %" ITB                                          \
      ";\n"                                                                                  \
      "}\n"                                                                                  \
      : GK_WGMMA_##W##_D_OPERANDS                                                            \
      : "l"(desc_a), "l"(desc_b), "r"(accumulate), "n"(kTransA), "n"(kTransB))
/// The same for tf32 inputs (no transpose immediates); A is the PTX text of wgmma's A
/// operand (a descriptor "%n", or registers "{%n, ...}"), the inputs follow as operands.
#define GK_WGMMA_TF32(SHAPE, W, A, IB, IP, ...)                                      \
  asm volatile(                                                                      \
      "{\n"                                                                          \
      ".reg .pred p;\n"                                                              \
      "setp.ne.b32 p, %" IP                                                          \
      ", 0;\n"                                                                       \
      "wgmma.mma_async.sync.aligned." SHAPE ".f32.tf32.tf32 {" GK_WGMMA_##W##_D_REGS \
      "},"                                                                           \
      " " A ", %" IB                                                                 \
      ", p, 1, 1;\n"                                                                 \
      "}\n"                                                                          \
      : GK_WGMMA_##W##_D_OPERANDS                                                    \
      : __VA_ARGS__)
#define GK_WGMMA_SS_TF32(SHAPE, W, IA, IB, IP) \
  GK_WGMMA_TF32(SHAPE, W, "%" IA, IB, IP, "l"(desc_a), "l"(desc_b), "r"(accumulate))

/// D(64 x N, f32) (+)= A(64x16) * B(16 x N), 16-bit inputs read from shared memory, N / 2
/// accumulators a thread: N = 256 (the large tiles), 192, 168 (K-major B: the tile loads
/// it in 56-row pieces), 128, 96, 64 or 32 (K-major B, 32-row pieces). `kTransA`/`kTransB` = 1
/// when that operand is MN-major in shared memory. `accumulate` = 0 overwrites D (the
/// first K step of a tile).
template <int N, class T, int kTransA, int kTransB>
__device__ __forceinline__ void wgmma_m64k16(float (&d)[N / 2], uint64_t desc_a, uint64_t desc_b, int accumulate) {
  static_assert(sizeof(T) == 2, "the k16 shape takes 16-bit inputs");
  // One shape in the input type T: bf16 or f16.
#define GK_WGMMA_SS_16_T(SHAPE, W, IA, IB, IP, ITA, ITB)    \
  if constexpr (std::is_same_v<T, gpu::bf16_t>)             \
    GK_WGMMA_SS_16(SHAPE, "bf16", W, IA, IB, IP, ITA, ITB); \
  else                                                      \
    GK_WGMMA_SS_16(SHAPE, "f16", W, IA, IB, IP, ITA, ITB);
  if constexpr (N == 256) {
    GK_WGMMA_SS_16_T("m64n256k16", N256, "128", "129", "130", "131", "132")
  } else if constexpr (N == 192) {
    GK_WGMMA_SS_16_T("m64n192k16", N192, "96", "97", "98", "99", "100")
  } else if constexpr (N == 168) {
    GK_WGMMA_SS_16_T("m64n168k16", N168, "84", "85", "86", "87", "88")
  } else if constexpr (N == 128) {
    GK_WGMMA_SS_16_T("m64n128k16", N128, "64", "65", "66", "67", "68")
  } else if constexpr (N == 96) {
    GK_WGMMA_SS_16_T("m64n96k16", N96, "48", "49", "50", "51", "52")
  } else if constexpr (N == 64) {
    GK_WGMMA_SS_16_T("m64n64k16", N64, "32", "33", "34", "35", "36")
  } else {
    static_assert(N == 32, "m64n256, m64n192, m64n168, m64n128, m64n96, m64n64 or m64n32");
    GK_WGMMA_SS_16_T("m64n32k16", N32, "16", "17", "18", "19", "20")
  }
#undef GK_WGMMA_SS_16_T
}

/// D(64 x N, f32) (+)= A(64x8) * B(8 x N), tf32 inputs (f32 storage), both K-major (wgmma
/// has no transpose for 32-bit operands): N = 256, 192, 128, 96 or 64.
template <int N>
__device__ __forceinline__ void wgmma_m64k8_tf32(float (&d)[N / 2], uint64_t desc_a, uint64_t desc_b, int accumulate) {
  if constexpr (N == 256) {
    GK_WGMMA_SS_TF32("m64n256k8", N256, "128", "129", "130");
  } else if constexpr (N == 192) {
    GK_WGMMA_SS_TF32("m64n192k8", N192, "96", "97", "98");
  } else if constexpr (N == 128) {
    GK_WGMMA_SS_TF32("m64n128k8", N128, "64", "65", "66");
  } else if constexpr (N == 96) {
    GK_WGMMA_SS_TF32("m64n96k8", N96, "48", "49", "50");
  } else {
    static_assert(N == 64, "tf32: m64n256, m64n192, m64n128, m64n96 or m64n64");
    GK_WGMMA_SS_TF32("m64n64k8", N64, "32", "33", "34");
  }
}

#undef GK_WGMMA_SS_16
#undef GK_WGMMA_SS_TF32

/// D(64 x N, f32) (+)= A(64x8) * B(8 x N), tf32: A from registers (4 per thread, the
/// m16n8k8 tf32 A-fragment layout per warp over the warpgroup's 4 x 16 rows), B K-major
/// from shared memory; N = 256, 128 or 64. The A registers must stay unchanged until the
/// wgmma completes.
template <int N>
__device__ __forceinline__ void wgmma_m64k8_tf32_rs(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t desc_b,
                                                    int accumulate) {
#define GK_WGMMA_RS_TF32(SHAPE, W, IA0, IA1, IA2, IA3, IB, IP)                                                 \
  GK_WGMMA_TF32(SHAPE, W, "{%" IA0 ", %" IA1 ", %" IA2 ", %" IA3 "}", IB, IP, "r"(a[0]), "r"(a[1]), "r"(a[2]), \
                "r"(a[3]), "l"(desc_b), "r"(accumulate))
  if constexpr (N == 256) {
    GK_WGMMA_RS_TF32("m64n256k8", N256, "128", "129", "130", "131", "132", "133");
  } else if constexpr (N == 128) {
    GK_WGMMA_RS_TF32("m64n128k8", N128, "64", "65", "66", "67", "68", "69");
  } else {
    static_assert(N == 64, "tf32 with A from registers: m64n256, m64n128 or m64n64");
    GK_WGMMA_RS_TF32("m64n64k8", N64, "32", "33", "34", "35", "36", "37");
  }
#undef GK_WGMMA_RS_TF32
#undef GK_WGMMA_TF32
}

/// Keeps registers that an in-flight wgmma reads alive (and unmoved) up to this point.
__device__ __forceinline__ void keep_registers(uint32_t (&r)[4]) {
  asm volatile("" : "+r"(r[0]), "+r"(r[1]), "+r"(r[2]), "+r"(r[3])::"memory");
}

/// Keeps accumulators that a wgmma wrote unread up to this point (after wgmma_wait): no
/// instruction that reads them moves above it.
template <int N>
__device__ __forceinline__ void keep_accumulators(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

#undef GK_WGMMA_N256_D_REGS
#undef GK_WGMMA_N256_D_OPERANDS
#undef GK_WGMMA_N192_D_REGS
#undef GK_WGMMA_N192_D_OPERANDS
#undef GK_WGMMA_N168_D_REGS
#undef GK_WGMMA_N168_D_OPERANDS
#undef GK_WGMMA_N128_D_REGS
#undef GK_WGMMA_N128_D_OPERANDS
#undef GK_WGMMA_N64_D_REGS
#undef GK_WGMMA_N64_D_OPERANDS
#undef GK_WGMMA_N32_D_REGS
#undef GK_WGMMA_N32_D_OPERANDS

}  // namespace gpukern::cuda::arch
