// The table rows of the SIMT GEMM rungs 01-08, which the CUDA ladder (ladder.cu) and the
// HIP ladder (src/hip/ladders.hip) both list: one definition of each rung's name,
// description, dtypes and entry points. Neither module's auto picks them by default
// (kNeverAuto); a table that does ranks them with core::ranked.
#pragma once

#include "cuda/gemm/gemm_rungs.cuh"

namespace gpukern::cuda::gemm {

inline constexpr uint32_t kF32 = core::kMaskF32;
inline constexpr core::RungKind kLadder = core::RungKind::Ladder;

inline constexpr GemmRung kNaiveRow = {"naive",   "one thread per output, threads walk rows (uncoalesced)",
                                       kF32,      {},
                                       kLadder,   naive_supports,
                                       naive_run, core::kNeverAuto};
inline constexpr GemmRung kCoalescedRow = {"coalesced",   "one thread per output, a warp spans consecutive columns",
                                           kF32,          {},
                                           kLadder,       coalesced_supports,
                                           coalesced_run, core::kNeverAuto};
inline constexpr GemmRung kSmemTiledRow = {"smem_tiled",   "32x32 tiles of A and B staged in shared memory",
                                           kF32,           {},
                                           kLadder,        smem_tiled_supports,
                                           smem_tiled_run, core::kNeverAuto};
inline constexpr GemmRung kBlocktile1dRow = {"blocktile_1d",
                                             "64x64 block tile, 8 outputs per thread in a column",
                                             kF32,
                                             {},
                                             kLadder,
                                             blocktile_1d_supports,
                                             blocktile_1d_run,
                                             core::kNeverAuto};
inline constexpr GemmRung kBlocktile2dRow = {"blocktile_2d",
                                             "128x128 block tile, 8x8 outputs per thread (outer products)",
                                             kF32,
                                             {},
                                             kLadder,
                                             blocktile_2d_supports,
                                             blocktile_2d_run,
                                             core::kNeverAuto};
inline constexpr GemmRung kVectorizedRow = {
    "vectorized",   "16-byte global loads, A transposed in shared memory, 16-byte shared loads",
    kF32,           {},
    kLadder,        vectorized_supports,
    vectorized_run, core::kNeverAuto};
inline constexpr GemmRung kRectTileRow = {"rect_tile",   "64x64 block tile, 8x4 rectangular register tile per thread",
                                          kF32,          {},
                                          kLadder,       rect_tile_supports,
                                          rect_tile_run, core::kNeverAuto};
inline constexpr GemmRung kWarptileRow = {
    "warptile",   "warp tiles of 32x64, interleaved 4x4 sub-tiles: conflict-free shared loads",
    kF32,         {},
    kLadder,      warptile_supports,
    warptile_run, core::kNeverAuto};

}  // namespace gpukern::cuda::gemm
