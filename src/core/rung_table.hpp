// The rung contract, owned by the core: a ladder is one table per (backend, operation),
// and that table *is* the dispatch. Each row says what the rung is (name, description,
// dtypes, the architectures it runs on per vendor, whether it is the vendor reference or
// experimental), whether it accepts a call (supports, with a typed reason when it
// declines), how to run it, and its place in `auto`'s order. docs/kernel-contract.md
// says what a rung receives and what it must and must not do.
#pragma once

#include "core/backend.hpp"
#include "core/decompose.hpp"

#include <algorithm>
#include <cstdio>
#include <initializer_list>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace gpukern::core {

/// What a rung needs of the device, per vendor (no overloaded integer).
struct ArchSupport {
  int cc_min = 0;                  ///< NVIDIA: lowest compute capability, 10*major+minor (0: any)
  int cc_max = 0;                  ///< NVIDIA: highest (0: no upper bound)
  bool (*amd)(int gfx) = nullptr;  ///< AMD: the gfx targets it runs on (nullptr: every one)
  const char* label = "";          ///< as listed: "sm_90a", "CDNA (gfx90a, gfx940)"; "" when any
  /// Peak memory bandwidth in GB/s (DeviceArch::mem_gbps) at least / at most; 0: no bound. A
  /// device whose bandwidth is not known meets every bound.
  int mem_gbps_min = 0, mem_gbps_max = 0;
};

/// Whether a rung may run on `arch`; WrongArch with the label when not.
inline Verdict arch_verdict(const ArchSupport& need, const DeviceArch& arch) {
  bool ok = true;
  if (arch.vendor == Vendor::Nvidia)
    ok = arch.cc >= need.cc_min && (need.cc_max == 0 || arch.cc <= need.cc_max);
  else if (arch.vendor == Vendor::Amd)
    ok = need.amd == nullptr || need.amd(arch.gfx);
  if (arch.mem_gbps > 0)
    ok = ok && arch.mem_gbps >= need.mem_gbps_min && (need.mem_gbps_max == 0 || arch.mem_gbps <= need.mem_gbps_max);
  if (ok) return {};
  return {Decline::WrongArch, std::string("needs ") + need.label + " (this device is " + arch.name + ")"};
}

/// A rung's standing in the ladder.
enum class RungKind : int {
  Ladder,        ///< one of our own rungs
  Reference,     ///< the vendor library (cuBLAS, cuDNN, OpenBLAS): the yardstick
  Experimental,  ///< never run on hardware (compile-verified): listed, forced by name only
};

/// Features a rung may implement itself (Rung::fuses).
constexpr uint32_t kFuseBatch = 1u << 0;     ///< strided batches (GemmArgs/SoftmaxArgs::batch > 1)
constexpr uint32_t kFuseEpilogue = 1u << 1;  ///< GEMM bias and activation, every bias type and act
constexpr uint32_t kFuseScale = 1u << 2;     ///< softmax input scale != 1
constexpr uint32_t kFuseCausal = 1u << 3;    ///< softmax causal mask

/// The features a call needs.
inline uint32_t needed_features(const GemmArgs& a) {
  return (a.batched() ? kFuseBatch : 0u) | (a.has_epilogue() ? kFuseEpilogue : 0u);
}
inline uint32_t needed_features(const SoftmaxArgs& a) {
  return (a.batched() ? kFuseBatch : 0u) | (a.scale != 1.0f ? kFuseScale : 0u) | (a.causal ? kFuseCausal : 0u);
}

/// `auto` never picks a rung with this rank.
constexpr int kNeverAuto = -1;

/// One row of a ladder, for calls `Args` (GemmArgs / SoftmaxArgs) on a backend whose
/// per-device state is `Ctx` (stream, device properties, library handles...).
template <class Args, class Ctx>
struct Rung {
  const char* name;
  const char* description;
  uint32_t dtypes;   ///< kMask* bits accepted
  ArchSupport arch;  ///< where it runs
  RungKind kind;
  /// Whether it accepts a validated call beyond dtype and architecture (alignment, layout,
  /// shape limits, resources, a library present). nullptr: accepts every call. Authoritative:
  /// a call it accepts must then run (run() never throws Unsupported).
  Verdict (*supports)(const Args& args, const Ctx& ctx);
  /// Runs an accepted call, asynchronously on the context's stream.
  void (*run)(const Args& args, const Ctx& ctx);
  /// Place in `auto`'s order, lower first; kNeverAuto: auto never tries it.
  int auto_rank;
  /// When auto tries it (a policy, e.g. "rows shorter than 1 KB"); nullptr: always.
  bool (*auto_when)(const Args& args, const Ctx& ctx) = nullptr;
  /// The kFuse* features `run` implements itself. A call needing a feature the rung does not
  /// fuse is decomposed by the core where it can be (GEMM batches: one call per item; GEMM
  /// epilogue: the backend's separate pass; softmax batches: one call per item); softmax scale
  /// and mask cannot be decomposed, and a rung without them declines with Decline::Feature.
  uint32_t fuses = 0;
};

/// `row` with place `rank` in auto's order (and policy `when`): for a row that two
/// modules' tables share but rank differently (the SIMT rungs on CUDA and on HIP).
template <class Args, class Ctx>
constexpr Rung<Args, Ctx> ranked(Rung<Args, Ctx> row, int rank, bool (*when)(const Args&, const Ctx&) = nullptr) {
  row.auto_rank = rank;
  row.auto_when = when;
  return row;
}
/// `row` declaring the kFuse* features its run implements.
template <class Args, class Ctx>
constexpr Rung<Args, Ctx> fusing(Rung<Args, Ctx> row, uint32_t features) {
  row.fuses = features;
  return row;
}

/// An inclusive size range [lo, hi], optionally of the multiples of `multiple` only (where a
/// rung's fast path needs whole tiles and the data measured no other sizes).
struct SizeRange {
  int64_t lo = 0, hi = std::numeric_limits<int64_t>::max();
  int64_t multiple = 1;
  constexpr bool contains(int64_t v) const { return v >= lo && v <= hi && (multiple <= 1 || v % multiple == 0); }
};
/// " T 1..16", " k >= 2048", " k <= 64", " batch 1", " m 2048..4096 (multiple of 256)"; ""
/// for any size.
inline std::string range_text(const char* what, const SizeRange& r) {
  const bool lo = r.lo > 0, hi = r.hi != std::numeric_limits<int64_t>::max();
  const std::string name = " " + std::string(what);
  std::string out;
  if (lo && hi)
    out = name + " " + std::to_string(r.lo) + (r.lo == r.hi ? std::string() : ".." + std::to_string(r.hi));
  else if (lo)
    out = name + " >= " + std::to_string(r.lo);
  else if (hi)
    out = name + " <= " + std::to_string(r.hi);
  else if (r.multiple > 1)
    out = name;
  if (r.multiple > 1) out += " (multiple of " + std::to_string(r.multiple) + ")";
  return out;
}

/// The exact type of a call as one kMask bit (tf32 is not f32 here).
inline uint32_t exact_type_bit(const GemmArgs& a) {
  switch (a.type()) {
    case GemmType::F16:
      return kMaskF16;
    case GemmType::BF16:
      return kMaskBF16;
    case GemmType::TF32:
      return kMaskTF32;
    default:
      return kMaskF32;
  }
}
inline uint32_t exact_type_bit(const SoftmaxArgs& a) {
  return a.dtype == DType::F16 ? kMaskF16 : a.dtype == DType::BF16 ? kMaskBF16 : kMaskF32;
}

/// GEMM layouts as stored (op(A) op(B)): N = as is, T = transposed.
constexpr uint32_t kLayoutNN = 1, kLayoutNT = 2, kLayoutTN = 4, kLayoutTT = 8;
inline uint32_t layout_bit(const GemmArgs& a) { return 1u << ((a.trans_a ? 2 : 0) + (a.trans_b ? 1 : 0)); }
/// " NN,NT" for a layout mask; "" for every layout.
inline std::string layout_text(uint32_t layouts) {
  static const char* const kNames[4] = {"NN", "NT", "TN", "TT"};
  std::string out;
  for (int i = 0; i < 4; ++i)
    if (layouts & (1u << i)) out += (out.empty() ? " " : ",") + std::string(kNames[i]);
  return layouts == 0xF ? std::string() : out;
}

/// Which side of C a GEMM class's T is.
enum class TSide : uint8_t {
  Either,  ///< T = min(m, n), wide = max(m, n): an LLM layer's tokens, whichever way it is stored
  N,       ///< T = n, wide = m (attention's P*V: n is the head dimension)
  M,       ///< T = m, wide = n (a layer's tokens as A's rows, the only way its data was measured)
};

/// One entry of a ladder's measured auto table (GEMM): calls of this shape class, on the
/// architectures `arch` names, go to `rung` first; if it declines, auto walks the ranked
/// order. T is the skinny side min(m, n) (tokens in an LLM layer), wide = max(m, n), unless
/// `side` pins T to n; `layouts` narrows it to some transposes, `batch` to some batch counts.
/// `types` are exact (kMaskTF32 is not kMaskF32 here). The entries are derived from
/// benchmark runs, committed next to the data that justifies them.
struct GemmClass {
  const char* label;
  uint32_t types;
  ArchSupport arch;
  SizeRange t, wide, k;
  const char* rung;
  uint32_t layouts = 0;  ///< kLayout* bits (transposes as stored); 0 = every layout
  /// GemmArgs::batch (1 = one GEMM); default: any. A rung that fuses batches runs them in one
  /// launch whose grid and tail differ from a single call's, so an entry names the batch
  /// counts its data measured.
  SizeRange batch = {};
  TSide side = TSide::Either;
  bool matches(const GemmArgs& a) const {
    const int64_t skinny = side == TSide::N ? a.n : side == TSide::M ? a.m : std::min(a.m, a.n);
    const int64_t other = side == TSide::N ? a.m : side == TSide::M ? a.n : std::max(a.m, a.n);
    return (types & exact_type_bit(a)) != 0 && (layouts == 0 || (layouts & layout_bit(a)) != 0) && t.contains(skinny) &&
           wide.contains(other) && k.contains(a.k) && batch.contains(a.batch);
  }
  std::string describe() const {  // "bf16,f16 NT T 1..16 k >= 2048 batch 1", "f16 NN m 2048 n 128 k 2048"
    const std::string sides = side == TSide::N   ? range_text("m", wide) + range_text("n", t)
                              : side == TSide::M ? range_text("m", t) + range_text("n", wide)
                                                 : range_text("T", t) + range_text("wide", wide);
    return mask_names(types) + layout_text(layouts) + sides + range_text("k", k) + range_text("batch", batch);
  }
};

/// The index of the first entry of a measured auto table that `args` falls in on `arch`;
/// -1 when none does.
template <class Class, class Args>
int first_matching_entry(const std::vector<Class>& table, const Args& args, const DeviceArch& arch) {
  for (int e = 0; e < static_cast<int>(table.size()); ++e) {
    const Class& c = table[static_cast<std::size_t>(e)];
    if (c.matches(args) && arch_verdict(c.arch, arch).accepted()) return e;
  }
  return -1;
}

/// The same for softmax: rows and columns.
struct SoftmaxClass {
  const char* label;
  uint32_t types;
  ArchSupport arch;
  SizeRange rows, cols;
  const char* rung;
  bool matches(const SoftmaxArgs& a) const {
    return (types & exact_type_bit(a)) != 0 && rows.contains(a.rows) && cols.contains(a.cols);
  }
  std::string describe() const { return mask_names(types) + range_text("rows", rows) + range_text("cols", cols); }
};

template <class Args>
struct ShapeClassOf;
template <>
struct ShapeClassOf<GemmArgs> {
  using type = GemmClass;
};
template <>
struct ShapeClassOf<SoftmaxArgs> {
  using type = SoftmaxClass;
};

/// The rung dtypes that may run a call: its exact type, and for tf32 exact f32 too (tf32 is
/// a permission: exact f32 rungs qualify).
inline uint32_t type_mask(const GemmArgs& a) {
  const uint32_t bit = exact_type_bit(a);
  return bit == kMaskTF32 ? bit | kMaskF32 : bit;
}
inline uint32_t type_mask(const SoftmaxArgs& a) { return exact_type_bit(a); }
inline std::string type_label(const GemmArgs& a) { return gemm_type_name(a.type()); }
inline std::string type_label(const SoftmaxArgs& a) { return dtype_name(a.dtype); }

/// A ladder: the rungs in ladder order (naive first, reference last), and auto's order
/// (the rungs with a rank, by rank) computed once from the same rows.
template <class Args, class Ctx>
class Ladder {
 public:
  using Row = Rung<Args, Ctx>;

  using Class = typename ShapeClassOf<Args>::type;

  /// `table`: the measured auto table, consulted before the ranked order. Every entry
  /// must name a row of this ladder that auto may pick (not experimental).
  Ladder(std::initializer_list<Row> rows, std::vector<Class> table = {}) : rows_(rows), table_(std::move(table)) {
    for (int i = 0; i < static_cast<int>(rows_.size()); ++i)
      if (rows_[i].auto_rank != kNeverAuto && rows_[i].kind != RungKind::Experimental) auto_order_.push_back(i);
    std::stable_sort(auto_order_.begin(), auto_order_.end(),
                     [this](int a, int b) { return rows_[a].auto_rank < rows_[b].auto_rank; });
    for (const Class& c : table_) {
      int index = -1;
      for (int i = 0; i < size(); ++i)
        if (std::string(rows_[static_cast<std::size_t>(i)].name) == c.rung) index = i;
      if (index < 0 || rows_[static_cast<std::size_t>(index)].kind == RungKind::Experimental)
        throw std::logic_error(std::string("auto table entry '") + c.label + "' names '" + c.rung +
                               "', which is not a rung auto may pick");
      table_rungs_.push_back(index);
    }
  }

  int size() const { return static_cast<int>(rows_.size()); }
  const Row& operator[](int i) const { return rows_[static_cast<std::size_t>(i)]; }

  /// Whether rung `i` accepts the call: dtype, architecture, then (softmax) the features it
  /// must fuse, then the rung's own check on the calls it will be given: the call itself,
  /// or what the core decomposes it into (decompose.hpp) where the rung does not fuse it all.
  Verdict supports(int i, const Args& args, const Ctx& ctx, const DeviceArch& arch) const {
    const Row& r = (*this)[i];
    if ((r.dtypes & type_mask(args)) == 0)
      return {Decline::Dtype, "no " + type_label(args) + " support (takes " + mask_names(r.dtypes) + ")"};
    if (Verdict v = arch_verdict(r.arch, arch); !v.accepted()) return v;
    return planned_supports(r, args, ctx);
  }

  /// Whether auto tries rung `i` for this call.
  bool auto_candidate(int i, const Args& args, const Ctx& ctx) const {
    const Row& r = (*this)[i];
    return r.auto_rank != kNeverAuto && r.kind != RungKind::Experimental && (!r.auto_when || r.auto_when(args, ctx));
  }

  /// Runs an accepted call on rung `i`, decomposing what the rung does not fuse (logged at
  /// debug level, once per call).
  void run(int i, const Args& args, const Ctx& ctx) const { planned_run((*this)[i], args, ctx); }

  /// The table as listed to users.
  std::vector<RungInfo> infos(const DeviceArch& arch) const {
    std::vector<RungInfo> out;
    for (const Row& r : rows_) {
      RungInfo info;
      info.name = r.name;
      info.description = r.description;
      info.dtypes = r.dtypes;
      info.arch = r.arch.label;
      info.kind = r.kind;
      info.unavailable = arch_verdict(r.arch, arch);
      out.push_back(std::move(info));
    }
    for (std::size_t pos = 0; pos < auto_order_.size(); ++pos)
      out[static_cast<std::size_t>(auto_order_[pos])].auto_position = static_cast<int>(pos);
    return out;
  }

  /// Rung indices in auto's order.
  const std::vector<int>& auto_order() const { return auto_order_; }

  /// The first entry of the measured auto table this call falls in on `arch`.
  AutoPick auto_pick(const Args& args, const DeviceArch& arch) const {
    const int e = first_matching_entry(table_, args, arch);
    if (e < 0) return {};
    return {table_rungs_[static_cast<std::size_t>(e)], e};
  }

  /// The measured auto table as listed to users.
  std::vector<AutoEntryInfo> auto_table() const {
    std::vector<AutoEntryInfo> out;
    for (const Class& c : table_) out.push_back({c.label, c.describe(), c.rung, c.arch.label});
    return out;
  }

 private:
  static std::string number_text(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
  }
  static Verdict own_check(const Row& r, const Args& args, const Ctx& ctx) {
    return r.supports ? r.supports(args, ctx) : Verdict{};
  }
  static GemmPlan plan_for(const Row& r, const GemmArgs& args) {
    return plan_gemm(args, (r.fuses & kFuseBatch) != 0, (r.fuses & kFuseEpilogue) != 0);
  }

  // GEMM: nothing declines for want of fusing; the rung's check sees each call it will get.
  static Verdict planned_supports(const Row& r, const GemmArgs& args, const Ctx& ctx) {
    const GemmPlan plan = plan_for(r, args);
    if (!plan.decomposed()) return own_check(r, args, ctx);
    return check_plan(args, plan, GenericPaths<Ctx>::kWorkspaceAlignment,
                      [&](const GemmArgs& call) { return own_check(r, call, ctx); });
  }
  static void planned_run(const Row& r, const GemmArgs& args, const Ctx& ctx) {
    const GemmPlan plan = plan_for(r, args);
    if (!plan.decomposed()) return r.run(args, ctx);
    log_decomposition("gemm", r.name, describe_plan(args, plan));
    run_plan(args, plan, ctx, [&](const GemmArgs& call) { r.run(call, ctx); });
  }

  // Softmax: the scale and the mask change every output of a row, so they cannot be applied
  // around a rung: a rung without them declines. Batches run item by item.
  static Verdict planned_supports(const Row& r, const SoftmaxArgs& args, const Ctx& ctx) {
    const uint32_t missing = needed_features(args) & ~r.fuses;
    if (missing & kFuseScale)
      return {Decline::Feature, "does not fuse the input scale (scale " + number_text(args.scale) + ")"};
    if (missing & kFuseCausal)
      return {Decline::Feature, "does not fuse the causal mask (offset " + std::to_string(args.causal_offset) + ")"};
    if (missing & kFuseBatch)
      return check_softmax_items(args, [&](const SoftmaxArgs& item) { return own_check(r, item, ctx); });
    return own_check(r, args, ctx);
  }
  static void planned_run(const Row& r, const SoftmaxArgs& args, const Ctx& ctx) {
    if (!args.batched() || (r.fuses & kFuseBatch)) return r.run(args, ctx);
    log_decomposition("softmax", r.name, "batch of " + std::to_string(args.batch) + " run item by item");
    for (int64_t item = 0; item < args.batch; ++item) r.run(softmax_item(args, item), ctx);
  }

  std::vector<Row> rows_;
  std::vector<int> auto_order_;
  std::vector<Class> table_;
  std::vector<int> table_rungs_;  // the rung index of each table entry
};

}  // namespace gpukern::core
