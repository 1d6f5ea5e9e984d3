// Entry points of every CUDA softmax rung and the cuDNN reference (one file each in this
// folder); ladder.cu puts them into the table. The naming every backend uses:
// `<rung>_supports` (accepts, or a typed reason to decline a core-validated call; only
// rungs that can decline have one) and `<rung>_run` (launches an accepted, non-empty
// call on ctx.stream).
//
// The tunable rungs also expose their configuration tables by index, for the
// development driver (src/cuda/softmax/dev) that measures every configuration; the
// ladder itself only ever uses each rung's own policy (config = -1).
#pragma once

#include "cuda/context.cuh"

#include <string>
#include <vector>

namespace gpukern::cuda::softmax {

void naive_run(const core::SoftmaxArgs& args, const CudaContext& ctx);       // 01_naive.cu
void safe_3pass_run(const core::SoftmaxArgs& args, const CudaContext& ctx);  // 02_safe_3pass.cu
void online_run(const core::SoftmaxArgs& args, const CudaContext& ctx);      // 03_online.cu
core::Verdict warp_row_supports(const core::SoftmaxArgs& args, const CudaContext& ctx);  // 04_warp_row.cu
void warp_row_run(const core::SoftmaxArgs& args, const CudaContext& ctx);
core::Verdict block_row_supports(const core::SoftmaxArgs& args, const CudaContext& ctx);  // 05_block_row.cu
void block_row_run(const core::SoftmaxArgs& args, const CudaContext& ctx);
void split_row_run(const core::SoftmaxArgs& args, const CudaContext& ctx);  // 06_split_row.cu
core::Verdict cudnn_supports(const core::SoftmaxArgs& args, const CudaContext& ctx);  // cudnn.cu (the reference)
void cudnn_run(const core::SoftmaxArgs& args, const CudaContext& ctx);

/// Longest row (in elements) that warp_row holds in registers for this call's dtype
/// and vector path; auto_order uses it to route short rows.
int64_t warp_row_max_cols(const core::SoftmaxArgs& args);
/// Longest row block_row holds in registers (beyond it, shared memory up to the opt-in limit).
int64_t block_row_register_cols(const core::SoftmaxArgs& args);

/// Configurations by index, for the development driver. `*_config_names` lists them;
/// `*_run_config` runs one, or returns the reason it cannot hold this call.
std::vector<std::string> warp_row_config_names();
std::string warp_row_run_config(const core::SoftmaxArgs& args, const CudaContext& ctx, int config);
std::vector<std::string> block_row_config_names();
std::string block_row_run_config(const core::SoftmaxArgs& args, const CudaContext& ctx, int config);
/// split_row: a configuration -- register cluster kernel "TxP", streaming kernel "tTsS",
/// hybrid "TxP+sB[/dN]" or grid-pipelined "gTrRsSlL" (16-byte path only; cluster must be
/// 0) -- and a cluster size (1, 2, 4, 8, 16; 0 = the smallest that holds the row);
/// cluster < 0 forces the split across blocks without clusters.
std::vector<std::string> split_row_config_names();
std::string split_row_run_config(const core::SoftmaxArgs& args, const CudaContext& ctx, int config, int cluster);

}  // namespace gpukern::cuda::softmax
