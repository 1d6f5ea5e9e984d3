// The CUDA GEMM ladder's measured auto table: shape classes whose calls go to one rung
// before auto's ranked order (ladder.cu takes it). Host data only, so the table tests
// check every entry without a GPU. Each entry was derived from gpukern-bench suite runs
// on the H100 (3.35 TB/s) or the H200 (4.8 TB/s, the same sm_90 and 132 SMs) with cuBLAS
// in the same run; the comment next to it names the cells behind it, docs/notes/llm-gemm.md
// and docs/notes/attention.md give their numbers and runs. Where the two parts differ (the
// H200's bandwidth speeds up cuBLAS's memory-bound batched kernels more than our rungs),
// an entry is bounded by the device's peak memory bandwidth (ArchSupport::mem_gbps_*).
// Calls in no entry take the ranked order (ladder.cu: wgmma_tma where its policy says,
// else cuBLAS).
#pragma once

#include "core/rung_table.hpp"
#include "cuda/gemm/bandwidth_class.hpp"

#include <algorithm>
#include <limits>
#include <vector>

namespace gpukern::cuda {

inline const std::vector<core::GemmClass>& gemm_auto_table() {
  using core::kLayoutNN;
  using core::kLayoutNT;
  constexpr uint32_t k16Bit = core::kMaskF16 | core::kMaskBF16;
  constexpr uint32_t kF32 = core::kMaskF32, kTF32 = core::kMaskTF32;
  constexpr core::ArchSupport kH100 = {90, 90, nullptr, "sm_90 (measured on H100)"};
  constexpr core::ArchSupport kSm90 = {90, 90, nullptr, "sm_90 (measured on H200)"};
  constexpr const char* kH100Label = "sm_90, at most 4000 GB/s (measured on H100)";
  constexpr core::ArchSupport kH100Only = {90, 90, nullptr, kH100Label, 0, kHighBandwidthGbps};
  constexpr core::ArchSupport kH200 = {90, 90, nullptr, "sm_90, 4000 GB/s and more (measured on H200)",
                                       kHighBandwidthGbps};
  constexpr int64_t kAny = std::numeric_limits<int64_t>::max();
  constexpr uint32_t kAnyLayout = 0;
  // The llm suite times single GEMMs: its entries take no batched call (those take the
  // ranked order, whose policy counts the tiles of every item).
  constexpr core::SizeRange kOneGemm{1, 1};
  static const std::vector<core::GemmClass> table{
      // The 128256 x 4096 vocabulary on the H200 at one token, either layout, and at two
      // against the weight stored K x N: skinny's CUDA-core GEMV, whose loads of a weight this
      // far beyond the L2 carry no L2 policy (plain loads read 1 GB 4-5% faster than
      // evict-first ones), reads it faster than cuBLAS and wgmma_tma (final suite run, bf16 /
      // f16: T 1 NN 101.0 / 108.7%, NT 102.5 / 102.0%, T 2 NN 100.5 / 108.1%; wgmma_tma
      // 98.4-99.9 / 99.6-105.9%). At two tokens against K-major weights the GEMV is level with
      // cuBLAS over five runs (97.5-102.3%), which keeps them. notes/llm-gemm.md, "The
      // vocabulary's weight read without an L2 policy", has each run's figures.
      {"16-bit vocabulary, T 1, H200",
       k16Bit,
       kH200,
       {1, 1},
       {65536, kAny},
       {4096, 4096},
       "skinny",
       kAnyLayout,
       kOneGemm,
       core::TSide::M},
      {"16-bit NN vocabulary, T 2, H200",
       k16Bit,
       kH200,
       {2, 2},
       {65536, kAny},
       {4096, 4096},
       "skinny",
       kLayoutNN,
       kOneGemm,
       core::TSide::M},
      // f16 on the H200 against the N-contiguous 128256 x 4096 vocabulary at 3-8 tokens (1-2:
      // skinny, above): wgmma_tma (64x128 tiles over the whole K, ~8 rounds of them) ahead of
      // cuBLAS, which
      // reads the f16 weight at 94-95% of the copy rate where it reads bf16's at 101-103%
      // (wgmma_tma 105.5-107.1% in four runs since the tensor maps' L2 promotion rule;
      // 98.9-102.8% before it; bf16 98.1-98.8%, T 16 99.0-99.4%: cuBLAS, the entry below).
      // With K-major weights f16 at 16 tokens likewise (101.0-105.0% in nine runs; T 1-8
      // 96.3-100.9%). notes/llm-gemm.md, "f16 vocabulary decode, and auto entries from the
      // run history".
      {"f16 NN vocabulary, T 3-8, H200",
       core::kMaskF16,
       kH200,
       {3, 8},
       {65536, kAny},
       {4096, 4096},
       "wgmma_tma",
       kLayoutNN,
       kOneGemm,
       core::TSide::M},
      {"f16 NT vocabulary, T 16, H200",
       core::kMaskF16,
       kH200,
       {16, 16},
       {65536, kAny},
       {4096, 4096},
       "wgmma_tma",
       kLayoutNT,
       kOneGemm,
       core::TSide::M},
      // The 128256 x 4096 vocabulary projection with N-contiguous weights up to 128 rows:
      // cuBLAS is level with wgmma_tma's 128x256 tiles or ahead (T 1-16, both near the copy
      // rate) and ahead of them at T 32-128; skinny's TMA path trails both.
      {"16-bit NN vocabulary, T <= 128", k16Bit, kH100, {1, 128}, {65536, kAny}, {}, "cublas", kLayoutNN, kOneGemm},
      // The same with K-major weights at T 1-16 on the H200: cuBLAS ahead of wgmma_tma by
      // 7-15% and of skinny by 4-6%.
      {"16-bit NT vocabulary, T <= 16, H200", k16Bit, kH200, {1, 16}, {65536, kAny}, {}, "cublas", kLayoutNT, kOneGemm},
      // Every other vocabulary-wide call: wgmma_tma's tiles fill the SMs at every T (K-major
      // weights at T 1-16 too on the H100, where it is level with skinny's TMA path).
      {"16-bit vocabulary-wide", k16Bit, kH100, {}, {65536, kAny}, {}, "wgmma_tma", kAnyLayout, kOneGemm},
      // One token (bf16: one or two) on the H200 against a linear layer's weight (B stored
      // N x K), 4096..14336 wide and deep: skinny's CUDA-core GEMV (16-byte loads of W straight
      // into registers, f32 FMAs) reads it faster than wgmma_tma's tiles on all five weights
      // (107.7-122.9% of cuBLAS against wgmma_tma's 107.6-119.5%; f16 at two tokens lost
      // the lead on three weights). notes/llm-gemm.md, "A CUDA-core GEMV for 16-bit decode".
      {"16-bit decode NT, T 1, H200",
       k16Bit,
       kH200,
       {1, 1},
       {4096, 14336},
       {4096, 14336},
       "skinny",
       kLayoutNT,
       kOneGemm,
       core::TSide::M},
      {"bf16 decode NT, T 2, H200",
       core::kMaskBF16,
       kH200,
       {2, 2},
       {4096, 14336},
       {4096, 14336},
       "skinny",
       kLayoutNT,
       kOneGemm,
       core::TSide::M},
      // Decode on the H200, tokens as A's rows, against the 4096..14336-wide and -deep
      // weights, either layout: wgmma_tma (64x64 tiles over the whole K where they fit one
      // wave, else 64x128 tiles split; 64-row tiles load only the rows A has) is ahead of
      // cuBLAS and of skinny on every weight at T 1, 4, 8 and 16 (bf16 and f16: 104.9-116.6%
      // of cuBLAS, skinny 89.7-108.0%; 76-97% of the copy). notes/llm-gemm.md, "64x64 tiles".
      {"16-bit decode, H200",
       k16Bit,
       kH200,
       {1, 16},
       {4096, 14336},
       {4096, 14336},
       "wgmma_tma",
       kAnyLayout,
       kOneGemm,
       core::TSide::M},
      // Decode against a linear layer's weight (B stored N x K): one pass over the weights,
      // ahead of cuBLAS on every non-vocabulary weight at T 1, 4 and 16 on the H100. On the
      // H200 only on the wide weights (11008 and 14336 x 4096: 102.7-106.4%) and 4096 x 11008
      // (102.2-107.1%); 4096 x 4096 (93.8-99.6%) and 4096 x 14336 (94.0-99.8%) stay with cuBLAS.
      // (Tokens as A's rows on the H200 take the wgmma_tma entry above.)
      {"16-bit decode NT, H100", k16Bit, kH100Only, {1, 16}, {}, {}, "skinny", kLayoutNT, kOneGemm},
      {"16-bit decode NT wide, H200",
       k16Bit,
       kH200,
       {1, 16},
       {11008, 14336},
       {4096, 4096},
       "skinny",
       kLayoutNT,
       kOneGemm},
      {"16-bit decode NT 4096 x 11008, H200",
       k16Bit,
       kH200,
       {1, 16},
       {4096, 4096},
       {11008, 11008},
       "skinny",
       kLayoutNT,
       kOneGemm},
      // Decode against N-contiguous weights 11008 and 14336 wide, K = 4096 (T 1, 4, 16): the
      // TMA path streams them faster than cuBLAS (the H200, bf16: 101.5-108.6%). On 4096 x
      // 4096, 8192 x 4096 and the long-K weights it is level or behind: cuBLAS.
      {"16-bit decode NN, 11008..14336 x 4096",
       k16Bit,
       kH100,
       {1, 16},
       {11008, 14336},
       {4096, 4096},
       "skinny",
       kLayoutNN,
       kOneGemm},
      // A prefill of 1024 tokens against the 14336 x 4096 weight stored N x K: wgmma_tma's
      // 448 tiles of 128x256 (3.4 rounds of clusters) run at 94.8-95.6% of cuBLAS (bf16
      // and f16, four suite runs: notes/llm-gemm.md), where its policy (tiles fill the SMs
      // three times) would take them; cuBLAS. From 2048 tokens wgmma_tma is ahead.
      {"16-bit NT 14336 x 4096 prefill, T 513..1024",
       k16Bit,
       kH100,
       {513, 1024},
       {14336, 14336},
       {4096, 4096},
       "cublas",
       kLayoutNT,
       kOneGemm},
      // A few dozen tokens against the wide weights (11008 or 14336 x 4096) and the long-K
      // ones (4096 x 11008 or 14336): wgmma_tma's one tile row, K split over the SMs, with
      // the weight streamed evict-first, is ahead of cuBLAS in both layouts (same-run A/B,
      // bf16: T 32-128 on the wide weights 104-111%, T 32-64 on the long-K ones 101-106%;
      // the H200: 103-115% and 100-112%).
      // 4096 x 4096 (91-95% at T 32-64) and the long-K weights at T = 128 (NN 96-97%) stayed
      // with cuBLAS then (on the H200 both now have entries of their own below).
      {"16-bit T 32..128, 11008..14336 x 4096",
       k16Bit,
       kH100,
       {32, 128},
       {11008, 14336},
       {4096, 4096},
       "wgmma_tma",
       kAnyLayout,
       kOneGemm},
      {"16-bit T 32..64, 4096 x 11008..14336",
       k16Bit,
       kH100,
       {32, 64},
       {4096, 4096},
       {11008, 14336},
       "wgmma_tma",
       kAnyLayout,
       kOneGemm},
      // 16-64 tokens against the 4096 x 4096 weight on the H200, either layout: wgmma_tma's
      // 64x64 tiles (one 64-column slab of the weight each over the whole K, 64 CTAs, only
      // the rows A has loaded) and at 33-64 tokens with K-major weights its 64x32 tiles
      // (128 CTAs) are ahead of cuBLAS (each forced, bf16 / f16: NN 103-117%, NT 105-112%;
      // the suite run in notes/llm-gemm.md, "64x64 tiles"). 128 and 256 tokens: the
      // entries below.
      {"16-bit T 16..64, 4096 x 4096, H200",
       k16Bit,
       kH200,
       {16, 64},
       {4096, 4096},
       {4096, 4096},
       "wgmma_tma",
       kAnyLayout,
       kOneGemm,
       core::TSide::M},
      // 128 and 256 tokens against the 4096 x 4096 weight on the H200, tokens as A's rows:
      // wgmma_tma's 64x64 tiles (128 rows) and 128x64 tiles (256 rows), one wave of 128
      // CTAs each streaming one 64-column slab of the weight, launched without a cluster
      // attribute, are ahead of cuBLAS in both layouts (bf16 / f16: T 128 105.8-107.8%, T
      // 256 113.7-116.3%; notes/llm-gemm.md, "Plain launches"). Token counts between them
      // were not measured.
      {"16-bit T 128, 4096 x 4096, H200",
       k16Bit,
       kH200,
       {128, 128},
       {4096, 4096},
       {4096, 4096},
       "wgmma_tma",
       kAnyLayout,
       kOneGemm,
       core::TSide::M},
      {"16-bit T 256, 4096 x 4096, H200",
       k16Bit,
       kH200,
       {256, 256},
       {4096, 4096},
       {4096, 4096},
       "wgmma_tma",
       kAnyLayout,
       kOneGemm,
       core::TSide::M},
      // 256 tokens against the long-K weights (4096 x 11008 or 14336) on the H200:
      // wgmma_tma's 128x128 tiles in clusters of 2, split in 2 (its tile table's rule for
      // 128x256 clusters that would need a K split), are ahead of cuBLAS in both layouts
      // (bf16 and f16, two runs: 102.3-112.5%). 512 tokens, the same rule unsplit, run at
      // 97-99%: cuBLAS.
      {"16-bit T 256, 4096 x 11008..14336, H200",
       k16Bit,
       kH200,
       {256, 256},
       {4096, 4096},
       {11008, 14336},
       "wgmma_tma",
       kAnyLayout,
       kOneGemm},
      // 128 tokens against the long-K weights (4096 x 11008 or 14336) on the H200, tokens as
      // A's rows: wgmma_tma (128x64 tiles split in 2) ahead of cuBLAS in both layouts, bf16
      // and f16, in two suite runs (100.0-107.6%, 16 cells).
      {"16-bit T 128, 4096 x 11008..14336, H200",
       k16Bit,
       kH200,
       {128, 128},
       {4096, 4096},
       {11008, 14336},
       "wgmma_tma",
       kAnyLayout,
       kOneGemm,
       core::TSide::M},
      // 512 tokens against the wide N-contiguous weights (11008 and 14336 x 4096) on the
      // H200, tokens as A's rows: wgmma_tma's 128x128 tiles without a cluster (its tile
      // table's rule for 257..512 rows against a wide weight) ahead of cuBLAS (bf16 / f16,
      // two runs: 102.1-104.8%), where the ranked order took cuBLAS (128x256 clusters ran
      // 98.5-99.3% of it on 11008). notes/llm-gemm.md, "One TMA copy a stage".
      {"16-bit NN T 512, 11008..14336 x 4096, H200",
       k16Bit,
       kH200,
       {512, 512},
       {11008, 14336},
       {4096, 4096},
       "wgmma_tma",
       kLayoutNN,
       kOneGemm,
       core::TSide::M},
      // 256 tokens against the wide weights (11008 and 14336 x 4096) on the H200, tokens as
      // A's rows: wgmma_tma (the ranked order's cuBLAS otherwise) ahead in four suite runs
      // (bf16 and f16): N-contiguous 104.1-106.8%, K-major 11008 102.3-104.4% and f16's
      // K-major 14336 106.4-106.9%; bf16's K-major 14336 97.7-99.5% stays with cuBLAS.
      // Also 1024 tokens against N-contiguous 11008 x 4096 (102.1-105.6%) and 512 against
      // K-major 14336 x 4096 (101.8-102.8%). notes/llm-gemm.md, "Prefill entries from four
      // suite runs".
      {"16-bit NN T 256, 11008..14336 x 4096, H200",
       k16Bit,
       kH200,
       {256, 256},
       {11008, 14336},
       {4096, 4096},
       "wgmma_tma",
       kLayoutNN,
       kOneGemm,
       core::TSide::M},
      {"16-bit NT T 256, 11008 x 4096, H200",
       k16Bit,
       kH200,
       {256, 256},
       {11008, 11008},
       {4096, 4096},
       "wgmma_tma",
       kLayoutNT,
       kOneGemm,
       core::TSide::M},
      {"f16 NT T 256, 14336 x 4096, H200",
       core::kMaskF16,
       kH200,
       {256, 256},
       {14336, 14336},
       {4096, 4096},
       "wgmma_tma",
       kLayoutNT,
       kOneGemm,
       core::TSide::M},
      {"16-bit NN T 1024, 11008 x 4096, H200",
       k16Bit,
       kH200,
       {1024, 1024},
       {11008, 11008},
       {4096, 4096},
       "wgmma_tma",
       kLayoutNN,
       kOneGemm,
       core::TSide::M},
      {"16-bit NT T 512, 14336 x 4096, H200",
       k16Bit,
       kH200,
       {512, 512},
       {14336, 14336},
       {4096, 4096},
       "wgmma_tma",
       kLayoutNT,
       kOneGemm,
       core::TSide::M},
      // Exact f32 against the N-contiguous vocabulary at 2-4 tokens on the H200: skinny's GEMV
      // path, since its loads of a weight this far beyond the L2 carry no L2 policy (T 2
      // 103.6%, T 3-4 100.9-101.2% of cuBLAS in two runs; evict-first it was level at T 2 and
      // 98.6% at T 4, and cuBLAS had this entry). From 8 tokens skinny's other paths lead
      // (the ranked order). notes/llm-gemm.md, "The vocabulary's weight read without an L2
      // policy".
      {"f32 NN vocabulary T 2-4, H200",
       kF32,
       kH200,
       {2, 4},
       {65536, kAny},
       {4096, 4096},
       "skinny",
       kLayoutNN,
       kOneGemm,
       core::TSide::M},
      // 32-bit (tf32 and exact f32) at one token on the H200: skinny's GEMV path (CUDA cores,
      // 16-byte loads of W into registers) ahead of cuBLAS on K-major weights of K <= 11008
      // (104-142%) and on N-contiguous weights 11008 wide and wider (99.7-109%); cuBLAS keeps
      // the 4096-wide N-contiguous weights (skinny 92-98%) and K-major 4096 x 14336 (99%).
      // notes/llm-gemm.md, "A CUDA-core GEMV for 32-bit decode".
      {"32-bit NT T 1, K <= 11008, H200",
       kF32 | kTF32,
       kH200,
       {1, 1},
       {4096, kAny},
       {4096, 11008},
       "skinny",
       kLayoutNT,
       kOneGemm,
       core::TSide::M},
      {"32-bit NN T 1, wide weights, H200",
       kF32 | kTF32,
       kH200,
       {1, 1},
       {11008, kAny},
       {4096, 4096},
       "skinny",
       kLayoutNN,
       kOneGemm,
       core::TSide::M},
      // tf32 with K-major weights 4096 rows wide at 2-8 tokens on the H200: skinny (its GEMV
      // path to T 4, its TMA path at 8) ahead of wgmma_tma (T 2-4: 110-128% of cuBLAS
      // against 102-105%; T 8: 103-106% against 102-104%); the wider weights stay with
      // wgmma_tma below. Same note.
      {"tf32 NT T 2-8, 4096-row weights, H200",
       kTF32,
       kH200,
       {2, 8},
       {4096, 4096},
       {4096, 14336},
       "skinny",
       kLayoutNT,
       kOneGemm,
       core::TSide::M},
      // Exact f32 at a few tokens: the 3xTF32 split on tensor cores still reads W once,
      // where cuBLAS runs CUDA-core kernels. Up to 16 tokens: at 16 on the H200 skinny ran
      // 137-279% of cuBLAS and wgmma_tma's exact C^T kernel 86-226% (six weights, NN and
      // NT); from 32 tokens wgmma_tma leads in 10 of 12 cells (104-170% against 79-128%) and
      // takes the calls (exact_f32_on_wgmma below). notes/llm-gemm.md, "Exact f32 on
      // wgmma_tma".
      {"f32 decode", kF32, kH100, {2, 16}, {}, {}, "skinny", kAnyLayout, kOneGemm},
      // Exact f32 calls of at most 384 a side past 16 rows (with K-major B, whose 4-byte
      // copies make the tile's loads slower, C's shorter side at most 320): double_buffer's
      // tiny tile (16 x 32, each stage's K steps split over four warps) ahead of cuBLAS's
      // CUDA-core kernels and of wgmma_tma's 3xTF32 kernel, whose few tiles each wait out a
      // whole K loop. H200, % of cuBLAS: squares 128-320 126-173 in every layout (wgmma_tma
      // 77-90), 384^3 NN / TN 130 / 138 but NT / TT 100 / 105; 17-384-sided shapes 116-204.
      // Measured on the H200; a latency-bound call on CUDA cores, so the entries take every
      // sm_90. notes/cuda-gemm.md, "double_buffer's tiny tile".
      {"f32 small, N-contiguous B, every side <= 384",
       kF32,
       kSm90,
       {17, 384},
       {17, 384},
       {1, 384},
       "double_buffer",
       kLayoutNN | core::kLayoutTN,
       kOneGemm},
      {"f32 small, K-major B, sides <= 384, C's shorter <= 320",
       kF32,
       kSm90,
       {17, 320},
       {17, 384},
       {1, 384},
       "double_buffer",
       kLayoutNT | core::kLayoutTT,
       kOneGemm},
      // tf32 with K-major weights at 2-32 tokens on the H200, tokens as A's rows: wgmma_tma
      // (64x128 tiles, K split where they are few) ahead of cuBLAS on all six weights at T 2,
      // 4, 8, 12, 16, 24 and 32 (100.9-142.7%; the 4096-row weights at T 2-8 go to skinny
      // above). notes/llm-gemm.md, "32-bit suites on the H200".
      {"tf32 NT T 2-32, H200",
       kTF32,
       kH200,
       {2, 32},
       {4096, kAny},
       {4096, 14336},
       "wgmma_tma",
       kLayoutNT,
       kOneGemm,
       core::TSide::M},
      // The 128256 x 4096 vocabulary projection in tf32 with N-contiguous weights on the
      // H200: wgmma_tma's 64 x 128 C^T tiles ahead of cuBLAS at T 8-16 (105.2-106.8% in two
      // runs). At T = 2, where cuBLAS reads 38-44% of the copy rate, skinny's GEMV path leads
      // (225% of cuBLAS, wgmma_tma 209%), and at T 3-4 too since its loads of the weight carry
      // no L2 policy (104.0-104.8%; the rungs and cuBLAS were level before, 97.6-105.6%).
      // notes/llm-gemm.md, "The C^T kernel's smaller tiles", "A CUDA-core GEMV for 32-bit
      // decode" and "The vocabulary's weight read without an L2 policy".
      {"tf32 NN vocabulary T 2-4, H200",
       kTF32,
       kH200,
       {2, 4},
       {65536, kAny},
       {4096, 4096},
       "skinny",
       kLayoutNN,
       kOneGemm,
       core::TSide::M},
      {"tf32 NN vocabulary T 8-16, H200",
       kTF32,
       kH200,
       {8, 16},
       {65536, kAny},
       {4096, 4096},
       "wgmma_tma",
       kLayoutNN,
       kOneGemm,
       core::TSide::M},
      // tf32 with N-contiguous weights 11008 wide and wider at 32-64 tokens on the H200,
      // tokens as A's rows: wgmma_tma's C^T kernel on 64 x 128 tiles ahead of cuBLAS (T 32:
      // 102-108%, T 64: 107-118%); the 4096-wide weights stay with cuBLAS (96-100%).
      // notes/llm-gemm.md, "The C^T kernel's smaller tiles".
      {"tf32 NN T 32-64, wide weights, H200",
       kTF32,
       kH200,
       {32, 64},
       {11008, kAny},
       {4096, 4096},
       "wgmma_tma",
       kLayoutNN,
       kOneGemm,
       core::TSide::M},
      // tf32 with N-contiguous weights 4096..14336 each way at 2-16 tokens on the H200:
      // skinny (its TMA path from 11008-wide weights or T 9) ahead of cuBLAS on all five
      // weights at T 2, 4, 8 and 16 (100.3-112.6%; 4096 x 4096 at T 2-8 103-107% before
      // the TMA path). notes/llm-gemm.md, "skinny's TMA path for 32-bit elements".
      {"tf32 NN T 2-16, H200",
       kTF32,
       kH200,
       {2, 16},
       {4096, 14336},
       {4096, 14336},
       "skinny",
       kLayoutNN,
       kOneGemm,
       core::TSide::M},
      // tf32 at a few tokens elsewhere: cuBLAS (the C^T kernel's 64-row tiles ran 70-97% of
      // it on the 4096..14336 weights at T 1-16 on the H200; the H100 not measured since).
      {"tf32 decode", kTF32, kH100, {1, 16}, {}, {}, "cublas", kAnyLayout, kOneGemm},
      {"tf32 NN few rows", kTF32, kH100, {17, 64}, {}, {}, "cublas", kLayoutNN, kOneGemm},
      // tf32 with N-contiguous weights at 128-256 tokens on the H200, tokens as A's rows:
      // wgmma_tma's C^T kernel on 64- or 128-row tiles (split where few) ahead of cuBLAS
      // on the five 4096..14336 weights (T 128: 101-128%, T 256: 113-123%); the vocabulary
      // at T 128 level. notes/llm-gemm.md, "The C^T kernel's smaller tiles".
      {"tf32 NN T 128-256, H200",
       kTF32,
       kH200,
       {128, 256},
       {4096, 14336},
       {4096, 14336},
       "wgmma_tma",
       kLayoutNN,
       kOneGemm,
       core::TSide::M},
      // tf32 with N-contiguous B at 768-1280 each way on the H200: the C^T kernel's 64- and
      // 128-row tiles ahead of cuBLAS (1000^3 100.0-101.7%, 1024^3 105.9-106.8%, 1280^3
      // 102-104% in one to two runs each; 768^3 104.5-108.4% in the five square-suite runs
      // since 11-29o, level at 99.0-99.5% before the tf32 one-wave tiles).
      // notes/llm-gemm.md, "The C^T kernel's smaller tiles".
      {"tf32 NN 768-1280 each way, H200",
       kTF32,
       kH200,
       {768, 1280},
       {768, 1280},
       {768, 1280},
       "wgmma_tma",
       kLayoutNN,
       kOneGemm},
      // tf32 with K-major B at 256-1536 rows and columns each way or more on the H200:
      // wgmma_tma's one-wave tiles (the smallest of 64x64, 128x64, 128x128 and 128x192c2
      // whose CTAs fit one wave) ahead of cuBLAS on the squares 256-1536 (101.2-117.2%) and
      // at T 256, 512 and 1024 against the six weights (100.2-127.2%).
      // notes/llm-gemm.md, "tf32 with K-major B: one wave of the smallest tiles".
      {"tf32 NT 256..1536 each way, H200",
       kTF32,
       kH200,
       {256, 1536},
       {256, kAny},
       {256, kAny},
       "wgmma_tma",
       kLayoutNT,
       kOneGemm},
      // tf32 from 512 rows: N-contiguous B through the C^T kernel and its K split; K-major
      // B where the weights are long along K or wide.
      {"tf32 NN mid", kTF32, kH100, {512, kAny}, {1536, kAny}, {}, "wgmma_tma", kLayoutNN, kOneGemm},
      {"tf32 NT long k", kTF32, kH100, {512, kAny}, {}, {8192, kAny}, "wgmma_tma", kLayoutNT, kOneGemm},
      {"tf32 NT wide", kTF32, kH100, {512, kAny}, {8192, kAny}, {}, "wgmma_tma", kLayoutNT, kOneGemm},
      // Attention's scores Q*K^T per head (C = S x S, K = d = 64 or 128, B = K stored S x d),
      // all heads in one strided batch of 1024 items (32 x 32 heads): wgmma_tma's
      // persistent 128x256 clusters, one-K-block tiles claimed at run time, are ahead of
      // cuBLAS's strided-batched kernel at S 512-4096, bf16 and f16: d = 64 on both parts
      // (H100 S 512 101.7-102.4%, S 1024-4096 102.5-105.9%; H200 105.0-111.7%), d = 128 on
      // the H100 (99.9-104.8%); on the H200 at S 512 only (the entry below). S 256 is
      // level: cuBLAS (the ranked order's batch rule).
      {"16-bit batched Q*K^T, d = 64",
       k16Bit,
       kH100,
       {512, 4096},
       {512, 4096},
       {64, 64},
       "wgmma_tma",
       kLayoutNT,
       {1024, kAny}},
      {"16-bit batched Q*K^T, d = 128, H100",
       k16Bit,
       kH100Only,
       {512, 4096},
       {512, 4096},
       {128, 128},
       "wgmma_tma",
       kLayoutNT,
       {1024, kAny}},
      // The same at d = 128 and S 512 on the H200: wgmma_tma (one-K-block tiles claimed at
      // run time) ahead of cuBLAS in the five attention-suite runs since 11-28c (bf16 and
      // f16: 104.2-105.6%). S 1024 (96.9-104.1%) and S 2048-4096 (95.0-101.2%) stay with
      // cuBLAS.
      {"16-bit batched Q*K^T, d = 128, S 512, H200",
       k16Bit,
       kH200,
       {512, 512},
       {512, 512},
       {128, 128},
       "wgmma_tma",
       kLayoutNT,
       {1024, kAny}},
      // Attention's P*V per head at head dimension 64 (C = S x 64, K = S) on the H200:
      // wgmma_tma's 128x64 tiles in clusters of 2 are ahead of cuBLAS's strided-batched
      // kernel at S 1024-4096, bf16 and f16, in the seven attention-suite runs since 11-28
      // (S 1024 100.2-103.7%, S 2048 100.6-103.9%, S 4096 102.4-108.7%); S 512 96.4-99.2%
      // stays with cuBLAS. On the H100 they were 98.4-101.4% at S 1024-4096: cuBLAS there
      // (the ranked order).
      {"16-bit batched P*V, d = 64, H200",
       k16Bit,
       kH200,
       {64, 64},
       {1024, 4096},
       {1024, 4096},
       "wgmma_tma",
       kLayoutNN,
       {1024, kAny},
       core::TSide::N},
      // Attention's P*V per head at head dimension 128 (C = S x 128, K = S), all heads in one
      // strided batch: mma_multistage's 256x128 tile (m a multiple of 256, K of 64: its path
      // without bounds checks) is ahead of cuBLAS's strided-batched kernel at S 2048-4096,
      // bf16 and f16, with 1024 items (32 x 32 heads); with 256 or 64 items cuBLAS is level
      // or ahead. S 512-1024 stay with cuBLAS (the ranked order's batch rule), and so does
      // the H200, where mma_multistage ran at 78-87% of cuBLAS and wgmma_tma at 94-96%.
      {"16-bit batched P*V, d = 128, H100",
       k16Bit,
       kH100Only,
       {128, 128},
       {2048, 4096, 256},
       {2048, 4096, 64},
       "mma_multistage",
       kLayoutNN,
       {1024, kAny},
       core::TSide::N},
  };
  return table;
}

/// auto's ranked order for exact f32 outside the table (ladder.cu, wgmma_tma_first):
/// wgmma_tma's 3xTF32 C^T kernel (tensor cores at a third of their tf32 rate) against
/// cuBLAS's CUDA-core kernels, H200, each timed with cuBLAS in one loop: the llm suite
/// from 32 tokens 103-229% of cuBLAS (T 32-1024, six weights, NN and NT); squares from
/// 512^3 109-203% (512^3 in 64-row tiles split in 4), 384^3 96%, 256^3 and 128^3 76-87%
/// (a few tiles). So unbatched calls (batches were not measured) past 16 tokens (the
/// "f32 decode" entry sends those to skinny) with at least 512^3 multiply-adds; the rest
/// stays with cuBLAS.
inline bool exact_f32_on_wgmma(const core::GemmArgs& args) {
  constexpr double kMinVolume = 512.0 * 512.0 * 512.0;
  const double volume = static_cast<double>(args.m) * static_cast<double>(args.n) * static_cast<double>(args.k);
  return !args.batched() && std::min(args.m, args.n) > 16 && volume >= kMinVolume;
}

}  // namespace gpukern::cuda
