// Pieces shared by the tensor-core rungs: the call as the kernels see it, operand
// majorness, the C epilogue (alpha/beta, C in f32 or the input type), the L2-friendly
// tile raster, and the host-side checks every launcher repeats.
//
// Layout vocabulary (the same as the SIMT rungs'). Row-major C = alpha*op(A)*op(B) +
// beta*C. An operand is "K-major" when consecutive K indices are adjacent in memory
// (A not transposed, B transposed) and "MN-major" otherwise (A transposed: M adjacent;
// B not transposed: N adjacent). Tensor-core instructions name their operands this way.
#pragma once

#include "core/decompose.hpp"
#include "cuda/context.cuh"
#include "cuda/gemm/epilogue.cuh"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

namespace gpukern::cuda::gemm {

using core::ceil_div;

/// A validated call in kernel index types: dimensions fit in int (checked by
/// tc_shape_reason), offsets are computed in 64 bits.
struct TcProblem {
  int m = 0, n = 0, k = 0;
  float alpha = 1.0f, beta = 0.0f;
  const void* a = nullptr;
  int64_t lda = 0;
  const void* b = nullptr;
  int64_t ldb = 0;
  void* c = nullptr;
  int64_t ldc = 0;
  bool c_f32 = false;            // C stored as f32 (else in the input type)
  bool c_pairs = false;          // two adjacent C elements may be moved as one aligned access
  int tiles_m = 0, tiles_n = 0;  // block tiles over C, set by the launcher
  int k_tiles = 0;               // K blocks per tile, set by the launcher
};

inline TcProblem make_tc_problem(const core::GemmArgs& args) {
  TcProblem p;
  p.m = static_cast<int>(args.m);
  p.n = static_cast<int>(args.n);
  p.k = static_cast<int>(args.k);
  p.alpha = args.alpha;
  p.beta = args.beta;
  p.a = args.a;
  p.lda = args.lda;
  p.b = args.b;
  p.ldb = args.ldb;
  p.c = args.c;
  p.ldc = args.ldc;
  p.c_f32 = args.c_type == core::DType::F32;
  const std::size_t pair_bytes = 2 * core::dtype_size(args.c_type);
  p.c_pairs = reinterpret_cast<uintptr_t>(args.c) % pair_bytes == 0 && args.ldc % 2 == 0 &&
              (args.batch == 1 || args.stride_c % 2 == 0);  // every batch item's C too
  return p;
}

inline bool a_is_k_major(const core::GemmArgs& args) { return !args.trans_a; }
inline bool b_is_k_major(const core::GemmArgs& args) { return args.trans_b; }

/// "" when every dimension and leading dimension fits the kernels' int indices.
inline core::Verdict tc_shape_reason(const core::GemmArgs& args) {
  constexpr int64_t kMax = std::numeric_limits<int>::max();
  if (args.m > kMax || args.n > kMax || args.k > kMax)
    return {core::Decline::ShapeLimit, "a dimension exceeds 2^31 - 1"};
  return {};
}

/// "" when `ptr` and every row start (`ld` elements apart) are `bytes`-aligned.
inline core::Verdict row_alignment_reason(const char* operand, const void* ptr, int64_t ld, std::size_t elem_bytes,
                                          std::size_t bytes) {
  if (reinterpret_cast<uintptr_t>(ptr) % bytes != 0)
    return {core::Decline::Misaligned, std::string(operand) + " not " + std::to_string(bytes) + "-byte aligned"};
  if ((ld * static_cast<int64_t>(elem_bytes)) % static_cast<int64_t>(bytes) != 0)
    return {core::Decline::Misaligned,
            std::string("ld") + operand + " * element size not a multiple of " + std::to_string(bytes) + " bytes"};
  return {};
}

/// Tile (tile_m, tile_n) of linear index `tile`: tiles are visited in groups of
/// `group_m` tile rows, column by column inside a group, so the tiles running at one
/// time share A rows and B columns in L2 instead of sweeping all of B per tile row.
struct TileCoord {
  int m, n;
};
/// `snake`: odd groups are walked backwards (last column first), so the tiles that end
/// one group and start the next share B columns.
__host__ __device__ __forceinline__ TileCoord tile_coords(int tile, int tiles_m, int tiles_n, int group_m,
                                                          bool snake = false) {
  const int per_group = group_m * tiles_n;
  const int group = tile / per_group;
  const int first_m = group * group_m;
  const int rows_in_group = min(group_m, tiles_m - first_m);
  int in_group = tile - group * per_group;
  if (snake && (group & 1)) in_group = rows_in_group * tiles_n - 1 - in_group;
  return {first_m + in_group % rows_in_group, in_group / rows_in_group};
}

/// Division of non-negative ints by a divisor fixed at launch, as one 32 x 32 -> 64-bit
/// multiply and a shift (Granlund and Montgomery's round-up method): q = (n m) >> p with
/// p = 31 + ceil(log2 d) and m = ceil(2^p / d), exact for every n below 2^31 because m d
/// - 2^p < d <= 2^(p - 31). A kernel's tile coordinates take three such divisions;
/// compiled as integer divisions (a reciprocal through the FP32 pipe and corrections,
/// ~20 dependent instructions each) they were most of what the producer warp did
/// between its start and its first TMA copy, and they sat before every tile's stores.
struct FastDiv {
  int d = 1;
  uint32_t mul = 1u << 31;
  uint32_t shift = 31;
  FastDiv() = default;
  explicit FastDiv(int divisor) : d(divisor < 1 ? 1 : divisor) {
    divisor = d;
    int ceil_log2 = 0;
    while ((int64_t(1) << ceil_log2) < divisor) ++ceil_log2;
    shift = 31 + static_cast<uint32_t>(ceil_log2);
    mul = static_cast<uint32_t>(((uint64_t(1) << shift) + static_cast<uint64_t>(divisor) - 1) /
                                static_cast<uint64_t>(divisor));
  }
  __host__ __device__ __forceinline__ int operator()(int n) const {
    return static_cast<int>((static_cast<uint64_t>(static_cast<uint32_t>(n)) * mul) >> shift);
  }
};

/// Two adjacent values of the input type packed as one 32-bit word, and back.
template <class T>
__device__ __forceinline__ uint32_t pack_pair(float v0, float v1) {
  static_assert(sizeof(T) == 2, "pack_pair packs 16-bit types");
  T lo = gpu::from_float<T>(v0), hi = gpu::from_float<T>(v1);
  uint16_t l, h;
  memcpy(&l, &lo, 2);
  memcpy(&h, &hi, 2);
  return static_cast<uint32_t>(l) | (static_cast<uint32_t>(h) << 16);
}
template <class T>
__device__ __forceinline__ float2 unpack_pair(uint32_t w) {
  static_assert(sizeof(T) == 2, "unpack_pair unpacks 16-bit types");
  if constexpr (std::is_same_v<T, gpu::bf16_t>)  // bf16 is the high half of an f32: a shift and a mask
    return make_float2(__uint_as_float(w << 16), __uint_as_float(w & 0xffff0000u));
  uint16_t l = static_cast<uint16_t>(w), h = static_cast<uint16_t>(w >> 16);
  T lo, hi;
  memcpy(&lo, &l, 2);
  memcpy(&hi, &h, 2);
  return make_float2(gpu::to_float(lo), gpu::to_float(hi));
}

/// Epilogue of one element: C = alpha*acc + beta*C. beta == 0 never reads C, which may
/// hold NaN or be uninitialized (BLAS semantics). kEpilogue: C = act(alpha*acc + beta*C +
/// bias) (the fused epilogue; `bias` is this element's, 0 without one), rounded once.
template <class OutT, bool kEpilogue = false>
__device__ __forceinline__ void store_one(OutT* dst, float acc, float alpha, float beta, float bias = 0.0f,
                                          int act = GK_ACT_NONE) {
  float v = alpha * acc;
  if (beta != 0.0f) v += beta * gpu::to_float(*dst);
  if constexpr (kEpilogue) v = core::activate(v + bias, act);
  *dst = gpu::from_float<OutT>(v);
}

/// The fused epilogue of the `valid` (1..4) consecutive elements at `dst` (columns col..
/// of batch item `item`): C = act(alpha*acc + beta*C + bias) in f32, rounded once. All four
/// move as one 16-byte (f32) or 8-byte (16-bit) access when `vec` (dst aligned) and valid
/// == 4. Rungs call it from a rolled loop over a tile staged in shared memory, so the
/// activation's code exists once per kernel rather than once per register of the tile.
template <class OutT>
__device__ __forceinline__ void store_c4_epilogue(OutT* dst, float4 acc, float alpha, float beta, int valid, bool vec,
                                                  const Epilogue& epi, int64_t item, int col) {
  float o[4] = {alpha * acc.x, alpha * acc.y, alpha * acc.z, alpha * acc.w};
  const bool whole = vec && valid == 4;
  if (beta != 0.0f) {  // beta == 0 never reads C
    if (whole) {
      float old[4];
      if constexpr (sizeof(OutT) == 4) {
        const float4 v = *reinterpret_cast<const float4*>(dst);
        old[0] = v.x, old[1] = v.y, old[2] = v.z, old[3] = v.w;
      } else {
        const uint2 v = *reinterpret_cast<const uint2*>(dst);
        const float2 lo = unpack_pair<OutT>(v.x), hi = unpack_pair<OutT>(v.y);
        old[0] = lo.x, old[1] = lo.y, old[2] = hi.x, old[3] = hi.y;
      }
#pragma unroll
      for (int e = 0; e < 4; ++e) o[e] += beta * old[e];
    } else {
#pragma unroll
      for (int e = 0; e < 4; ++e)
        if (e < valid) o[e] += beta * gpu::to_float(dst[e]);
    }
  }
#pragma unroll
  for (int e = 0; e < 4; ++e) o[e] = epi.apply(o[e], item, col + (e < valid ? e : 0));  // (e >= valid: unused)
  if (whole) {
    if constexpr (sizeof(OutT) == 4)
      *reinterpret_cast<float4*>(dst) = make_float4(o[0], o[1], o[2], o[3]);
    else
      *reinterpret_cast<uint2*>(dst) = make_uint2(pack_pair<OutT>(o[0], o[1]), pack_pair<OutT>(o[2], o[3]));
  } else {
#pragma unroll
    for (int e = 0; e < 4; ++e)
      if (e < valid) dst[e] = gpu::from_float<OutT>(o[e]);
  }
}

/// Epilogue of the pair C(row, col), C(row, col + 1), the unit every mma fragment
/// holds. Out-of-range elements are skipped; an aligned in-range pair is moved as one
/// 8-byte (f32) or 4-byte (16-bit) access.
template <class InT>
__device__ __forceinline__ void store_c_pair(const TcProblem& p, int row, int col, float v0, float v1) {
  if (row >= p.m || col >= p.n) return;
  const int64_t offset = static_cast<int64_t>(row) * p.ldc + col;
  const bool both = col + 1 < p.n;
  if (p.c_f32 || sizeof(InT) == 4) {
    float* dst = static_cast<float*>(p.c) + offset;
    if (both && p.c_pairs) {
      float2 out = make_float2(p.alpha * v0, p.alpha * v1);
      if (p.beta != 0.0f) {
        const float2 old = *reinterpret_cast<const float2*>(dst);
        out.x += p.beta * old.x;
        out.y += p.beta * old.y;
      }
      *reinterpret_cast<float2*>(dst) = out;
    } else {
      store_one(dst, v0, p.alpha, p.beta);
      if (both) store_one(dst + 1, v1, p.alpha, p.beta);
    }
  } else {
    using Out16 = std::conditional_t<sizeof(InT) == 2, InT, gpu::half_t>;
    Out16* dst = static_cast<Out16*>(p.c) + offset;
    if (both && p.c_pairs) {
      float o0 = p.alpha * v0, o1 = p.alpha * v1;
      if (p.beta != 0.0f) {
        const float2 old = unpack_pair<Out16>(*reinterpret_cast<const uint32_t*>(dst));
        o0 += p.beta * old.x;
        o1 += p.beta * old.y;
      }
      *reinterpret_cast<uint32_t*>(dst) = pack_pair<Out16>(o0, o1);
    } else {
      store_one(dst, v0, p.alpha, p.beta);
      if (both) store_one(dst + 1, v1, p.alpha, p.beta);
    }
  }
}

/// The most batch items one launch covers (they run along grid dimension y, at most 65535).
constexpr int64_t kMaxBatchPerLaunch = 65535;

/// The batch items a launch covers, passed to kernels by value: items first ..
/// first + gridDim.y - 1, item i's A, B and C at base + i * stride (elements).
struct BatchLaunch {
  BatchStrides strides;
  int64_t first = 0;
  __device__ __forceinline__ int64_t item() const { return first + blockIdx.y; }
};

/// Calls launch(BatchLaunch, items) for `batch` items in chunks of at most
/// kMaxBatchPerLaunch (one launch per chunk, its items along grid dimension y).
template <class F>
void for_batch_chunks(int64_t batch, const BatchStrides& strides, F&& launch) {
  for (int64_t first = 0; first < batch; first += kMaxBatchPerLaunch)
    launch(BatchLaunch{strides, first}, static_cast<unsigned>(std::min(kMaxBatchPerLaunch, batch - first)));
}

/// "" when every batch item's operand `operand` starts as aligned as item 0 (`bytes`):
/// its batch stride is a multiple of `bytes` (or the call has one item).
inline core::Verdict batch_stride_reason(const core::GemmArgs& args, const char* operand, int64_t stride,
                                         std::size_t elem_bytes, std::size_t bytes) {
  if (args.batch > 1 && (stride * static_cast<int64_t>(elem_bytes)) % static_cast<int64_t>(bytes) != 0)
    return {core::Decline::Misaligned,
            std::string("stride_") + operand + " * element size not a multiple of " + std::to_string(bytes) + " bytes"};
  return {};
}

/// The epilogue pass (core::GenericPaths, epilogue_pass.cu) over C of `batch` items of
/// the call (C at c + item * stride_c) with epilogue `epi`; the caller sets W and beta.
core::EpiloguePassArgs c_pass_args(const core::GemmArgs& args, const Epilogue& epi, int64_t batch);

/// Handles the degenerate calls every launcher shares; returns true when nothing is
/// left to do (M or N is 0, or K is 0 and C has been scaled: C = beta * C, zeros when
/// beta == 0 without reading C). A rung that fuses the epilogue and batches passes them:
/// then every one of `batch` items (C at c + item * stride_c) gets C = act(beta * C + bias).
/// Defined once, in tensor_core_common.cu, over the module's epilogue pass (one kernel
/// in one fat-binary unit), so a unit built for fewer targets (13_tcgen05.cu: sm_100a
/// only) can call it too.
bool tc_trivial_call(const core::GemmArgs& args, const CudaContext& ctx, const Epilogue& epi = {}, int64_t batch = 1);

}  // namespace gpukern::cuda::gemm
