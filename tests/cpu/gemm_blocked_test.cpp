// The `omp_simd` GEMM pieces, for every ISA path this machine supports: the micro-kernel
// alone at every partial tile size, and the blocked algorithm with forced small blocks
// (so that every edge, depth block, A block and thread split is exercised at small
// sizes) against a double-precision reference, with C poisoned and guarded.
#include "cpu/gemm/blocking.hpp"
#include "gemm_check.hpp"

#include <gtest/gtest.h>

#include <string>

namespace gpukern::cpu::test {
namespace {

using core::DType;

// ---- micro-kernel alone ----

void check_micro(const GemmKernel& kernel, int mr, int nr, int64_t kc, float alpha, float beta) {
  std::mt19937 rng(static_cast<unsigned>(mr * 131 + nr * 7 + kc));
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  // Packed panels; B 64-byte aligned, as the algorithm allocates it (aligned vector loads).
  std::vector<float> a_store(kernel.mr * kc), b_store(kernel.nr * kc + 16);
  float* a = a_store.data();
  float* b = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(b_store.data()) + 63) & ~uintptr_t{63});
  for (int64_t i = 0; i < kernel.mr * kc; ++i) a[i] = dist(rng);
  for (int64_t i = 0; i < kernel.nr * kc; ++i) b[i] = dist(rng);
  // C tile with a guard column and row around it: ldc = NR + 3.
  const int64_t ldc = kernel.nr + 3;
  std::vector<float> c((kernel.mr + 1) * ldc);
  for (auto& v : c) v = beta == 0.0f ? NAN : dist(rng);
  const std::vector<float> c_before = c;
  kernel.micro(kc, a, b, c.data(), ldc, alpha, beta, mr, nr);
  for (int i = 0; i < kernel.mr + 1; ++i)
    for (int64_t j = 0; j < ldc; ++j) {
      const float got = c[i * ldc + j];
      if (i >= mr || j >= nr) {  // outside the tile: untouched (bitwise, NaN included)
        ASSERT_EQ(std::memcmp(&got, &c_before[i * ldc + j], 4), 0)
            << kernel.name << " wrote outside the " << mr << "x" << nr << " tile at " << i << "," << j;
        continue;
      }
      double acc = 0;
      for (int64_t p = 0; p < kc; ++p) acc += double(a[p * kernel.mr + i]) * b[p * kernel.nr + j];
      const double want = alpha * acc + (beta == 0.0f ? 0.0 : double(beta) * c_before[i * ldc + j]);
      ASSERT_NEAR(got, want, 1e-5 * (1 + std::fabs(want)))
          << kernel.name << " tile " << mr << "x" << nr << " kc " << kc << " at " << i << "," << j;
    }
}

TEST(GemmMicroKernel, EveryPartialTileEveryPath) {
  for (Isa isa : supported_isas()) {
    const GemmKernel& kernel = gemm_kernel_for(isa);
    SCOPED_TRACE(kernel.name);
    for (int mr = 1; mr <= kernel.mr; ++mr)
      for (int nr = 1; nr <= kernel.nr; ++nr) {
        check_micro(kernel, mr, nr, 7, 1.0f, 0.0f);
        check_micro(kernel, mr, nr, 33, -0.5f, 1.25f);
      }
    check_micro(kernel, kernel.mr, kernel.nr, 1, 2.0f, 0.0f);
    check_micro(kernel, kernel.mr, kernel.nr, 257, 1.0f, -1.0f);
  }
}

// ---- the blocked algorithm ----

using Case = GemmCase;

/// Runs one case through gemm_blocked with this kernel, blocking and thread count.
void check_blocked(const Case& t, const GemmKernel& kernel, const GemmBlocking& blocking, int threads) {
  const std::string label = std::string(kernel.name) + " blocks " + std::to_string(blocking.mc) + "/" +
                            std::to_string(blocking.kc) + "/" + std::to_string(blocking.nc) + " threads " +
                            std::to_string(threads);
  check_gemm(
      t, [&](const core::GemmArgs& g) { gemm_blocked(g, kernel, blocking, threads); }, label);
}

TEST(GemmBlocked, OddShapesTransposesTypesSmallBlocks) {
  for (Isa isa : supported_isas()) {
    const GemmKernel& kernel = gemm_kernel_for(isa);
    // Blocks far smaller than any cache: several A blocks, depth blocks and B blocks.
    const GemmBlocking tiny{2 * kernel.mr, 16, kernel.nr};
    const int64_t shapes[][3] = {
        {1, 1, 1}, {7, 5, 3}, {33, 17, 65}, {kernel.mr * 3 + 1, kernel.nr * 2 + 3, 37}, {61, 127, 40}};
    for (const auto& s : shapes)
      for (int trans = 0; trans < 4; ++trans)
        for (const TypePair& tp : kTypePairs) {
          const Case c0{s[0], s[1], s[2], (trans & 1) != 0, (trans & 2) != 0, tp.ab, tp.c, 1.0f, 0.0f};
          Case c1 = c0;
          c1.alpha = -0.75f;
          c1.beta = 1.5f;
          check_blocked(c0, kernel, tiny, 2);
          check_blocked(c1, kernel, tiny, 3);
          const GemmBlocking chosen =
              choose_blocking(cpu_features().caches, kernel, s[0], s[1], s[2], tp.c == DType::F32, 1);
          check_blocked(c1, kernel, chosen, 1);
        }
  }
}

TEST(GemmBlocked, LargerThanOneBlockWithChosenBlocking) {
  for (Isa isa : supported_isas()) {
    const GemmKernel& kernel = gemm_kernel_for(isa);
    for (const TypePair& tp : {TypePair{DType::F32, DType::F32}, TypePair{DType::BF16, DType::BF16}}) {
      const Case t{301, 517, 1100, false, true, tp.ab, tp.c, 1.0f, 0.5f};
      check_blocked(t, kernel, choose_blocking(cpu_features().caches, kernel, t.m, t.n, t.k, tp.c == DType::F32, 2), 2);
    }
  }
}

TEST(GemmBlocked, DepthZeroScalesC) {
  const GemmKernel& kernel = gemm_kernel_for(cpu_features().best);
  // Empty sizes must not reach a division by zero when choosing blocks.
  const GemmBlocking empty = choose_blocking(cpu_features().caches, kernel, 0, 0, 0, false, 2);
  EXPECT_GT(empty.kc, 0);
  EXPECT_GT(empty.mc, 0);
  check_blocked(Case{5, 9, 0, false, false, DType::F32, DType::F32, 1.0f, 0.0f}, kernel, {14, 16, 32}, 2);
  check_blocked(Case{5, 9, 0, false, false, DType::BF16, DType::F32, 1.0f, -2.0f}, kernel, {14, 16, 32}, 2);
}

// ---- the choices ----

TEST(GemmBlocking, FitsTheCaches) {
  const CacheSizes caches{48 << 10, 1 << 20, 32 << 20};
  for (Isa isa : supported_isas()) {
    const GemmKernel& kernel = gemm_kernel_for(isa);
    for (int threads : {1, 2, 8}) {
      const GemmBlocking b = choose_blocking(caches, kernel, 4096, 4096, 4096, true, threads);
      EXPECT_EQ(b.mc % kernel.mr, 0);
      EXPECT_EQ(b.nc % kernel.nr, 0);
      EXPECT_EQ(b.kc % 16, 0);
      EXPECT_LE(kernel.mr * b.kc * 4, static_cast<int64_t>(caches.l1d)) << kernel.name;
      EXPECT_LE(b.kc * b.nc * 4 * threads, static_cast<int64_t>(caches.l3)) << kernel.name;
      EXPECT_LE(b.mc * 4096 * 4, CacheBudget::kMaxPackedABytes) << kernel.name;
      // Balanced depth slices: no thin last slice (each pays a full pass over C).
      const int64_t last = 4096 % b.kc;
      EXPECT_TRUE(last == 0 || last >= b.kc / 2) << b.kc;
    }
    // f16/bf16 C: the per-thread f32 accumulator stays within its budget.
    const GemmBlocking b16 = choose_blocking(caches, kernel, 8192, 8192, 512, false, 2);
    EXPECT_LE(b16.mc * std::min<int64_t>(b16.nc, 8192) * 4, CacheBudget::kMaxF32CBytes + kernel.mr * b16.nc * 4);
  }
}

TEST(GemmBlocking, WorkSplitKeepsEveryThreadBusy) {
  for (int threads : {2, 3, 8}) {
    const int64_t shapes[][2] = {{1024, 1024}, {4096, 4096}, {100, 8192}, {8192, 20}, {1, 1}};
    for (const auto& shape : shapes) {
      const WorkSplit w = choose_split(shape[0], shape[1], 1024, 14, 32, threads);
      const int64_t m_panels = (shape[0] + 13) / 14, n_panels = (shape[1] + 31) / 32;
      EXPECT_LE(w.row_parts, m_panels);
      EXPECT_LE(w.column_chunks, n_panels);
      // A task per thread at least, wherever the panels allow it.
      EXPECT_GE(w.column_chunks * w.row_parts, std::min<int64_t>(threads, m_panels * n_panels))
          << shape[0] << "x" << shape[1] << " threads " << threads;
    }
  }
  // Square on 2 threads: a row part per thread (they pack A side by side), >= 2 tasks each.
  WorkSplit w = choose_split(1024, 1024, 1024, 14, 32, 2);
  EXPECT_GE(w.row_parts, 2);
  EXPECT_GE(w.column_chunks * w.row_parts, 4);
  // Column chunks never wider than nc.
  w = choose_split(1024, 8192, 1024, 14, 32, 2);
  EXPECT_GE(w.column_chunks, 8);
  // One thread: one task when it fits.
  w = choose_split(1024, 1024, 2048, 14, 32, 1);
  EXPECT_EQ(w.column_chunks * w.row_parts, 1);
}

}  // namespace
}  // namespace gpukern::cpu::test
