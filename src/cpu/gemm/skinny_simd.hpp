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
#include <type_traits>

namespace gpukern::cpu::skinny_simd {
namespace {

/// How the NN form walks W for T rows of S (nn_walk below). A pass reads `rows` rows of W
/// side by side over the columns of a panel (`panel` columns, 0: the whole strip) and adds
/// them into the T x panel accumulator tile by tile, loading and storing each accumulator
/// tile once per pass; a panel is walked over the whole depth block before the next. Each
/// tile prefetches the rows `ahead_rows` further down at its own columns (0: none) with
/// `locality` (__builtin_prefetch's: 3 all cache levels, 1 L2 only), and each row of its
/// pass `in_row_bytes` further along the row into L1 (0: none).
struct NnWalk {
  int rows = 16;
  int64_t panel = 0;
  int ahead_rows = 0;
  int locality = 1;
  int64_t in_row_bytes = 0;
  constexpr bool operator==(const NnWalk& o) const {
    return rows == o.rows && panel == o.panel && ahead_rows == o.ahead_rows && locality == o.locality &&
           in_row_bytes == o.in_row_bytes;
  }
};

/// Why these walks: with T FMAs per vector of W, the out-of-order window holds only a few
/// KB of W's loads ahead of the FMAs, and the hardware prefetchers alone do not run far
/// enough ahead (on a Zen 5 VM a plain read stream with 4-8 FMAs per vector reads 25-35%
/// slower than without; a prefetch 8-32 KB ahead restores it to ~90%). Without a
/// prefetch far enough ahead the kernel waits for W's misses in turn with its FMAs.
///  * T = 1: 8 rows a pass over the whole strip, no prefetch: the accumulator row is small
///    and the window reaches far enough (extra prefetch instructions cost 5-13%).
///  * T = 2-3: 16 or 32 rows a pass over the strip (the T x strip accumulator in L2, moved
///    twice per pass: more rows cut that traffic per byte of W), the next pass's rows at
///    the tile's columns prefetched into L2 (a pass takes far longer than a memory access).
///    The 512-column panel below: T = 2 -2..+3%; T = 3 +3..+33% when the machine read
///    77-104 GB/s, -2..-13% when it read 42-63.
///  * T = 4-7: panels of 1024 columns, 2 rows a pass: the T x 1024 accumulator (16-28 KB)
///    stays in L1, so its loads and stores per pass are cheap, and the next two rows of the
///    panel are prefetched into L1 about two rows (8 KB of f32) ahead. Two cores, against
///    the whole-strip walk (32 rows, T = 4-6; 16 rows, T = 7): T = 4-6 +10-35%, T = 7
///    +30-60% on 4096 x 4096, 11008 x 4096 and 4096 x 11008 when the machine read 75-100
///    GB/s; within noise when it read 40-60 GB/s (memory bound either way). The 512-column
///    panel below: -12..+14% at T = 4-7.
///  * T = 8-14: panels of 512 columns, 4 rows a pass: the T x 512 accumulator (16-28 KB)
///    stays in L1, and each of its loads and stores serves 4 rows of W, half the traffic
///    per byte of the 1024-column, 2-row walk, which at T = 8 lost to the whole-strip walk
///    (its accumulator traffic added to FMAs that already take most of the time: T = 8 f32
///    needs ~70% of two cores' FMA peak to keep up with the read stream). The next four
///    rows of the panel are prefetched into L1. Two cores, against the whole-strip walk (16
///    rows a pass, the next pass into L2, each row 1 KB ahead into L1), when the machine
///    read 77-104 GB/s: T = 8 +7-24% on 4096 x 4096, 11008 x 4096 and 4096 x 11008, T = 9
///    +31-56%, T = 10-13 +9-24%, T = 14 +4-10%; when it read 43-62 GB/s: T = 8 -3..-8%,
///    +9%, +2% on the three, T = 9 +9-10%, T = 12 +6%. At T = 8, 8 rows a pass, panels of
///    768 or the prefetch 8 rows ahead were up to 23% slower.
///  * T = 15-16: 16 rows a pass over the strip, the next pass's rows into L2 and each row
///    1 KB ahead into L1 (the panel walk, with 30-32 KB of accumulator in L1: -15..+4%;
///    panels of 384: -2..-6%).
/// T = 9-16 take each tile of W with two groups of rows of S in turn (nn_pass): they are
/// bound by the FMAs.
/// Those panels are for SkinnyWalk::L1 (AMD, kSkinnyL1WalkMinBytes of L1 data or more). With
/// 32 KB (AMD Zen 4, two cores) the T x 1024 accumulator, the rows in flight and the rows
/// prefetched into L1 evict each other; there:
///  * T = 4-7: panels of 2048 columns (the accumulator in L2), 4 rows a pass, the rows 8
///    further down prefetched into L2: 72-102% of the read stream against 42-69% for the
///    L1 panels (T = 4-7 x 4096 x 4096, T = 4 x 11008 x 4096 and x 4096 x 11008);
///  * T = 8-14: T = 2's walk, 16 rows a pass over the strip, the next pass into L2: T = 8
///    75-92% against 50-73%, T = 9 74-80% against 45-50%, T = 12-14 42-73% against 29-58%.
/// SkinnyWalk::Rows (Intel cores) takes the L2 walks at T = 1-3, and reads W's rows over the
/// whole strip (whole rows of the thread's columns, which the L2 streamer follows within
/// each 4 KB page) from T = 4:
///  * T = 4-7: 4 rows a pass, the next 4 into L2. Two Intel cores (48 KB L1, 2 MB L2),
///    against the 2048-column panels of 4 rows: 11008 x 4096 T = 4 87-91 -> 102-107% of the
///    read stream, T = 6 80 -> 101-104%, T = 7 77-79 -> 100-102%; the 4096-wide weights
///    level (93-102 -> 97-102%). 8 rows a pass 88-109%, 16 rows 86-94%, 2 rows 81-97%,
///    panels of 4096 columns 88-106%, 4 rows with none prefetched 85-98%, or 8 ahead
///    99-105%.
///  * T = 8-16: 8 rows a pass, the next pass into L2. Against 16 rows a pass: T = 8 89-94 ->
///    96-99% of the read stream (4096 x 4096), 85 -> 93% (4096 x 11008), T = 16 77-81 ->
///    80-83%, T = 12-16 over 11008 x 4096 67-71 -> 77-80%; 32 rows 50-75%, 4 rows 74-89%, 8
///    rows with the pass after next 71-91%, 16 rows with a 512-byte prefetch along each row
///    into L1 67-91%, panels of 1024 columns 62-86%.
constexpr NnWalk nn_walk(int t, SkinnyWalk walk) {
  const bool l1 = walk == SkinnyWalk::L1;
  if (t == 1) return {8, 0, 0, 1, 0};
  if (t == 2) return {16, 0, 16, 1, 0};
  if (t == 3) return {32, 0, 32, 1, 0};
  if (t <= 7) {
    if (walk == SkinnyWalk::Rows) return {4, 0, 4, 1, 0};
    return l1 ? NnWalk{2, 1024, 2, 3, 0} : NnWalk{4, 2048, 8, 1, 0};
  }
  if (walk == SkinnyWalk::Rows) return {8, 0, 8, 1, 0};
  if (t <= 14) return l1 ? NnWalk{4, 512, 4, 3, 0} : NnWalk{16, 0, 16, 1, 0};
  return {16, 0, 16, 1, 1024};
}

/// NT form's software prefetch from T = kSkinnyNtStreamMinT on (locality 3: all cache
/// levels). The depth blocks are short (2-4 KB of each W row, skinny.hpp), so the
/// hardware prefetchers see short streams that start cold; each tile prefetches the rows
/// of the tile about kNtPrefetchBytes of W ahead in read order (the same depth, rows
/// further down the strip). The out-of-order window alone holds too few loads of W: each
/// depth step also loads T vectors of S, which fill the load queue first. One core,
/// 4096 x 11008, against 32 KB blocks that prefetched one tile ahead from T = 5 only:
/// T = 3-7 6-30% more bandwidth, T = 4 x 4096 x 4096 12%; T = 8 unchanged (there the FMAs
/// and S loads take as long as the memory traffic). 10-12 KB ahead beat 3-6 KB and 20 KB.
/// Into L1 (locality 3) with SkinnyWalk::L1 (on a Zen 5 L2 only was within -8..+5%); into
/// L2 (locality 1) with SkinnyWalk::L2, on cores of less L1 data, where the prefetched
/// rows evict the S block (a 32 KB Zen 4: T = 3-4 +9-29 points of the read stream, T = 8
/// +7-19, T = 12-16 +5-8).
/// SkinnyWalk::Rows prefetches none ahead: each row of W is one long run, which the
/// core's own prefetchers follow into L2, and each tile prefetches its rows
/// kNtRowPrefetchBytes further along into L1 (two Intel cores, T = 8: 512 or 1024 bytes
/// 91-95% of the read stream, none 83%, 2048 bytes 75%).
constexpr int nt_prefetch_locality(SkinnyWalk walk) { return walk == SkinnyWalk::L1 ? 3 : 1; }
constexpr int64_t kNtPrefetchBytes = 10 << 10;
constexpr int64_t kNtRowPrefetchBytes = 512;
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
/// Partial, with V == 1) of the accumulator, for T rows of S stored s[u * TS + t] (TS: all
/// rows of S, of which this tile takes T; the walk is TS's). Prefetch false: the group of
/// rows that reads the tile of W second (from L1) leaves W's prefetches to the first.
template <class Ops, class W, int T, int V, int U, bool Partial, SkinnyWalk Walk, int TS = T, bool Prefetch = true>
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
    constexpr NnWalk walk = nn_walk(TS, Walk);
    if (Prefetch && walk.ahead_rows > 0 && !Partial)
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) __builtin_prefetch(w + (u + walk.ahead_rows) * ldw + v * L, 0, walk.locality);
    if (Prefetch && walk.in_row_bytes > 0 && !Partial)
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v)
        __builtin_prefetch(w + u * ldw + v * L + walk.in_row_bytes / int64_t(sizeof(W)), 0, 3);
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) {
      const Vec a = Ops::in_register(Ops::set1(s[u * TS + t]));
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
/// T above kSkinnyTileMaxT: each tile of W for the first group of rows of S, then again
/// (from L1) for the second, its accumulator rows G1 further down.
template <class Ops, class W, int T, int U, SkinnyWalk Walk>
void nn_pass(const float* s, const W* w, int64_t ldw, int64_t cols, float* acc, int64_t ld_acc) {
  constexpr int L = Ops::kLanes;
  if constexpr (T <= kSkinnyTileMaxT) {
    constexpr int V = nn_vectors(Ops::kRegisters, T);
    int64_t j = 0;
    for (; j + V * L <= cols; j += V * L) nn_tile<Ops, W, T, V, U, false, Walk>(s, w + j, ldw, acc + j, ld_acc, L);
    for (; j + L <= cols; j += L) nn_tile<Ops, W, T, 1, U, false, Walk>(s, w + j, ldw, acc + j, ld_acc, L);
    if (j < cols) nn_tile<Ops, W, T, 1, U, true, Walk>(s, w + j, ldw, acc + j, ld_acc, static_cast<int>(cols - j));
  } else {
    constexpr int G1 = (T + 1) / 2, G2 = T - G1;  // (G1, cols) and (G2, cols) of the accumulator
    constexpr int V = nn_vectors(Ops::kRegisters, G1);
    float* acc2 = acc + G1 * ld_acc;
    int64_t j = 0;
    for (; j + V * L <= cols; j += V * L) {
      nn_tile<Ops, W, G1, V, U, false, Walk, T>(s, w + j, ldw, acc + j, ld_acc, L);
      nn_tile<Ops, W, G2, V, U, false, Walk, T, false>(s + G1, w + j, ldw, acc2 + j, ld_acc, L);
    }
    for (; j + L <= cols; j += L) {
      nn_tile<Ops, W, G1, 1, U, false, Walk, T>(s, w + j, ldw, acc + j, ld_acc, L);
      nn_tile<Ops, W, G2, 1, U, false, Walk, T, false>(s + G1, w + j, ldw, acc2 + j, ld_acc, L);
    }
    if (j < cols) {
      const int count = static_cast<int>(cols - j);
      nn_tile<Ops, W, G1, 1, U, true, Walk, T>(s, w + j, ldw, acc + j, ld_acc, count);
      nn_tile<Ops, W, G2, 1, U, true, Walk, T, false>(s + G1, w + j, ldw, acc2 + j, ld_acc, count);
    }
  }
}

template <class Ops, class W, int T, SkinnyWalk Walk>
void nn_block(int64_t kc, const float* s, const void* w_data, int64_t ldw, int64_t cols, float* acc, int64_t ld_acc) {
  const W* w = static_cast<const W*>(w_data);
  constexpr NnWalk walk = nn_walk(T, Walk);
  constexpr int U = walk.rows;
  const int64_t panel = walk.panel > 0 ? walk.panel : cols;
  for (int64_t j = 0; j < cols; j += panel) {
    const int64_t width = std::min(panel, cols - j);
    int64_t p = 0;
    for (; p + U <= kc; p += U) nn_pass<Ops, W, T, U, Walk>(s + p * T, w + p * ldw + j, ldw, width, acc + j, ld_acc);
    for (; p < kc; ++p) nn_pass<Ops, W, T, 1, Walk>(s + p * T, w + p * ldw + j, ldw, width, acc + j, ld_acc);
  }
}

/// Depth steps [p, end) of R rows of W (from w) against T rows of S, added into the R x T
/// vector sums c. end - p is a multiple of the vector, or end is the block's end kc, whose
/// partial last vector reads W only below kc (S is zero-padded). From
/// T = kSkinnyNtStreamMinT, prefetches the rows `ahead` rows further down at each step, or
/// with SkinnyWalk::Rows each row kNtRowPrefetchBytes further along (never dereferenced: a
/// prefetch past the end of W does not fault); Prefetch false: none (a second group of rows
/// of S, which reads the same W again from cache).
template <class Ops, class W, int T, int R, SkinnyWalk Walk, bool Prefetch>
inline void nt_steps(int64_t p, int64_t end, const float* s, int64_t lds, const W* w, int64_t ldw, int64_t ahead,
                     typename Ops::Vec (&c)[R][T]) {
  using Vec = typename Ops::Vec;
  constexpr int L = Ops::kLanes;
  for (; p + L <= end; p += L) {
    Vec b[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) b[r] = Ops::load(w + r * ldw + p);
    if (Prefetch && T >= kSkinnyNtStreamMinT && Walk == SkinnyWalk::Rows)
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) __builtin_prefetch(w + r * ldw + p + kNtRowPrefetchBytes / int64_t(sizeof(W)), 0, 3);
    else if (Prefetch && T >= kSkinnyNtStreamMinT)
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) __builtin_prefetch(w + (r + ahead) * ldw + p, 0, nt_prefetch_locality(Walk));
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) {
      const Vec a = Ops::in_register(Ops::loadf(s + t * lds + p));
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) c[r][t] = Ops::fma(b[r], a, c[r][t]);
    }
  }
  if (p < end) {  // depth tail
    const int count = static_cast<int>(end - p);
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
}

/// Adds the R x T vector sums c into acc[t * ld_acc + r]: one transposed reduction per row
/// of S (Ops::add_hsums), the R sums of a row of acc side by side.
template <class Ops, int T, int R>
inline void nt_add_sums(const typename Ops::Vec (&c)[R][T], float* acc, int64_t ld_acc) {
#pragma GCC unroll 8
  for (int t = 0; t < T; ++t) {
    typename Ops::Vec column[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) column[r] = c[r][t];
    Ops::template add_hsums<R>(column, acc + t * ld_acc);
  }
}

/// R rows of W (from w) against the T rows of S over the depth block, added into
/// acc[t * ld_acc + r]: R x T vector dot products (nt_steps), then their sums.
template <class Ops, class W, int T, int R, SkinnyWalk Walk, bool Prefetch = true>
inline void nt_tile(int64_t kc, const float* s, int64_t lds, const W* w, int64_t ldw, int64_t ahead, float* acc,
                    int64_t ld_acc) {
  typename Ops::Vec c[R][T];  // (R, T) dot products, L partial sums each
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) c[r][t] = Ops::zero();
  nt_steps<Ops, W, T, R, Walk, Prefetch>(0, kc, s, lds, w, ldw, ahead, c);
  nt_add_sums<Ops, T, R>(c, acc, ld_acc);
}

/// The R x G vector sums of one group of rows of S, kept in memory between chunks
/// (nt_tile_chunked), loaded into registers.
template <class Ops, int G, int R>
inline void nt_load_sums(const float* sums, typename Ops::Vec (&c)[R][G]) {
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int t = 0; t < G; ++t) c[r][t] = Ops::loadf(sums + (r * G + t) * Ops::kLanes);
}

/// One group of G rows of S over the tile's depth steps [p, end), its vector sums taken
/// from and put back into `sums`.
template <class Ops, class W, int G, int R, bool Prefetch>
inline void nt_chunk(int64_t p, int64_t end, const float* s, int64_t lds, const W* w, int64_t ldw, float* sums) {
  typename Ops::Vec c[R][G];
  nt_load_sums<Ops, G, R>(sums, c);
  nt_steps<Ops, W, G, R, SkinnyWalk::Rows, Prefetch>(p, end, s, lds, w, ldw, 0, c);
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int t = 0; t < G; ++t) Ops::storef(sums + (r * G + t) * Ops::kLanes, c[r][t]);
}

/// A group's vector sums from memory, added into acc (nt_add_sums).
template <class Ops, int G, int R>
inline void nt_add_stored_sums(const float* sums, float* acc, int64_t ld_acc) {
  typename Ops::Vec c[R][G];
  nt_load_sums<Ops, G, R>(sums, c);
  nt_add_sums<Ops, G, R>(c, acc, ld_acc);
}

/// SkinnyWalk::Rows above kSkinnyTileMaxT: the tile's rows are long (a whole row of W a
/// block), so the second group of rows of S would read them again from L2. Instead both
/// groups take the tile kSkinnyNtRowChunkFloats of depth at a time (skinny.hpp), the second
/// right after the first, while the chunk of W is in L1; each group's R x G vector sums
/// wait in memory (L1) between chunks.
template <class Ops, class W, int T, int R>
inline void nt_tile_chunked(int64_t kc, const float* s, int64_t lds, const W* w, int64_t ldw, float* acc,
                            int64_t ld_acc) {
  constexpr int L = Ops::kLanes;
  constexpr int G1 = (T + 1) / 2, G2 = T - G1;
  alignas(64) float sums[R * T * L];  // group 1's (R, G1) vectors, then group 2's (R, G2)
  float* sums2 = sums + R * G1 * L;
  for (float& v : sums) v = 0.0f;
  for (int64_t p = 0; p < kc; p += kSkinnyNtRowChunkFloats) {
    const int64_t end = std::min(kc, p + kSkinnyNtRowChunkFloats);
    nt_chunk<Ops, W, G1, R, true>(p, end, s, lds, w, ldw, sums);
    nt_chunk<Ops, W, G2, R, false>(p, end, s + G1 * lds, lds, w, ldw, sums2);
  }
  nt_add_stored_sums<Ops, G1, R>(sums, acc, ld_acc);
  nt_add_stored_sums<Ops, G2, R>(sums2, acc + G1 * ld_acc, ld_acc);
}

/// T above kSkinnyTileMaxT: each tile of R rows of W against the first group of rows of S,
/// then again (from L1) against the second, whose S rows and accumulator rows start G1
/// further down; with SkinnyWalk::Rows a chunk of the depth at a time (nt_tile_chunked).
template <class Ops, class W, int T, SkinnyWalk Walk>
void nt_block(int64_t kc, const float* s, int64_t lds, const void* w_data, int64_t ldw, int64_t rows, float* acc,
              int64_t ld_acc) {
  const W* w = static_cast<const W*>(w_data);
  constexpr int G1 = T <= kSkinnyTileMaxT ? T : (T + 1) / 2, G2 = T - G1;
  constexpr int R = nt_rows(Ops::kRegisters, G1);
  if constexpr (G2 > 0 && Walk == SkinnyWalk::Rows) {
    int64_t j = 0;
    for (; j + R <= rows; j += R) nt_tile_chunked<Ops, W, T, R>(kc, s, lds, w + j * ldw, ldw, acc + j, ld_acc);
    for (; j < rows; ++j) nt_tile_chunked<Ops, W, T, 1>(kc, s, lds, w + j * ldw, ldw, acc + j, ld_acc);
    return;
  }
  // Rows ahead to prefetch: whole tiles, about kNtPrefetchBytes of W.
  const int64_t tile_bytes = R * kc * static_cast<int64_t>(sizeof(W));
  const int64_t ahead =
      R * std::clamp<int64_t>((kNtPrefetchBytes + tile_bytes - 1) / tile_bytes, 1, kNtPrefetchMaxTiles);
  const float* s2 = s + G1 * lds;
  float* acc2 = acc + G1 * ld_acc;
  int64_t j = 0;
  for (; j + R <= rows; j += R) {
    nt_tile<Ops, W, G1, R, Walk>(kc, s, lds, w + j * ldw, ldw, ahead, acc + j, ld_acc);
    if constexpr (G2 > 0) nt_tile<Ops, W, G2, R, Walk, false>(kc, s2, lds, w + j * ldw, ldw, ahead, acc2 + j, ld_acc);
  }
  for (; j < rows; ++j) {
    nt_tile<Ops, W, G1, 1, Walk>(kc, s, lds, w + j * ldw, ldw, ahead, acc + j, ld_acc);
    if constexpr (G2 > 0) nt_tile<Ops, W, G2, 1, Walk, false>(kc, s2, lds, w + j * ldw, ldw, ahead, acc2 + j, ld_acc);
  }
}

/// fn(std::integral_constant<SkinnyWalk, walk>{}): the runtime walk as a template argument.
template <class Fn>
void with_walk(SkinnyWalk walk, Fn&& fn) {
  switch (walk) {
    case SkinnyWalk::L1:
      return fn(std::integral_constant<SkinnyWalk, SkinnyWalk::L1>{});
    case SkinnyWalk::L2:
      return fn(std::integral_constant<SkinnyWalk, SkinnyWalk::L2>{});
    default:
      return fn(std::integral_constant<SkinnyWalk, SkinnyWalk::Rows>{});
  }
}

/// The walk among L1, L2 and `Walk` whose NN walk at T is Walk's, the first: one
/// instantiation for the walks that are the same there.
template <int T, SkinnyWalk Walk>
constexpr SkinnyWalk nn_instance() {
  if constexpr (nn_walk(T, SkinnyWalk::L1) == nn_walk(T, Walk)) return SkinnyWalk::L1;
  if constexpr (nn_walk(T, SkinnyWalk::L2) == nn_walk(T, Walk)) return SkinnyWalk::L2;
  return Walk;
}

/// The runtime T (1..kSkinnyMaxT) and walk as template arguments.
template <class Ops, class W, int T = 1>
void nn_for(int t_count, int64_t kc, const float* s, const void* w, int64_t ldw, int64_t cols, float* acc,
            int64_t ld_acc, SkinnyWalk walk) {
  if constexpr (T <= kSkinnyMaxT) {
    if (t_count == T) {
      return with_walk(walk, [&](auto walk_c) {
        nn_block<Ops, W, T, nn_instance<T, decltype(walk_c)::value>()>(kc, s, w, ldw, cols, acc, ld_acc);
      });
    }
    nn_for<Ops, W, T + 1>(t_count, kc, s, w, ldw, cols, acc, ld_acc, walk);
  }
}

template <class Ops, class W, int T = 1>
void nt_for(int t_count, int64_t kc, const float* s, int64_t lds, const void* w, int64_t ldw, int64_t rows, float* acc,
            int64_t ld_acc, SkinnyWalk walk) {
  if constexpr (T <= kSkinnyMaxT) {
    if (t_count == T) {
      if constexpr (T < kSkinnyNtStreamMinT)  // no prefetch: one walk
        return nt_block<Ops, W, T, SkinnyWalk::L1>(kc, s, lds, w, ldw, rows, acc, ld_acc);
      return with_walk(walk, [&](auto walk_c) {
        nt_block<Ops, W, T, decltype(walk_c)::value>(kc, s, lds, w, ldw, rows, acc, ld_acc);
      });
    }
    nt_for<Ops, W, T + 1>(t_count, kc, s, lds, w, ldw, rows, acc, ld_acc, walk);
  }
}

/// The SkinnyKernel entry points of a path.
template <class Ops>
void nn(core::DType w_type, int t_count, int64_t kc, const float* s, const void* w, int64_t ldw, int64_t cols,
        float* acc, int64_t ld_acc, SkinnyWalk walk) {
  switch (w_type) {
    case core::DType::F16:
      return nn_for<Ops, Half>(t_count, kc, s, w, ldw, cols, acc, ld_acc, walk);
    case core::DType::BF16:
      return nn_for<Ops, BFloat16>(t_count, kc, s, w, ldw, cols, acc, ld_acc, walk);
    default:
      return nn_for<Ops, float>(t_count, kc, s, w, ldw, cols, acc, ld_acc, walk);
  }
}

template <class Ops>
void nt(core::DType w_type, int t_count, int64_t kc, const float* s, int64_t lds, const void* w, int64_t ldw,
        int64_t rows, float* acc, int64_t ld_acc, SkinnyWalk walk) {
  switch (w_type) {
    case core::DType::F16:
      return nt_for<Ops, Half>(t_count, kc, s, lds, w, ldw, rows, acc, ld_acc, walk);
    case core::DType::BF16:
      return nt_for<Ops, BFloat16>(t_count, kc, s, lds, w, ldw, rows, acc, ld_acc, walk);
    default:
      return nt_for<Ops, float>(t_count, kc, s, lds, w, ldw, rows, acc, ld_acc, walk);
  }
}

}  // namespace
}  // namespace gpukern::cpu::skinny_simd
