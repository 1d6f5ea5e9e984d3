// CPU GEMM rung 4, `skinny`: C = alpha * op(A) op(B) + beta * C when m or n is at most
// kSkinnyMaxT (LLM decode: a few tokens times a weight matrix). Changes vs `omp_simd`:
//  * no packing of the large operand: `omp_simd` copies all of op(B) into panels for
//    14-row tiles of A that here hold 1 to 16 rows, so it moves the weights through memory
//    about three times (read, packed write, packed read) for a product that only needs
//    them read once. This rung streams the weights once, straight from the caller's
//    layout (skinny.hpp: NN form vectorized along the long side, NT form along the depth);
//  * the few activation rows (S) are the only packed data: converted to f32 one depth
//    block at a time into a buffer of at most 32 KB per thread (the NT row walk of
//    SkinnyWalk::Rows: up to half the L2, at most 1 MB);
//  * threads take strips of the long side (the output columns), so each reads its own
//    part of the weights, and its T x strip f32 accumulator stays in cache.
// The result is bound by memory bandwidth at small T (2 T flops per weight element read)
// and by the FMAs towards T = 16 (f32 on two AVX-512 cores: T = 16 needs 16 FMAs of a
// vector per 64 bytes of W).
#include "cpu/element.hpp"
#include "cpu/gemm/skinny.hpp"
#include "cpu/rungs.hpp"
#include "cpu/scratch.hpp"

#include <omp.h>

#include <algorithm>
#include <string>

namespace gpukern::cpu {
namespace {

/// Strips per thread where the long side allows. NN form: one, a contiguous range of
/// columns per thread, so that each row of W is read in the longest pieces (the hardware
/// prefetchers restart on each; on two cores, T = 8, N' = 11008: 95% of a plain read of W
/// with one strip per thread, 58-72% with two or three). NT form: the rows of W are read
/// whole whatever the strip, and two strips per thread let a thread the OS preempts leave
/// work to the others.
constexpr int64_t kNnStripsPerThread = 1, kNtStripsPerThread = 2;
/// Narrowest strip: 64 columns (NN: four cache lines of f32 per row of W) or 8 rows (NT).
constexpr int64_t kMinStripColumns = 64, kMinStripRows = 8;
/// Below this many bytes of W a second thread costs more to wake than it saves.
constexpr int64_t kMinParallelBytes = 256 << 10;

thread_local ScratchBuffer tls_buffers;  // per thread of the team: packed S, accumulator

int64_t round_up(int64_t v, int64_t multiple) { return core::ceil_div(v, multiple) * multiple; }
int64_t round_down(int64_t v, int64_t multiple) { return v / multiple * multiple; }

/// The call as C'(t, j) = sum_p S(t, p) W(p, j) (skinny.hpp), strides in elements.
struct SkinnyShape {
  int64_t t_count = 0, long_dim = 0, k = 0;
  const void* s = nullptr;  // S(t, p) = s[t * s_t + p * s_p]
  int64_t s_t = 0, s_p = 0;
  const void* w = nullptr;  // NN form: w[p * ldw + j]; NT form: w[j * ldw + p]
  int64_t ldw = 0;
  bool nt_form = false;
  void* c = nullptr;  // C'(t, j) = c[t * c_t + j * c_j]
  int64_t c_t = 0, c_j = 0;
};

SkinnyShape skinny_shape(const core::GemmArgs& g) {
  SkinnyShape sh;
  sh.k = g.k;
  if (g.m <= kSkinnyMaxT && g.m <= g.n) {  // S = op(A), W = op(B), C' = C
    sh.t_count = g.m;
    sh.long_dim = g.n;
    sh.s = g.a;
    sh.s_t = g.trans_a ? 1 : g.lda;
    sh.s_p = g.trans_a ? g.lda : 1;
    sh.w = g.b;
    sh.ldw = g.ldb;
    sh.nt_form = g.trans_b;  // B stored n x k
    sh.c_t = g.ldc;
    sh.c_j = 1;
  } else {  // S = op(B)^T, W = op(A)^T, C'(t, j) = C(j, t)
    sh.t_count = g.n;
    sh.long_dim = g.m;
    sh.s = g.b;
    sh.s_t = g.trans_b ? g.ldb : 1;
    sh.s_p = g.trans_b ? 1 : g.ldb;
    sh.w = g.a;
    sh.ldw = g.lda;
    sh.nt_form = !g.trans_a;  // A stored m x k: W(p, j) = a[j * lda + p]
    sh.c_t = 1;
    sh.c_j = g.ldc;
  }
  sh.c = g.c;
  return sh;
}

/// Packs S(t, p0 + p), p < kc, as f32: NN form s[p * T + t]; NT form s[t * lds + p] with
/// zeros from kc up to lds.
template <class AB>
void pack_s(const SkinnyShape& sh, int64_t p0, int64_t kc, int64_t lds, float* dst) {
  const AB* s = static_cast<const AB*>(sh.s);
  const int64_t t_count = sh.t_count;
  for (int64_t t = 0; t < t_count; ++t) {
    const AB* row = s + t * sh.s_t + p0 * sh.s_p;
    if (sh.nt_form) {
      float* out = dst + t * lds;
      for (int64_t p = 0; p < kc; ++p) out[p] = to_float(row[p * sh.s_p]);
      for (int64_t p = kc; p < lds; ++p) out[p] = 0.0f;
    } else {
      for (int64_t p = 0; p < kc; ++p) dst[p * t_count + t] = to_float(row[p * sh.s_p]);
    }
  }
}

/// C'(t, j0 + j) = alpha * acc[t * ld_acc + j] + beta * C'(t, j0 + j) for j < cols
/// (beta == 0 never reads C), rounded to C's type.
template <class C>
void store_strip(const SkinnyShape& sh, const float* acc, int64_t ld_acc, int64_t j0, int64_t cols, float alpha,
                 float beta) {
  C* c = static_cast<C*>(sh.c) + j0 * sh.c_j;
  for (int64_t t = 0; t < sh.t_count; ++t)
    for (int64_t j = 0; j < cols; ++j) {
      C& out = c[t * sh.c_t + j * sh.c_j];
      const float prior = beta == 0.0f ? 0.0f : beta * to_float(out);
      out = from_float<C>(alpha * acc[t * ld_acc + j] + prior);
    }
}

}  // namespace

const SkinnyKernel& skinny_kernel_for(Isa isa) {
  switch (isa) {
    case Isa::Avx512:
      return skinny_kernel_avx512();
    case Isa::Avx2:
      return skinny_kernel_avx2();
    default:
      return skinny_kernel_scalar();
  }
}

SkinnyWalk skinny_walk_for(const std::string& vendor, std::size_t l1d_bytes) {
  if (vendor == "GenuineIntel") return SkinnyWalk::Rows;
  if (vendor == "AuthenticAMD" && l1d_bytes >= kSkinnyL1WalkMinBytes) return SkinnyWalk::L1;
  return SkinnyWalk::L2;
}

const char* skinny_walk_name(SkinnyWalk walk) {
  switch (walk) {
    case SkinnyWalk::L1:
      return "l1";
    case SkinnyWalk::L2:
      return "l2";
    default:
      return "rows";
  }
}

SkinnyBlocking choose_skinny_blocking(int64_t t_count, int64_t long_dim, int64_t k, bool nt_form, int threads,
                                      SkinnyWalk walk, std::size_t l2_bytes) {
  SkinnyBlocking b;
  b.walk = walk;
  t_count = std::clamp<int64_t>(t_count, 1, kSkinnyMaxT);
  long_dim = std::max<int64_t>(long_dim, 1);
  k = std::max<int64_t>(k, 1);
  // Depth block: S's block within the pack budget (NT rows padded to whole vectors), in
  // equal blocks, so there is no thin last one (each block ends in horizontal sums). NT
  // form: a multiple of kPad, so that every block starts W's rows on a whole vector (a
  // block of 1835 made every load of the next ones straddle two cache lines: 65% of a
  // plain read at T = 4, K = 11008, against 93% at K = 4096).
  // NT form from kSkinnyNtStreamMinT: the smaller S block of kNtStreamPackFloats, or with
  // the row walk the S block in L2 (skinny.hpp).
  const bool nt_stream = nt_form && t_count >= kSkinnyNtStreamMinT;
  const int64_t half_l2 = static_cast<int64_t>(l2_bytes / 2 / sizeof(float));
  const int64_t pack = !nt_stream                 ? SkinnyBudget::kPackFloats
                       : walk == SkinnyWalk::Rows ? std::clamp<int64_t>(half_l2, SkinnyBudget::kNtStreamPackFloats,
                                                                        SkinnyBudget::kNtRowPackFloats)
                                                  : SkinnyBudget::kNtStreamPackFloats;
  const int64_t most_kc = nt_form ? round_down(pack / t_count, SkinnyBudget::kPad) : pack / t_count;
  const int64_t blocks = core::ceil_div(k, most_kc);
  b.kc = core::ceil_div(k, blocks);
  if (nt_form) {
    // Rounding the blocks up to whole vectors can leave a thin last one (T = 13, K = 4096:
    // 13 blocks of 304 and one of 144). Then take the first larger block count, up to twice
    // as many, whose rounded blocks leave a last one of at least half a block (there: 16
    // of 256).
    auto rounded = [&](int64_t count) { return std::min(round_up(core::ceil_div(k, count), SkinnyBudget::kPad), k); };
    auto thin = [&](int64_t kc) { return k % kc != 0 && k % kc < kc / 2; };
    b.kc = rounded(blocks);
    for (int64_t count = blocks + 1; thin(b.kc) && count <= 2 * blocks; ++count)
      if (!thin(rounded(count))) b.kc = rounded(count);
  }
  // Strip: kNnStripsPerThread / kNtStripsPerThread per thread where the long side allows,
  // within the budget of the T x strip accumulator.
  const int64_t unit = nt_form ? kMinStripRows : kMinStripColumns;
  const int64_t acc_budget = std::clamp<int64_t>(static_cast<int64_t>(l2_bytes / 4 / sizeof(float)),
                                                 SkinnyBudget::kAccMinFloats, SkinnyBudget::kAccFloats);
  const int64_t most = round_down(acc_budget / t_count, unit);
  const int64_t per_thread = nt_form ? kNtStripsPerThread : kNnStripsPerThread;
  const int64_t balanced = round_up(core::ceil_div<int64_t>(long_dim, per_thread * std::max(threads, 1)), unit);
  b.strip = std::clamp<int64_t>(balanced, unit, most);
  // Strips cut by the budget: a multiple of the threads in number, of equal width (T = 16,
  // N' = 11008, two threads: four strips of 2752, not three of 4096 of which one thread
  // would take two).
  if (b.strip == most && most < long_dim) {
    const int64_t count = round_up(core::ceil_div(long_dim, most), std::max(threads, 1));
    b.strip = round_up(core::ceil_div(long_dim, count), unit);
  }
  return b;
}

void gemm_skinny(const core::GemmArgs& g, const SkinnyKernel& kernel, const SkinnyBlocking& blk, int threads) {
  if (g.m == 0 || g.n == 0) return;
  if (g.k == 0) return scale_c(g);
  const SkinnyShape sh = skinny_shape(g);
  const int64_t kc = blk.kc, strip = blk.strip;
  const int64_t lds = skinny_row_stride(kc), ld_acc = skinny_row_stride(strip);
  const int64_t pack_budget = sh.nt_form ? SkinnyBudget::kNtRowPackFloats : SkinnyBudget::kPackFloats;
  if (sh.t_count > kSkinnyMaxT || kc < 1 || strip < 1 ||
      sh.t_count * (sh.nt_form ? round_up(kc, SkinnyBudget::kPad) : kc) > pack_budget ||
      sh.t_count * round_up(strip, SkinnyBudget::kPad) > SkinnyBudget::kAccFloats)
    throw core::Error(core::Status::InternalError, "skinny gemm: T " + std::to_string(sh.t_count) + ", kc " +
                                                       std::to_string(kc) + ", strip " + std::to_string(strip) +
                                                       " exceed the per-thread buffers");
  const int64_t strips = core::ceil_div(sh.long_dim, strip);
  const std::size_t elem = core::dtype_size(g.ab_type);
  const int t_count = static_cast<int>(sh.t_count);
  // Allocated here, outside the parallel region (an allocation failure is then an error,
  // not a terminate); 64-byte aligned slices of what this blocking needs.
  const int64_t pack_floats = round_up(sh.t_count * (sh.nt_form ? lds : kc), SkinnyBudget::kPad);
  const int64_t per_thread = pack_floats + round_up(sh.t_count * ld_acc, SkinnyBudget::kPad);
  float* buffers = tls_buffers.get(static_cast<std::size_t>(per_thread * threads));

#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (int64_t index = 0; index < strips; ++index) {
    float* packed = buffers + omp_get_thread_num() * per_thread;
    float* acc = packed + pack_floats;
    const int64_t j0 = index * strip, cols = std::min(strip, sh.long_dim - j0);
    for (int64_t t = 0; t < sh.t_count; ++t) std::fill(acc + t * ld_acc, acc + t * ld_acc + cols, 0.0f);
    for (int64_t p0 = 0; p0 < g.k; p0 += kc) {
      const int64_t kcur = std::min(kc, g.k - p0);
      with_element_type(g.ab_type, [&](auto tag) { pack_s<decltype(tag)>(sh, p0, kcur, lds, packed); });
      const char* w = static_cast<const char*>(sh.w);
      if (sh.nt_form)
        kernel.nt(g.ab_type, t_count, kcur, packed, lds, w + (j0 * sh.ldw + p0) * elem, sh.ldw, cols, acc, ld_acc,
                  blk.walk);
      else
        kernel.nn(g.ab_type, t_count, kcur, packed, w + (p0 * sh.ldw + j0) * elem, sh.ldw, cols, acc, ld_acc, blk.walk);
    }
    with_element_type(g.c_type,
                      [&](auto tag) { store_strip<decltype(tag)>(sh, acc, ld_acc, j0, cols, g.alpha, g.beta); });
  }
}

core::Verdict gemm::skinny_supports(const core::GemmArgs& g, const CpuContext&) {
  if (std::min(g.m, g.n) > kSkinnyMaxT)
    return {core::Decline::ShapeLimit, "m = " + std::to_string(g.m) + " and n = " + std::to_string(g.n) +
                                           ": the skinny path needs m or n <= " + std::to_string(kSkinnyMaxT)};
  return {};
}

void gemm::skinny_run(const core::GemmArgs& g, const CpuContext& ctx) {
  if (g.k == 0) return scale_c(g);
  const SkinnyShape sh = skinny_shape(g);
  const int64_t w_bytes = sh.long_dim * sh.k * static_cast<int64_t>(core::dtype_size(g.ab_type));
  const int threads = w_bytes < kMinParallelBytes ? 1 : ctx.threads;
  // The core's walk and L2, once per process (not a string comparison per call).
  static const SkinnyWalk walk = skinny_walk_for(cpu_features().vendor, cpu_features().caches.l1d);
  static const std::size_t l2_bytes = cpu_features().caches.l2;
  gemm_skinny(g, skinny_kernel_for(ctx.isa),
              choose_skinny_blocking(sh.t_count, sh.long_dim, sh.k, sh.nt_form, threads, walk, l2_bytes), threads);
}

}  // namespace gpukern::cpu
