// What every CUDA softmax rung shares: typed kernel arguments, 16-byte packs with
// streaming loads and stores, the NaN-keeping max, the (max, sum) row statistics and
// their merge, warp / group / block reductions, and a register fragment that holds a
// thread's share of one row.
//
// Special values follow PyTorch, in every rung:
//   * a NaN anywhere in a row makes the whole row NaN (nan_max keeps NaN where fmaxf
//     would drop it);
//   * a row of all -inf gives NaN (exp(-inf - -inf) = exp(NaN));
//   * a -inf element in a row with a finite max gives 0 (log-softmax: -inf);
//   * a +inf element makes the row NaN (inf - inf).
// The statistics carry "sum == 0 exactly when max == -inf", so parts of a row holding
// only -inf merge in without turning the sum into NaN.
#pragma once

#include "cuda/context.cuh"
#include "cuda/arch/fast_math.cuh"
#include "cuda/portable.cuh"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>

namespace gpukern::cuda::softmax {

using core::ceil_div;

// ---------------------------------------------------------------------------------
// Host side: typed arguments, vector eligibility, dtype dispatch.
// ---------------------------------------------------------------------------------

/// The scale and causal mask of one row (or of a chunk of it): element j holds
/// scale * x[j] for j < kept; from `kept` on it is masked (the statistics see -inf, the
/// output is `fill`). kept may be negative or beyond the row (a chunk's view).
struct RowMask {
  float scale;
  int64_t kept;
  bool log;
  __host__ __device__ __forceinline__ float fill() const { return log ? -INFINITY : 0.0f; }
  /// The same mask seen from element `offset` of the row (a chunk starting there).
  __host__ __device__ __forceinline__ RowMask shifted(int64_t offset) const { return {scale, kept - offset, log}; }
  /// The same mask keeping at most the first `n` elements: for statistics over a fragment
  /// that holds only those (a CTA's chunk of a cluster's row), so that packs past it, which
  /// hold the load's fill, never enter the max (-inf times a scale <= 0 is not -inf).
  __host__ __device__ __forceinline__ RowMask limited(int64_t n) const { return {scale, kept < n ? kept : n, log}; }
  /// Vectors of V elements that hold a kept element, at most `limit`: the ones to read.
  __host__ __device__ __forceinline__ int64_t read_vecs(int64_t V, int64_t limit) const {
    const int64_t n = kept <= 0 ? 0 : (kept + V - 1) / V;
    return n < limit ? n : limit;
  }
  /// read_vecs in the kernels that check the mask (kMasked, pack_masked); `limit` in the
  /// others, where every column is kept (and the computation cost registers).
  template <bool kMasked>
  __host__ __device__ __forceinline__ int64_t vecs_read(int64_t V, int64_t limit) const {
    return kMasked ? read_vecs(V, limit) : limit;
  }
};

/// One row of a call: its input and output and its mask.
template <class T>
struct RowRef {
  const T* x;
  T* y;
  RowMask mask;
};

/// A validated call with typed pointers; strides and sizes in elements (64-bit, so
/// tensors of more than 2^31 elements index correctly). `rows` counts the rows of every
/// batch item: global row g is row g % item_rows of item g / item_rows (item b at
/// x + b * stride_x, y + b * stride_y); item_rows 0 means one item (no division).
template <class T>
struct RowArgs {
  const T* x;
  T* y;
  int64_t rows, cols, ldx, ldy;
  bool log;
  int64_t item_rows = 0;
  int64_t stride_x = 0, stride_y = 0;
  float scale = 1.0f;
  bool causal = false;
  int64_t causal_offset = 0;

  /// Global row g: its pointers and mask (causal: row r of its item keeps r + offset + 1
  /// columns, clamped to [0, cols]).
  __host__ __device__ __forceinline__ RowRef<T> at(int64_t g) const {
    int64_t r = g;
    const T* row_x = x + g * ldx;
    T* row_y = y + g * ldy;
    // Separate pointer arithmetic for one item: the batched form, merged into it, cost the
    // register-held kernels up to 18 registers.
    if (item_rows != 0) {
      const int64_t item = g / item_rows;
      r = g - item * item_rows;
      row_x = x + item * stride_x + r * ldx;
      row_y = y + item * stride_y + r * ldy;
    }
    int64_t kept = cols;
    if (causal) {
      kept = r + causal_offset + 1;
      kept = kept < 0 ? 0 : kept > cols ? cols : kept;
    }
    return {row_x, row_y, RowMask{scale, kept, log}};
  }
  /// at(), with the batched or causal arithmetic in a called function: a kernel whose
  /// registers grew by 20 with it inlined (split_row's register clusters) pays a call per
  /// row only on such calls.
  __host__ __device__ __forceinline__ RowRef<T> at_lean(int64_t g) const {
    if (item_rows == 0 && !causal) return {x + g * ldx, y + g * ldy, RowMask{scale, cols, log}};
    return at_outlined(g);
  }
  __host__ __device__ __noinline__ RowRef<T> at_outlined(int64_t g) const { return at(g); }
};

template <class T>
RowArgs<T> typed_args(const core::SoftmaxArgs& a) {
  RowArgs<T> r{static_cast<const T*>(a.x), static_cast<T*>(a.y), a.rows * a.batch, a.cols, a.ldx, a.ldy, a.log};
  if (a.batch > 1) {
    r.item_rows = a.rows;
    r.stride_x = a.stride_x;
    r.stride_y = a.stride_y;
  }
  r.scale = a.scale;
  r.causal = a.causal;
  r.causal_offset = a.causal_offset;
  return r;
}

/// Rows of the call over all its batch items (what the kernels' grids cover).
inline int64_t total_rows(const core::SoftmaxArgs& a) { return a.rows * a.batch; }

/// Bytes of one vector access: the widest global load a thread can issue.
constexpr int kVectorBytes = 16;
template <class T>
constexpr int kVectorElems = kVectorBytes / static_cast<int>(sizeof(T));

/// True when the 16-byte path can serve the call: both pointers 16-byte aligned and the
/// row strides, the batch strides and the row length multiples of the vector width, so
/// that every vector of every row of every item is aligned and whole. Otherwise rungs
/// take their scalar path.
inline bool vector_path_ok(const core::SoftmaxArgs& a) {
  const int64_t v = kVectorBytes / static_cast<int64_t>(core::dtype_size(a.dtype));
  const auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % kVectorBytes == 0; };
  const bool items_aligned = a.batch <= 1 || (a.stride_x % v == 0 && a.stride_y % v == 0);
  return aligned(a.x) && aligned(a.y) && a.cols % v == 0 && a.ldx % v == 0 && a.ldy % v == 0 && items_aligned;
}

/// Elements a thread moves per access for this call: a 16-byte vector's worth on the
/// vector path, else 1.
inline int64_t vector_elems(const core::SoftmaxArgs& a) {
  return vector_path_ok(a) ? kVectorBytes / static_cast<int64_t>(core::dtype_size(a.dtype)) : 1;
}

using gpu::with_storage_type;

/// Calls fn(T{}, std::integral_constant<int, V>{}) with T the call's storage type and V
/// the elements per access: kVectorElems<T> where the 16-byte path serves the call
/// (vector_path_ok), 1 otherwise. Rungs instantiate their kernels <T, V> through it.
template <class Fn>
void with_storage_and_width(const core::SoftmaxArgs& a, Fn&& fn) {
  const bool vec = vector_path_ok(a);
  with_storage_type(a.dtype, [&](auto tag) {
    using T = decltype(tag);
    if (vec)
      fn(tag, std::integral_constant<int, kVectorElems<T>>{});
    else
      fn(tag, std::integral_constant<int, 1>{});
  });
}

/// Calls fn(std::integral_constant<int, I>{}) with I == index, 0 <= index < N: a choice
/// made at run time among the N entries of a constexpr configuration table, each of
/// which is instantiated.
template <class Fn, size_t... I>
void with_index_impl(int index, Fn& fn, std::index_sequence<I...>) {
  ((index == static_cast<int>(I) ? fn(std::integral_constant<int, static_cast<int>(I)>{}) : void()), ...);
}
template <int N, class Fn>
void with_index(int index, Fn&& fn) {
  with_index_impl(index, fn, std::make_index_sequence<N>{});
}

// Configurations are structs with named fields, written as designated initializers
// ({.lanes = 8, .packs = 2}). nvcc in C++17 mode zero-initializes a member skipped in the
// middle of such an initializer instead of giving it its default (trailing members get
// their defaults): name every member up to the last one given. The configs' valid()
// checks reject the zeros this would leave.

/// Entry kIndex of the constexpr array kTable as an object of its own, so that it can be
/// the argument of a `const Config&` template parameter (which may not name an element
/// of an array).
template <const auto& kTable, int kIndex>
inline constexpr auto kTableEntry = kTable[kIndex];

/// Grid sizes stay below this; kernels loop (grid-stride) over what remains, so any
/// number of rows is served.
constexpr int64_t kMaxGridBlocks = int64_t(1) << 20;

/// Launches `kernel` with one block of `threads` threads per row (grid-stride beyond
/// kMaxGridBlocks rows).
template <class T>
void launch_block_per_row(void (*kernel)(RowArgs<T>), int threads, const core::SoftmaxArgs& a, const CudaContext& ctx) {
  const int64_t blocks = std::min(total_rows(a), kMaxGridBlocks);
  kernel<<<static_cast<unsigned>(blocks), threads, 0, ctx.stream>>>(typed_args<T>(a));
  GK_LAUNCH_CHECK();
}

// ---------------------------------------------------------------------------------
// Device side: arithmetic with the special values above.
// ---------------------------------------------------------------------------------

constexpr float kLog2e = 1.4426950408889634f;

/// max that keeps NaN (fmaxf returns the other operand).
__device__ __forceinline__ float nan_max(float a, float b) { return (a > b || a != a) ? a : b; }
/// min that keeps NaN.
__device__ __forceinline__ float nan_min(float a, float b) { return (a < b || a != a) ? a : b; }

/// 2^v with the hardware approximation (relative error ~2^-22, far below the f32 bound
/// of 1e-5): one MUFU.EX2 instead of the ~10-instruction accurate exp2f. 2^-inf = 0.
__device__ __forceinline__ float fast_exp2(float v) { return arch::ex2_approx(v); }

/// Statistics of part of a row: its max and the sum of exp(x - max) over it.
/// sum == 0 exactly when max == -inf (the part holds only -inf, or nothing).
struct RowStats {
  float max;
  float sum;
};

__device__ __forceinline__ RowStats empty_stats() { return {-INFINITY, 0.0f}; }

/// The part's sum rescaled to a larger max. A part of only -inf contributes 0 even
/// when the new max is -inf too (where exp(max - new_max) would be NaN).
__device__ __forceinline__ float rescaled_sum(RowStats s, float new_max) {
  return s.sum == 0.0f ? 0.0f : s.sum * fast_exp2((s.max - new_max) * kLog2e);
}

/// Statistics of the union of two parts. Symmetric bit for bit (float addition
/// commutes), so every lane of a butterfly reduction ends with identical values.
__device__ __forceinline__ RowStats merge(RowStats a, RowStats b) {
  const float m = nan_max(a.max, b.max);
  return {m, rescaled_sum(a, m) + rescaled_sum(b, m)};
}

/// Adds n values to running statistics: one rescale per call, one exp per value
/// (the online softmax, applied a vector at a time).
template <int N>
__device__ __forceinline__ RowStats add_values(RowStats s, const float (&v)[N]) {
  float m = s.max;
#pragma unroll
  for (int i = 0; i < N; ++i) m = nan_max(m, v[i]);
  if (m == -INFINITY) return s;  // nothing but -inf so far
  float sum = rescaled_sum(s, m);
#pragma unroll
  for (int i = 0; i < N; ++i) sum += fast_exp2((v[i] - m) * kLog2e);
  return {m, sum};
}

__device__ __forceinline__ RowStats shuffle_xor(RowStats s, int lane_mask) {
  return {gpu::shfl_xor(s.max, lane_mask), gpu::shfl_xor(s.sum, lane_mask)};
}

/// Merges the statistics of kWidth consecutive lanes (a power of two up to the warp
/// size); every lane of the group gets the result. All lanes of the warp must call.
template <int kWidth>
__device__ __forceinline__ RowStats group_reduce(RowStats s) {
  static_assert(kWidth >= 1 && kWidth <= gpu::kWarpSize && (kWidth & (kWidth - 1)) == 0,
                "a lane group is a power of two no wider than the warp");
#pragma unroll
  for (int offset = kWidth / 2; offset > 0; offset /= 2) s = merge(s, shuffle_xor(s, offset));
  return s;
}

template <int kWidth>
__device__ __forceinline__ float group_max(float v) {
#pragma unroll
  for (int offset = kWidth / 2; offset > 0; offset /= 2) v = nan_max(v, gpu::shfl_xor(v, offset));
  return v;
}

template <int kWidth>
__device__ __forceinline__ float group_sum(float v) {
#pragma unroll
  for (int offset = kWidth / 2; offset > 0; offset /= 2) v += gpu::shfl_xor(v, offset);
  return v;
}

/// Block-wide all-reduce through `scratch` (kThreads / kWarpSize entries), one
/// __syncthreads. Callers alternate between two scratch arrays on consecutive calls:
/// the barrier of call i+1 then orders call i's reads before call i+2's writes.
template <int kThreads, class Value, class WarpReduce>
__device__ __forceinline__ Value block_allreduce(Value v, Value* scratch, Value identity, WarpReduce warp_reduce) {
  constexpr int kWarps = kThreads / gpu::kWarpSize;
  static_assert(kThreads % gpu::kWarpSize == 0, "a block is whole warps");
  static_assert(kWarps <= gpu::kWarpSize, "one warp reduces the per-warp partials");
  v = warp_reduce(v);
  if constexpr (kWarps == 1) {
    return v;
  } else {
    if (gpu::lane_id() == 0) scratch[gpu::warp_id()] = v;
    __syncthreads();
    // Every warp reduces the kWarps partials itself (broadcast reads), so no second
    // barrier is needed to hand the result out.
    return warp_reduce(gpu::lane_id() < kWarps ? scratch[gpu::lane_id()] : identity);
  }
}

template <int kThreads>
__device__ __forceinline__ RowStats block_reduce(RowStats s, RowStats* scratch) {
  return block_allreduce<kThreads>(s, scratch, empty_stats(),
                                   [](RowStats v) { return group_reduce<gpu::kWarpSize>(v); });
}
template <int kThreads>
__device__ __forceinline__ float block_max(float v, float* scratch) {
  return block_allreduce<kThreads>(v, scratch, -INFINITY, [](float u) { return group_max<gpu::kWarpSize>(u); });
}
template <int kThreads>
__device__ __forceinline__ float block_sum(float v, float* scratch) {
  return block_allreduce<kThreads>(v, scratch, 0.0f, [](float u) { return group_sum<gpu::kWarpSize>(u); });
}

// ---------------------------------------------------------------------------------
// Packs: V consecutive elements moved as one access.
// ---------------------------------------------------------------------------------

template <class T, int V>
struct alignas(sizeof(T) * V) Pack {
  T v[V];
};

/// Streaming hint: data read or written once goes through the caches evict-first
/// (ld/st.global.cs), leaving L2 to what is reused.
enum class Cache { Default, Streaming };

template <class T, int V, Cache kCache = Cache::Streaming>
__device__ __forceinline__ Pack<T, V> load_pack(const T* p) {
  Pack<T, V> r;
  if constexpr (sizeof(r) == 16) {
    uint4 u;
#if defined(GPUKERN_CUDA)
    if constexpr (kCache == Cache::Streaming)
      u = __ldcs(reinterpret_cast<const uint4*>(p));
    else
      u = *reinterpret_cast<const uint4*>(p);
#else
    u = *reinterpret_cast<const uint4*>(p);
#endif
    memcpy(&r, &u, sizeof(r));
  } else {
#pragma unroll
    for (int i = 0; i < V; ++i) r.v[i] = p[i];
  }
  return r;
}

template <class T, int V, Cache kCache = Cache::Streaming>
__device__ __forceinline__ void store_pack(T* p, const Pack<T, V>& r) {
  if constexpr (sizeof(r) == 16) {
    uint4 u;
    memcpy(&u, &r, sizeof(r));
#if defined(GPUKERN_CUDA)
    if constexpr (kCache == Cache::Streaming)
      __stcs(reinterpret_cast<uint4*>(p), u);
    else
      *reinterpret_cast<uint4*>(p) = u;
#else
    *reinterpret_cast<uint4*>(p) = u;
#endif
  } else {
#pragma unroll
    for (int i = 0; i < V; ++i) p[i] = r.v[i];
  }
}

/// A pack of -inf, built from 32-bit words when the pack is made of them.
template <class T, int V>
__device__ __forceinline__ Pack<T, V> neg_inf_pack() {
  Pack<T, V> p;
  if constexpr (sizeof(T) == 2 && V % 2 == 0) {
    const T one = gpu::from_float<T>(-INFINITY);
    uint16_t bits;
    memcpy(&bits, &one, 2);
    const uint32_t word = uint32_t(bits) | (uint32_t(bits) << 16);
    uint32_t w[V / 2];
#pragma unroll
    for (int i = 0; i < V / 2; ++i) w[i] = word;
    memcpy(&p, w, sizeof(p));
  } else {
#pragma unroll
    for (int i = 0; i < V; ++i) p.v[i] = gpu::from_float<T>(-INFINITY);
  }
  return p;
}

/// Makes the compiler forget what a pack holds (an empty asm that "may change" each
/// word), so it converts 16-bit elements to f32 again where they are used instead of
/// keeping every converted copy alive from the sum pass to the output pass (which took
/// twice the registers and spilled).
template <class T, int V>
__device__ __forceinline__ void launder(Pack<T, V>& p) {
  static_assert(sizeof(p) % 4 == 0, "launder works on 32-bit words");
  uint32_t w[sizeof(p) / 4];
  memcpy(w, &p, sizeof(p));
#pragma unroll
  for (size_t i = 0; i < sizeof(p) / 4; ++i) gpu::forget_value(w[i]);
  memcpy(&p, w, sizeof(p));
}

template <class T, int V>
__device__ __forceinline__ void unpack(const Pack<T, V>& p, float (&out)[V]) {
#pragma unroll
  for (int i = 0; i < V; ++i) out[i] = gpu::to_float(p.v[i]);
}

/// Max of a pack (kMin: its min, for negative scales), NaN kept. 16-bit packs compare in
/// their own type two at a time (exact: the max or min of representable values is
/// representable). Besides halving the compares, this keeps the compiler from converting
/// every element to f32 up front and holding the converted copies alive until the output
/// pass (which spilled).
template <bool kMin, class T, int V>
__device__ __forceinline__ float pack_extreme(const Pack<T, V>& p) {
  const auto pick = [](float a, float b) { return kMin ? nan_min(a, b) : nan_max(a, b); };
#if defined(GPUKERN_CUDA)
  if constexpr (!std::is_same_v<T, float> && V % 2 == 0) {
    using T2 = std::conditional_t<std::is_same_v<T, gpu::half_t>, __half2, __nv_bfloat162>;
    T2 m;
    memcpy(&m, &p.v[0], sizeof(T2));
#pragma unroll
    for (int i = 2; i < V; i += 2) {
      T2 u;
      memcpy(&u, &p.v[i], sizeof(T2));
      if constexpr (kMin)
        m = __hmin2_nan(m, u);
      else
        m = __hmax2_nan(m, u);
    }
    return pick(gpu::to_float(m.x), gpu::to_float(m.y));
  } else
#endif
  {
    float m = kMin ? INFINITY : -INFINITY;
#pragma unroll
    for (int i = 0; i < V; ++i) m = pick(m, gpu::to_float(p.v[i]));
    return m;
  }
}
/// pack_extreme's max and min.
template <class T, int V>
__device__ __forceinline__ float pack_max(const Pack<T, V>& p) {
  return pack_extreme<false>(p);
}
template <class T, int V>
__device__ __forceinline__ float pack_min(const Pack<T, V>& p) {
  return pack_extreme<true>(p);
}

/// The output of one element given the row's statistics (logs precomputed per row):
/// softmax  y = 2^((x - max) * log2e - log2(sum))   (FADD, FFMA, EX2)
/// log      y = (x - max) - ln(sum)
/// x - max first: it is exact near the max, where the large outputs are, whatever the
/// magnitude of the logits (folding max into one constant lost ~1e-4 at |x| ~ 1000).
struct OutputScale {
  float max, log_sum, log2_sum;
  bool log;
};

__device__ __forceinline__ OutputScale output_scale(RowStats row, bool log) {
  return {row.max, logf(row.sum), log2f(row.sum), log};
}

__device__ __forceinline__ float output_value(float x, const OutputScale& o) {
  const float shifted = x - o.max;
  return o.log ? shifted - o.log_sum : fast_exp2(fmaf(shifted, kLog2e, -o.log2_sum));
}

/// Writes into `out` the outputs of a pack of inputs. (An out-parameter, not a returned
/// pack: returning it changed the 16-bit kernels' machine code.)
template <class T, int V>
__device__ __forceinline__ void output_pack(const Pack<T, V>& in, const OutputScale& o, Pack<T, V>& out) {
  float v[V];
  unpack(in, v);
#pragma unroll
  for (int k = 0; k < V; ++k) out.v[k] = gpu::from_float<T>(output_value(v[k], o));
}

// ---------------------------------------------------------------------------------
// Scale and mask (RowMask): pack vi of a row covers elements [vi * V, vi * V + V). The
// kernels read only the packs that hold a kept element (RowMask::read_vecs); a pack that
// straddles the end of the kept columns is read whole (its masked elements are in the
// same 16 bytes) and its masked elements are set to -inf for the statistics and to the
// fill value on output. Packs past the kept ones are written with the fill, never read.
// ---------------------------------------------------------------------------------

/// True when pack vi holds a masked element. Kernels are instantiated with and without
/// these checks (kMasked), because they cost registers (doubling them in some 16-bit
/// layouts) that plain calls should not pay. Without them every element counts as kept
/// and the packs past a row's end, which read as -inf, must stay -inf when scaled: so the
/// unmasked kernels serve calls without a causal mask whose scale is positive (with_mask).
template <bool kMasked, int V>
__device__ __forceinline__ bool pack_masked(int64_t vi, const RowMask& m) {
  return kMasked && (vi + 1) * V > m.kept;
}

/// Calls fn(std::bool_constant<M>{}) with M true where the call needs the masked kernels:
/// a causal mask, or a scale that is not positive (-inf times it is not -inf).
template <class Fn>
void with_mask(const core::SoftmaxArgs& a, Fn&& fn) {
  if (a.causal || !(a.scale > 0.0f))
    fn(std::true_type{});
  else
    fn(std::false_type{});
}

/// The values the statistics see for pack vi: scale * x in f32, -inf where masked.
template <bool kMasked, class T, int V>
__device__ __forceinline__ void row_values(const Pack<T, V>& p, int64_t vi, const RowMask& m, float (&v)[V]) {
  unpack(p, v);
#pragma unroll
  for (int i = 0; i < V; ++i) v[i] *= m.scale;
  if (pack_masked<kMasked, V>(vi, m)) {
#pragma unroll
    for (int i = 0; i < V; ++i)
      if (vi * V + i >= m.kept) v[i] = -INFINITY;
  }
}

/// Max of row_values(p, vi, m), NaN kept. A whole pack takes the storage type's max (or,
/// under a negative scale, its min: rounding is monotonic, so max(s x) = s max(x) for
/// s >= 0 and s min(x) for s < 0); only the pack straddling the end of the kept columns
/// goes element by element. (Masking a copy of every pack instead doubled the registers
/// of the 16-bit warp_row kernels.)
template <bool kMasked, class T, int V>
__device__ __forceinline__ float row_pack_max(const Pack<T, V>& p, int64_t vi, const RowMask& m) {
  if constexpr (!kMasked) return pack_max(p) * m.scale;  // a positive scale (with_mask)
  if (vi * V >= m.kept) return -INFINITY;                // no kept element
  if (!pack_masked<kMasked, V>(vi, m)) return (m.scale < 0.0f ? pack_min(p) : pack_max(p)) * m.scale;
  float mx = -INFINITY;
#pragma unroll
  for (int i = 0; i < V; ++i)
    if (vi * V + i < m.kept) mx = nan_max(mx, gpu::to_float(p.v[i]) * m.scale);
  return mx;
}

/// Sets the masked elements of output pack vi to the fill value.
template <bool kMasked, class T, int V>
__device__ __forceinline__ void mask_output(Pack<T, V>& out, int64_t vi, const RowMask& m) {
  if (pack_masked<kMasked, V>(vi, m)) {
    const T fill = gpu::from_float<T>(m.fill());
#pragma unroll
    for (int i = 0; i < V; ++i)
      if (vi * V + i >= m.kept) out.v[i] = fill;
  }
}

/// A pack of the fill value (for packs with no kept element).
template <class T, int V>
__device__ __forceinline__ Pack<T, V> fill_pack(const RowMask& m) {
  if (m.log) return neg_inf_pack<T, V>();
  Pack<T, V> p;
#pragma unroll
  for (int i = 0; i < V; ++i) p.v[i] = gpu::from_float<T>(0.0f);
  return p;
}

/// Adds the values of pack vi (row_values) to running statistics.
template <bool kMasked, class T, int V>
__device__ __forceinline__ RowStats add_pack(RowStats s, const Pack<T, V>& p, int64_t vi, const RowMask& m) {
  float v[V];
  row_values<kMasked>(p, vi, m, v);
  return add_values(s, v);
}

/// The outputs of pack vi of a row: output_value of the scaled inputs, the fill where masked.
template <bool kMasked, class T, int V>
__device__ __forceinline__ void output_pack(const Pack<T, V>& in, int64_t vi, const RowMask& m, const OutputScale& o,
                                            Pack<T, V>& out) {
  float v[V];
  unpack(in, v);
#pragma unroll
  for (int k = 0; k < V; ++k) out.v[k] = gpu::from_float<T>(output_value(v[k] * m.scale, o));
  mask_output<kMasked>(out, vi, m);
}

// ---------------------------------------------------------------------------------
// A thread's share of one row held in registers: S packs of V elements, pack k at
// vector index first + k * stride (so that each of the S loads is coalesced across
// the threads sharing the row). Vectors at or beyond load's `end` (the packs holding a
// kept element, RowMask::read_vecs) read as -inf, which the statistics ignore; store
// writes every vector below its own `end` (the row's), masked ones with the fill.
// ---------------------------------------------------------------------------------

template <class T, int V, int S, bool kExpsInFloat = false>
struct RowFragment {
  static constexpr bool kIsF32 = std::is_same_v<T, float>;
  /// 16-bit storage with kExpsInFloat keeps the exps in an f32 array beside the packs
  /// (S x V more registers): one exp per element instead of two.
  static constexpr bool kSeparateExps = kExpsInFloat && !kIsF32;
  Pack<T, V> pack[S];
  float exps[kSeparateExps ? S : 1][kSeparateExps ? V : 1];
  // Softmax (not log) keeps exp(x - thread max) -- in place of x for f32, in `exps`
  // for 16-bit with kExpsInFloat: the output is then one multiply instead of an exp.
  bool kept = false;

  /// kCache: the cache hint of the loads (and of store()'s stores), streaming by default.
  template <Cache kCache = Cache::Streaming>
  __device__ __forceinline__ void load(const T* row, int64_t first, int64_t stride, int64_t end) {
    const Pack<T, V> neg_inf = neg_inf_pack<T, V>();
#pragma unroll
    for (int k = 0; k < S; ++k) {
      const int64_t vi = first + k * stride;
      // Whole-pack assignments (not element by element) keep a pack in one group of
      // registers; per-element fills made the compiler split 16-bit packs and spill.
      pack[k] = neg_inf;
      if (vi < end) pack[k] = load_pack<T, V, kCache>(row + vi * V);
    }
  }

  /// This thread's statistics over the values row_values gives (pack k is vector
  /// first + k * stride of what `mask` describes); with keep_exp, also keeps the exps
  /// (see `kept`), or zeros when the thread saw only -inf.
  template <bool kMasked>
  __device__ __forceinline__ RowStats stats(bool keep_exp, int64_t first, int64_t stride, const RowMask& mask) {
    // The mask is checked against pack k's offset k * stride from this thread's first
    // vector (the mask shifted there): see thread_mask.
    const RowMask from_first = thread_mask(mask, first);
    // Unmasked (a positive scale, with_mask): the max of the stored values, scaled once.
    float m = -INFINITY;
#pragma unroll
    for (int k = 0; k < S; ++k)
      m = nan_max(m, kMasked ? row_pack_max<kMasked>(pack[k], k * stride, from_first) : pack_max(pack[k]));
    if constexpr (!kMasked) m *= mask.scale;
    kept = keep_exp && (kIsF32 || kSeparateExps);
    if (m == -INFINITY) {
      if (kept) {
#pragma unroll
        for (int k = 0; k < S; ++k)
#pragma unroll
          for (int i = 0; i < V; ++i) set_exp(k, i, 0.0f);
      }
      return empty_stats();
    }
    float sum = 0.0f;
#pragma unroll
    for (int k = 0; k < S; ++k) {
      float v[V];
      row_values<kMasked>(pack[k], k * stride, from_first, v);
#pragma unroll
      for (int i = 0; i < V; ++i) {
        const float e = fast_exp2((v[i] - m) * kLog2e);
        sum += e;
        if (kept) set_exp(k, i, e);
      }
    }
    return {m, sum};
  }

  /// Writes the outputs of this thread's packs below `end` (masked elements and packs
  /// get the fill value). `mine` is what stats() returned, `row` the statistics of the
  /// whole row.
  template <bool kMasked, Cache kCache = Cache::Streaming>
  __device__ __forceinline__ void store(T* row_out, int64_t first, int64_t stride, int64_t end, RowStats mine,
                                        RowStats row, const RowMask& mask) const {
    // Compile-time false where nothing can be kept, so that the compiler does not carry
    // the kept branch (its temporaries pushed 16-bit kernels into spills).
    const bool use_kept = (kIsF32 || kSeparateExps) && kept;
    const OutputScale o = output_scale(row, mask.log);
    // kept: y = e * 2^((m_thread - max) log2e) / sum. A thread of only -inf holds e = 0
    // and gets 0 (finite row max) or 0 * NaN = NaN (row of all -inf), as required.
    const float factor = fast_exp2((mine.max - row.max) * kLog2e) / row.sum;
    const RowMask from_first = thread_mask(mask, first);
#pragma unroll
    for (int k = 0; k < S; ++k) {
      const int64_t vi = first + k * stride;
      if (vi >= end) continue;
      Pack<T, V> in = pack[k];
      if constexpr (!kIsF32 && sizeof(in) % 4 == 0) launder(in);
      Pack<T, V> out;
#pragma unroll
      for (int i = 0; i < V; ++i) {
        const float y = use_kept ? kept_exp(k, i) * factor : output_value(gpu::to_float(in.v[i]) * mask.scale, o);
        out.v[i] = gpu::from_float<T>(y);
      }
      mask_output<kMasked>(out, k * stride, from_first);
      store_pack<T, V, kCache>(row_out + vi * V, out);
    }
  }

 private:
  /// `mask` seen from vector `first` (this thread's pack 0): the masked kernels then test
  /// pack k at offset k * stride, where the stride is the launch's thread count (a
  /// constant once inlined), so the per-element tests compare one 64-bit bound against
  /// constants. Testing at first + k * stride kept a 64-bit index a pack alive from the
  /// statistics to the stores, which made the masked long-row kernels spill.
  static __device__ __forceinline__ RowMask thread_mask(const RowMask& mask, int64_t first) {
    return mask.shifted(first * V);
  }
  __device__ __forceinline__ void set_exp(int k, int i, float e) {
    if constexpr (kIsF32)
      pack[k].v[i] = e;
    else if constexpr (kSeparateExps)
      exps[k][i] = e;
  }
  __device__ __forceinline__ float kept_exp(int k, int i) const {
    if constexpr (kIsF32)
      return pack[k].v[i];
    else if constexpr (kSeparateExps)
      return exps[k][i];
    else
      return 0.0f;
  }
};

}  // namespace gpukern::cuda::softmax
