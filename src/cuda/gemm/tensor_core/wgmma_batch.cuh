// Strided batches in the wgmma_tma kernels (12_wgmma_tma.cuh): the copies that address a
// batch item through the tensor map's third dimension (arch/bulk_copy.cuh's 3-D forms),
// and what a launch passes
// the kernels beyond the plain call (WgmmaExtras: the item coordinates of A and B, C's
// item stride for the stores from registers, the fused epilogue).
//
// How a batch runs: one launch for all items. The persistent schedule numbers the tiles
// of every item (item-major, WgmmaSchedule::per_item tiles each), so tiles x items fill
// the SMs however small one item is (attention: 1024 items of 512 x 512 x 64). Each
// operand gets one 3-D tensor map {columns, rows, items} whose third stride is the
// operand's batch stride: a box never crosses into the next item (TMA zero-fills per
// dimension, so K and M/N edges stay exact), and interleaved items (stride smaller than
// a matrix, e.g. heads side by side in a row) are just another stride. A broadcast
// operand (stride 0) is a map of one item read at item coordinate 0 (TMA strides must
// be non-zero). Every stride must be a multiple of 16 bytes (TMA's rule): the rung
// declines batched operands that are not (Misaligned), as repacking each item is the
// core's per-item loop's job.
#pragma once

#include "cuda/arch/bulk_copy.cuh"
#include "cuda/arch/cache_policy.cuh"
#include "cuda/gemm/epilogue.cuh"

#include <cstdint>

namespace gpukern::cuda::gemm {

/// What a launch of the wgmma_tma kernels adds to the plain call (TcProblem).
struct WgmmaExtras {
  int maps_3d = 0;             ///< 1: the tensor maps are 3-D (a batched launch), 0: 2-D
  int a_item = 0, b_item = 0;  ///< 1: A's (B's) map has an item per batch item; 0: one item (broadcast)
  int64_t stride_c = 0;        ///< elements between the items' C (the stores from registers)
  /// 1: the operand's tiles are each read by one or two tiles close together in time
  /// (mark_read_once), so its loads are marked evict-first in L2 instead of evict-last: a
  /// stream that is not read again should not displace the other operand, which is
  /// (attention's P V: P streams past a V of a few tiles; a weight past a few tokens).
  int a_once = 0, b_once = 0;
  Epilogue epi;  ///< bias and activation (epi.active() false: the plain store)
};

/// The box of `tensor_map` at (c0, c1) of batch item `item` (2-D maps: no item) into
/// shared memory at `dst`, counted on `bar`, its L2 lines under `policy`
/// (arch::l2_evict_last_policy: operand tiles are read again by the other CTAs of their
/// tile row or column, and C's evict-first stores go before them).
__device__ __forceinline__ void tma_load_item(uint32_t dst, const void* tensor_map, uint32_t bar, int c0, int c1,
                                              bool maps_3d, int item, uint64_t policy) {
  if (maps_3d)
    arch::tma_load_3d_hint(dst, tensor_map, bar, c0, c1, item, policy);
  else
    arch::tma_load_2d_hint(dst, tensor_map, bar, c0, c1, policy);
}

/// The same, multicast to the CTAs of `cta_mask`.
__device__ __forceinline__ void tma_load_item_multicast(uint32_t dst, const void* tensor_map, uint32_t bar, int c0,
                                                        int c1, bool maps_3d, int item, uint16_t cta_mask,
                                                        uint64_t policy) {
  if (maps_3d)
    arch::tma_load_3d_multicast_hint(dst, tensor_map, bar, c0, c1, item, cta_mask, policy);
  else
    arch::tma_load_2d_multicast_hint(dst, tensor_map, bar, c0, c1, cta_mask, policy);
}

/// The shared-memory box at `src` to (c0, c1) of batch item `item` of C, its lines
/// marked evict-first in L2 (`policy`: arch::l2_evict_first_policy): C is written once,
/// and its write-back traffic then displaces itself rather than the operand tiles
/// other CTAs are about to read again (attention's Q K^T writes 8 GB of C past 0.5 GB of
/// Q and K).
__device__ __forceinline__ void tma_store_item(const void* tensor_map, uint32_t src, int c0, int c1, bool maps_3d,
                                               int item, uint64_t policy) {
  if (maps_3d)
    arch::tma_store_3d_hint(tensor_map, src, c0, c1, item, policy);
  else
    arch::tma_store_2d_hint(tensor_map, src, c0, c1, policy);
}

}  // namespace gpukern::cuda::gemm
