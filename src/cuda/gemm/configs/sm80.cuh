// Tile configurations of the GEMM rungs on the A100 (sm_80): 164 KB of shared memory per
// SM, 64 FP32 lanes per SM. Not measured on an A100: Hopper's tiles, with the pipeline
// depth and occupancy of the small tile fitted to the smaller shared memory.
// Each entry is a set of named fields; the rung's config template derives the rest.
#pragma once

#include "cuda/gemm/configs/sm90.cuh"

namespace gpukern::cuda::gemm::sm80 {

/// double_buffer, the throughput tile: sm90::DoubleBufferLarge (128 x 256, 8 warps, 8 x 16
/// outputs per thread, 3 stages of K = 16).
struct DoubleBufferLarge : sm90::DoubleBufferLarge {
  static constexpr int kArchLo = 800, kArchHi = 809;
};

/// double_buffer for problems too small to fill the SMs with Large tiles:
/// sm90::DoubleBufferSmall (64 x 128) with 3 stages and two blocks per SM.
struct DoubleBufferSmall : sm90::DoubleBufferSmall {
  static constexpr int kStages = 3;
  static constexpr int kMinBlocksPerSm = 2;
  static constexpr int kArchLo = 800, kArchHi = 809;
};

/// double_buffer for calls whose Small tiles would leave a quarter of the SMs idle: sm90::DoubleBufferTiny.
struct DoubleBufferTiny : sm90::DoubleBufferTiny {
  static constexpr int kArchLo = 800, kArchHi = 809;
};

/// mma_multistage: sm90::MmaMultistage (128 x 128, 8 warps of 64 x 32, 4 stages: 128 KB).
struct MmaMultistage : sm90::MmaMultistage {
  static constexpr int kArch = 800;
};

}  // namespace gpukern::cuda::gemm::sm80
