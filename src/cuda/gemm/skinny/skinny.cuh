// The kernel of rung 14 `skinny` (see 14_skinny.cu) and its configuration template:
// a GEMM with one short side (T <= 64 "tokens") that streams the long operand (the
// weights, W: N x K) through shared memory once, with the T rows of the short operand
// (the activations, X: T x K) as the mma's narrow B operand. Kept in a header so a
// development driver can instantiate other configurations of the same kernel.
//
// The call as the kernel sees it ("swap AB"): Y(t, n) = sum_k X(t, k) W(n, k) for
// t < T, n < N, written to C(t * c_stride_t + n * c_stride_n). The launcher maps both
// orientations of a row-major GEMM onto it: with m <= 64, X = op(A), W = op(B)^T and
// C's rows are t; with n <= 64, W = op(A), X = op(B)^T and C's rows are n.
// Batches: grid dimension y is the batch item (W, X and C at their bases + item * their
// strides). The fused epilogue (kEpilogue) adds bias[col of C] and applies the activation
// in f32 where C is written: by the block itself, or by a split tile's last arriving block.
#pragma once

#include "cuda/arch/cp_async.cuh"
#include "cuda/arch/grid_dependency.cuh"
#include "cuda/arch/mma_sm80.cuh"
#include "cuda/arch/shared_memory.cuh"
#include "cuda/gemm/arrival_ticket.cuh"
#include "cuda/gemm/tensor_core_common.cuh"

#include <cstdint>

namespace gpukern::cuda::gemm {

/// The skinny call in kernel index types (dimensions fit in int; offsets in 64 bits).
struct SkinnyProblem {
  int t = 0, n = 0, k = 0;  // short side, long side, reduction
  float alpha = 1.0f, beta = 0.0f;
  const void* w = nullptr;  // N x K: element (n, k) at n * ldw + k (K-major) or k * ldw + n
  int64_t ldw = 0;
  const void* x = nullptr;  // T x K: element (t, k) at t * ldx + k (K-major) or k * ldx + t
  int64_t ldx = 0;
  void* c = nullptr;  // element (t, n) at t * c_stride_t + n * c_stride_n
  int64_t c_stride_t = 0, c_stride_n = 0;
  bool c_f32 = false;            // C stored as f32 (else in the input type)
  int n_tiles = 0;               // block tiles along N
  int k_blocks = 0;              // K blocks of the whole reduction
  int splits = 1;                // K ranges per N tile, one block each
  float* partials = nullptr;     // splits > 1: f32 sums, (item, tile, split) x BN x T, in the workspace
  uint64_t* arrivals = nullptr;  // splits > 1: one arrival word per (item of the launch, N tile)
  uint64_t tag = 0;              // splits > 1: this launch's arrival tag (arrival_tag)
  BatchLaunch batch;             // this launch's items (grid dimension y); strides: a = W, b = X, c = C
  Epilogue epi;                  // kEpilogue: bias (over C's columns) and activation
  bool bias_along_t = false;     // C's columns are t (the short side is n): bias[t], else bias[n]
};

/// The configuration of skinny_kernel for the named fields of `Tile`: kWarpsN x kWarpsK
/// warps (kWarpsN along N, each kMmaM m16 tiles of W; kWarpsK along K, each on its own
/// 128-byte slice of every K block, summed once at the end), and kNTiles n8 tiles of T
/// (T <= 8 kNTiles). The ring has as many stages as fit in kSmemPerBlock bytes, at most
/// kMaxStages (a stage's bytes do not depend on the element size: K blocks are 256 bytes).
template <class Tile, int kNTiles_>
struct SkinnyConfig {
  static constexpr int kWarpsN = Tile::kWarpsN, kWarpsK = Tile::kWarpsK, kMmaM = Tile::kMmaM;
  static constexpr int kNTiles = kNTiles_;
  static constexpr int kBlockN = kWarpsN * kMmaM * 16;  // W rows per block
  static constexpr int kTPad = kNTiles * 8;             // X rows held (zero past T)
  static constexpr int kThreads = kWarpsN * kWarpsK * 32;
  static constexpr int kSliceBytes = 128;  // K bytes of one warp's slice of a K block
  static constexpr int kKSteps = 4;        // mma K steps per slice: 64 f16/bf16 (k16) or 32 tf32 (k8)
  static constexpr int kStageBytes = (kBlockN + kTPad) * kWarpsK * kSliceBytes;
  static constexpr int kStages =
      Tile::kSmemPerBlock / kStageBytes < Tile::kMaxStages ? Tile::kSmemPerBlock / kStageBytes : Tile::kMaxStages;
  static_assert(kStages >= 2, "a pipeline needs at least two stages");
  static_assert(kNTiles == 1 || kNTiles == 2 || kNTiles == 4 || kNTiles == 8, "T tiles: 1, 2, 4 or 8 n8 tiles");
};

/// Byte offset of 16-byte chunk `chunk` of row `row` in a tile of kRowBytes-byte rows:
/// chunk ^ (row % 8) (fewer bits for rows under 128 bytes), so the 8 rows one ldmatrix
/// phase reads land in different bank groups.
template <int kRowBytes>
__device__ __forceinline__ uint32_t skinny_swizzle(int row, int chunk) {
  constexpr int kChunks = kRowBytes / 16;
  constexpr int kMask = (kChunks < 8 ? kChunks : 8) - 1;
  return static_cast<uint32_t>(row * kRowBytes + ((chunk ^ (row & kMask)) << 4));
}

/// cp.async of one operand tile of kRows stored rows x kRowBytes from storage rows
/// row0.. and columns col0.. of a rows x cols matrix; chunks past the matrix copy 0 source
/// bytes (zeros), a chunk straddling its edge copies the part inside.
template <class T, int kRows, int kRowBytes, int kThreads>
__device__ __forceinline__ void skinny_copy_checked(uint32_t dst, const T* src, int64_t ld, int row0, int col0,
                                                    int rows, int cols) {
  constexpr int kPerChunk = 16 / static_cast<int>(sizeof(T));
  constexpr int kChunksPerRow = kRowBytes / 16;
  constexpr int kTotal = kRows * kChunksPerRow;
#pragma unroll
  for (int i = 0; i < (kTotal + kThreads - 1) / kThreads; ++i) {
    const int idx = static_cast<int>(threadIdx.x) + i * kThreads;
    if (kTotal % kThreads != 0 && idx >= kTotal) break;
    const int r = idx / kChunksPerRow, chunk = idx % kChunksPerRow;
    const int row = row0 + r, col = col0 + chunk * kPerChunk;
    const int valid = row < rows ? max(0, min(kPerChunk, cols - col)) : 0;
    const T* g = valid > 0 ? src + static_cast<int64_t>(row) * ld + col : src;
    arch::cp_async_16(static_cast<float*>(arch::smem_ptr(dst + skinny_swizzle<kRowBytes>(r, chunk))),
                      reinterpret_cast<const float*>(g), valid * static_cast<int>(sizeof(T)));
  }
}

/// The W tile of a block whose rows all lie inside W, for a whole K block (the common
/// case): one global pointer per thread stepped by fixed strides, no bounds arithmetic,
/// and an evict-first L2 policy (W is read once). Thread i copies chunk i % chunks-per-row
/// of rows i / chunks-per-row + j * kRowStep.
template <class T, int kRows, int kRowBytes, int kThreads>
struct SkinnyStreamCopy {
  static constexpr int kChunksPerRow = kRowBytes / 16;
  static constexpr int kRowStep = kThreads / kChunksPerRow;
  static constexpr int kRounds = kRows / kRowStep;
  static_assert(kThreads % kChunksPerRow == 0 && kRows % kRowStep == 0 && kRounds >= 1,
                "threads cover whole rows, rounds cover the tile");
  const char* base;  // this thread's first chunk at K block 0
  int64_t round_bytes;

  __device__ __forceinline__ SkinnyStreamCopy(const T* src, int64_t ld, int row0, int col0) {
    const int tid = static_cast<int>(threadIdx.x);
    base = reinterpret_cast<const char*>(src + (row0 + tid / kChunksPerRow) * ld + col0 +
                                         (tid % kChunksPerRow) * (16 / static_cast<int>(sizeof(T))));
    round_bytes = kRowStep * ld * static_cast<int64_t>(sizeof(T));
  }
  /// Copies the tile `offset_bytes` past K block 0 into `dst`.
  __device__ __forceinline__ void copy(uint32_t dst, int64_t offset_bytes) const {
    const int tid = static_cast<int>(threadIdx.x);
    const char* g = base + offset_bytes;
#pragma unroll
    for (int i = 0; i < kRounds; ++i) {
      const int r = tid / kChunksPerRow + i * kRowStep;
      arch::cp_async_16_stream(arch::smem_ptr(dst + skinny_swizzle<kRowBytes>(r, tid % kChunksPerRow)), g);
      g += round_bytes;
    }
  }
};

/// d += a * b in 3xTF32 from the arch::split_tf32 parts of both fragments: the two cross
/// products of a big and a small part, then big * big (small * small is below f32's
/// rounding).
__device__ __forceinline__ void mma_3xtf32(float (&d)[4], const uint32_t (&a_big)[4], const uint32_t (&a_small)[4],
                                           const uint32_t (&b_big)[2], const uint32_t (&b_small)[2]) {
  arch::mma_16x8<float>(d, a_small, b_big);
  arch::mma_16x8<float>(d, a_big, b_small);
  arch::mma_16x8<float>(d, a_big, b_big);
}

/// One block: kBlockN rows of W (N tile blockIdx.x / splits) over the K blocks of split
/// blockIdx.x % splits, against all T rows of X, of batch item p.batch.item(). `kSplitF32`
/// runs f32 data exactly (3xTF32); T = float without it is tf32. kEpilogue: C =
/// act(alpha*acc + beta*C + bias) (p.epi), rounded once.
template <class Cfg, class T, bool kSplitF32, bool kWKMajor, bool kXKMajor, bool kEpilogue = false>
__global__ void __launch_bounds__(Cfg::kThreads) skinny_kernel(SkinnyProblem p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  constexpr bool k32 = sizeof(T) == 4;
  constexpr int kElem = static_cast<int>(sizeof(T));
  constexpr int kSliceK = Cfg::kSliceBytes / kElem;  // K elements of one warp's slice
  constexpr int kBK = Cfg::kWarpsK * kSliceK;        // K elements of a K block
  constexpr int BN = Cfg::kBlockN, TP = Cfg::kTPad;
  // Stored shape of each tile: rows x bytes per row.
  constexpr int kWRows = kWKMajor ? BN : kBK, kWRowBytes = kWKMajor ? kBK * kElem : BN * kElem;
  constexpr int kXRows = kXKMajor ? TP : kBK, kXRowBytes = kXKMajor ? kBK * kElem : TP * kElem;
  constexpr int kWBytes = kWRows * kWRowBytes, kXBytes = kXRows * kXRowBytes;
  constexpr int kStageBytes = kWBytes + kXBytes;
  static_assert(kXRowBytes >= 16, "a stored X row holds whole 16-byte chunks");
  static_assert(kWKMajor || kWRowBytes >= 128, "N-contiguous W tiles need rows of at least 128 bytes for the swizzle");

  extern __shared__ uint4 smem_u4[];
  const uint32_t smem = arch::smem_addr(smem_u4);
  auto w_stage = [&](int s) { return smem + s * kStageBytes; };
  auto x_stage = [&](int s) { return smem + s * kStageBytes + kWBytes; };

  const int tile = static_cast<int>(blockIdx.x) / p.splits, split = static_cast<int>(blockIdx.x) % p.splits;
  const int n0 = tile * BN;
  const int kb_begin = static_cast<int>(static_cast<int64_t>(p.k_blocks) * split / p.splits);
  const int kb_end = static_cast<int>(static_cast<int64_t>(p.k_blocks) * (split + 1) / p.splits);
  const int lane = static_cast<int>(threadIdx.x) % 32, warp = static_cast<int>(threadIdx.x) / 32;
  const int wn = warp % Cfg::kWarpsN, wk = warp / Cfg::kWarpsN;
  const int g = lane >> 2, q = lane & 3;  // mma fragment coordinates
  arch::wait_grid_dependency();           // launched as a programmatic dependent (launch_kernel)
  const int64_t item = p.batch.item();
  const T* w = static_cast<const T*>(p.w) + item * p.batch.strides.a;
  const T* x = static_cast<const T*>(p.x) + item * p.batch.strides.b;
  p.c = static_cast<char*>(p.c) + item * p.batch.strides.c * (p.c_f32 ? 4 : kElem);

  const bool w_inside = n0 + BN <= p.n;
  const int full_k_blocks = p.k / kBK;
  using WCopy = SkinnyStreamCopy<T, kWRows, kWRowBytes, Cfg::kThreads>;
  const WCopy w_copy = kWKMajor ? WCopy(w, p.ldw, w_inside ? n0 : 0, 0) : WCopy(w, p.ldw, 0, w_inside ? n0 : 0);
  auto load_stage = [&](int s, int kb) {
    const int k0 = kb * kBK;
    if (w_inside && kb < full_k_blocks)
      w_copy.copy(w_stage(s), (kWKMajor ? k0 : k0 * p.ldw) * static_cast<int64_t>(kElem));
    else if constexpr (kWKMajor)
      skinny_copy_checked<T, kWRows, kWRowBytes, Cfg::kThreads>(w_stage(s), w, p.ldw, n0, k0, p.n, p.k);
    else
      skinny_copy_checked<T, kWRows, kWRowBytes, Cfg::kThreads>(w_stage(s), w, p.ldw, k0, n0, p.k, p.n);
    if constexpr (kXKMajor)
      skinny_copy_checked<T, kXRows, kXRowBytes, Cfg::kThreads>(x_stage(s), x, p.ldx, 0, k0, p.t, p.k);
    else
      skinny_copy_checked<T, kXRows, kXRowBytes, Cfg::kThreads>(x_stage(s), x, p.ldx, k0, 0, p.k, p.t);
  };

  float acc[Cfg::kMmaM][Cfg::kNTiles][4];
#pragma unroll
  for (int i = 0; i < Cfg::kMmaM; ++i)
#pragma unroll
    for (int j = 0; j < Cfg::kNTiles; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;

  // X fragments of this warp's slice of one K block: per n8 tile and K step, 2 registers.
  auto load_x_frags = [&](uint32_t xs, uint32_t(&xf)[Cfg::kNTiles][Cfg::kKSteps][2]) {
#pragma unroll
    for (int j = 0; j < Cfg::kNTiles; ++j) {
      if constexpr (!k32) {
        const int mat = lane >> 3;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          uint32_t r[4];
          if constexpr (kXKMajor) {
            // Stored (t, k): matrix `mat` is rows t of tile j, chunk 4h + mat of the slice.
            arch::ldmatrix_x4<false>(r, xs + skinny_swizzle<kXRowBytes>(8 * j + (lane & 7), wk * 8 + 4 * h + mat));
#pragma unroll
            for (int e = 0; e < 4; ++e) xf[j][2 * h + e / 2][e % 2] = r[e];
          } else {
            // Stored (k, t): matrix `mat` is k rows 16 (2h + mat / 2) + 8 (mat % 2).., t chunk j.
            const int krow = wk * kSliceK + (2 * h + (mat >> 1)) * 16 + (mat & 1) * 8 + (lane & 7);
            arch::ldmatrix_x4<true>(r, xs + skinny_swizzle<kXRowBytes>(krow, j));
#pragma unroll
            for (int e = 0; e < 4; ++e) xf[j][2 * h + e / 2][e % 2] = r[e];
          }
        }
      } else {
        // tf32 B fragment: b0 = X(t = g, k = q), b1 = X(t = g, k = q + 4).
#pragma unroll
        for (int kk = 0; kk < Cfg::kKSteps; ++kk)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const int t = 8 * j + g, k = wk * kSliceK + kk * 8 + q + 4 * e;
            xf[j][kk][e] = kXKMajor ? arch::ld_shared_u32(xs + skinny_swizzle<kXRowBytes>(t, k / 4) + (k % 4) * 4)
                                    : arch::ld_shared_u32(xs + skinny_swizzle<kXRowBytes>(k, t / 4) + (t % 4) * 4);
          }
      }
    }
  };
  // W fragment (m16 tile i of this warp) of K step kk.
  auto load_w_frag = [&](uint32_t ws, int i, int kk, uint32_t(&a)[4]) {
    const int mm = (wn * Cfg::kMmaM + i) * 16;
    if constexpr (!k32) {
      if constexpr (kWKMajor) {
        arch::ldmatrix_x4<false>(a, ws + skinny_swizzle<kWRowBytes>(mm + (lane & 15), wk * 8 + 2 * kk + (lane >> 4)));
      } else {
        const int mat = lane >> 3;
        const int krow = wk * kSliceK + kk * 16 + (mat >> 1) * 8 + (lane & 7);
        arch::ldmatrix_x4<true>(a, ws + skinny_swizzle<kWRowBytes>(krow, mm / 8 + (mat & 1)));
      }
    } else {
      // tf32 A fragment: a0 = W(g, q), a1 = W(g + 8, q), a2 = W(g, q + 4), a3 = W(g + 8, q + 4).
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int n = mm + g + (e & 1) * 8, k = wk * kSliceK + kk * 8 + q + (e >> 1) * 4;
        a[e] = kWKMajor ? arch::ld_shared_u32(ws + skinny_swizzle<kWRowBytes>(n, k / 4) + (k % 4) * 4)
                        : arch::ld_shared_u32(ws + skinny_swizzle<kWRowBytes>(k, n / 4) + (n % 4) * 4);
      }
    }
  };

  // Pipeline: kStages - 1 K blocks in flight ahead of the math; empty commit groups past
  // the end keep the wait arithmetic uniform.
  int load_kb = kb_begin;
  auto produce = [&](int s) {
    if (load_kb < kb_end) load_stage(s, load_kb);
    arch::cp_async_commit();
    ++load_kb;
  };
#pragma unroll
  for (int s = 0; s < Cfg::kStages - 1; ++s) produce(s);

  int stage = 0;
  for (int kb = kb_begin; kb < kb_end; ++kb) {
    // K block kb has landed, and every warp is done with the stage refilled next.
    arch::cp_async_wait<Cfg::kStages - 2>();
    __syncthreads();
    produce(stage == 0 ? Cfg::kStages - 1 : stage - 1);
    uint32_t xf[Cfg::kNTiles][Cfg::kKSteps][2];
    load_x_frags(x_stage(stage), xf);
    // Exact f32: the tensor cores' f32 accumulation does not round to nearest, so each K
    // block's 3xTF32 products are summed apart (12 mma deep) and added to `acc` with a
    // rounded f32 add, which keeps the error of long K at f32's.
    float blk[Cfg::kMmaM][Cfg::kNTiles][4];
    if constexpr (kSplitF32)
#pragma unroll
      for (int i = 0; i < Cfg::kMmaM; ++i)
#pragma unroll
        for (int j = 0; j < Cfg::kNTiles; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e) blk[i][j][e] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < Cfg::kKSteps; ++kk) {
      if constexpr (kSplitF32) {
        uint32_t xb[Cfg::kNTiles][2], xsm[Cfg::kNTiles][2];
#pragma unroll
        for (int j = 0; j < Cfg::kNTiles; ++j)
#pragma unroll
          for (int e = 0; e < 2; ++e) arch::split_tf32(xf[j][kk][e], xb[j][e], xsm[j][e]);
#pragma unroll
        for (int i = 0; i < Cfg::kMmaM; ++i) {
          uint32_t a[4], ab[4], as[4];
          load_w_frag(w_stage(stage), i, kk, a);
#pragma unroll
          for (int e = 0; e < 4; ++e) arch::split_tf32(a[e], ab[e], as[e]);
#pragma unroll
          for (int j = 0; j < Cfg::kNTiles; ++j) {
            mma_3xtf32(blk[i][j], ab, as, xb[j], xsm[j]);
          }
        }
      } else {
        if constexpr (k32)
#pragma unroll
          for (int j = 0; j < Cfg::kNTiles; ++j)
#pragma unroll
            for (int e = 0; e < 2; ++e) xf[j][kk][e] = arch::round_tf32(xf[j][kk][e]);
#pragma unroll
        for (int i = 0; i < Cfg::kMmaM; ++i) {
          uint32_t a[4];
          load_w_frag(w_stage(stage), i, kk, a);
          if constexpr (k32)
#pragma unroll
            for (int e = 0; e < 4; ++e) a[e] = arch::round_tf32(a[e]);
#pragma unroll
          for (int j = 0; j < Cfg::kNTiles; ++j) arch::mma_16x8<T>(acc[i][j], a, xf[j][kk]);
        }
      }
    }
    if constexpr (kSplitF32)
#pragma unroll
      for (int i = 0; i < Cfg::kMmaM; ++i)
#pragma unroll
        for (int j = 0; j < Cfg::kNTiles; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc[i][j][e] += blk[i][j][e];
    stage = stage + 1 == Cfg::kStages ? 0 : stage + 1;
  }
  arch::cp_async_wait<0>();
  __syncthreads();  // the pipeline's memory becomes the reduction buffer

  // The K-slice warps' sums meet in shared memory: red[(wk * BN + n) * kPitch + t]
  // (odd pitch: consecutive n fall in different banks).
  constexpr int kPitch = TP + 1;
  float* red = reinterpret_cast<float*>(smem_u4);
#pragma unroll
  for (int i = 0; i < Cfg::kMmaM; ++i)
#pragma unroll
    for (int j = 0; j < Cfg::kNTiles; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        // D fragment: d0, d1 = (n = g, t = 2q, 2q + 1), d2, d3 = (n = g + 8, same t).
        const int n = (wn * Cfg::kMmaM + i) * 16 + g + (e >> 1) * 8, t = 8 * j + 2 * q + (e & 1);
        red[(wk * BN + n) * kPitch + t] = acc[i][j][e];
      }
  __syncthreads();

  // The block's BN x T results, visited so that consecutive threads write consecutive C
  // addresses: n fastest when C's n stride is 1, else t fastest.
  const bool n_fast = p.c_stride_n == 1;
  const int count = BN * p.t;
  auto coords = [&](int idx, int& n, int& t) {
    if (n_fast) {
      n = idx % BN;
      t = idx / BN;
    } else {
      t = idx % p.t;
      n = idx / p.t;
    }
  };
  auto store = [&](int n, int t, float v) {
    const int64_t offset = static_cast<int64_t>(t) * p.c_stride_t + static_cast<int64_t>(n) * p.c_stride_n;
    float bias = 0.0f;
    if constexpr (kEpilogue) bias = p.epi.bias_at(item, p.bias_along_t ? t : n);
    if (p.c_f32 || k32) {
      store_one<float, kEpilogue>(static_cast<float*>(p.c) + offset, v, p.alpha, p.beta, bias, p.epi.act);
    } else {
      using Out16 = std::conditional_t<k32, gpu::half_t, T>;
      store_one<Out16, kEpilogue>(static_cast<Out16*>(p.c) + offset, v, p.alpha, p.beta, bias, p.epi.act);
    }
  };
  if (p.splits == 1) {
    for (int idx = static_cast<int>(threadIdx.x); idx < count; idx += Cfg::kThreads) {
      int n, t;
      coords(idx, n, t);
      float v = 0.0f;
#pragma unroll
      for (int s = 0; s < Cfg::kWarpsK; ++s) v += red[(s * BN + n) * kPitch + t];
      if (n0 + n < p.n) store(n0 + n, t, v);
    }
    return;
  }

  // Split K: park this block's sums, and the last of the tile's blocks to arrive adds
  // all of them in split order (deterministic) and writes C. Nobody waits. Each batch item
  // of the launch has its own N tiles' partial sums and arrival words.
  const int64_t launch_tile = static_cast<int64_t>(blockIdx.y) * p.n_tiles + tile;
  float* part = p.partials + launch_tile * p.splits * BN * p.t;
  for (int idx = static_cast<int>(threadIdx.x); idx < count; idx += Cfg::kThreads) {
    int n, t;
    coords(idx, n, t);
    float v = 0.0f;
#pragma unroll
    for (int s = 0; s < Cfg::kWarpsK; ++s) v += red[(s * BN + n) * kPitch + t];
    __stcg(part + static_cast<int64_t>(split) * count + idx, v);
  }
  __threadfence();
  __syncthreads();
  __shared__ int last;
  if (threadIdx.x == 0)
    last = take_arrival_ticket(p.arrivals + launch_tile, p.tag) == static_cast<uint32_t>(p.splits - 1);
  __syncthreads();
  if (!last) return;
  __threadfence();
  // This block's sums are the grid's critical path: every load of a round (all of this
  // thread's elements, four splits) is issued before any is used, so the reduction costs
  // ceil(splits / 4) L2 round trips rather than one per element and split.
  constexpr int kPerThread = (BN * TP + Cfg::kThreads - 1) / Cfg::kThreads;
  float sum[kPerThread];
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) sum[i] = 0.0f;
  for (int s0 = 0; s0 < p.splits; s0 += 4) {
    float v[kPerThread][4];
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      const int idx = static_cast<int>(threadIdx.x) + i * Cfg::kThreads;
#pragma unroll
      for (int j = 0; j < 4; ++j)
        v[i][j] = idx < count && s0 + j < p.splits ? __ldcg(part + static_cast<int64_t>(s0 + j) * count + idx) : 0.0f;
    }
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) sum[i] += (v[i][0] + v[i][1]) + (v[i][2] + v[i][3]);
  }
  if constexpr (kEpilogue) {
    // The sums go through shared memory (the reduction buffer, unused since the park) and
    // are stored from a rolled loop: one copy of the activation code, not kPerThread.
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      const int idx = static_cast<int>(threadIdx.x) + i * Cfg::kThreads;
      if (idx < count) red[idx] = sum[i];
    }
    __syncthreads();
    for (int idx = static_cast<int>(threadIdx.x); idx < count; idx += Cfg::kThreads) {
      int n, t;
      coords(idx, n, t);
      if (n0 + n < p.n) store(n0 + n, t, red[idx]);
    }
  } else {
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      const int idx = static_cast<int>(threadIdx.x) + i * Cfg::kThreads;
      if (idx >= count) break;
      int n, t;
      coords(idx, n, t);
      if (n0 + n < p.n) store(n0 + n, t, sum[i]);
    }
  }
#endif
}

/// Shared memory of skinny_kernel<Cfg, T>: the pipeline's stages, or the reduction
/// buffer that reuses them, whichever is larger.
template <class Cfg, class T>
constexpr int skinny_smem_bytes() {
  constexpr int kBK = Cfg::kWarpsK * Cfg::kSliceBytes / static_cast<int>(sizeof(T));
  constexpr int kStage = (Cfg::kBlockN + Cfg::kTPad) * kBK * static_cast<int>(sizeof(T));
  constexpr int kPipeline = Cfg::kStages * kStage;
  constexpr int kReduce = Cfg::kWarpsK * Cfg::kBlockN * (Cfg::kTPad + 1) * 4;
  return kPipeline > kReduce ? kPipeline : kReduce;
}

}  // namespace gpukern::cuda::gemm
