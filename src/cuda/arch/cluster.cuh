// Thread-block cluster primitives (NVIDIA sm_90 and later): this CTA's rank and the
// cluster's size, the cluster-wide barrier, distributed shared memory (the
// shared::cluster address of a variable in another CTA, loads from it, and st.async
// stores into it that complete on the receiver's mbarrier; the fence that makes mbarrier
// initialization visible to the cluster is in mbarrier.cuh). Call only from device code compiled
// for sm_90 or later; declared for CUDA only (HIP has no clusters).
#pragma once

#include "cuda/arch/vendor.cuh"

#include <cstdint>

#if defined(GPUKERN_CUDA)
namespace gpukern::cuda::arch {

__device__ __forceinline__ uint32_t cluster_rank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}

__device__ __forceinline__ uint32_t cluster_size() {
  uint32_t n;
  asm volatile("mov.u32 %0, %%cluster_nctarank;\n" : "=r"(n));
  return n;
}

/// Every thread of every CTA of the cluster arrives (releasing its prior writes), then
/// waits for all the others (acquiring theirs).
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}
/// The same, for call sites every thread of a warp reaches together (.aligned).
__device__ __forceinline__ void cluster_sync_aligned() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

/// The shared::cluster address of the shared-memory address `local` of this CTA, in
/// CTA `cta_rank` of the cluster.
__device__ __forceinline__ uint32_t map_shared_rank(uint32_t local, uint32_t cta_rank) {
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(local), "r"(cta_rank));
  return remote;
}

/// Two floats at the shared::cluster address `remote` (map_shared_rank), 8-byte aligned.
__device__ __forceinline__ void ld_shared_cluster_v2(uint32_t remote, float& a, float& b) {
  asm volatile("ld.shared::cluster.v2.f32 {%0, %1}, [%2];" : "=f"(a), "=f"(b) : "r"(remote) : "memory");
}

/// Stores two floats at the shared::cluster address `remote` of another CTA; the 8 bytes
/// complete as transactions on that CTA's mbarrier at `remote_bar` (mbarrier
/// complete_tx), so the receiver learns of them by waiting on its barrier.
__device__ __forceinline__ void st_async_v2(uint32_t remote, float a, float b, uint32_t remote_bar) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [%0], {%1, %2}, [%3];" ::"r"(remote),
               "f"(a), "f"(b), "r"(remote_bar)
               : "memory");
}

/// The same for one 32-bit word.
__device__ __forceinline__ void st_async_u32(uint32_t remote, uint32_t v, uint32_t remote_bar) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [%0], %1, [%2];" ::"r"(remote), "r"(v),
               "r"(remote_bar)
               : "memory");
}

}  // namespace gpukern::cuda::arch
#endif
