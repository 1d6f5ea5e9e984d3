// split_row's plans (src/cuda/softmax/06_split_row.cu): the policy's choice for the
// benchmark shapes pinned on a synthetic H100 context (no device needed), and every plan
// the rung builds forced on the device -- the split across ordinary blocks (the
// policy's path before sm_90) included -- on odd shapes, five memory layouts, softmax and
// log-softmax, with special rows, against the double reference. Cluster sizes beyond the
// policy's (up to 16, the non-portable size) leave CTAs with empty chunks.
#include "softmax_harness.cuh"

#include "cuda/softmax/06_split_row.cuh"
#include "cuda/softmax/rows.cuh"
#include "cuda/softmax/softmax_rungs.cuh"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace gpukern::test::cuda_softmax {
namespace {

using cuda::CudaContext;
using cuda::softmax::SplitLayout;
using cuda::softmax::SplitPlan;

// ---- the policy, on a synthetic context ----

/// The H100's figures as the policy reads them.
CudaContext h100() {
  CudaContext ctx;
  ctx.arch.vendor = core::Vendor::Nvidia;
  ctx.arch.cc = 90;
  ctx.arch.name = "sm_90";
  ctx.sm_count = 132;
  ctx.smem_per_block_optin = 232448;
  ctx.cluster_launch = true;
  return ctx;
}

/// A call on fake device addresses: 16-byte aligned, or 2 bytes off (scalar path).
core::SoftmaxArgs call(DType dtype, int64_t rows, int64_t cols, bool aligned = true) {
  core::SoftmaxArgs a;
  a.rows = rows;
  a.cols = cols;
  a.dtype = dtype;
  a.x = reinterpret_cast<const void*>(aligned ? 0x10000 : 0x10002);
  a.y = reinterpret_cast<void*>(0x20000);
  a.ldx = a.ldy = cols;
  return a;
}

std::string plan(const core::SoftmaxArgs& a, const CudaContext& ctx) {
  return cuda::softmax::to_string(cuda::softmax::split_row_plan(a, ctx));
}

TEST(SplitRowPolicy, PlansOfLongRowsOnTheH100) {
  const CudaContext ctx = h100();
  // 64x262144: f32 in 16 CTAs of 256 x 8 + shared memory; 16-bit in pairs of one-SM CTAs.
  EXPECT_EQ(plan(call(DType::F32, 64, 262144), ctx), "hybrid-f32/c16");
  EXPECT_EQ(plan(call(DType::F16, 64, 262144), ctx), "hybrid16-1sm/c2");
  EXPECT_EQ(plan(call(DType::BF16, 64, 262144), ctx), "hybrid16-1sm/c2");
  // Too few rows to fill half the SMs with pairs: 4 CTAs an SM instead.
  EXPECT_EQ(plan(call(DType::F16, 8, 262144), ctx), "hybrid16/c8");
  EXPECT_EQ(plan(call(DType::F16, 1024, 32768), ctx), "hybrid16-1sm/c1");
  EXPECT_EQ(plan(call(DType::F32, 1024, 32768), ctx), "hybrid-f32/c2");
  // Scalar path: the chunk in registers, at most 8 CTAs; beyond, the split across blocks.
  EXPECT_EQ(plan(call(DType::F32, 1024, 32768, false), ctx), "registers512x8/c8");
  EXPECT_EQ(plan(call(DType::F16, 64, 65536, false), ctx), "registers512x16/c8");
  EXPECT_EQ(plan(call(DType::F32, 64, 262144, false), ctx), "blocks");
  // Rows beyond 16 hybrid CTAs: the split across blocks.
  EXPECT_EQ(plan(call(DType::F32, 2, int64_t(1) << 22), ctx), "blocks");
}

TEST(SplitRowPolicy, WithoutClustersEveryCallSplitsAcrossBlocks) {
  CudaContext ctx = h100();
  ctx.cluster_launch = false;
  for (DType t : {DType::F32, DType::F16, DType::BF16})
    for (bool aligned : {true, false})
      for (int64_t cols : {int64_t(1), int64_t(1000), int64_t(262144)})
        EXPECT_EQ(plan(call(t, 64, cols, aligned), ctx), "blocks") << core::dtype_name(t) << " " << cols;
}

/// auto's boundaries between warp_row, block_row and split_row (rows.cuh), where they were
/// measured: 16-bit rows up to 3 KB in warp_row, 4 KB in block_row; rows of 32-64 KB and
/// rows as many as SMs in block_row; fewer rows than SMs of 128 KB or more in split_row.
TEST(SoftmaxAutoOrder, BoundariesOfWarpRowAndSplitRow) {
  const CudaContext ctx = h100();
  using cuda::softmax::few_long_rows;
  using cuda::softmax::short_rows;
  for (DType t : {DType::F16, DType::BF16}) {
    for (int64_t cols : {int64_t(512), int64_t(768), int64_t(1024), int64_t(1536)})
      EXPECT_TRUE(short_rows(call(t, 16384, cols), ctx)) << cols;
    EXPECT_FALSE(short_rows(call(t, 16384, 2048), ctx));
    for (int64_t rows : {int64_t(16), int64_t(128), int64_t(256)})
      for (int64_t cols : {int64_t(16384), int64_t(32768)})
        EXPECT_FALSE(few_long_rows(call(t, rows, cols), ctx)) << rows << " x " << cols;
    for (int64_t rows : {int64_t(16), int64_t(64), int64_t(128)})
      EXPECT_TRUE(few_long_rows(call(t, rows, 65536), ctx)) << rows;
    EXPECT_FALSE(few_long_rows(call(t, 200, 65536), ctx));
  }
  EXPECT_TRUE(short_rows(call(DType::F32, 16384, 768), ctx));
  EXPECT_FALSE(short_rows(call(DType::F32, 16384, 1024), ctx));
  EXPECT_FALSE(few_long_rows(call(DType::F32, 64, 16384), ctx));
  EXPECT_TRUE(few_long_rows(call(DType::F32, 32, 32768), ctx));
  EXPECT_TRUE(few_long_rows(call(DType::F32, 64, 262144), ctx));
  CudaContext no_clusters = ctx;
  no_clusters.cluster_launch = false;
  EXPECT_FALSE(few_long_rows(call(DType::F32, 64, 262144), no_clusters));
}

/// A plan of one-CTA clusters (hybrid16-1sm/c1 above) launches plainly: ClusterLaunch
/// sets no cluster attribute of size 1 (with it, the same kernel ran slower).
TEST(SplitRowPolicy, ClustersOfOneLaunchWithoutTheClusterAttribute) {
  const cuda::ClusterLaunch one(1024, 512, 0, nullptr, 1);
  EXPECT_EQ(one.config.numAttrs, 0u);
  EXPECT_EQ(one.config.gridDim.x, 1024u);
  for (int size : {2, 8, 16}) {
    const cuda::ClusterLaunch launch(64 * size, 512, 0, nullptr, size);
    ASSERT_EQ(launch.config.numAttrs, 1u) << size;
    EXPECT_EQ(launch.config.attrs[0].id, cudaLaunchAttributeClusterDimension) << size;
    EXPECT_EQ(launch.config.attrs[0].val.clusterDim.x, static_cast<unsigned>(size));
  }
}

// ---- every plan, forced on the device ----

struct PlanCase {
  const char* name;  // the test name
  bool policy;       // split_row_run (the policy) instead of a forced plan
  SplitPlan plan;
};

const PlanCase kPlans[] = {
    {"policy", true, {}},
    {"blocks", false, {SplitLayout::Blocks, 0}},
    {"registers512x8_c1", false, {SplitLayout::Registers512x8, 1}},
    {"registers512x8_c2", false, {SplitLayout::Registers512x8, 2}},
    {"registers512x8_c8", false, {SplitLayout::Registers512x8, 8}},
    {"registers512x8_c16", false, {SplitLayout::Registers512x8, 16}},
    {"registers512x16_c1", false, {SplitLayout::Registers512x16, 1}},
    {"registers512x16_c4", false, {SplitLayout::Registers512x16, 4}},
    {"hybrid_f32_c1", false, {SplitLayout::HybridF32, 1}},
    {"hybrid_f32_c2", false, {SplitLayout::HybridF32, 2}},
    {"hybrid_f32_c8", false, {SplitLayout::HybridF32, 8}},
    {"hybrid_f32_c16", false, {SplitLayout::HybridF32, 16}},
    {"hybrid16_c1", false, {SplitLayout::Hybrid16, 1}},
    {"hybrid16_c4", false, {SplitLayout::Hybrid16, 4}},
    {"hybrid16_c16", false, {SplitLayout::Hybrid16, 16}},
    {"hybrid16_1sm_c1", false, {SplitLayout::Hybrid16OneSm, 1}},
    {"hybrid16_1sm_c2", false, {SplitLayout::Hybrid16OneSm, 2}},
    {"hybrid16_1sm_c8", false, {SplitLayout::Hybrid16OneSm, 8}},
};

class ForcedPlan : public ::testing::TestWithParam<std::tuple<PlanCase, DType>> {};

TEST_P(ForcedPlan, MatchesTheReference) {
  GK_CUDA_CONTEXT_OR_SKIP(ctx);
  const PlanCase pc = std::get<0>(GetParam());
  const DType dtype = std::get<1>(GetParam());
  const bool needs_clusters = !pc.policy && pc.plan.layout != SplitLayout::Blocks;
  const bool f32_layout = pc.plan.layout == SplitLayout::HybridF32;
  const bool f16_layout = pc.plan.layout == SplitLayout::Hybrid16 || pc.plan.layout == SplitLayout::Hybrid16OneSm;
  if (needs_clusters && !ctx.cluster_launch) {
    // The plan must say why it cannot run, and not run.
    Problem p({dtype, 7, 33, Layout::Contiguous, false}, ctx, Random().seed());
    const std::string r = run_and_check(
        p,
        [&](const core::SoftmaxArgs& a, const CudaContext& c) {
          return cuda::softmax::split_row_run_plan(a, c, pc.plan);
        },
        ctx);
    EXPECT_TRUE(declined(r)) << r;
    GTEST_SKIP() << "no thread-block clusters before sm_90 (" << ctx.arch.name << "): " << r;
  }
  const Runner run = [&](const core::SoftmaxArgs& a, const CudaContext& c) -> std::string {
    if (pc.policy) {
      cuda::softmax::split_row_run(a, c);
      return {};
    }
    return cuda::softmax::split_row_run_plan(a, c, pc.plan);
  };
  const int64_t shapes[][2] = {{1, 1}, {7, 33}, {5, 1000}, {33, 4097}, {4, 40000}, {3, 100000}, {2, 262144}};
  int ran = 0;
  std::map<std::string, int> declines;
  for (const auto& s : shapes) {
    for (Layout layout : {Layout::Contiguous, Layout::Padded, Layout::OddStride, Layout::Misaligned, Layout::InPlace}) {
      for (bool log : {false, true}) {
        if (log && layout != Layout::Contiguous && layout != Layout::InPlace) continue;
        const Case c{dtype, s[0], s[1], layout, log};
        Random rng;
        Problem problem(c, ctx, rng.seed());
        const std::string r = run_and_check(problem, run, ctx);
        if (declined(r)) {
          ++declines[r];
          continue;
        }
        ++ran;
        EXPECT_EQ(r, "") << c.describe() << ", seed " << rng.seed();
      }
    }
  }
  for (const auto& [why, n] : declines) {
    // The policy and the split across blocks take every call; a cluster plan declines
    // only for the reasons it was built for.
    EXPECT_TRUE(needs_clusters) << n << " x " << why;
    std::printf("  %s: %d x %s\n", pc.name, n, why.c_str());
  }
  const bool other_dtype = (f32_layout && dtype != DType::F32) || (f16_layout && dtype == DType::F32);
  if (other_dtype) {
    EXPECT_EQ(ran, 0) << "a layout built for another dtype ran";
  } else {
    EXPECT_GT(ran, 0) << "the plan ran no case at all";
  }
}

std::string plan_test_name(const ::testing::TestParamInfo<ForcedPlan::ParamType>& info) {
  return std::string(std::get<0>(info.param).name) + "_" + core::dtype_name(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(SplitRow, ForcedPlan,
                         ::testing::Combine(::testing::ValuesIn(kPlans),
                                            ::testing::Values(DType::F32, DType::F16, DType::BF16)),
                         plan_test_name);

}  // namespace
}  // namespace gpukern::test::cuda_softmax
