// warp_row's and block_row's development candidates (see sweep.hpp).
#include "sweep.hpp"

#include "cuda/softmax/04_warp_row.cuh"
#include "cuda/softmax/05_block_row.cuh"

#include <array>
#include <cstddef>

namespace softmax_dev {
namespace {

/// The entries of `a` then those of `b`, as one constexpr table.
template <class T, std::size_t N, std::size_t M>
constexpr std::array<T, N + M> joined(const T (&a)[N], const T (&b)[M]) {
  std::array<T, N + M> out{};
  for (std::size_t i = 0; i < N; ++i) out[i] = a[i];
  for (std::size_t i = 0; i < M; ++i) out[N + i] = b[i];
  return out;
}

namespace sm = gpukern::cuda::softmax;
using sm::BlockRowConfig;
using sm::HybridConfig;
using sm::WarpRowConfig;

/// The policy's layouts (04_warp_row.cuh: sm::kWarpRowPolicy) and the others measured
/// against them: f32 exps at other shapes, and layouts for single cold calls (several
/// rows a group, a grid of N blocks an SM, pipelined rows, plain loads and stores).
constexpr WarpRowConfig kWarpRowOthers[] = {
    {.lanes = 4, .packs = 4},
    {.lanes = 8, .packs = 4, .float_exps = true},
    {.lanes = 32, .packs = 4, .float_exps = true},
    {.lanes = 4, .packs = 4, .float_exps = true},
    {.lanes = 4, .packs = 4, .float_exps = true, .rows = 1, .min_blocks = 0, .pipelined = false, .cached = true},
    {.lanes = 4, .packs = 4, .float_exps = true, .rows = 1, .min_blocks = 7},
    {.lanes = 4, .packs = 4, .float_exps = true, .rows = 1, .min_blocks = 5, .pipelined = true},
    {.lanes = 4, .packs = 4, .float_exps = true, .rows = 2},
    {.lanes = 4, .packs = 4, .float_exps = false, .rows = 2},
    {.lanes = 4, .packs = 4, .float_exps = false, .rows = 2, .min_blocks = 8},
    {.lanes = 4, .packs = 4, .float_exps = false, .rows = 4},
    {.lanes = 4, .packs = 4, .float_exps = false, .rows = 1, .min_blocks = 8, .pipelined = true},
    {.lanes = 2, .packs = 8},
    {.lanes = 8, .packs = 2, .float_exps = true, .rows = 2},
};

constexpr auto kWarpRow = joined(sm::kWarpRowPolicy, kWarpRowOthers);
constexpr int kNumWarpRow = static_cast<int>(kWarpRow.size());

std::string warp_row_name(const WarpRowConfig& c) {
  return std::to_string(c.lanes) + "x" + std::to_string(c.packs) + (c.float_exps ? "/fexp" : "") +
         (c.cached ? "/L" : "") + (c.rows > 1 ? "/r" + std::to_string(c.rows) : "") +
         (c.min_blocks > 0 ? "/g" + std::to_string(c.min_blocks) : "") + (c.pipelined ? "/p" : "");
}

/// The policy's register layouts (05_block_row.cu) and those of equal capacity it
/// never reaches (the first listed of a capacity wins).
constexpr BlockRowConfig kBlockRow[] = {
    {.threads = 64, .packs = 1},   {.threads = 64, .packs = 2},   {.threads = 64, .packs = 4},
    {.threads = 128, .packs = 4},  {.threads = 256, .packs = 4},  {.threads = 128, .packs = 8},
    {.threads = 512, .packs = 4},  {.threads = 256, .packs = 8},  {.threads = 512, .packs = 8},
    {.threads = 1024, .packs = 4}, {.threads = 1024, .packs = 8},
};
constexpr int kNumBlockRow = static_cast<int>(sizeof(kBlockRow) / sizeof(kBlockRow[0]));

/// Hybrid layouts, one row a block: the policy's 256x4+s4 and 256x8+s2, and others.
constexpr HybridConfig kBlockRowHybrid[] = {
    {.threads = 256, .packs = 8, .min_blocks = 4}, {.threads = 256, .packs = 4, .min_blocks = 4},
    {.threads = 512, .packs = 4, .min_blocks = 3}, {.threads = 512, .packs = 8, .min_blocks = 2},
    {.threads = 256, .packs = 8, .min_blocks = 2},
};
constexpr int kNumBlockRowHybrid = static_cast<int>(sizeof(kBlockRowHybrid) / sizeof(kBlockRowHybrid[0]));

}  // namespace

void add_row_rung_candidates(std::vector<Variant>& out) {
  for (int i = 0; i < kNumWarpRow; ++i)
    out.push_back({"warp_row", warp_row_name(kWarpRow[i]), [i](const SoftmaxArgs& a, const CudaContext& ctx) {
                     const WarpRowConfig& c = kWarpRow[i];
                     if (c.capacity() < a.cols / sm::vector_elems(a)) return std::string("row does not fit");
                     if (c.vector_only() && !sm::vector_path_ok(a)) return std::string("16-byte path only");
                     if (a.rows == 0 || a.cols == 0) return std::string();
                     sm::with_storage_and_width(a, [&](auto tag, auto width) {
                       sm::with_index<kNumWarpRow>(i, [&](auto k) {
                         sm::launch_warp_row<decltype(tag), decltype(width)::value,
                                             sm::kTableEntry<kWarpRow, decltype(k)::value>>(a, ctx);
                       });
                     });
                     return std::string();
                   }});
  for (int i = 0; i < kNumBlockRow; ++i)
    out.push_back({"block_row", std::to_string(kBlockRow[i].threads) + "x" + std::to_string(kBlockRow[i].packs),
                   [i](const SoftmaxArgs& a, const CudaContext& ctx) {
                     if (!sm::block_row_holds(kBlockRow[i], a)) return std::string("row does not fit");
                     if (a.rows == 0 || a.cols == 0) return std::string();
                     sm::with_storage_and_width(a, [&](auto tag, auto width) {
                       sm::with_index<kNumBlockRow>(i, [&](auto k) {
                         sm::launch_block_row<decltype(tag), decltype(width)::value,
                                              sm::kTableEntry<kBlockRow, decltype(k)::value>>(a, ctx);
                       });
                     });
                     return std::string();
                   }});
  out.push_back({"block_row", std::to_string(sm::kBlockRowSmemThreads) + "/smem",
                 [](const SoftmaxArgs& a, const CudaContext& ctx) {
                   if (!sm::block_row_smem_holds(a, ctx)) return std::string("row does not fit");
                   if (a.rows == 0 || a.cols == 0) return std::string();
                   sm::with_storage_and_width(a, [&](auto tag, auto width) {
                     sm::launch_block_row_smem<decltype(tag), decltype(width)::value>(a, ctx);
                   });
                   return std::string();
                 }});
  for (int i = 0; i < kNumBlockRowHybrid; ++i) {
    const HybridConfig& c = kBlockRowHybrid[i];
    out.push_back({"block_row",
                   std::to_string(c.threads) + "x" + std::to_string(c.packs) + "+s" + std::to_string(c.min_blocks),
                   [i](const SoftmaxArgs& a, const CudaContext& ctx) {
                     if (!sm::block_row_hybrid_holds(kBlockRowHybrid[i], a, ctx))
                       return std::string("row does not fit");
                     if (a.rows == 0 || a.cols == 0) return std::string();
                     sm::with_storage_type(a.dtype, [&](auto tag) {
                       using T = decltype(tag);
                       sm::with_index<kNumBlockRowHybrid>(i, [&](auto k) {
                         sm::launch_block_row_hybrid<T, sm::kVectorElems<T>,
                                                     sm::kTableEntry<kBlockRowHybrid, decltype(k)::value>>(a, ctx);
                       });
                     });
                     return std::string();
                   }});
  }
}

}  // namespace softmax_dev
