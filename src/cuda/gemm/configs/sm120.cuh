// Tile configurations of the GEMM rungs on consumer Blackwell (sm_120): about 100 KB of
// shared memory per SM, like sm_86/89, whose tiles it takes (and whose mma_multistage
// entry serves it too). Not measured on these GPUs. Each entry is a set of named fields;
// the rung's config template derives the rest.
#pragma once

#include "cuda/gemm/configs/sm86.cuh"

namespace gpukern::cuda::gemm::sm120 {

/// double_buffer: sm86::DoubleBufferLarge, compiled for the sm_120 passes.
struct DoubleBufferLarge : sm86::DoubleBufferLarge {
  static constexpr int kArchLo = 1200, kArchHi = 1299;
};

/// double_buffer: sm86::DoubleBufferSmall, compiled for the sm_120 passes.
struct DoubleBufferSmall : sm86::DoubleBufferSmall {
  static constexpr int kArchLo = 1200, kArchHi = 1299;
};

/// double_buffer: sm86::DoubleBufferTiny, compiled for the sm_120 passes.
struct DoubleBufferTiny : sm86::DoubleBufferTiny {
  static constexpr int kArchLo = 1200, kArchHi = 1299;
};

}  // namespace gpukern::cuda::gemm::sm120
