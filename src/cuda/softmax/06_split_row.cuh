// split_row's plans (rung 6, 06_split_row.cu): which path and layout run a call, as the
// policy picks them and as tests force them. The paths' kernels:
// 06_split_row_cluster.cuh (clusters) and 06_split_row_blocks.cuh (ordinary blocks).
#pragma once

#include "cuda/context.cuh"

#include <string>

namespace gpukern::cuda::softmax {

/// How a CTA holds its share of a row; Blocks is the split across ordinary blocks.
enum class SplitLayout {
  Blocks,           // two kernels over ordinary blocks (no clusters; any architecture)
  Registers512x8,   // cluster, 512 threads x 8 vectors a CTA in registers
  Registers512x16,  // cluster, 512 x 16 in registers
  HybridF32,        // cluster, 256 x 8 in registers + shared memory, 4 CTAs an SM (f32, 16-byte path)
  Hybrid16,         // cluster, 256 x 4 in registers + shared memory, 4 CTAs an SM (16-bit, 16-byte path)
  Hybrid16OneSm,    // cluster, 1024 x 4 + shared memory, one CTA an SM, pipelined statistics (16-bit, 16-byte path)
};

/// A layout and the CTAs of its cluster (0 for Blocks).
struct SplitPlan {
  SplitLayout layout = SplitLayout::Blocks;
  int cluster_size = 0;
};

inline bool operator==(SplitPlan a, SplitPlan b) { return a.layout == b.layout && a.cluster_size == b.cluster_size; }

/// "blocks", "registers512x8/c4", "hybrid16-1sm/c2" ...
std::string to_string(SplitPlan plan);

/// The plan split_row's policy picks for a call (validated by the core, not empty).
SplitPlan split_row_plan(const core::SoftmaxArgs& args, const CudaContext& ctx);

/// Runs `plan` for a call (validated, not empty) on ctx.stream exactly as given (no
/// fallback): "" when it was launched,
/// else why it cannot serve this call (nothing launched): no clusters on the device,
/// a layout for another dtype or the 16-byte path only, a cluster that does not hold
/// the row or is not a power of two up to 16, or one that does not fit on the device.
std::string split_row_run_plan(const core::SoftmaxArgs& args, const CudaContext& ctx, SplitPlan plan);

}  // namespace gpukern::cuda::softmax
