// The table rows of the SIMT GEMM rungs 01-08, which the CUDA ladder (ladder.cu) and the
// HIP ladder (src/hip/ladders.hip) both list: one definition of each rung's name,
// description, dtypes and entry points. Neither module's auto picks them by default
// (kNeverAuto); a table that does ranks them with core::ranked.
#pragma once

#include "cuda/gemm/gemm_rungs.cuh"

namespace gpukern::cuda::gemm {

inline constexpr uint32_t kF32 = core::kMaskF32;
inline constexpr core::RungKind kLadder = core::RungKind::Ladder;

/// A row of the SIMT ladder: f32 only, every architecture, never picked by auto.
constexpr GemmRung simt_row(const char* name, const char* description,
                            core::Verdict (*supports)(const core::GemmArgs&, const CudaContext&),
                            void (*run)(const core::GemmArgs&, const CudaContext&)) {
  return GemmRung{name, description, kF32, {}, kLadder, supports, run, core::kNeverAuto};
}

inline constexpr GemmRung kNaiveRow =
    simt_row("naive", "one thread per output, threads walk rows (uncoalesced)", naive_supports, naive_run);
inline constexpr GemmRung kCoalescedRow =
    simt_row("coalesced", "one thread per output, a warp spans consecutive columns", coalesced_supports, coalesced_run);
inline constexpr GemmRung kSmemTiledRow =
    simt_row("smem_tiled", "32x32 tiles of A and B staged in shared memory", smem_tiled_supports, smem_tiled_run);
inline constexpr GemmRung kBlocktile1dRow = simt_row(
    "blocktile_1d", "64x64 block tile, 8 outputs per thread in a column", blocktile_1d_supports, blocktile_1d_run);
inline constexpr GemmRung kBlocktile2dRow =
    simt_row("blocktile_2d", "128x128 block tile, 8x8 outputs per thread (outer products)", blocktile_2d_supports,
             blocktile_2d_run);
inline constexpr GemmRung kVectorizedRow =
    simt_row("vectorized", "16-byte global loads, A transposed in shared memory, 16-byte shared loads",
             vectorized_supports, vectorized_run);
inline constexpr GemmRung kRectTileRow = simt_row(
    "rect_tile", "64x64 block tile, 8x4 rectangular register tile per thread", rect_tile_supports, rect_tile_run);
inline constexpr GemmRung kWarptileRow =
    simt_row("warptile", "warp tiles of 32x64, interleaved 4x4 sub-tiles: conflict-free shared loads",
             warptile_supports, warptile_run);

}  // namespace gpukern::cuda::gemm
