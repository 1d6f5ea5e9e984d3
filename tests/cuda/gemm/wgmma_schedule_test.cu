// The persistent schedule of the wgmma_tma kernels (src/cuda/gemm/tensor_core/
// wgmma_schedule.cuh) and the rung's choice of configuration (12_wgmma_tma.cu):
//  * on the host (runs anywhere): the cost model of the K split of the last, partial
//    round of tiles; the split plans (tail, every tile in `ways` ranges); that the work
//    units of all CTAs cover every K block of every tile exactly once, with no empty
//    range and exactly `ways` arrivals per split tile (what the fixup's tickets count);
//    the choice table on the issue's shapes and the GPUKERN_WGMMA_CONFIG names;
//  * on the device: the same coverage enumerated by device code.
#include "gemm_harness.cuh"

#include "cuda/gemm/configs/sm90.cuh"
#include "cuda/gemm/tensor_core/12_wgmma_tma.cuh"
#include "cuda/gemm/tensor_core/wgmma_schedule.cuh"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace gpukern::test::cuda_gemm {
namespace {

using gemm::make_schedule;

int tail_split_blocks(const gemm::WgmmaSchedule& s, int ctas) { return gemm::tail_split_plan(s, ctas).helper_blocks; }
int tail_split_ways(const gemm::WgmmaSchedule& s, int ctas) { return gemm::tail_split_plan(s, ctas).ways; }

TEST(WgmmaSchedule, SixtyFourRowTilesLoadOnlyTheRowsAHas) {
  using Small = gemm::WgmmaConfig<gemm::sm90::WgmmaTmaSmall>;  // 64x64, 16 KB stages
  using Short = gemm::WgmmaConfig<gemm::sm90::WgmmaTmaShort>;  // 64x128
  using Mid = gemm::WgmmaConfig<gemm::sm90::WgmmaTmaMid>;      // 128x128
  // K-major A over fewer than 64 rows: the rows A has, rounded up to the 8-row atom.
  EXPECT_EQ((gemm::a_box_rows<Small, true>(1)), 8);
  EXPECT_EQ((gemm::a_box_rows<Small, true>(20)), 24);
  EXPECT_EQ((gemm::a_box_rows<Short, true>(63)), 64);
  EXPECT_EQ((gemm::a_stage_bytes<Small, true>(1)), static_cast<uint32_t>(Small::kStageBytes - 56 * 128));
  EXPECT_EQ((gemm::a_stage_bytes<Short, true>(17)), static_cast<uint32_t>(Short::kStageBytes - 40 * 128));
  // Whole boxes: 64 rows or more, MN-major A (its box runs along K), 128-row tiles.
  for (int m : {64, 65, 1000}) EXPECT_EQ((gemm::a_box_rows<Small, true>(m)), 64) << m;
  EXPECT_EQ((gemm::a_box_rows<Small, false>(1)), 64);
  EXPECT_EQ((gemm::a_box_rows<Mid, true>(1)), 128);  // K-major A: the tile's rows in one copy
  EXPECT_EQ((gemm::a_box_rows<Mid, false>(1)), 64);
  EXPECT_EQ((gemm::a_stage_bytes<Mid, true>(1)), static_cast<uint32_t>(Mid::kStageBytes));
}

TEST(WgmmaSchedule, KMajorBIsOneCopyOfEachClusterCtasShare) {
  using Large = gemm::WgmmaConfig<gemm::sm90::WgmmaTma>;           // 128x256, clusters of 2
  using Wide = gemm::WgmmaConfig<gemm::sm90::WgmmaTmaWideC2>;      // 128x192, clusters of 2
  using Mid = gemm::WgmmaConfig<gemm::sm90::WgmmaTmaMid>;          // 128x128, no cluster
  using Tall96 = gemm::WgmmaConfig<gemm::sm90::WgmmaTmaTall96C2>;  // two whole boxes of B
  using Wave = gemm::WgmmaConfig<gemm::sm90::WgmmaTmaWave168C2>;   // 168 rows: part boxes
  EXPECT_EQ((gemm::b_copy_rows<Large, true>()), 128);
  EXPECT_EQ((gemm::b_copy_rows<Wide, true>()), 96);
  EXPECT_EQ((gemm::b_copy_rows<Mid, true>()), 128);
  EXPECT_EQ((gemm::b_copy_rows<Tall96, true>()), 64);
  EXPECT_EQ((gemm::b_copy_rows<Wave, true>()), 56);  // its pieces
  // MN-major B: pieces along K inside 64-element boxes, as before.
  EXPECT_EQ((gemm::b_copy_rows<Large, false>()), 64);
  EXPECT_EQ((gemm::b_copy_rows<Wide, false>()), 32);
}

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
  // The rung's 2-CTA clusters (66 on 132 SMs): 4096^3 has 256 clusters, a last round of
  // 58 for 8 idle clusters: no split; 3000^3 has 144, a last round of 12 for 54: split.
  EXPECT_EQ(tail_split_blocks(make_schedule(16, 16, 64), 66), 0);
  EXPECT_GT(tail_split_blocks(make_schedule(12, 12, 47), 66), 0);
  // Two ways where the helpers are few (8192^3: 64 for 68 tail tiles; in clusters 32 for
  // 34); more where they outnumber the tail tiles: 3072^3 in clusters leaves 12 tail
  // clusters of 48 K blocks for 54 idle ones, each range at least one K block.
  EXPECT_EQ(tail_split_ways(make_schedule(64, 32, 128), 132), 2);
  EXPECT_EQ(tail_split_ways(make_schedule(32, 32, 128), 66), 2);
  const gemm::TailSplit wide = gemm::tail_split_plan(make_schedule(12, 12, 48), 66);
  EXPECT_GT(wide.ways, 2);
  EXPECT_LE(wide.ways, 8);
  EXPECT_GE(wide.helper_blocks, wide.ways - 1);
  EXPECT_LT(wide.helper_blocks, 48);
  // No partial round, one round only, or a single K block: nothing to split.
  EXPECT_EQ(tail_split_blocks(make_schedule(24, 11, 128), 132), 0);  // 264 tiles: two whole rounds
  EXPECT_EQ(tail_split_blocks(make_schedule(4, 8, 128), 132), 0);    // fewer tiles than CTAs
  EXPECT_EQ(tail_split_blocks(make_schedule(64, 32, 1), 132), 0);
}

TEST(WgmmaSchedule, NoSplitLeavesTheScheduleAlone) {
  cuda::CudaContext unused;  // the split workspace is allocated only when a plan splits
  gemm::WgmmaSchedule s = make_schedule(32, 16, 64);
  EXPECT_EQ(gemm::split_tail(s, 132, {0}, {}, unused), nullptr);
  EXPECT_EQ(s.split_first, s.total);
  s = make_schedule(24, 11, 128);
  EXPECT_EQ(gemm::split_tail(s, 132, {10}, {}, unused), nullptr);  // whole rounds: nothing to split
  EXPECT_EQ(s.split_first, s.total);
  // Every tile in K ranges: not with one way, not with as many tiles as CTAs, not with
  // one K block.
  s = make_schedule(1, 32, 64);
  EXPECT_EQ(gemm::split_all(s, 132, 1, {}, unused), nullptr);
  s = make_schedule(12, 11, 64);
  EXPECT_EQ(gemm::split_all(s, 132, 4, {}, unused), nullptr);
  s = make_schedule(1, 32, 1);
  EXPECT_EQ(gemm::split_all(s, 132, 4, {}, unused), nullptr);
  EXPECT_EQ(s.split_first, s.total);
  EXPECT_EQ(s.ways, 1);
}

TEST(WgmmaSchedule, SplitAllPlan) {
  // 128 x 4096 x 4096 in 128x128 tiles: 32 tiles of 64 K blocks, 4 ways: ranges of 16.
  gemm::WgmmaSchedule s = make_schedule(1, 32, 64);
  ASSERT_TRUE(gemm::plan_split_all(s, 132, 4));
  EXPECT_EQ(s.split_first, 0);
  EXPECT_EQ(s.split_kb, 16);
  EXPECT_EQ(s.ways, 4);
  // More ways than K blocks: one K block a range.
  s = make_schedule(2, 2, 3);
  ASSERT_TRUE(gemm::plan_split_all(s, 132, 16));
  EXPECT_EQ(s.ways, 3);
  EXPECT_EQ(s.split_kb, 1);
}

/// What the units of `ctas` CTAs do with schedule `s`: the K blocks covered more or
/// less than once, empty units, and split tiles whose arrival count is not `ways`.
struct Coverage {
  int wrong_blocks = 0, empty_units = 0, wrong_arrivals = 0, units = 0;
  int most_split_units = 0;  // split units of the busiest CTA
};
Coverage cover(const gemm::WgmmaSchedule& s, int ctas) {
  std::vector<int> hits(static_cast<size_t>(s.total) * s.k_blocks, 0), arrivals(s.total, 0);
  Coverage c;
  for (int cta = 0; cta < ctas; ++cta) {
    gemm::WorkUnit u;
    int split_units = 0;
    for (int i = 0; gemm::work_unit(s, cta, ctas, i, u); ++i) {
      ++c.units;
      split_units += u.split;
      c.most_split_units = std::max(c.most_split_units, split_units);
      c.empty_units += u.kb_end <= u.kb_begin;
      for (int kb = u.kb_begin; kb < u.kb_end; ++kb) ++hits[static_cast<size_t>(u.tile) * s.k_blocks + kb];
      if (u.split) {
        ++arrivals[u.tile];
        if (u.slot != u.tile - s.split_first) ++c.wrong_arrivals;  // the workspace slot is the tile's
      }
    }
  }
  for (int h : hits) c.wrong_blocks += h != 1;
  for (int t = s.split_first; t < s.total; ++t) c.wrong_arrivals += arrivals[t] != s.ways;
  return c;
}

struct Plan {
  int tiles_m, tiles_n, k_blocks, ctas;
  int helper_blocks;  // > 0: the tail split with this helper share
  int ways;           // >= 2: every tile split (when tiles < ctas)
  int tail_ways = 2;  // the tail split's ranges (owner's and helpers')
};

/// The schedule of `p` as the launcher plans it (without the workspace).
gemm::WgmmaSchedule planned(const Plan& p) {
  gemm::WgmmaSchedule s = make_schedule(p.tiles_m, p.tiles_n, p.k_blocks);
  if (p.ways >= 2 && gemm::plan_split_all(s, p.ctas, p.ways)) return s;
  if (p.helper_blocks > 0) gemm::plan_tail_split(s, p.ctas, {p.helper_blocks, p.tail_ways});
  return s;
}

/// The launch's CTA count for a plan (plan_launch in 12_wgmma_tma.cuh).
int launch_ctas(const gemm::WgmmaSchedule& s, int resident) {
  return s.split_first == 0 && s.ways > 1 ? std::min(resident, s.total * s.ways) : std::min(resident, s.total);
}

const Plan kPlans[] = {
    {32, 16, 64, 132, 0, 0},
    {64, 32, 128, 132, 40, 0},
    {1, 144, 32, 132, 16, 0},
    {3, 5, 7, 4, 1, 0},
    {3, 5, 7, 4, 6, 0},
    {2, 3, 9, 5, 100, 0},
    {7, 1, 2, 3, 1, 0},
    {1, 1, 5, 8, 2, 0},
    {1, 32, 64, 132, 0, 4},
    {1, 32, 172, 132, 0, 4},
    {8, 8, 16, 132, 0, 2},
    {8, 8, 16, 132, 0, 16},
    {1, 1, 5, 132, 0, 16},
    {2, 2, 5, 132, 0, 4},
    {1, 3, 7, 4, 0, 3},
    {1, 3, 100, 5, 0, 7},
    {1, 8, 9, 66, 0, 8},
    {5, 7, 33, 132, 0, 3},
    {1, 1, 1, 132, 0, 4},
    {2, 16, 64, 66, 0, 2},
    // The tail split in more than two ranges.
    {12, 12, 48, 66, 38, 0, 5},
    {3, 5, 7, 4, 6, 0, 4},
    {2, 3, 9, 5, 100, 0, 8},
    {7, 1, 2, 3, 1, 0, 3},
    {1, 144, 32, 132, 16, 0, 8},
    {64, 32, 128, 132, 40, 0, 3},
    {3, 5, 7, 4, 2, 0, 7},
};

TEST(WgmmaSchedule, UnitsCoverEveryTileAndKBlockOnceOnTheHost) {
  for (const Plan& p : kPlans) {
    const gemm::WgmmaSchedule s = planned(p);
    const int ctas = launch_ctas(s, p.ctas);
    const Coverage c = cover(s, ctas);
    EXPECT_EQ(c.wrong_blocks, 0) << p.tiles_m << "x" << p.tiles_n << " tiles of " << p.k_blocks << " K blocks on "
                                 << ctas << " CTAs, split_first " << s.split_first << ", split_kb " << s.split_kb
                                 << ", ways " << s.ways;
    EXPECT_EQ(c.empty_units, 0) << p.tiles_m << "x" << p.tiles_n << " ways " << s.ways;
    EXPECT_EQ(c.wrong_arrivals, 0) << p.tiles_m << "x" << p.tiles_n << " ways " << s.ways;
  }
  // The plans above do split where they mean to (a coverage test of unsplit
  // schedules only would test little).
  EXPECT_EQ(planned(kPlans[8]).ways, 4);
  EXPECT_EQ(planned(kPlans[11]).ways, 16);
  EXPECT_EQ(planned(kPlans[1]).ways, 2);
  EXPECT_EQ(planned(kPlans[20]).ways, 5);
  EXPECT_EQ(planned(kPlans[22]).ways, 8);
}

TEST(WgmmaSchedule, FastDivIsExactBelowTwoToThe31) {
  std::vector<int> divisors;
  for (int d = 1; d <= 1100; ++d) divisors.push_back(d);
  for (int d :
       {4095, 4096, 4097, 65535, 65536, 65537, 1000003, (1 << 30) - 1, 1 << 30, (1 << 30) + 1, 2147483646, 2147483647})
    divisors.push_back(d);
  uint64_t state = 0x9e3779b97f4a7c15ull;
  auto next = [&] {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    return static_cast<int>(state % 2147483648ull);
  };
  for (int d : divisors) {
    const gemm::FastDiv by(d);
    std::vector<int64_t> ns = {0, 1, d - 1, d, int64_t(d) + 1, 2147483647, 2147483646};
    for (int64_t q : {int64_t(2), int64_t(3), int64_t(1000), 2147483647 / int64_t(d)})
      for (int64_t e : {-1, 0, 1}) ns.push_back(q * d + e);
    for (int i = 0; i < 64; ++i) ns.push_back(next());
    for (int64_t n : ns) {
      if (n < 0 || n > 2147483647) continue;
      ASSERT_EQ(by(static_cast<int>(n)), static_cast<int>(n / d)) << n << " / " << d;
    }
  }
}

TEST(WgmmaSchedule, TileOriginFollowsTheRaster) {
  // tile_origin_of (FastDivs set by make_schedule) against tile_coords' divisions, every
  // tile: partial last groups, groups wider than the tile rows, snake order, batch items.
  for (int tiles_m = 1; tiles_m <= 19; ++tiles_m)
    for (int tiles_n = 1; tiles_n <= 6; ++tiles_n)
      for (int group_m : {1, 2, 3, 4, 8, 16, 32})
        for (int items : {1, 3})
          for (bool snake : {false, true}) {
            const gemm::WgmmaSchedule s = make_schedule(tiles_m, tiles_n, 4, items, group_m);
            for (int t = 0; t < s.total; ++t) {
              const int item = t / (tiles_m * tiles_n);
              const gemm::TileCoord c =
                  gemm::tile_coords(t - item * tiles_m * tiles_n, tiles_m, tiles_n, group_m, snake);
              const gemm::TileOrigin o = gemm::tile_origin_of<64, 128, 2>(s, t, snake, 1);
              ASSERT_EQ(o.item, item) << tiles_m << "x" << tiles_n << " group " << group_m << " tile " << t;
              ASSERT_EQ(o.m0, (c.m * 2 + 1) * 64) << tiles_m << "x" << tiles_n << " group " << group_m << " tile " << t;
              ASSERT_EQ(o.n0, c.n * 128) << tiles_m << "x" << tiles_n << " group " << group_m << " tile " << t;
            }
          }
}

TEST(WgmmaSchedule, SplitUnitsSpreadOverAllCtas) {
  // 128 tiles split in 2 on 132 CTAs: 256 units, at most 2 a CTA. (Units handed to the
  // CTAs beyond the tiles only would give 4 CTAs 32 units each: the whole call 16
  // times slower.)
  for (const Plan& p : {Plan{1, 128, 64, 132, 0, 2}, Plan{8, 16, 16, 132, 0, 8}, Plan{1, 100, 172, 132, 0, 3},
                        Plan{1, 3, 100, 5, 0, 7}}) {
    const gemm::WgmmaSchedule s = planned(p);
    ASSERT_EQ(s.split_first, 0);
    const int ctas = launch_ctas(s, p.ctas);
    const int units = s.total * s.ways;
    const Coverage c = cover(s, ctas);
    EXPECT_EQ(c.wrong_blocks + c.empty_units + c.wrong_arrivals, 0);
    EXPECT_EQ(c.most_split_units, (units + ctas - 1) / ctas)
        << s.total << " tiles in " << s.ways << " ranges on " << ctas << " CTAs";
  }
}

TEST(WgmmaSchedule, EveryWayCountCovers) {
  // 1 .. 16 ways over tile counts and K lengths around the edges (ranges of one block,
  // helpers with several units when tiles x ways exceeds the CTAs).
  int splits = 0;
  for (int ways = 1; ways <= 16; ++ways)
    for (int tiles : {1, 2, 7, 31, 65, 131})
      for (int k_blocks : {1, 2, ways, ways + 1, 3 * ways - 1, 172}) {
        const Plan p{1, tiles, std::max(k_blocks, 1), 132, 0, ways};
        const gemm::WgmmaSchedule s = planned(p);
        splits += s.ways > 1;
        const Coverage c = cover(s, launch_ctas(s, p.ctas));
        ASSERT_EQ(c.wrong_blocks + c.empty_units + c.wrong_arrivals, 0)
            << tiles << " tiles of " << k_blocks << " K blocks, " << ways << " ways";
      }
  EXPECT_GT(splits, 300);
  // The tail split in 2 .. 8 ranges, helper shares from one K block a range to all but one.
  int tail_splits = 0;
  for (int ways = 2; ways <= 8; ++ways)
    for (int ctas : {4, 66, 132})
      for (int tiles : {ctas + 1, ctas + ctas / 2, 3 * ctas - 1})
        for (int k_blocks : {2, ways, ways + 3, 48})
          for (int helper_blocks : {1, ways - 1, k_blocks / 2, k_blocks - 1}) {
            const Plan p{1, tiles, k_blocks, ctas, helper_blocks, 0, ways};
            const gemm::WgmmaSchedule s = planned(p);
            tail_splits += s.ways > 1;
            const Coverage c = cover(s, launch_ctas(s, p.ctas));
            ASSERT_EQ(c.wrong_blocks + c.empty_units + c.wrong_arrivals, 0)
                << tiles << " tiles of " << k_blocks << " K blocks on " << ctas << " CTAs, " << ways
                << " tail ways, helpers " << helper_blocks;
          }
  EXPECT_GT(tail_splits, 300);
}

/// A call as the choice table reads it: packed row-major A (not transposed), B stored
/// N x K (trans_b) or K x N, C m x n in the input type or f32; f32 calls allow tf32.
core::GemmArgs table_call(int64_t m, int64_t n, int64_t k, DType ab, bool trans_b = false, int64_t batch = 1,
                          bool c_f32 = false) {
  core::GemmArgs args{};
  args.m = m, args.n = n, args.k = k, args.ab_type = ab, args.c_type = c_f32 ? DType::F32 : ab;
  args.trans_b = trans_b;
  args.batch = batch;
  args.lda = k;
  args.ldb = trans_b ? k : n;
  args.ldc = n;
  args.stride_c = m * n;
  args.allow_tf32 = ab == DType::F32;
  return args;
}

/// The table's choice for a tf32 call (B N-contiguous, or K-major with `trans_b`) on a
/// 132-SM sm_90 device.
std::string tf32_choice(int64_t m, int64_t n, int64_t k, bool trans_b, int64_t batch = 1) {
  cuda::CudaContext ctx;
  ctx.sm_count = 132;
  ctx.arch.cc = 90;
  return gemm::choose_wgmma_config(table_call(m, n, k, DType::F32, trans_b, batch), ctx).name();
}

TEST(WgmmaChoiceTable, IssueShapes) {
  cuda::CudaContext ctx;
  ctx.sm_count = 132;  // H100 SXM
  auto choice = [&](int64_t m, int64_t n, int64_t k, DType ab, bool trans_b = false, int64_t batch = 1,
                    bool c_f32 = false) {
    return gemm::choose_wgmma_config(table_call(m, n, k, ab, trans_b, batch, c_f32), ctx).name();
  };
  EXPECT_EQ(choice(4096, 4096, 4096, DType::BF16), "128x256c2");
  EXPECT_EQ(choice(2048, 4096, 4096, DType::F16), "128x256c2");
  EXPECT_EQ(choice(1024, 4096, 4096, DType::F16), "128x256c2");            // 64 clusters
  EXPECT_EQ(choice(1536, 1536, 1536, DType::F16), "192x96c2");             // 64 clusters for 66 slots, not 36
  EXPECT_EQ(choice(1536, 1536, 1536, DType::BF16, true), "192x96kc2");     // K-major B: its 96 rows alone
  EXPECT_EQ(choice(1536, 1536, 1536, DType::F32, true), "192x96c2");       // tf32: 128 CTAs in one wave
  EXPECT_EQ(choice(1280, 1280, 1280, DType::F32, true), "128x128");        // tf32: 100 CTAs of the smaller tile
  EXPECT_EQ(choice(1792, 1792, 1792, DType::F16), "128x256c2");            // 100 192x96 clusters: not one wave
  EXPECT_EQ(choice(1536, 1536, 1536, DType::F16, false, 2), "128x256c2");  // batched: not measured
  EXPECT_EQ(choice(3072, 3072, 3072, DType::BF16), "128x192c2");           // 2.9 rounds, not 2.2
  EXPECT_EQ(choice(3000, 3000, 3000, DType::BF16), "192x192c2");  // 1.94 rounds of 192x192 clusters, 2.2 of 128x256
  EXPECT_EQ(choice(3000, 3000, 3000, DType::BF16, false, 2), "128x256c2");  // batched: not measured
  EXPECT_EQ(choice(256, 11008, 4096, DType::BF16, true), "128x192c2");      // 58 clusters, not 43 (128x168: H200)
  EXPECT_EQ(choice(256, 14336, 4096, DType::BF16), "128x256c2");            // 75 clusters: two rounds
  EXPECT_EQ(choice(2560, 2560, 2560, DType::BF16), "128x256c2");
  EXPECT_EQ(choice(5000, 5000, 5120, DType::BF16, true), "128x256c2");  // estimated level: 128x192 measured behind
  EXPECT_EQ(choice(6144, 6144, 6144, DType::BF16), "128x256c2");
  EXPECT_EQ(choice(8192, 8192, 8192, DType::BF16), "128x256c2");
  EXPECT_EQ(choice(512, 4096, 4096, DType::BF16), "128x128c2");           // 128 tiles (4 rows), no split
  EXPECT_EQ(choice(512, 4096, 11008, DType::BF16), "128x256c2 splitk2");  // 32 clusters of 172 K blocks
  EXPECT_EQ(choice(256, 4096, 11008, DType::BF16), "128x256c2 splitk4");
  EXPECT_EQ(choice(256, 4096, 4096, DType::BF16), "128x128c2 splitk2");  // 64 tiles of 64 K blocks
  EXPECT_EQ(choice(128, 4096, 4096, DType::BF16), "64x64c2");            // 64 clusters of 2 x 64x64, the whole K
  ctx.arch.mem_gbps = 4814;  // the H200: 128x64 tiles in one wave, 128x128 split
  // 128x168 clusters where they fill whole rounds (K-major B).
  EXPECT_EQ(choice(256, 11008, 4096, DType::BF16, true), "128x168c2");   // 66 clusters: one whole round
  EXPECT_EQ(choice(512, 11008, 4096, DType::F16, true), "128x168c2");    // 132: two whole rounds
  EXPECT_EQ(choice(1024, 11008, 4096, DType::BF16, true), "128x168c2");  // 264: four
  EXPECT_EQ(choice(2048, 11008, 4096, DType::BF16, true), "128x256c2");  // 5.2 rounds of 128x256 clusters
  EXPECT_EQ(choice(256, 11008, 4096, DType::BF16), "128x192c2");         // B N-contiguous: 58 clusters, not 43
  EXPECT_EQ(choice(256, 11008, 4096, DType::F32, true), "128x192c2");    // tf32: 116 CTAs in one wave
  EXPECT_EQ(choice(256, 14336, 4096, DType::BF16, true), "128x256c2");   // 86 clusters: a partial round
  EXPECT_EQ(choice(1024, 14336, 4096, DType::BF16, true), "128x256c2");
  EXPECT_EQ(choice(1536, 1536, 1536, DType::BF16, true), "192x96kc2");  // 64 clusters, not 60 of 128x168
  EXPECT_EQ(choice(3072, 3072, 3072, DType::BF16, true), "128x192c2");
  EXPECT_EQ(choice(2048, 2048, 2048, DType::BF16, true), "128x256c2");
  EXPECT_EQ(choice(4096, 4096, 4096, DType::BF16, true), "128x256c2");
  EXPECT_EQ(choice(64, 4096, 4096, DType::BF16, true), "64x32");  // 128 tiles over the whole K
  EXPECT_EQ(choice(48, 4096, 11008, DType::F16, true), "64x32");
  EXPECT_EQ(choice(64, 4096, 14336, DType::BF16, true), "64x32");
  // 64x64 tiles over the whole K, one wave filling a third of the SMs or more.
  EXPECT_EQ(choice(32, 4096, 4096, DType::BF16, true), "64x64");  // 32 rows: 64x64, not 64x32
  EXPECT_EQ(choice(64, 4096, 4096, DType::BF16), "64x64");        // B N-contiguous: not 64x32
  EXPECT_EQ(choice(16, 4096, 14336, DType::F16), "64x64");
  EXPECT_EQ(choice(48, 4096, 11008, DType::BF16), "64x64");
  EXPECT_EQ(choice(1, 4096, 4096, DType::BF16), "64x64");
  EXPECT_EQ(choice(8, 4096, 14336, DType::BF16, true), "64x64");
  EXPECT_EQ(choice(64, 11008, 4096, DType::BF16), "64x128");               // 172 tiles: two waves
  EXPECT_EQ(choice(64, 2048, 4096, DType::BF16), "64x128 splitk2");        // 32 tiles: a quarter of the SMs
  EXPECT_EQ(choice(64, 11008, 4096, DType::BF16, true), "64x128");         // 344 tiles: 2.6 waves
  EXPECT_EQ(choice(64, 2048, 4096, DType::BF16, true), "64x128 splitk2");  // 64 tiles: not measured
  EXPECT_EQ(choice(64, 512, 512, DType::BF16, true), "64x128");            // small: not ahead
  EXPECT_EQ(choice(128, 4096, 4096, DType::BF16), "64x64");                // 128 tiles over 64 K blocks
  EXPECT_EQ(choice(128, 4096, 4096, DType::BF16, true), "64x64");
  EXPECT_EQ(choice(128, 4096, 4096, DType::F32, true), "128x128 splitk3");  // tf32: not measured
  EXPECT_EQ(choice(256, 4096, 4096, DType::F16, true), "128x64");
  EXPECT_EQ(choice(128, 4096, 11008, DType::BF16, true), "128x64 splitk2");
  EXPECT_EQ(choice(128, 4096, 14336, DType::F16), "128x64 splitk2");
  EXPECT_EQ(choice(128, 11008, 4096, DType::BF16), "128x128");        // 172 tiles of 128x64: two waves
  EXPECT_EQ(choice(96, 4096, 14336, DType::F16), "128x128 splitk3");  // rows end inside a box
  EXPECT_EQ(choice(96, 4096, 4096, DType::BF16), "128x128 splitk2");
  EXPECT_NE(choice(128, 4096, 4096, DType::BF16, false, 2), "128x64");      // batched: not measured
  EXPECT_EQ(choice(128, 4096, 2048, DType::BF16), "64x64c2");               // 32 K blocks: not measured
  EXPECT_EQ(choice(4096, 4096, 128, DType::F16, true, 1024), "128x256c2");  // Q K^T d = 128: claimed tiles
  // 128x256 clusters that would need a K split: 128x128 clusters filling one wave.
  EXPECT_EQ(choice(512, 4096, 11008, DType::BF16), "128x128c2");  // 128 tiles, unsplit
  EXPECT_EQ(choice(512, 4096, 14336, DType::BF16, true), "128x128c2");
  EXPECT_EQ(choice(256, 4096, 11008, DType::BF16), "128x128c2 splitk2");  // 64 tiles in 2
  EXPECT_EQ(choice(256, 4096, 14336, DType::F16, true), "128x128c2 splitk2");
  EXPECT_EQ(choice(512, 4096, 11008, DType::BF16, false, 2), "128x256c2");  // batched: not measured
  EXPECT_EQ(choice(384, 4096, 11008, DType::BF16), "128x256c2 splitk2");    // 3 tile rows: no pairs
  EXPECT_EQ(choice(1024, 4096, 11008, DType::BF16), "128x256c2");           // 64 clusters: no split
  EXPECT_EQ(choice(3000, 3000, 3000, DType::BF16), "192x192c2");
  // 257..512 rows against a wide N-contiguous weight: 128x128 tiles, no cluster.
  EXPECT_EQ(choice(512, 11008, 4096, DType::BF16), "128x128");
  EXPECT_EQ(choice(384, 14336, 4096, DType::F16), "128x128");
  EXPECT_EQ(choice(512, 14336, 4096, DType::BF16), "128x128");
  EXPECT_EQ(choice(512, 11008, 4096, DType::BF16, true), "128x168c2");    // K-major B: its own tile
  EXPECT_NE(choice(768, 11008, 4096, DType::BF16), "128x128");            // 768 rows: not measured ahead
  EXPECT_NE(choice(256, 11008, 4096, DType::BF16), "128x128");            // 128x192 clusters ahead
  EXPECT_NE(choice(512, 11008, 11008, DType::BF16), "128x128");           // a longer K: not measured
  EXPECT_NE(choice(512, 11008, 4096, DType::BF16, false, 2), "128x128");  // batched: not measured
  ctx.arch.mem_gbps = 3352;                                               // the H100
  EXPECT_EQ(choice(512, 4096, 11008, DType::BF16), "128x256c2 splitk2");
  EXPECT_NE(choice(512, 11008, 4096, DType::BF16), "128x128");  // the H200's rule only
  EXPECT_EQ(choice(128, 4096, 11008, DType::BF16, true), "64x64c2");
  EXPECT_EQ(choice(4096, 4096, 128, DType::F16, true, 1024), "128x256store");
  EXPECT_EQ(choice(65, 4096, 4096, DType::BF16), "64x64c2");
  EXPECT_EQ(choice(384, 4096, 4096, DType::BF16), "128x128");         // 3 tile rows: a cluster of 2 would be half empty
  EXPECT_EQ(choice(16, 4096, 11008, DType::BF16), "64x128 splitk4");  // 32 tiles of 172 K blocks
  EXPECT_EQ(choice(1000, 1000, 1000, DType::F16), "64x128c2");        // 2000-byte rows: 64x128 in clusters of 2
  EXPECT_EQ(choice(1000, 1000, 1100, DType::F16), "128x128");         // 18 K blocks: no split
  EXPECT_EQ(choice(1280, 1280, 1280, DType::BF16), "128x128");        // 20 K blocks: no cluster
  EXPECT_EQ(choice(1280, 1280, 4096, DType::BF16), "128x128c2");      // 64 K blocks: clusters of 2
  EXPECT_EQ(choice(1000, 1000, 1000, DType::F32, true), "128x64");    // tf32, K-major B: 128 CTAs
  EXPECT_EQ(choice(512, 512, 512, DType::BF16), "64x128");            // 16 K blocks: 32 tiles of 64x128
  EXPECT_EQ(choice(1024, 1024, 1024, DType::F16), "64x128");          // 128 tiles in one wave
  EXPECT_EQ(choice(1024, 1024, 1088, DType::F16), "128x128");         // 17 K blocks
  EXPECT_EQ(choice(1152, 1152, 1024, DType::F16), "128x128");         // 162 tiles of 64x128: two waves
  EXPECT_EQ(choice(128, 11008, 4096, DType::BF16), "128x128");        // 172 clusters of 64x64: 2.6 waves
  EXPECT_EQ(choice(1000, 1000, 1000, DType::F32), "tf32nn64");        // tf32 NN: below
  EXPECT_EQ(choice(64, 64, 64, DType::BF16), "64x128");               // one K block: nothing to split
  // A linear layer with many columns (a vocabulary): at most 64 rows never take a
  // cluster along M, whose second CTA would have no rows; 65..128 rows are two 64-row
  // tiles, but 2004 clusters of them would take 30 waves.
  EXPECT_EQ(choice(16, 128256, 4096, DType::BF16), "64x128");
  EXPECT_EQ(choice(128, 128256, 4096, DType::BF16), "128x128");
  EXPECT_EQ(choice(256, 128256, 4096, DType::BF16), "128x256c2");
  // Attention's Q K^T (1024 heads, K = d = 64 or 128): C's stores set the time.
  EXPECT_EQ(choice(512, 512, 128, DType::BF16, true, 1024), "128x256store");
  EXPECT_EQ(choice(4096, 4096, 128, DType::F16, true, 1024), "128x256store");
  EXPECT_EQ(choice(4096, 4096, 64, DType::F16, true, 1024), "128x256c2");           // one K block: the 4 stages win
  EXPECT_EQ(choice(4096, 4096, 192, DType::F16, true, 1024), "128x256c2");          // three K blocks
  EXPECT_NE(choice(512, 512, 128, DType::BF16, true, 1), "128x256store");           // 4 clusters: no rounds to overlap
  EXPECT_NE(choice(512, 512, 128, DType::BF16, true, 1024, true), "128x256store");  // f32 C
}

/// tf32 with N-contiguous B: the C^T kernel's tile (256, 128 or 64 rows) its cost model
/// estimates shortest, each split where its tiles are few (the cells measured on the
/// H200, notes/llm-gemm.md "The C^T kernel's smaller tiles").
TEST(WgmmaChoiceTable, Tf32NNTileByEstimate) {
  auto choice = [](int64_t m, int64_t n, int64_t k, int64_t batch = 1) { return tf32_choice(m, n, k, false, batch); };
  // Squares: 64-row tiles up to 1024 (128 tiles: one wave), 128-row ones up to 1792.
  for (int64_t s : {128, 256, 512, 1000, 1024}) EXPECT_EQ(choice(s, s, s), "tf32nn64") << s;
  for (int64_t s : {1280, 1536, 1792}) EXPECT_EQ(choice(s, s, s), "tf32nn128") << s;
  EXPECT_EQ(choice(2048, 2048, 2048), "tf32nn");  // 128 tiles of 256 rows: one wave
  EXPECT_EQ(choice(3000, 3000, 3000), "tf32nn");
  // Up to 64 rows every tile counts as many: the smallest, split where they are few.
  EXPECT_EQ(choice(16, 4096, 4096), "tf32nn64 splitk4");
  EXPECT_EQ(choice(64, 4096, 4096), "tf32nn64 splitk4");
  EXPECT_EQ(choice(16, 128256, 4096), "tf32nn64");
  EXPECT_EQ(choice(64, 14336, 4096), "tf32nn64");
  EXPECT_EQ(choice(128, 4096, 4096), "tf32nn64 splitk2");  // 64 tiles in 2, against 32 in 4
  EXPECT_EQ(choice(128, 4096, 11008), "tf32nn64 splitk2");
  EXPECT_EQ(choice(128, 14336, 4096), "tf32nn128");  // 224 tiles of 64 rows: two rounds
  EXPECT_EQ(choice(128, 128256, 4096), "tf32nn128");
  EXPECT_EQ(choice(256, 4096, 4096), "tf32nn128 splitk2");
  EXPECT_EQ(choice(256, 11008, 4096), "tf32nn128");  // 172 tiles: the tail split covers the rest
  EXPECT_EQ(choice(256, 4096, 14336), "tf32nn128 splitk2");
  EXPECT_EQ(choice(512, 4096, 4096), "tf32nn128");  // 128 tiles, against 64 in 2
  // The 256-row tiles where they fill the SMs or split over a long K.
  EXPECT_EQ(choice(256, 14336, 4096), "tf32nn");
  EXPECT_EQ(choice(512, 4096, 11008), "tf32nn splitk2");
  EXPECT_EQ(choice(512, 11008, 4096), "tf32nn");
  EXPECT_EQ(choice(1024, 4096, 4096), "tf32nn");
  EXPECT_EQ(choice(512, 128256, 4096), "tf32nn");
  // Batches count every item's tiles (one launch runs them all).
  EXPECT_EQ(choice(512, 512, 512, 16), "tf32nn");
  EXPECT_EQ(choice(64, 128, 4096, 3), "tf32nn64 splitk4");
  // K-major B is not the C^T kernel's.
  EXPECT_NE(tf32_choice(512, 512, 512, true).rfind("tf32nn", 0), 0u);
}

/// Exact f32 (3xTF32 on the C^T kernel, B either way): the 128- or 64-row tile the cost
/// model estimates shortest, split where its tiles are few, ranges down to 4 K blocks
/// (notes/llm-gemm.md, "Exact f32 on wgmma_tma").
TEST(WgmmaChoiceTable, ExactF32TileByEstimate) {
  cuda::CudaContext ctx;
  ctx.sm_count = 132;
  ctx.arch.cc = 90;
  for (const bool trans_b : {false, true}) {
    auto choice = [&](int64_t m, int64_t n, int64_t k) {
      core::GemmArgs args = table_call(m, n, k, DType::F32, trans_b);
      args.allow_tf32 = false;
      return gemm::choose_wgmma_config(args, ctx).name();
    };
    EXPECT_EQ(choice(128, 128, 128), "f32nn64");
    EXPECT_EQ(choice(256, 256, 256), "f32nn64 splitk2");  // 8 K blocks: two ranges of 4
    EXPECT_EQ(choice(512, 512, 512), "f32nn64 splitk4");
    for (int64_t s : {768, 1000, 1024}) EXPECT_EQ(choice(s, s, s), "f32nn64") << s;  // up to 128 tiles: one wave
    for (int64_t s : {1536, 2048, 4096}) EXPECT_EQ(choice(s, s, s), "f32nn128") << s;
    EXPECT_EQ(choice(32, 4096, 4096), "f32nn64 splitk4");
    EXPECT_EQ(choice(128, 4096, 4096), "f32nn64 splitk2");
    EXPECT_EQ(choice(256, 4096, 4096), "f32nn128 splitk2");
    EXPECT_EQ(choice(512, 4096, 4096), "f32nn128");  // 128 tiles: one wave
    EXPECT_EQ(choice(512, 128256, 4096), "f32nn128");
    EXPECT_EQ(choice(32, 128256, 4096), "f32nn64");
  }
  // tf32 calls never take the exact tiles.
  EXPECT_EQ(tf32_choice(512, 4096, 4096, false).rfind("f32nn", 0), std::string::npos);
}

/// tf32 with K-major B over more than 128 rows, K no longer than M or N: the smallest of
/// 64x64, 128x64, 128x128, 192x96 and 128x192 in clusters of 2 whose CTAs fit one wave (the
/// squares measured on the H200, notes/llm-gemm.md "tf32 with K-major B"); none fits:
/// the 16-bit rules.
TEST(WgmmaChoiceTable, Tf32KMajorBWaveTile) {
  cuda::CudaContext ctx;
  ctx.sm_count = 132;
  ctx.arch.cc = 90;
  auto choice = [](int64_t m, int64_t n, int64_t k, int64_t batch = 1) { return tf32_choice(m, n, k, true, batch); };
  for (int64_t s : {256, 384, 512, 640, 704}) EXPECT_EQ(choice(s, s, s), "64x64") << s;  // 121 at 704
  EXPECT_EQ(choice(768, 768, 768), "128x64");                                            // 144 of 64x64, 72 of 128x64
  EXPECT_EQ(choice(1000, 1000, 1000), "128x64");                                         // 128
  EXPECT_EQ(choice(1024, 1024, 1024), "128x64");                                         // 128
  EXPECT_EQ(choice(1408, 1408, 1408), "128x128");                                        // 121 of 128x128
  EXPECT_EQ(choice(1536, 1536, 1536), "192x96c2");   // 144 of 128x128, 128 CTAs of 192x96
  EXPECT_EQ(choice(768, 3072, 3072), "192x96c2");    // 144 of 128x128, 128 CTAs of 192x96
  EXPECT_EQ(choice(256, 11008, 4096), "128x192c2");  // 230 CTAs of 192x96, 116 of 128x192
  EXPECT_EQ(choice(512, 4096, 4096), "128x128");     // 128 tiles
  // None fits one wave: the rules of 16-bit calls.
  EXPECT_EQ(choice(2048, 2048, 2048),
            gemm::choose_wgmma_config(table_call(2048, 2048, 4096, DType::BF16, true), ctx).name());
  EXPECT_EQ(choice(4096, 4096, 4096), "128x256c2");
  // K longer than both M and N keeps the split rules.
  EXPECT_NE(choice(256, 4096, 11008), "128x64");
  EXPECT_EQ(choice(256, 4096, 4096), "128x64");
  // Up to 128 rows and batches keep their rules.
  EXPECT_NE(choice(128, 4096, 4096), "128x64");
  EXPECT_NE(choice(512, 512, 512, 4), "64x64");
}

TEST(WgmmaChoiceTable, ConfigNames) {
  gemm::WgmmaChoice c;
  ASSERT_TRUE(gemm::parse_wgmma_config("128x128 splitk4", &c));
  EXPECT_EQ(c.tile, gemm::WgmmaTile::Mid);
  EXPECT_EQ(c.ways, 4);
  EXPECT_EQ(c.name(), "128x128 splitk4");
  for (const char* name : {"128x256c2",       "128x128",           "64x128",    "tf32nn",
                           "64x128 splitk16", "tf32nn splitk3",    "tf32nn128", "tf32nn128 splitk4",
                           "tf32nn64",        "128x256store",      "128x128c2", "128x64",
                           "64x64c2",         "64x64c2 splitk2",   "64x128c2",  "128x64c2",
                           "128x192c2",       "128x192c2 splitk3", "192x192c2", "192x192c2 splitk2",
                           "128x168c2",       "128x168c2 splitk4", "64x32",     "64x32 splitk3",
                           "64x64",           "64x64 splitk2",     "192x96c2",  "192x96c2 splitk3",
                           "192x96kc2"}) {
    ASSERT_TRUE(gemm::parse_wgmma_config(name, &c)) << name;
    EXPECT_EQ(c.name(), name);
  }
  ASSERT_TRUE(gemm::parse_wgmma_config("64x128-splitk2", &c));
  EXPECT_EQ(c.name(), "64x128 splitk2");
  ASSERT_TRUE(gemm::parse_wgmma_config("128x256c2:splitk1", &c));
  EXPECT_EQ(c.name(), "128x256c2");
  for (const char* bad : {"", "64x96", "128x128 split4", "128x128 splitk0", "128x128 splitk17", "128x128 splitk",
                          "128x128 splitk4x", "128X128"})
    EXPECT_FALSE(gemm::parse_wgmma_config(bad, &c)) << bad;
}

/// hits[tile * k_blocks + kb] += 1 for every K block of every unit of every CTA.
__global__ void count_units(gemm::WgmmaSchedule s, int ctas, int* hits) {
  const int cta = static_cast<int>(blockIdx.x);
  gemm::WorkUnit u;
  for (int i = 0; gemm::work_unit(s, cta, ctas, i, u); ++i)
    for (int kb = u.kb_begin; kb < u.kb_end; ++kb) atomicAdd(&hits[u.tile * s.k_blocks + kb], 1);
}

TEST(WgmmaSchedule, UnitsCoverEveryTileAndKBlockOnceOnTheDevice) {
  std::string why_not;
  if (!cuda_device_present(&why_not)) GTEST_SKIP() << why_not << " (the work units are enumerated by device code)";
  for (const Plan& p : kPlans) {
    const gemm::WgmmaSchedule s = planned(p);
    const int ctas = launch_ctas(s, p.ctas);
    const size_t cells = static_cast<size_t>(s.total) * s.k_blocks;
    int* hits = nullptr;
    ASSERT_EQ(cudaMalloc(&hits, cells * sizeof(int)), cudaSuccess);
    ASSERT_EQ(cudaMemset(hits, 0, cells * sizeof(int)), cudaSuccess);
    count_units<<<ctas, 1>>>(s, ctas, hits);
    std::vector<int> host(cells);
    ASSERT_EQ(cudaMemcpy(host.data(), hits, cells * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
    cudaFree(hits);
    int wrong = 0;
    for (int h : host) wrong += h != 1;
    EXPECT_EQ(wrong, 0) << p.tiles_m << "x" << p.tiles_n << " tiles of " << p.k_blocks << " K blocks on " << ctas
                        << " CTAs, split_first " << s.split_first << ", split_kb " << s.split_kb << ", ways " << s.ways;
  }
}

}  // namespace
}  // namespace gpukern::test::cuda_gemm
