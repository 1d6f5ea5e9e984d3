// The core's generic paths (src/core/decompose.hpp through Ladder::supports / Ladder::run):
// fake rungs record every call they get and a fake backend records its epilogue passes and
// workspaces, so each test sees exactly what the core asked of the rung and of the backend:
// per-item pointers (broadcast strides included), the plain GEMM before its epilogue pass,
// C never read through beta = 0, the f32 workspace for 16-bit C in chunks, supports() on the
// decomposed calls, softmax features that cannot be decomposed declined as Feature.
#include "core/dispatch.hpp"
#include "core/rung_table.hpp"
#include "support/null_backend.hpp"

#include <gpukern/gpukern.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace gpukern::core {
namespace {

/// One thing the core asked for, in order.
struct Event {
  enum Kind { Rung, Pass, Workspace, Release } kind = Rung;
  GemmArgs gemm;          // Rung (GEMM)
  SoftmaxArgs softmax;    // Rung (softmax)
  EpiloguePassArgs pass;  // Pass
  std::size_t bytes = 0;  // Workspace
  void* ptr = nullptr;    // Workspace, Release

  static Event of(Kind kind) {
    Event e;
    e.kind = kind;
    return e;
  }
};

struct RecordingCtx {
  std::vector<Event>* events = nullptr;
  int throw_at_rung_call = -1;  // this rung call throws (0-based), -1 never
};

/// Where the fake workspace lives: an address no one dereferences (fake rungs touch no memory).
char* const kWorkspace = reinterpret_cast<char*>(uintptr_t{1} << 40);

}  // namespace

template <>
struct GenericPaths<RecordingCtx> {
  static constexpr std::size_t kWorkspaceAlignment = 256;
  static void epilogue_pass(const EpiloguePassArgs& args, const RecordingCtx& ctx) {
    Event e = Event::of(Event::Pass);
    e.pass = args;
    ctx.events->push_back(e);
  }
  static void* workspace(std::size_t bytes, const RecordingCtx& ctx) {
    Event e = Event::of(Event::Workspace);
    e.bytes = bytes;
    e.ptr = kWorkspace;
    ctx.events->push_back(e);
    return kWorkspace;
  }
  static void release(void* p, const RecordingCtx& ctx) noexcept {
    Event e = Event::of(Event::Release);
    e.ptr = p;
    ctx.events->push_back(e);
  }
};

namespace {

void record_gemm(const GemmArgs& a, const RecordingCtx& ctx) {
  const int calls = static_cast<int>(
      std::count_if(ctx.events->begin(), ctx.events->end(), [](const Event& e) { return e.kind == Event::Rung; }));
  if (calls == ctx.throw_at_rung_call) throw Error(Status::DeviceError, "launch failed");
  Event e = Event::of(Event::Rung);
  e.gemm = a;
  ctx.events->push_back(e);
}
void record_softmax(const SoftmaxArgs& a, const RecordingCtx& ctx) {
  Event e = Event::of(Event::Rung);
  e.softmax = a;
  ctx.events->push_back(e);
}
/// Declines a C that is not 16-byte aligned or a 16-bit input with an f32 C.
Verdict aligned_c_same_type(const GemmArgs& a, const RecordingCtx&) {
  if (reinterpret_cast<uintptr_t>(a.c) % 16 != 0) return {Decline::Misaligned, "C not 16-byte aligned"};
  if (a.ab_type != DType::F32 && a.c_type == DType::F32) return {Decline::Dtype, "no f32 C for 16-bit inputs"};
  return {};
}

constexpr uint32_t kAllTypes = kMaskF32 | kMaskTF32 | kMaskF16 | kMaskBF16;
using GemmTable = Ladder<GemmArgs, RecordingCtx>;
using SoftmaxTable = Ladder<SoftmaxArgs, RecordingCtx>;

const GemmTable& gemm_table() {
  static const GemmTable t({
      {"plain", "fuses nothing", kAllTypes, {}, RungKind::Ladder, nullptr, record_gemm, 1},
      fusing(GemmTable::Row{"batched", "fuses batches", kAllTypes, {}, RungKind::Ladder, nullptr, record_gemm, 2},
             kFuseBatch),
      fusing(GemmTable::Row{"epilogue", "fuses the epilogue", kAllTypes, {}, RungKind::Ladder, nullptr, record_gemm, 3},
             kFuseEpilogue),
      fusing(GemmTable::Row{"both", "fuses both", kAllTypes, {}, RungKind::Ladder, nullptr, record_gemm, 4},
             kFuseBatch | kFuseEpilogue),
      {"aligned",
       "aligned C of the input type",
       kAllTypes,
       {},
       RungKind::Ladder,
       aligned_c_same_type,
       record_gemm,
       kNeverAuto},
  });
  return t;
}
enum GemmRow { kPlain, kBatched, kEpilogue, kBoth, kAligned };

const SoftmaxTable& softmax_table() {
  static const SoftmaxTable t({
      {"rows", "fuses nothing", kAllTypes, {}, RungKind::Ladder, nullptr, record_softmax, 0},
      fusing(
          SoftmaxTable::Row{"attention", "scale and mask", kAllTypes, {}, RungKind::Ladder, nullptr, record_softmax, 1},
          kFuseScale | kFuseCausal),
      fusing(
          SoftmaxTable::Row{
              "everything", "batch, scale, mask", kAllTypes, {}, RungKind::Ladder, nullptr, record_softmax, 2},
          kFuseBatch | kFuseScale | kFuseCausal),
  });
  return t;
}

const DeviceArch kHost{Vendor::Host, 0, 0, "x86-64"};

/// Pointers that are never dereferenced: base addresses with plenty of alignment.
const void* at(uintptr_t address) { return reinterpret_cast<const void*>(address); }
uintptr_t address(const void* p) { return reinterpret_cast<uintptr_t>(p); }

/// A batch of 3 f32 items of 4 x 5 (k 6), padded strides, with bias + relu.
GemmArgs batched_call() {
  GemmArgs a;
  a.m = 4;
  a.n = 5;
  a.k = 6;
  a.lda = 6;
  a.ldb = 5;
  a.ldc = 8;
  a.batch = 3;
  a.stride_a = 32;  // elements
  a.stride_b = 40;
  a.stride_c = 64;
  a.stride_bias = 8;
  a.a = at(0x10000);
  a.b = at(0x20000);
  a.c = const_cast<void*>(at(0x30000));
  a.bias = at(0x40000);
  a.bias_type = DType::F32;
  a.act = Activation::Relu;
  a.alpha = 2.0f;
  a.beta = 0.5f;
  return a;
}

std::vector<Event> run_gemm(int rung, const GemmArgs& a, int throw_at = -1) {
  std::vector<Event> events;
  RecordingCtx ctx{&events, throw_at};
  EXPECT_TRUE(gemm_table().supports(rung, a, ctx, kHost).accepted())
      << gemm_table().supports(rung, a, ctx, kHost).text();
  gemm_table().run(rung, a, ctx);
  return events;
}

std::vector<Event::Kind> kinds(const std::vector<Event>& events) {
  std::vector<Event::Kind> out;
  for (const Event& e : events) out.push_back(e.kind);
  return out;
}

TEST(Decompose, GemmBatchRunsItemByItemWithOffsetPointers) {
  const GemmArgs a = batched_call();
  const auto events = run_gemm(kEpilogue, a);  // fuses the epilogue, not batches
  ASSERT_EQ(kinds(events), (std::vector<Event::Kind>{Event::Rung, Event::Rung, Event::Rung}));
  for (int b = 0; b < 3; ++b) {
    const GemmArgs& r = events[static_cast<std::size_t>(b)].gemm;
    EXPECT_EQ(r.batch, 1);
    EXPECT_EQ(address(r.a), 0x10000u + 4u * 32u * b) << "item " << b;
    EXPECT_EQ(address(r.b), 0x20000u + 4u * 40u * b);
    EXPECT_EQ(address(r.c), 0x30000u + 4u * 64u * b);
    EXPECT_EQ(address(r.bias), 0x40000u + 4u * 8u * b) << "the bias moves with its item";
    EXPECT_EQ(r.act, Activation::Relu);
    EXPECT_EQ(r.beta, 0.5f);
    EXPECT_EQ(r.ldc, 8);
  }
}

TEST(Decompose, BroadcastOperandStaysPut) {
  GemmArgs a = batched_call();
  a.stride_a = 0;
  a.stride_bias = 0;
  a.c_type = a.ab_type = DType::F16;
  const auto events = run_gemm(kEpilogue, a);
  ASSERT_EQ(events.size(), 3u);
  for (int b = 0; b < 3; ++b) {
    EXPECT_EQ(address(events[static_cast<std::size_t>(b)].gemm.a), 0x10000u);
    EXPECT_EQ(address(events[static_cast<std::size_t>(b)].gemm.b), 0x20000u + 2u * 40u * b) << "f16: 2 bytes";
    EXPECT_EQ(address(events[static_cast<std::size_t>(b)].gemm.bias), 0x40000u);
  }
}

TEST(Decompose, FusedFeaturesReachTheRungWhole) {
  const GemmArgs a = batched_call();
  const auto events = run_gemm(kBoth, a);
  ASSERT_EQ(events.size(), 1u);
  const GemmArgs& r = events[0].gemm;
  EXPECT_EQ(r.batch, 3);
  EXPECT_EQ(r.a, a.a);
  EXPECT_EQ(r.stride_c, 64);
  EXPECT_EQ(r.bias, a.bias);
  EXPECT_EQ(r.act, Activation::Relu);
}

TEST(Decompose, F32EpilogueIsAPassOverCAfterThePlainGemm) {
  const GemmArgs a = batched_call();
  const auto events = run_gemm(kBatched, a);  // fuses batches, not the epilogue
  ASSERT_EQ(kinds(events), (std::vector<Event::Kind>{Event::Rung, Event::Pass}));
  const GemmArgs& r = events[0].gemm;
  EXPECT_EQ(r.batch, 3);
  EXPECT_EQ(r.bias, nullptr) << "the rung computes the plain GEMM";
  EXPECT_EQ(r.act, Activation::None);
  EXPECT_EQ(r.c, a.c) << "f32 C: alpha*AB + beta*C lands in C";
  EXPECT_EQ(r.beta, 0.5f);
  const EpiloguePassArgs& p = events[1].pass;
  EXPECT_EQ(p.batch, 3);
  EXPECT_EQ(static_cast<const void*>(p.w), a.c) << "the pass reads C as its input";
  EXPECT_EQ(p.ldw, a.ldc);
  EXPECT_EQ(p.stride_w, a.stride_c);
  EXPECT_EQ(p.beta, 0.0f) << "beta*C is already in C: C is not added twice";
  EXPECT_EQ(p.bias, a.bias);
  EXPECT_EQ(p.stride_bias, 8);
  EXPECT_EQ(p.act, Activation::Relu);
}

TEST(Decompose, NeitherFusedRunsEveryItemThenOnePass) {
  const GemmArgs a = batched_call();
  const auto events = run_gemm(kPlain, a);
  ASSERT_EQ(kinds(events), (std::vector<Event::Kind>{Event::Rung, Event::Rung, Event::Rung, Event::Pass}));
  EXPECT_EQ(address(events[2].gemm.c), 0x30000u + 4u * 64u * 2u);
  EXPECT_EQ(events[2].gemm.bias, nullptr);
  EXPECT_EQ(events[3].pass.batch, 3);
  EXPECT_EQ(events[3].pass.c, a.c);
}

TEST(Decompose, SixteenBitCGoesThroughAnF32WorkspaceRoundedOnce) {
  GemmArgs a = batched_call();
  a.ab_type = a.c_type = DType::BF16;
  a.bias_type = DType::BF16;
  const auto events = run_gemm(kBatched, a);
  ASSERT_EQ(kinds(events), (std::vector<Event::Kind>{Event::Workspace, Event::Rung, Event::Pass, Event::Release}));
  const int64_t ldw = 32;  // n = 5 rounded up to 128-byte rows
  EXPECT_EQ(events[0].bytes, static_cast<std::size_t>(3 * a.m * ldw * 4));
  const GemmArgs& r = events[1].gemm;
  EXPECT_EQ(r.c, kWorkspace);
  EXPECT_EQ(r.c_type, DType::F32);
  EXPECT_EQ(r.ldc, ldw);
  EXPECT_EQ(r.stride_c, a.m * ldw);
  EXPECT_EQ(r.beta, 0.0f) << "C's term is the pass's: the rung must not round through C";
  EXPECT_EQ(r.alpha, 2.0f);
  EXPECT_EQ(r.ab_type, DType::BF16);
  const EpiloguePassArgs& p = events[2].pass;
  EXPECT_EQ(static_cast<const void*>(p.w), kWorkspace);
  EXPECT_EQ(p.ldw, ldw);
  EXPECT_EQ(p.c, a.c);
  EXPECT_EQ(p.c_type, DType::BF16);
  EXPECT_EQ(p.beta, 0.5f);
  EXPECT_EQ(p.bias_type, DType::BF16);
  EXPECT_EQ(events[3].ptr, kWorkspace);
}

TEST(Decompose, BetaZeroNeverReadsC) {
  for (DType c_type : {DType::F32, DType::F16}) {
    GemmArgs a = batched_call();
    a.ab_type = c_type;
    a.c_type = c_type;
    a.beta = 0.0f;
    for (int rung : {kPlain, kBatched}) {
      const auto events = run_gemm(rung, a);
      for (const Event& e : events) {
        if (e.kind == Event::Rung) {
          EXPECT_EQ(e.gemm.beta, 0.0f);
        }
        if (e.kind == Event::Pass) {
          EXPECT_EQ(e.pass.beta, 0.0f) << "a pass with beta 0 reads only W";
        }
      }
    }
  }
}

TEST(Decompose, LargeItemsFillTheWorkspaceInChunks) {
  GemmArgs a = batched_call();
  a.ab_type = a.c_type = DType::F16;
  a.m = 1024;
  a.n = 1000;  // W rows of 1024 floats: 4 MiB an item, 16 items per 64 MiB chunk
  a.ldc = 1000;
  a.stride_c = 1024 * 1000;
  a.batch = 17;
  const auto events = run_gemm(kPlain, a);
  std::vector<Event::Kind> expected{Event::Workspace};
  for (int i = 0; i < 16; ++i) expected.push_back(Event::Rung);
  expected.push_back(Event::Pass);
  expected.push_back(Event::Rung);
  expected.push_back(Event::Pass);
  expected.push_back(Event::Release);
  ASSERT_EQ(kinds(events), expected);
  EXPECT_EQ(events[0].bytes, std::size_t{16} * 1024 * 1024 * 4) << "one chunk of W, reused";
  const std::size_t item_bytes = 1024 * 1024 * 4;
  EXPECT_EQ(address(events[2].gemm.c), address(kWorkspace) + item_bytes) << "item 1 of the chunk";
  EXPECT_EQ(events[17].pass.batch, 16);
  EXPECT_EQ(events[18].gemm.c, kWorkspace) << "item 16 starts the second fill";
  EXPECT_EQ(address(events[18].gemm.a), 0x10000u + 2u * 32u * 16u);
  EXPECT_EQ(events[19].pass.batch, 1);
  EXPECT_EQ(address(events[19].pass.c), 0x30000u + 2u * 1024u * 1000u * 16u);
  EXPECT_EQ(address(events[19].pass.bias), 0x40000u + 4u * 8u * 16u);
}

TEST(Decompose, WorkspaceIsReleasedWhenTheRungThrows) {
  GemmArgs a = batched_call();
  a.ab_type = a.c_type = DType::F16;
  std::vector<Event> events;
  RecordingCtx ctx{&events, 1};  // the second rung call fails
  EXPECT_THROW(gemm_table().run(kPlain, a, ctx), Error);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().kind, Event::Release);
}

TEST(Decompose, SupportsChecksTheCallsTheRungWillGet) {
  std::vector<Event> events;
  RecordingCtx ctx{&events};
  const GemmTable& t = gemm_table();
  GemmArgs a = batched_call();
  a.stride_c = 66;  // item 1's C at 264 bytes: off 16 bytes although item 0's C is aligned
  const Verdict v = t.supports(kAligned, a, ctx, kHost);
  EXPECT_EQ(v.reason, Decline::Misaligned) << v.text();
  EXPECT_NE(v.detail.find("batch item"), std::string::npos) << v.detail;
  a.stride_c = 64;
  EXPECT_TRUE(t.supports(kAligned, a, ctx, kHost).accepted());
  // 16-bit C with an epilogue: the rung is asked about the f32 workspace it would write.
  a.ab_type = a.c_type = a.bias_type = DType::F16;
  const Verdict w = t.supports(kAligned, a, ctx, kHost);
  EXPECT_EQ(w.reason, Decline::Dtype) << w.text();
  a.bias = nullptr;
  a.act = Activation::None;
  EXPECT_TRUE(t.supports(kAligned, a, ctx, kHost).accepted()) << "no epilogue: no workspace";
  EXPECT_TRUE(events.empty()) << "supports() runs nothing and allocates nothing";
}

TEST(Decompose, DecompositionIsLoggedOncePerCallAtDebugLevel) {
  GemmArgs a = batched_call();
  ASSERT_EQ(gk_set_option("GPUKERN_LOG", "debug"), GK_SUCCESS);
  testing::internal::CaptureStderr();
  run_gemm(kPlain, a);
  run_gemm(kBoth, a);
  const std::string text = testing::internal::GetCapturedStderr();
  gk_set_option("GPUKERN_LOG", nullptr);
  std::size_t lines = 0;
  for (std::size_t at = text.find("does not fuse"); at != std::string::npos; at = text.find("does not fuse", at + 1))
    ++lines;
  EXPECT_EQ(lines, 1u) << text;
  EXPECT_NE(text.find("gemm rung plain"), std::string::npos) << text;
  EXPECT_NE(text.find("batch of 3 run item by item"), std::string::npos) << text;
  EXPECT_NE(text.find("separate pass"), std::string::npos) << text;
}

SoftmaxArgs softmax_call() {
  SoftmaxArgs s;
  s.rows = 5;
  s.cols = 7;
  s.ldx = 8;
  s.ldy = 8;
  s.batch = 3;
  s.stride_x = 48;
  s.stride_y = 40;
  s.x = at(0x50000);
  s.y = const_cast<void*>(at(0x60000));
  return s;
}

TEST(Decompose, SoftmaxScaleAndMaskAreFeaturesARungMustFuse) {
  std::vector<Event> events;
  RecordingCtx ctx{&events};
  const SoftmaxTable& t = softmax_table();
  SoftmaxArgs s = softmax_call();
  s.scale = 0.125f;
  Verdict v = t.supports(0, s, ctx, kHost);
  EXPECT_EQ(v.reason, Decline::Feature);
  EXPECT_NE(v.detail.find("scale 0.125"), std::string::npos) << v.detail;
  s.scale = 1.0f;
  s.causal = true;
  s.causal_offset = -2;
  v = t.supports(0, s, ctx, kHost);
  EXPECT_EQ(v.reason, Decline::Feature);
  EXPECT_NE(v.detail.find("causal"), std::string::npos) << v.detail;
  EXPECT_TRUE(t.supports(1, s, ctx, kHost).accepted());
  s.dtype = DType::F16;
  s.scale = 3.0f;
  EXPECT_TRUE(t.supports(2, s, ctx, kHost).accepted());
}

TEST(Decompose, SoftmaxBatchRunsItemByItem) {
  std::vector<Event> events;
  RecordingCtx ctx{&events};
  SoftmaxArgs s = softmax_call();
  s.causal = true;
  s.causal_offset = 5;
  softmax_table().run(1, s, ctx);  // fuses the mask, not batches
  ASSERT_EQ(events.size(), 3u);
  for (int b = 0; b < 3; ++b) {
    const SoftmaxArgs& r = events[static_cast<std::size_t>(b)].softmax;
    EXPECT_EQ(r.batch, 1);
    EXPECT_EQ(address(r.x), 0x50000u + 4u * 48u * b);
    EXPECT_EQ(address(r.y), 0x60000u + 4u * 40u * b);
    EXPECT_TRUE(r.causal);
    EXPECT_EQ(r.causal_offset, 5) << "rows count within their item";
  }
  events.clear();
  s.stride_x = 0;  // one x for every item
  softmax_table().run(0, SoftmaxArgs(softmax_call()), ctx);
  softmax_table().run(2, s, ctx);
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[3].softmax.batch, 3) << "a rung that fuses batches gets the call whole";
}

/// A backend over the two fake tables, so auto's walk can be seen through Dispatch.
class RecordingBackend final : public test::NullBackend {
 public:
  std::vector<Event> events;
  std::vector<RungInfo> variants(OpKind op) const override {
    return op == OpKind::Gemm ? gemm_table().infos(kHost) : softmax_table().infos(kHost);
  }
  Verdict supports(const GemmArgs& a, int rung) const override { return gemm_table().supports(rung, a, ctx(), kHost); }
  Verdict supports(const SoftmaxArgs& a, int rung) const override {
    return softmax_table().supports(rung, a, ctx(), kHost);
  }
  bool auto_candidate(const GemmArgs& a, int rung) const override {
    return gemm_table().auto_candidate(rung, a, ctx());
  }
  bool auto_candidate(const SoftmaxArgs& a, int rung) const override {
    return softmax_table().auto_candidate(rung, a, ctx());
  }
  void gemm(const GemmArgs& a, int rung) override { gemm_table().run(rung, a, ctx()); }
  void softmax(const SoftmaxArgs& a, int rung) override { softmax_table().run(rung, a, ctx()); }

 private:
  RecordingCtx ctx() const { return RecordingCtx{const_cast<std::vector<Event>*>(&events)}; }
};

TEST(Decompose, AutoPassesOverSoftmaxRungsWithoutTheFeature) {
  RecordingBackend backend;
  Dispatch d(backend, "fake:0");
  const auto& rungs = d.rungs(OpKind::Softmax);
  SoftmaxArgs s = softmax_call();
  EXPECT_EQ(rungs[static_cast<std::size_t>(d.select(s, nullptr, "auto"))].name, "rows");
  s.scale = 0.125f;
  EXPECT_EQ(rungs[static_cast<std::size_t>(d.select(s, nullptr, "auto"))].name, "attention");
  try {
    d.select(s, "rows", "auto");
    ADD_FAILURE() << "a forced rung without the scale was selected";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::Unsupported);
    EXPECT_EQ(e.decline(), Decline::Feature) << e.what();
    EXPECT_NE(std::string(e.what()).find("batch=3 scale=0.125"), std::string::npos) << e.what();
  }
  // GEMM: the first rung in auto's order takes every call, decomposed.
  EXPECT_EQ(d.rungs(OpKind::Gemm)[static_cast<std::size_t>(d.select(batched_call(), nullptr, "auto"))].name, "plain");
}

TEST(Decompose, ShapeTextNamesTheExtendedFields) {
  EXPECT_EQ(shape_text(batched_call()), "NN m=4 n=5 k=6 f32 batch=3 bias=f32 act=relu");
  SoftmaxArgs s = softmax_call();
  s.causal = true;
  s.causal_offset = -2;
  s.scale = 0.125f;
  EXPECT_EQ(shape_text(s), "rows=5 cols=7 f32 batch=3 scale=0.125 causal(-2)");
}

}  // namespace
}  // namespace gpukern::core
