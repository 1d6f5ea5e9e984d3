// Shared pieces of the SIMT SGEMM rungs: the problem as the kernels see it, operand
// access templated on the storage layout, the epilogue, tile loaders, and the
// host-side helpers every launcher uses (layout dispatch, grid and alignment checks).
//
// Layout vocabulary. Row-major C = alpha * op(A) * op(B) + beta * C with op(A) m x k,
// op(B) k x n. An operand is addressed by (mn, kk): A by (row, kk), B by (col, kk).
// Its storage is either "K-contiguous" (A not transposed, B transposed: x[mn*ld + kk])
// or "MN-contiguous" (A transposed, B not transposed: x[kk*ld + mn]). Describing A and
// B the same way lets one loader serve both operands and all four transpose pairs.
#pragma once

#include "cuda/context.cuh"

#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

namespace gpukern::cuda::gemm {

using core::ceil_div;

/// A validated f32 call in the kernels' index types (dimensions fit in int; offsets
/// are computed in 64 bits).
struct SgemmProblem {
  int m = 0, n = 0, k = 0;
  float alpha = 1.0f, beta = 0.0f;
  const float* a = nullptr;
  int64_t lda = 0;
  const float* b = nullptr;
  int64_t ldb = 0;
  float* c = nullptr;
  int64_t ldc = 0;
  bool trans_a = false, trans_b = false;
};

inline SgemmProblem make_problem(const core::GemmArgs& args) {
  SgemmProblem p;
  p.m = static_cast<int>(args.m);
  p.n = static_cast<int>(args.n);
  p.k = static_cast<int>(args.k);
  p.alpha = args.alpha;
  p.beta = args.beta;
  p.a = static_cast<const float*>(args.a);
  p.lda = args.lda;
  p.b = static_cast<const float*>(args.b);
  p.ldb = args.ldb;
  p.c = static_cast<float*>(args.c);
  p.ldc = args.ldc;
  p.trans_a = args.trans_a;
  p.trans_b = args.trans_b;
  return p;
}

/// Storage of an operand: A is K-contiguous unless transposed, B is K-contiguous when transposed.
template <bool kTransA>
constexpr bool a_is_k_contiguous = !kTransA;
template <bool kTransB>
constexpr bool b_is_k_contiguous = kTransB;

/// Element (mn, kk) of an operand stored K- or MN-contiguous.
template <bool kKContiguous>
__device__ __forceinline__ float operand_at(const float* x, int64_t ld, int mn, int kk) {
  return kKContiguous ? x[static_cast<int64_t>(mn) * ld + kk] : x[static_cast<int64_t>(kk) * ld + mn];
}

/// op(A)(row, kk) and op(B)(kk, col).
template <bool kTransA>
__device__ __forceinline__ float load_a(const SgemmProblem& p, int row, int kk) {
  return operand_at<a_is_k_contiguous<kTransA>>(p.a, p.lda, row, kk);
}
template <bool kTransB>
__device__ __forceinline__ float load_b(const SgemmProblem& p, int kk, int col) {
  return operand_at<b_is_k_contiguous<kTransB>>(p.b, p.ldb, col, kk);
}

/// C(row, col) = alpha * acc + beta * C(row, col). beta == 0 never reads C, which may
/// hold NaN or be uninitialized (BLAS semantics).
__device__ __forceinline__ void store_c(const SgemmProblem& p, int row, int col, float acc) {
  float* dst = p.c + static_cast<int64_t>(row) * p.ldc + col;
  *dst = p.beta == 0.0f ? p.alpha * acc : p.alpha * acc + p.beta * *dst;
}

/// Four consecutive outputs of one row starting at (row, col). `vector_ok` says C and
/// ldc allow a 16-byte access here and all four columns are inside C; otherwise the
/// columns are written one by one, each predicated on col < n.
__device__ __forceinline__ void store_c4(const SgemmProblem& p, int row, int col, float4 acc, bool vector_ok) {
  if (row >= p.m) return;
  float* dst = p.c + static_cast<int64_t>(row) * p.ldc + col;
  if (vector_ok && col + 3 < p.n) {
    float4 out = make_float4(p.alpha * acc.x, p.alpha * acc.y, p.alpha * acc.z, p.alpha * acc.w);
    if (p.beta != 0.0f) {
      const float4 old = *reinterpret_cast<const float4*>(dst);
      out.x += p.beta * old.x;
      out.y += p.beta * old.y;
      out.z += p.beta * old.z;
      out.w += p.beta * old.w;
    }
    *reinterpret_cast<float4*>(dst) = out;
    return;
  }
  const float v[4] = {acc.x, acc.y, acc.z, acc.w};
#pragma unroll
  for (int j = 0; j < 4; ++j)
    if (col + j < p.n) dst[j] = p.beta == 0.0f ? p.alpha * v[j] : p.alpha * v[j] + p.beta * dst[j];
}

/// Copies the tile of an operand with logical extent [mn0, mn0 + kTileMN) x [k0, k0 + kTileK)
/// into shared memory with scalar loads, zero-filling everything outside
/// [0, mn_size) x [0, k_size). Consecutive threads walk the contiguous storage direction
/// so the global reads coalesce; `store(mn, kk, value)` places the element (the caller
/// picks the shared layout).
template <int kTileMN, int kTileK, int kThreads, bool kKContiguous, class Store>
__device__ __forceinline__ void load_tile_scalar(const float* x, int64_t ld, int mn0, int k0, int mn_size, int k_size,
                                                 Store store) {
  constexpr int kElements = kTileMN * kTileK;
  static_assert(kElements % kThreads == 0, "every thread must copy the same number of elements of a tile");
#pragma unroll
  for (int i = 0; i < kElements / kThreads; ++i) {
    const int idx = static_cast<int>(threadIdx.x) + i * kThreads;
    const int mn = kKContiguous ? idx / kTileK : idx % kTileMN;
    const int kk = kKContiguous ? idx % kTileK : idx / kTileMN;
    const int g_mn = mn0 + mn, g_k = k0 + kk;
    const float v = (g_mn < mn_size && g_k < k_size) ? operand_at<kKContiguous>(x, ld, g_mn, g_k) : 0.0f;
    store(mn, kk, v);
  }
}

/// Same tile, read with 16-byte loads along the contiguous direction and written
/// K-major into shared memory: smem[kk * smem_ld + mn]. Needs x 16-byte aligned and
/// ld % 4 == 0 (the rungs using it decline otherwise). A group of four that crosses
/// the edge of the operand is read element by element, never past its last element.
/// K-contiguous operands are transposed on the way (four scalar shared stores);
/// MN-contiguous ones keep their order (one 16-byte shared store).
template <int kTileMN, int kTileK, int kThreads, bool kKContiguous>
__device__ __forceinline__ void load_tile_vec4_kmajor(const float* x, int64_t ld, int mn0, int k0, int mn_size,
                                                      int k_size, float* smem, int smem_ld) {
  constexpr int kContig = kKContiguous ? kTileK : kTileMN;  // extent along contiguous storage
  constexpr int kOther = kKContiguous ? kTileMN : kTileK;
  static_assert(kContig % 4 == 0, "16-byte loads need the contiguous tile extent to be a multiple of 4");
  constexpr int kGroups = kContig / 4 * kOther;
  static_assert(kGroups % kThreads == 0, "every thread must copy the same number of 16-byte groups");
#pragma unroll
  for (int i = 0; i < kGroups / kThreads; ++i) {
    const int idx = static_cast<int>(threadIdx.x) + i * kThreads;
    const int c4 = (idx % (kContig / 4)) * 4;  // offset along the contiguous direction
    const int o = idx / (kContig / 4);         // offset along the other direction
    const int g_c = (kKContiguous ? k0 : mn0) + c4;
    const int g_o = (kKContiguous ? mn0 : k0) + o;
    const int c_size = kKContiguous ? k_size : mn_size;
    const int o_size = kKContiguous ? mn_size : k_size;
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (g_o < o_size) {
      const float* src = x + static_cast<int64_t>(g_o) * ld + g_c;
      if (g_c + 3 < c_size) {
        v = *reinterpret_cast<const float4*>(src);
      } else {
        if (g_c + 0 < c_size) v.x = src[0];
        if (g_c + 1 < c_size) v.y = src[1];
        if (g_c + 2 < c_size) v.z = src[2];
      }
    }
    if constexpr (kKContiguous) {
      smem[(c4 + 0) * smem_ld + o] = v.x;
      smem[(c4 + 1) * smem_ld + o] = v.y;
      smem[(c4 + 2) * smem_ld + o] = v.z;
      smem[(c4 + 3) * smem_ld + o] = v.w;
    } else {
      *reinterpret_cast<float4*>(&smem[o * smem_ld + c4]) = v;
    }
  }
}

// ---------------------------------------------------------------- host side

/// Calls f(std::bool_constant<trans_a>, std::bool_constant<trans_b>) so launchers
/// instantiate their kernel for the call's layout.
template <class F>
void dispatch_layout(bool trans_a, bool trans_b, F&& f) {
  if (trans_a) {
    if (trans_b)
      f(std::true_type{}, std::true_type{});
    else
      f(std::true_type{}, std::false_type{});
  } else {
    if (trans_b)
      f(std::false_type{}, std::true_type{});
    else
      f(std::false_type{}, std::false_type{});
  }
}

/// The SIMT kernels index with int: dimensions must fit.
inline core::Verdict check_int_dims(const core::GemmArgs& args) {
  constexpr int64_t kMax = std::numeric_limits<int>::max();
  if (args.m > kMax || args.n > kMax || args.k > kMax)
    return {core::Decline::ShapeLimit, "a dimension exceeds 2^31 - 1"};
  return {};
}

/// A 2-D grid of (x, y) blocks must respect the launch limits (y <= 65535).
inline core::Verdict check_grid(int64_t blocks_x, int64_t blocks_y) {
  if (blocks_x > std::numeric_limits<int>::max() || blocks_y > 65535)
    return {core::Decline::ShapeLimit, "the problem needs more thread blocks than one launch allows"};
  return {};
}

/// The grid of a rung that covers C with Tile::kBlockM x Tile::kBlockN block tiles of
/// Tile::kThreads threads, one block per tile: x over the columns, y over the rows.
template <class Tile>
core::Verdict check_block_tile_grid(const core::GemmArgs& args) {
  return check_grid(ceil_div<int64_t>(args.n, Tile::kBlockN), ceil_div<int64_t>(args.m, Tile::kBlockM));
}

/// Launches such a rung's kernel on that grid: kernel_for(trans_a, trans_b) (called with
/// std::bool_constant values, see dispatch_layout) names the kernel instantiated for the
/// call's layout; it receives p and then `extra`.
template <class Tile, class KernelFor, class... Extra>
void launch_block_tiles(const SgemmProblem& p, const CudaContext& ctx, KernelFor kernel_for, Extra... extra) {
  const dim3 grid(ceil_div(p.n, Tile::kBlockN), ceil_div(p.m, Tile::kBlockM));
  dispatch_layout(p.trans_a, p.trans_b,
                  [&](auto ta, auto tb) { kernel_for(ta, tb)<<<grid, Tile::kThreads, 0, ctx.stream>>>(p, extra...); });
  GK_LAUNCH_CHECK();
}

inline bool aligned16(const void* ptr) { return reinterpret_cast<uintptr_t>(ptr) % 16 == 0; }

/// Why 16-byte loads of A and B are not possible for this call ("" when they are).
inline core::Verdict check_vec4_operands(const core::GemmArgs& args) {
  if (!aligned16(args.a)) return {core::Decline::Misaligned, "A not 16-byte aligned"};
  if (args.lda % 4 != 0) return {core::Decline::Misaligned, "lda % 4 != 0"};
  if (!aligned16(args.b)) return {core::Decline::Misaligned, "B not 16-byte aligned"};
  if (args.ldb % 4 != 0) return {core::Decline::Misaligned, "ldb % 4 != 0"};
  return {};
}

/// 16-byte stores of C are used when this holds (otherwise the epilogue writes scalars).
inline bool c_vector_ok(const SgemmProblem& p) { return aligned16(p.c) && p.ldc % 4 == 0; }

}  // namespace gpukern::cuda::gemm
