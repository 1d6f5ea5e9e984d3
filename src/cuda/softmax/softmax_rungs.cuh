// Entry points of every CUDA softmax rung (one file each in this folder); ladder.cu
// puts them into the table. `*_supports` returns "" or the reason the rung declines a
// (core-validated) call; `*_run` launches on ctx.stream. rows == 0 or cols == 0 is a
// no-op in every rung.
#pragma once

#include "cuda/context.cuh"

#include <string>

namespace gpukern::cuda::softmax {

#define GK_DECLARE_SOFTMAX_RUNG(name)                                                   \
  std::string name##_supports(const core::SoftmaxArgs& args, const CudaContext& ctx); \
  void name##_run(const core::SoftmaxArgs& args, const CudaContext& ctx)

GK_DECLARE_SOFTMAX_RUNG(naive);       // 01_naive.cu
GK_DECLARE_SOFTMAX_RUNG(safe_3pass);  // 02_safe_3pass.cu
GK_DECLARE_SOFTMAX_RUNG(online);      // 03_online.cu
GK_DECLARE_SOFTMAX_RUNG(warp_row);    // 04_warp_row.cu
GK_DECLARE_SOFTMAX_RUNG(block_row);   // 05_block_row.cu
GK_DECLARE_SOFTMAX_RUNG(split_row);   // 06_split_row.cu
GK_DECLARE_SOFTMAX_RUNG(cudnn);       // cudnn.cu (the reference)

#undef GK_DECLARE_SOFTMAX_RUNG

/// Longest row (in elements) that warp_row holds in registers for this call's dtype
/// and vector path; auto_order uses it to route short rows.
int64_t warp_row_max_cols(const core::SoftmaxArgs& args);

}  // namespace gpukern::cuda::softmax
