// wgmma_tma's fused features (issue 22): strided batches in one launch and the bias +
// activation epilogue.
//  * on the host (runs anywhere): batched operands TMA cannot address are declined with
//    Misaligned and the stride named; the configuration choice counts the tiles of every
//    item (attention shapes: no K split, 128x256 clusters for Q K^T, 128x128 for P V);
//  * on the device: batch 1, 3, 17 with padded, broadcast (stride 0) and interleaved
//    (items side by side in a row) strides for A, B and C; every activation; bias in f32
//    and in C's type, shared and per item; alpha/beta with beta = 0 on a NaN-poisoned C;
//    both store paths (TMA stores: beta 0 with 16-byte rows; registers: odd n, beta != 0);
//    the C^T kernel in tf32 and in exact f32 (3xTF32); K = 0; every configuration forced,
//    split and unsplit, with the epilogue, and over several rounds of its CTAs (tiles
//    claimed at run time under GPUKERN_WGMMA_SCHEDULE=claimed); a long batch of one-K-block
//    tiles (claimed by the rule); attention-shaped Q K^T and P V at a reduced batch. Each
//    result against a double reference of every item, every cell of C's buffer outside the
//    items checked bit for bit.
#include "support/gemm_desc.hpp"
#include "gemm_harness.cuh"

#include "cuda/gemm/tensor_core.cuh"
#include "cuda/gemm/tensor_core/12_wgmma_tma.cuh"

#include "core/activation.hpp"
#include "support/backends.hpp"
#include "support/reference.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace gpukern::test::cuda_gemm {
namespace {

/// How a batched operand's items lie in its buffer.
enum class Items {
  Padded,       // one after another, a 16-byte gap between items, rows padded
  Broadcast,    // stride 0: every item reads item 0
  Interleaved,  // side by side in each row (stride = a row of one item, ld = all of them)
};

struct FusedCase {
  int64_t m = 1, n = 1, k = 1;
  bool trans_a = false, trans_b = false;
  DType ab = DType::BF16, c = DType::BF16;
  bool tf32 = false;
  float alpha = 1.0f, beta = 0.0f;
  int64_t batch = 1;
  Items a_items = Items::Padded, b_items = Items::Padded, c_items = Items::Padded;
  int bias = 0;  // 0: none, 1: f32, 2: C's type
  bool bias_per_item = false;
  core::Activation act = core::Activation::None;
  int64_t c_pad = 0;             // extra elements per row of C (a non-zero odd value: C rows not 16-byte addressable)
  const char* config = nullptr;  // a forced configuration (parse_wgmma_config), or the rung's choice
  bool api = false;              // through gk_gemm_ex with the rung forced (validation, dispatch), not directly

  std::string describe() const {
    static const char* items[] = {"padded", "broadcast", "interleaved"};
    std::ostringstream s;
    s << (tf32               ? "tf32"
          : ab == DType::F32 ? "f32"
          : ab == DType::F16 ? "f16"
                             : "bf16")
      << (c == DType::F32 && ab != DType::F32 ? ">f32" : "") << ' ' << (trans_a ? 'T' : 'N') << (trans_b ? 'T' : 'N')
      << ' ' << batch << " x " << m << 'x' << n << 'x' << k << " alpha=" << alpha << " beta=" << beta << " A/B/C "
      << items[int(a_items)] << '/' << items[int(b_items)] << '/' << items[int(c_items)] << " bias="
      << (bias == 0   ? "none"
          : bias == 1 ? "f32"
                      : "C type")
      << (bias_per_item ? " per item" : "") << " act=" << static_cast<int>(act) << " c_pad=" << c_pad
      << " config=" << (config ? config : "chosen") << (api ? " (gk_gemm_ex)" : "");
    return s.str();
  }
};

gk_dtype public_type(DType t) { return static_cast<gk_dtype>(static_cast<int>(t)); }

/// An operand's place in its buffer: item i's rows x cols matrix at offset + i*stride,
/// rows ld apart.
struct Layout {
  int64_t rows = 0, cols = 0, ld = 0, stride = 0, offset = 0, items = 1;
  std::size_t total = 0;
  std::size_t index(int64_t item, int64_t r, int64_t c) const {
    return static_cast<std::size_t>(offset + item * stride + r * ld + c);
  }
};

/// The layout of `items` matrices of rows x cols of `elem_bytes` elements: every pitch,
/// stride and the base a multiple of 16 bytes (+ `pad` elements per row); 16 guard bytes
/// before and after.
Layout make_layout(int64_t rows, int64_t cols, int64_t items, Items how, std::size_t elem_bytes, int64_t pad = 0) {
  const int64_t align = 16 / static_cast<int64_t>(elem_bytes);
  const int64_t cols_r = (cols + align - 1) / align * align;
  Layout l;
  l.rows = rows;
  l.cols = cols;
  l.items = how == Items::Broadcast ? 1 : items;
  l.offset = 2 * align;
  if (how == Items::Interleaved) {
    l.ld = items * cols_r + align + pad;
    l.stride = cols_r;
  } else {
    l.ld = cols_r + align + pad;
    l.stride = how == Items::Broadcast ? 0 : rows * l.ld + align;
  }
  const int64_t extent = (l.items - 1) * l.stride + std::max<int64_t>(rows - 1, 0) * l.ld + cols;
  l.total = static_cast<std::size_t>(l.offset + extent + 2 * align);
  return l;
}

/// A device copy of a host array (freed by the destructor).
struct DeviceCopy {
  void* ptr = nullptr;
  std::size_t bytes = 0;
  explicit DeviceCopy(const HostArray& h) : bytes(h.bytes()) {
    EXPECT_EQ(cudaMalloc(&ptr, bytes), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(ptr, h.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
  }
  ~DeviceCopy() { cudaFree(ptr); }
  DeviceCopy(const DeviceCopy&) = delete;
  DeviceCopy& operator=(const DeviceCopy&) = delete;
};

/// Runs `g` with wgmma_tma's supports() and run on `ctx`, with the configuration `config`
/// forced (null: the rung's choice); failures reported under `label`.
bool run_directly(const core::GemmArgs& g, const CudaContext& ctx, const char* config, const std::string& label) {
  const core::Verdict verdict = gemm::wgmma_tma_supports(g, ctx);
  if (!verdict.accepted()) {
    ADD_FAILURE() << "wgmma_tma declined " << label << ": " << verdict.text();
    return false;
  }
  try {
    gemm::WgmmaChoice choice = gemm::choose_wgmma_config(g, ctx);
    if (config && !gemm::parse_wgmma_config(config, &choice)) {
      ADD_FAILURE() << "bad configuration name " << config;
      return false;
    }
    gemm::wgmma_tma_run_with(g, ctx, choice);
  } catch (const std::exception& e) {
    ADD_FAILURE() << label << ": threw " << e.what();
    return false;
  }
  return true;
}

/// Runs `g` through gk_gemm_ex with wgmma_tma forced, on `stream`.
bool run_through_api(const core::GemmArgs& g, cudaStream_t stream, const std::string& label) {
  const gk_gemm_ex_desc d = test::gemm_ex_desc(g, "wgmma_tma");
  Device& dev = shared_device("cuda");
  gk_status status = gk_set_stream(dev.handle(), stream);
  if (status == GK_SUCCESS) status = gk_gemm_ex(dev.handle(), &d);
  const std::string message = status == GK_SUCCESS ? "" : gk_last_error();
  gk_set_stream(dev.handle(), nullptr);
  if (status != GK_SUCCESS) {
    ADD_FAILURE() << "gk_gemm_ex (wgmma_tma) " << label << ": " << gk_status_name(status) << ": " << message;
    return false;
  }
  return true;
}

/// Runs `fc` with wgmma_tma on `ctx` and checks every item against the double reference
/// and every other cell of C's buffer against its initial bits. Returns whether it passed.
bool run_fused_case(const FusedCase& fc, const CudaContext& ctx, uint64_t seed) {
  Random rng(seed);
  const gk_dtype ab = public_type(fc.ab), ct = public_type(fc.c);
  const int64_t a_rows = fc.trans_a ? fc.k : fc.m, a_cols = fc.trans_a ? fc.m : fc.k;
  const int64_t b_rows = fc.trans_b ? fc.n : fc.k, b_cols = fc.trans_b ? fc.k : fc.n;
  const Layout la = make_layout(a_rows, a_cols, fc.batch, fc.a_items, element_size(ab));
  const Layout lb = make_layout(b_rows, b_cols, fc.batch, fc.b_items, element_size(ab));
  const Layout lc = make_layout(fc.m, fc.n, fc.batch, fc.c_items, element_size(ct), fc.c_pad);
  // A and B: NaN padding around random items (a read outside an item poisons C).
  HostArray a(ab, la.total), b(ab, lb.total), c0(ct, lc.total);
  a.fill(Pattern::Padding);
  b.fill(Pattern::Padding);
  for (const auto* op : {&la, &lb}) {
    HostArray& h = op == &la ? a : b;
    for (int64_t i = 0; i < op->items; ++i)
      for (int64_t r = 0; r < op->rows; ++r)
        for (int64_t col = 0; col < op->cols; ++col) h.set(op->index(i, r, col), rng.uniform(-1, 1));
  }
  // C: a finite guard everywhere, the items random (beta != 0) or poisoned (beta == 0).
  c0.fill(Pattern::Guard);
  const uint32_t poison = pattern_bits(ct, Pattern::Poison);
  for (int64_t i = 0; i < fc.batch; ++i)
    for (int64_t r = 0; r < fc.m; ++r)
      for (int64_t col = 0; col < fc.n; ++col) {
        if (fc.beta != 0.0f)
          c0.set(lc.index(i, r, col), rng.uniform(-1, 1));
        else
          c0.set_bits(lc.index(i, r, col), poison);
      }
  // Bias: n values per item (or one vector), NaN past them.
  const gk_dtype bt = fc.bias == 2 ? ct : GK_F32;
  const int64_t bias_stride = fc.bias_per_item ? fc.n + 8 : 0;
  HostArray bias(bt, static_cast<std::size_t>((fc.bias_per_item ? fc.batch : 1) * (fc.n + 8)));
  bias.fill(Pattern::Padding);
  for (int64_t i = 0; i < (fc.bias_per_item ? fc.batch : 1); ++i)
    for (int64_t col = 0; col < fc.n; ++col)
      bias.set(static_cast<std::size_t>(i * bias_stride + col), rng.uniform(-1, 1));

  DeviceCopy da(a), db(b), dc(c0), dbias(bias);
  core::GemmArgs g;
  g.trans_a = fc.trans_a;
  g.trans_b = fc.trans_b;
  g.m = fc.m;
  g.n = fc.n;
  g.k = fc.k;
  g.alpha = fc.alpha;
  g.beta = fc.beta;
  const std::size_t es = element_size(ab), cs = element_size(ct);
  g.a = static_cast<char*>(da.ptr) + la.offset * es;
  g.lda = la.ld;
  g.b = static_cast<char*>(db.ptr) + lb.offset * es;
  g.ldb = lb.ld;
  g.c = static_cast<char*>(dc.ptr) + lc.offset * cs;
  g.ldc = lc.ld;
  g.ab_type = fc.ab;
  g.c_type = fc.c;
  g.allow_tf32 = fc.tf32;
  g.batch = fc.batch;
  g.stride_a = la.stride;
  g.stride_b = lb.stride;
  g.stride_c = lc.stride;
  if (fc.bias) {
    g.bias = dbias.ptr;
    g.bias_type = fc.bias == 2 ? fc.c : DType::F32;
    g.stride_bias = bias_stride;
  }
  g.act = fc.act;

  const std::string label = fc.describe() + " (seed " + std::to_string(seed) + ")";
  if (fc.api) {
    if (!run_through_api(g, ctx.stream, label)) return false;
  } else if (!run_directly(g, ctx, fc.config, label)) {
    return false;
  }
  const cudaError_t e = cudaStreamSynchronize(ctx.stream);
  if (e != cudaSuccess) {
    ADD_FAILURE() << label << ": " << cudaGetErrorString(e);
    return false;
  }
  HostArray c(ct, lc.total);
  EXPECT_EQ(cudaMemcpy(c.data(), dc.ptr, c.bytes(), cudaMemcpyDeviceToHost), cudaSuccess);

  // The reference of every item: act(alpha A B + beta C0 + bias) in double.
  std::vector<double> out, ref;
  std::vector<bool> inside(lc.total, false);
  for (int64_t i = 0; i < fc.batch; ++i) {
    const int64_t ia = la.items == 1 ? 0 : i, ib = lb.items == 1 ? 0 : i;
    const MatrixView va{&a, Window{la.rows, la.cols, la.ld, static_cast<int64_t>(la.index(ia, 0, 0)), la.total}};
    const MatrixView vb{&b, Window{lb.rows, lb.cols, lb.ld, static_cast<int64_t>(lb.index(ib, 0, 0)), lb.total}};
    const MatrixView vc{&c0, Window{fc.m, fc.n, lc.ld, static_cast<int64_t>(lc.index(i, 0, 0)), lc.total}};
    const std::vector<double> item = reference_gemm(fc.trans_a, fc.trans_b, fc.m, fc.n, fc.k, fc.alpha, va, vb, fc.beta,
                                                    fc.beta != 0.0f ? &vc : nullptr);
    for (int64_t r = 0; r < fc.m; ++r)
      for (int64_t col = 0; col < fc.n; ++col) {
        double v = item[static_cast<std::size_t>(r * fc.n + col)];
        if (fc.bias) v += bias.get(static_cast<std::size_t>((fc.bias_per_item ? i : 0) * bias_stride + col));
        ref.push_back(core::activate_ref(v, static_cast<int>(fc.act)));
        out.push_back(c.get(lc.index(i, r, col)));
        inside[lc.index(i, r, col)] = true;
      }
  }
  int64_t changed = 0;
  for (std::size_t j = 0; j < lc.total; ++j) changed += !inside[j] && c.bits(j) != c0.bits(j);
  const Comparison cmp = compare(out, ref, fc.n);
  const double bound = test::error_bound(fc.tf32               ? "tf32"
                                         : fc.ab == DType::F32 ? "f32"
                                         : fc.ab == DType::F16 ? "f16"
                                                               : "bf16",
                                         ct);
  if (!cmp.passes(bound) || changed != 0) {
    ADD_FAILURE() << "wgmma_tma " << label << ": error " << cmp.relative_error << " (bound " << bound << "), "
                  << cmp.special_mismatches << " NaN/inf mismatches " << cmp.first_problem << ", " << changed
                  << " cells outside the items changed";
    return false;
  }
  return true;
}

// ---- on the host

cuda::CudaContext h100_like() {
  cuda::CudaContext ctx;
  ctx.sm_count = 132;
  return ctx;
}

core::GemmArgs batched_call(int64_t m, int64_t n, int64_t k, bool trans_b, int64_t batch) {
  core::GemmArgs g;
  g.m = m;
  g.n = n;
  g.k = k;
  g.trans_b = trans_b;
  g.ab_type = g.c_type = DType::BF16;
  g.a = g.b = g.c = reinterpret_cast<void*>(uintptr_t(1) << 20);  // 16-byte aligned, never dereferenced
  g.lda = g.ldb = g.ldc = 4096;
  g.batch = batch;
  g.stride_a = g.stride_b = g.stride_c = int64_t(1) << 24;
  return g;
}

TEST(WgmmaFusedHost, BatchedOperandsTmaCannotAddressAreDeclined) {
  const cuda::CudaContext ctx = h100_like();
  core::GemmArgs g = batched_call(64, 64, 64, false, 3);
  g.stride_a = 64 * 64 + 3;  // items 6 bytes off the 16-byte grid
  core::Verdict v = gemm::wgmma_tma_supports(g, ctx);
  EXPECT_EQ(v.reason, core::Decline::Misaligned) << v.text();
  EXPECT_NE(v.detail.find("stride_a"), std::string::npos) << v.text();
  g = batched_call(64, 64, 64, false, 3);
  g.stride_b = 4;
  v = gemm::wgmma_tma_supports(g, ctx);
  EXPECT_EQ(v.reason, core::Decline::Misaligned) << v.text();
  EXPECT_NE(v.detail.find("stride_b"), std::string::npos) << v.text();
  g = batched_call(64, 64, 64, false, 3);
  g.lda = 67;  // packed odd rows: repacked when unbatched, declined in a batch
  v = gemm::wgmma_tma_supports(g, ctx);
  EXPECT_EQ(v.reason, core::Decline::Misaligned) << v.text();
  // Broadcast (stride 0) and C's stride (stored from registers when not addressable) are fine:
  // the verdict moves on to the device checks (no sm_90a device in this context).
  g = batched_call(64, 64, 64, false, 3);
  g.stride_a = 0;
  g.stride_c = 64 * 64 + 1;
  v = gemm::wgmma_tma_supports(g, ctx);
  EXPECT_NE(v.reason, core::Decline::Misaligned) << v.text();
}

TEST(WgmmaFusedHost, BatchedScheduleVisitsEveryTileOfEveryItemOnce) {
  // 3 items of 5 x 3 cluster tiles (2 CTAs of 128 rows each along M), L2 groups of 2
  // cluster rows, snake order: every (item, m0, n0) once, items in order.
  const int items = 3, tiles_m = 5, tiles_n = 3;
  const gemm::WgmmaSchedule s = gemm::make_schedule(tiles_m, tiles_n, 4, items, 2);
  ASSERT_EQ(s.total, items * tiles_m * tiles_n);
  std::vector<int> seen(static_cast<size_t>(items * 2 * tiles_m * tiles_n), 0);
  int last_item = 0;
  for (int t = 0; t < s.total; ++t)
    for (int rank = 0; rank < 2; ++rank) {
      const gemm::TileOrigin o = gemm::tile_origin_of<128, 256, 2>(s, t, true, rank);
      ASSERT_GE(o.item, last_item) << "tile " << t;
      last_item = o.item;
      ASSERT_LT(o.item, items);
      ASSERT_EQ(o.m0 % 128, 0);
      ASSERT_EQ(o.n0 % 256, 0);
      const int row = o.m0 / 128, col = o.n0 / 256;
      ASSERT_LT(row, 2 * tiles_m);
      ASSERT_LT(col, tiles_n);
      ++seen[static_cast<size_t>((o.item * 2 * tiles_m + row) * tiles_n + col)];
    }
  for (size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], 1) << "block tile " << i;
}

TEST(WgmmaFusedHost, ChoiceCountsTheTilesOfEveryItem) {
  const cuda::CudaContext ctx = h100_like();
  for (int64_t s : {512, 1024, 4096})
    for (int64_t d : {64, 128}) {
      // Q K^T: S x S x d, NT. Many items fill the SMs: no K split, the 128x256 clusters;
      // at d = 128 (two K blocks) in the store-bound configuration.
      const gemm::WgmmaChoice qk = gemm::choose_wgmma_config(batched_call(s, s, d, true, 1024), ctx);
      EXPECT_EQ(qk.ways, 1) << "S " << s << " d " << d << ": " << qk.name();
      EXPECT_EQ(qk.tile, d == 128 ? gemm::WgmmaTile::Store : gemm::WgmmaTile::Large)
          << "S " << s << " d " << d << ": " << qk.name();
      // P V: S x d x S, NN. At most 64 columns: the 128x64 tile in clusters of 2; at most 128: the 128x128
      // tile (a 256-wide one would be half or three quarters padding) in clusters of 2 that
      // share B; no split.
      const gemm::WgmmaChoice pv = gemm::choose_wgmma_config(batched_call(s, d, s, false, 1024), ctx);
      EXPECT_EQ(pv.ways, 1) << "S " << s << " d " << d << ": " << pv.name();
      EXPECT_EQ(pv.tile, d == 64 ? gemm::WgmmaTile::NarrowC2 : gemm::WgmmaTile::MidC2)
          << "S " << s << " d " << d << ": " << pv.name();
    }
  // P V at d = 64 with an odd number of 128-row tiles an item: no cluster (its second CTA
  // would take the next item's first tile row).
  EXPECT_EQ(gemm::choose_wgmma_config(batched_call(640, 64, 640, false, 1024), ctx).tile, gemm::WgmmaTile::Narrow);
  // The same item alone would split K (its 8 tiles of 128x128 leave most SMs idle); 32
  // items fill them.
  EXPECT_GT(gemm::choose_wgmma_config(batched_call(512, 128, 8192, false, 1), ctx).ways, 1);
  EXPECT_EQ(gemm::choose_wgmma_config(batched_call(512, 128, 8192, false, 32), ctx).ways, 1);
}

TEST(WgmmaFusedHost, LongBatchesOfOneKBlockTilesClaimTheirTiles) {
  // Which launches claim their tiles at run time (12_wgmma_tma.cu's rule; the ctest run
  // with GPUKERN_WGMMA_SCHEDULE=claimed leaves this test out): more than one round of
  // one-K-block tiles over several batch items, unsplit.
  auto claims = [](int tiles_m, int tiles_n, int k_blocks, int items, int ctas) {
    return gemm::wgmma_claims_tiles(gemm::make_schedule(tiles_m, tiles_n, k_blocks, items), ctas);
  };
  // Q K^T at d = 64 over 1024 heads in 128x256 clusters (66 on the H100): S 1024 has 4 x 4
  // cluster tiles an item (248 rounds), S 2048 8 x 8, S 4096 16 x 16.
  EXPECT_TRUE(claims(4, 4, 1, 1024, 66));
  EXPECT_TRUE(claims(8, 8, 1, 1024, 66));
  EXPECT_TRUE(claims(16, 16, 1, 1024, 66));
  EXPECT_TRUE(claims(2, 2, 1, 1024, 66));   // S 512: 62 rounds
  EXPECT_TRUE(claims(1, 1, 1, 133, 132));   // just over one round
  EXPECT_FALSE(claims(1, 1, 1, 132, 132));  // one round: nothing to claim
  EXPECT_FALSE(claims(8, 8, 2, 1024, 66));  // two K blocks (d = 128)
  // At 4000 GB/s or more (H200) two K blocks claim too, three do not.
  EXPECT_TRUE(gemm::wgmma_claims_tiles(gemm::make_schedule(8, 8, 2, 1024), 66, 4814));
  EXPECT_FALSE(gemm::wgmma_claims_tiles(gemm::make_schedule(8, 8, 3, 1024), 66, 4814));
  EXPECT_FALSE(gemm::wgmma_claims_tiles(gemm::make_schedule(8, 8, 2, 1024), 66, 3352));
  EXPECT_FALSE(claims(128, 128, 1, 1, 66));     // one item, however many rounds
  EXPECT_FALSE(claims(1, 1, 1, 1 << 24, 132));  // more claims than a ticket word counts
  gemm::WgmmaSchedule split = gemm::make_schedule(8, 8, 1, 1024);
  split.split_first = split.total - 8;  // a split schedule keeps its static units
  EXPECT_FALSE(gemm::wgmma_claims_tiles(split, 66));
}

TEST(WgmmaFusedHost, OperandsReadOnceLoadEvictFirst) {
  // mark_read_once on the 128x256c2 schedule (cluster tiles of 256 rows x 256 columns) and
  // on a one-tile-wide one.
  auto marks = [](const core::GemmArgs& g, int tile_rows, int tile_cols) {
    const gemm::WgmmaSchedule s = gemm::make_schedule(static_cast<int>((g.m + tile_rows - 1) / tile_rows),
                                                      static_cast<int>((g.n + tile_cols - 1) / tile_cols),
                                                      static_cast<int>((g.k + 63) / 64), static_cast<int>(g.batch));
    gemm::WgmmaExtras x;
    gemm::mark_read_once(x, s, g);
    return std::make_pair(x.a_once, x.b_once);
  };
  // A weight behind one or two cluster tile rows of a single call: B evict-first.
  EXPECT_EQ(marks(batched_call(128, 4096, 4096, true, 1), 256, 256), std::make_pair(0, 1));
  EXPECT_EQ(marks(batched_call(512, 11008, 4096, true, 1), 256, 256), std::make_pair(0, 1));
  EXPECT_EQ(marks(batched_call(1024, 4096, 4096, true, 1), 256, 256), std::make_pair(0, 0)) << "four rows";
  EXPECT_EQ(marks(batched_call(128, 128256, 4096, true, 1), 256, 256), std::make_pair(0, 0)) << "vocabulary";
  // Batches: one row only, and never a broadcast operand.
  EXPECT_EQ(marks(batched_call(512, 512, 64, true, 1024), 256, 256), std::make_pair(0, 0)) << "two rows, batched";
  EXPECT_EQ(marks(batched_call(256, 512, 64, true, 1024), 256, 256), std::make_pair(0, 1));
  core::GemmArgs broadcast = batched_call(256, 512, 64, true, 1024);
  broadcast.stride_b = 0;
  EXPECT_EQ(marks(broadcast, 256, 256), std::make_pair(0, 0)) << "B broadcast over the items";
  // P V: A evict-first from K = 32 blocks (S 2048) on a one-tile-wide call.
  EXPECT_EQ(marks(batched_call(2048, 64, 2048, false, 1024), 256, 64), std::make_pair(1, 0));
  EXPECT_EQ(marks(batched_call(1024, 64, 1024, false, 1024), 256, 64), std::make_pair(0, 0)) << "K of 16 blocks";
}

// ---- on the device

class WgmmaFused : public OnStream {
 protected:
  /// The context, or null after GTEST_SKIP (no device, or wgmma_tma cannot run here).
  const CudaContext* context() {
    std::string why_not;
    const CudaContext* ctx = device_context(stream_, &why_not);
    if (ctx && !rung_runs_here("wgmma_tma", &why_not)) ctx = nullptr;
    if (!ctx) std::printf("[ skipped ] %s\n", why_not.c_str());
    skip_reason_ = why_not;
    return ctx;
  }
  void run_all(const std::vector<FusedCase>& cases, const CudaContext& ctx, uint64_t seed) {
    int passed = 0;
    for (const FusedCase& fc : cases) passed += run_fused_case(fc, ctx, base_seed() + seed++);
    std::printf("[ wgmma fused ] %d of %zu cases passed\n", passed, cases.size());
  }
  std::string skip_reason_;
};

/// Case `v` of a loop over forced configurations: `config`, the transposes v walks
/// through, and for "tf32nn..." f32 data with tf32 and A, B as its kernel takes them
/// (likewise B K-major for "128x168c2..." and "64x32...").
void force_config(FusedCase& fc, const char* config, int v) {
  fc.config = config;
  fc.trans_a = v % 2;
  fc.trans_b = (v / 2) % 2;
  if (std::string(config).rfind("tf32nn", 0) == 0) {
    fc.ab = fc.c = DType::F32;
    fc.tf32 = true;
    fc.trans_a = fc.trans_b = false;
  }
  if (std::string(config).rfind("f32nn", 0) == 0) {  // exact f32: A not transposed, B either way
    fc.ab = fc.c = DType::F32;
    fc.tf32 = false;
    fc.trans_a = false;
  }
  const std::string name(config);
  if (name.rfind("128x168c2", 0) == 0 || name.rfind("64x32", 0) == 0) fc.trans_b = true;  // K-major B only
}

constexpr core::Activation kActs[] = {core::Activation::None, core::Activation::Relu, core::Activation::GeluTanh,
                                      core::Activation::GeluErf, core::Activation::Silu};

TEST_F(WgmmaFused, BatchesStridesAndEpilogues) {
  const CudaContext* ctx = context();
  if (!ctx) GTEST_SKIP() << skip_reason_;
  std::vector<FusedCase> cases;
  const Items modes[][3] = {{Items::Padded, Items::Padded, Items::Padded},
                            {Items::Broadcast, Items::Padded, Items::Padded},
                            {Items::Padded, Items::Broadcast, Items::Interleaved},
                            {Items::Interleaved, Items::Interleaved, Items::Padded}};
  const int64_t shapes[][3] = {{77, 133, 70}, {128, 256, 128}, {200, 64, 300}, {33, 40, 9}};
  int v = 0;
  for (int64_t batch : {1, 3, 17})
    for (int layout = 0; layout < 4; ++layout)
      for (const auto& s : shapes) {
        FusedCase fc;
        fc.m = s[0];
        fc.n = s[1];
        fc.k = s[2];
        fc.trans_a = layout & 1;
        fc.trans_b = layout & 2;
        fc.batch = batch;
        fc.ab = v % 2 ? DType::F16 : DType::BF16;
        fc.c = v % 3 == 0 ? DType::F32 : fc.ab;
        const auto& mode = modes[v % 4];
        fc.a_items = mode[0];
        fc.b_items = mode[1];
        fc.c_items = mode[2];
        fc.act = kActs[v % 5];
        fc.bias = v % 3;
        fc.bias_per_item = (v / 3) % 2;
        if (v % 4 == 1) fc.alpha = 0.5f;
        if (v % 5 == 3) fc.alpha = -0.75f, fc.beta = 1.25f;  // C read: the stores from registers
        if (v % 7 == 2) fc.c_pad = 1;                        // C rows off the 16-byte grid: registers
        cases.push_back(fc);
        ++v;
      }
  // tf32 (A not transposed): K-major B (the main kernel) and N-contiguous B (the C^T kernel);
  // exact f32 (the C^T kernel in 3xTF32, B either way).
  for (bool tf32 : {true, false})
    for (int64_t batch : {1, 3, 17})
      for (bool trans_b : {false, true}) {
        FusedCase fc;
        fc.m = 300;
        fc.n = 140;
        fc.k = 100;
        fc.trans_b = trans_b;
        fc.ab = fc.c = DType::F32;
        fc.tf32 = tf32;
        fc.batch = batch;
        fc.b_items = batch == 3 ? Items::Broadcast : Items::Padded;
        fc.bias = 1;
        fc.bias_per_item = trans_b;
        fc.act = kActs[(batch + trans_b) % 5];
        if (batch == 17) fc.beta = 0.5f;
        cases.push_back(fc);
      }
  run_all(cases, *ctx, 1000);
}

TEST_F(WgmmaFused, KZeroAppliesTheEpilogueToEveryItem) {
  const CudaContext* ctx = context();
  if (!ctx) GTEST_SKIP() << skip_reason_;
  std::vector<FusedCase> cases;
  for (float beta : {0.0f, 0.5f})
    for (int64_t batch : {1, 5}) {
      FusedCase fc;
      fc.m = 37;
      fc.n = 50;
      fc.k = 0;
      fc.batch = batch;
      fc.beta = beta;
      fc.bias = 2;
      fc.bias_per_item = batch > 1;
      fc.act = beta == 0.0f ? core::Activation::GeluErf : core::Activation::Silu;
      cases.push_back(fc);
    }
  run_all(cases, *ctx, 2000);
}

TEST_F(WgmmaFused, ForcedConfigurationsAndSplitsWithTheEpilogue) {
  const CudaContext* ctx = context();
  if (!ctx) GTEST_SKIP() << skip_reason_;
  const char* configs[] = {"128x256c2",
                           "128x256c2 splitk3",
                           "128x128",
                           "128x128 splitk4",
                           "64x128",
                           "64x128 splitk16",
                           "tf32nn splitk2",
                           "tf32nn128 splitk3",
                           "tf32nn64 splitk2",
                           "f32nn128 splitk3",
                           "f32nn64 splitk2",
                           "128x256store",
                           "128x256store splitk2",
                           "128x128c2",
                           "128x128c2 splitk2",
                           "128x64",
                           "128x64 splitk3",
                           "64x64c2",
                           "64x64c2 splitk2",
                           "64x128c2",
                           "64x128c2 splitk3",
                           "128x64c2",
                           "128x64c2 splitk3",
                           "128x192c2",
                           "128x192c2 splitk3",
                           "192x192c2",
                           "192x192c2 splitk2",
                           "192x96c2",
                           "192x96c2 splitk2",
                           "192x96kc2",
                           "192x96kc2 splitk3",
                           "128x168c2",
                           "128x168c2 splitk3",
                           "64x32",
                           "64x32 splitk2",
                           "64x64",
                           "64x64 splitk2"};
  std::vector<FusedCase> cases;
  int v = 0;
  for (const char* config : configs)
    for (int64_t batch : {1, 3}) {
      FusedCase fc;
      fc.m = 130;
      fc.n = 384;
      fc.k = 1100;  // a K tail; long enough for 16 ranges
      fc.batch = batch;
      fc.c = v % 3 == 0 ? DType::F32 : DType::BF16;
      force_config(fc, config, v);
      fc.bias = 1 + v % 2;
      fc.bias_per_item = batch > 1;
      fc.act = kActs[1 + v % 4];
      if (v % 4 == 3) fc.beta = -1.0f;
      cases.push_back(fc);
      ++v;
    }
  run_all(cases, *ctx, 3000);
}

// The store-bound configuration keeps 4 staging rounds in flight per consumer, a ring
// over its tiles: batches with several tiles per CTA wrap it many times (attention's
// Q K^T shape class: K of one or two blocks, 16-bit C, beta 0), with and without the
// epilogue, chosen by the table and forced.
TEST_F(WgmmaFused, StoreConfigurationWrapsItsStagingRing) {
  const CudaContext* ctx = context();
  if (!ctx) GTEST_SKIP() << skip_reason_;
  std::vector<FusedCase> cases;
  int v = 0;
  for (const char* config : {static_cast<const char*>(nullptr), "128x256store"})
    for (int64_t k : {64, 100, 128}) {
      FusedCase fc;
      fc.m = 384 - 8 * (v % 2);
      fc.n = 520;
      fc.k = k;
      fc.batch = 40;  // ~7 staging rounds a consumer
      fc.trans_b = true;
      fc.ab = fc.c = v % 2 ? DType::F16 : DType::BF16;
      fc.alpha = 0.125f;
      fc.c_items = v % 3 == 0 ? Items::Interleaved : Items::Padded;
      fc.config = config;
      if (v % 2) {
        fc.bias = 2;
        fc.bias_per_item = true;
        fc.act = core::Activation::GeluTanh;
      }
      cases.push_back(fc);
      ++v;
    }
  run_all(cases, *ctx, 5000);
}

TEST_F(WgmmaFused, ThroughThePublicApi) {
  const CudaContext* ctx = context();
  if (!ctx) GTEST_SKIP() << skip_reason_;
  std::vector<FusedCase> cases;
  for (int v = 0; v < 6; ++v) {
    FusedCase fc;
    fc.api = true;
    fc.m = 96 + 17 * v;
    fc.n = 72 + 8 * v;
    fc.k = 64 + 9 * v;
    fc.trans_a = v % 2;
    fc.trans_b = (v / 2) % 2;
    fc.batch = v < 3 ? 3 : 17;
    fc.ab = v % 2 ? DType::F16 : DType::BF16;
    fc.c = v % 3 == 2 ? DType::F32 : fc.ab;
    fc.a_items = v == 4 ? Items::Broadcast : Items::Padded;
    fc.c_items = v == 5 ? Items::Interleaved : Items::Padded;
    fc.bias = v % 3;
    fc.bias_per_item = v % 2;
    fc.act = kActs[v % 5];
    if (v == 3) fc.beta = 0.5f;
    cases.push_back(fc);
  }
  run_all(cases, *ctx, 5000);
}

TEST_F(WgmmaFused, LongBatchesOfOneKBlockTilesClaimTheirTiles) {
  const CudaContext* ctx = context();
  if (!ctx) GTEST_SKIP() << skip_reason_;
  // Tiny items of one K block (one 64x128 tile each) over 70 rounds of the SMs:
  // the launch claims its tiles at run time (unless GPUKERN_WGMMA_SCHEDULE says
  // otherwise); every item checked.
  FusedCase fc;
  fc.m = 24;
  fc.n = 40;
  fc.k = 16;
  fc.trans_b = true;
  fc.batch = 70 * static_cast<int64_t>(ctx->sm_count) + 5;
  fc.bias = 1;
  fc.bias_per_item = true;
  fc.act = core::Activation::Relu;
  EXPECT_TRUE(run_fused_case(fc, *ctx, base_seed() + 4500));
}

// Every configuration over several rounds of its persistent CTAs (more tiles than CTAs),
// unsplit, over one and three K blocks: the static schedule, and under the ctest run with
// GPUKERN_WGMMA_SCHEDULE=claimed (cuda.gemm.claimed) tiles claimed at run time, clusters
// included.
TEST_F(WgmmaFused, EveryConfigurationOverSeveralRounds) {
  const CudaContext* ctx = context();
  if (!ctx) GTEST_SKIP() << skip_reason_;
  const char* configs[] = {"128x256c2", "128x128",   "64x128",   "tf32nn",    "128x256store", "128x128c2", "128x64",
                           "64x64c2",   "64x128c2",  "128x64c2", "128x192c2", "192x192c2",    "128x168c2", "64x32",
                           "64x64",     "tf32nn128", "tf32nn64", "f32nn128",  "f32nn64",      "192x96c2",  "192x96kc2"};
  std::vector<FusedCase> cases;
  int v = 0;
  for (const char* config : configs)
    for (int64_t k : {40, 150}) {
      FusedCase fc;
      fc.m = 200;
      fc.n = 300;
      fc.k = k;
      fc.batch = 60;  // 128x256 clusters: 2 an item, 120 for 66 slots on the H100
      force_config(fc, config, v);
      fc.bias = v % 3;
      fc.bias_per_item = v % 2;
      fc.act = kActs[v % 5];
      cases.push_back(fc);
      ++v;
    }
  run_all(cases, *ctx, 4600);
}

TEST_F(WgmmaFused, AttentionShapesAtAReducedBatch) {
  const CudaContext* ctx = context();
  if (!ctx) GTEST_SKIP() << skip_reason_;
  std::vector<FusedCase> cases;
  for (int64_t s : {512, 1024})
    for (int64_t d : {64, 128}) {
      // scores = Q K^T * scale: Q, K stored S x d per head (heads interleaved in a row for K).
      FusedCase qk;
      qk.m = qk.n = s;
      qk.k = d;
      qk.trans_b = true;
      qk.batch = s == 512 ? 4 : 2;
      qk.ab = qk.c = d == 64 ? DType::BF16 : DType::F16;
      qk.alpha = 0.125f;
      qk.b_items = Items::Interleaved;
      cases.push_back(qk);
      // out = P V: P S x S, V S x d.
      FusedCase pv;
      pv.m = s;
      pv.n = d;
      pv.k = s;
      pv.batch = qk.batch;
      pv.ab = pv.c = qk.ab;
      pv.c_items = Items::Interleaved;
      cases.push_back(pv);
    }
  run_all(cases, *ctx, 4000);
}

}  // namespace
}  // namespace gpukern::test::cuda_gemm
