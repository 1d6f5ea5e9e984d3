// Tile configurations of the GEMM rungs on consumer Blackwell (sm_120): about 100 KB of
// shared memory per SM, like sm_86/89 (whose mma_multistage entry it shares). Not
// measured on these GPUs. Each entry is a set of named fields; the rung's config
// template derives the rest.
#pragma once

namespace gpukern::cuda::gemm::sm120 {

/// double_buffer, the throughput tile: 128 x 256 with K = 8 per stage.
struct DoubleBufferLarge {
  static constexpr int kWarpsM = 4, kWarpsN = 2;
  static constexpr int kThreadM = 8, kThreadN = 16;
  static constexpr int kBlockK = 8;
  static constexpr int kStages = 3;
  static constexpr int kMinBlocksPerSm = 1;
  static constexpr int kArchLo = 1200, kArchHi = 1299;
};

/// double_buffer for problems too small to fill the SMs with Large tiles: 64 x 128.
struct DoubleBufferSmall {
  static constexpr int kWarpsM = 2, kWarpsN = 2;
  static constexpr int kThreadM = 8, kThreadN = 8;
  static constexpr int kBlockK = 8;
  static constexpr int kStages = 3;
  static constexpr int kMinBlocksPerSm = 2;
  static constexpr int kArchLo = 1200, kArchHi = 1299;
};

}  // namespace gpukern::cuda::gemm::sm120
