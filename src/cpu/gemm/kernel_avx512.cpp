// AVX-512 kernels of `omp_simd` GEMM (compiled with -mavx512f/bw/dq/vl -mfma -mf16c; called
// only when cpuid and the OS allow AVX-512): a 14x32 micro-kernel and vectorized packing.
//
// Micro-kernel: 14 rows x 32 columns of C live in 28 zmm accumulators for the whole depth
// loop; per depth step it loads 2 vectors of packed B (32 columns), broadcasts 14 values of
// packed A and issues 28 FMAs. 28 accumulators + 2 B vectors + 1 broadcast = 31 of the 32
// zmm registers, and 28 independent FMA chains cover the FMA latency (4 cycles) times the
// FMA ports (2) several times over. Loads per FMA: (2 + 14) / 28, well under the load ports.
//
// Packing: every layout is vectorized, with 16x16 register transposes where the source is
// read across the packed order (A not transposed, B transposed), and f16 / bf16 converted
// to f32 in registers (vcvtph2ps; bf16 is the high half of a float).
//
// Skinny kernels (skinny_simd.hpp) over 16-lane zmm vectors, with masked loads and stores
// for the column and depth tails.
#include "cpu/gemm/kernel.hpp"
#include "cpu/gemm/skinny_simd.hpp"
#include "cpu/simd/avx512.hpp"
#include "cpu/storage_types.hpp"

#include <immintrin.h>

#include <cstdint>

namespace gpukern::cpu {
namespace {

using avx512::first_lanes;
using avx512::load16;
using avx512::store16;

/// The register tile, as data. 14x32 measured best on Zen 5 in the blocked GEMM among the
/// tiles that fit the registers: 8x48 and 6x64 were 3-6% slower, 24x16 7%; 12x32 and
/// 28x16 made GCC 12 spill accumulators.
struct Avx512Tile {
  static constexpr int kLanes = 16;     // floats per zmm
  static constexpr int kMr = 14;        // rows: broadcasts of packed A
  static constexpr int kNrVectors = 2;  // columns: vectors of packed B
  static constexpr int kNr = kNrVectors * kLanes;
  static constexpr int kRegisters = 32;
};
static_assert(Avx512Tile::kMr * Avx512Tile::kNrVectors + Avx512Tile::kNrVectors + 1 <= Avx512Tile::kRegisters,
              "accumulators + B vectors + one broadcast must fit the 32 zmm registers, or the "
              "compiler spills accumulators to the stack inside the depth loop");

constexpr int kMr = Avx512Tile::kMr;
constexpr int kNr = Avx512Tile::kNr;
constexpr int kNv = Avx512Tile::kNrVectors;

/// Bytes of packed B ahead of the current depth step to prefetch (B streams from L2/L3).
constexpr int kPrefetchBytesB = 1024;

/// Transposes 16 vectors (row r = 16 consecutive depth values of source line r) and
/// stores column p (the 16 lines' values at depth p) to dst + p * dst_stride, for p < count.
__attribute__((always_inline)) inline void transpose16_store(__m512 r[16], int64_t count, float* dst,
                                                             int64_t dst_stride, __mmask16 store_mask) {
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) {  // interleave 32-bit elements of row pairs
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {  // then 64-bit pairs
    for (int j = 0; j < 2; ++j) {
      r[i + j] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t[i + j]), _mm512_castps_pd(t[i + j + 2])));
      r[i + j + 2] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t[i + j]), _mm512_castps_pd(t[i + j + 2])));
    }
  }
  for (int i = 0; i < 16; i += 8) {  // then 128-bit lanes, twice
    for (int j = 0; j < 4; ++j) {
      t[i + j] = _mm512_shuffle_f32x4(r[i + j], r[i + j + 4], 0x88);
      t[i + j + 4] = _mm512_shuffle_f32x4(r[i + j], r[i + j + 4], 0xdd);
    }
  }
  for (int j = 0; j < 8; ++j) {
    r[j] = _mm512_shuffle_f32x4(t[j], t[j + 8], 0x88);
    r[j + 8] = _mm512_shuffle_f32x4(t[j], t[j + 8], 0xdd);
  }
  // After the four stages r[k] holds depth p = kOrder[k] (the shuffles interleave blocks).
  constexpr int kOrder[16] = {0, 2, 1, 3, 4, 6, 5, 7, 8, 10, 9, 11, 12, 14, 13, 15};
  for (int k = 0; k < 16; ++k)
    if (kOrder[k] < count) _mm512_mask_storeu_ps(dst + kOrder[k] * dst_stride, store_mask, r[k]);
}

/// Packs `lines` (<= 16) source lines, each contiguous along depth (line l starts at
/// src + l * ld), transposed: dst[p * dst_stride + l] for p < kc; lanes >= lines are 0.
template <class T>
void pack_transposed(const T* src, int64_t ld, int lines, int64_t kc, float* dst, int64_t dst_stride,
                     __mmask16 store_mask) {
  __m512 r[16];
  for (int64_t p = 0; p < kc; p += 16) {
    const int64_t count = kc - p < 16 ? kc - p : 16;
    const __mmask16 mask = first_lanes(count);
    for (int l = 0; l < 16; ++l) r[l] = l < lines ? load16(src + l * ld + p, mask) : _mm512_setzero_ps();
    transpose16_store(r, count, dst + p * dst_stride, dst_stride, store_mask);
  }
}

template <class T>
void pack_a_typed(const PackSource& a, int64_t i0, int64_t rows, int64_t p0, int64_t kc, float* dst) {
  const T* base = static_cast<const T*>(a.data);
  for (int64_t first = 0; first < rows; first += kMr, dst += kMr * kc) {
    const int r = static_cast<int>(rows - first < kMr ? rows - first : kMr);
    // The panel's rows in groups of 16 (one vector, one transpose).
    for (int row0 = 0; row0 < kMr; row0 += 16) {
      const int lines = r - row0 < 0 ? 0 : r - row0 > 16 ? 16 : r - row0;
      const __mmask16 panel_lanes = first_lanes(kMr - row0);
      if (a.trans) {  // stored k x m: one depth step is MR contiguous values
        const __mmask16 mask = first_lanes(lines);
        const T* src = base + p0 * a.ld + i0 + first + row0;
        for (int64_t p = 0; p < kc; ++p)
          _mm512_mask_storeu_ps(dst + p * kMr + row0, panel_lanes, load16(src + p * a.ld, mask));
      } else {  // stored m x k: transpose MR rows into depth-major order
        pack_transposed(base + (i0 + first + row0) * a.ld + p0, a.ld, lines, kc, dst + row0, kMr, panel_lanes);
      }
    }
  }
}

template <class T>
void pack_b_typed(const PackSource& b, int64_t p0, int64_t kc, int64_t j0, int64_t cols, float* dst) {
  const T* base = static_cast<const T*>(b.data);
  if (!b.trans) {
    // Stored k x n: one depth step of a panel is NR contiguous values. Walk 8 depth steps
    // across all panels before the next 8: the source is then read as 8 long row streams
    // (few pages at a time) instead of one short piece of every row per panel.
    constexpr int64_t kRowsPerPass = 8;
    const T* src = base + p0 * b.ld + j0;
    for (int64_t p_first = 0; p_first < kc; p_first += kRowsPerPass) {
      const int64_t p_last = p_first + kRowsPerPass < kc ? p_first + kRowsPerPass : kc;
      for (int64_t first = 0; first < cols; first += kNr) {
        __mmask16 masks[kNv];
        for (int v = 0; v < kNv; ++v) masks[v] = first_lanes(cols - first - 16 * v);
        float* panel = dst + first * kc;  // panel (first / NR) starts at first / NR * NR * kc
        for (int64_t p = p_first; p < p_last; ++p) {
          // The same columns of the next pass's rows, a pass ahead: op(B) comes from
          // memory, and 8 row streams are more than the hardware prefetchers follow well
          // (Zen 5, 4096^3 at 2 threads: packing B from 3.1% to 2.6% of the kernel's time).
          if (p + kRowsPerPass < kc)
            for (int64_t byte = 0; byte < kNr * static_cast<int64_t>(sizeof(T)); byte += 64)
              _mm_prefetch(reinterpret_cast<const char*>(src + (p + kRowsPerPass) * b.ld + first) + byte, _MM_HINT_T0);
          for (int v = 0; v < kNv; ++v)
            _mm512_store_ps(panel + p * kNr + 16 * v, load16(src + p * b.ld + first + 16 * v, masks[v]));
        }
      }
    }
    return;
  }
  for (int64_t first = 0; first < cols; first += kNr, dst += kNr * kc) {
    // Stored n x k: transpose 16 columns of op(B) at a time.
    const int64_t c = cols - first < kNr ? cols - first : kNr;
    for (int part = 0; part < kNv; ++part) {
      const int64_t lines = c - part * 16;
      const int n = static_cast<int>(lines < 0 ? 0 : lines > 16 ? 16 : lines);
      pack_transposed(base + (j0 + first + part * 16) * b.ld + p0, b.ld, n, kc, dst + part * 16, kNr, first_lanes(16));
    }
  }
}

void pack_a(const PackSource& a, int64_t i0, int64_t rows, int64_t p0, int64_t kc, float* dst) {
  switch (a.type) {
    case core::DType::F16:
      return pack_a_typed<Half>(a, i0, rows, p0, kc, dst);
    case core::DType::BF16:
      return pack_a_typed<BFloat16>(a, i0, rows, p0, kc, dst);
    default:
      return pack_a_typed<float>(a, i0, rows, p0, kc, dst);
  }
}

void pack_b(const PackSource& b, int64_t p0, int64_t kc, int64_t j0, int64_t cols, float* dst) {
  switch (b.type) {
    case core::DType::F16:
      return pack_b_typed<Half>(b, p0, kc, j0, cols, dst);
    case core::DType::BF16:
      return pack_b_typed<BFloat16>(b, p0, kc, j0, cols, dst);
    default:
      return pack_b_typed<float>(b, p0, kc, j0, cols, dst);
  }
}

/// One depth step: NV vectors of B, MR broadcasts of A, MR x NV FMAs.
__attribute__((always_inline)) inline void depth_step(const float*& a, const float*& b, __m512 (*acc)[kMr]) {
  __m512 bv[kNv];
  for (int v = 0; v < kNv; ++v) bv[v] = _mm512_load_ps(b + 16 * v);
  // B streams from L2/L3 (each micro-panel is used once per A panel): fetch it ahead.
  for (int v = 0; v < kNv; ++v) _mm_prefetch(reinterpret_cast<const char*>(b + 16 * v) + kPrefetchBytesB, _MM_HINT_T0);
#pragma GCC unroll 32
  for (int i = 0; i < kMr; ++i) {
    const __m512 ai = _mm512_set1_ps(a[i]);
    for (int v = 0; v < kNv; ++v) acc[v][i] = _mm512_fmadd_ps(ai, bv[v], acc[v][i]);
  }
  a += kMr;
  b += kNr;
}

void micro(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, float alpha, float beta, int mr, int nr) {
  __m512 acc[kNv][kMr];  // (MR, NR) as NV column vectors per row
#pragma GCC unroll 32
  for (int i = 0; i < kMr; ++i)
    for (int v = 0; v < kNv; ++v) acc[v][i] = _mm512_setzero_ps();
      // The C tile (rows ldc apart: no hardware prefetcher guesses them) is needed after the
      // depth loop: bring it to L2 now, and into L1 during the last MR steps, late enough
      // that the stream of B through L1 does not evict it again.
#pragma GCC unroll 32
  for (int i = 0; i < kMr; ++i)
    for (int v = 0; v < kNv; ++v) _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + 16 * v), _MM_HINT_T1);
  const int64_t tail = kc < kMr ? kc : kMr;
  int64_t p = 0;
#pragma GCC unroll 2
  for (; p < kc - tail; ++p) depth_step(a, b, acc);
  for (int64_t row = 0; p < kc; ++p, ++row) {
    for (int v = 0; v < kNv; ++v) _mm_prefetch(reinterpret_cast<const char*>(c + row * ldc + 16 * v), _MM_HINT_T0);
    depth_step(a, b, acc);
  }
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
  if (nr == kNr) {
    // Full-width tile (all but the last column panel): plain stores. Masked stores cost
    // several times a plain one on some cores (AMD Zen), and this runs once per tile.
#pragma GCC unroll 32
    for (int i = 0; i < kMr; ++i) {
      if (i >= mr) break;
      float* row = c + i * ldc;
      for (int v = 0; v < kNv; ++v) {
        __m512 out = _mm512_mul_ps(va, acc[v][i]);
        if (beta != 0.0f) out = _mm512_fmadd_ps(vb, _mm512_loadu_ps(row + 16 * v), out);  // beta == 0: C unread
        _mm512_storeu_ps(row + 16 * v, out);
      }
    }
    return;
  }
  __mmask16 masks[kNv];
  for (int v = 0; v < kNv; ++v) masks[v] = first_lanes(nr - 16 * v);
#pragma GCC unroll 32
  for (int i = 0; i < kMr; ++i) {
    if (i >= mr) break;
    float* row = c + i * ldc;
    for (int v = 0; v < kNv; ++v) {
      __m512 out = _mm512_mul_ps(va, acc[v][i]);
      if (beta != 0.0f)  // beta == 0 must not read C (it may hold NaN)
        out = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(masks[v], row + 16 * v), out);
      _mm512_mask_storeu_ps(row + 16 * v, masks[v], out);
    }
  }
}

template <class T>
void store_c_typed(const float* s, int64_t lds, T* c, int64_t ldc, int64_t rows, int64_t cols, float beta) {
  const __m512 vb = _mm512_set1_ps(beta);
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; j += 16) {
      const __mmask16 mask = first_lanes(cols - j);
      __m512 v = _mm512_maskz_loadu_ps(mask, s + i * lds + j);
      if (beta != 0.0f) v = _mm512_fmadd_ps(vb, load16(c + i * ldc + j, mask), v);
      store16(c + i * ldc + j, v, mask);
    }
  }
}

void store_c(const float* s, int64_t lds, void* c, int64_t ldc, core::DType c_type, int64_t rows, int64_t cols,
             float beta) {
  if (c_type == core::DType::F16)
    store_c_typed(s, lds, static_cast<Half*>(c), ldc, rows, cols, beta);
  else
    store_c_typed(s, lds, static_cast<BFloat16*>(c), ldc, rows, cols, beta);
}

/// The vector policy of the skinny kernels (skinny_simd.hpp).
struct Avx512Ops {
  using Vec = __m512;
  static constexpr int kLanes = 16;
  static constexpr int kRegisters = 32;
  static Vec zero() { return _mm512_setzero_ps(); }
  static Vec set1(float v) { return _mm512_set1_ps(v); }
  static Vec fma(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
  static Vec load(const float* p) { return _mm512_loadu_ps(p); }
  template <class T>
  static Vec load(const T* p) {
    return load16(p, first_lanes(16));
  }
  template <class T>
  static Vec load_partial(const T* p, int count) {
    return load16(p, first_lanes(count));
  }
  static Vec loadf(const float* p) { return _mm512_loadu_ps(p); }
  static Vec loadf_partial(const float* p, int count) { return _mm512_maskz_loadu_ps(first_lanes(count), p); }
  static void storef(float* p, Vec v) { _mm512_storeu_ps(p, v); }
  static void storef_partial(float* p, Vec v, int count) { _mm512_mask_storeu_ps(p, first_lanes(count), v); }
  static Vec in_register(Vec v) {
    asm("" : "+v"(v));
    return v;
  }
  static float hsum(Vec v) { return _mm512_reduce_add_ps(v); }
  /// out[i] += hsum(v[i]) for i < N <= 8, as one transposed reduction: pairs of vectors
  /// are halved together (256-bit, then 128-bit lanes), so that each add works on several
  /// sums at once; 17 instructions for 4 sums and 27 for 8, where one hsum each takes ~11.
  template <int N>
  static void add_hsums(const Vec (&v)[N], float* out) {
    static_assert(N >= 1 && N <= 8, "the transposed reduction takes 1 to 8 vectors");
    if constexpr (N == 1) {
      out[0] += hsum(v[0]);
    } else {
      constexpr int kWays = N <= 4 ? 4 : 8;
      Vec a[kWays];
      for (int i = 0; i < kWays; ++i) a[i] = i < N ? v[i] : zero();
      // b[k]: 128-bit lanes 0-1 hold a[2k]'s halves summed, lanes 2-3 a[2k + 1]'s.
      Vec b[kWays / 2];
      for (int k = 0; k < kWays / 2; ++k)
        b[k] = _mm512_add_ps(_mm512_shuffle_f32x4(a[2 * k], a[2 * k + 1], 0x44),
                             _mm512_shuffle_f32x4(a[2 * k], a[2 * k + 1], 0xee));
      // c[m]: 128-bit lane i holds four partial sums of a[4m + i].
      Vec c[kWays / 4];
      for (int m = 0; m < kWays / 4; ++m)
        c[m] = _mm512_add_ps(_mm512_shuffle_f32x4(b[2 * m], b[2 * m + 1], 0x88),
                             _mm512_shuffle_f32x4(b[2 * m], b[2 * m + 1], 0xdd));
      __m512 sums;  // element 4i: the sum of a[i]; with 8 ways element 4i + 1: of a[i + 4]
      if constexpr (kWays == 4) {
        const Vec d = _mm512_add_ps(c[0], _mm512_permute_ps(c[0], _MM_SHUFFLE(1, 0, 3, 2)));
        sums = _mm512_add_ps(d, _mm512_permute_ps(d, _MM_SHUFFLE(2, 3, 0, 1)));
        sums = _mm512_permutexvar_ps(_mm512_setr_epi32(0, 4, 8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), sums);
      } else {
        const Vec d = _mm512_add_ps(_mm512_unpacklo_ps(c[0], c[1]), _mm512_unpackhi_ps(c[0], c[1]));
        sums = _mm512_add_ps(d, _mm512_permute_ps(d, _MM_SHUFFLE(1, 0, 3, 2)));
        sums = _mm512_permutexvar_ps(_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 0, 0, 0, 0, 0, 0, 0, 0), sums);
      }
      const __mmask16 lanes = first_lanes(N);
      _mm512_mask_storeu_ps(out, lanes, _mm512_add_ps(_mm512_maskz_loadu_ps(lanes, out), sums));
    }
  }
};

}  // namespace

const GemmKernel& gemm_kernel_avx512() {
  static constexpr GemmKernel kernel = {"avx512", kMr, kNr, pack_a, pack_b, micro, store_c};
  return kernel;
}

const SkinnyKernel& skinny_kernel_avx512() {
  static constexpr SkinnyKernel kernel = {"avx512", Avx512Ops::kLanes, skinny_simd::nn<Avx512Ops>,
                                          skinny_simd::nt<Avx512Ops>};
  return kernel;
}

}  // namespace gpukern::cpu
