// The skinny GEMM path (rung `skinny`, 04_skinny.cpp): C = alpha * op(A) op(B) + beta * C
// when one side of C is at most kSkinnyMaxT long (LLM decode: T tokens x N x K). The
// product is read as
//
//   C'(t, j) = sum_p S(t, p) * W(p, j),   t < T <= kSkinnyMaxT, j < N' (the long side)
//
// with S the small operand (T x K: the activations) and W the large one (K x N': the
// weights), which is streamed from memory exactly once. W is stored in one of two forms:
//   NN form: W(p, j) = w[p * ldw + j]  (rows of W contiguous: vectorized along j)
//   NT form: W(p, j) = w[j * ldw + p]  (columns of W contiguous: vectorized along p, one
//                                        horizontal sum per (t, j) and depth block)
// m <= kSkinnyMaxT: S = op(A), W = op(B), C' = C. Otherwise (n small) the transposed
// product: S = op(B)^T, W = op(A)^T, C'(t, j) = C(j, t).
//
// The algorithm (04_skinny.cpp) splits N' into strips taken by the threads; per strip an
// f32 accumulator of T x strip stays in cache, and the depth is walked in blocks of kc
// whose slice of S is converted to f32 and packed (32 KB per thread at most, or with the NT
// row walk up to half the L2; SkinnyBudget). The per-ISA
// kernels below add one depth block of one strip into the accumulator.
#pragma once

#include "core/types.hpp"
#include "cpu/cpu_features.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

namespace gpukern::cpu {

/// Longest short side the skinny path takes.
constexpr int kSkinnyMaxT = 16;
/// Most rows of S in one register tile (the kernels' tiles are instantiated for T = 1..8).
/// Above it, T runs as two groups of rows of S, ceil(T / 2) and floor(T / 2), over the same
/// tile of W: the first group reads the tile from memory, the second from L1, so W is still
/// read from memory once (skinny_simd.hpp).
constexpr int kSkinnyTileMaxT = 8;
static_assert(kSkinnyMaxT <= 2 * kSkinnyTileMaxT, "two groups of rows of S at most");
/// The CPU gemm ladder's auto table sends calls with min(m, n) up to this to `skinny`.
constexpr int kSkinnyAutoMaxT = 16;
static_assert(kSkinnyAutoMaxT <= kSkinnyMaxT, "auto may only pick skinny for calls it accepts");

/// NT form from this T on: depth blocks of at most SkinnyBudget::kNtStreamPackFloats and
/// software prefetch of W ahead in read order (skinny_simd.hpp). With T activation rows
/// per weight row the kernel does enough arithmetic per byte that the loads of S and W
/// alone no longer keep enough of W in flight; at T <= 2 they do, and the larger blocks
/// without prefetch instructions are faster.
constexpr int kSkinnyNtStreamMinT = 3;

/// SkinnyWalk::Rows, NT form above kSkinnyTileMaxT: the depth a tile's two groups of rows
/// of S take in turn (skinny_simd.hpp). Two Intel cores, T 12-16, against the second group
/// reading the tile's whole rows again from L2: 256 +8-16 points of the read stream, 128
/// level with 256 except -8 at K = 11008, 512 and 1024 4-10 points below 256.
constexpr int64_t kSkinnyNtRowChunkFloats = 256;

/// Per-thread buffers of the skinny path, in floats: the payload T x kc and T x strip;
/// each row is rounded up to whole vectors and one cache line (kPad) longer (see
/// skinny_row_stride). A call allocates what its blocking needs.
struct SkinnyBudget {
  static constexpr int64_t kPackFloats = 8192;  // packed S block: T x kc (32 KB, L1/L2)
  /// NT form from kSkinnyNtStreamMinT: T x kc within 16 KB, so that the S block stays in
  /// L1 next to the W rows in flight (T = 4: kc 1024, T = 8: 512, each W row read in
  /// 4 or 2 KB pieces).
  static constexpr int64_t kNtStreamPackFloats = 4096;
  /// NT form from kSkinnyNtStreamMinT with SkinnyWalk::Rows: the S block in L2 instead, up
  /// to half the core's L2 and at most this (1 MB: T = 16 over K = 14336 in one block).
  static constexpr int64_t kNtRowPackFloats = 262144;
  /// Accumulator T x strip in L2: a quarter of the core's L2, from 256 KB to 512 KB. The NN
  /// form wants one strip per thread (each row of W read in the longest pieces): with 512 KB
  /// on a 2 MB L2, T 12-16 over N' = 11008 is one strip a thread instead of two, on two Intel
  /// cores 53-54% -> 63-65% of the read stream.
  static constexpr int64_t kAccMinFloats = 65536;
  static constexpr int64_t kAccFloats = 131072;
  static constexpr int64_t kPad = 16;  // a cache line, the widest vector
};

/// Row stride of the packed S block (NT form) and of the accumulator for rows of `length`
/// floats: whole vectors, plus one cache line, so that the T rows fall in different L1
/// sets (at a multiple of 4 KB, as kc = 1024 or a 2048-wide strip would give, all T rows
/// and the rows of W compete for one set's ways).
constexpr int64_t skinny_row_stride(int64_t length) {
  return (length + SkinnyBudget::kPad - 1) / SkinnyBudget::kPad * SkinnyBudget::kPad + SkinnyBudget::kPad;
}

/// The smallest L1 data cache (per core) for the walks that keep their working set in L1:
/// the NN panels of T = 4-14, whose T x 512..1024 accumulator (16-28 KB) stays in L1, and
/// the prefetches of W into L1 (NN panels, NT from kSkinnyNtStreamMinT). They were tuned
/// on AMD cores with 48 KB of L1 data. On a core with 32 KB (AMD Zen 4) the accumulator,
/// W's rows in flight and the rows prefetched into L1 do not fit together: there those walks
/// read W at 42-73% of the read stream (NN, T = 4-8) where walks that keep the accumulator
/// in L2 and prefetch W into L2 read it at 72-102% (docs/notes/llm-gemm.md, "CPU skinny on
/// a 32 KB L1").
constexpr std::size_t kSkinnyL1WalkMinBytes = 48 * 1024;

/// Which walks of W the kernels take, by what each kind of core was measured to reward
/// (docs/notes/llm-gemm.md, the CPU skinny sections):
enum class SkinnyWalk : int {
  /// AMD cores with kSkinnyL1WalkMinBytes of L1 data or more: the NN panels whose
  /// accumulator stays in L1; W prefetched into L1 (NN panels, NT rows ahead).
  L1,
  /// Other AMD cores and unknown vendors: the NN accumulator in L2, W prefetched into L2.
  L2,
  /// Intel cores: NN as L2. NT from kSkinnyNtStreamMinT: each row of W read in one long run
  /// (the S block of T x K in L2, SkinnyBudget::kNtRowPackFloats), a prefetch a few lines
  /// along each row, none rows ahead. Intel's L2 streamer follows a stream only within a
  /// 4 KB page, and its software prefetches into L1 each hold one of the core's few fill
  /// buffers until the line arrives: the 1-2 KB pieces of each row that the L1 / L2 walks
  /// read per depth block, with rows prefetched ahead, left two cores at 66-77% of the read
  /// stream at T = 3-8, where whole rows read at 91-112%. In the NN form the L2 walks read
  /// 13-20 points more of the read stream than the L1 ones at T = 4-12.
  Rows,
};

/// The walk for a core of `vendor` (cpuid's: "GenuineIntel", "AuthenticAMD") with
/// `l1d_bytes` of L1 data.
GK_CPU_TESTED SkinnyWalk skinny_walk_for(const std::string& vendor, std::size_t l1d_bytes);
GK_CPU_TESTED const char* skinny_walk_name(SkinnyWalk walk);  // "l1", "l2", "rows"

struct SkinnyKernel {
  const char* name;  // "avx512"
  int lanes;         // floats per vector
  /// NN form. acc[t * ld_acc + j] += sum_{p < kc} s[p * T + t] * w[p * ldw + j] for t < T,
  /// j < cols; w holds `w_type` elements (f32, f16 or bf16), walked as `walk` says
  /// (SkinnyBlocking::walk).
  void (*nn)(core::DType w_type, int t_count, int64_t kc, const float* s, const void* w, int64_t ldw, int64_t cols,
             float* acc, int64_t ld_acc, SkinnyWalk walk);
  /// NT form. acc[t * ld_acc + j] += sum_{p < kc} s[t * lds + p] * w[j * ldw + p] for t < T,
  /// j < rows. Each row of s is zero beyond kc up to the next multiple of kPad (w is read
  /// only below kc).
  void (*nt)(core::DType w_type, int t_count, int64_t kc, const float* s, int64_t lds, const void* w, int64_t ldw,
             int64_t rows, float* acc, int64_t ld_acc, SkinnyWalk walk);
};

/// The kernels of each path. Only call one the CPU supports (see cpu_features.hpp).
GK_CPU_TESTED const SkinnyKernel& skinny_kernel_avx512();
GK_CPU_TESTED const SkinnyKernel& skinny_kernel_avx2();
GK_CPU_TESTED const SkinnyKernel& skinny_kernel_scalar();
GK_CPU_TESTED const SkinnyKernel& skinny_kernel_for(Isa isa);

/// Depth block and strip width (in N' elements) of one call, and the walks the kernels take.
struct SkinnyBlocking {
  int64_t kc = 0;
  int64_t strip = 0;
  SkinnyWalk walk = SkinnyWalk::L1;
};

/// The blocking for a product with T = t_count, N' = long_dim, depth k on `threads`
/// threads of cores that take `walk` with `l2_bytes` of L2 each: strips within the
/// accumulator budget (a quarter of the L2, within SkinnyBudget::kAccMinFloats..kAccFloats),
/// one per thread (NN form) or two (NT form) where the long side allows; kc within the pack
/// budget (SkinnyWalk::Rows, NT form from kSkinnyNtStreamMinT: the whole depth where T x K
/// fits half the L2 and kNtRowPackFloats).
GK_CPU_TESTED SkinnyBlocking choose_skinny_blocking(int64_t t_count, int64_t long_dim, int64_t k, bool nt_form,
                                                    int threads, SkinnyWalk walk, std::size_t l2_bytes);

/// The skinny algorithm with an explicit kernel and blocking (the rung picks both; tests
/// force small ones). Needs min(m, n) <= kSkinnyMaxT and a blocking within SkinnyBudget.
GK_CPU_TESTED void gemm_skinny(const core::GemmArgs& args, const SkinnyKernel& kernel, const SkinnyBlocking& blocking,
                               int threads);

}  // namespace gpukern::cpu
