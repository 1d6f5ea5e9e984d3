// The tensor-core GEMM rungs (src/cuda/gemm/tensor_core) on the device:
//  * every rung forced through the public API over the edge cases of its kernels: odd
//    and tile-sized shapes, several rounds of persistent tiles, K = 0, the four
//    transposes, f16 / bf16 / tf32 / exact f32 with C in the input type or f32, alpha/beta, rows
//    packed (not 16-byte addressable: the repack and register-epilogue paths) or padded
//    (TMA-addressable: the TMA-store epilogue, with alpha = 1 and alpha != 1);
//  * mma_multistage's configurations of this architecture launched directly: the
//    bounds-checked kernel on tile-divisible shapes too, and on sm_90 the wide kernel
//    without bounds checks;
//  * wgmma_tma's C^T kernel (tf32 NN; exact f32, B either way) with the K split of the
//    last round of tiles, as the rung's cost model plans it and forced to either
//    extreme, and exact f32 over a long K (the f32 bound after thousands of products);
//  * wgmma_tma's tile configurations (128x256c2, 128x128, 64x128, the C^T kernel's tf32
//    and exact-f32 tiles,
//    128x256store: 16-bit C stored by TMA, other calls in 128x256c2; 128x128c2; 128x64;
//    64x64c2, whose cluster splits each B box in two 32-row pieces)
//    forced, unsplit and with every tile split in K ranges (2, 3, 4, 16 ways: helpers
//    with several ranges each), over the issue's odd shape classes (T = 1, 7, 64, 130,
//    1000; K tails; N not a multiple of 128), f16/bf16/tf32, every transpose the rung
//    takes, alpha/beta, both epilogues.
// Each result is checked against a double reference on random inputs (gemm_harness.cuh).
#include "gemm_harness.cuh"

#include "cuda/gemm/configs/sm80.cuh"
#include "cuda/gemm/configs/sm86.cuh"
#include "cuda/gemm/configs/sm90.cuh"
#include "cuda/gemm/tensor_core/11_mma_multistage.cuh"
#include "cuda/gemm/tensor_core/12_wgmma_tma.cuh"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <iterator>
#include <string>
#include <vector>

namespace gpukern::test::cuda_gemm {
namespace {

/// Leading-dimension padding: 0 (packed rows: not 16-byte addressable unless the row
/// happens to be) or up to a multiple of 8 elements plus 8.
int64_t row_pad(int64_t cols, bool padded) { return padded ? (cols + 7) / 8 * 8 + 8 - cols : 0; }

/// One edge case: `variant` 0 = C in the input type, packed rows; 1 = C in f32, padded
/// rows; 2 = alpha/beta, padded rows; 3 = C in f32, alpha/beta, packed rows; 4 = C in the
/// input type, alpha != 1, beta = 0, padded rows (the TMA-store epilogue with scaling).
Case edge_case(int64_t m, int64_t n, int64_t k, int layout, DType ab, bool tf32, int variant) {
  Case c = Case::shape(m, n, k, layout);
  c.ab = ab;
  c.c = (variant & 1) ? DType::F32 : ab;
  c.tf32 = tf32;
  if (variant & 2) c.alpha = 0.75f, c.beta = -1.25f;
  if (variant == 4) c.alpha = 0.75f;
  const bool padded = variant == 1 || variant == 2 || variant == 4;
  c.pad_a = row_pad(c.trans_a ? m : k, padded);
  c.pad_b = row_pad(c.trans_b ? k : n, padded);
  c.pad_c = padded ? row_pad(n, true) : 3;
  return c;
}

class TensorCoreRungs : public OnStream, public ::testing::WithParamInterface<std::string> {};

TEST_P(TensorCoreRungs, EdgeCases) {
  const std::string rung = GetParam();
  std::string why_not;
  if (!rung_runs_here(rung, &why_not)) GTEST_SKIP() << why_not;
  const int64_t shapes[][3] = {{1, 1, 1},       {7, 33, 13},     {127, 129, 65},   {128, 256, 64},
                               {256, 512, 192}, {257, 255, 300}, {300, 520, 1000}, {1, 300, 40},
                               {513, 1, 77},    {64, 64, 0},     {2050, 2568, 72}, {2050, 2568, 1000}};
  const struct {
    DType ab;
    bool tf32;
  } types[] = {{DType::F16, false}, {DType::BF16, false}, {DType::F32, true}, {DType::F32, false}};
  std::vector<Case> cases;
  for (const auto& t : types)
    for (int layout = 0; layout < 4; ++layout)
      for (const auto& s : shapes)
        for (int variant = 0; variant < 5; ++variant)
          cases.push_back(edge_case(s[0], s[1], s[2], layout, t.ab, t.tf32, variant));
  check_rung_cases(rung, cases, stream_);
}

INSTANTIATE_TEST_SUITE_P(Ladder, TensorCoreRungs, ::testing::Values("wmma", "mma_multistage", "wgmma_tma", "tcgen05"));

// ---- mma_multistage, the configurations of this architecture launched directly

/// f16 / bf16 / tf32 in the four layouts on `shapes`, with `Cfg` and the bounds-checked
/// kernel (kChecked) or the kernel for tile-divisible problems.
template <class Cfg, bool kChecked>
void check_mma_config(const CudaContext& ctx, const char* name, const std::vector<std::array<int64_t, 3>>& shapes,
                      bool with_tf32) {
  uint64_t seed = 200;
  for (const auto& s : shapes)
    for (int layout = 0; layout < 4; ++layout)
      for (const DType ab : {DType::F16, DType::BF16, DType::F32}) {
        if (ab == DType::F32 && !with_tf32) continue;
        Case c = edge_case(s[0], s[1], s[2], layout, ab, ab == DType::F32, 2);  // padded rows, alpha/beta
        Problem problem(c, ctx.stream, ++seed);
        run_and_check(problem, name, [&](const core::GemmArgs& args) {
          gpu::with_storage_type(args.ab_type, [&](auto t) {
            using T = decltype(t);
            if constexpr (kChecked || sizeof(T) == 2) gemm::launch_mma_layout<Cfg, T, kChecked>(args, ctx);
          });
        });
      }
}

class MmaMultistageConfigs : public OnStream {};

TEST_F(MmaMultistageConfigs, CheckedAndTileDivisibleKernels) {
  std::string why_not;
  const CudaContext* ctx = device_context(stream_, &why_not);
  if (!ctx) GTEST_SKIP() << why_not;
  if (ctx->arch.cc < 80) GTEST_SKIP() << "mma_multistage needs sm_80 (device is sm_" << ctx->arch.cc << ")";
  // Edge shapes and shapes every configuration's tiles divide (256 x 256 x 128: the
  // bounds-checked kernel on interior tiles only).
  const std::vector<std::array<int64_t, 3>> edges = {{257, 255, 300}, {33, 130, 72}};
  const std::vector<std::array<int64_t, 3>> whole = {{256, 256, 128}, {512, 256, 320}};
  namespace g = gemm;
  if (ctx->arch.cc == 90) {
    using Checked = g::MmaMultistageConfig<g::sm90::MmaMultistage>;
    using Wide = g::MmaMultistageConfig<g::sm90::MmaMultistageWide>;
    check_mma_config<Checked, true>(*ctx, "sm90::MmaMultistage", edges, true);
    check_mma_config<Checked, true>(*ctx, "sm90::MmaMultistage", whole, true);
    check_mma_config<Wide, false>(*ctx, "sm90::MmaMultistageWide (no bounds checks)", whole, false);
  } else if (ctx->arch.cc == 80) {
    using Checked = g::MmaMultistageConfig<g::sm80::MmaMultistage>;
    check_mma_config<Checked, true>(*ctx, "sm80::MmaMultistage", edges, true);
    check_mma_config<Checked, true>(*ctx, "sm80::MmaMultistage", whole, true);
  } else {
    using Checked = g::MmaMultistageConfig<g::sm86::MmaMultistage>;
    check_mma_config<Checked, true>(*ctx, "sm86::MmaMultistage", edges, true);
    check_mma_config<Checked, true>(*ctx, "sm86::MmaMultistage", whole, true);
  }
}

// ---- wgmma_tma: the K split of the last round of tiles (tf32, N-contiguous B)

/// The rung's tf32 NN policy with the helpers' share of a split tile forced to
/// kHelperBlocks K blocks (1: the owner has nearly all of it; large: the helper has).
template <int kHelperBlocks>
struct ForcedSplit {
  template <class Cfg>
  static void* plan(gemm::WgmmaSchedule& s, int ctas, const CudaContext& ctx) {
    return gemm::split_tail(s, ctas, {kHelperBlocks}, gemm::split_slots<Cfg>(), ctx);
  }
};

class WgmmaTmaSplitTail : public OnStream {};

/// The C^T kernel of configuration Cfg on sm_count + 12 of its tiles (Cfg::kBlockN rows of
/// C by 128 columns, K blocks of 32): a last round of 12 tiles for as many CTAs, which the
/// cost model splits at 32 K blocks; run as planned through the rung, then with the
/// helpers' share forced to either extreme, beta 0 (the TMA-store epilogue) and not.
template <class Cfg>
void check_ct_split_tail(const CudaContext& ctx, cudaStream_t stream, bool tf32, bool b_k_major, uint64_t seed) {
  const int64_t m = Cfg::kBlockN, n = 128 * (ctx.sm_count + 12), k = 32 * 32;
  const gemm::WgmmaSchedule plan = gemm::make_schedule(1, ctx.sm_count + 12, 32);
  ASSERT_GT(gemm::tail_split_plan(plan, ctx.sm_count).helper_blocks, 0)
      << "the case no longer splits: it tests nothing";
  for (const float beta : {0.0f, 0.5f}) {
    Case c;
    c.m = m, c.n = n, c.k = k, c.tf32 = tf32, c.beta = beta, c.alpha = 1.25f, c.pad_c = 4;
    c.trans_b = b_k_major;
    Problem problem(c, stream, ++seed);
    int declined = 0;
    EXPECT_TRUE(check_rung(problem, "wgmma_tma", stream, &declined));
    EXPECT_EQ(declined, 0) << "wgmma_tma declined " << c.describe();
    run_and_check(problem, "helpers take 1 K block",
                  [&](const core::GemmArgs& args) { gemm::launch_wgmma_tf32_nn<Cfg, ForcedSplit<1>>(args, ctx); });
    run_and_check(problem, "helpers take all but 1 K block", [&](const core::GemmArgs& args) {
      gemm::launch_wgmma_tf32_nn<Cfg, ForcedSplit<1 << 20>>(args, ctx);
    });
  }
}

TEST_F(WgmmaTmaSplitTail, Tf32NNLastRoundSplitAlongK) {
  std::string why_not;
  const CudaContext* ctx = device_context(stream_, &why_not);
  if (!ctx) GTEST_SKIP() << why_not;
  if (!rung_runs_here("wgmma_tma", &why_not)) GTEST_SKIP() << why_not;
  check_ct_split_tail<gemm::WgmmaConfig<gemm::sm90::WgmmaTf32NN>>(*ctx, stream_, true, false, 300);
}

TEST_F(WgmmaTmaSplitTail, ExactF32LastRoundSplitAlongK) {
  std::string why_not;
  const CudaContext* ctx = device_context(stream_, &why_not);
  if (!ctx) GTEST_SKIP() << why_not;
  if (!rung_runs_here("wgmma_tma", &why_not)) GTEST_SKIP() << why_not;
  for (const bool b_k_major : {false, true})  // the exact-f32 128 x 128 tiles, B either way
    check_ct_split_tail<gemm::WgmmaConfig<gemm::sm90::WgmmaF32NNMid>>(*ctx, stream_, false, b_k_major,
                                                                      b_k_major ? 320 : 310);
}

// ---- wgmma_tma: exact f32 over a long K

class WgmmaTmaExactF32 : public OnStream {};

/// 3xTF32 keeps f32's error bound over tens of thousands of products only because each
/// stage's products are summed apart and added in f32 (the kernel says why): K of 16384
/// and 20000 (a tail), both B layouts, both tiles, with alpha/beta and C in f32 padded.
TEST_F(WgmmaTmaExactF32, LongKWithinTheF32Bound) {
  std::string why_not;
  const CudaContext* ctx = device_context(stream_, &why_not);
  if (!ctx) GTEST_SKIP() << why_not;
  if (!rung_runs_here("wgmma_tma", &why_not)) GTEST_SKIP() << why_not;
  uint64_t seed = 330;
  for (const char* name : {"f32nn128", "f32nn64"}) {
    gemm::WgmmaChoice choice;
    ASSERT_TRUE(gemm::parse_wgmma_config(name, &choice)) << name;
    for (const int64_t k : {16384, 20000})
      for (const int layout : {0, 2}) {  // A not transposed, B either way
        Case c = edge_case(130, 200, k, layout, DType::F32, false, 2);
        Problem problem(c, stream_, ++seed);
        run_and_check(problem, std::string("wgmma_tma forced ") + name + ", K " + std::to_string(k),
                      [&](const core::GemmArgs& args) { gemm::wgmma_tma_run_with(args, *ctx, choice); });
      }
  }
}

// ---- wgmma_tma: every configuration and K split forced

class WgmmaTmaConfigs : public OnStream {};

TEST_F(WgmmaTmaConfigs, ForcedConfigurationsAndSplits) {
  std::string why_not;
  const CudaContext* ctx = device_context(stream_, &why_not);
  if (!ctx) GTEST_SKIP() << why_not;
  if (!rung_runs_here("wgmma_tma", &why_not)) GTEST_SKIP() << why_not;
  // "tf32nn ..." runs tf32 calls with N-contiguous B and "f32nn ..." exact f32 calls; on
  // other calls the tile given runs (the C^T kernel takes every tf32 NN and exact f32 call
  // whatever the tile, with the given split).
  const char* configs[] = {"128x256c2",
                           "128x256c2 splitk3",
                           "128x128",
                           "128x128 splitk2",
                           "128x128 splitk4",
                           "128x128 splitk16",
                           "64x128",
                           "64x128 splitk3",
                           "64x128 splitk16",
                           "tf32nn splitk2",
                           "tf32nn splitk16",
                           "tf32nn128",
                           "tf32nn128 splitk3",
                           "tf32nn64",
                           "tf32nn64 splitk2",
                           "f32nn128",
                           "f32nn128 splitk3",
                           "f32nn64",
                           "f32nn64 splitk2",
                           "128x256store",
                           "128x256store splitk2",
                           "128x128c2",
                           "128x128c2 splitk3",
                           "128x64",
                           "128x64 splitk3",
                           "64x64c2",
                           "64x64c2 splitk3",
                           "64x128c2",
                           "64x128c2 splitk2",
                           "128x64c2",
                           "128x64c2 splitk2",
                           "128x192c2",
                           "128x192c2 splitk2",
                           "192x192c2",
                           "192x192c2 splitk3",
                           "192x96c2",
                           "192x96c2 splitk3",
                           "192x96kc2",
                           "192x96kc2 splitk2",
                           "128x168c2",
                           "128x168c2 splitk2",
                           "64x32",
                           "64x32 splitk4",
                           "64x64",
                           "64x64 splitk3"};
  // T x N x K: the issue's row counts; N off the 128 grid; K tails (not a multiple of
  // the 64 / 32-element K block) and K long enough for 16 ranges of several blocks.
  const int64_t shapes[][3] = {{1, 136, 1100}, {7, 520, 1000}, {64, 250, 4100}, {130, 384, 300}, {1000, 1000, 1000}};
  const struct {
    DType ab;
    bool tf32;
  } types[] = {{DType::F16, false}, {DType::BF16, false}, {DType::F32, true}, {DType::F32, false}};
  uint64_t seed = 400;
  int runs = 0;
  for (const char* name : configs) {
    gemm::WgmmaChoice choice;
    ASSERT_TRUE(gemm::parse_wgmma_config(name, &choice)) << name;
    for (const auto& t : types)
      for (int layout = 0; layout < 4; ++layout) {
        if (t.ab == DType::F32 && (layout & 1)) continue;  // tf32 and exact f32 need A not transposed
        for (size_t i = 0; i < std::size(shapes); ++i) {
          const auto& s = shapes[i];
          // Variants in turn over shapes and layouts: each configuration meets both
          // epilogues, C in f32 and in the input type, packed and padded rows.
          Case c = edge_case(s[0], s[1], s[2], layout, t.ab, t.tf32, static_cast<int>((i + layout) % 5));
          Problem problem(c, stream_, ++seed);
          ++runs;
          run_and_check(problem, std::string("wgmma_tma forced ") + name,
                        [&](const core::GemmArgs& args) { gemm::wgmma_tma_run_with(args, *ctx, choice); });
        }
      }
  }
  std::printf("[ wgmma configs ] %d forced runs\n", runs);
}

}  // namespace
}  // namespace gpukern::test::cuda_gemm
