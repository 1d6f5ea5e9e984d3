// Bulk asynchronous copies (sm_90+): TMA tensor loads and stores (cp.async.bulk.tensor),
// multicast into the CTAs of a cluster, the plain global -> shared bulk copy, their
// completion (mbarrier transaction bytes for loads, bulk async-groups for stores), the
// tensor-map prefetch, and the proxy fence that orders ordinary shared-memory writes
// before the async proxy reads them. One thin wrapper per PTX instruction; shared
// memory and mbarriers are named by shared-window addresses (arch::smem_addr). NVIDIA
// only: call from device code compiled for sm_90 or later.
#pragma once

#include <cstdint>

namespace gpukern::cuda::arch {

/// Byte offset of 16-byte chunk `chunk` of row `row` in a box of 128-byte rows with the
/// 128-byte swizzle (the layout TMA writes and wgmma / tcgen05.mma read): the chunk
/// lands at chunk ^ (row % 8), so the 8 rows of a 1024-byte atom spread over all banks.
__host__ __device__ __forceinline__ uint32_t sw128_offset(uint32_t row, uint32_t chunk) {
  return row * 128 + ((chunk ^ (row & 7)) << 4);
}

/// Copies the box at (c0 = contiguous coordinate, c1 = row) of `tensor_map` into
/// shared memory at `dst`; completion counts its bytes on the mbarrier `bar`. Elements
/// outside the tensor are written as zeros.
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const void* tensor_map, uint32_t bar, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(tensor_map)), "r"(c0), "r"(c1), "r"(bar)
      : "memory");
}

/// tma_load_2d with an L2 cache policy (cache_policy.cuh) for the bytes it reads: evict-first
/// for data streamed once, evict-last for data every CTA reads again.
__device__ __forceinline__ void tma_load_2d_hint(uint32_t dst, const void* tensor_map, uint32_t bar, int c0, int c1,
                                                 uint64_t policy) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint"
      " [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(tensor_map)), "r"(c0), "r"(c1), "r"(bar), "l"(policy)
      : "memory");
}

/// Copies the shared-memory box at `src` to the box at (c0, c1) of `tensor_map`;
/// elements outside the tensor are not written. Completion is tracked per thread in
/// bulk async-groups (bulk_commit_group / bulk_wait_group*).
__device__ __forceinline__ void tma_store_2d(const void* tensor_map, uint32_t src, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];\n" ::"l"(
                   reinterpret_cast<uint64_t>(tensor_map)),
               "r"(c0), "r"(c1), "r"(src)
               : "memory");
}

/// tma_load_2d_hint written to the same offset in every CTA of `cta_mask`, each of which
/// counts the bytes on its own barrier at offset `bar`.
__device__ __forceinline__ void tma_load_2d_multicast_hint(uint32_t dst, const void* tensor_map, uint32_t bar, int c0,
                                                           int c1, uint16_t cta_mask, uint64_t policy) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".multicast::cluster.L2::cache_hint [%0], [%1, {%2, %3}], [%4], %5, %6;\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(tensor_map)), "r"(c0), "r"(c1), "r"(bar), "h"(cta_mask), "l"(policy)
      : "memory");
}

/// tma_store_2d with an L2 cache policy (cache_policy.cuh) for the lines it writes.
__device__ __forceinline__ void tma_store_2d_hint(const void* tensor_map, uint32_t src, int c0, int c1,
                                                  uint64_t policy) {
  asm volatile(
      "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group.L2::cache_hint [%0, {%1, %2}], [%3], %4;\n" ::"l"(
          reinterpret_cast<uint64_t>(tensor_map)),
      "r"(c0), "r"(c1), "r"(src), "l"(policy)
      : "memory");
}

/// Copies `bytes` (a multiple of 16; both addresses 16-byte aligned) from global memory
/// to this CTA's shared memory at `dst`; completion counts the bytes on `bar`.
__device__ __forceinline__ void bulk_load(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}

/// Closes the group of bulk stores issued by this thread since the previous commit.
__device__ __forceinline__ void bulk_commit_group() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }

/// Waits until at most `kPending` bulk groups of this thread still read shared memory
/// (their source may then be overwritten; the global writes may still be in flight).
template <int kPending>
__device__ __forceinline__ void bulk_wait_group_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(kPending) : "memory");
}

/// Waits until at most `kPending` bulk groups of this thread are incomplete.
template <int kPending>
__device__ __forceinline__ void bulk_wait_group() {
  asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(kPending) : "memory");
}

/// Brings the tensor map (a kernel parameter) into the cache before its first use.
__device__ __forceinline__ void prefetch_tensor_map(const void* tensor_map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(tensor_map)) : "memory");
}

/// Orders this thread's ordinary (generic-proxy) shared-memory stores before later
/// async-proxy reads of the same bytes (TMA stores, bulk copies, wgmma).
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

// The 3-D forms of tma_load_2d_hint, tma_load_2d_multicast_hint and tma_store_2d_hint:
// coordinate c2 is the third dimension (a batch item of a strided batch,
// gemm/tensor_core/wgmma_batch.cuh).

__device__ __forceinline__ void tma_load_3d_hint(uint32_t dst, const void* tensor_map, uint32_t bar, int c0, int c1,
                                                 int c2, uint64_t policy) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint"
      " [%0], [%1, {%2, %3, %4}], [%5], %6;\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(tensor_map)), "r"(c0), "r"(c1), "r"(c2), "r"(bar), "l"(policy)
      : "memory");
}

__device__ __forceinline__ void tma_load_3d_multicast_hint(uint32_t dst, const void* tensor_map, uint32_t bar, int c0,
                                                           int c1, int c2, uint16_t cta_mask, uint64_t policy) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".multicast::cluster.L2::cache_hint [%0], [%1, {%2, %3, %4}], [%5], %6, %7;\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(tensor_map)), "r"(c0), "r"(c1), "r"(c2), "r"(bar), "h"(cta_mask), "l"(policy)
      : "memory");
}

__device__ __forceinline__ void tma_store_3d_hint(const void* tensor_map, uint32_t src, int c0, int c1, int c2,
                                                  uint64_t policy) {
  asm volatile(
      "cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group.L2::cache_hint [%0, {%1, %2, %3}], [%4], %5;\n" ::"l"(
          reinterpret_cast<uint64_t>(tensor_map)),
      "r"(c0), "r"(c1), "r"(c2), "r"(src), "l"(policy)
      : "memory");
}

}  // namespace gpukern::cuda::arch
