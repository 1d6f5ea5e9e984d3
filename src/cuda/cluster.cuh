// Thread-block cluster primitives (NVIDIA sm_90 and later): this CTA's rank and the
// cluster's size, the cluster-wide barrier, and the shared::cluster address of a
// variable in another CTA (distributed shared memory). Used by the Hopper GEMM
// (12_wgmma_tma.cu, B multicast) and the softmax cluster paths (hybrid_row.cuh,
// 06_split_row.cu). Call only from device code compiled for sm_90 or later.
#pragma once

#include <cstdint>

namespace gpukern::cuda::cluster {

__device__ __forceinline__ uint32_t rank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}

__device__ __forceinline__ uint32_t size() {
  uint32_t n;
  asm volatile("mov.u32 %0, %%cluster_nctarank;\n" : "=r"(n));
  return n;
}

/// Every thread of every CTA of the cluster arrives (releasing its prior writes), then
/// waits for all the others (acquiring theirs).
__device__ __forceinline__ void sync() {
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}
/// The same, for call sites every thread of a warp reaches together (.aligned).
__device__ __forceinline__ void sync_aligned() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

/// The shared::cluster address of the shared-memory address `local` of this CTA, in
/// CTA `cta_rank` of the cluster.
__device__ __forceinline__ uint32_t map_shared(uint32_t local, uint32_t cta_rank) {
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(local), "r"(cta_rank));
  return remote;
}

}  // namespace gpukern::cuda::cluster
