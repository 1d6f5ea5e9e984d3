// The kernel of rung 4, `warp_row` (04_warp_row.cu), and its configuration type: a group
// of `lanes` lanes of one warp holds a row in registers (`packs` 16-byte vectors a
// lane), reduces it with shuffles inside the group and writes it from the registers.
// The rung instantiates its policy's configurations; the development driver
// (-DGPUKERN_BUILD_DEV=ON) instantiates other candidates from the same template.
#pragma once

#include "cuda/softmax/softmax_common.cuh"

#include <algorithm>

namespace gpukern::cuda::softmax {

/// Threads of a warp_row block (whole warps on either vendor).
constexpr int kWarpRowThreads = 128;

/// One register layout: `lanes` lanes share a row, each holding `packs` vectors.
/// float_exps: 16-bit rows of at most 32 elements a lane also keep their exps in f32
/// registers (one exp per element instead of two, at the cost of packs x V registers).
/// The remaining fields serve single cold calls and need the 16-byte path
/// (vector_only()):
///   rows:       rows a lane group holds at once (all their loads issued before any
///               reduction);
///   min_blocks: > 0 sizes the grid to min_blocks blocks an SM (grid-stride loop) and
///               asks the compiler for that occupancy (__launch_bounds__);
///   pipelined:  loads the group's next row before reducing and storing the current one;
///   cached:     plain loads and stores instead of the streaming (evict-first) hints.
struct WarpRowConfig {
  int lanes = 1;
  int packs = 1;
  bool float_exps = false;
  int rows = 1;
  int min_blocks = 0;
  bool pipelined = false;
  bool cached = false;
  constexpr bool vector_only() const { return rows != 1 || min_blocks != 0 || pipelined || cached; }
  /// Vectors of a row the layout holds.
  constexpr int64_t capacity() const { return int64_t(lanes) * packs; }
  /// Lanes a power of two dividing the block and no wider than 32 (so a group never
  /// spans warps on either vendor), at most 16 packs a lane (64 registers of data).
  constexpr bool valid() const {
    return lanes >= 1 && lanes <= 32 && (lanes & (lanes - 1)) == 0 && kWarpRowThreads % lanes == 0 && packs >= 1 &&
           packs <= 16 && rows >= 1 && min_blocks >= 0;
  }
};

/// True when layout `c` holds every row of the call (and the call is on the 16-byte
/// path, where the layout needs it).
inline bool warp_row_holds(const WarpRowConfig& c, const core::SoftmaxArgs& args) {
  return c.capacity() >= args.cols / vector_elems(args) && (!c.vector_only() || vector_path_ok(args));
}

/// kMinBlocks = 0 asks for no occupancy: an explicit 1 is not neutral (it raised
/// 4x4/fexp from 72 to 96 registers on sm_90a).
/// kMasked: each pack is checked against the kept columns (with_mask, softmax_common.cuh).
template <class T, int V, int kLanes, int kPacks, bool kExpsInFloat, int kRows = 1, int kMinBlocks = 0,
          bool kPipelined = false, Cache kCache = Cache::Streaming, bool kMasked = false>
__global__ void __launch_bounds__(kWarpRowThreads, kMinBlocks) warp_row_kernel(RowArgs<T> a) {
  constexpr int kGroups = kWarpRowThreads / kLanes;  // lane groups a block
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
      // the block); every load of the kRows rows is issued before any reduction. A row
      // reads only the vectors holding kept columns (RowMask::vecs_read).
      Frag frag[kRows];
      RowRef<T> ref[kRows];
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        const int64_t row = first_row + r * kGroups + group;
        const bool active = row < a.rows;
        ref[r] = a.at(active ? row : 0);
        frag[r].template load<kCache>(ref[r].x, lane, kLanes,
                                      active ? ref[r].mask.template vecs_read<kMasked>(V, num_vec) : 0);
      }
      RowStats mine[kRows], stats[kRows];
#pragma unroll
      for (int r = 0; r < kRows; ++r) mine[r] = frag[r].template stats<kMasked>(keep_exp, lane, kLanes, ref[r].mask);
#pragma unroll
      for (int r = 0; r < kRows; ++r) stats[r] = group_reduce<kLanes>(mine[r]);
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        const int64_t row = first_row + r * kGroups + group;
        if (row < a.rows)
          frag[r].template store<kMasked, kCache>(ref[r].y, lane, kLanes, num_vec, mine[r], stats[r], ref[r].mask);
      }
    }
  } else {
    static_assert(kRows == 1, "the pipelined loop holds one row and the next");
    // The next row's loads are in flight while the current row is reduced and stored.
    // In place stays safe: a group reads each row whole before writing it, and the
    // prefetched row is another row.
    int64_t first_row = int64_t(blockIdx.x) * kGroups;
    Frag cur;
    RowRef<T> cur_ref;
    {
      const int64_t row = first_row + group;
      const bool active = row < a.rows;
      cur_ref = a.at(active ? row : 0);
      cur.template load<kCache>(cur_ref.x, lane, kLanes,
                                active ? cur_ref.mask.template vecs_read<kMasked>(V, num_vec) : 0);
    }
    for (; first_row < a.rows; first_row += step) {
      const int64_t row = first_row + group;
      const int64_t next = row + step;
      const bool next_active = next < a.rows;
      Frag nxt;
      const RowRef<T> next_ref = a.at(next_active ? next : 0);
      nxt.template load<kCache>(next_ref.x, lane, kLanes,
                                next_active ? next_ref.mask.template vecs_read<kMasked>(V, num_vec) : 0);
      const RowStats mine = cur.template stats<kMasked>(keep_exp, lane, kLanes, cur_ref.mask);
      const RowStats stats = group_reduce<kLanes>(mine);
      if (row < a.rows)
        cur.template store<kMasked, kCache>(cur_ref.y, lane, kLanes, num_vec, mine, stats, cur_ref.mask);
      cur = nxt;
      cur_ref = next_ref;
    }
  }
}

/// Launches warp_row_kernel in layout kConfig on ctx.stream. The layout must hold the
/// call (warp_row_holds).
template <class T, int V, const WarpRowConfig& kConfig>
void launch_warp_row(const core::SoftmaxArgs& args, const CudaContext& ctx) {
  constexpr WarpRowConfig c = kConfig;
  static_assert(c.valid(), "warp_row layout: see WarpRowConfig::valid");
  if constexpr (V == 1 && c.vector_only()) {
    throw core::Error(core::Status::InternalError, "warp_row: a 16-byte-only layout called on the scalar path");
  } else {
    constexpr int kRowsPerBlock = kWarpRowThreads / c.lanes * c.rows;
    // Keeping exps in f32 costs packs x V registers: only where that is at most 32.
    constexpr bool kFloatExps = c.float_exps && c.packs * V <= 32;
    const int64_t cap = c.min_blocks > 0 ? int64_t(std::max(1, ctx.sm_count)) * c.min_blocks : kMaxGridBlocks;
    const int64_t blocks = std::min(ceil_div<int64_t>(total_rows(args), kRowsPerBlock), cap);
    with_mask(args, [&](auto masked) {
      warp_row_kernel<T, V, c.lanes, c.packs, kFloatExps, c.rows, c.min_blocks, c.pipelined,
                      c.cached ? Cache::Default : Cache::Streaming, decltype(masked)::value>
          <<<static_cast<unsigned>(blocks), kWarpRowThreads, 0, ctx.stream>>>(typed_args<T>(args));
      GK_LAUNCH_CHECK();
    });
  }
}

/// The policy's layouts, ordered by capacity (lanes x packs vectors); the policy takes
/// the first that holds the row. Up to 32 vectors a row prefers 4 packs a lane over more
/// lanes: 64 bytes in flight a thread instead of 16. Rows of 9-16 vectors (16-bit
/// 65536x128) take 8 x 2 with the 16-bit exps kept in f32: against 4 x 4 with them
/// (which keeps 64 bytes in flight a thread but needs 72-80 registers, 6-7 blocks an
/// SM), it needs 48-56 registers (9-10 blocks) and does half the serial exp and shuffle
/// work a lane, which single calls after a cache flush measured faster on the H100.
inline constexpr WarpRowConfig kWarpRowPolicy[] = {
    {.lanes = 1, .packs = 1},
    {.lanes = 2, .packs = 1},
    {.lanes = 4, .packs = 1},
    {.lanes = 4, .packs = 2},
    {.lanes = 8, .packs = 2, .float_exps = true},
    {.lanes = 8, .packs = 4},
    {.lanes = 16, .packs = 4},
    {.lanes = 32, .packs = 4},
    {.lanes = 32, .packs = 8},
    {.lanes = 32, .packs = 16},
};

}  // namespace gpukern::cuda::softmax
