// Tile configurations of the GEMM rungs on GeForce Ampere and Ada (sm_86, sm_89): about
// 100 KB of shared memory per SM and 1536 threads. Not measured on these GPUs.
// Each entry is a set of named fields; the rung's config template derives the rest.
#pragma once

#include "cuda/gemm/configs/sm90.cuh"

namespace gpukern::cuda::gemm::sm86 {

/// double_buffer, the throughput tile: 128 x 256 with K = 8 per stage, which keeps the
/// stages (38 KB per block) small next to the L1 carve-out.
struct DoubleBufferLarge {
  static constexpr int kWarpsM = 4, kWarpsN = 2;
  static constexpr int kThreadM = 8, kThreadN = 16;
  static constexpr int kBlockK = 8;
  static constexpr int kStages = 3;
  static constexpr int kMinBlocksPerSm = 1;
  static constexpr int kArchLo = 860, kArchHi = 899;
};

/// double_buffer for problems too small to fill the SMs with Large tiles: 64 x 128.
struct DoubleBufferSmall {
  static constexpr int kWarpsM = 2, kWarpsN = 2;
  static constexpr int kThreadM = 8, kThreadN = 8;
  static constexpr int kBlockK = 8;
  static constexpr int kStages = 3;
  static constexpr int kMinBlocksPerSm = 2;
  static constexpr int kArchLo = 860, kArchHi = 899;
};

/// double_buffer for calls whose Small tiles would leave a quarter of the SMs idle:
/// sm90::DoubleBufferTiny (16 x 32, each stage's K steps split over four warps, 21 KB).
struct DoubleBufferTiny : sm90::DoubleBufferTiny {
  static constexpr int kArchLo = 860, kArchHi = 899;
};

/// mma_multistage: 128 x 128, 8 warps of 64 x 32, 3 stages (96 KB, within the ~99 KB a
/// block may use). kArch = 0: compiled for every device pass without an entry of its own
/// (sm_86, sm_89, sm_120 and later), and used on all of them.
struct MmaMultistage {
  static constexpr int kBlockM = 128, kBlockN = 128;
  static constexpr int kWarpsM = 2, kWarpsN = 4;
  static constexpr int kStages = 3;
  static constexpr int kArch = 0;
};

}  // namespace gpukern::cuda::gemm::sm86
