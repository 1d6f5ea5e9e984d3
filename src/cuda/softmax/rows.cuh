// The table rows of softmax rungs 1-6 and auto's policy among them, which the CUDA
// ladder (ladder.cu) and the HIP ladder (src/hip/ladders.hip) both list.
#pragma once

#include "cuda/softmax/softmax_rungs.cuh"

namespace gpukern::cuda::softmax {

/// Short rows (warp_row holds them and they are at most 3 KB): a few lanes per row,
/// several rows per warp, shuffles only. 16-bit rows of 1.5-3 KB (attention's scores at
/// S = 1024) ran faster there than in block_row's one block a row, f32 level; at 4 KB
/// block_row is ahead (notes/cuda-softmax.md, "Where auto's boundaries lie").
inline bool short_rows(const core::SoftmaxArgs& args, const CudaContext&) {
  const int64_t row_bytes = args.cols * static_cast<int64_t>(core::dtype_size(args.dtype));
  return args.cols <= warp_row_max_cols(args) && row_bytes <= 3 * 1024;
}

/// Few long rows (fewer than one per SM, 128 KB or more each) on a GPU with clusters:
/// block_row's one block a row would leave SMs idle and stage the row in shared memory,
/// so split_row splits each row across a cluster. Rows of 32-64 KB, and as many rows as
/// SMs, ran faster in block_row.
inline bool few_long_rows(const core::SoftmaxArgs& args, const CudaContext& ctx) {
  const int64_t row_bytes = args.cols * static_cast<int64_t>(core::dtype_size(args.dtype));
  // The rows of every batch item (the rungs fuse batches into one grid).
  const int64_t rows = args.rows * args.batch;
  return ctx.cluster_launch && rows < static_cast<int64_t>(ctx.sm_count) && row_bytes >= 128 * 1024;
}
inline bool not_few_long_rows(const core::SoftmaxArgs& args, const CudaContext& ctx) {
  return !few_long_rows(args, ctx);
}

inline constexpr uint32_t kAll = core::kMaskF32 | core::kMaskF16 | core::kMaskBF16;
inline constexpr core::RungKind kLadder = core::RungKind::Ladder;
/// Every rung 1-6 fuses batches (a grid over the rows of every item), the input scale
/// and the causal mask.
inline constexpr uint32_t kFusesAll = core::kFuseBatch | core::kFuseScale | core::kFuseCausal;

/// A row of this ladder: every dtype, every architecture, fusing batches, scale and mask.
/// `auto_rank` and `auto_when` as in core::Rung (kNeverAuto: auto never tries it).
constexpr SoftmaxRung ladder_row(const char* name, const char* description,
                                 core::Verdict (*supports)(const core::SoftmaxArgs&, const CudaContext&),
                                 void (*run)(const core::SoftmaxArgs&, const CudaContext&), int auto_rank,
                                 bool (*auto_when)(const core::SoftmaxArgs&, const CudaContext&) = nullptr) {
  return core::fusing(SoftmaxRung{name, description, kAll, {}, kLadder, supports, run, auto_rank, auto_when},
                      kFusesAll);
}

// Auto: warp_row for short rows, block_row (a block per row, registers or shared
// memory) unless the rows are few and long, then split_row, which takes every call
// short of rows of billions of elements on its split across blocks.
inline constexpr SoftmaxRung kNaiveRow = ladder_row(
    "naive", "one thread per row, three passes (max, sum, output), scalar loads", nullptr, naive_run, core::kNeverAuto);
inline constexpr SoftmaxRung kSafe3PassRow =
    ladder_row("safe_3pass", "one block per row, three coalesced passes, block reductions", nullptr, safe_3pass_run,
               core::kNeverAuto);
inline constexpr SoftmaxRung kOnlineRow =
    ladder_row("online", "one block per row, two passes: running max with rescaled sum, then output", nullptr,
               online_run, core::kNeverAuto);
inline constexpr SoftmaxRung kWarpRowRow =
    ladder_row("warp_row", "lanes of one warp per row, row in registers (one read), shuffle reductions",
               warp_row_supports, warp_row_run, 0, short_rows);
inline constexpr SoftmaxRung kBlockRowRow =
    ladder_row("block_row", "one block per row, row in registers or shared memory (one read)", block_row_supports,
               block_row_run, 1, not_few_long_rows);
inline constexpr SoftmaxRung kSplitRowRow =
    ladder_row("split_row", "long rows split across a thread-block cluster (DSMEM merge) or across blocks",
               split_row_supports, split_row_run, 2);

}  // namespace gpukern::cuda::softmax
