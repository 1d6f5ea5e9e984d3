// The `skinny` GEMM path, for every ISA path this machine supports: its kernels alone at
// every column, row and depth tail, the algorithm with forced small blocks (many strips
// and depth blocks on several threads) and with the blocking the rung chooses, against a
// double-precision reference with C poisoned and guarded; the blocking within its
// buffers; the shapes it declines; auto's choice of it; batches and the epilogue through
// the public API with the rung forced (the core runs the items and the epilogue pass).
#include "cpu/gemm/skinny.hpp"
#include "gemm_batch_check.hpp"
#include "gemm_check.hpp"
#include "support/gemm_desc.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace gpukern::cpu::test {
namespace {

using core::DType;

constexpr DType kWeightTypes[] = {DType::F32, DType::F16, DType::BF16};

// ---- kernels alone ----

/// The walks of every kind of core (skinny.hpp).
constexpr SkinnyWalk kWalks[] = {SkinnyWalk::L1, SkinnyWalk::L2, SkinnyWalk::Rows};

/// acc (T rows, ld_acc = cols + 3: guard cells after each row) starts random; the kernel
/// must add exactly the T x cols block of products and touch nothing else, with each
/// family of walks.
void check_kernel(const SkinnyKernel& kernel, bool nt, DType w_type, int t_count, int64_t kc, int64_t cols,
                  SkinnyWalk walk) {
  std::mt19937 rng(static_cast<unsigned>(t_count * 7919 + kc * 131 + cols + (nt ? 1 : 0)));
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const int64_t lds = (kc + SkinnyBudget::kPad - 1) / SkinnyBudget::kPad * SkinnyBudget::kPad;
  // Packed S: NN s[p * T + t]; NT s[t * lds + p], zero beyond kc.
  std::vector<float> s(static_cast<std::size_t>(t_count * lds), 0.0f);
  auto s_at = [&](int t, int64_t p) -> float& { return nt ? s[t * lds + p] : s[p * t_count + t]; };
  for (int t = 0; t < t_count; ++t)
    for (int64_t p = 0; p < kc; ++p) s_at(t, p) = dist(rng);
  // W: NN kc x cols (ldw = cols + 1), NT cols x kc (ldw = kc + 1).
  const int64_t ldw = nt ? kc + 1 : cols + 1;
  Stored w(w_type, static_cast<std::size_t>((nt ? cols : kc) * ldw));
  w.fill_random(rng);
  auto w_at = [&](int64_t p, int64_t j) { return double(nt ? w.get(j * ldw + p) : w.get(p * ldw + j)); };
  const int64_t ld_acc = cols + 3;
  std::vector<float> acc(static_cast<std::size_t>(t_count * ld_acc));
  for (auto& v : acc) v = dist(rng);
  const std::vector<float> before = acc;

  if (nt)
    kernel.nt(w_type, t_count, kc, s.data(), lds, w.data(), ldw, cols, acc.data(), ld_acc, walk);
  else
    kernel.nn(w_type, t_count, kc, s.data(), w.data(), ldw, cols, acc.data(), ld_acc, walk);

  for (int t = 0; t < t_count; ++t)
    for (int64_t j = 0; j < ld_acc; ++j) {
      const float got = acc[t * ld_acc + j];
      const std::string where = std::string(kernel.name) + (nt ? " nt " : " nn ") + skinny_walk_name(walk) + " " +
                                core::dtype_name(w_type) + " T " + std::to_string(t_count) + " kc " +
                                std::to_string(kc) + " cols " + std::to_string(cols) + " at " + std::to_string(t) +
                                "," + std::to_string(j);
      if (j >= cols) {
        ASSERT_EQ(std::memcmp(&got, &before[t * ld_acc + j], 4), 0) << where << ": guard written";
        continue;
      }
      double want = before[t * ld_acc + j], scale = std::fabs(want);
      for (int64_t p = 0; p < kc; ++p) {
        want += double(s_at(t, p)) * w_at(p, j);
        scale += std::fabs(double(s_at(t, p)) * w_at(p, j));
      }
      ASSERT_NEAR(got, want, 2e-6 * (1 + scale)) << where;
    }
}

TEST(SkinnyKernel, EveryTailEveryTypeEveryPath) {
  for (Isa isa : supported_isas()) {
    const SkinnyKernel& kernel = skinny_kernel_for(isa);
    const int64_t lanes = kernel.lanes;
    // Columns (NN) / rows (NT): a partial vector, whole vectors, several wide tiles plus
    // single vectors plus a tail, and past one NN column panel (512, 1024 or 2048) into a
    // second one that ends in a tail. Depth: below and across the depth step and vector
    // sizes, and across the row walk's chunks. Every family of walks.
    const int64_t widths[] = {1, lanes - 1, lanes, lanes + 1, 13 * lanes + 5, 1024 + 5 * lanes + 3};
    const int64_t depths[] = {1, 3, 5, lanes - 1, lanes, lanes + 1, 3 * lanes + 7};
    for (SkinnyWalk walk : kWalks)
      for (DType w_type : kWeightTypes)
        for (int t = 1; t <= kSkinnyMaxT; ++t) {
          for (int64_t cols : widths)
            for (int64_t kc : depths) {
              check_kernel(kernel, false, w_type, t, kc, cols, walk);
              check_kernel(kernel, true, w_type, t, kc, cols, walk);
            }
          check_kernel(kernel, false, w_type, t, 2 * lanes + 3, 2048 + 5 * lanes + 3, walk);
          // NT over several chunks of the row walk (T above kSkinnyTileMaxT), the last
          // partial and ending in a partial vector.
          check_kernel(kernel, true, w_type, t, 2 * kSkinnyNtRowChunkFloats + lanes + 3, 13 * lanes + 5, walk);
        }
  }
}

// ---- the algorithm ----

/// Forced small blocks for T rows of S: several depth blocks (the last one shorter, not a
/// multiple of any vector) and several strips, the last one partial.
SkinnyBlocking small_blocks(bool nt, SkinnyWalk walk) {
  return nt ? SkinnyBlocking{37, 8, walk} : SkinnyBlocking{37, 64, walk};
}

/// L2 sizes for the blocking: a small one, under which the row walk's S block of T x K
/// splits into several depth blocks at these tests' K, and a common one.
constexpr std::size_t kL2Sizes[] = {64 * 1024, 2048 * 1024};

void check_skinny(const GemmCase& t, const SkinnyKernel& kernel, const SkinnyBlocking& blocking, int threads) {
  const std::string label = std::string(kernel.name) + " kc " + std::to_string(blocking.kc) + " strip " +
                            std::to_string(blocking.strip) + " " + skinny_walk_name(blocking.walk) + " threads " +
                            std::to_string(threads);
  check_gemm(
      t, [&](const core::GemmArgs& g) { gemm_skinny(g, kernel, blocking, threads); }, label);
}

/// Whether W is read in the NT form for this case (skinny.hpp).
bool nt_form(const GemmCase& t) { return t.m <= kSkinnyMaxT && t.m <= t.n ? t.tb : !t.ta; }

TEST(SkinnyGemm, EveryTEverySideTransposesTypesSmallBlocks) {
  constexpr int64_t kLong = 203, kDepth = 131;  // odd: no multiple of any vector or block
  for (Isa isa : supported_isas()) {
    const SkinnyKernel& kernel = skinny_kernel_for(isa);
    for (int64_t t : {1, 2, 3, 7, 8, 9, 13, 16})  // 9-16: two groups of rows of S per tile of W
      for (bool t_is_m : {true, false})
        for (int trans = 0; trans < 4; ++trans)
          for (const TypePair& tp : kTypePairs) {
            const int64_t m = t_is_m ? t : kLong, n = t_is_m ? kLong : t;
            const GemmCase c0{m, n, kDepth, (trans & 1) != 0, (trans & 2) != 0, tp.ab, tp.c, 1.0f, 0.0f};
            GemmCase c1 = c0;
            c1.alpha = -0.75f;
            c1.beta = 1.5f;
            check_skinny(c0, kernel, small_blocks(nt_form(c0), SkinnyWalk::L1), 2);
            check_skinny(c1, kernel, small_blocks(nt_form(c1), SkinnyWalk::L2), 3);
            check_skinny(c1, kernel, small_blocks(nt_form(c1), SkinnyWalk::Rows), 2);
            for (SkinnyWalk walk : kWalks)
              check_skinny(c1, kernel, choose_skinny_blocking(t, kLong, kDepth, nt_form(c1), 1, walk, kL2Sizes[1]), 1);
          }
  }
}

// Large enough that the rung's own choice runs several strips on several threads, and several
// depth blocks (T = 8: two depth blocks; the row walk's with the small L2).
TEST(SkinnyGemm, ThreadedWithChosenBlocking) {
  for (Isa isa : supported_isas()) {
    const SkinnyKernel& kernel = skinny_kernel_for(isa);
    for (const TypePair& tp : {TypePair{DType::F32, DType::F32}, TypePair{DType::BF16, DType::BF16}})
      for (int64_t t : {1, 4, 5, 8, 11, 16})
        for (bool tb : {false, true}) {
          const GemmCase c{t, 2053, 1031, false, tb, tp.ab, tp.c, 1.0f, t == 1 ? 0.0f : -0.5f};
          for (int threads : {2, 3})
            for (SkinnyWalk walk : kWalks)
              for (std::size_t l2 : kL2Sizes)
                check_skinny(c, kernel, choose_skinny_blocking(t, c.n, c.k, tb, threads, walk, l2), threads);
        }
    // n small: W = op(A)^T, C written across its rows.
    const GemmCase c{2001, 7, 1029, false, false, DType::F32, DType::F32, 2.0f, 0.0f};
    for (SkinnyWalk walk : kWalks)
      for (std::size_t l2 : kL2Sizes)
        check_skinny(c, kernel, choose_skinny_blocking(7, c.m, c.k, true, 2, walk, l2), 2);
  }
}

// m and n both small: the smaller is T. 17 is past the kernels: the other side is T then.
TEST(SkinnyGemm, BothSidesSmallAndSeventeen) {
  const SkinnyKernel& kernel = skinny_kernel_for(cpu_features().best);
  const int64_t shapes[][2] = {{1, 1}, {8, 8}, {9, 8}, {8, 9}, {3, 2}, {16, 16}, {17, 16}, {16, 17}, {17, 1}, {1, 17}};
  for (const auto& s : shapes)
    for (int trans = 0; trans < 4; ++trans) {
      const GemmCase c{s[0], s[1], 77, (trans & 1) != 0, (trans & 2) != 0, DType::F32, DType::F32, -1.0f, 0.25f};
      const int64_t t = std::min(s[0], s[1]), long_dim = std::max(s[0], s[1]);
      check_skinny(c, kernel,
                   choose_skinny_blocking(t, long_dim, c.k, nt_form(c), 2,
                                          skinny_walk_for(cpu_features().vendor, cpu_features().caches.l1d),
                                          cpu_features().caches.l2),
                   2);
    }
}

TEST(SkinnyGemm, DepthZeroScalesC) {
  const SkinnyKernel& kernel = skinny_kernel_for(cpu_features().best);
  check_skinny(GemmCase{5, 90, 0, false, false, DType::F32, DType::F32, 1.0f, 0.0f}, kernel, {16, 64}, 2);
  check_skinny(GemmCase{90, 3, 0, true, true, DType::BF16, DType::F32, 1.0f, -2.0f}, kernel, {16, 64}, 2);
}

TEST(SkinnyGemm, BlockingBeyondTheBuffersIsAnInternalError) {
  const SkinnyKernel& kernel = skinny_kernel_for(cpu_features().best);
  std::vector<float> a(8 * 4096), b(4096 * 4096), c(8 * 4096);
  const core::GemmArgs g = gemm_args(8, 4096, 4096, a.data(), 4096, b.data(), 4096, c.data(), 4096);
  // T = 8: one more depth step or column than the buffers hold, and an empty depth block.
  const int64_t kc_over = SkinnyBudget::kPackFloats / 8 + 1, strip_over = SkinnyBudget::kAccFloats / 8 + 64;
  for (SkinnyBlocking blocking : {SkinnyBlocking{kc_over, 64}, SkinnyBlocking{64, strip_over}, SkinnyBlocking{0, 64}}) {
    try {
      gemm_skinny(g, kernel, blocking, 1);
      ADD_FAILURE() << "kc " << blocking.kc << " strip " << blocking.strip << " accepted";
    } catch (const core::Error& e) {
      EXPECT_EQ(e.status(), core::Status::InternalError);
    }
  }
}

// ---- the choices ----

TEST(SkinnyBlocking, WalkByVendorAndL1) {
  EXPECT_EQ(skinny_walk_for("GenuineIntel", 48 * 1024), SkinnyWalk::Rows);
  EXPECT_EQ(skinny_walk_for("GenuineIntel", 32 * 1024), SkinnyWalk::Rows);
  EXPECT_EQ(skinny_walk_for("AuthenticAMD", 48 * 1024), SkinnyWalk::L1);
  EXPECT_EQ(skinny_walk_for("AuthenticAMD", 32 * 1024), SkinnyWalk::L2);
  EXPECT_EQ(skinny_walk_for("", 64 * 1024), SkinnyWalk::L2);
}

// The accumulator budget follows the L2: on a 2 MB L2 the NN form at T 16 over N' = 11008
// keeps one strip per thread of two; on 1 MB it takes four strips of 2752.
TEST(SkinnyBlocking, AccumulatorByTheL2) {
  for (SkinnyWalk walk : kWalks) {
    EXPECT_EQ(choose_skinny_blocking(16, 11008, 4096, false, 2, walk, std::size_t(2) << 20).strip, 5504);
    EXPECT_EQ(choose_skinny_blocking(16, 11008, 4096, false, 2, walk, std::size_t(1) << 20).strip, 2752);
  }
}

TEST(SkinnyBlocking, WithinTheBuffersAndBalanced) {
  for (int t = 1; t <= kSkinnyMaxT; ++t)
    for (bool nt : {false, true})
      for (int threads : {1, 2, 8})
        for (int64_t long_dim : {1, 100, 4096, 11008, 128256})
          for (int64_t k : {1, 17, 4096, 11008, 14336})
            for (std::size_t l2 : {std::size_t(64) << 10, std::size_t(1280) << 10, std::size_t(2) << 20}) {
              const SkinnyBlocking l1 = choose_skinny_blocking(t, long_dim, k, nt, threads, SkinnyWalk::L1, l2);
              const SkinnyBlocking l2_walk = choose_skinny_blocking(t, long_dim, k, nt, threads, SkinnyWalk::L2, l2);
              const SkinnyBlocking rows = choose_skinny_blocking(t, long_dim, k, nt, threads, SkinnyWalk::Rows, l2);
              EXPECT_EQ(l1.walk, SkinnyWalk::L1);
              EXPECT_EQ(l2_walk.walk, SkinnyWalk::L2);
              EXPECT_EQ(rows.walk, SkinnyWalk::Rows);
              // The walks share their strips; only the row walk's NT depth blocks differ.
              EXPECT_EQ(l2_walk.kc, l1.kc);
              EXPECT_EQ(l2_walk.strip, l1.strip);
              EXPECT_EQ(rows.strip, l1.strip);
              if (!nt || t < kSkinnyNtStreamMinT) EXPECT_EQ(rows.kc, l1.kc);
              for (const SkinnyBlocking& b : {l1, rows}) {
                const std::string where = "T " + std::to_string(t) + (nt ? " NT" : " NN") + " threads " +
                                          std::to_string(threads) + " N' " + std::to_string(long_dim) + " K " +
                                          std::to_string(k) + " L2 " + std::to_string(l2) + " walk " +
                                          skinny_walk_name(b.walk);
                ASSERT_GE(b.kc, 1) << where;
                ASSERT_LE(b.kc, k) << where;
                const int64_t padded =
                    nt ? (b.kc + SkinnyBudget::kPad - 1) / SkinnyBudget::kPad * SkinnyBudget::kPad : b.kc;
                if (!nt || t < kSkinnyNtStreamMinT) {
                  EXPECT_LE(t * padded, SkinnyBudget::kPackFloats) << where;
                } else if (b.walk == SkinnyWalk::Rows) {
                  // The S block within half the L2 and the row budget; the whole depth where
                  // it fits (each row of W read in one run).
                  const int64_t budget = std::clamp<int64_t>(int64_t(l2 / 8), SkinnyBudget::kNtStreamPackFloats,
                                                             SkinnyBudget::kNtRowPackFloats);
                  EXPECT_LE(t * padded, budget) << where;
                  const int64_t whole = (k + SkinnyBudget::kPad - 1) / SkinnyBudget::kPad * SkinnyBudget::kPad;
                  if (t * whole <= budget) EXPECT_EQ(b.kc, k) << where;
                } else {
                  // NT form with prefetch ahead: the smaller S block (skinny.hpp).
                  EXPECT_LE(t * padded, SkinnyBudget::kNtStreamPackFloats + t * SkinnyBudget::kPad) << where;
                }
                // The accumulator within a quarter of the L2 (256 KB at least).
                const int64_t acc_budget =
                    std::clamp<int64_t>(int64_t(l2 / 16), SkinnyBudget::kAccMinFloats, SkinnyBudget::kAccFloats);
                EXPECT_LE(t * b.strip, acc_budget) << where;
                EXPECT_EQ(b.strip % (nt ? 8 : 64), 0) << where;
                // NT form: blocks start on whole vectors of W's rows.
                if (nt && b.kc < k) EXPECT_EQ(b.kc % SkinnyBudget::kPad, 0) << where;
                // Equal depth blocks: the last is at least half of the others.
                const int64_t last = k % b.kc;
                EXPECT_TRUE(last == 0 || last >= b.kc / 2) << where << ": kc " << b.kc;
                // Every thread has a strip (NT form: two) when the long side has room for them.
                const int64_t strips = (long_dim + b.strip - 1) / b.strip;
                if (long_dim >= 4096) EXPECT_GE(strips, nt ? 2 * threads : threads) << where << ": strip " << b.strip;
                // Strips cut by the accumulator budget: no thread takes much more than its share
                // (T = 16, N' = 11008, two threads: four strips of 2752, not 4096 + 4096 + 2816).
                if (strips > (nt ? 2 * threads : threads)) {
                  const int64_t most_per_thread = (strips + threads - 1) / threads * b.strip;
                  EXPECT_LE(double(most_per_thread), 1.05 * double(long_dim) / threads + (nt ? 8 : 64))
                      << where << ": " << strips << " strips of " << b.strip;
                }
              }
            }
}

// ---- the rung in the ladder ----

// Batches of linear-layer calls (W shared or per item) with every activation and bias,
// through gk_gemm_ex with `skinny` forced: T = 1..16 rows against an odd number of weight
// rows, K over several of the rung's own depth blocks and no multiple of them, both
// forms of W, alpha and beta.
TEST(SkinnyRung, BatchesAndEpilogue) {
  gk_handle h = nullptr;
  ASSERT_EQ(gk_open("cpu", &h), GK_SUCCESS) << gk_last_error();
  int layout = 0;
  for (int64_t t = 1; t <= kSkinnyMaxT; ++t, ++layout) {
    BatchCase c;
    c.batch = t % 2 == 0 ? 3 : 1;
    const bool t_is_m = t % 3 != 2;
    c.m = t_is_m ? t : 203;
    c.n = t_is_m ? 203 : t;
    c.k = 1300;
    c.ta = layout % 4 == 3;
    c.tb = layout % 2 == 0;
    c.b_items = layout % 3 == 0 ? ItemLayout::Broadcast : ItemLayout::Padded;
    c.act = static_cast<core::Activation>(layout % 5);
    c.bias = layout % 3;
    c.bias_per_item = layout % 2 == 1;
    c.alpha = t == 3 ? -0.5f : 1.0f;
    c.beta = t % 2 == 0 ? 0.75f : 0.0f;
    for (DType type : {DType::F32, DType::BF16}) {
      c.ab = c.c = type;
      check_batch(
          c,
          [&](const core::GemmArgs& g) {
            const gk_gemm_ex_desc d = gpukern::test::gemm_ex_desc(g, "skinny");
            ASSERT_EQ(gk_gemm_ex(h, &d), GK_SUCCESS) << gk_last_error();
          },
          "skinny");
    }
  }
  gk_close(h);
}

/// A call with B stored n x k (a linear layer's weight), for the public API.
gk_gemm_desc desc_for(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c) {
  core::GemmArgs g = gemm_args(m, n, k, a, k, b, k, c, n);
  g.trans_b = true;
  return gemm_desc(g, nullptr);
}

TEST(SkinnyRung, AutoPicksItForSkinnyShapesOnly) {
  gk_handle h = nullptr;
  ASSERT_EQ(gk_open("cpu", &h), GK_SUCCESS) << gk_last_error();
  std::vector<float> a(64 * 64, 1.0f), b(64 * 64, 1.0f), c(64 * 64);
  char name[64];
  const int64_t shapes[][2] = {{1, 64},  {8, 64},  {64, 8},  {9, 64},  {64, 9},
                               {16, 64}, {64, 16}, {17, 64}, {64, 17}, {64, 64}};
  for (const auto& s : shapes) {
    const gk_gemm_desc d = desc_for(s[0], s[1], 64, a.data(), b.data(), c.data());
    ASSERT_EQ(gk_gemm_select(h, &d, name, sizeof name), GK_SUCCESS) << gk_last_error();
    const bool skinny = std::min(s[0], s[1]) <= kSkinnyAutoMaxT;
    EXPECT_EQ(std::string(name), skinny ? "skinny" : "omp_simd") << s[0] << "x" << s[1];
  }
  // The table's entry takes any batch count: skinny runs a batch item by item.
  for (const int64_t rows : {1, 8, 17}) {
    core::GemmArgs g = gemm_args(rows, 8, 64, a.data(), 64, b.data(), 64, c.data(), 8);
    g.trans_b = true;
    g.batch = 3;
    g.stride_a = rows * 64;
    g.stride_b = 8 * 64;
    g.stride_c = rows * 8;
    const gk_gemm_ex_desc ex = gpukern::test::gemm_ex_desc(g, nullptr);
    ASSERT_EQ(gk_gemm_ex_select(h, &ex, name, sizeof name), GK_SUCCESS) << gk_last_error();
    EXPECT_EQ(std::string(name), "skinny") << "batch of 3, T = " << std::min<int64_t>(rows, 8);
  }
  // Forced on a shape it does not take: declined with the typed reason, naming m and n.
  gk_gemm_desc d = desc_for(17, 64, 64, a.data(), b.data(), c.data());
  d.variant = "skinny";
  EXPECT_EQ(gk_gemm(h, &d), GK_UNSUPPORTED);
  EXPECT_EQ(gk_last_decline(), GK_DECLINE_SHAPE_LIMIT);
  EXPECT_NE(std::string(gk_last_error()).find("m = 17 and n = 64"), std::string::npos) << gk_last_error();
  gk_close(h);
}

}  // namespace
}  // namespace gpukern::cpu::test
