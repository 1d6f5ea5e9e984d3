// The persistent schedule of the wgmma_tma kernels (src/cuda/gemm/tensor_core/
// wgmma_schedule.cuh): the cost model of the K split of the last, partial round of
// tiles (host, runs anywhere) and, on the device, that the work units of all CTAs cover
// every K block of every tile exactly once, split or not.
#include "gemm_harness.cuh"

#include "cuda/gemm/tensor_core/wgmma_schedule.cuh"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace gpukern::test::cuda_gemm {
namespace {

using gemm::make_schedule;
using gemm::tail_split_blocks;

TEST(WgmmaSchedule, TailSplitCostModel) {
  // 128 x 256 tiles, 64-element K blocks, 132 CTAs (H100).
  // 4096^3: 512 tiles leave 116 for 16 idle CTAs: each would take 8 tiles' shares,
  // slower than no split.
  EXPECT_EQ(tail_split_blocks(make_schedule(32, 16, 64), 132), 0);
  // 8192^3: 2048 tiles leave 68 for 64 idle CTAs: split, the helpers taking about a
  // third of each tail tile (owner k - x + 6 against the busiest helper's 2 (x + 6)).
  const int x = tail_split_blocks(make_schedule(64, 32, 128), 132);
  EXPECT_GT(x, 30);
  EXPECT_LT(x, 50);
  // No partial round, one round only, or a single K block: nothing to split.
  EXPECT_EQ(tail_split_blocks(make_schedule(24, 11, 128), 132), 0);  // 264 tiles: two whole rounds
  EXPECT_EQ(tail_split_blocks(make_schedule(4, 8, 128), 132), 0);    // fewer tiles than CTAs
  EXPECT_EQ(tail_split_blocks(make_schedule(64, 32, 1), 132), 0);
}

TEST(WgmmaSchedule, NoSplitLeavesTheScheduleAlone) {
  cuda::CudaContext unused;  // split_tail allocates only when it splits
  gemm::WgmmaSchedule s = make_schedule(32, 16, 64);
  EXPECT_EQ(gemm::split_tail(s, 132, 0, unused), nullptr);
  EXPECT_EQ(s.split_first, s.total);
  s = make_schedule(24, 11, 128);
  EXPECT_EQ(gemm::split_tail(s, 132, 10, unused), nullptr);  // whole rounds: nothing to split
  EXPECT_EQ(s.split_first, s.total);
}

/// hits[tile * k_blocks + kb] += 1 for every K block of every unit of every CTA.
__global__ void count_units(gemm::WgmmaSchedule s, int ctas, int* hits) {
  const int cta = static_cast<int>(blockIdx.x);
  gemm::WorkUnit u;
  for (int i = 0; gemm::work_unit(s, cta, ctas, i, u); ++i)
    for (int kb = u.kb_begin; kb < u.kb_end; ++kb) atomicAdd(&hits[u.tile * s.k_blocks + kb], 1);
}

TEST(WgmmaSchedule, UnitsCoverEveryTileAndKBlockOnce) {
  std::string why_not;
  if (!cuda_device_present(&why_not)) GTEST_SKIP() << why_not << " (the work units are enumerated by device code)";
  struct Plan {
    int tiles_m, tiles_n, k_blocks, ctas, helper_blocks;
  };
  const Plan plans[] = {{32, 16, 64, 132, 0}, {64, 32, 128, 132, 40}, {1, 144, 32, 132, 16}, {3, 5, 7, 4, 1},
                        {3, 5, 7, 4, 6},      {2, 3, 9, 5, 100},      {7, 1, 2, 3, 1},       {1, 1, 5, 8, 2}};
  for (const Plan& p : plans) {
    gemm::WgmmaSchedule s = make_schedule(p.tiles_m, p.tiles_n, p.k_blocks);
    // The split as split_tail sets it (without its workspace, which counting needs not).
    const int tail = s.total % p.ctas;
    if (p.helper_blocks > 0 && s.total > p.ctas && tail != 0 && s.k_blocks >= 2) {
      s.split_first = s.total - tail;
      s.split_kb = s.k_blocks - std::min(p.helper_blocks, s.k_blocks - 1);
    }
    const size_t cells = static_cast<size_t>(s.total) * s.k_blocks;
    int* hits = nullptr;
    ASSERT_EQ(cudaMalloc(&hits, cells * sizeof(int)), cudaSuccess);
    ASSERT_EQ(cudaMemset(hits, 0, cells * sizeof(int)), cudaSuccess);
    count_units<<<p.ctas, 1>>>(s, p.ctas, hits);
    std::vector<int> host(cells);
    ASSERT_EQ(cudaMemcpy(host.data(), hits, cells * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
    cudaFree(hits);
    int wrong = 0;
    for (int h : host) wrong += h != 1;
    EXPECT_EQ(wrong, 0) << p.tiles_m << "x" << p.tiles_n << " tiles of " << p.k_blocks << " K blocks on " << p.ctas
                        << " CTAs, split_first " << s.split_first << ", split_kb " << s.split_kb;
  }
}

}  // namespace
}  // namespace gpukern::test::cuda_gemm
