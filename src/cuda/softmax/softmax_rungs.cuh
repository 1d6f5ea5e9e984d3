// Entry points of every CUDA softmax rung and the cuDNN reference (one file each in this
// folder); ladder.cu puts them into the table. The naming every backend uses:
// `<rung>_supports` (accepts, or a typed reason to decline a core-validated call; only
// rungs that can decline have one) and `<rung>_run` (launches an accepted, non-empty
// call on ctx.stream).
#pragma once

#include "cuda/context.cuh"

#include <string>

namespace gpukern::cuda::softmax {

void naive_run(const core::SoftmaxArgs& args, const CudaContext& ctx);                   // 01_naive.cu
void safe_3pass_run(const core::SoftmaxArgs& args, const CudaContext& ctx);              // 02_safe_3pass.cu
void online_run(const core::SoftmaxArgs& args, const CudaContext& ctx);                  // 03_online.cu
core::Verdict warp_row_supports(const core::SoftmaxArgs& args, const CudaContext& ctx);  // 04_warp_row.cu
void warp_row_run(const core::SoftmaxArgs& args, const CudaContext& ctx);
core::Verdict block_row_supports(const core::SoftmaxArgs& args, const CudaContext& ctx);  // 05_block_row.cu
void block_row_run(const core::SoftmaxArgs& args, const CudaContext& ctx);
core::Verdict split_row_supports(const core::SoftmaxArgs& args, const CudaContext& ctx);
void split_row_run(const core::SoftmaxArgs& args, const CudaContext& ctx);            // 06_split_row.cu
core::Verdict cudnn_supports(const core::SoftmaxArgs& args, const CudaContext& ctx);  // cudnn.cu (the reference)
void cudnn_run(const core::SoftmaxArgs& args, const CudaContext& ctx);

/// Longest row (in elements) that warp_row holds in registers for this call's dtype
/// and vector path; auto_order uses it to route short rows.
int64_t warp_row_max_cols(const core::SoftmaxArgs& args);

}  // namespace gpukern::cuda::softmax
