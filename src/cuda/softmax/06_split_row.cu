// CUDA softmax rung 6, `split_row`: few long rows. One block per row leaves most of the
// SMs idle when rows are few (64 rows of 262144 columns: 64 blocks on 132 SMs), and a
// row longer than a block's on-chip storage cannot be held at all. This rung splits
// each row across several CTAs:
//   * sm_90+ on the 16-byte path: a thread-block cluster per row in block_row's hybrid
//     layout (05_block_row_hybrid.cuh): each CTA holds its chunk partly in registers,
//     partly in shared memory (cp.async), reduces its (max, sum) pair, publishes it in
//     its shared memory, and after one cluster barrier every CTA merges the cluster's
//     pairs through distributed shared memory (DSMEM) and writes its chunk from chip.
//     One read, one write, one cluster barrier per row.
//   * sm_90+ on the scalar path: the same with the chunk in registers only
//     (06_split_row_cluster.cuh), 1-8 CTAs.
//   * elsewhere, and for rows beyond the largest cluster: a split across ordinary
//     blocks in two kernels (06_split_row_blocks.cuh), 1.5x the traffic of one read and
//     one write, but any shape.
// Why the clusters are faster than the split across blocks: the row is read once, and
// the merge costs one cluster barrier instead of a second kernel and a second read.
// What still separates them from a copy: a row's output cannot start before the whole
// row is on chip and reduced; with few rows the tensor is on chip in one or two waves,
// so loads, exps and stores run mostly one after the other. The 16-bit layout with one
// CTA an SM overlaps the exps of the statistics with the loads (pipelined statistics)
// and fits the 64 rows of 64x262144 in one wave.
//
// Accepts every valid call (the ladder's last resort for `auto`) and fuses batches (the
// rows of every item are rows of the grid), the input scale and the causal mask (a CTA
// or block reads only the vectors of its chunk holding kept columns). Scalar path when
// pointers, strides or the row length are not 16-byte multiples. Special values as
// PyTorch (softmax_common.cuh: pairs from chunks of only -inf carry sum 0). In place
// works: every chunk is on chip (cluster) or fully reduced by the first kernel
// (split across blocks) before the same thread overwrites it.
#include "cuda/softmax/06_split_row.cuh"
#include "cuda/softmax/06_split_row_blocks.cuh"
#include "cuda/softmax/06_split_row_cluster.cuh"
#include "cuda/softmax/softmax_common.cuh"
#include "cuda/softmax/softmax_rungs.cuh"

#include <type_traits>

namespace gpukern::cuda::softmax {
namespace {

// ----- the layouts the policy uses -----

constexpr ClusterConfig kRegisters512x8{.threads = 512, .packs = 8};
constexpr ClusterConfig kRegisters512x16{.threads = 512, .packs = 16};

/// f32: 256 x 8 in registers, the rest staged, 4 CTAs an SM.
constexpr HybridConfig kHybridF32{.threads = 256, .packs = 8, .min_blocks = 4};
/// 16-bit, rows too few to fill half the SMs with Hybrid16OneSm's clusters: 256 x 4 in
/// registers, 4 CTAs an SM, which spreads them over more SMs.
constexpr HybridConfig kHybrid16{.threads = 256, .packs = 4, .min_blocks = 4};
/// 16-bit: one 1024-thread CTA an SM holding 16384 vectors (64 KB in registers, 192 KB
/// staged), so a 512 KB row takes a cluster of 2 and the 64 rows of 64x262144 fit the
/// H100 at once, where clusters of 8 CTAs at 4 an SM leave 2 of them to a second wave.
/// The statistics are pipelined 4 vectors a thread ahead of the copies, whose L2 lines
/// are evict_first (05_block_row_hybrid.cuh, copy_vec).
constexpr HybridConfig kHybrid16OneSm{.threads = 1024, .packs = 4, .min_blocks = 1, .depth = 4};

bool is_hybrid(SplitLayout l) {
  return l == SplitLayout::HybridF32 || l == SplitLayout::Hybrid16 || l == SplitLayout::Hybrid16OneSm;
}

/// Vectors a CTA of layout `l` holds (0 for Blocks).
int64_t layout_capacity(SplitLayout l, const CudaContext& ctx) {
  switch (l) {
    case SplitLayout::Registers512x8:
      return kRegisters512x8.capacity();
    case SplitLayout::Registers512x16:
      return kRegisters512x16.capacity();
    case SplitLayout::HybridF32:
      return hybrid_capacity(ctx, kHybridF32);
    case SplitLayout::Hybrid16:
      return hybrid_capacity(ctx, kHybrid16);
    case SplitLayout::Hybrid16OneSm:
      return hybrid_capacity(ctx, kHybrid16OneSm);
    case SplitLayout::Blocks:
      break;
  }
  return 0;
}

// ----- policy -----

/// The register plan: the smallest cluster of at most 8 CTAs that holds the row, with
/// 512 x 8 vectors a CTA, then 512 x 16; the split across blocks when none holds it.
SplitPlan register_plan(const core::SoftmaxArgs& args, const CudaContext& ctx) {
  for (SplitLayout l : {SplitLayout::Registers512x8, SplitLayout::Registers512x16}) {
    const int size = min_cluster_holding(args, layout_capacity(l, ctx));
    if (size <= kMaxPortableCluster) return {l, size};
  }
  return {SplitLayout::Blocks, 0};
}

/// Launches `plan`; false when nothing was launched because a cluster of a non-portable
/// size does not fit on the device.
bool launch_plan(const core::SoftmaxArgs& args, const CudaContext& ctx, SplitPlan plan) {
  const bool vec = vector_path_ok(args);
  bool ran = true;
  with_storage_type(args.dtype, [&](auto tag) {
    using T = decltype(tag);
    constexpr int kV = kVectorElems<T>;
#if defined(GPUKERN_CUDA)
    switch (plan.layout) {
      case SplitLayout::Registers512x8:
        ran = vec ? launch_register_cluster<T, kV, kRegisters512x8>(args, ctx, plan.cluster_size)
                  : launch_register_cluster<T, 1, kRegisters512x8>(args, ctx, plan.cluster_size);
        return;
      case SplitLayout::Registers512x16:
        ran = vec ? launch_register_cluster<T, kV, kRegisters512x16>(args, ctx, plan.cluster_size)
                  : launch_register_cluster<T, 1, kRegisters512x16>(args, ctx, plan.cluster_size);
        return;
      case SplitLayout::HybridF32:
        if constexpr (std::is_same_v<T, float>)
          ran = launch_hybrid_cluster<T, kV, kHybridF32>(args, ctx, plan.cluster_size);
        return;
      case SplitLayout::Hybrid16:
        if constexpr (!std::is_same_v<T, float>)
          ran = launch_hybrid_cluster<T, kV, kHybrid16>(args, ctx, plan.cluster_size);
        return;
      case SplitLayout::Hybrid16OneSm:
        if constexpr (!std::is_same_v<T, float>)
          ran = launch_hybrid_cluster<T, kV, kHybrid16OneSm>(args, ctx, plan.cluster_size);
        return;
      case SplitLayout::Blocks:
        break;
    }
#else
    (void)plan;  // no clusters on HIP: every plan is the split across blocks
#endif
    if (vec)
      launch_split_blocks<T, kV>(args, ctx);
    else
      launch_split_blocks<T, 1>(args, ctx);
  });
  return ran;
}

}  // namespace

std::string to_string(SplitPlan plan) {
  const char* name = "blocks";
  switch (plan.layout) {
    case SplitLayout::Blocks:
      return name;
    case SplitLayout::Registers512x8:
      name = "registers512x8";
      break;
    case SplitLayout::Registers512x16:
      name = "registers512x16";
      break;
    case SplitLayout::HybridF32:
      name = "hybrid-f32";
      break;
    case SplitLayout::Hybrid16:
      name = "hybrid16";
      break;
    case SplitLayout::Hybrid16OneSm:
      name = "hybrid16-1sm";
      break;
  }
  return std::string(name) + "/c" + std::to_string(plan.cluster_size);
}

/// The policy: on sm_90+ with the 16-byte path, the hybrid cluster kernel with the
/// smallest cluster that holds the row. f32: HybridF32 (ahead of 256 x 4 + shared
/// memory and of the register plan; its pipelined form measured the same). 16-bit:
/// Hybrid16OneSm when its clusters (at most 8 CTAs) cover at least half the SMs (ahead
/// of deeper pipelines and of 256 x 4 + shared memory at 4 CTAs an SM), else Hybrid16.
/// The register plan without the 16-byte path or beyond 16 CTAs; before sm_90, the
/// split across blocks.
SplitPlan split_row_plan(const core::SoftmaxArgs& args, const CudaContext& ctx) {
  if (!ctx.cluster_launch) return {SplitLayout::Blocks, 0};
  if (vector_path_ok(args)) {
    if (args.dtype != core::DType::F32) {
      const int size = min_cluster_holding(args, layout_capacity(SplitLayout::Hybrid16OneSm, ctx));
      if (size <= kMaxPortableCluster && total_rows(args) * size >= ctx.sm_count / 2)
        return {SplitLayout::Hybrid16OneSm, size};
    }
    const SplitLayout layout = args.dtype == core::DType::F32 ? SplitLayout::HybridF32 : SplitLayout::Hybrid16;
    const int size = min_cluster_holding(args, layout_capacity(layout, ctx));
    if (size <= kMaxCluster) return {layout, size};
  }
  return register_plan(args, ctx);
}

std::string split_row_run_plan(const core::SoftmaxArgs& args, const CudaContext& ctx, SplitPlan plan) {
  if (plan.layout != SplitLayout::Blocks) {
    if (!ctx.cluster_launch) return "no thread-block clusters on this device (sm_90 and later)";
    const int size = plan.cluster_size;
    if (size < 1 || size > kMaxCluster || (size & (size - 1)) != 0)
      return "cluster size " + std::to_string(size) + " is not a power of two from 1 to " + std::to_string(kMaxCluster);
    if (is_hybrid(plan.layout)) {
      if (!vector_path_ok(args)) return "the hybrid layouts need the 16-byte path";
      if ((plan.layout == SplitLayout::HybridF32) != (args.dtype == core::DType::F32))
        return to_string(plan) + " is not built for " + core::dtype_name(args.dtype);
    }
    if (min_cluster_holding(args, layout_capacity(plan.layout, ctx)) > size)
      return "a row does not fit " + std::to_string(size) + " CTAs of " + to_string(plan);
  }
  if (!launch_plan(args, ctx, plan))
    return "no cluster of " + std::to_string(plan.cluster_size) + " fits on the device";
  return {};
}

core::Verdict split_row_supports(const core::SoftmaxArgs& args, const CudaContext& ctx) {
  // The clusters take any row a plan picks; the split across blocks (the plan before
  // sm_90, or the fallback beyond a cluster's capacity) gives each block a chunk of
  // kSplitBlockChunkVecs vectors, and a launch holds at most kMaxGridBlocks of them.
  if (split_row_plan(args, ctx).layout != SplitLayout::Blocks && register_plan(args, ctx).layout != SplitLayout::Blocks)
    return {};
  const int64_t elems = vector_path_ok(args) ? kVectorBytes / static_cast<int64_t>(core::dtype_size(args.dtype)) : 1;
  if (ceil_div<int64_t>(args.cols / elems, kSplitBlockChunkVecs) <= kMaxGridBlocks) return {};
  return {core::Decline::ShapeLimit, "row of " + std::to_string(args.cols) + " elements needs more than " +
                                         std::to_string(kMaxGridBlocks) + " blocks of the split across blocks"};
}

void split_row_run(const core::SoftmaxArgs& args, const CudaContext& ctx) {
  // A non-portable cluster that does not fit on the device falls back to the register plan.
  if (!launch_plan(args, ctx, split_row_plan(args, ctx))) launch_plan(args, ctx, register_plan(args, ctx));
}

}  // namespace gpukern::cuda::softmax
