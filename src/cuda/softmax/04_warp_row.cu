// CUDA softmax rung 4, `warp_row`: a row is read from memory once. A group of lanes of
// one warp (1 to 32 lanes, by row length) loads the whole row into registers with all
// of its 16-byte loads in flight at once, reduces (max, sum) with shuffles inside the
// group (no shared memory, no barrier), and writes the output from the registers with
// streaming stores. Against `online` this halves the bytes read (one read instead of
// two) and removes the block barrier; for f32 the exps computed for the sum are kept in
// the registers, so the output costs one multiply per element.
// Short rows pack several rows per warp (e.g. 128 f32 columns: 8 lanes x 4 vectors per
// row, 4 rows per warp), so even 512-byte rows keep 64 bytes per thread in flight.
// Measured on the H100 (2026-11-21), back to back: 65536x128 f32 2.57 TB/s (99.6% of
// the copy; online: 0.36), f16 2.31 (100%), bf16 2.32 (101%, with the exps kept in f32;
// 2.14 = 93% without); 16384x1024 f32 2.77 TB/s (101%). Single calls after a cache flush
// (gpukern-bench's method): see kConfigs.
//
// Declines rows longer than its register capacity, 512 packs a row: 2048 f32 or 4096
// f16/bf16 columns on the 16-byte path, 512 elements on the scalar path.
// Scalar path when pointers, strides or the row length are not 16-byte multiples.
// Special values as PyTorch (softmax_common.cuh). In place works: each element is read
// into a register before any output is written, by the same thread.
#include "cuda/softmax/softmax_common.cuh"
#include "cuda/softmax/softmax_rungs.cuh"

#include <utility>

namespace gpukern::cuda::softmax {
namespace {

constexpr int kThreads = 128;

/// One register layout: `lanes` lanes share a row, each holding `packs` vectors.
/// float_exps: 16-bit rows of at most 32 elements a lane also keep their exps in f32
/// registers (one exp per element instead of two, 72-80 registers instead of 40).
/// sweep_only: measured by the development driver, never picked by the policy.
/// The rest (16-byte path only, sweep entries for single cold calls, issue #5):
/// rows: rows a lane group holds at once (all their loads issued before any reduction);
/// min_blocks: > 0 sizes the grid to min_blocks blocks an SM (grid-stride loop) and
/// asks the compiler for that occupancy (__launch_bounds__);
/// pipelined: loads the group's next row before reducing and storing the current one;
/// cached: plain loads and stores instead of the streaming (evict-first) hints.
struct WarpRowConfig {
  int lanes;
  int packs;
  bool float_exps;
  bool sweep_only;
  int rows = 1;
  int min_blocks = 0;
  bool pipelined = false;
  bool cached = false;
  constexpr bool vector_only() const { return rows != 1 || min_blocks != 0 || pipelined || cached; }
};

/// Policy entries ordered by capacity (lanes x packs vectors); the policy takes the
/// first that holds the row. Up to 32 vectors a row prefers 4 packs per lane over more
/// lanes: 64 bytes in flight per thread instead of 16 (65536x128 f32: 8x4 at 2.54 TB/s,
/// 32x1 would keep a quarter of the bytes in flight). Rows of 9-16 vectors (16-bit
/// 65536x128) take 8 x 2 with the 16-bit exps kept in f32: timed as gpukern-bench does
/// (512 MiB memset before each single call), H100 2026-11-21, f16 98.8% and bf16 98.6% of
/// the copy, against 93.3% for 4x4/fexp (which keeps 64 bytes in flight a thread but needs
/// 72-80 registers: 6-7 blocks an SM; 8x2/fexp takes 48-56, 9-10 blocks, and half the
/// serial exp and shuffle work a lane). Back to back without flushes 4x4/fexp measured
/// 100%. The other float_exps entries are sweep-only: 8x4/fexp and 32x4/fexp lost on f16
/// (90% and 76%).
constexpr WarpRowConfig kConfigs[] = {
    {1, 1, false, false},  {2, 1, false, false},  {4, 1, false, false}, {4, 2, false, false},
    {8, 2, true, false},   {8, 4, false, false},  {16, 4, false, false}, {32, 4, false, false},
    {32, 8, false, false}, {32, 16, false, false}, {4, 4, false, true},  {8, 4, true, true},
    {32, 4, true, true},   {4, 4, true, true},
    // Single cold calls (gpukern-bench: cache flush before each call), issue #5.
    {4, 4, true, true, 1, 0, false, true},   // 4x4/fexp/L
    {4, 4, true, true, 1, 7, false, false},  // 4x4/fexp/g7
    {4, 4, true, true, 1, 5, true, false},   // 4x4/fexp/g5/p
    {4, 4, true, true, 2, 0, false, false},  // 4x4/fexp/r2
    {4, 4, false, true, 2, 0, false, false}, // 4x4/r2
    {4, 4, false, true, 2, 8, false, false}, // 4x4/r2/g8
    {4, 4, false, true, 4, 0, false, false}, // 4x4/r4
    {4, 4, false, true, 1, 8, true, false},  // 4x4/g8/p
    {2, 8, false, true},                     // 2x8
    {8, 2, true, true, 2, 0, false, false},  // 8x2/fexp/r2
};
constexpr int kNumConfigs = static_cast<int>(sizeof(kConfigs) / sizeof(kConfigs[0]));

constexpr bool configs_valid() {
  int last_policy = -1;
  for (int i = 0; i < kNumConfigs; ++i) {
    const WarpRowConfig c = kConfigs[i];
    if (c.lanes < 1 || c.lanes > 32 || (c.lanes & (c.lanes - 1)) != 0) return false;
    if (kThreads % c.lanes != 0 || c.packs < 1 || c.packs > 16) return false;
    if (c.sweep_only) continue;
    if (c.vector_only()) return false;  // the policy serves the scalar path too
    if (last_policy >= 0 && c.lanes * c.packs < kConfigs[last_policy].lanes * kConfigs[last_policy].packs) return false;
    last_policy = i;
  }
  return true;
}
static_assert(configs_valid(),
              "warp_row configs: lanes a power of two dividing the block (<= 32, so a group never spans "
              "warps on either vendor), at most 16 packs a lane (64 registers of data), policy entries by "
              "ascending capacity");

constexpr int max_policy_vectors() {
  int m = 0;
  for (const WarpRowConfig c : kConfigs)
    if (!c.sweep_only && c.lanes * c.packs > m) m = c.lanes * c.packs;
  return m;
}
constexpr int kMaxVectors = max_policy_vectors();

/// kMinBlocks = 0 asks for no occupancy: an explicit 1 is not neutral (it raised
/// 4x4/fexp from 72 to 96 registers on sm_90a).
template <class T, int V, int kLanes, int kPacks, bool kExpsInFloat, int kRows = 1, int kMinBlocks = 0,
          bool kPipelined = false, Cache kCache = Cache::Streaming>
__global__ void __launch_bounds__(kThreads, kMinBlocks) warp_row_kernel(RowArgs<T> a) {
  constexpr int kGroups = kThreads / kLanes;  // lane groups a block
  constexpr int kRowsPerBlock = kGroups * kRows;
  using Frag = RowFragment<T, V, kPacks, kExpsInFloat>;
  const int lane = threadIdx.x % kLanes;
  const int group = threadIdx.x / kLanes;
  const int64_t num_vec = a.cols / V;
  const bool keep_exp = !a.log;
  const int64_t step = int64_t(gridDim.x) * kRowsPerBlock;
  if constexpr (!kPipelined) {
    // The loop bound is uniform across the block, so every lane reaches the shuffles.
    for (int64_t first_row = int64_t(blockIdx.x) * kRowsPerBlock; first_row < a.rows; first_row += step) {
      // Row r of the group: first_row + r * kGroups + group (each r coalesced across
      // the block); every load of the kRows rows is issued before any reduction.
      Frag frag[kRows];
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        const int64_t row = first_row + r * kGroups + group;
        const bool active = row < a.rows;
        frag[r].template load<kCache>(a.x + (active ? row : 0) * a.ldx, lane, kLanes, active ? num_vec : 0);
      }
      RowStats mine[kRows], stats[kRows];
#pragma unroll
      for (int r = 0; r < kRows; ++r) mine[r] = frag[r].stats(keep_exp);
#pragma unroll
      for (int r = 0; r < kRows; ++r) stats[r] = group_reduce<kLanes>(mine[r]);
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        const int64_t row = first_row + r * kGroups + group;
        if (row < a.rows)
          frag[r].template store<kCache>(a.y + row * a.ldy, lane, kLanes, num_vec, mine[r], stats[r], a.log);
      }
    }
  } else {
    static_assert(kRows == 1, "the pipelined loop holds one row and the next");
    // The next row's loads are in flight while the current row is reduced and stored.
    // In place stays safe: a group reads each row whole before writing it, and the
    // prefetched row is another row.
    int64_t first_row = int64_t(blockIdx.x) * kGroups;
    Frag cur;
    {
      const int64_t row = first_row + group;
      const bool active = row < a.rows;
      cur.template load<kCache>(a.x + (active ? row : 0) * a.ldx, lane, kLanes, active ? num_vec : 0);
    }
    for (; first_row < a.rows; first_row += step) {
      const int64_t row = first_row + group;
      const int64_t next = row + step;
      const bool next_active = next < a.rows;
      Frag nxt;
      nxt.template load<kCache>(a.x + (next_active ? next : 0) * a.ldx, lane, kLanes, next_active ? num_vec : 0);
      const RowStats mine = cur.stats(keep_exp);
      const RowStats stats = group_reduce<kLanes>(mine);
      if (row < a.rows) cur.template store<kCache>(a.y + row * a.ldy, lane, kLanes, num_vec, mine, stats, a.log);
      cur = nxt;
    }
  }
}

template <class T, int V, int kIndex>
void launch_config(const core::SoftmaxArgs& args, const CudaContext& ctx) {
  constexpr WarpRowConfig c = kConfigs[kIndex];
  if constexpr (V == 1 && c.vector_only()) {
    return;  // declined before the launch (warp_row_run_config)
  } else {
    constexpr int kRowsPerBlock = kThreads / c.lanes * c.rows;
    // Keeping exps in f32 costs packs x V registers: only where that is at most 32.
    constexpr bool kFloatExps = c.float_exps && c.packs * V <= 32;
    const int64_t cap = c.min_blocks > 0 ? int64_t(std::max(1, ctx.sm_count)) * c.min_blocks : kMaxGridBlocks;
    const int64_t blocks = std::min(ceil_div<int64_t>(args.rows, kRowsPerBlock), cap);
    warp_row_kernel<T, V, c.lanes, c.packs, kFloatExps, c.rows, c.min_blocks, c.pipelined,
                    c.cached ? Cache::Default : Cache::Streaming>
        <<<static_cast<unsigned>(blocks), kThreads, 0, ctx.stream>>>(typed_args<T>(args));
    GK_LAUNCH_CHECK();
  }
}

template <class T, int V, size_t... I>
void launch_indexed(int index, const core::SoftmaxArgs& args, const CudaContext& ctx, std::index_sequence<I...>) {
  ((index == static_cast<int>(I) ? launch_config<T, V, static_cast<int>(I)>(args, ctx) : void()), ...);
}

/// The policy: the smallest configuration that holds the row; -1 when none does.
int pick_config(const core::SoftmaxArgs& args) {
  const int64_t num_vec = args.cols / vector_elems(args);
  for (int i = 0; i < kNumConfigs; ++i)
    if (!kConfigs[i].sweep_only && int64_t(kConfigs[i].lanes) * kConfigs[i].packs >= num_vec) return i;
  return -1;
}

void run_index(const core::SoftmaxArgs& args, const CudaContext& ctx, int index) {
  with_storage_and_width(args, [&](auto tag, auto width) {
    launch_indexed<decltype(tag), decltype(width)::value>(index, args, ctx, std::make_index_sequence<kNumConfigs>{});
  });
}

}  // namespace

int64_t warp_row_max_cols(const core::SoftmaxArgs& args) { return kMaxVectors * vector_elems(args); }

core::Verdict warp_row_supports(const core::SoftmaxArgs& args, const CudaContext&) {
  if (args.cols <= warp_row_max_cols(args)) return {};
  return {core::Decline::ShapeLimit, "row of " + std::to_string(args.cols) + " elements exceeds warp_row's register capacity of " +
         std::to_string(warp_row_max_cols(args)) + (vector_path_ok(args) ? "" : " on the scalar path") +
         " (use block_row)"};
}

void warp_row_run(const core::SoftmaxArgs& args, const CudaContext& ctx) {
  const int index = pick_config(args);
  if (index < 0)
    throw core::Error(core::Status::InternalError, "warp_row ran a call it declines: " + warp_row_supports(args, ctx).text());
  run_index(args, ctx, index);
}

std::vector<std::string> warp_row_config_names() {
  std::vector<std::string> names;
  for (const auto& c : kConfigs)
    names.push_back(std::to_string(c.lanes) + "x" + std::to_string(c.packs) + (c.float_exps ? "/fexp" : "") +
                    (c.cached ? "/L" : "") + (c.rows > 1 ? "/r" + std::to_string(c.rows) : "") +
                    (c.min_blocks > 0 ? "/g" + std::to_string(c.min_blocks) : "") + (c.pipelined ? "/p" : ""));
  return names;
}

std::string warp_row_run_config(const core::SoftmaxArgs& args, const CudaContext& ctx, int config) {
  if (config < 0 || config >= kNumConfigs) return "no such config";
  if (int64_t(kConfigs[config].lanes) * kConfigs[config].packs < args.cols / vector_elems(args))
    return "row does not fit";
  if (kConfigs[config].vector_only() && !vector_path_ok(args)) return "16-byte path only";
  run_index(args, ctx, config);
  return {};
}

}  // namespace gpukern::cuda::softmax
