// CUDA softmax rung 4, `warp_row`: a row is read from memory once. A group of lanes of
// one warp (1 to 32 lanes, by row length) loads the whole row into registers with all
// of its 16-byte loads in flight at once, reduces (max, sum) with shuffles inside the
// group (no shared memory, no barrier), and writes the output from the registers with
// streaming stores. Against `online` this halves the bytes read (one read instead of
// two) and removes the block barrier; for f32 the exps computed for the sum are kept in
// the registers, so the output costs one multiply per element.
// Short rows pack several rows per warp (e.g. 128 f32 columns: 8 lanes x 4 vectors per
// row, 4 rows per warp), so even 512-byte rows keep 64 bytes per thread in flight.
// The kernel: 04_warp_row.cuh.
//
// Declines rows longer than its register capacity, 512 packs a row: 2048 f32 or 4096
// f16/bf16 columns on the 16-byte path, 512 elements on the scalar path.
// Scalar path when pointers, strides or the row length are not 16-byte multiples.
// Special values as PyTorch (softmax_common.cuh). In place works: each element is read
// into a register before any output is written, by the same thread. Fuses batches (the
// rows of every item are rows of the grid), the input scale and the causal mask (a row
// loads only the vectors holding kept columns).
#include "cuda/softmax/04_warp_row.cuh"
#include "cuda/softmax/softmax_common.cuh"
#include "cuda/softmax/softmax_rungs.cuh"

namespace gpukern::cuda::softmax {
namespace {

constexpr int kNumPolicyConfigs = static_cast<int>(sizeof(kWarpRowPolicy) / sizeof(kWarpRowPolicy[0]));

constexpr bool policy_configs_valid() {
  for (int i = 0; i < kNumPolicyConfigs; ++i) {
    const WarpRowConfig c = kWarpRowPolicy[i];
    if (!c.valid() || c.vector_only()) return false;  // the policy serves the scalar path too
    if (i > 0 && c.capacity() < kWarpRowPolicy[i - 1].capacity()) return false;
  }
  return true;
}
static_assert(policy_configs_valid(),
              "warp_row policy layouts: valid (WarpRowConfig::valid), none 16-byte-only (the policy serves the "
              "scalar path too), ascending capacity");

constexpr int64_t kMaxVectors = kWarpRowPolicy[kNumPolicyConfigs - 1].capacity();

/// The policy: the smallest layout that holds the row; -1 when none does.
int pick_config(const core::SoftmaxArgs& args) {
  for (int i = 0; i < kNumPolicyConfigs; ++i)
    if (warp_row_holds(kWarpRowPolicy[i], args)) return i;
  return -1;
}

}  // namespace

int64_t warp_row_max_cols(const core::SoftmaxArgs& args) { return kMaxVectors * vector_elems(args); }

core::Verdict warp_row_supports(const core::SoftmaxArgs& args, const CudaContext&) {
  if (args.cols <= warp_row_max_cols(args)) return {};
  return {core::Decline::ShapeLimit, "row of " + std::to_string(args.cols) +
                                         " elements exceeds warp_row's register capacity of " +
                                         std::to_string(warp_row_max_cols(args)) +
                                         (vector_path_ok(args) ? "" : " on the scalar path") + " (use block_row)"};
}

void warp_row_run(const core::SoftmaxArgs& args, const CudaContext& ctx) {
  const int index = pick_config(args);
  if (index < 0)
    throw core::Error(core::Status::InternalError,
                      "warp_row ran a call it declines: " + warp_row_supports(args, ctx).text());
  with_storage_and_width(args, [&](auto tag, auto width) {
    with_index<kNumPolicyConfigs>(index, [&](auto i) {
      launch_warp_row<decltype(tag), decltype(width)::value, kTableEntry<kWarpRowPolicy, decltype(i)::value>>(args,
                                                                                                              ctx);
    });
  });
}

}  // namespace gpukern::cuda::softmax
