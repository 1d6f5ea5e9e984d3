// The core's generic paths for what a rung does not fuse (Rung::fuses): GEMM batches run
// item by item, a GEMM epilogue (bias, activation) as the backend's separate pass after the
// plain GEMM, softmax batches item by item. Ladder::supports and Ladder::run
// (rung_table.hpp) make one plan per call with these functions, so what supports() checks
// is exactly what run() hands the rung.
#pragma once

#include "core/log.hpp"
#include "core/types.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

namespace gpukern::core {

/// The backend's epilogue pass over `batch` items of m x n outputs, in f32:
///   C_b = act(W_b + beta * C_b + bias_b),  C rounded once to c_type.
/// W is the plain GEMM's f32 result (W may be C itself: f32 C, beta 0); beta == 0 never
/// reads C; bias (n values of bias_type per item, nullptr = none) as in GemmArgs.
struct EpiloguePassArgs {
  int64_t m = 0, n = 0, batch = 1;
  const float* w = nullptr;
  int64_t ldw = 0, stride_w = 0;  ///< elements
  void* c = nullptr;
  int64_t ldc = 0, stride_c = 0;
  DType c_type = DType::F32;
  float beta = 0.0f;
  const void* bias = nullptr;
  DType bias_type = DType::F32;
  int64_t stride_bias = 0;
  Activation act = Activation::None;
};

/// What a backend supplies for the generic paths, for its rung context type `Ctx`. Each
/// backend specializes it once, next to its context (cpu/cpu_context.hpp, cuda/context.cuh):
///   static constexpr std::size_t kWorkspaceAlignment;  // bytes, what workspace() guarantees
///   static void epilogue_pass(const EpiloguePassArgs&, const Ctx&);  // queued like a rung's work
///   static void* workspace(std::size_t bytes, const Ctx&);  // ordered with the rungs' work
///   static void release(void* workspace, const Ctx&) noexcept;  // after the work queued so far
/// A ladder whose Ctx has no specialization does not compile once its run() is used.
template <class Ctx>
struct GenericPaths;

/// A workspace of GenericPaths<Ctx> (none for 0 bytes), handed back however the scope ends.
template <class Ctx>
class ScopedWorkspace {
 public:
  ScopedWorkspace(std::size_t bytes, const Ctx& ctx)
      : ptr_(bytes > 0 ? GenericPaths<Ctx>::workspace(bytes, ctx) : nullptr), ctx_(ctx) {}
  ~ScopedWorkspace() {
    if (ptr_) GenericPaths<Ctx>::release(ptr_, ctx_);
  }
  ScopedWorkspace(const ScopedWorkspace&) = delete;
  ScopedWorkspace& operator=(const ScopedWorkspace&) = delete;
  void* get() const { return ptr_; }

 private:
  void* ptr_;
  const Ctx& ctx_;
};

/// How the core runs a GEMM call on a rung: what the rung fuses it gets whole, the rest is
/// decomposed. The same plan serves supports() and run().
struct GemmPlan {
  bool per_item = false;   ///< batched call, rung without kFuseBatch: one rung call per item
  bool pass = false;       ///< epilogue, rung without kFuseEpilogue: the backend's pass after it
  bool workspace = false;  ///< pass with 16-bit C: the rung writes alpha*AB to an f32 workspace W
  int64_t chunk = 1;       ///< items per workspace fill (the whole batch without a workspace)
  int64_t ldw = 0;         ///< W's leading dimension (n rounded up to kWorkspaceRowElements)

  bool decomposed() const { return per_item || pass; }
  int64_t item_floats(const GemmArgs& a) const { return a.m * ldw; }  ///< one item of W
};

/// W's rows start kWorkspaceRowElements floats apart (128 bytes), so a rung that needs
/// 16-byte aligned rows of C accepts W whatever n is.
constexpr int64_t kWorkspaceRowElements = 32;
/// Bytes of W filled at once: a batch whose items take more is run in chunks of items.
constexpr int64_t kWorkspaceChunkBytes = int64_t{64} << 20;

inline GemmPlan plan_gemm(const GemmArgs& a, bool fuses_batch, bool fuses_epilogue) {
  GemmPlan p;
  p.per_item = a.batched() && !fuses_batch;
  p.pass = a.has_epilogue() && !fuses_epilogue;
  p.workspace = p.pass && a.c_type != DType::F32;
  p.chunk = a.batch;
  if (p.workspace) {
    p.ldw = ceil_div(a.n, kWorkspaceRowElements) * kWorkspaceRowElements;
    const int64_t item_bytes = a.m * p.ldw * static_cast<int64_t>(sizeof(float));
    p.chunk = std::clamp<int64_t>(kWorkspaceChunkBytes / item_bytes, 1, a.batch);
  }
  return p;
}

namespace detail {
inline const void* advance(const void* p, int64_t elements, DType t) {
  return p ? static_cast<const char*>(p) + elements * static_cast<int64_t>(dtype_size(t)) : nullptr;
}
inline void* advance(void* p, int64_t elements, DType t) {
  return p ? static_cast<char*>(p) + elements * static_cast<int64_t>(dtype_size(t)) : nullptr;
}
}  // namespace detail

/// The rung's call for items [first, first + count) of `a` under plan `p`; `w` is where
/// item `first` of the chunk starts in the workspace (unused without one).
inline GemmArgs rung_call(const GemmArgs& a, const GemmPlan& p, int64_t first, int64_t count, float* w) {
  GemmArgs r = a;
  r.batch = count;
  r.a = detail::advance(a.a, first * a.stride_a, a.ab_type);
  r.b = detail::advance(a.b, first * a.stride_b, a.ab_type);
  r.c = detail::advance(a.c, first * a.stride_c, a.c_type);
  r.bias = detail::advance(a.bias, first * a.stride_bias, a.bias_type);
  if (p.pass) {  // the rung computes the plain GEMM; the pass adds bias and activation
    r.bias = nullptr;
    r.stride_bias = 0;
    r.act = Activation::None;
  }
  if (p.workspace) {  // W = alpha * op(A) op(B) in f32; C's beta term is the pass's
    r.c = w;
    r.c_type = DType::F32;
    r.ldc = p.ldw;
    r.stride_c = p.item_floats(a);
    r.beta = 0.0f;
  }
  return r;
}

/// The backend pass for items [first, first + count) after the rung wrote them (to C, or
/// to the workspace starting at `w`).
inline EpiloguePassArgs pass_call(const GemmArgs& a, const GemmPlan& p, int64_t first, int64_t count, float* w) {
  EpiloguePassArgs e;
  e.m = a.m;
  e.n = a.n;
  e.batch = count;
  e.c = detail::advance(a.c, first * a.stride_c, a.c_type);
  e.ldc = a.ldc;
  e.stride_c = a.stride_c;
  e.c_type = a.c_type;
  e.bias = detail::advance(a.bias, first * a.stride_bias, a.bias_type);
  e.bias_type = a.bias_type;
  e.stride_bias = a.stride_bias;
  e.act = a.act;
  if (p.workspace) {
    e.w = w;
    e.ldw = p.ldw;
    e.stride_w = p.item_floats(a);
    e.beta = a.beta;
  } else {  // f32 C already holds alpha*AB + beta*C: the pass reads and writes C in place
    e.w = static_cast<const float*>(e.c);
    e.ldw = a.ldc;
    e.stride_w = a.stride_c;
    e.beta = 0.0f;
  }
  return e;
}

/// "batch of 17 run item by item; epilogue (bias, act 2) as a separate pass ..." for the log.
inline std::string describe_plan(const GemmArgs& a, const GemmPlan& p) {
  std::string out;
  if (p.per_item) out = "batch of " + std::to_string(a.batch) + " run item by item";
  if (p.pass) {
    if (!out.empty()) out += "; ";
    out += "epilogue as a separate pass";
    if (p.workspace)
      out +=
          " through an f32 workspace (" + std::to_string(p.chunk) + " item" + (p.chunk == 1 ? "" : "s") + " at a time)";
  }
  return out;
}

/// Whether the rung (its own check `check`, GemmArgs -> Verdict) accepts every call the
/// plan makes. Calls differ only in their pointers, so it checks the first, second and last
/// item (run alone) or the first and last chunk: base and base + stride aligned to a power of
/// two means every item is. The workspace stands in as an address with exactly the
/// alignment the backend guarantees.
template <class Check>
Verdict check_plan(const GemmArgs& a, const GemmPlan& p, std::size_t workspace_alignment, Check&& check) {
  float* w = reinterpret_cast<float*>(workspace_alignment);  // never dereferenced
  auto w_at = [&](int64_t item) { return w + (item % p.chunk) * p.item_floats(a); };
  auto verdict = [&](int64_t first, int64_t count, const char* which) -> Verdict {
    Verdict v = check(rung_call(a, p, first, count, w_at(first)));
    if (!v.accepted()) v.detail += " (" + std::string(which) + " of the decomposed call: " + describe_plan(a, p) + ")";
    return v;
  };
  if (p.per_item) {
    for (int64_t item : {int64_t{0}, int64_t{1}, a.batch - 1})
      if (Verdict v = verdict(std::min(item, a.batch - 1), 1, "a batch item"); !v.accepted()) return v;
    return {};
  }
  const int64_t last_first = (a.batch - 1) / p.chunk * p.chunk;
  if (Verdict v = verdict(0, std::min(p.chunk, a.batch), "the first chunk"); !v.accepted()) return v;
  if (last_first > 0) return verdict(last_first, a.batch - last_first, "the last chunk");
  return {};
}

/// Runs `a` under plan `p`: `run_rung(GemmArgs)` for each rung call, then the backend's
/// epilogue pass per chunk; the workspace (if any) is released after the last pass is queued.
template <class Ctx, class RunRung>
void run_plan(const GemmArgs& a, const GemmPlan& p, const Ctx& ctx, RunRung&& run_rung) {
  const ScopedWorkspace<Ctx> ws(p.workspace ? static_cast<std::size_t>(p.chunk * p.item_floats(a)) * sizeof(float) : 0,
                                ctx);
  float* w = static_cast<float*>(ws.get());
  for (int64_t first = 0; first < a.batch; first += p.chunk) {
    const int64_t count = std::min(p.chunk, a.batch - first);
    if (p.per_item) {
      for (int64_t item = first; item < first + count; ++item)
        run_rung(rung_call(a, p, item, 1, w ? w + (item - first) * p.item_floats(a) : nullptr));
    } else {
      run_rung(rung_call(a, p, first, count, w));
    }
    if (p.pass) GenericPaths<Ctx>::epilogue_pass(pass_call(a, p, first, count, w), ctx);
  }
}

/// Softmax: batch item `item` of `a` as a call of its own (batch 1).
inline SoftmaxArgs softmax_item(const SoftmaxArgs& a, int64_t item) {
  SoftmaxArgs r = a;
  r.batch = 1;
  r.x = detail::advance(a.x, item * a.stride_x, a.dtype);
  r.y = detail::advance(a.y, item * a.stride_y, a.dtype);
  return r;
}

/// The same pointer argument as check_plan: the first, second and last item.
template <class Check>
Verdict check_softmax_items(const SoftmaxArgs& a, Check&& check) {
  for (int64_t item : {int64_t{0}, int64_t{1}, a.batch - 1}) {
    Verdict v = check(softmax_item(a, std::min(item, a.batch - 1)));
    if (!v.accepted()) {
      v.detail += " (a batch item of the decomposed call: batch of " + std::to_string(a.batch) + " run item by item)";
      return v;
    }
  }
  return {};
}

/// Logs (debug) that a call on `rung` is decomposed, once per call.
inline void log_decomposition(const char* op, const char* rung, const std::string& what) {
  if (log_enabled(LogLevel::Debug))
    log_line(LogLevel::Debug, std::string(op) + " rung " + rung + " does not fuse it all: " + what);
}

}  // namespace gpukern::core
