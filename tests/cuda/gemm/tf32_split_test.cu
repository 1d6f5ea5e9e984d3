// The 3xTF32 split of exact f32 (cuda::arch::split_tf32, src/cuda/arch/mma_sm80.cuh), which
// skinny and wgmma_tma's exact-f32 kernels run on every element of both operands:
//  * big is arch::round_tf32(x), and that is x rounded to tf32 to nearest, ties to even on
//    sm_90 and later, away from zero before, bit for bit against a host rounding, for every
//    finite x (ties, carries into the exponent, values that round to infinity) and for
//    infinities;
//  * small is the rest x - big, exactly (big + small == x in double);
//  * the tf32 mma takes small as small truncated to tf32 (its 13 low bits ignored), the
//    property that lets small go to the tensor cores unrounded: checked through mma.sync;
//  * NaN stays NaN: for NaN patterns whose big part wraps to a zero or an infinity, the mma
//    of big + small is NaN;
//  * the three products on the tensor cores give x * y within 2^-19 of |x y| (mean within
//    2^-21) on random operands of any magnitude, where one tf32 product is off by ~2^-11.
#include "gemm_harness.cuh"

#include "cuda/arch/mma_sm80.cuh"
#include "cuda/gemm/skinny/skinny.cuh"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace gpukern::test::cuda_gemm {
namespace {

/// Per block of 16 x values and 8 y values (one warp each): the split parts and round_tf32
/// of each x; through one m16n8k8 tf32 mma with x's part in column 0 of A and 1.0 in row 0 of
/// B, what the tensor cores take of small, and of big + small; the 3xTF32 products
/// x_r * y_n as a 16 x 8 block.
__global__ void split_probe(const uint32_t* x, const uint32_t* y, uint32_t* big, uint32_t* small, uint32_t* rnd,
                            float* hw_small, float* hw_sum, float* prod) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const int lane = static_cast<int>(threadIdx.x), g = lane / 4, q = lane % 4;
  const int blk = static_cast<int>(blockIdx.x);
  const uint32_t* xb = x + 16 * blk;
  if (lane < 16) {
    cuda::arch::split_tf32(xb[lane], big[16 * blk + lane], small[16 * blk + lane]);
    rnd[16 * blk + lane] = cuda::arch::round_tf32(xb[lane]);
  }
  uint32_t b0, s0, b1, s1, yb, ys;
  cuda::arch::split_tf32(xb[g], b0, s0);
  cuda::arch::split_tf32(xb[g + 8], b1, s1);
  cuda::arch::split_tf32(y[8 * blk + g], yb, ys);
  // A(g, q), A(g + 8, q), A(g, q + 4), A(g + 8, q + 4); B(q, g), B(q + 4, g).
  const uint32_t a_big[4] = {q == 0 ? b0 : 0u, q == 0 ? b1 : 0u, 0u, 0u};
  const uint32_t a_small[4] = {q == 0 ? s0 : 0u, q == 0 ? s1 : 0u, 0u, 0u};
  const uint32_t one[2] = {q == 0 ? 0x3f800000u : 0u, 0u};
  float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  cuda::arch::mma_16x8<float>(d, a_small, one);
  if (q == 0) hw_small[16 * blk + g] = d[0], hw_small[16 * blk + g + 8] = d[2];
  float e[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  cuda::arch::mma_16x8<float>(e, a_big, one);
  cuda::arch::mma_16x8<float>(e, a_small, one);
  if (q == 0) hw_sum[16 * blk + g] = e[0], hw_sum[16 * blk + g + 8] = e[2];
  const uint32_t b_big[2] = {q == 0 ? yb : 0u, 0u}, b_small[2] = {q == 0 ? ys : 0u, 0u};
  float p[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  gemm::mma_3xtf32(p, a_big, a_small, b_big, b_small);
  // D(g, 2q), D(g, 2q + 1), D(g + 8, 2q), D(g + 8, 2q + 1).
  float* pb = prod + 128 * blk;
  pb[g * 8 + 2 * q] = p[0], pb[g * 8 + 2 * q + 1] = p[1];
  pb[(g + 8) * 8 + 2 * q] = p[2], pb[(g + 8) * 8 + 2 * q + 1] = p[3];
#endif
}

float as_float(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

/// x (not NaN) rounded to tf32 on the host: to nearest, ties to even or away from zero.
uint32_t host_tf32(uint32_t x, bool ties_even) {
  const uint32_t half = ties_even ? 0xfffu + (x >> 13 & 1u) : 0x1000u;
  if ((x & 0x7f800000u) == 0x7f800000u) return x;  // infinity
  return (x + half) & 0xffffe000u;
}

uint32_t random_bits(std::mt19937& rng) {
  // Sign, an exponent over [-60, 60] and a full mantissa: products stay normal.
  std::uniform_int_distribution<int> exp(127 - 60, 127 + 60);
  const uint32_t mant = rng() & 0x7fffffu, sign = rng() & 1u;
  return sign << 31 | static_cast<uint32_t>(exp(rng)) << 23 | mant;
}

TEST(Tf32Split, BigIsRoundedSmallIsTheExactRestAndNaNSurvives) {
  std::string why_not;
  if (!cuda_device_present(&why_not)) GTEST_SKIP() << why_not;
  int device = 0, major = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device), cudaSuccess);
  const bool ties_even = major >= 9;
  const std::vector<uint32_t> special = {
      0x00000000u, 0x80000000u, 0x3f800000u,  // zeros, 1
      0x3f801000u, 0xbf801000u, 0x3f803000u,  // ties (half a unit): even / away from zero
      0x3f800fffu, 0x3fffffffu, 0x3fffefffu,  // below a tie; a carry into the exponent
      0x7f7fefffu, 0x7f7ff000u, 0xff7fffffu,  // the largest that stays finite; rounding to +-inf
      0x7f800000u, 0xff800000u,               // infinities
      0x7fffffffu, 0xffffffffu, 0x7f800001u, 0x7fc00001u, 0x7fc00000u, 0xffc00000u};  // NaNs
  std::mt19937 rng(20261130);
  std::vector<uint32_t> x = special;
  while (x.size() % 16 != 0 || x.size() < 16 * 256) x.push_back(random_bits(rng));
  const int blocks = static_cast<int>(x.size() / 16);
  std::vector<uint32_t> y(8 * static_cast<size_t>(blocks));
  for (auto& v : y) v = random_bits(rng);

  // One device allocation of 32-bit words: x, y, then the outputs big, small, rnd,
  // hw_small, hw_sum (n each) and prod (8 n), copied back in one piece.
  const size_t n = x.size(), out_words = 13 * n;
  uint32_t* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, (n + y.size() + out_words) * 4), cudaSuccess);
  uint32_t *d_x = d, *d_y = d_x + n, *d_out = d_y + y.size();
  ASSERT_EQ(cudaMemcpy(d_x, x.data(), n * 4, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(d_y, y.data(), y.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
  split_probe<<<blocks, 32>>>(d_x, d_y, d_out, d_out + n, d_out + 2 * n, reinterpret_cast<float*>(d_out + 3 * n),
                              reinterpret_cast<float*>(d_out + 4 * n), reinterpret_cast<float*>(d_out + 5 * n));
  const cudaError_t ran = cudaDeviceSynchronize();
  std::vector<uint32_t> out(out_words);
  const cudaError_t copied = cudaMemcpy(out.data(), d_out, out_words * 4, cudaMemcpyDeviceToHost);
  cudaFree(d);
  ASSERT_EQ(ran, cudaSuccess);
  ASSERT_EQ(copied, cudaSuccess);
  const std::vector<uint32_t> big(out.begin(), out.begin() + n), small(out.begin() + n, out.begin() + 2 * n),
      rnd(out.begin() + 2 * n, out.begin() + 3 * n);
  std::vector<float> hw_small(n), hw_sum(n), prod(n * 8);
  std::memcpy(hw_small.data(), out.data() + 3 * n, n * 4);
  std::memcpy(hw_sum.data(), out.data() + 4 * n, n * 4);
  std::memcpy(prod.data(), out.data() + 5 * n, n * 8 * 4);

  for (size_t i = 0; i < n; ++i) {
    const float xf = as_float(x[i]);
    SCOPED_TRACE(testing::Message() << "x = 0x" << std::hex << x[i]);
    if (std::isnan(xf)) {
      EXPECT_TRUE(std::isnan(as_float(small[i])) || std::isnan(as_float(big[i]))) << "the NaN is lost";
      EXPECT_TRUE(std::isnan(hw_sum[i])) << "the tensor cores' big + small of a NaN is " << hw_sum[i];
      continue;
    }
    EXPECT_EQ(big[i] & 0x1fffu, 0u) << "big is no tf32 value";
    EXPECT_EQ(big[i], rnd[i]) << "big differs from round_tf32";
    EXPECT_EQ(rnd[i], host_tf32(x[i], ties_even))
        << "round_tf32 is not to nearest, ties " << (ties_even ? "to even" : "away");
    if (std::isinf(as_float(big[i]))) continue;  // x infinite or rounding to infinity: small is -+inf or NaN
    EXPECT_EQ(static_cast<double>(as_float(big[i])) + static_cast<double>(as_float(small[i])), static_cast<double>(xf))
        << "big + small is not x";
    EXPECT_EQ(hw_small[i], as_float(small[i] & 0xffffe000u)) << "the tf32 mma does not truncate small";
  }

  // Products of the random operands (blocks past the special values').
  const size_t first = (special.size() + 15) / 16;
  double worst = 0.0, total = 0.0;
  int count = 0;
  for (size_t b = first; b < static_cast<size_t>(blocks); ++b)
    for (int r = 0; r < 16; ++r)
      for (int c = 0; c < 8; ++c) {
        const double want = static_cast<double>(as_float(x[16 * b + r])) * as_float(y[8 * b + c]);
        const double err = std::fabs(prod[128 * b + 8 * r + c] - want) / std::fabs(want);
        worst = std::max(worst, err);
        total += err;
        ++count;
      }
  EXPECT_LE(worst, std::ldexp(1.0, -19)) << "worst relative error of a 3xTF32 product";
  EXPECT_LE(total / count, std::ldexp(1.0, -21)) << "mean relative error of a 3xTF32 product";
}

}  // namespace
}  // namespace gpukern::test::cuda_gemm
