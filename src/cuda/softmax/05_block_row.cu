// CUDA softmax rung 5, `block_row`: one block per row, the row held on chip between
// the reduction and the write, so it is read from memory once, for rows too long for
// one warp's registers. Up to 2048 packs (32 KB) the row lives in registers: each
// thread loads its packs (all 16-byte loads in flight), the block merges the threads'
// (max, sum) pairs in one reduction (one barrier), and the output is written from
// registers with streaming stores. Longer rows on the 16-byte path take a hybrid layout
// (05_block_row_hybrid.cuh): part of the row in registers, the rest staged in shared
// memory by cp.async, with a register cap that lets 4 (64 KB rows) or 2 (128 KB rows)
// blocks share an SM, so that one block's exps overlap its neighbours' memory traffic.
// Beyond that, and on the scalar path, up to 8192 packs in registers, then up to the
// shared-memory opt-in limit of a block (ctx.smem_per_block_optin, 227 KB on the H100)
// staged in shared memory with the online (max, sum) computed as the vectors arrive.
// Against `warp_row` it trades shuffles for a block barrier and scales to long rows;
// against `online` it reads each row once instead of twice. The kernels:
// 05_block_row.cuh.
//
// Declines rows beyond the shared-memory limit (use split_row). Scalar path when
// pointers, strides or the row length are not 16-byte multiples. Special values as
// PyTorch (softmax_common.cuh). In place works: each element is on chip before any
// output of the row is written, by the thread that read it. Fuses batches, the input
// scale and the causal mask (a row reads only the vectors holding kept columns).
#include "cuda/softmax/05_block_row.cuh"
#include "cuda/softmax/softmax_common.cuh"
#include "cuda/softmax/softmax_rungs.cuh"

namespace gpukern::cuda::softmax {
namespace {

/// The policy's register layouts, ordered by capacity (threads x packs vectors); the
/// policy takes the first that holds the row. 4 packs a thread (64 bytes in flight) up
/// to 1024-thread-wide rows, 8 packs beyond.
constexpr BlockRowConfig kPolicyConfigs[] = {
    {.threads = 64, .packs = 1},  {.threads = 64, .packs = 2},   {.threads = 64, .packs = 4},
    {.threads = 128, .packs = 4}, {.threads = 256, .packs = 4},  {.threads = 512, .packs = 4},
    {.threads = 512, .packs = 8}, {.threads = 1024, .packs = 8},
};
constexpr int kNumPolicyConfigs = static_cast<int>(sizeof(kPolicyConfigs) / sizeof(kPolicyConfigs[0]));

constexpr bool policy_configs_valid() {
  for (int i = 0; i < kNumPolicyConfigs; ++i) {
    if (!kPolicyConfigs[i].valid()) return false;
    if (i > 0 && kPolicyConfigs[i].capacity() <= kPolicyConfigs[i - 1].capacity()) return false;
  }
  return true;
}
static_assert(policy_configs_valid(),
              "block_row policy layouts: valid (BlockRowConfig::valid), capacity strictly ascending (a layout "
              "no larger than the one before it would never be picked)");

/// Rows over 2048 vectors (32 KB) on the 16-byte path: part of the row in registers,
/// the rest staged in shared memory. First 256 x 4 vectors in registers with 4 rows an
/// SM, whose exps overlap the neighbours' traffic best (16-bit 64 KB rows); rows too
/// long for its share of shared memory take 256 x 8 with 2 rows an SM (f32 128 KB rows),
/// which measured ahead of holding those rows in registers alone.
constexpr HybridConfig kHybridFourRows{.threads = 256, .packs = 4, .min_blocks = 4};
constexpr HybridConfig kHybridTwoRows{.threads = 256, .packs = 8, .min_blocks = 2};
constexpr int64_t kHybridMinVectors = 2048;

/// What the policy picked: a register layout (index into kPolicyConfigs), the staging
/// kernel, or a hybrid layout.
enum class Path { Registers, SharedMemory, HybridFourRows, HybridTwoRows, None };
struct Pick {
  Path path;
  int config;
};

/// The policy: a hybrid layout for long rows on the 16-byte path, else the smallest
/// register layout that holds the row, else shared memory.
Pick pick_config(const core::SoftmaxArgs& args, const CudaContext& ctx) {
  if (vector_path_ok(args) && args.cols / vector_elems(args) > kHybridMinVectors) {
    if (block_row_hybrid_holds(kHybridFourRows, args, ctx)) return {Path::HybridFourRows, 0};
    if (block_row_hybrid_holds(kHybridTwoRows, args, ctx)) return {Path::HybridTwoRows, 0};
  }
  for (int i = 0; i < kNumPolicyConfigs; ++i)
    if (block_row_holds(kPolicyConfigs[i], args)) return {Path::Registers, i};
  if (block_row_smem_holds(args, ctx)) return {Path::SharedMemory, 0};
  return {Path::None, 0};
}

}  // namespace

core::Verdict block_row_supports(const core::SoftmaxArgs& args, const CudaContext& ctx) {
  if (pick_config(args, ctx).path != Path::None) return {};
  return {core::Decline::ShapeLimit,
          "row of " + std::to_string(args.cols * static_cast<int64_t>(core::dtype_size(args.dtype))) +
              " bytes exceeds block_row's registers and the shared-memory opt-in limit of " +
              std::to_string(ctx.smem_per_block_optin) + " bytes (use split_row)"};
}

void block_row_run(const core::SoftmaxArgs& args, const CudaContext& ctx) {
  const Pick pick = pick_config(args, ctx);
  if (pick.path == Path::None)
    throw core::Error(core::Status::InternalError,
                      "block_row ran a call it declines: " + block_row_supports(args, ctx).text());
  with_storage_and_width(args, [&](auto tag, auto width) {
    using T = decltype(tag);
    constexpr int V = decltype(width)::value;
    switch (pick.path) {
      case Path::Registers:
        with_index<kNumPolicyConfigs>(pick.config, [&](auto i) {
          launch_block_row<T, V, kTableEntry<kPolicyConfigs, decltype(i)::value>>(args, ctx);
        });
        break;
      case Path::SharedMemory:
        launch_block_row_smem<T, V>(args, ctx);
        break;
      case Path::HybridFourRows:
        launch_block_row_hybrid<T, V, kHybridFourRows>(args, ctx);
        break;
      case Path::HybridTwoRows:
        launch_block_row_hybrid<T, V, kHybridTwoRows>(args, ctx);
        break;
      case Path::None:
        break;
    }
  });
}

}  // namespace gpukern::cuda::softmax
