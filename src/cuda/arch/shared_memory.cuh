// Shared-memory primitives: the shared-window address of a pointer (what PTX shared
// instructions, mbarriers and TMA take) and back, 32/128-bit loads and 32/64/128-bit
// stores by that address, and stmatrix (sm_90+), which stores four 8x8 16-bit matrices
// held in the mma fragment layout. One thin wrapper per PTX instruction. NVIDIA only.
#pragma once

#include <cstdint>

namespace gpukern::cuda::arch {

/// The shared-window address of `p`, which points into shared memory.
__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

/// The generic pointer of the shared-window address `addr` (the inverse of smem_addr).
__device__ __forceinline__ void* smem_ptr(uint32_t addr) { return __cvta_shared_to_generic(addr); }

__device__ __forceinline__ uint32_t ld_shared_u32(uint32_t addr) {
  uint32_t v;
  asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(v) : "r"(addr));
  return v;
}

/// The same load ordered after every earlier memory operation and barrier wait of this
/// thread (volatile, a memory clobber): for a word another thread publishes through an
/// mbarrier, read after waiting on it.
__device__ __forceinline__ uint32_t ld_shared_u32_ordered(uint32_t addr) {
  uint32_t v;
  asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(v) : "r"(addr) : "memory");
  return v;
}

/// 16-byte load; `addr` 16-byte aligned. Ordered after earlier memory operations and
/// barrier waits of this thread, as ld_shared_u32_ordered.
__device__ __forceinline__ void ld_shared_v4(uint32_t addr, uint32_t (&v)[4]) {
  asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3])
               : "r"(addr)
               : "memory");
}

__device__ __forceinline__ void st_shared_u32(uint32_t addr, uint32_t x) {
  asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(addr), "r"(x) : "memory");
}
__device__ __forceinline__ void st_shared_f32(uint32_t addr, float x) {
  asm volatile("st.shared.f32 [%0], %1;\n" ::"r"(addr), "f"(x) : "memory");
}
__device__ __forceinline__ void st_shared_v2f32(uint32_t addr, float x, float y) {
  asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(addr), "f"(x), "f"(y) : "memory");
}
/// 16-byte store; `addr` 16-byte aligned.
__device__ __forceinline__ void st_shared_v4(uint32_t addr, uint32_t x, uint32_t y, uint32_t z, uint32_t w) {
  asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(x), "r"(y), "r"(z), "r"(w) : "memory");
}

/// stmatrix .x4 (sm_90+): four 8x8 16-bit matrices, one register of each per thread in
/// the mma fragment layout (thread t: row t / 4, columns 2 (t % 4) and +1); lane l gives
/// the shared address of row l % 8 of matrix l / 8 (16 bytes each).
__device__ __forceinline__ void stmatrix_x4(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(r0), "r"(r1),
               "r"(r2), "r"(r3)
               : "memory");
}

}  // namespace gpukern::cuda::arch
