// The skinny GEMM rung (src/cuda/gemm/skinny) on the device:
//  * forced through the public API over its kernel's edge cases: T on both sides of every
//    n8-tile count (1, 2, 4, 8 tiles) up to 64, in both orientations (short side m or n);
//    N not a multiple of the 64/128-row block; K not a multiple of the 256-byte K block;
//    the four transposes; f16 / bf16 / tf32 / exact f32 with C in the input type or f32;
//    alpha/beta; padded and packed rows (packed odd rows are declined: Misaligned);
//  * the K split forced: one range per N tile (no workspace), two, an odd count, and one
//    K block per range, each launched several times in a row (the arrival words left by
//    one launch must not confuse the next, which reuses the pooled workspace);
//  * its declines: min(m, n) > 64 and rows off 16-byte boundaries;
//  * the TMA path (every dtype, T <= 16, K-contiguous X, sm_90) forced over T 1..16, odd N, K
//    tails, NN / NT in both orientations, C types, alpha/beta, 128- and 64-row tiles, ring
//    depths and grids that cut tiles between CTAs (each repeated: stale ticket words),
//    bit-identical repeats, the same calls on skinny_kernel (the TMA path off), and its
//    refusals (T = 17, T-contiguous X); the plan per shape, 16- and 32-bit (host);
//  * the CUDA-core GEMV path (tf32 and exact f32, T <= 4) forced over T 1..4, N and K off
//    its group and step, both W layouts and orientations, K splits (repeated: stale ticket
//    words), bit-identical repeats of a split call, and its refusals.
// Each result is checked against a double reference on random inputs (gemm_harness.cuh),
// with guard cells around C.
#include "gemm_harness.cuh"

#include "cuda/gemm/skinny/skinny_launch.cuh"
#include "cuda/gemm/tensor_core.cuh"

#include <gtest/gtest.h>

#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

namespace gpukern::test::cuda_gemm {
namespace {

/// Elements that pad a row of `cols` to a multiple of 8 plus 8 (16-byte rows for every dtype).
int64_t padded_row(int64_t cols) { return (cols + 7) / 8 * 8 + 8 - cols; }

struct TypeCase {
  DType ab;
  bool tf32;
};
constexpr TypeCase kTypes[] = {{DType::F16, false}, {DType::BF16, false}, {DType::F32, true}, {DType::F32, false}};

/// The case `t` tokens x `n` x `k` (short side m, or n when `short_n`) in `layout`, with
/// `variant` 0 = C in the input type, padded rows; 1 = C in f32, alpha/beta, padded rows;
/// 2 = packed rows (declined unless every row happens to be 16-byte aligned).
Case skinny_case(int64_t t, int64_t n, int64_t k, bool short_n, int layout, const TypeCase& type, int variant) {
  Case c = short_n ? Case::shape(n, t, k, layout) : Case::shape(t, n, k, layout);
  c.ab = type.ab;
  c.tf32 = type.tf32;
  c.c = variant == 1 ? DType::F32 : type.ab;
  if (variant == 1) c.alpha = -0.75f, c.beta = 1.25f;
  if (variant != 2) {
    c.pad_a = padded_row(c.trans_a ? c.m : c.k);
    c.pad_b = padded_row(c.trans_b ? c.k : c.n);
    c.pad_c = 5;
  }
  return c;
}

class SkinnyRung : public OnStream {};

TEST_F(SkinnyRung, EdgeCases) {
  std::string why_not;
  if (!rung_runs_here("skinny", &why_not)) GTEST_SKIP() << why_not;
  struct Shape {
    int64_t t, n, k;
  };
  const Shape shapes[] = {{1, 1, 1},      {1, 64, 256},  {2, 65, 257},   {3, 130, 300},  {8, 200, 1000},
                          {9, 64, 520},   {16, 333, 77}, {17, 96, 2050}, {31, 1000, 64}, {33, 129, 511},
                          {48, 257, 129}, {63, 64, 768}, {64, 500, 4099}};
  std::vector<Case> cases;
  for (const auto& type : kTypes)
    for (int layout = 0; layout < 4; ++layout)
      for (const auto& s : shapes)
        for (bool short_n : {false, true})
          for (int variant = 0; variant < 3; ++variant) {
            if (variant == 2 && (layout % 2 == 1 || short_n)) continue;  // a few packed rows suffice
            cases.push_back(skinny_case(s.t, s.n, s.k, short_n, layout, type, variant));
          }
  check_rung_cases("skinny", cases, stream_);
}

TEST_F(SkinnyRung, DeclinesWhatItCannotRun) {
  std::string why_not;
  if (!rung_runs_here("skinny", &why_not)) GTEST_SKIP() << why_not;
  const CudaContext* ctx = device_context(stream_, &why_not);
  if (!ctx) GTEST_SKIP() << why_not;
  Case wide = skinny_case(65, 100, 64, false, 0, kTypes[0], 0);  // min(m, n) = 65
  Problem wide_problem(wide, stream_, 1);
  const core::Verdict v = gemm::skinny_supports(wide_problem.args(), *ctx);
  EXPECT_EQ(v.reason, core::Decline::ShapeLimit) << v.text();
  EXPECT_FALSE(gemm::skinny_shape(wide_problem.args()));

  Case odd = skinny_case(8, 100, 64, false, 0, kTypes[1], 0);
  odd.pad_a = 1;  // lda = 65 bf16: row 1 of A starts 2 bytes past a 16-byte boundary
  Problem odd_problem(odd, stream_, 2);
  const core::Verdict m = gemm::skinny_supports(odd_problem.args(), *ctx);
  EXPECT_EQ(m.reason, core::Decline::Misaligned) << m.text();
  EXPECT_NE(m.detail.find("ldA"), std::string::npos) << m.detail;

  Case shifted = skinny_case(8, 100, 64, true, 1, kTypes[0], 0);
  shifted.offset_a = 1;  // A one element into its buffer
  Problem shifted_problem(shifted, stream_, 3);
  const core::Verdict a = gemm::skinny_supports(shifted_problem.args(), *ctx);
  EXPECT_EQ(a.reason, core::Decline::Misaligned) << a.text();
}

class SkinnySplits : public OnStream {};

TEST_F(SkinnySplits, ForcedSplitsAgreeWithTheReference) {
  std::string why_not;
  const CudaContext* ctx = device_context(stream_, &why_not);
  if (!ctx) GTEST_SKIP() << why_not;
  if (ctx->arch.cc < 80) GTEST_SKIP() << "skinny needs sm_80 (device is sm_" << ctx->arch.cc << ")";
  struct Shape {
    int64_t t, n, k;
    bool short_n;
  };
  // K blocks of 256 or 512 bytes: 2050 f16 -> 17 or 9 K blocks, 1025 f32 -> 17 or 9; N tiles of 32-128 rows.
  const Shape shapes[] = {{1, 300, 2050, false}, {13, 130, 2050, true}, {40, 257, 1025, false}, {64, 70, 1100, true}};
  uint64_t seed = 500;
  int ran = 0;
  for (const auto& type : kTypes)
    for (const auto& s : shapes)
      for (int layout : {0, 2, 3})
        for (int splits : {1, 2, 5, 1 << 20}) {  // 1 << 20: clamped to one K block per range
          Case c = skinny_case(s.t, s.n, s.k, s.short_n, layout, type, 1);
          Problem problem(c, stream_, ++seed);
          const std::string label = "skinny, " + std::to_string(splits) + " K ranges";
          for (int repeat = 0; repeat < 3; ++repeat) {
            const bool ok = run_and_check(
                problem, label, [&](const core::GemmArgs& args) { gemm::skinny_run_split(args, *ctx, splits); });
            ran += ok;
            if (!ok) break;
          }
        }
  EXPECT_GT(ran, 0);
}

// The TMA path (skinny_tma.cuh: every dtype, T <= 16, X stored K-contiguous, sm_90).
class SkinnyTma : public OnStream {
 protected:
  /// The context, or null after GTEST_SKIP where the TMA path cannot run.
  const CudaContext* tma_context() {
    std::string why_not;
    const CudaContext* ctx = device_context(stream_, &why_not);
    if (!ctx) {
      ADD_FAILURE() << why_not;
      return nullptr;
    }
    if (ctx->arch.cc != 90) return nullptr;
    return ctx;
  }
};

struct SkinnyShape {
  int64_t t, n, k;
};

/// The cases of `shapes` in `types` whose X is stored K-contiguous: NN and NT with the short
/// side m, and with the short side n (unless T >= N) B transposed (X = op(B)^T K-contiguous;
/// A transposed or not makes W N- or K-contiguous); skinny_case's variants in turn (packed
/// rows only with A not transposed).
std::vector<Case> k_contiguous_x_cases(std::initializer_list<SkinnyShape> shapes,
                                       std::initializer_list<TypeCase> types) {
  std::vector<Case> cases;
  int index = 0;
  for (const TypeCase& type : types)
    for (const SkinnyShape& s : shapes)
      for (int layout : {0, 2})  // NN, NT with the short side m
        for (bool short_n : {false, true}) {
          if (short_n && s.t >= s.n) continue;  // the short side is m after all (X = op(A), A transposed)
          const int lay = short_n ? (layout == 0 ? 3 : 2) : layout;
          const int variant = index++ % 3;
          if (variant == 2 && (lay & 1)) continue;
          cases.push_back(skinny_case(s.t, s.n, s.k, short_n, lay, type, variant));
        }
  return cases;
}

/// Cases the TMA path accepts: f16, bf16, tf32 and exact f32, T on both sides of 8 up to 16, N
/// not a multiple of the 128-row tile, K not a multiple of the K block (64 16-bit or 32 32-bit
/// elements), NN and NT (and the short
/// side n with B transposed: X = op(B)^T is then K-contiguous), C in the input type or f32
/// with alpha/beta, padded or packed rows.
std::vector<Case> tma_cases() {
  return k_contiguous_x_cases({{1, 1, 1},
                               {1, 128, 64},
                               {2, 129, 65},
                               {5, 300, 1000},
                               {8, 257, 4100},
                               {9, 64, 520},
                               {12, 1000, 77},
                               {15, 130, 2050},
                               {16, 333, 640},
                               {16, 4096, 512}},
                              {kTypes[0], kTypes[1], kTypes[2], kTypes[3]});
}

TEST_F(SkinnyTma, AgreesWithTheReferenceOverGridsAndRings) {
  const CudaContext* ctx = tma_context();
  if (!ctx) GTEST_SKIP() << "the TMA path runs on sm_90 only";
  // Default shape (the ring policy, one CTA per SM); two stages (the ring wraps every other
  // unit); grids of 1 (nothing cut), 3 and 7 CTAs (tiles cut at odd places, several CTAs per
  // tile); two CTAs per SM; the deepest ring; 64-row tiles on every SM, and 5 CTAs with two
  // stages.
  const gemm::SkinnyTmaShape shapes[] = {{0, 0, 0}, {2, 0, 0},  {0, 0, 1},      {3, 0, 3},    {0, 0, 7},
                                         {0, 2, 0}, {64, 0, 0}, {64, 0, 0, 64}, {2, 0, 5, 64}};
  uint64_t seed = 7000;
  int ran = 0;
  for (const Case& c : tma_cases()) {
    Problem problem(c, stream_, ++seed);
    if (!gemm::skinny_supports(problem.args(), *ctx).accepted()) continue;  // packed odd rows
    for (const gemm::SkinnyTmaShape& shape : shapes) {
      const std::string label = "skinny TMA, " + std::to_string(shape.tile_rows) + "-row tiles, " +
                                std::to_string(shape.stages) + " stages, " + std::to_string(shape.ctas_per_sm) +
                                " per SM, " + std::to_string(shape.ctas) + " CTAs";
      for (int repeat = 0; repeat < 2; ++repeat) {  // the second launch finds the first one's arrival words
        const bool ok = run_and_check(problem, label, [&](const core::GemmArgs& args) {
          gemm::skinny_run_mode(args, *ctx, gemm::SkinnyTmaMode::kForce, shape);
        });
        ran += ok;
        if (!ok) break;
      }
    }
  }
  EXPECT_GT(ran, 0);
}

TEST_F(SkinnyTma, TheOtherKernelStillRunsTheseCalls) {
  const CudaContext* ctx = tma_context();
  if (!ctx) GTEST_SKIP() << "the TMA path runs on sm_90 only";
  uint64_t seed = 8000;
  int ran = 0;
  for (const Case& c : tma_cases()) {
    Problem problem(c, stream_, ++seed);
    if (!gemm::skinny_supports(problem.args(), *ctx).accepted()) continue;
    ran += run_and_check(problem, "skinny_kernel (TMA path off)", [&](const core::GemmArgs& args) {
      gemm::skinny_run_mode(args, *ctx, gemm::SkinnyTmaMode::kOff);
    });
  }
  EXPECT_GT(ran, 0);
}

TEST_F(SkinnyTma, CutTilesAddInAFixedOrder) {
  const CudaContext* ctx = tma_context();
  if (!ctx) GTEST_SKIP() << "the TMA path runs on sm_90 only";
  // 16 x 4096 x 4096 bf16 NT: on every SM each tile is cut between 2-3 CTAs; on 128 CTAs
  // (32 tiles x 4 K chunks, the plan's split grid) into 4 pieces. Three runs of each must
  // agree bit for bit (the last arriver changes, the order of the sum does not).
  Case c = skinny_case(16, 4096, 4096, false, 2, kTypes[1], 0);
  Problem problem(c, stream_, 9001);
  const core::GemmArgs& args = problem.args();
  const std::size_t bytes = static_cast<std::size_t>((args.m - 1) * args.ldc + args.n) * 2;
  for (const gemm::SkinnyTmaShape& shape : {gemm::SkinnyTmaShape{}, gemm::SkinnyTmaShape{64, 0, 128}}) {
    std::vector<std::vector<unsigned char>> out;
    for (int run = 0; run < 3; ++run) {
      ASSERT_TRUE(run_and_check(
          problem, "skinny TMA, " + std::to_string(shape.ctas) + " CTAs, repeat " + std::to_string(run),
          [&](const core::GemmArgs& a) { gemm::skinny_run_mode(a, *ctx, gemm::SkinnyTmaMode::kForce, shape); }));
      out.emplace_back(bytes);
      ASSERT_EQ(cudaMemcpyAsync(out.back().data(), args.c, bytes, cudaMemcpyDeviceToHost, stream_), cudaSuccess);
      ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    }
    EXPECT_TRUE(out[0] == out[1] && out[1] == out[2]) << shape.ctas << " CTAs";
  }
}

/// Each of `cases` forced onto one path by `forced` is refused with InvalidArgument (nothing
/// run), and the same call through the rung's policy runs on another kernel and agrees with
/// the reference.
void expect_refused_and_run_by_policy(const std::vector<Case>& cases, cudaStream_t stream, const CudaContext& ctx,
                                      const std::function<void(const core::GemmArgs&)>& forced) {
  uint64_t seed = 9100;
  for (const Case& c : cases) {
    Problem problem(c, stream, ++seed);
    core::Status status = core::Status::Success;
    try {
      forced(problem.args());
    } catch (const core::Error& e) {
      status = e.status();
    }
    EXPECT_EQ(status, core::Status::InvalidArgument) << c.m << " x " << c.n << " x " << c.k;
    EXPECT_TRUE(run_and_check(problem, "skinny (policy)", [&](const core::GemmArgs& a) { gemm::skinny_run(a, ctx); }));
  }
}

TEST_F(SkinnyTma, RefusesWhatItCannotRun) {
  const CudaContext* ctx = tma_context();
  if (!ctx) GTEST_SKIP() << "the TMA path runs on sm_90 only";
  // T = 17; X stored T-contiguous (short side m, A transposed), 16- and 32-bit.
  expect_refused_and_run_by_policy(
      {skinny_case(17, 100, 64, false, 2, kTypes[0], 0), skinny_case(17, 100, 64, false, 2, kTypes[3], 0),
       skinny_case(4, 100, 64, false, 3, kTypes[0], 0), skinny_case(4, 100, 64, false, 3, kTypes[2], 0)},
      stream_, *ctx, [&](const core::GemmArgs& a) { gemm::skinny_run_mode(a, *ctx, gemm::SkinnyTmaMode::kForce); });
}

// The CUDA-core GEMV path (skinny_gemv.cuh: every element type, T <= 4, K-contiguous X).
class SkinnyGemv : public OnStream {};

/// Cases the GEMV path accepts: f16, bf16, tf32 and exact f32, T 1-4 (3: the 4-row kernel
/// with a row unused), N and K off the group (128 or 256 columns) and the K step (128 or 256
/// elements, or 8 rows x 4) and off one 16-byte load (4 or 8 elements), K- and N-contiguous W
/// in both orientations, C in the input type or in f32 with alpha/beta, padded or packed rows.
std::vector<Case> gemv_cases() {
  return k_contiguous_x_cases({{1, 1, 1},
                               {1, 5, 3},
                               {2, 8, 129},
                               {3, 129, 77},
                               {4, 300, 1000},
                               {1, 1000, 513},
                               {2, 131, 4100},
                               {4, 64, 2051},
                               {3, 517, 263}},
                              {kTypes[0], kTypes[1], kTypes[2], kTypes[3]});
}

TEST_F(SkinnyGemv, AgreesWithTheReferenceOverSplits) {
  std::string why_not;
  const CudaContext* ctx = device_context(stream_, &why_not);
  if (!ctx) GTEST_SKIP() << why_not;
  if (ctx->arch.cc < 80) GTEST_SKIP() << "skinny needs sm_80 (device is sm_" << ctx->arch.cc << ")";
  uint64_t seed = 9500;
  int ran = 0;
  for (const Case& c : gemv_cases()) {
    Problem problem(c, stream_, ++seed);
    if (!gemm::skinny_supports(problem.args(), *ctx).accepted()) continue;  // packed odd rows
    // Chosen, one range per group, two, seven, and one K grain per range; W's loads as its
    // size chooses (evict-first at these sizes) and plain (a vocabulary-sized weight's).
    for (int splits : {0, 1, 2, 7, 1 << 20})
      for (int evict_first : {-1, 0}) {
        const std::string label =
            "skinny GEMV, " + std::to_string(splits) + " K ranges" + (evict_first == 0 ? ", plain loads of W" : "");
        for (int repeat = 0; repeat < 2; ++repeat) {  // the second launch finds the first one's arrival words
          const bool ok = run_and_check(problem, label, [&](const core::GemmArgs& args) {
            gemm::skinny_run_gemv(args, *ctx, splits, evict_first);
          });
          ran += ok;
          if (!ok) break;
        }
      }
  }
  EXPECT_GT(ran, 0);
}

TEST_F(SkinnyGemv, SplitRangesAddInAFixedOrder) {
  std::string why_not;
  const CudaContext* ctx = device_context(stream_, &why_not);
  if (!ctx) GTEST_SKIP() << why_not;
  if (ctx->arch.cc < 80) GTEST_SKIP() << "skinny needs sm_80";
  // 2 x 4096 x 4096 exact f32 and bf16, N- and K-contiguous W, cut into 16 ranges a group:
  // three runs agree bit for bit.
  for (int layout : {0, 2, 4, 6}) {
    Case c = skinny_case(2, 4096, 4096, false, layout % 4, kTypes[layout < 4 ? 3 : 1], 1);
    Problem problem(c, stream_, 9601 + layout);
    const core::GemmArgs& args = problem.args();
    const std::size_t bytes = static_cast<std::size_t>((args.m - 1) * args.ldc + args.n) * 4;
    std::vector<std::vector<unsigned char>> out;
    for (int run = 0; run < 3; ++run) {
      ASSERT_TRUE(run_and_check(problem, "skinny GEMV, 16 K ranges, repeat " + std::to_string(run),
                                [&](const core::GemmArgs& a) { gemm::skinny_run_gemv(a, *ctx, 16); }));
      out.emplace_back(bytes);
      ASSERT_EQ(cudaMemcpyAsync(out.back().data(), args.c, bytes, cudaMemcpyDeviceToHost, stream_), cudaSuccess);
      ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    }
    EXPECT_TRUE(out[0] == out[1] && out[1] == out[2]) << "layout " << layout;
  }
}

TEST_F(SkinnyGemv, RefusesWhatItCannotRun) {
  std::string why_not;
  const CudaContext* ctx = device_context(stream_, &why_not);
  if (!ctx) GTEST_SKIP() << why_not;
  if (ctx->arch.cc < 80) GTEST_SKIP() << "skinny needs sm_80";
  // T = 5 (32- and 16-bit elements); X stored T-contiguous.
  expect_refused_and_run_by_policy(
      {skinny_case(5, 100, 64, false, 2, kTypes[3], 0), skinny_case(2, 100, 64, false, 3, kTypes[2], 0),
       skinny_case(5, 100, 64, false, 0, kTypes[1], 0)},
      stream_, *ctx, [&](const core::GemmArgs& a) { gemm::skinny_run_gemv(a, *ctx, 0); });
}

TEST(SkinnySplitChoice, FillsTheSlotsWithFewWaves) {
  // 64 N tiles, 32 K blocks, 396 block slots: one wave of 64 x 6 blocks.
  EXPECT_EQ(gemm::skinny_splits(64, 32, 396), 6);
  // Enough N tiles for all but a few slots: no split.
  EXPECT_EQ(gemm::skinny_splits(360, 32, 396), 1);
  // Just more N tiles than slots: 4 ranges (5 short waves) beat 2 long ones.
  EXPECT_EQ(gemm::skinny_splits(400, 32, 396), 4);
  // One K block: nothing to split.
  EXPECT_EQ(gemm::skinny_splits(4, 1, 396), 1);
  // Never more ranges than K blocks.
  EXPECT_LE(gemm::skinny_splits(1, 5, 396), 5);
}

TEST(SkinnyGemvSplitChoice, FillsTheSMsInOneWave) {
  // N-contiguous W (128-column groups, 512 bytes a K row), 132 SMs. 4096 x 4096: 32 groups x
  // 12 ranges (three blocks per SM), with 6 or 3 blocks resident per SM.
  EXPECT_EQ(gemm::skinny_gemv_splits(32, 4096, 64, 512, 132, 792), 12);
  EXPECT_EQ(gemm::skinny_gemv_splits(32, 4096, 32, 512, 132, 396), 12);
  // Long K: ranges of at most 512 KB (14 of 14336 rows), unless they overflow one wave.
  EXPECT_EQ(gemm::skinny_gemv_splits(32, 14336, 64, 512, 132, 792), 14);
  EXPECT_EQ(gemm::skinny_gemv_splits(32, 14336, 32, 512, 132, 396), 12);
  // 14336 columns: 112 groups, 4 ranges of 512 KB; 3 where 4 would start a second wave.
  EXPECT_EQ(gemm::skinny_gemv_splits(112, 4096, 64, 512, 132, 792), 4);
  EXPECT_EQ(gemm::skinny_gemv_splits(112, 4096, 32, 512, 132, 396), 3);
  // More groups than a wave (the vocabulary): ranges of 512 KB all the same.
  EXPECT_EQ(gemm::skinny_gemv_splits(1002, 4096, 64, 512, 132, 792), 4);
  // K-contiguous W (8-row groups, 32 bytes a K element): 4096 rows need no split.
  EXPECT_EQ(gemm::skinny_gemv_splits(512, 4096, 128, 32, 132, 792), 1);
  // Never more ranges than grains of K.
  EXPECT_EQ(gemm::skinny_gemv_splits(1, 64, 64, 512, 132, 792), 1);
  EXPECT_EQ(gemm::skinny_gemv_splits(1, 1000, 128, 32, 132, 792), 8);
}

TEST(SkinnyGemvPolicy, SixteenBitAtOneOrTwoTokensOnTheH200) {
  auto takes = [](int t, int n, bool w_k_major, DType type, int mem_gbps) {
    gemm::SkinnyCall call;
    call.problem.t = t;
    call.problem.n = n;
    call.problem.k = 4096;
    call.w_k_major = w_k_major;
    return gemm::skinny_gemv_policy(call, type, mem_gbps);
  };
  for (int gbps : {0, 3352, 4814}) {
    // 32-bit: every call the GEMV path can run, on any device.
    EXPECT_TRUE(takes(4, 4096, true, DType::F32, gbps));
    EXPECT_TRUE(takes(3, 128256, false, DType::F32, gbps));
    // 16-bit: measured on the H200 only; a bandwidth not known keeps the TMA path.
    const bool h200 = gbps == 4814;
    for (DType type : {DType::F16, DType::BF16}) {
      EXPECT_EQ(takes(1, 4096, true, type, gbps), h200) << gbps;
      EXPECT_EQ(takes(1, 128256, true, type, gbps), h200) << gbps;
      EXPECT_EQ(takes(1, 14336, false, type, gbps), h200) << gbps;
      EXPECT_EQ(takes(1, 128256, false, type, gbps), h200) << "the N-contiguous vocabulary";
      EXPECT_EQ(takes(2, 4096, true, type, gbps), h200 && type == DType::BF16) << "two tokens: bf16";
      EXPECT_EQ(takes(2, 65535, true, type, gbps), h200 && type == DType::BF16) << "two tokens: bf16";
      EXPECT_EQ(takes(2, 65536, true, type, gbps), h200) << "two tokens at the vocabulary's width";
      EXPECT_FALSE(takes(3, 4096, true, type, gbps)) << "three tokens: the tensor-core paths";
      EXPECT_FALSE(takes(3, 128256, true, type, gbps)) << "three tokens: the tensor-core paths";
      EXPECT_FALSE(takes(2, 4096, false, type, gbps)) << "N-contiguous W at two tokens";
      EXPECT_EQ(takes(2, 128256, false, type, gbps), h200) << "the N-contiguous vocabulary at two tokens";
      EXPECT_FALSE(takes(3, 128256, false, type, gbps)) << "three tokens: the tensor-core paths";
    }
  }
}

TEST(SkinnyTmaPlan, ChoosesPerShape) {
  auto plan = [](int t, int n, int k, bool w_k_major) { return gemm::skinny_tma_plan(t, n, k, w_k_major, 132); };
  // 4096 x 4096: one CTA per 64-row tile, the deepest ring; skinny_kernel for K-contiguous W
  // at T <= 8.
  for (int t : {1, 8, 16}) {
    const gemm::SkinnyTmaPlan p = plan(t, 4096, 4096, false);
    EXPECT_TRUE(p.tma);
    EXPECT_EQ(p.shape.tile_rows, 64);
    EXPECT_EQ(p.shape.ctas, 64);
    EXPECT_EQ(p.shape.stages, 64);
  }
  EXPECT_FALSE(plan(8, 4096, 4096, true).tma);
  EXPECT_TRUE(plan(16, 4096, 4096, true).tma);
  // Long K at T <= 8: skinny_kernel; at T = 16 a split of 32 tiles x 4 K chunks.
  EXPECT_FALSE(plan(4, 4096, 11008, true).tma);
  EXPECT_FALSE(plan(1, 4096, 14336, false).tma);
  const gemm::SkinnyTmaPlan long_k = plan(16, 4096, 11008, true);
  EXPECT_TRUE(long_k.tma);
  EXPECT_EQ(long_k.shape.tile_rows, 128);
  EXPECT_EQ(long_k.shape.ctas, 128);
  // 14336 x 4096: one CTA per 128-row tile (112 of 132 SMs), at every T.
  for (int t : {1, 16}) {
    const gemm::SkinnyTmaPlan p = plan(t, 14336, 4096, false);
    EXPECT_TRUE(p.tma);
    EXPECT_EQ(p.shape.tile_rows, 128);
    EXPECT_EQ(p.shape.ctas, 112);
  }
  // 11008 x 4096 (86 tiles: too few SMs) and the vocabulary: equal shares over all SMs.
  for (int n : {11008, 128256}) {
    const gemm::SkinnyTmaPlan p = plan(1, n, 4096, true);
    EXPECT_TRUE(p.tma);
    EXPECT_EQ(p.shape.ctas, 0);
    EXPECT_EQ(p.shape.tile_rows, 128);
  }
  // Small weights that fill no grid: skinny_kernel at T <= 8, equal shares above.
  EXPECT_FALSE(plan(4, 1024, 1024, false).tma);
  EXPECT_FALSE(plan(4, 1024, 4096, true).tma);
  EXPECT_TRUE(plan(12, 1024, 1024, false).tma);
  EXPECT_EQ(plan(12, 1024, 1024, false).shape.ctas, 0);
}

TEST(SkinnyTmaPlan, ChoosesPerShapeFor32BitElements) {
  auto plan = [](int t, int n, int k, bool w_k_major, bool exact) {
    return gemm::skinny_tma_plan(t, n, k, w_k_major, 132, 4, exact);
  };
  // T > 4 (the GEMV path takes T <= 4): the TMA path, 4096 x 4096 included.
  EXPECT_TRUE(plan(8, 4096, 4096, true, false).tma);
  EXPECT_TRUE(plan(8, 4096, 4096, true, true).tma);
  EXPECT_EQ(plan(8, 4096, 4096, true, false).shape.ctas, 0);
  // tf32 with N-contiguous W: 128-row tiles x S K chunks (4096 columns: 32 x 4; 11008: 86 x 1).
  const gemm::SkinnyTmaPlan nn = plan(16, 4096, 11008, false, false);
  EXPECT_TRUE(nn.tma);
  EXPECT_EQ(nn.shape.ctas, 128);
  EXPECT_EQ(nn.shape.tile_rows, 128);
  EXPECT_EQ(plan(8, 11008, 4096, false, false).shape.ctas, 86);
  // K-contiguous W, the vocabulary's 1002 tiles: equal shares over the SMs.
  EXPECT_EQ(plan(8, 11008, 4096, true, false).shape.ctas, 0);
  EXPECT_TRUE(plan(8, 128256, 4096, false, false).tma);
  EXPECT_EQ(plan(8, 128256, 4096, false, false).shape.ctas, 0);
  EXPECT_TRUE(plan(8, 128256, 4096, false, true).tma);
  EXPECT_EQ(plan(8, 128256, 4096, false, true).shape.ctas, 0);
  // Exact f32 with N-contiguous W: the grid where it fills 5/6 of the SMs (4096 columns: 32
  // x 4 = 128; 14336: 112), equal shares where it does not (11008: 86 of 132).
  EXPECT_EQ(plan(16, 4096, 11008, false, true).shape.ctas, 128);
  EXPECT_EQ(plan(16, 4096, 11008, false, true).shape.tile_rows, 128);
  EXPECT_EQ(plan(16, 14336, 4096, false, true).shape.ctas, 112);
  EXPECT_TRUE(plan(8, 11008, 4096, false, true).tma);
  EXPECT_EQ(plan(8, 11008, 4096, false, true).shape.ctas, 0);
  EXPECT_EQ(plan(8, 4096, 4096, true, true).shape.ctas, 0);  // K-contiguous W: equal shares
}

}  // namespace
}  // namespace gpukern::test::cuda_gemm
