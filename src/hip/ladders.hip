// The HIP module's ladders: the SIMT GEMM rungs and softmax rungs compiled from
// src/cuda (one row definition each, shared with the CUDA tables), plus the AMD-only
// mfma rung. No vendor library: auto's lists end with a rung that takes every call.
#include "cuda/gemm/simt_rows.cuh"
#include "cuda/softmax/rows.cuh"
#include "hip/gemm/mfma.hpp"

namespace gpukern::cuda {

// Not measured on AMD hardware: the order is the H100 ladder's among the rungs HIP
// builds. f16/bf16 have only the matrix cores (no rung for them on RDNA); f32 (and
// tf32, run exactly) takes the warp-tiled rung, then blocktile_2d for unaligned
// operands, then naive, which takes every f32 call.
const GemmLadder& gemm_ladder() {
  using namespace gemm;
  using core::ranked;
  static const GemmLadder table = {
      ranked(kNaiveRow, 3),
      kCoalescedRow,
      kSmemTiledRow,
      kBlocktile1dRow,
      ranked(kBlocktile2dRow, 2),
      kVectorizedRow,
      kRectTileRow,
      ranked(kWarptileRow, 1),
      {"mfma",
       "MFMA 32x32x8 matrix cores (CDNA: gfx90a, gfx940), f32 accumulation",
       core::kMaskF16 | core::kMaskBF16,
       {0, 0, hip::has_matrix_cores, "CDNA (gfx90a, gfx940)"},
       kLadder,
       hip::mfma_supports,
       hip::mfma_run,
       0},
  };
  return table;
}

// The CUDA policy among rungs 1-6; without clusters split_row splits rows across blocks.
const SoftmaxLadder& softmax_ladder() {
  using namespace softmax;
  static const SoftmaxLadder table = {kNaiveRow, kSafe3PassRow, kOnlineRow, kWarpRowRow, kBlockRowRow, kSplitRowRow};
  return table;
}

}  // namespace gpukern::cuda
