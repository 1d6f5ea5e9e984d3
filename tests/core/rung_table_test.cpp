// The rung contract (src/core/rung_table.hpp, src/core/dispatch.cpp): a ladder table
// declines with typed reasons (dtype, architecture per vendor, the rung's own check),
// auto walks the ranked rows in order and never picks an experimental or unranked rung,
// a forced rung that declines is Unsupported with its reason, and a rung that accepted a
// call and then declines it is reported as the library's bug (InternalError).
#include "core/dispatch.hpp"
#include "core/rung_table.hpp"
#include "support/null_backend.hpp"

#include <gpukern/gpukern.h>
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

namespace gpukern::core {
namespace {

struct FakeCtx {
  int runs = 0;  // how many times a rung ran (mutable through a pointer)
  int* ran = nullptr;
};

}  // namespace

/// These tables' calls are never decomposed (decompose_test.cpp tests that).
template <>
struct GenericPaths<FakeCtx> {
  static constexpr std::size_t kWorkspaceAlignment = 256;
  static void epilogue_pass(const EpiloguePassArgs&, const FakeCtx&) { ADD_FAILURE() << "no epilogue pass here"; }
  static void* workspace(std::size_t, const FakeCtx&) { return nullptr; }
  static void release(void*, const FakeCtx&) noexcept {}
};

namespace {

Verdict even_k_only(const GemmArgs& a, const FakeCtx&) {
  if (a.k % 2 != 0) return {Decline::ShapeLimit, "k must be even"};
  return {};
}
Verdict misaligned_always(const GemmArgs&, const FakeCtx&) { return {Decline::Misaligned, "A not 16-byte aligned"}; }
void mark_run(const GemmArgs&, const FakeCtx& ctx) { ++*ctx.ran; }
void throws_unsupported(const GemmArgs&, const FakeCtx&) { throw Error(Status::Unsupported, "changed its mind"); }
bool big_m(const GemmArgs& a, const FakeCtx&) { return a.m >= 1000; }
bool cdna_only(int gfx) { return gfx == 0x90a; }

using FakeLadder = Ladder<GemmArgs, FakeCtx>;

const FakeLadder& table() {
  static const FakeLadder t(
      {
          {"simple", "takes everything f32", kMaskF32 | kMaskTF32, {}, RungKind::Ladder, nullptr, mark_run, 3},
          {"even", "even k only, first for big m", kMaskF32, {}, RungKind::Ladder, even_k_only, mark_run, 0, big_m},
          {"hopper",
           "sm_90 only",
           kMaskF16 | kMaskF32,
           {90, 90, nullptr, "sm_90a"},
           RungKind::Ladder,
           nullptr,
           mark_run,
           1},
          {"cdna", "gfx90a only", kMaskF32, {0, 0, cdna_only, "CDNA"}, RungKind::Ladder, nullptr, mark_run, kNeverAuto},
          {"future", "experimental", kMaskF32, {}, RungKind::Experimental, nullptr, mark_run, 0},
          {"picky", "always misaligned", kMaskF32, {}, RungKind::Ladder, misaligned_always, mark_run, 2},
          {"liar", "accepts, then declines", kMaskF32, {}, RungKind::Ladder, nullptr, throws_unsupported, kNeverAuto},
      },
      // The measured auto table: consulted before the ranked order.
      {
          {"skinny f32", kMaskF32, {}, {1, 4}, {}, {}, "picky"},  // picky declines: ranked order follows
          {"short k on sm_90", kMaskF32, {90, 90, nullptr, "sm_90"}, {}, {}, {1, 16}, "simple"},
          {"tf32 anywhere", kMaskTF32, {}, {}, {}, {}, "cdna"},       // exact types: f32 calls never match
          {"f16 NT", kMaskF16, {}, {}, {}, {}, "simple", kLayoutNT},  // B transposed only
      });
  return t;
}

GemmArgs f32_call(int64_t m, int64_t k) {
  GemmArgs a;
  a.m = m;
  a.n = 8;
  a.k = k;
  return a;
}

const DeviceArch kSm90{Vendor::Nvidia, 90, 0, "sm_90"};
const DeviceArch kSm80{Vendor::Nvidia, 80, 0, "sm_80"};
const DeviceArch kGfx1030{Vendor::Amd, 0, 0x1030, "gfx1030"};

TEST(RungTable, DeclinesWithTypedReasons) {
  const FakeLadder& t = table();
  FakeCtx ctx;
  GemmArgs half = f32_call(8, 8);
  half.ab_type = half.c_type = DType::F16;
  EXPECT_EQ(t.supports(0, half, ctx, kSm90).reason, Decline::Dtype);
  EXPECT_EQ(t.supports(2, f32_call(8, 8), ctx, kSm80).reason, Decline::WrongArch);
  EXPECT_NE(t.supports(2, f32_call(8, 8), ctx, kSm80).detail.find("sm_90a"), std::string::npos);
  EXPECT_TRUE(t.supports(2, f32_call(8, 8), ctx, kSm90).accepted());
  EXPECT_EQ(t.supports(3, f32_call(8, 8), ctx, kGfx1030).reason, Decline::WrongArch);
  EXPECT_TRUE(t.supports(3, f32_call(8, 8), ctx, DeviceArch{Vendor::Amd, 0, 0x90a, "gfx90a"}).accepted());
  EXPECT_EQ(t.supports(1, f32_call(8, 7), ctx, kSm90).reason, Decline::ShapeLimit);
  EXPECT_EQ(t.supports(5, f32_call(8, 8), ctx, kSm90).text(), "Misaligned: A not 16-byte aligned");
}

TEST(RungTable, ArchBoundsOnMemoryBandwidth) {
  const ArchSupport upto_4000{90, 90, nullptr, "sm_90, at most 4000 GB/s", 0, 4000};
  const ArchSupport from_4000{90, 90, nullptr, "sm_90, 4000 GB/s and more", 4000};
  const DeviceArch h100{Vendor::Nvidia, 90, 0, "sm_90", 3352}, h200{Vendor::Nvidia, 90, 0, "sm_90", 4814};
  EXPECT_TRUE(arch_verdict(upto_4000, h100).accepted());
  EXPECT_EQ(arch_verdict(upto_4000, h200).reason, Decline::WrongArch);
  EXPECT_NE(arch_verdict(upto_4000, h200).detail.find("at most 4000 GB/s"), std::string::npos);
  EXPECT_EQ(arch_verdict(from_4000, h100).reason, Decline::WrongArch);
  EXPECT_TRUE(arch_verdict(from_4000, h200).accepted());
  EXPECT_TRUE(arch_verdict(upto_4000, kSm90).accepted()) << "bandwidth not known: every bound met";
  EXPECT_TRUE(arch_verdict(from_4000, kSm90).accepted());
  EXPECT_EQ(arch_verdict(from_4000, DeviceArch{Vendor::Nvidia, 80, 0, "sm_80", 4814}).reason, Decline::WrongArch);
}

TEST(RungTable, AutoOrderFollowsRanksAndSkipsExperimentalAndUnranked) {
  const FakeLadder& t = table();
  EXPECT_EQ(t.auto_order(), (std::vector<int>{1, 2, 5, 0}));  // even(0) hopper(1) picky(2) simple(3)
  FakeCtx ctx;
  EXPECT_FALSE(t.auto_candidate(1, f32_call(10, 8), ctx)) << "policy: m >= 1000 only";
  EXPECT_TRUE(t.auto_candidate(1, f32_call(1000, 8), ctx));
  EXPECT_FALSE(t.auto_candidate(4, f32_call(1000, 8), ctx)) << "experimental rungs are never auto's";
  const auto infos = t.infos(kSm80);
  EXPECT_EQ(infos[4].auto_position, -1);
  EXPECT_EQ(infos[4].kind, RungKind::Experimental);
  EXPECT_EQ(infos[1].auto_position, 0);
  EXPECT_EQ(infos[0].auto_position, 3);
  EXPECT_EQ(infos[2].unavailable.reason, Decline::WrongArch);
  EXPECT_TRUE(infos[0].unavailable.accepted());
}

TEST(RungTable, RankedSharesARowWithAnotherRank) {
  const auto& row = table()[3];
  const auto ranked_row = ranked(row, 7, big_m);
  EXPECT_EQ(ranked_row.auto_rank, 7);
  EXPECT_EQ(ranked_row.auto_when, &big_m);
  EXPECT_STREQ(ranked_row.name, row.name);
}

/// A backend whose one GEMM ladder is the fake table, on an sm_90 device.
class FakeBackend final : public test::NullBackend {
 public:
  int runs = 0;
  std::vector<RungInfo> variants(OpKind op) const override {
    return op == OpKind::Gemm ? table().infos(kSm90) : std::vector<RungInfo>{};
  }
  Verdict supports(const GemmArgs& a, int rung) const override { return table().supports(rung, a, ctx(), kSm90); }
  bool auto_candidate(const GemmArgs& a, int rung) const override { return table().auto_candidate(rung, a, ctx()); }
  std::vector<AutoEntryInfo> auto_table(OpKind op) const override {
    return op == OpKind::Gemm ? table().auto_table() : std::vector<AutoEntryInfo>{};
  }
  AutoPick auto_pick(const GemmArgs& a) const override { return table().auto_pick(a, kSm90); }
  void gemm(const GemmArgs& a, int rung) override { table().run(rung, a, ctx()); }

 private:
  FakeCtx ctx() const {
    FakeCtx c;
    c.ran = const_cast<int*>(&runs);
    return c;
  }
};

TEST(Dispatch, AutoTakesTheFirstCandidateThatAccepts) {
  FakeBackend backend;
  Dispatch d(backend, "fake:0");
  const auto& rungs = d.rungs(OpKind::Gemm);
  // m >= 1000, even k (and in no class of the measured table): "even" is first.
  EXPECT_EQ(rungs[d.select(f32_call(1000, 32), nullptr, "auto")].name, "even");
  // odd k: even declines (ShapeLimit), hopper accepts on sm_90.
  EXPECT_EQ(rungs[d.select(f32_call(1000, 33), nullptr, "auto")].name, "hopper");
  // f16: only hopper takes it.
  GemmArgs half = f32_call(8, 8);
  half.ab_type = half.c_type = DType::F16;
  EXPECT_EQ(rungs[d.select(half, nullptr, "auto")].name, "hopper");
}

TEST(RungTable, MeasuredAutoTablePicksByShapeClassAndArchitecture) {
  const FakeLadder& t = table();
  // T = min(m, n) = 2: "skinny f32" -> picky (index 5).
  EXPECT_EQ(t.auto_pick(f32_call(2, 8), kSm90).rung, 5);
  EXPECT_EQ(t.auto_pick(f32_call(2, 8), kSm90).entry, 0);
  // k = 8, T = 8: "short k on sm_90" -> simple, on sm_90 only.
  EXPECT_EQ(t.auto_pick(f32_call(100, 8), kSm90).rung, 0);
  EXPECT_EQ(t.auto_pick(f32_call(100, 8), kSm80).rung, -1);
  EXPECT_EQ(t.auto_pick(f32_call(100, 32), kSm90).entry, -1) << "k 32 is in no class";
  GemmArgs tf32 = f32_call(100, 32);
  tf32.allow_tf32 = true;
  EXPECT_EQ(t.auto_pick(tf32, kSm90).entry, 2);
  GemmArgs half = f32_call(100, 32);
  half.ab_type = half.c_type = DType::F16;
  EXPECT_EQ(t.auto_pick(half, kSm90).entry, -1) << "NN is not in 'f16 NT'";
  half.trans_b = true;
  EXPECT_EQ(t.auto_pick(half, kSm90).entry, 3);
  half.trans_a = true;
  EXPECT_EQ(t.auto_pick(half, kSm90).entry, -1) << "TT is not in 'f16 NT'";
  const auto listed = t.auto_table();
  ASSERT_EQ(listed.size(), 4u);
  EXPECT_EQ(listed[3].shape, "f16 NT");
  EXPECT_EQ(listed[1].rung, "simple");
  EXPECT_EQ(listed[1].arch, "sm_90");
  EXPECT_EQ(listed[1].shape, "f32 k 1..16");
  EXPECT_EQ(listed[0].shape, "f32 T 1..4");
}

TEST(RungTable, ClassesMatchBatchCountsMultiplesAndTheSideOfT) {
  constexpr int64_t kAny = std::numeric_limits<int64_t>::max();
  const std::vector<GemmClass> classes{
      {"single calls", kMaskF32, {}, {1, 4}, {}, {}, "simple", 0, {1, 1}},
      {"n side, tiles",
       kMaskF32,
       {},
       {128, 128},
       {1024, 4096, 256},
       {1024, 4096, 64},
       "simple",
       kLayoutNN,
       {64, kAny},
       TSide::N},
      {"any batch", kMaskF32, {}, {5, 8}, {}, {}, "simple"},
      {"m side", kMaskF32, {}, {9, 16}, {4096, 4096}, {}, "simple", 0, {}, TSide::M},
  };
  const auto entry = [&](int64_t m, int64_t n, int64_t k, int64_t batch) {
    GemmArgs a;
    a.m = m;
    a.n = n;
    a.k = k;
    a.batch = batch;
    return first_matching_entry(classes, a, kSm90);
  };
  EXPECT_EQ(entry(2, 100, 32, 1), 0);
  EXPECT_EQ(entry(2, 100, 32, 2), -1) << "batch 2 is not a single call";
  EXPECT_EQ(entry(100, 6, 32, 1), 2);
  EXPECT_EQ(entry(100, 6, 32, 1000), 2) << "no batch range: any count";
  EXPECT_EQ(entry(2048, 128, 2048, 64), 1);
  EXPECT_EQ(entry(4096, 128, 4096, 100000), 1);
  EXPECT_EQ(entry(2048, 128, 2048, 63), -1) << "below the batch range";
  EXPECT_EQ(entry(128, 2048, 2048, 64), -1) << "T must be n here, not m";
  EXPECT_EQ(entry(2048 + 128, 128, 2048, 64), -1) << "m not a multiple of 256";
  EXPECT_EQ(entry(2048, 128, 2048 + 32, 64), -1) << "k not a multiple of 64";
  EXPECT_EQ(entry(4096 + 256, 128, 2048, 64), -1) << "m above the range";
  EXPECT_EQ(entry(12, 4096, 32, 1), 3) << "T = m";
  EXPECT_EQ(entry(4096, 12, 32, 1), -1) << "T must be m here, not n";
  EXPECT_EQ(classes[3].describe(), "f32 m 9..16 n 4096");
  EXPECT_EQ(classes[0].describe(), "f32 T 1..4 batch 1");
  EXPECT_EQ(classes[1].describe(),
            "f32 NN m 1024..4096 (multiple of 256) n 128 k 1024..4096 (multiple of 64) batch >= 64");
  EXPECT_EQ(classes[2].describe(), "f32 T 5..8");
  EXPECT_EQ(range_text("k", SizeRange{0, std::numeric_limits<int64_t>::max(), 8}), " k (multiple of 8)");
  EXPECT_TRUE((SizeRange{0, 10, 0}).contains(7)) << "multiple 0 means no constraint";
}

TEST(RungTable, AutoTableMustNameARungAutoMayPick) {
  using Row = FakeLadder::Row;
  const Row simple{"simple", "", kMaskF32, {}, RungKind::Ladder, nullptr, mark_run, 0};
  const Row future{"future", "", kMaskF32, {}, RungKind::Experimental, nullptr, mark_run, 0};
  EXPECT_THROW(FakeLadder({simple}, {{"typo", kMaskF32, {}, {}, {}, {}, "simpel"}}), std::logic_error);
  EXPECT_THROW(FakeLadder({simple, future}, {{"exp", kMaskF32, {}, {}, {}, {}, "future"}}), std::logic_error);
  EXPECT_NO_THROW(FakeLadder({simple, future}, {{"ok", kMaskF32, {}, {}, {}, {}, "simple"}}));
}

TEST(Dispatch, AutoTriesTheTableEntrysRungFirst) {
  FakeBackend backend;
  Dispatch d(backend, "fake:0");
  const auto& rungs = d.rungs(OpKind::Gemm);
  // k = 8 falls in "short k on sm_90": simple, although even and hopper rank before it.
  EXPECT_EQ(rungs[d.select(f32_call(1000, 8), nullptr, "auto")].name, "simple");
  // T = 2 falls in "skinny f32" -> picky, which declines: the ranked order gives hopper.
  GemmArgs skinny = f32_call(2, 32);
  EXPECT_EQ(rungs[d.select(skinny, nullptr, "auto")].name, "hopper");
  // A forced name ignores the table.
  EXPECT_EQ(rungs[d.select(f32_call(1000, 8), "hopper", "auto")].name, "hopper");
  ASSERT_EQ(d.auto_table(OpKind::Gemm).size(), 4u);
}

TEST(Dispatch, ForcedRungThatDeclinesIsUnsupportedWithItsReason) {
  FakeBackend backend;
  Dispatch d(backend, "fake:0");
  try {
    d.select(f32_call(8, 8), "picky", "auto");
    ADD_FAILURE() << "a declining forced rung was selected";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::Unsupported);
    EXPECT_EQ(e.decline(), Decline::Misaligned);
    EXPECT_NE(std::string(e.what()).find("picky"), std::string::npos) << e.what();
  }
  try {
    d.select(f32_call(8, 8), nullptr, "no_such_rung");
    ADD_FAILURE() << "an unknown name was selected";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("GPUKERN_GEMM_VARIANT"), std::string::npos) << e.what();
  }
}

TEST(Dispatch, AnAcceptedCallThatDeclinesIsTheLibrarysBug) {
  FakeBackend backend;
  Dispatch d(backend, "fake:0");
  const int liar = d.select(f32_call(8, 8), "liar", "auto");
  try {
    d.run(f32_call(8, 8), liar);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::InternalError) << e.what();
  }
  const int simple = d.select(f32_call(8, 8), "simple", "auto");
  d.run(f32_call(8, 8), simple);
  EXPECT_EQ(backend.runs, 1);
}

TEST(Decline, CApiNamesAndLastDecline) {
  EXPECT_STREQ(gk_decline_name(GK_DECLINE_MISALIGNED), "Misaligned");
  EXPECT_STREQ(gk_decline_name(GK_DECLINE_WRONG_ARCH), "WrongArch");
  EXPECT_STREQ(gk_decline_name(static_cast<gk_decline>(99)), "Unknown");
  // A CPU rung forced on a call it declines: the reason comes back typed.
  gk_handle h = nullptr;
  ASSERT_EQ(gk_open("cpu", &h), GK_SUCCESS);
  int count = 0;
  ASSERT_EQ(gk_variant_count(h, GK_OP_GEMM, &count), GK_SUCCESS);
  bool have_openblas = false;
  for (int i = 0; i < count; ++i) {
    gk_variant_info info{};
    ASSERT_EQ(gk_get_variant_info(h, GK_OP_GEMM, i, &info), GK_SUCCESS);
    if (std::string(info.name) == "openblas") {
      have_openblas = info.runs_here == 1;
      EXPECT_EQ(info.is_reference, 1);
      EXPECT_EQ(info.auto_position, -1) << "auto never picks the reference";
      if (!info.runs_here) {
        EXPECT_EQ(info.decline, GK_DECLINE_LIBRARY_MISSING);
      }
    }
  }
  float a = 1, b = 1, c = 0;
  gk_gemm_desc g{};
  g.m = int64_t(1) << 31;  // CBLAS takes int: beyond it openblas declines (ShapeLimit)
  g.n = 1;
  g.k = 0;
  g.a = &a;
  g.lda = 1;
  g.b = &b;
  g.ldb = 1;
  g.c = &c;
  g.ldc = 1;
  g.alpha = 1;
  g.variant = "openblas";
  char name[32];
  EXPECT_EQ(gk_gemm_select(h, &g, name, sizeof name), GK_UNSUPPORTED) << gk_last_error();
  EXPECT_EQ(gk_last_decline(), have_openblas ? GK_DECLINE_SHAPE_LIMIT : GK_DECLINE_LIBRARY_MISSING) << gk_last_error();
  // Any later call clears it.
  EXPECT_EQ(gk_variant_count(h, GK_OP_GEMM, &count), GK_SUCCESS);
  EXPECT_EQ(gk_last_decline(), GK_DECLINE_NONE);
  gk_close(h);
}

TEST(AutoTable, CApiListsEntriesAndRejectsBadIndices) {
  gk_handle h = nullptr;
  ASSERT_EQ(gk_open("cpu", &h), GK_SUCCESS);
  for (gk_op op : {GK_OP_GEMM, GK_OP_SOFTMAX}) {
    int count = -1;
    ASSERT_EQ(gk_auto_entry_count(h, op, &count), GK_SUCCESS);
    EXPECT_GE(count, 0);
    for (int i = 0; i < count; ++i) {
      gk_auto_entry e{};
      ASSERT_EQ(gk_get_auto_entry(h, op, i, &e), GK_SUCCESS);
      EXPECT_NE(e.label[0], '\0');
      EXPECT_NE(e.variant[0], '\0');
    }
    gk_auto_entry e{};
    EXPECT_EQ(gk_get_auto_entry(h, op, count, &e), GK_INVALID_ARGUMENT);
    EXPECT_NE(std::string(gk_last_error()).find("auto table index"), std::string::npos) << gk_last_error();
    EXPECT_EQ(gk_get_auto_entry(h, op, -1, &e), GK_INVALID_ARGUMENT);
    EXPECT_EQ(gk_get_auto_entry(h, op, 0, nullptr), GK_INVALID_ARGUMENT);
  }
  gk_close(h);
}

}  // namespace
}  // namespace gpukern::core
