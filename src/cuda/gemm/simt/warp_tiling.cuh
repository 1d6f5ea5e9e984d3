// Thread placement of the warp-tiled rungs (08 warptile, 09 double_buffer).
//
// The block tile is split into warp tiles; inside a warp the lanes form a
// kLanesM x kLanesN grid (4 x 8 with 32 lanes, 8 x 8 with 64), and each lane's
// kThreadM x kThreadN outputs are (kThreadM/4) x (kThreadN/4) sub-tiles of 4 x 4 spread
// across the warp tile, not one contiguous block:
//
//   warp tile (kWarpTileM x kWarpTileN), sub-tile (i, j) of lane (lm, ln) starts at
//   row i * kLanesM * 4 + lm * 4, column j * kLanesN * 4 + ln * 4.
//
// Why: a lane reads each fragment as float4s from the K-major shared tiles. Eight
// consecutive lanes (one phase of a 16-byte shared load) share lm and have ln = 0..7,
// so for B they read 8 distinct, consecutive float4s (128 bytes, every bank once) and
// for A they all read the same float4 (a broadcast): no bank conflicts, and the whole
// warp's fragment traffic per kk is 2 * (kThreadM + kThreadN) / 4 16-byte loads.
//
// kWarpSize_ is the warp the layout is built for. Device code may leave the default
// (the target's own, gpu::kWarpSize); host code, which serves targets of 32- and
// 64-lane wavefronts at once on HIP, names it from the device (gpu::with_warp_size).
#pragma once

#include "cuda/portable.cuh"

namespace gpukern::cuda::gemm {

template <int kWarpsM_, int kWarpsN_, int kThreadM_, int kThreadN_, int kWarpSize_ = gpu::kWarpSize>
struct WarpTiling {
  static constexpr int kWarpSize = kWarpSize_;
  static constexpr int kWarpsM = kWarpsM_, kWarpsN = kWarpsN_;
  static constexpr int kThreadM = kThreadM_, kThreadN = kThreadN_;
  static constexpr int kLanesN = 8;
  static constexpr int kLanesM = kWarpSize / kLanesN;
  static constexpr int kSubM = kThreadM / 4, kSubN = kThreadN / 4;
  static constexpr int kWarpTileM = kLanesM * kThreadM, kWarpTileN = kLanesN * kThreadN;
  static constexpr int kBlockM = kWarpsM * kWarpTileM, kBlockN = kWarpsN * kWarpTileN;
  static constexpr int kThreads = kWarpsM * kWarpsN * kWarpSize;
  static_assert(kWarpSize % kLanesN == 0, "the lane grid needs the warp size to be a multiple of 8");
  static_assert(kThreadM % 4 == 0 && kThreadN % 4 == 0, "a lane's outputs are made of 4 x 4 sub-tiles");
  static_assert(kThreads <= 1024, "a thread block holds at most 1024 threads");

  /// Thread `thread`'s (0 .. kThreads - 1; this thread's by default) first row / column in
  /// the block tile (sub-tile (0, 0)).
  __device__ __forceinline__ static int row_base(int thread = static_cast<int>(threadIdx.x)) {
    const int warp = thread / kWarpSize, lane = thread % kWarpSize;
    return (warp / kWarpsN) * kWarpTileM + (lane / kLanesN) * 4;
  }
  __device__ __forceinline__ static int col_base(int thread = static_cast<int>(threadIdx.x)) {
    const int warp = thread / kWarpSize, lane = thread % kWarpSize;
    return (warp % kWarpsN) * kWarpTileN + (lane % kLanesN) * 4;
  }
  /// Offset of sub-tile i (rows) / j (columns) from the base.
  static constexpr int kSubStrideM = kLanesM * 4;
  static constexpr int kSubStrideN = kLanesN * 4;
};

}  // namespace gpukern::cuda::gemm
