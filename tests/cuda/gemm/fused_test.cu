// The CUDA GEMM rungs that run strided batches and the bias + activation epilogue in their
// own kernels (mma_multistage, double_buffer, skinny), launched directly on this device:
//  * batch 1, 3 and 17 with padded, broadcast (stride 0) and interleaved items of A and B,
//    padded, odd-pitched and interleaved items of C (guard cells between items);
//  * every activation, bias in f32 and in C's type, one shared bias vector or one per item;
//  * beta 0 on a C full of NaN, alpha/beta, C in the input type or f32, the four transposes,
//    odd shapes, K tails and K = 0 (the shared C = act(beta * C + bias) path);
//  * more items than one launch covers (65535 along grid dimension y);
//  * skinny's K split forced (one range, several, one K block each), repeated so the
//    arrival words one launch leaves do not confuse the next, in both orientations (the
//    bias runs along skinny's T when the short side is n);
//  * the declines: batch strides that move an item's rows off 16-byte boundaries.
// Each result against a double reference (fused_harness.cuh). Skipped without a device.
#include "fused_harness.cuh"

#include "cuda/gemm/gemm_rungs.cuh"
#include "cuda/gemm/skinny/skinny_launch.cuh"
#include "cuda/gemm/tensor_core.cuh"

#include <gtest/gtest.h>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpukern::test::cuda_gemm {
namespace {

using RunFn = void (*)(const core::GemmArgs&, const CudaContext&);
using SupportsFn = core::Verdict (*)(const core::GemmArgs&, const CudaContext&);

const TypeChoice kF16{DType::F16, false}, kBF16{DType::BF16, false}, kTF32{DType::F32, true}, kF32{DType::F32, false};
const std::vector<Items> kAligned = {Items::Padded, Items::Broadcast, Items::Interleaved};

/// Runs every case on the rung (which must accept it: a decline fails the case) and fails
/// when none passed.
void check_fused_cases(const char* rung, SupportsFn supports, RunFn run, const std::vector<FusedCase>& cases,
                       const CudaContext& ctx, cudaStream_t stream) {
  int passed = 0;
  uint64_t seed = 1000;
  for (const FusedCase& c : cases)
    passed += run_fused(c, ++seed, stream, rung, [&](const core::GemmArgs& args) {
      const core::Verdict v = supports(args, ctx);
      if (!v.accepted()) throw std::runtime_error("declined: " + v.text());
      run(args, ctx);
    });
  std::printf("%s: %d of %zu batched / fused cases passed\n", rung, passed, cases.size());
  EXPECT_GT(passed, 0) << rung << " ran no case";
}

class FusedRungs : public OnStream {
 protected:
  /// The device context, or null after GTEST_SKIP (no device, or before sm_80).
  const CudaContext* context() {
    std::string why_not;
    const CudaContext* ctx = device_context(stream_, &why_not);
    if (!ctx) {
      skip_reason_ = why_not;
      return nullptr;
    }
    if (ctx->arch.cc < 80) {
      skip_reason_ = "the fused rungs need sm_80 (device is sm_" + std::to_string(ctx->arch.cc) + ")";
      return nullptr;
    }
    return ctx;
  }
  std::string skip_reason_;
};

TEST_F(FusedRungs, MmaMultistage) {
  const CudaContext* ctx = context();
  if (!ctx) GTEST_SKIP() << skip_reason_;
  // K tails (64 f16 / 32 tf32 per K block), edge tiles, whole 256 x 128 tiles (sm_90's
  // unchecked kernel with the staged C store), one element, K = 0.
  const std::vector<std::vector<int64_t>> shapes = {{100, 72, 40},   {33, 200, 130}, {129, 257, 64},
                                                    {256, 128, 128}, {1, 1, 1},      {70, 50, 0}};
  check_fused_cases("mma_multistage", gemm::mma_multistage_supports, gemm::mma_multistage_run,
                    fused_cases(shapes, {kF16, kBF16, kTF32}, kAligned), *ctx, stream_);
}

TEST_F(FusedRungs, DoubleBuffer) {
  const CudaContext* ctx = context();
  if (!ctx) GTEST_SKIP() << skip_reason_;
  // 300 x 600 at batch 17 fills the SMs with the large tile; odd strides take the
  // 4-byte copies and scalar C stores.
  const std::vector<std::vector<int64_t>> shapes = {
      {100, 72, 40}, {300, 600, 64}, {33, 17, 5}, {1, 1, 1}, {65, 130, 0}};
  std::vector<Items> placements = kAligned;
  placements.push_back(Items::Odd);
  const std::vector<FusedCase> cases = fused_cases(shapes, {kF32}, placements);
  {
    FusedProblem probe(cases.front(), stream_, 1);
    const core::Verdict v = gemm::double_buffer_supports(probe.args(), *ctx);
    if (v.reason == core::Decline::WrongArch) GTEST_SKIP() << v.text();
  }
  check_fused_cases("double_buffer", gemm::double_buffer_supports, gemm::double_buffer_run, cases, *ctx, stream_);
}

TEST_F(FusedRungs, Skinny) {
  const CudaContext* ctx = context();
  if (!ctx) GTEST_SKIP() << skip_reason_;
  // Short side m (bias along skinny's N) and short side n (bias along its T); every n8
  // tile count of T; K tails.
  const std::vector<std::vector<int64_t>> shapes = {{1, 300, 260},  {8, 130, 1000}, {13, 70, 300},
                                                    {64, 200, 100}, {200, 40, 513}, {100, 1, 64}};
  check_fused_cases("skinny", gemm::skinny_supports, gemm::skinny_run,
                    fused_cases(shapes, {kF16, kBF16, kTF32, kF32}, kAligned), *ctx, stream_);
}

TEST_F(FusedRungs, SkinnyForcedSplits) {
  const CudaContext* ctx = context();
  if (!ctx) GTEST_SKIP() << skip_reason_;
  struct Shape {
    int64_t m, n, k;
  };
  // 2050 f16 -> 17 or 9 K blocks, 1025 f32 the same; both orientations.
  const Shape shapes[] = {{3, 300, 2050}, {130, 13, 2050}, {40, 257, 1025}};
  int ran = 0, index = 0;
  for (const TypeChoice& type : {kF16, kBF16, kTF32, kF32})
    for (const Shape& s : shapes)
      for (int splits : {1, 2, 5, 1 << 20}) {  // 1 << 20: clamped to one K block per range
        FusedCase c;
        c.m = s.m, c.n = s.n, c.k = s.k;
        c.trans_b = true;  // a linear layer's weight
        c.trans_a = index % 2 == 1;
        c.ab = type.ab;
        c.tf32 = type.tf32;
        c.c = index % 3 == 0 ? DType::F32 : type.ab;
        c.batch = 3;
        c.b_items = index % 2 ? Items::Broadcast : Items::Padded;
        c.c_items = index % 2 ? Items::Interleaved : Items::Odd;
        c.bias = index % 2 ? BiasKind::CType : BiasKind::F32;
        c.bias_per_item = index % 4 < 2;
        c.act = 1 + index % 4;
        if (index % 3 == 1) c.alpha = 0.5f, c.beta = -1.5f;
        ++index;
        const std::string label = "skinny, " + std::to_string(splits) + " K ranges";
        ran += run_fused(
            c, 2000 + index, stream_, label,
            [&](const core::GemmArgs& args) { gemm::skinny_run_split(args, *ctx, splits); }, 3);
      }
  EXPECT_GT(ran, 0);
}

TEST_F(FusedRungs, SkinnyTmaPath) {
  const CudaContext* ctx = context();
  if (!ctx) GTEST_SKIP() << skip_reason_;
  if (ctx->arch.cc != 90) GTEST_SKIP() << "skinny's TMA path runs on sm_90 only";
  // One item (the TMA path fuses no batch); tiles stored from the registers (one CTA), cut
  // between CTAs (7 with 128-row tiles, 5 with 64-row tiles), both orientations (bias along
  // N, then along T).
  const std::vector<std::vector<int64_t>> shapes = {{3, 300, 2050}, {300, 13, 2050}, {16, 129, 100}};
  int ran = 0, index = 0;
  for (const TypeChoice& type : {kF16, kBF16, kTF32, kF32})
    for (const auto& s : shapes)
      for (const gemm::SkinnyTmaShape& shape :
           {gemm::SkinnyTmaShape{0, 0, 1}, gemm::SkinnyTmaShape{0, 0, 7}, gemm::SkinnyTmaShape{0, 0, 5, 64}}) {
        FusedCase c;
        c.m = s[0], c.n = s[1], c.k = s[2];
        c.trans_b = true;
        c.trans_a = c.m > c.n && index % 2 == 1;  // W N- or K-contiguous when the short side is n
        c.ab = type.ab;
        c.c = index % 3 == 0 ? DType::F32 : type.ab;
        c.bias = index % 2 ? BiasKind::CType : BiasKind::F32;
        c.act = 1 + index % 4;
        if (index % 3 == 1) c.alpha = 0.5f, c.beta = -1.5f;
        ++index;
        ran += run_fused(
            c, 3000 + index, stream_,
            "skinny TMA, " + std::to_string(shape.ctas) + " CTAs of " + std::to_string(shape.tile_rows) + "-row tiles",
            [&](const core::GemmArgs& args) { gemm::skinny_run_mode(args, *ctx, gemm::SkinnyTmaMode::kForce, shape); },
            2);
      }
  EXPECT_GT(ran, 0);
}

TEST_F(FusedRungs, SkinnyGemvPath) {
  const CudaContext* ctx = context();
  if (!ctx) GTEST_SKIP() << skip_reason_;
  if (ctx->arch.cc < 80) GTEST_SKIP() << "skinny needs sm_80";
  // The CUDA-core GEMV path (T <= 4): whole groups and a K split (5 ranges), both
  // orientations (bias along N, then along T), K- and N-contiguous W, every element type.
  const std::vector<std::vector<int64_t>> shapes = {{1, 300, 2050}, {300, 3, 2050}, {4, 129, 100}, {2, 131, 1000}};
  int ran = 0, index = 0;
  for (const TypeChoice& type : {kTF32, kF32, kBF16, kF16})
    for (const auto& s : shapes)
      for (int splits : {1, 5}) {
        FusedCase c;
        c.m = s[0], c.n = s[1], c.k = s[2];
        c.trans_b = c.m > c.n || index % 2 == 1;  // X = op(B)^T K-contiguous when the short side is n
        c.trans_a = c.m > c.n && index % 2 == 1;
        c.ab = type.ab;
        c.c = index % 3 == 2 ? type.ab : DType::F32;  // 16-bit C rounded once, too
        c.bias = index % 2 ? BiasKind::CType : BiasKind::F32;
        c.act = 1 + index % 4;
        if (index % 3 == 1) c.alpha = 0.5f, c.beta = -1.5f;
        ++index;
        ran += run_fused(
            c, 3500 + index, stream_, "skinny GEMV, " + std::to_string(splits) + " K ranges",
            [&](const core::GemmArgs& args) { gemm::skinny_run_gemv(args, *ctx, splits); }, 2);
      }
  EXPECT_GT(ran, 0);
}

TEST_F(FusedRungs, MoreItemsThanOneLaunch) {
  const CudaContext* ctx = context();
  if (!ctx) GTEST_SKIP() << skip_reason_;
  for (int64_t k : {8, 0}) {
    FusedCase c;
    c.m = 3, c.n = 5, c.k = k;
    c.batch = 66000;
    c.c_items = Items::Interleaved;
    c.bias = BiasKind::F32;
    c.bias_per_item = true;
    c.act = GK_ACT_SILU;
    c.ab = DType::F16;
    run_fused(c, 31 + k, stream_, "mma_multistage",
              [&](const core::GemmArgs& args) { gemm::mma_multistage_run(args, *ctx); });
    run_fused(c, 32 + k, stream_, "skinny", [&](const core::GemmArgs& args) { gemm::skinny_run(args, *ctx); });
    c.ab = c.c = DType::F32;
    c.beta = 0.5f;
    run_fused(c, 33 + k, stream_, "double_buffer",
              [&](const core::GemmArgs& args) { gemm::double_buffer_run(args, *ctx); });
  }
}

TEST_F(FusedRungs, DeclineItemsOffSixteenBytes) {
  const CudaContext* ctx = context();
  if (!ctx) GTEST_SKIP() << skip_reason_;
  for (const bool odd_a : {true, false}) {
    FusedCase c;
    c.m = 8, c.n = 64, c.k = 64;
    c.ab = c.c = DType::F16;
    c.batch = 3;
    (odd_a ? c.a_items : c.b_items) = Items::Odd;
    FusedProblem problem(c, stream_, 7);
    // The odd placement also makes the leading dimension odd: keep it aligned, so the
    // batch stride alone is what is off.
    core::GemmArgs args = problem.args();
    (odd_a ? args.lda : args.ldb) = 72;
    (odd_a ? args.stride_a : args.stride_b) = 8 * 72 + 3;
    const std::string operand = odd_a ? "stride_a" : "stride_b";
    for (SupportsFn supports : {gemm::mma_multistage_supports, gemm::skinny_supports}) {
      const core::Verdict v = supports(args, *ctx);
      EXPECT_EQ(v.reason, core::Decline::Misaligned) << v.text();
      EXPECT_NE(v.detail.find(operand), std::string::npos) << v.detail;
    }
    // One item: the stride is never used.
    args.batch = 1;
    EXPECT_TRUE(gemm::mma_multistage_supports(args, *ctx).accepted());
    EXPECT_TRUE(gemm::skinny_supports(args, *ctx).accepted());
  }
}

}  // namespace
}  // namespace gpukern::test::cuda_gemm
