// The skinny GEMM kernels (contract in skinny.hpp), written once over a vector policy
// `Ops` that each ISA file (kernel_avx512.cpp, kernel_avx2.cpp, kernel_scalar.cpp) defines
// in its own unnamed namespace: every instantiation then has internal linkage, so an
// AVX-512-compiled copy can never be the one the linker keeps for another path. Include
// only from those files.
//
// Ops provides: Vec, kLanes (floats per Vec), kRegisters (vector registers of the ISA),
// zero(), set1(float), fma(a, b, c) = a * b + c, load(const X*) of kLanes stored elements
// (float, Half or BFloat16) as f32, load_partial(const X*, count) (lanes >= count are 0 and
// read nothing), loadf / loadf_partial / storef / storef_partial of f32, hsum(Vec),
// add_hsums<N>(v, out): out[i] += hsum(v[i]) for i < N <= 8 (AVX-512: one transposed
// reduction; each NT tile ends in T of them), and in_register(Vec): the value, which the
// compiler must then hold in a register (an empty asm statement that may change it). A
// value used by several FMAs is loaded once that way; left alone, GCC folds the load into
// each FMA as a memory operand, and the kernels become bound by the load ports (24 loads
// for 24 FMAs per depth step of the NT tile at T = 8).
//
// Both kernels are meant to be bound by the bandwidth of W, read once; the register tiles
// below have to keep the FMA and load ports ahead of memory. Where a core reads W about as
// fast as its FMAs consume it (AMD Zen 5: ~45 GB/s of memory per core on two threads,
// against ~100 GB/s of W at T = 4 and ~57 GB/s at T = 8 with W in L1), the times come out
// near the sum of the two, not the larger (docs/notes/llm-gemm.md, CPU skinny).
#pragma once

#include "cpu/gemm/skinny.hpp"
#include "cpu/storage_types.hpp"

#include <algorithm>
#include <cstdint>

namespace gpukern::cpu::skinny_simd {
namespace {

/// NN form: depth steps (rows of W) per pass over the strip. The accumulator tile is
/// loaded and stored once per pass, and the pass reads that many rows of W side by side:
/// as many sequential streams for the hardware prefetchers. From T = 2 the accumulator
/// (T x strip floats, 32-64 KB at T = 4-8 on two threads) no longer fits L1, so each pass
/// also moves it through L2 twice; more rows per pass cut that traffic per byte of W, up to
/// the point where the streams in flight cost more. Two cores, K = 4096 and 11008: 16 rows
/// over 8 gave T = 4/8 +10-20%; 32 over 16 T = 4 +4-8% and T = 6 +13-15%, but T = 2 -4..+2%
/// and T = 8 -7..-16% (one core). At T = 1 the accumulator is small and 8 rows were faster.
constexpr int nn_depth_steps(int t) { return t == 1 ? 8 : t >= 3 && t <= 6 ? 32 : 16; }

/// Software prefetch from T = kNnPrefetchMinT / kSkinnyNtStreamMinT on, as
/// __builtin_prefetch's locality (3: all cache levels, 1: L2 only). NN form: each tile
/// prefetches the rows of the next pass at its own columns (a pass over a strip takes far
/// longer than a memory access), into L2. With enough FMAs per byte of W the kernel
/// otherwise stalls on each new page of W before the hardware prefetchers catch up (NN at
/// T = 2 and 4 on two cores: up to 15%); with T = 1 the extra load-port work cost 5-13%.
///
/// NT form: the depth blocks are short (2-4 KB of each W row, skinny.hpp), so the
/// hardware prefetchers see short streams that start cold; each tile prefetches the rows
/// of the tile about kNtPrefetchBytes of W ahead in read order (the same depth, rows
/// further down the strip). The out-of-order window alone holds too few loads of W: each
/// depth step also loads T vectors of S, which fill the load queue first. One core,
/// 4096 x 11008, against 32 KB blocks that prefetched one tile ahead from T = 5 only:
/// T = 3-7 6-30% more bandwidth, T = 4 x 4096 x 4096 12%; T = 8 unchanged (there the FMAs
/// and S loads take as long as the memory traffic). 10-12 KB ahead beat 3-6 KB and 20 KB.
constexpr int kNnPrefetchMinT = 2;
constexpr int kNnPrefetchLocality = 1;
/// NN form from T = kNnRowPrefetchMinT: also a prefetch into L1 of each row of the pass
/// kNnRowPrefetchBytes ahead in the row. With T FMAs per vector of W, the out-of-order
/// window reaches only a few KB of W ahead of the FMAs, and the hardware prefetchers,
/// following U rows at once, do not run far enough ahead either; the pass then stalls on
/// W's misses in turn with its FMAs instead of overlapping them. T = 8, two cores, 11008
/// x 4096: +20-30%; T = 3-7 within noise or a few percent better, T = 2 a few percent
/// worse (bench/dev/cpu/nn_shapes and skinny_ab).
constexpr int kNnRowPrefetchMinT = 3;
constexpr int64_t kNnRowPrefetchBytes = 1024;
constexpr int kNtPrefetchLocality = 3;
constexpr int64_t kNtPrefetchBytes = 10 << 10;
/// At most this many tiles ahead (short blocks of f16 / bf16 rows).
constexpr int64_t kNtPrefetchMaxTiles = 8;

/// NN form: vectors of columns per register tile for T rows, so that the T x V accumulators,
/// the V vectors of W and one broadcast fit the registers (at most 4: wider tiles only
/// lengthen the column tail).
constexpr int nn_vectors(int registers, int t) {
  const int v = (registers - 1) / (t + 1);
  return v > 4 ? 4 : v < 1 ? 1 : v;
}

/// NT form: rows of W per register tile for T rows of S: R x T accumulators, R vectors of
/// W and one of S in the registers, less a few for addresses and the compiler's needs;
/// at most 8 streams of W at a time.
constexpr int nt_rows(int registers, int t) {
  const int r = (registers - registers / 8) / (t + 1);
  return r > 8 ? 8 : r < 1 ? 1 : r;
}

/// One pass of U depth steps over columns [0, V * kLanes) (or `count` < kLanes when
/// Partial, with V == 1) of the accumulator.
template <class Ops, class W, int T, int V, int U, bool Partial>
inline void nn_tile(const float* s, const W* w, int64_t ldw, float* acc, int64_t ld_acc, int count) {
  using Vec = typename Ops::Vec;
  constexpr int L = Ops::kLanes;
  static_assert(!Partial || V == 1, "a partial tile is one vector wide");
  Vec c[T][V];  // (T, V * L)
#pragma GCC unroll 8
  for (int t = 0; t < T; ++t)
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v)
      c[t][v] = Partial ? Ops::loadf_partial(acc + t * ld_acc, count) : Ops::loadf(acc + t * ld_acc + v * L);
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) {
    Vec b[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) b[v] = Partial ? Ops::load_partial(w + u * ldw, count) : Ops::load(w + u * ldw + v * L);
    if (T >= kNnPrefetchMinT && !Partial)
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) __builtin_prefetch(w + (u + U) * ldw + v * L, 0, kNnPrefetchLocality);
    if (T >= kNnRowPrefetchMinT && !Partial)
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v)
        __builtin_prefetch(w + u * ldw + v * L + kNnRowPrefetchBytes / int64_t(sizeof(W)), 0, 3);
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) {
      const Vec a = Ops::in_register(Ops::set1(s[u * T + t]));
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) c[t][v] = Ops::fma(a, b[v], c[t][v]);
    }
  }
#pragma GCC unroll 8
  for (int t = 0; t < T; ++t)
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      if (Partial)
        Ops::storef_partial(acc + t * ld_acc, c[t][v], count);
      else
        Ops::storef(acc + t * ld_acc + v * L, c[t][v]);
    }
}

/// U depth steps over all `cols` columns: wide tiles, then single vectors, then the tail.
template <class Ops, class W, int T, int U>
void nn_pass(const float* s, const W* w, int64_t ldw, int64_t cols, float* acc, int64_t ld_acc) {
  constexpr int L = Ops::kLanes;
  constexpr int V = nn_vectors(Ops::kRegisters, T);
  int64_t j = 0;
  for (; j + V * L <= cols; j += V * L) nn_tile<Ops, W, T, V, U, false>(s, w + j, ldw, acc + j, ld_acc, L);
  for (; j + L <= cols; j += L) nn_tile<Ops, W, T, 1, U, false>(s, w + j, ldw, acc + j, ld_acc, L);
  if (j < cols) nn_tile<Ops, W, T, 1, U, true>(s, w + j, ldw, acc + j, ld_acc, static_cast<int>(cols - j));
}

template <class Ops, class W, int T>
void nn_block(int64_t kc, const float* s, const void* w_data, int64_t ldw, int64_t cols, float* acc, int64_t ld_acc) {
  const W* w = static_cast<const W*>(w_data);
  constexpr int U = nn_depth_steps(T);
  int64_t p = 0;
  for (; p + U <= kc; p += U) nn_pass<Ops, W, T, U>(s + p * T, w + p * ldw, ldw, cols, acc, ld_acc);
  for (; p < kc; ++p) nn_pass<Ops, W, T, 1>(s + p * T, w + p * ldw, ldw, cols, acc, ld_acc);
}

/// R rows of W (from w) against the T rows of S over the depth block, added into
/// acc[t * ld_acc + r]: R x T vector dot products, then their sums (Ops::add_hsums, one
/// call per row of S: the R sums of a row of acc are side by side). From
/// T = kSkinnyNtStreamMinT, prefetches the rows `ahead` rows further down at each depth
/// step (never dereferenced: a prefetch past the end of W does not fault).
template <class Ops, class W, int T, int R>
inline void nt_tile(int64_t kc, const float* s, int64_t lds, const W* w, int64_t ldw, int64_t ahead, float* acc,
                    int64_t ld_acc) {
  using Vec = typename Ops::Vec;
  constexpr int L = Ops::kLanes;
  Vec c[R][T];  // (R, T) dot products, L partial sums each
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) c[r][t] = Ops::zero();
  int64_t p = 0;
  for (; p + L <= kc; p += L) {
    Vec b[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) b[r] = Ops::load(w + r * ldw + p);
    if (T >= kSkinnyNtStreamMinT)
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) __builtin_prefetch(w + (r + ahead) * ldw + p, 0, kNtPrefetchLocality);
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) {
      const Vec a = Ops::in_register(Ops::loadf(s + t * lds + p));
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) c[r][t] = Ops::fma(b[r], a, c[r][t]);
    }
  }
  if (p < kc) {  // depth tail: W read only below kc; S is zero-padded
    const int count = static_cast<int>(kc - p);
    Vec b[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) b[r] = Ops::load_partial(w + r * ldw + p, count);
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) {
      const Vec a = Ops::loadf(s + t * lds + p);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) c[r][t] = Ops::fma(b[r], a, c[r][t]);
    }
  }
  // Row t of the accumulator gains R sums side by side: one transposed reduction each.
#pragma GCC unroll 8
  for (int t = 0; t < T; ++t) {
    Vec column[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) column[r] = c[r][t];
    Ops::template add_hsums<R>(column, acc + t * ld_acc);
  }
}

template <class Ops, class W, int T>
void nt_block(int64_t kc, const float* s, int64_t lds, const void* w_data, int64_t ldw, int64_t rows, float* acc,
              int64_t ld_acc) {
  const W* w = static_cast<const W*>(w_data);
  constexpr int R = nt_rows(Ops::kRegisters, T);
  // Rows ahead to prefetch: whole tiles, about kNtPrefetchBytes of W.
  const int64_t tile_bytes = R * kc * static_cast<int64_t>(sizeof(W));
  const int64_t ahead =
      R * std::clamp<int64_t>((kNtPrefetchBytes + tile_bytes - 1) / tile_bytes, 1, kNtPrefetchMaxTiles);
  int64_t j = 0;
  for (; j + R <= rows; j += R) nt_tile<Ops, W, T, R>(kc, s, lds, w + j * ldw, ldw, ahead, acc + j, ld_acc);
  for (; j < rows; ++j) nt_tile<Ops, W, T, 1>(kc, s, lds, w + j * ldw, ldw, ahead, acc + j, ld_acc);
}

/// The runtime T (1..kSkinnyMaxT) as a template argument.
template <class Ops, class W, int T = 1>
void nn_for(int t_count, int64_t kc, const float* s, const void* w, int64_t ldw, int64_t cols, float* acc,
            int64_t ld_acc) {
  if constexpr (T <= kSkinnyMaxT) {
    if (t_count == T) return nn_block<Ops, W, T>(kc, s, w, ldw, cols, acc, ld_acc);
    nn_for<Ops, W, T + 1>(t_count, kc, s, w, ldw, cols, acc, ld_acc);
  }
}

template <class Ops, class W, int T = 1>
void nt_for(int t_count, int64_t kc, const float* s, int64_t lds, const void* w, int64_t ldw, int64_t rows, float* acc,
            int64_t ld_acc) {
  if constexpr (T <= kSkinnyMaxT) {
    if (t_count == T) return nt_block<Ops, W, T>(kc, s, lds, w, ldw, rows, acc, ld_acc);
    nt_for<Ops, W, T + 1>(t_count, kc, s, lds, w, ldw, rows, acc, ld_acc);
  }
}

/// The SkinnyKernel entry points of a path.
template <class Ops>
void nn(core::DType w_type, int t_count, int64_t kc, const float* s, const void* w, int64_t ldw, int64_t cols,
        float* acc, int64_t ld_acc) {
  switch (w_type) {
    case core::DType::F16:
      return nn_for<Ops, Half>(t_count, kc, s, w, ldw, cols, acc, ld_acc);
    case core::DType::BF16:
      return nn_for<Ops, BFloat16>(t_count, kc, s, w, ldw, cols, acc, ld_acc);
    default:
      return nn_for<Ops, float>(t_count, kc, s, w, ldw, cols, acc, ld_acc);
  }
}

template <class Ops>
void nt(core::DType w_type, int t_count, int64_t kc, const float* s, int64_t lds, const void* w, int64_t ldw,
        int64_t rows, float* acc, int64_t ld_acc) {
  switch (w_type) {
    case core::DType::F16:
      return nt_for<Ops, Half>(t_count, kc, s, lds, w, ldw, rows, acc, ld_acc);
    case core::DType::BF16:
      return nt_for<Ops, BFloat16>(t_count, kc, s, lds, w, ldw, rows, acc, ld_acc);
    default:
      return nt_for<Ops, float>(t_count, kc, s, lds, w, ldw, rows, acc, ld_acc);
  }
}

}  // namespace
}  // namespace gpukern::cpu::skinny_simd
