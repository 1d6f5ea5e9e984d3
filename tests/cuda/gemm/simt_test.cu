// The SIMT GEMM rungs (src/cuda/gemm/simt) and the cuBLAS reference on the device:
//  * every rung forced through the public API over odd shapes, the four transposes,
//    compact / padded / unaligned leading dimensions, alpha/beta, A shifted off its
//    alignment, K = 0 and the benchmark sizes (each rung also declines what it must);
//  * every double_buffer configuration of this GPU's architecture launched directly,
//    on shapes the size policy would give the other configuration, with the 16-byte and
//    the 4-byte copy paths.
// Each result is checked against a double reference on random inputs (gemm_harness.cuh).
#include "gemm_harness.cuh"

#include "cuda/gemm/configs/sm120.cuh"
#include "cuda/gemm/configs/sm80.cuh"
#include "cuda/gemm/configs/sm86.cuh"
#include "cuda/gemm/configs/sm90.cuh"
#include "cuda/gemm/simt/09_double_buffer.cuh"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gpukern::test::cuda_gemm {
namespace {

/// Padding that makes a leading dimension compact (0), a multiple of 4 plus 4 (1), or
/// the compact one plus 3 (2: rows off 16-byte alignment).
int64_t pad_for(int64_t cols, int mode) {
  if (mode == 1) return (cols + 3) / 4 * 4 + 4 - cols;
  return mode == 2 ? 3 : 0;
}

Case make_case(int64_t m, int64_t n, int64_t k, int layout, int ld_mode, float alpha, float beta, int64_t offset_a) {
  Case c = Case::shape(m, n, k, layout);
  c.pad_a = pad_for(c.trans_a ? m : k, ld_mode);
  c.pad_b = pad_for(c.trans_b ? k : n, ld_mode);
  c.pad_c = pad_for(n, ld_mode) + 1;  // at least one guard column
  c.alpha = alpha;
  c.beta = beta;
  c.offset_a = offset_a;
  return c;
}

/// The ladder cases: each shape in the four layouts with rotating leading dimensions,
/// beta = 0 and beta != 0, every other one with A one element off its alignment; then
/// the benchmark sizes. With `all_types`, the small ones in tf32, f16 and bf16 too (C in
/// the input type and in f32).
std::vector<Case> ladder_cases(bool all_types) {
  const int64_t shapes[][3] = {{1, 1, 1},          {7, 7, 7},        {33, 1, 127},    {1, 33, 7},
                               {127, 129, 65},     {128, 128, 128},  {257, 127, 300}, {33, 17, 0},
                               {1000, 1000, 1000}, {130, 260, 1001}, {4, 8, 12},      {132, 260, 36}};
  std::vector<Case> cases;
  int index = 0;
  for (const auto& s : shapes)
    for (int layout = 0; layout < 4; ++layout, ++index) {
      const int mode = index % 3;
      cases.push_back(make_case(s[0], s[1], s[2], layout, mode, 1.0f, 0.0f, 0));
      cases.push_back(make_case(s[0], s[1], s[2], layout, (mode + 1) % 3, 0.5f, -1.25f, 0));
      if (index % 2) cases.push_back(make_case(s[0], s[1], s[2], layout, 1, 2.0f, 0.5f, 1));
      if (all_types && s[0] * s[1] <= 260 * 260) {
        const Case base = make_case(s[0], s[1], s[2], layout, mode, 1.0f, 0.0f, 0);
        for (const DType t : {DType::F16, DType::BF16})
          for (const DType out : {t, DType::F32}) {
            Case c = base;
            c.ab = t;
            c.c = out;
            cases.push_back(c);
          }
        Case c = base;
        c.tf32 = true;
        cases.push_back(c);
      }
    }
  for (int layout = 0; layout < 4; ++layout) {
    cases.push_back(make_case(4097, 4095, 4093, layout, 0, 1.0f, 0.0f, 0));
    cases.push_back(make_case(2052, 1028, 516, layout, 1, 1.0f, 0.5f, 0));
  }
  return cases;
}

class SimtRungs : public OnStream, public ::testing::WithParamInterface<std::string> {};

TEST_P(SimtRungs, OddShapesLayoutsAndAlignments) {
  std::string why_not;
  if (!rung_runs_here(GetParam(), &why_not)) GTEST_SKIP() << why_not;
  check_rung_cases(GetParam(), ladder_cases(GetParam() == "cublas"), stream_);
}

INSTANTIATE_TEST_SUITE_P(Ladder, SimtRungs,
                         ::testing::Values("naive", "coalesced", "smem_tiled", "blocktile_1d", "blocktile_2d",
                                           "vectorized", "rect_tile", "warptile", "double_buffer", "cublas"));

// ---- double_buffer, every configuration of this architecture launched directly

template <class Tile>
void check_double_buffer_config(const CudaContext& ctx, const char* name) {
  using Cfg = gemm::PipelineConfig<Tile>;
  const int64_t shapes[][3] = {{1000, 1000, 1000}, {257, 127, 300}, {130, 260, 1001}, {33, 17, 5}, {64, 128, 16}};
  uint64_t seed = 100;
  for (const auto& s : shapes)
    for (int layout = 0; layout < 4; ++layout)
      for (int ld_mode : {0, 2})  // 16-byte copies where the layout has an MN-contiguous operand; 4-byte ones
        for (const float beta : {0.0f, 0.75f}) {
          Problem problem(make_case(s[0], s[1], s[2], layout, ld_mode, 1.5f, beta, 0), ctx.stream, ++seed);
          run_and_check(problem, name, [&](const core::GemmArgs& args) {
            gemm::launch_double_buffer<Cfg>(gemm::make_problem(args), ctx.stream, ctx.device);
          });
        }
}

class SimtDoubleBuffer : public OnStream {};

/// double_buffer's tile: Large where its tiles fill nine tenths or more of the SM slots of
/// the rounds they take, else Small, or Tiny where the Small tiles would leave more than a
/// quarter of the SMs idle; calls with an epilogue never Small (it has no epilogue kernel).
TEST(SimtDoubleBufferTile, LargeWhereItsRoundsAreFullTinyWhereSmallLeavesSmsIdle) {
  cuda::CudaContext ctx;
  ctx.sm_count = 132;
  ctx.arch.cc = 90;
  using Tile = gemm::DoubleBufferTile;
  auto tile = [&](int64_t m, int64_t n, int64_t batch = 1, bool bias = false) {
    core::GemmArgs a{};
    a.m = m, a.n = n, a.k = 4096, a.batch = batch;
    a.ab_type = a.c_type = core::DType::F32;
    a.lda = a.k, a.ldb = n, a.ldc = n;
    a.stride_a = m * a.k, a.stride_b = a.k * n, a.stride_c = m * n;
    static const float kBias[1] = {0};
    if (bias) a.bias = kBias, a.bias_type = core::DType::F32;
    return gemm::double_buffer_tile(a, ctx);
  };
  EXPECT_EQ(tile(2048, 2048), Tile::Large);     // 128 tiles: one round 97% full
  EXPECT_EQ(tile(4096, 4096), Tile::Large);     // 512 tiles: four rounds 97% full
  EXPECT_EQ(tile(512, 128256), Tile::Large);    // 2004 tiles: 16 rounds 95% full
  EXPECT_EQ(tile(1000, 1000), Tile::Small);     // 32 Large tiles, 16 x 8 = 128 Small ones
  EXPECT_EQ(tile(512, 11008), Tile::Small);     // 172 tiles: two rounds 65% full
  EXPECT_EQ(tile(512, 14336), Tile::Small);     // 224: 85%
  EXPECT_EQ(tile(3000, 3000), Tile::Small);     // 288: 73%
  EXPECT_EQ(tile(1000, 1000, 4), Tile::Large);  // 128 tiles over the batch
  EXPECT_EQ(tile(768, 768), Tile::Tiny);        // 12 x 6 = 72 Small tiles
  EXPECT_EQ(tile(128, 128), Tile::Tiny);        // 2 Small tiles
  EXPECT_EQ(tile(768, 1024), Tile::Tiny);       // 12 x 8 = 96 Small tiles, 96 * 4 < 132 * 3
  EXPECT_EQ(tile(832, 1024), Tile::Small);      // 13 x 8 = 104 Small tiles
  EXPECT_EQ(tile(128, 128, 50), Tile::Small);   // 2 Small tiles an item, 100 in all
  EXPECT_EQ(tile(128, 128, 49), Tile::Tiny);    // 98 in all
  EXPECT_EQ(tile(512, 11008, 1, true), Tile::Large) << "an epilogue: Small has no epilogue kernel";
  EXPECT_EQ(tile(256, 256, 1, true), Tile::Tiny) << "an epilogue: Tiny has one";
}

TEST_F(SimtDoubleBuffer, EveryConfigOfThisArchitecture) {
  std::string why_not;
  const CudaContext* ctx = device_context(stream_, &why_not);
  if (!ctx) GTEST_SKIP() << why_not;
  namespace g = gemm;
  switch (ctx->arch.cc) {
    case 90:
      check_double_buffer_config<g::sm90::DoubleBufferLarge>(*ctx, "sm90::DoubleBufferLarge");
      check_double_buffer_config<g::sm90::DoubleBufferSmall>(*ctx, "sm90::DoubleBufferSmall");
      check_double_buffer_config<g::sm90::DoubleBufferTiny>(*ctx, "sm90::DoubleBufferTiny");
      break;
    case 80:
      check_double_buffer_config<g::sm80::DoubleBufferLarge>(*ctx, "sm80::DoubleBufferLarge");
      check_double_buffer_config<g::sm80::DoubleBufferSmall>(*ctx, "sm80::DoubleBufferSmall");
      check_double_buffer_config<g::sm80::DoubleBufferTiny>(*ctx, "sm80::DoubleBufferTiny");
      break;
    case 86:
    case 89:
      check_double_buffer_config<g::sm86::DoubleBufferLarge>(*ctx, "sm86::DoubleBufferLarge");
      check_double_buffer_config<g::sm86::DoubleBufferSmall>(*ctx, "sm86::DoubleBufferSmall");
      check_double_buffer_config<g::sm86::DoubleBufferTiny>(*ctx, "sm86::DoubleBufferTiny");
      break;
    case 120:
      check_double_buffer_config<g::sm120::DoubleBufferLarge>(*ctx, "sm120::DoubleBufferLarge");
      check_double_buffer_config<g::sm120::DoubleBufferSmall>(*ctx, "sm120::DoubleBufferSmall");
      check_double_buffer_config<g::sm120::DoubleBufferTiny>(*ctx, "sm120::DoubleBufferTiny");
      break;
    default:
      GTEST_SKIP() << "double_buffer has no configuration for sm_" << ctx->arch.cc;
  }
}

}  // namespace
}  // namespace gpukern::test::cuda_gemm
