// The CUDA GEMM ladder's measured auto table (src/cuda/gemm/auto_table.hpp), on the host:
// each entry takes the calls of its class (the cells its data measured) and not the calls
// just outside it, batch counts included; off sm_90 no entry applies. "" below means no
// entry: auto's ranked order decides.
#include "cuda/gemm/auto_table.hpp"
#include "support/gemm_desc.hpp"

#include <gtest/gtest.h>

#include <string>

namespace gpukern::cuda {
namespace {

using core::DType;
using core::GemmArgs;

const core::DeviceArch kSm90{core::Vendor::Nvidia, 90, 0, "sm_90"};  // bandwidth not known: every bound met
const core::DeviceArch kH100{core::Vendor::Nvidia, 90, 0, "sm_90", 3352};
const core::DeviceArch kH200{core::Vendor::Nvidia, 90, 0, "sm_90", 4814};
const core::DeviceArch kSm80{core::Vendor::Nvidia, 80, 0, "sm_80"};
const core::DeviceArch kSm100{core::Vendor::Nvidia, 100, 0, "sm_100"};

/// A call in the layout op(A) op(B) = N, trans_b (NT when set); 16-bit types set C too.
GemmArgs call(DType type, bool trans_b, int64_t m, int64_t n, int64_t k, int64_t batch = 1) {
  GemmArgs a = test::gemm_args(m, n, k, nullptr, 0, nullptr, 0, nullptr, 0);  // the table reads no pointer
  a.ab_type = a.c_type = type;
  a.trans_b = trans_b;
  a.batch = batch;
  return a;
}
GemmArgs tf32_call(int64_t m, int64_t n, int64_t k, bool trans_b = false) {
  GemmArgs a = call(DType::F32, trans_b, m, n, k);
  a.allow_tf32 = true;
  return a;
}

/// The rung of the entry the call falls in on `arch`, "" when none.
std::string pick(const GemmArgs& a, const core::DeviceArch& arch = kSm90) {
  const auto& table = gemm_auto_table();
  const int e = core::first_matching_entry(table, a, arch);
  return e < 0 ? std::string() : std::string(table[static_cast<std::size_t>(e)].rung);
}

constexpr bool kNN = false, kNT = true;

TEST(CudaAutoTable, VocabularyNNUpTo128RowsIsCublasElseWgmmaTma) {
  for (DType t : {DType::BF16, DType::F16}) {
    for (int64_t rows : {1, 4, 16, 64, 128}) {
      EXPECT_EQ(pick(call(t, kNN, rows, 128256, 4096), kH100), "cublas") << rows;
      // The H200: one token goes to skinny's GEMV, f16 at 2-8 tokens has an entry of its own
      // (the tests below).
      if (rows > 1 && (t == DType::BF16 || rows > 8)) {
        EXPECT_EQ(pick(call(t, kNN, rows, 128256, 4096), kH200), "cublas") << rows;
      }
    }
    EXPECT_EQ(pick(call(t, kNN, 129, 128256, 4096)), "wgmma_tma");
    EXPECT_EQ(pick(call(t, kNN, 8192, 128256, 4096)), "wgmma_tma");
    for (int64_t rows : {1, 16, 128, 512})
      EXPECT_EQ(pick(call(t, kNT, rows, 128256, 4096), kH100), "wgmma_tma") << rows;
  }
  EXPECT_EQ(pick(call(DType::BF16, kNN, 16, 65535, 4096)), "") << "below vocabulary-wide";
  EXPECT_EQ(pick(call(DType::BF16, kNT, 16, 128256, 4096, 2)), "") << "batches: the ranked order";
  EXPECT_EQ(pick(call(DType::BF16, kNN, 16, 128256, 4096, 2)), "");
}

TEST(CudaAutoTable, VocabularyAtOneTokenOrTwoNContiguousIsSkinnyOnTheH200) {
  for (DType t : {DType::BF16, DType::F16}) {
    EXPECT_EQ(pick(call(t, kNN, 1, 128256, 4096), kH200), "skinny");
    EXPECT_EQ(pick(call(t, kNT, 1, 128256, 4096), kH200), "skinny");
    EXPECT_EQ(pick(call(t, kNN, 2, 128256, 4096), kH200), "skinny");
    EXPECT_EQ(pick(call(t, kNN, 1, 65536, 4096), kH200), "skinny") << "vocabulary-wide";
    EXPECT_EQ(pick(call(t, kNT, 2, 128256, 4096), kH200), "cublas") << "K-major at two tokens: level";
    EXPECT_EQ(pick(call(t, kNT, 1, 65535, 4096), kH200), "") << "narrower than vocabulary-wide";
    EXPECT_EQ(pick(call(t, kNN, 1, 65535, 4096), kH200), "") << "narrower than vocabulary-wide";
    EXPECT_EQ(pick(call(t, kNN, 3, 128256, 4096), kH200), t == DType::F16 ? "wgmma_tma" : "cublas") << "three tokens";
    EXPECT_EQ(pick(call(t, kNN, 1, 128256, 4096), kH100), "cublas") << "the H100";
    EXPECT_EQ(pick(call(t, kNT, 1, 128256, 4096), kH100), "wgmma_tma") << "the H100";
    EXPECT_EQ(pick(call(t, kNT, 1, 128256, 8192), kH200), "cublas") << "K not measured";
    EXPECT_EQ(pick(call(t, kNN, 128256, 1, 4096), kH200), "cublas") << "the token as C's column: not this entry";
    EXPECT_EQ(pick(call(t, kNT, 1, 128256, 4096, 2), kH200), "") << "batches: the ranked order";
  }
}

TEST(CudaAutoTable, F16VocabularyDecodeWhereWgmmaTmaLedIsWgmmaTmaOnTheH200) {
  for (int64_t tokens : {3, 4, 8}) {
    EXPECT_EQ(pick(call(DType::F16, kNN, tokens, 128256, 4096), kH200), "wgmma_tma") << tokens;
    EXPECT_EQ(pick(call(DType::BF16, kNN, tokens, 128256, 4096), kH200), "cublas") << tokens << ": bf16";
    EXPECT_EQ(pick(call(DType::F16, kNN, tokens, 128256, 4096), kH100), "cublas") << tokens << ": the H100";
    EXPECT_EQ(pick(call(DType::F16, kNT, tokens, 128256, 4096), kH200), "cublas") << tokens << ": K-major";
  }
  EXPECT_EQ(pick(call(DType::F16, kNN, 16, 128256, 4096), kH200), "cublas") << "16 tokens: level";
  EXPECT_EQ(pick(call(DType::F16, kNT, 16, 128256, 4096), kH200), "wgmma_tma") << "K-major at 16 tokens";
  EXPECT_EQ(pick(call(DType::BF16, kNT, 16, 128256, 4096), kH200), "cublas") << "bf16";
  EXPECT_EQ(pick(call(DType::F16, kNN, 4, 128256, 8192), kH200), "cublas") << "K not measured";
  EXPECT_EQ(pick(call(DType::F16, kNN, 4, 128256, 4096, 2), kH200), "") << "batched: not an llm entry";
}

TEST(CudaAutoTable, DecodeNTIsSkinnyUpTo16Tokens) {
  for (DType t : {DType::BF16, DType::F16})
    for (int64_t tokens : {1, 2, 4, 8, 9, 16}) {
      // The H100: skinny on every non-vocabulary weight, T on either side.
      EXPECT_EQ(pick(call(t, kNT, tokens, 4096, 4096), kH100), "skinny") << tokens;
      EXPECT_EQ(pick(call(t, kNT, tokens, 14336, 4096), kH100), "skinny") << tokens;
      EXPECT_EQ(pick(call(t, kNT, 4096, tokens, 11008), kH100), "skinny") << "T on either side";
      EXPECT_EQ(pick(call(t, kNT, tokens, 128256, 4096), kH100), "wgmma_tma");
      // The H200, tokens as A's rows: skinny (its GEMV path) at one token (bf16: one or
      // two), then wgmma_tma on the 4096..14336 weights.
      const bool gemv = tokens == 1 || (tokens == 2 && t == DType::BF16);
      const std::string h200 = gemv ? "skinny" : "wgmma_tma";
      for (int64_t n : {4096, 11008, 14336}) EXPECT_EQ(pick(call(t, kNT, tokens, n, 4096), kH200), h200) << n;
      EXPECT_EQ(pick(call(t, kNT, tokens, 4096, 11008), kH200), h200) << tokens;
      EXPECT_EQ(pick(call(t, kNT, tokens, 4096, 14336), kH200), h200) << tokens;
      if (gemv) {
        EXPECT_EQ(pick(call(t, kNN, tokens, 4096, 4096), kH200), "wgmma_tma") << "N-contiguous weights";
        EXPECT_EQ(pick(call(t, kNT, tokens, 4095, 4096), kH200), "") << "narrower than measured";
        EXPECT_EQ(pick(call(t, kNT, tokens, 4096, 14337), kH200), "") << "deeper than measured";
        EXPECT_EQ(pick(call(t, kNT, tokens, 4096, 4096), kH100), "skinny") << "the H100: its own entry";
      }
      EXPECT_EQ(pick(call(t, kNT, tokens, 128256, 4096), kH200), tokens == 1                       ? "skinny"
                                                                 : t == DType::F16 && tokens == 16 ? "wgmma_tma"
                                                                                                   : "cublas")
          << "vocabulary on the H200: skinny at one token, else cuBLAS (f16 at 16 tokens: its entry)";
      // Tokens as C's columns on the H200 (not measured as wgmma_tma): the wide weights and
      // 4096 x 11008 skinny, 4096 x 4096 the ranked order.
      EXPECT_EQ(pick(call(t, kNT, 11008, tokens, 4096), kH200), "skinny") << tokens;
      EXPECT_EQ(pick(call(t, kNT, 4096, tokens, 11008), kH200), "skinny") << tokens;
      EXPECT_EQ(pick(call(t, kNT, 4096, tokens, 4096), kH200), "") << tokens;
    }
  EXPECT_EQ(pick(call(DType::BF16, kNT, 3, 4096, 4096), kH200), "wgmma_tma") << "T 3: past the GEMV entry";
  EXPECT_EQ(pick(call(DType::BF16, kNT, 2, 4096, 4096, 2), kH200), "") << "T 2, batches: the ranked order";
  EXPECT_EQ(pick(call(DType::F32, kNT, 2, 4096, 4096), kH200), "skinny") << "f32: the f32 decode entry";
  EXPECT_EQ(pick(call(DType::BF16, kNT, 17, 128256, 4096), kH200), "wgmma_tma") << "T 17";
  EXPECT_EQ(pick(call(DType::BF16, kNT, 17, 4096, 4096), kH100), "") << "T 17";
  EXPECT_EQ(pick(call(DType::BF16, kNT, 17, 14336, 4096), kH200), "") << "T 17";
  EXPECT_EQ(pick(call(DType::BF16, kNT, 8, 16384, 4096), kH200), "") << "wider than measured";
  EXPECT_EQ(pick(call(DType::BF16, kNT, 64, 4096, 4096), kH100), "");
  EXPECT_EQ(pick(call(DType::BF16, kNT, 4, 4096, 4096, 2)), "") << "batches: the ranked order";
}

TEST(CudaAutoTable, NTPrefillOf1024TokensOn14336x4096IsCublas) {
  for (DType t : {DType::BF16, DType::F16}) {
    EXPECT_EQ(pick(call(t, kNT, 1024, 14336, 4096)), "cublas");
    EXPECT_EQ(pick(call(t, kNT, 513, 14336, 4096)), "cublas");
    EXPECT_EQ(pick(call(t, kNT, 2048, 14336, 4096)), "") << "from 2048 tokens wgmma_tma is ahead";
    EXPECT_EQ(pick(call(t, kNT, 512, 14336, 4096), kH100), "") << "512 tokens: wgmma_tma on the H200 only";
    EXPECT_EQ(pick(call(t, kNN, 1024, 14336, 4096)), "") << "N-contiguous weights: wgmma_tma is level";
    EXPECT_EQ(pick(call(t, kNT, 1024, 11008, 4096)), "");
    EXPECT_EQ(pick(call(t, kNT, 1024, 14336, 4096, 2)), "") << "batches: the ranked order";
  }
}

TEST(CudaAutoTable, DecodeNNIsSkinnyOn11008To14336x4096OnlyOnTheH100) {
  for (DType t : {DType::BF16, DType::F16})
    for (int64_t tokens : {1, 2, 4, 8, 16}) {
      EXPECT_EQ(pick(call(t, kNN, tokens, 14336, 4096), kH100), "skinny") << tokens;
      EXPECT_EQ(pick(call(t, kNN, tokens, 11008, 4096), kH100), "skinny") << tokens;
      EXPECT_EQ(pick(call(t, kNN, 14336, tokens, 4096), kH100), "skinny") << "T on either side";
      EXPECT_EQ(pick(call(t, kNN, tokens, 8192, 4096), kH100), "") << "8192 x 4096 stays with cuBLAS";
      EXPECT_EQ(pick(call(t, kNN, tokens, 4096, 4096), kH100), "") << "4096 x 4096 stays with cuBLAS";
      EXPECT_EQ(pick(call(t, kNN, tokens, 4096, 11008), kH100), "") << "long-K weights stay with cuBLAS";
      EXPECT_EQ(pick(call(t, kNN, tokens, 4096, 14336), kH100), "");
    }
  EXPECT_EQ(pick(call(DType::BF16, kNN, 17, 14336, 4096), kH100), "") << "T 17";
  EXPECT_EQ(pick(call(DType::BF16, kNN, 1, 11007, 4096), kH100), "");
  EXPECT_EQ(pick(call(DType::BF16, kNN, 1, 14337, 4096), kH100), "");
  EXPECT_EQ(pick(call(DType::BF16, kNN, 1, 14336, 4095), kH100), "") << "k other than 4096";
  EXPECT_EQ(pick(call(DType::BF16, kNN, 1, 14336, 8192), kH100), "");
  EXPECT_EQ(pick(call(DType::BF16, kNN, 4, 14336, 4096, 2), kH100), "") << "batches: the ranked order";
  EXPECT_EQ(pick(call(DType::F32, kNN, 1, 14336, 4096), kH100), "") << "32-bit types are not in the 16-bit entry";
  // The H200, tokens as A's rows: wgmma_tma (the 16-bit decode entry), T as C's columns skinny.
  EXPECT_EQ(pick(call(DType::BF16, kNN, 4, 14336, 4096), kH200), "wgmma_tma");
  EXPECT_EQ(pick(call(DType::F16, kNN, 16, 4096, 11008), kH200), "wgmma_tma");
  EXPECT_EQ(pick(call(DType::BF16, kNN, 14336, 4, 4096), kH200), "skinny");
}

TEST(CudaAutoTable, Weight4096x4096At16To64And128And256TokensIsWgmmaTmaOnTheH200) {
  for (DType t : {DType::BF16, DType::F16}) {
    for (bool layout : {kNN, kNT})
      for (int64_t tokens : {16, 32, 33, 48, 64}) {
        EXPECT_EQ(pick(call(t, layout, tokens, 4096, 4096), kH200), "wgmma_tma") << tokens;
        if (tokens > 16) {  // 16 tokens on the H100: the decode entries
          EXPECT_EQ(pick(call(t, layout, tokens, 4096, 4096), kH100), "") << tokens << ": the H100 not measured";
        }
      }
    EXPECT_EQ(pick(call(t, kNT, 15, 4096, 4096), kH200), "wgmma_tma") << "15 tokens: the decode entry";
    EXPECT_EQ(pick(call(t, kNN, 4096, 32, 4096), kH200), "") << "tokens as C's columns: not measured";
    EXPECT_EQ(pick(call(t, kNT, 65, 4096, 4096), kH200), "");
    for (bool layout : {kNN, kNT})
      for (int64_t tokens : {128, 256}) {
        EXPECT_EQ(pick(call(t, layout, tokens, 4096, 4096), kH200), "wgmma_tma") << tokens;
        EXPECT_EQ(pick(call(t, layout, tokens, 4096, 4096), kH100), "") << tokens << ": the H100 not measured";
      }
    for (int64_t tokens : {96, 129, 192, 255, 512})
      EXPECT_EQ(pick(call(t, kNN, tokens, 4096, 4096), kH200), "") << tokens << " tokens: not measured, or cuBLAS";
    EXPECT_EQ(pick(call(t, kNT, 4096, 128, 4096), kH200), "") << "tokens as C's columns: not measured";
    EXPECT_EQ(pick(call(t, kNT, 64, 4096, 4096, 2), kH200), "") << "batches: the ranked order";
  }
}

TEST(CudaAutoTable, LongKWeightsAt128And256TokensAreWgmmaTmaOnTheH200) {
  for (int64_t tokens : {128, 256}) {
    for (DType t : {DType::BF16, DType::F16})
      for (bool layout : {kNN, kNT})
        for (int64_t k : {11008, 14336}) {
          EXPECT_EQ(pick(call(t, layout, tokens, 4096, k), kH200), "wgmma_tma") << tokens << " x " << k;
          EXPECT_EQ(pick(call(t, layout, tokens, 4096, k), kH100), "") << k << ": the H100 not measured";
        }
    EXPECT_EQ(pick(call(DType::BF16, kNN, tokens - 1, 4096, 11008), kH200), "") << "only 128 and 256 measured";
    EXPECT_EQ(pick(call(DType::BF16, kNN, tokens, 4096, 8192), kH200), "") << "K = 8192: not measured";
  }
  EXPECT_EQ(pick(call(DType::BF16, kNN, 4096, 128, 11008), kH200), "") << "128 tokens as C's columns";
  EXPECT_EQ(pick(call(DType::BF16, kNN, 512, 4096, 11008), kH200), "") << "512 tokens: cuBLAS";
  EXPECT_EQ(pick(call(DType::BF16, kNN, 256, 4096, 11008, 2), kH200), "") << "batches: the ranked order";
}

TEST(CudaAutoTable, NNPrefillOf512TokensOnWideWeightsIsWgmmaTmaOnTheH200) {
  for (DType t : {DType::BF16, DType::F16})
    for (int64_t n : {11008, 14336}) {
      EXPECT_EQ(pick(call(t, kNN, 512, n, 4096), kH200), "wgmma_tma") << n;
      EXPECT_EQ(pick(call(t, kNN, 512, n, 4096), kH100), "") << n << ": the H100 not measured";
    }
  EXPECT_EQ(pick(call(DType::BF16, kNN, 384, 11008, 4096), kH200), "") << "384 tokens: level";
  EXPECT_EQ(pick(call(DType::BF16, kNN, 512, 4096, 4096), kH200), "") << "4096 wide: the ranked order";
  EXPECT_EQ(pick(call(DType::BF16, kNN, 512, 11008, 11008), kH200), "") << "K = 11008: not measured";
  EXPECT_EQ(pick(call(DType::BF16, kNN, 512, 11008, 4096, 2), kH200), "") << "batches: the ranked order";
}

// The wide weights at 256, 512 and 1024 tokens on the H200 where wgmma_tma led cuBLAS in four
// suite runs: N-contiguous at 256 (and 512, above) and 11008 at 1024; K-major 11008 at 256,
// 14336 at 256 in f16 only and at 512 in both.
TEST(CudaAutoTable, PrefillOnWideWeightsWhereWgmmaTmaLedIsWgmmaTmaOnTheH200) {
  for (DType t : {DType::BF16, DType::F16}) {
    for (int64_t n : {11008, 14336}) {
      EXPECT_EQ(pick(call(t, kNN, 256, n, 4096), kH200), "wgmma_tma") << n;
      EXPECT_EQ(pick(call(t, kNN, 256, n, 4096), kH100), "") << n << ": the H100 not measured";
    }
    EXPECT_EQ(pick(call(t, kNT, 256, 11008, 4096), kH200), "wgmma_tma");
    EXPECT_EQ(pick(call(t, kNN, 1024, 11008, 4096), kH200), "wgmma_tma");
    EXPECT_EQ(pick(call(t, kNT, 512, 14336, 4096), kH200), "wgmma_tma");
    EXPECT_EQ(pick(call(t, kNT, 512, 11008, 4096), kH200), "") << "K-major 11008 at 512 tokens: cuBLAS";
    EXPECT_EQ(pick(call(t, kNT, 1024, 11008, 4096), kH200), "") << "K-major 11008 at 1024 tokens: cuBLAS";
    EXPECT_EQ(pick(call(t, kNT, 1024, 14336, 4096), kH200), "cublas") << "K-major 14336 at 1024 tokens";
    EXPECT_EQ(pick(call(t, kNN, 255, 11008, 4096), kH200), "") << "255 tokens: not measured";
    EXPECT_EQ(pick(call(t, kNN, 1023, 11008, 4096), kH200), "") << "1023 tokens: not measured";
    EXPECT_EQ(pick(call(t, kNN, 256, 11008, 11008), kH200), "") << "K = 11008: not measured";
    EXPECT_EQ(pick(call(t, kNN, 256, 11008, 4096, 2), kH200), "") << "batches: the ranked order";
    EXPECT_EQ(pick(call(t, kNN, 11008, 256, 4096), kH200), "") << "tokens as C's columns: not measured";
  }
  EXPECT_EQ(pick(call(DType::F16, kNT, 256, 14336, 4096), kH200), "wgmma_tma");
  EXPECT_EQ(pick(call(DType::BF16, kNT, 256, 14336, 4096), kH200), "") << "bf16 K-major 14336 at 256: cuBLAS";
}

TEST(CudaAutoTable, ThirtyTwoBitEntriesTakeSingleCallsOnly) {
  EXPECT_EQ(pick(call(DType::F32, kNN, 2, 4096, 4096)), "skinny");
  EXPECT_EQ(pick(call(DType::F32, kNT, 16, 4096, 4096)), "skinny");
  EXPECT_EQ(pick(call(DType::F32, kNN, 1, 4096, 4096)), "");
  EXPECT_EQ(pick(call(DType::F32, kNN, 17, 4096, 4096)), "");
  EXPECT_EQ(pick(call(DType::F32, kNN, 16, 4096, 4096, 3)), "") << "batches: the ranked order";
  EXPECT_EQ(pick(tf32_call(16, 4096, 4096)), "skinny");
  EXPECT_EQ(pick(tf32_call(17, 4096, 4096)), "cublas");
  EXPECT_EQ(pick(tf32_call(64, 4096, 4096)), "cublas");
  EXPECT_EQ(pick(tf32_call(512, 4096, 4096)), "wgmma_tma");
}

TEST(CudaAutoTable, Tf32WithKMajorWeightsAt2To32TokensIsWgmmaTmaOnTheH200) {
  for (int64_t tokens : {2, 4, 8, 16, 24, 32})
    for (int64_t n : {4096, 11008, 14336, 128256})
      for (int64_t k : {4096, 11008, 14336}) {
        // 4096-row weights at T <= 8: skinny's own entry.
        EXPECT_EQ(pick(tf32_call(tokens, n, k, kNT), kH200), n == 4096 && tokens <= 8 ? "skinny" : "wgmma_tma")
            << tokens << " x " << n << " x " << k;
        EXPECT_EQ(pick(tf32_call(tokens, n, k, kNT), kH100), tokens <= 16 ? "cublas" : "")
            << tokens << ": the H100 not measured";
      }
  EXPECT_EQ(pick(tf32_call(1, 11008, 4096, kNT), kH200), "skinny") << "one token: the 32-bit T 1 entry";
  EXPECT_EQ(pick(tf32_call(1, 4096, 14336, kNT), kH200), "cublas") << "one token, K = 14336: cuBLAS";
  EXPECT_EQ(pick(tf32_call(33, 4096, 4096, kNT), kH200), "") << "33 tokens: not measured";
  EXPECT_EQ(pick(tf32_call(16, 4096, 4096, kNN), kH200), "skinny") << "N-contiguous weights: their own entry";
  EXPECT_EQ(pick(tf32_call(4096, 16, 4096, kNT), kH200), "cublas") << "tokens as C's columns: not measured";
  EXPECT_EQ(pick(tf32_call(16, 4096, 2048, kNT), kH200), "cublas") << "K = 2048: not measured";
  EXPECT_EQ(pick(call(DType::F32, kNT, 16, 4096, 4096), kH200), "skinny") << "exact f32: the f32 decode entry";
}

TEST(CudaAutoTable, ExactF32UpTo16TokensIsSkinnyThenTheRankedOrdersWgmmaTma) {
  for (bool trans_b : {kNN, kNT}) {
    for (int64_t tokens : {2, 8, 16})
      EXPECT_EQ(pick(call(DType::F32, trans_b, tokens, 4096, 4096)), "skinny") << tokens;
    for (int64_t tokens : {17, 32, 512}) EXPECT_EQ(pick(call(DType::F32, trans_b, tokens, 4096, 4096)), "") << tokens;
  }
  // The ranked order: wgmma_tma past 16 tokens from 512^3 multiply-adds, unbatched.
  EXPECT_TRUE(exact_f32_on_wgmma(call(DType::F32, kNN, 32, 4096, 4096)));
  EXPECT_TRUE(exact_f32_on_wgmma(call(DType::F32, kNT, 512, 128256, 4096)));
  EXPECT_TRUE(exact_f32_on_wgmma(call(DType::F32, kNN, 512, 512, 512)));
  EXPECT_TRUE(exact_f32_on_wgmma(call(DType::F32, kNN, 4096, 32, 4096))) << "tokens as C's columns";
  EXPECT_FALSE(exact_f32_on_wgmma(call(DType::F32, kNN, 511, 512, 512))) << "below 512^3: cuBLAS";
  EXPECT_FALSE(exact_f32_on_wgmma(call(DType::F32, kNN, 384, 384, 384)));
  EXPECT_FALSE(exact_f32_on_wgmma(call(DType::F32, kNN, 16, 4096, 14336))) << "16 tokens: the table's skinny";
  EXPECT_FALSE(exact_f32_on_wgmma(call(DType::F32, kNN, 1024, 1024, 0))) << "K = 0";
  EXPECT_FALSE(exact_f32_on_wgmma(call(DType::F32, kNN, 2048, 2048, 2048, 3))) << "batches: not measured";
}

TEST(CudaAutoTable, SmallExactF32IsDoubleBuffersTinyTile) {
  for (bool trans_b : {kNN, kNT})
    for (const core::DeviceArch& arch : {kSm90, kH100, kH200}) {
      const int64_t top = trans_b ? 320 : 384;  // K-major B: C's shorter side to 320
      for (int64_t size : {int64_t{17}, int64_t{128}, int64_t{256}, top})
        EXPECT_EQ(pick(call(DType::F32, trans_b, size, size, size), arch), "double_buffer") << size;
      EXPECT_EQ(pick(call(DType::F32, trans_b, 200, 250, 100), arch), "double_buffer");
      EXPECT_EQ(pick(call(DType::F32, trans_b, 384, 17, 1), arch), "double_buffer") << "tokens as C's columns, K 1";
      EXPECT_EQ(pick(call(DType::F32, trans_b, 17, 384, 384), arch), "double_buffer") << "17 rows";
      EXPECT_EQ(pick(call(DType::F32, trans_b, 16, 384, 384), arch), "skinny") << "16 rows: the f32 decode entry";
      EXPECT_EQ(pick(call(DType::F32, trans_b, top + 1, top + 1, 384), arch), "") << "shorter side past the bound";
      EXPECT_EQ(pick(call(DType::F32, trans_b, 128, 385, 128), arch), "") << "a side of 385: the ranked order";
      EXPECT_EQ(pick(call(DType::F32, trans_b, 128, 128, 385), arch), "") << "K 385";
      EXPECT_EQ(pick(call(DType::F32, trans_b, 256, 256, 256, 2), arch), "") << "batches: not measured";
      EXPECT_NE(pick(tf32_call(256, 256, 256, trans_b), arch), "double_buffer") << "tf32: cuBLAS or wgmma_tma";
    }
  GemmArgs tn = call(DType::F32, kNN, 384, 384, 384), tt = call(DType::F32, kNT, 320, 384, 384);
  tn.trans_a = tt.trans_a = true;
  EXPECT_EQ(pick(tn), "double_buffer") << "TN: N-contiguous B";
  EXPECT_EQ(pick(tt), "double_buffer") << "TT: K-major B";
  tt.m = 384;
  EXPECT_EQ(pick(tt), "") << "TT at 384^3: K-major B's bound";
  EXPECT_EQ(pick(call(DType::F32, kNN, 256, 256, 256), kSm80), "") << "sm_80: not measured";
}

TEST(CudaAutoTable, Tf32WithNContiguousWeightsAt128To256TokensIsWgmmaTmaOnTheH200) {
  for (int64_t tokens : {128, 200, 256})
    for (int64_t n : {4096, 11008, 14336})
      for (int64_t k : {4096, 11008, 14336}) {
        EXPECT_EQ(pick(tf32_call(tokens, n, k), kH200), "wgmma_tma") << tokens << " x " << n << " x " << k;
        EXPECT_EQ(pick(tf32_call(tokens, n, k), kH100), "") << tokens << ": the H100 not measured";
      }
  EXPECT_EQ(pick(tf32_call(127, 4096, 4096), kH200), "") << "127 tokens: not measured";
  EXPECT_EQ(pick(tf32_call(257, 4096, 4096), kH200), "") << "257 tokens: not measured";
  EXPECT_EQ(pick(tf32_call(128, 128256, 4096), kH200), "") << "the vocabulary: level with cuBLAS";
  EXPECT_EQ(pick(tf32_call(256, 4096, 4096, kNT), kH200), "wgmma_tma") << "K-major weights: their own entry";
  EXPECT_EQ(pick(tf32_call(4096, 128, 4096), kH200), "") << "tokens as C's columns: not measured";
}

TEST(CudaAutoTable, Tf32WithWideNContiguousWeightsAtFewTokensIsWgmmaTmaOnTheH200) {
  for (int64_t tokens : {32, 48, 64})
    for (int64_t n : {11008, 14336, 128256}) {
      EXPECT_EQ(pick(tf32_call(tokens, n, 4096), kH200), "wgmma_tma") << tokens << " x " << n;
      EXPECT_EQ(pick(tf32_call(tokens, n, 4096), kH100), "cublas") << tokens << ": the H100 not measured";
    }
  for (int64_t tokens : {2, 3, 4})
    EXPECT_EQ(pick(tf32_call(tokens, 128256, 4096), kH200), "skinny") << tokens << " tokens: skinny's GEMV path";
  for (int64_t tokens : {2, 8, 12, 16}) {
    if (tokens > 2) {
      EXPECT_EQ(pick(tf32_call(tokens, 128256, 4096), kH200), "wgmma_tma") << tokens << ": the vocabulary";
    }
    EXPECT_EQ(pick(tf32_call(tokens, 14336, 4096), kH200), "skinny") << tokens << ": narrower weights";
  }
  EXPECT_EQ(pick(tf32_call(1, 128256, 4096), kH200), "skinny") << "one token: the 32-bit T 1 entry";
  EXPECT_EQ(pick(tf32_call(1, 128256, 4096), kH100), "cublas") << "one token: the H100 not measured";
  for (int64_t tokens : {5, 7})
    EXPECT_EQ(pick(tf32_call(tokens, 128256, 4096), kH200), "cublas") << tokens << ": not measured";
  EXPECT_EQ(pick(tf32_call(32, 4096, 4096), kH200), "cublas") << "4096 wide: cuBLAS";
  EXPECT_EQ(pick(tf32_call(64, 4096, 11008), kH200), "cublas") << "K = 11008: cuBLAS";
  EXPECT_EQ(pick(tf32_call(31, 11008, 4096), kH200), "cublas") << "31 tokens: not measured";
  EXPECT_EQ(pick(tf32_call(64, 11008, 4096, kNT), kH200), "") << "K-major weights: not this entry";
}

TEST(CudaAutoTable, Tf32NNAt2To16TokensIsSkinnyOnTheH200) {
  for (int64_t tokens : {2, 5, 8, 9, 16})
    for (int64_t n : {4096, 11008, 14336})
      for (int64_t k : {4096, 11008, 14336}) {
        EXPECT_EQ(pick(tf32_call(tokens, n, k), kH200), "skinny") << tokens << " x " << n << " x " << k;
        EXPECT_EQ(pick(tf32_call(tokens, n, k), kH100), "cublas") << tokens << ": the H100 not measured";
      }
  EXPECT_EQ(pick(tf32_call(1, 4096, 4096), kH200), "cublas") << "one token: cuBLAS";
  EXPECT_EQ(pick(tf32_call(17, 4096, 4096), kH200), "cublas") << "17 tokens: not measured";
  EXPECT_EQ(pick(tf32_call(4, 4096, 2048), kH200), "cublas") << "K = 2048: not measured";
  EXPECT_EQ(pick(tf32_call(4, 11008, 4096, kNT), kH200), "wgmma_tma") << "K-major weights: their own entry";
}

TEST(CudaAutoTable, ThirtyTwoBitAtOneTokenIsSkinnyOnTheH200WhereItLeads) {
  for (bool tf32 : {true, false}) {
    auto one = [tf32](int64_t n, int64_t k, bool trans_b) {
      GemmArgs a = call(DType::F32, trans_b, 1, n, k);
      a.allow_tf32 = tf32;
      return a;
    };
    const std::string other = tf32 ? "cublas" : "";  // tf32 decode's entry, or the ranked order
    // K-major weights of K <= 11008, any width.
    for (int64_t n : {4096, 11008, 14336, 128256})
      for (int64_t k : {4096, 11008}) {
        EXPECT_EQ(pick(one(n, k, kNT), kH200), "skinny") << n << " x " << k;
        EXPECT_EQ(pick(one(n, k, kNT), kH100), other) << n << " x " << k << ": the H100 not measured";
      }
    EXPECT_EQ(pick(one(4096, 14336, kNT), kH200), other) << "K = 14336: cuBLAS";
    // N-contiguous weights 11008 wide and wider with K = 4096.
    for (int64_t n : {11008, 14336, 128256}) EXPECT_EQ(pick(one(n, 4096, kNN), kH200), "skinny") << n;
    EXPECT_EQ(pick(one(4096, 4096, kNN), kH200), other) << "4096 wide: cuBLAS";
    EXPECT_EQ(pick(one(11008, 11008, kNN), kH200), other) << "K = 11008: not measured";
    GemmArgs columns = one(4096, 4096, kNT);  // the token as C's column
    columns.m = 4096, columns.n = 1;
    EXPECT_EQ(pick(columns, kH200), other) << "tokens as C's columns: not measured";
  }
}

TEST(CudaAutoTable, ExactF32NNVocabularyAt2To4TokensIsSkinnyOnTheH200) {
  for (int64_t tokens : {2, 3, 4}) {
    EXPECT_EQ(pick(call(DType::F32, kNN, tokens, 128256, 4096), kH200), "skinny") << tokens;
    EXPECT_EQ(pick(call(DType::F32, kNN, tokens, 128256, 4096), kH100), "skinny") << tokens << ": the H100";
  }
  EXPECT_EQ(pick(call(DType::F32, kNN, 8, 128256, 4096), kH200), "skinny") << "8 tokens: skinny";
  EXPECT_EQ(pick(call(DType::F32, kNT, 4, 128256, 4096), kH200), "skinny") << "K-major: skinny";
}

TEST(CudaAutoTable, Tf32NNAt768To1280EachWayIsWgmmaTmaOnTheH200) {
  for (int64_t s : {768, 1000, 1024, 1100, 1280}) {
    EXPECT_EQ(pick(tf32_call(s, s, s), kH200), "wgmma_tma") << s;
    EXPECT_EQ(pick(tf32_call(s, s, s), kH100), "") << s << ": the H100 not measured";
  }
  EXPECT_EQ(pick(tf32_call(1000, 1280, 1024), kH200), "wgmma_tma");
  EXPECT_EQ(pick(tf32_call(767, 767, 767), kH200), "") << "below 768: not this entry";
  EXPECT_EQ(pick(tf32_call(512, 512, 512), kH200), "") << "512: level with cuBLAS";
  EXPECT_EQ(pick(tf32_call(1000, 1000, 1000, kNT), kH200), "wgmma_tma") << "K-major B: its own entry";
  EXPECT_EQ(pick(tf32_call(1000, 1000, 2048), kH200), "") << "a longer K: not measured";
}

TEST(CudaAutoTable, Tf32NTAt256To1536EachWayIsWgmmaTmaOnTheH200) {
  for (int64_t s : {256, 384, 512, 768, 1000, 1024, 1536}) {
    EXPECT_EQ(pick(tf32_call(s, s, s, kNT), kH200), "wgmma_tma") << s;
    EXPECT_EQ(pick(tf32_call(s, s, s, kNT), kH100), "") << s << ": the H100 not measured";
  }
  for (int64_t tokens : {256, 512, 1024})
    for (int64_t n : {4096, 11008, 14336, 128256})
      EXPECT_EQ(pick(tf32_call(tokens, n, 4096, kNT), kH200), "wgmma_tma") << tokens << " x " << n;
  EXPECT_EQ(pick(tf32_call(128, 128, 128, kNT), kH200), "") << "128: not this entry";
  EXPECT_EQ(pick(tf32_call(2048, 2048, 2048, kNT), kH200), "") << "2048: level with cuBLAS";
  EXPECT_EQ(pick(tf32_call(512, 512, 128, kNT), kH200), "") << "K of 128: not measured";
  GemmArgs batched = tf32_call(512, 512, 512, kNT);
  batched.batch = 2;
  EXPECT_EQ(pick(batched, kH200), "") << "batched: not measured";
}

TEST(CudaAutoTable, BatchedPVAtHeadDimension128IsMmaMultistage) {
  for (DType t : {DType::BF16, DType::F16})
    for (int64_t s : {2048, 3072, 4096}) {
      EXPECT_EQ(pick(call(t, kNN, s, 128, s, 1024)), "mma_multistage") << s;
      EXPECT_EQ(pick(call(t, kNN, s, 128, s, 4096)), "mma_multistage") << s;
    }
  const auto pv = [](int64_t s, int64_t d, int64_t batch) { return call(DType::BF16, kNN, s, d, s, batch); };
  EXPECT_EQ(pick(pv(1024, 128, 1024)), "") << "S 1024: cuBLAS by less than the margin";
  EXPECT_EQ(pick(pv(512, 128, 1024)), "");
  EXPECT_EQ(pick(pv(8192, 128, 1024)), "") << "S 8192 was not measured";
  EXPECT_EQ(pick(pv(2048, 64, 1024), kH100), "") << "d = 64 stays with cuBLAS on the H100";
  EXPECT_EQ(pick(pv(2048, 128, 1023)), "") << "fewer items than measured";
  EXPECT_EQ(pick(pv(2048, 128, 1)), "");
  EXPECT_EQ(pick(pv(2100, 128, 1024)), "") << "S not a multiple of the 256-row tile";
  EXPECT_EQ(pick(call(DType::BF16, kNN, 2304, 128, 2100, 1024)), "") << "K not a multiple of 64";
  EXPECT_EQ(pick(call(DType::BF16, kNN, 128, 2048, 2048, 1024)), "") << "n = S, m = d: the other side";
  EXPECT_EQ(pick(call(DType::BF16, kNT, 2048, 2048, 128, 1024)), "wgmma_tma") << "Q*K^T: its own entry";
  EXPECT_EQ(pick(call(DType::BF16, kNT, 2048, 128, 2048, 1024)), "") << "NN only";
  EXPECT_EQ(pick(tf32_call(2048, 128, 2048)), "");
  EXPECT_EQ(pick(pv(2048, 128, 1024), kH100), "mma_multistage");
  EXPECT_EQ(pick(pv(2048, 128, 1024), kH200), "") << "the H200: cuBLAS ahead";
}

TEST(CudaAutoTable, BatchedPVAtHeadDimension64IsWgmmaTmaOnTheH200Only) {
  for (DType t : {DType::BF16, DType::F16})
    for (int64_t s : {2048, 3072, 4096}) {
      EXPECT_EQ(pick(call(t, kNN, s, 64, s, 1024), kH200), "wgmma_tma") << s;
      EXPECT_EQ(pick(call(t, kNN, s, 64, s, 1024), kH100), "") << s << ": cuBLAS on the H100";
    }
  const auto pv = [](int64_t s, int64_t batch) { return call(DType::BF16, kNN, s, 64, s, batch); };
  EXPECT_EQ(pick(pv(512, 1024), kH200), "") << "S 512: cuBLAS";
  EXPECT_EQ(pick(pv(1024, 1024), kH200), "wgmma_tma") << "S 1024: ahead in seven runs";
  EXPECT_EQ(pick(pv(1023, 1024), kH200), "") << "below the measured S";
  EXPECT_EQ(pick(pv(8192, 1024), kH200), "") << "past the measured S";
  EXPECT_EQ(pick(pv(2048, 256), kH200), "") << "fewer heads not measured";
  EXPECT_EQ(pick(call(DType::BF16, kNN, 2048, 128, 2048, 1024), kH200), "") << "d = 128";
  EXPECT_EQ(pick(call(DType::BF16, kNN, 64, 2048, 2048, 1024), kH200), "") << "n = S, m = d: the other side";
}

TEST(CudaAutoTable, BatchedQKAtHeadDimension64To128IsWgmmaTma) {
  for (DType t : {DType::BF16, DType::F16})
    for (int64_t s : {512, 1024, 2048, 4096}) {
      for (int64_t d : {64, 128}) EXPECT_EQ(pick(call(t, kNT, s, s, d, 1024), kH100), "wgmma_tma") << s << " " << d;
      EXPECT_EQ(pick(call(t, kNT, s, s, 64, 1024), kH200), "wgmma_tma") << s;
      EXPECT_EQ(pick(call(t, kNT, s, s, 128, 1024), kH200), s == 512 ? "wgmma_tma" : "")
          << s << ": d = 128 on the H200 is cuBLAS's from S 1024";
    }
  EXPECT_EQ(pick(call(DType::BF16, kNT, 512, 512, 128, 256), kH200), "") << "d = 128, S 512: fewer heads not measured";
  EXPECT_EQ(pick(call(DType::BF16, kNT, 640, 640, 128, 1024), kH200), "") << "d = 128 past S 512";
  EXPECT_EQ(pick(call(DType::BF16, kNT, 256, 256, 64, 1024)), "") << "S 256: level, the ranked order";
  EXPECT_EQ(pick(call(DType::BF16, kNT, 8192, 8192, 64, 1024)), "") << "past the measured S";
  EXPECT_EQ(pick(call(DType::BF16, kNT, 2048, 2048, 96, 1024)), "") << "d = 96 not measured";
  EXPECT_EQ(pick(call(DType::BF16, kNT, 2048, 2048, 64, 256)), "") << "fewer heads not measured";
  EXPECT_EQ(pick(call(DType::BF16, kNN, 2048, 2048, 64, 1024)), "") << "NT only";
  EXPECT_EQ(pick(call(DType::F32, kNT, 2048, 2048, 64, 1024)), "");
}

TEST(CudaAutoTable, FewDozenTokensOnWideAndLongKWeightsAreWgmmaTma) {
  for (DType t : {DType::BF16, DType::F16})
    for (bool nt : {kNN, kNT}) {
      for (int64_t tokens : {32, 64, 100, 128})
        for (int64_t wide : {11008, 14336}) EXPECT_EQ(pick(call(t, nt, tokens, wide, 4096)), "wgmma_tma") << tokens;
      for (int64_t tokens : {32, 64})
        for (int64_t k : {11008, 14336}) EXPECT_EQ(pick(call(t, nt, tokens, 4096, k)), "wgmma_tma") << tokens;
    }
  EXPECT_EQ(pick(call(DType::BF16, kNN, 128, 4096, 11008), kH100), "") << "long K at T = 128: cuBLAS";
  EXPECT_EQ(pick(call(DType::BF16, kNN, 64, 4096, 4096), kH100), "") << "4096 x 4096: cuBLAS";
  EXPECT_EQ(pick(call(DType::BF16, kNN, 31, 11008, 4096)), "") << "below 32 tokens";
  EXPECT_EQ(pick(call(DType::BF16, kNN, 129, 11008, 4096)), "") << "past 128 tokens";
  EXPECT_EQ(pick(call(DType::BF16, kNN, 64, 11008, 4096, 2)), "") << "single calls only";
  EXPECT_EQ(pick(call(DType::F32, kNN, 64, 11008, 4096)), "");
}

TEST(CudaAutoTable, AppliesOnSm90Only) {
  const GemmArgs calls[] = {call(DType::BF16, kNT, 1, 4096, 4096), call(DType::BF16, kNN, 1, 128256, 4096),
                            call(DType::BF16, kNN, 2048, 128, 2048, 1024), call(DType::F32, kNN, 2, 4096, 4096)};
  for (const GemmArgs& a : calls) {
    EXPECT_NE(pick(a, kSm90), "");
    EXPECT_EQ(pick(a, kSm80), "");
    EXPECT_EQ(pick(a, kSm100), "");
  }
}

TEST(CudaAutoTable, EntriesDescribeTheirClassIncludingBatches) {
  const auto& table = gemm_auto_table();
  const auto shape_of = [&](const std::string& label) {
    for (const auto& c : table)
      if (label == c.label) return c.describe();
    ADD_FAILURE() << "no entry '" << label << "'";
    return std::string();
  };
  EXPECT_EQ(shape_of("16-bit decode NT, H100"), "f16,bf16 NT T 1..16 batch 1");
  EXPECT_EQ(shape_of("16-bit decode NN, 11008..14336 x 4096"), "f16,bf16 NN T 1..16 wide 11008..14336 k 4096 batch 1");
  EXPECT_EQ(shape_of("16-bit batched P*V, d = 128, H100"),
            "f16,bf16 NN m 2048..4096 (multiple of 256) n 128 k 2048..4096 (multiple of 64) batch >= 1024");
  EXPECT_EQ(shape_of("16-bit batched Q*K^T, d = 64"), "f16,bf16 NT T 512..4096 wide 512..4096 k 64 batch >= 1024");
  EXPECT_EQ(shape_of("16-bit batched Q*K^T, d = 128, H100"),
            "f16,bf16 NT T 512..4096 wide 512..4096 k 128 batch >= 1024");
  EXPECT_EQ(shape_of("16-bit batched P*V, d = 64, H200"), "f16,bf16 NN m 1024..4096 n 64 k 1024..4096 batch >= 1024");
  EXPECT_EQ(shape_of("16-bit batched Q*K^T, d = 128, S 512, H200"), "f16,bf16 NT T 512 wide 512 k 128 batch >= 1024");
  for (const auto& c : table) {
    EXPECT_LT(std::string(c.label).size(), 64u) << "gk_auto_entry::label holds 63";
    EXPECT_LT(std::string(c.arch.label).size(), 64u) << "gk_auto_entry::arch holds 63";
  }
}

}  // namespace
}  // namespace gpukern::cuda
