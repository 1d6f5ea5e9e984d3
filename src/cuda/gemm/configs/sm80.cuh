// Tile configurations of the GEMM rungs on the A100 (sm_80): 164 KB of shared memory per
// SM, 64 FP32 lanes per SM. Hopper's shapes where nothing was measured on an A100.
// Each entry is a set of named fields; the rung's config template derives the rest.
#pragma once

namespace gpukern::cuda::gemm::sm80 {

/// double_buffer, the throughput tile: 128 x 256, 8 warps, 8 x 16 outputs per thread.
struct DoubleBufferLarge {
  static constexpr int kWarpsM = 4, kWarpsN = 2;
  static constexpr int kThreadM = 8, kThreadN = 16;
  static constexpr int kBlockK = 16;
  static constexpr int kStages = 3;
  static constexpr int kMinBlocksPerSm = 1;
  static constexpr int kArchLo = 800, kArchHi = 809;
};

/// double_buffer for problems too small to fill the SMs with Large tiles: 64 x 128.
struct DoubleBufferSmall {
  static constexpr int kWarpsM = 2, kWarpsN = 2;
  static constexpr int kThreadM = 8, kThreadN = 8;
  static constexpr int kBlockK = 16;
  static constexpr int kStages = 3;
  static constexpr int kMinBlocksPerSm = 2;
  static constexpr int kArchLo = 800, kArchHi = 809;
};

/// mma_multistage: 128 x 128, 8 warps of 64 x 32, 4 stages (128 KB).
struct MmaMultistage {
  static constexpr int kBlockM = 128, kBlockN = 128;
  static constexpr int kWarpsM = 2, kWarpsN = 4;
  static constexpr int kStages = 4;
  static constexpr int kArch = 800;
};

}  // namespace gpukern::cuda::gemm::sm80
