// Tile configuration of the tcgen05 rung on Blackwell datacenter GPUs (sm_100a: B200,
// GB200): 227 KB of shared memory per block, 512 columns of tensor memory per SM.
// Compile-verified only (no sm_100 GPU was available).
#pragma once

namespace gpukern::cuda::gemm::sm100 {

/// tcgen05: 128 x 256 tiles, 4 stages of 128 bytes of K, two 128 x 256 f32 accumulators
/// in tensor memory (all 512 columns), L2 raster groups of 16 tile rows.
struct Tcgen05 {
  static constexpr int kStages = 4;
  static constexpr int kGroupM = 16;  // tile rows per L2 raster group
};

}  // namespace gpukern::cuda::gemm::sm100
