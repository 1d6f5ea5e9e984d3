// Tensor-core primitives of Blackwell datacenter GPUs (sm_100a): tensor-memory (TMEM)
// allocation, tcgen05.mma with operands in shared memory and the accumulator in TMEM,
// tcgen05.commit to an mbarrier, TMEM loads into registers, the tcgen05 ordering fences,
// and the two descriptors tcgen05.mma reads (the shared-memory matrix descriptor and the
// 32-bit instruction descriptor). mbarriers and TMA are unchanged from Hopper
// (mbarrier.cuh, bulk_copy.cuh). One thin wrapper per PTX instruction. NVIDIA only: call
// from device code compiled for sm_100a (__CUDA_ARCH_FEAT_SM100_ALL).
//
// Written from the PTX ISA's tcgen05 chapter and compile-verified only (no sm_100 GPU
// was available): nvcc turns them into UTCATOMSWS (alloc/dealloc), UTCHMMA (the MMA,
// f16/bf16/tf32 alike: the format lives in the instruction descriptor), UTCBAR (commit)
// and LDTM (tcgen05.ld), but no result of these wrappers has been checked on hardware.
#pragma once

#include <cstdint>

namespace gpukern::cuda::arch {

// ---- tensor memory ------------------------------------------------------------------
// TMEM is a per-SM 128-lane x 512-column array of 32-bit cells. An address is
// (lane << 16) | column. Warp w of a CTA may only touch lanes 32 (w % 4) .. +31.

/// Warp-wide: allocates `kCols` columns (a power of two, 32..512) of every lane and
/// writes the base address to the shared-memory word at `dst`.
template <uint32_t kCols>
__device__ __forceinline__ void tmem_alloc(uint32_t dst) {
  static_assert(kCols >= 32 && kCols <= 512 && (kCols & (kCols - 1)) == 0, "TMEM columns: a power of 2 in 32..512");
  asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;\n" ::"r"(dst), "n"(kCols) : "memory");
}

/// Warp-wide: this CTA will allocate no more, so a CTA waiting to allocate may proceed.
__device__ __forceinline__ void tmem_relinquish_alloc_permit() {
  asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n" ::: "memory");
}

/// Warp-wide: frees what tmem_alloc<kCols> returned (required before the CTA exits).
template <uint32_t kCols>
__device__ __forceinline__ void tmem_dealloc(uint32_t taddr) {
  asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;\n" ::"r"(taddr), "n"(kCols) : "memory");
}

/// Orders this thread's earlier tcgen05 operations before a following thread
/// synchronization (mbarrier arrive, bar.sync), and operations after a
/// synchronization (mbarrier wait, bar.sync) after it: the pair brackets every hand-over
/// of TMEM or of an MMA's inputs between threads.
__device__ __forceinline__ void tcgen05_fence_before_thread_sync() {
  asm volatile("tcgen05.fence::before_thread_sync;\n" ::: "memory");
}
__device__ __forceinline__ void tcgen05_fence_after_thread_sync() {
  asm volatile("tcgen05.fence::after_thread_sync;\n" ::: "memory");
}

// ---- descriptors --------------------------------------------------------------------

/// Shared-memory matrix descriptor of tcgen05.mma, 128-byte swizzle: start address,
/// leading and stride byte offsets (16-byte units, 14 bits each) as on Hopper, plus the
/// sm_100 version field (bits 46-48 = 0b001) and the swizzle mode in bits 61-63
/// (2 = 128-byte swizzle; numerically the same bit as Hopper's layout type 1 in 62-63).
/// Base offset (bits 49-51) 0: every operand box starts 1024-byte aligned.
__device__ __forceinline__ uint64_t make_tcgen05_sw128_desc(uint32_t addr, uint32_t lbo, uint32_t sbo) {
  return static_cast<uint64_t>((addr & 0x3FFFF) >> 4) | (static_cast<uint64_t>((lbo >> 4) & 0x3FFF) << 16) |
         (static_cast<uint64_t>((sbo >> 4) & 0x3FFF) << 32) | (1ull << 46) | (2ull << 61);
}

/// Operand formats of the instruction descriptor (.kind::f16: F16/BF16; .kind::tf32: TF32).
enum class Tcgen05Format : uint32_t { F16 = 0, BF16 = 1, TF32 = 2 };

/// Instruction descriptor of a dense tcgen05.mma (.kind::f16 / .kind::tf32) with an f32
/// accumulator: bits 4-5 D format (1 = f32), 7-9 A format, 10-12 B format, 15/16 A/B
/// major (0 = K-major, 1 = MN-major), 17-22 N >> 3, 24-28 M >> 4. Sparsity, saturation,
/// negation and the weight-stationary shift stay 0.
constexpr uint32_t make_tcgen05_instr_desc(Tcgen05Format a, Tcgen05Format b, bool a_mn_major, bool b_mn_major, int m,
                                           int n) {
  return (1u << 4) | (static_cast<uint32_t>(a) << 7) | (static_cast<uint32_t>(b) << 10) |
         (static_cast<uint32_t>(a_mn_major) << 15) | (static_cast<uint32_t>(b_mn_major) << 16) |
         ((static_cast<uint32_t>(n) >> 3) << 17) | ((static_cast<uint32_t>(m) >> 4) << 24);
}

// ---- MMA ----------------------------------------------------------------------------

/// One thread: D[tmem] (+)= A[smem] * B[smem] with the shape and formats of `idesc`
/// (cta_group::1: M = 128 rows on TMEM lanes 0-127, N f32 columns). 16-bit inputs,
/// K = 16 per instruction. `accumulate` = 0 overwrites D (the first K step of a tile).
/// Asynchronous: completion is observed through tcgen05_commit.
__device__ __forceinline__ void tcgen05_mma_f16(uint32_t d_tmem, uint64_t desc_a, uint64_t desc_b, uint32_t idesc,
                                                uint32_t accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %4, 0;\n"
      "tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, p;\n"
      "}\n" ::"r"(d_tmem),
      "l"(desc_a), "l"(desc_b), "r"(idesc), "r"(accumulate)
      : "memory");
}

/// As tcgen05_mma_f16 for tf32 inputs (f32 storage, low mantissa bits ignored), K = 8.
__device__ __forceinline__ void tcgen05_mma_tf32(uint32_t d_tmem, uint64_t desc_a, uint64_t desc_b, uint32_t idesc,
                                                 uint32_t accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %4, 0;\n"
      "tcgen05.mma.cta_group::1.kind::tf32 [%0], %1, %2, %3, p;\n"
      "}\n" ::"r"(d_tmem),
      "l"(desc_a), "l"(desc_b), "r"(idesc), "r"(accumulate)
      : "memory");
}

/// One thread: one arrival on the mbarrier `bar` (this CTA's shared memory) once every
/// tcgen05.mma this thread issued before has completed, i.e. finished reading its shared
/// memory operands and writing TMEM. Implies tcgen05.fence::before_thread_sync.
__device__ __forceinline__ void tcgen05_commit(uint32_t bar) {
  asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];\n" ::"r"(bar) : "memory");
}

// ---- TMEM -> registers --------------------------------------------------------------

/// Warp-wide, shape 32x32b.x32: lane i reads TMEM lane (lane of `taddr`) + i, 32
/// consecutive 32-bit columns from the column of `taddr`. Asynchronous: the registers
/// are valid only after tmem_wait_ld().
__device__ __forceinline__ void tmem_ld_32x32b_x32(uint32_t taddr, uint32_t (&v)[32]) {
  asm volatile(
      "tcgen05.ld.sync.aligned.32x32b.x32.b32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, "
      "%15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, [%32];\n"
      : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3]), "=r"(v[4]), "=r"(v[5]), "=r"(v[6]), "=r"(v[7]), "=r"(v[8]),
        "=r"(v[9]), "=r"(v[10]), "=r"(v[11]), "=r"(v[12]), "=r"(v[13]), "=r"(v[14]), "=r"(v[15]), "=r"(v[16]),
        "=r"(v[17]), "=r"(v[18]), "=r"(v[19]), "=r"(v[20]), "=r"(v[21]), "=r"(v[22]), "=r"(v[23]), "=r"(v[24]),
        "=r"(v[25]), "=r"(v[26]), "=r"(v[27]), "=r"(v[28]), "=r"(v[29]), "=r"(v[30]), "=r"(v[31])
      : "r"(taddr)
      : "memory");
}

/// Waits until this thread's earlier tcgen05.ld have written their registers. The
/// "+r" ties keep the compiler from reading the registers before this point.
__device__ __forceinline__ void tmem_wait_ld(uint32_t (&v)[32]) {
  asm volatile("tcgen05.wait::ld.sync.aligned;\n"
               : "+r"(v[0]), "+r"(v[1]), "+r"(v[2]), "+r"(v[3]), "+r"(v[4]), "+r"(v[5]), "+r"(v[6]), "+r"(v[7]),
                 "+r"(v[8]), "+r"(v[9]), "+r"(v[10]), "+r"(v[11]), "+r"(v[12]), "+r"(v[13]), "+r"(v[14]), "+r"(v[15]),
                 "+r"(v[16]), "+r"(v[17]), "+r"(v[18]), "+r"(v[19]), "+r"(v[20]), "+r"(v[21]), "+r"(v[22]), "+r"(v[23]),
                 "+r"(v[24]), "+r"(v[25]), "+r"(v[26]), "+r"(v[27]), "+r"(v[28]), "+r"(v[29]), "+r"(v[30]), "+r"(v[31])
               :
               : "memory");
}

}  // namespace gpukern::cuda::arch
