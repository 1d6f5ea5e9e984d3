// split_row's development candidates (see sweep.hpp): register and hybrid cluster
// layouts beyond the policy's, at every cluster size; the streaming cluster kernel
// (stream_row.cuh) and the grid-pipelined path (grid_row.cuh), which the policy never
// takes; and the split across blocks, forced.
#include "sweep.hpp"

#include "cuda/softmax/06_split_row.cuh"
#include "cuda/softmax/06_split_row_cluster.cuh"
#include "grid_row.cuh"
#include "stream_row.cuh"

namespace softmax_dev {
namespace {

namespace sm = gpukern::cuda::softmax;
using sm::ClusterConfig;
using sm::HybridConfig;
using sm::dev::GridConfig;
using sm::dev::StreamConfig;

/// Register layouts: the policy's 512x8 and 512x16, and 256x8 and 1024x8.
constexpr ClusterConfig kRegister[] = {{.threads = 256, .packs = 8},
                                       {.threads = 512, .packs = 8},
                                       {.threads = 1024, .packs = 8},
                                       {.threads = 512, .packs = 16}};
constexpr int kNumRegister = static_cast<int>(sizeof(kRegister) / sizeof(kRegister[0]));

constexpr StreamConfig kStream[] = {{.threads = 256, .max_stages = 2}, {.threads = 512, .max_stages = 4}};
constexpr int kNumStream = static_cast<int>(sizeof(kStream) / sizeof(kStream[0]));

/// Hybrid cluster layouts: the policy's 256x8+s4 (f32), 256x4+s4 and 1024x4+s1/d4
/// (16-bit), and others at 2 or 4 CTAs an SM and pipeline depths.
constexpr HybridConfig kHybrid[] = {
    {.threads = 256, .packs = 8, .min_blocks = 4},
    {.threads = 256, .packs = 4, .min_blocks = 4},
    {.threads = 512, .packs = 8, .min_blocks = 2},
    {.threads = 256, .packs = 4, .min_blocks = 4, .depth = 8},
    {.threads = 256, .packs = 8, .min_blocks = 4, .depth = 8},
    {.threads = 512, .packs = 4, .min_blocks = 2, .depth = 8},
    {.threads = 1024, .packs = 4, .min_blocks = 1, .depth = 8},
    {.threads = 1024, .packs = 4, .min_blocks = 1, .depth = 4},
};
constexpr int kNumHybrid = static_cast<int>(sizeof(kHybrid) / sizeof(kHybrid[0]));

/// Grid-pipelined configurations: data threads, rows a step, stages, lag.
constexpr GridConfig kGrid[] = {
    {.threads = 256, .rows = 4, .stages = 6, .lag = 3},  {.threads = 256, .rows = 4, .stages = 8, .lag = 3},
    {.threads = 256, .rows = 2, .stages = 12, .lag = 6}, {.threads = 256, .rows = 2, .stages = 10, .lag = 4},
    {.threads = 256, .rows = 8, .stages = 5, .lag = 3},  {.threads = 512, .rows = 4, .stages = 6, .lag = 3},
    {.threads = 256, .rows = 1, .stages = 16, .lag = 8}, {.threads = 256, .rows = 8, .stages = 6, .lag = 2},
};
constexpr int kNumGrid = static_cast<int>(sizeof(kGrid) / sizeof(kGrid[0]));

constexpr int kClusterSizes[] = {0, 2, 4, 8, 16};

/// "" when a cluster of `size` CTAs (0: `fallback`) can be asked for a row that needs
/// `min_size`; the size to use in `*size_out`.
std::string cluster_size_reason(int size, int min_size, int fallback, int* size_out) {
  *size_out = size == 0 ? fallback : size;
  if (*size_out < min_size) return "row does not fit " + std::to_string(*size_out) + " CTAs";
  if (*size_out > sm::kMaxCluster || (*size_out & (*size_out - 1)) != 0)
    return "cluster size " + std::to_string(*size_out) + " unsupported";
  return {};
}

std::string no_fit(int size) { return "no cluster of " + std::to_string(size) + " fits on the device"; }

}  // namespace

void add_split_row_candidates(std::vector<Variant>& out) {
  for (int i = 0; i < kNumRegister; ++i)
    for (int cl : kClusterSizes)
      out.push_back(
          {"split_row",
           std::to_string(kRegister[i].threads) + "x" + std::to_string(kRegister[i].packs) + "/c" + std::to_string(cl),
           [i, cl](const SoftmaxArgs& a, const CudaContext& ctx) {
             if (!ctx.cluster_launch) return std::string("no clusters before sm_90");
             const int min_size = sm::min_cluster_holding(a, kRegister[i].capacity());
             int size = 0;
             if (std::string why = cluster_size_reason(cl, min_size, min_size, &size); !why.empty()) return why;
             if (a.rows == 0 || a.cols == 0) return std::string();
             bool ran = false;
             sm::with_storage_and_width(a, [&](auto tag, auto width) {
               sm::with_index<kNumRegister>(i, [&](auto k) {
                 ran = sm::launch_register_cluster<decltype(tag), decltype(width)::value,
                                                   sm::kTableEntry<kRegister, decltype(k)::value>>(a, ctx, size);
               });
             });
             return ran ? std::string() : no_fit(size);
           }});
  for (int i = 0; i < kNumStream; ++i)
    for (int cl : kClusterSizes)
      out.push_back(
          {"split_row",
           "t" + std::to_string(kStream[i].threads) + "s" + std::to_string(kStream[i].max_stages) + "/c" +
               std::to_string(cl),
           [i, cl](const SoftmaxArgs& a, const CudaContext& ctx) {
             if (!ctx.cluster_launch) return std::string("no clusters before sm_90");
             if (!sm::vector_path_ok(a)) return std::string("the streaming kernel needs the 16-byte path");
             // One stage to run, two to overlap: cluster 0 asks for two.
             const int min_size = sm::dev::min_stream_cluster(a, ctx, kStream[i], 1);
             const int two = sm::dev::min_stream_cluster(a, ctx, kStream[i], 2);
             int size = 0;
             if (std::string why = cluster_size_reason(cl, min_size, two, &size); !why.empty()) return why;
             if (a.rows == 0 || a.cols == 0) return std::string();
             bool ran = false;
             sm::with_storage_type(a.dtype, [&](auto tag) {
               using T = decltype(tag);
               sm::with_index<kNumStream>(i, [&](auto k) {
                 ran = sm::dev::launch_stream<T, sm::kVectorElems<T>, sm::kTableEntry<kStream, decltype(k)::value>>(
                     a, ctx, size);
               });
             });
             return ran ? std::string() : no_fit(size);
           }});
  for (int i = 0; i < kNumHybrid; ++i) {
    const HybridConfig& c = kHybrid[i];
    const std::string name = std::to_string(c.threads) + "x" + std::to_string(c.packs) + "+s" +
                             std::to_string(c.min_blocks) + (c.depth > 0 ? "/d" + std::to_string(c.depth) : "");
    for (int cl : kClusterSizes)
      out.push_back(
          {"split_row", name + "/c" + std::to_string(cl), [i, cl](const SoftmaxArgs& a, const CudaContext& ctx) {
             if (!ctx.cluster_launch) return std::string("no clusters before sm_90");
             if (!sm::vector_path_ok(a)) return std::string("the hybrid kernel needs the 16-byte path");
             const int min_size = sm::min_cluster_holding(a, sm::hybrid_capacity(ctx, kHybrid[i]));
             int size = 0;
             if (std::string why = cluster_size_reason(cl, min_size, min_size, &size); !why.empty()) return why;
             if (a.rows == 0 || a.cols == 0) return std::string();
             bool ran = false;
             sm::with_storage_type(a.dtype, [&](auto tag) {
               using T = decltype(tag);
               sm::with_index<kNumHybrid>(i, [&](auto k) {
                 ran = sm::launch_hybrid_cluster<T, sm::kVectorElems<T>, sm::kTableEntry<kHybrid, decltype(k)::value>>(
                     a, ctx, size);
               });
             });
             return ran ? std::string() : no_fit(size);
           }});
  }
  for (int i = 0; i < kNumGrid; ++i) {
    const GridConfig& c = kGrid[i];
    out.push_back({"split_row",
                   "g" + std::to_string(c.threads) + "r" + std::to_string(c.rows) + "s" + std::to_string(c.stages) +
                       "l" + std::to_string(c.lag) + (c.blocks_per_sm > 1 ? "b" + std::to_string(c.blocks_per_sm) : ""),
                   [i](const SoftmaxArgs& a, const CudaContext& ctx) {
                     if (std::string why = sm::dev::grid_reason(a, ctx, kGrid[i]); !why.empty()) return why;
                     if (a.rows == 0 || a.cols == 0) return std::string();
                     bool ran = false;
                     sm::with_storage_type(a.dtype, [&](auto tag) {
                       using T = decltype(tag);
                       sm::with_index<kNumGrid>(i, [&](auto k) {
                         ran = sm::dev::launch_grid<T, sm::kVectorElems<T>, sm::kTableEntry<kGrid, decltype(k)::value>>(
                             a, ctx);
                       });
                     });
                     return ran ? std::string() : std::string("cooperative grid refused (CTAs not all resident)");
                   }});
  }
  out.push_back({"split_row", "blocks", [](const SoftmaxArgs& a, const CudaContext& ctx) {
                   if (a.rows == 0 || a.cols == 0) return std::string();
                   return sm::split_row_run_plan(a, ctx, {sm::SplitLayout::Blocks, 0});
                 }});
}

}  // namespace softmax_dev
