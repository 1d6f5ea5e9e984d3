// The CUDA softmax ladder as data: every rung in ladder order (naive first, the cuDNN
// reference last), and auto's preference for a call.
#include "cuda/context.cuh"
#include "cuda/softmax/softmax_rungs.cuh"

namespace gpukern::cuda {

const core::Ladder<core::SoftmaxArgs, CudaContext>& softmax_ladder() {
  using namespace softmax;
  constexpr uint32_t kAll = core::kMaskF32 | core::kMaskF16 | core::kMaskBF16;
  static const core::Ladder<core::SoftmaxArgs, CudaContext> table = {
      {"naive", "one thread per row, three passes (max, sum, output), scalar loads", kAll, 0, "", false,
       naive_supports, naive_run},
      {"safe_3pass", "one block per row, three coalesced passes, block reductions", kAll, 0, "", false,
       safe_3pass_supports, safe_3pass_run},
      {"online", "one block per row, two passes: running max with rescaled sum, then output", kAll, 0, "", false,
       online_supports, online_run},
      {"warp_row", "lanes of one warp per row, row in registers (one read), shuffle reductions", kAll, 0, "", false,
       warp_row_supports, warp_row_run},
      {"block_row", "one block per row, row in registers or shared memory (one read)", kAll, 0, "", false,
       block_row_supports, block_row_run},
      {"split_row", "long rows split across a thread-block cluster (DSMEM merge) or across blocks", kAll, 0, "",
       false, split_row_supports, split_row_run},
#if defined(GPUKERN_CUDA)
      {"cudnn", "cuDNN cudnnSoftmaxForward (vendor reference, loaded at run time)", kAll, 0, "", true,
       cudnn_supports, cudnn_run},
#endif
  };
  return table;
}

std::vector<std::string> softmax_auto_order(const core::SoftmaxArgs& args, const CudaContext& ctx) {
  using namespace softmax;
  // Thresholds from the H100 sweep of 2026-11-21 (src/cuda/softmax/dev/NOTES.md).
  const int64_t row_bytes = args.cols * static_cast<int64_t>(core::dtype_size(args.dtype));
  // Short rows: a few lanes per row, several rows per warp, shuffles only (65536x128:
  // warp_row 2.31-2.57 TB/s, block_row 0.54). At 2-4 KB rows block_row is level or ahead.
  if (args.cols <= warp_row_max_cols(args) && row_bytes <= 1024) return {"warp_row", "block_row", "split_row"};
  // Few long rows: one block per row would leave SMs idle; clusters split each row
  // (64x262144 has no other rung). At 1024 rows block_row wins (1024x32768: f32 2.80
  // against 2.68 TB/s, f16 2.68 against 2.43), so only rows fewer than two per SM go
  // to split_row first.
  const bool few_rows = args.rows < 2 * static_cast<int64_t>(ctx.sm_count);
  if (ctx.cluster_launch && few_rows && row_bytes >= 32 * 1024) return {"split_row"};
  // Medium rows: a block per row, in registers or shared memory; split_row takes the rest.
  return {"block_row", "split_row"};
}

}  // namespace gpukern::cuda
