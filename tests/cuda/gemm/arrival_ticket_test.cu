// The split-K arrival ticket (src/cuda/gemm/arrival_ticket.cuh):
//  * on the host: launch tags are never 0, fit their 40 bits and differ launch to launch; the
//    ready flag of a tag is no ticket word of any launch;
//  * take_arrival_ticket on the device: many CTAs at once on words that hold stale values (cleared memory,
//    all ones, another launch's tag with a small or a full count, the tag below this one's
//    with a full count, whose increment carries into this tag): each word's tickets are
//    0 .. pieces - 1, each once, and the word ends as tag | pieces; launch after launch on the
//    same words (each launch's words stale for the next);
//  * the two ways a caller orders its parked sums, with the parking buffers poisoned (NaN)
//    before every launch, so a last arriver that adds a piece before it is parked, or a wrong
//    buffer, reads NaN and the sum is wrong: fence-ticket-fence over a block (as skinny_kernel
//    does), and wgmma_tma's split_fixup itself (ticket first, ready words).
// Sums of small integers are exact in f32, so every output is compared exactly.
#include "gemm_harness.cuh"

#include "cuda/gemm/arrival_ticket.cuh"
#include "cuda/gemm/tensor_core/wgmma_schedule.cuh"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gpukern::test::cuda_gemm {
namespace {

using gemm::arrival_tag;
using gemm::kArrivalCountBits;

TEST(ArrivalTicket, TagsAndFlagsOnTheHost) {
  uint64_t previous = 0;
  for (int i = 0; i < 1000; ++i) {
    const uint64_t tag = arrival_tag();
    EXPECT_NE(tag, 0u);
    EXPECT_LT(tag, gemm::kArrivalTagLimit);
    EXPECT_NE(tag, previous);
    previous = tag;
    const uint64_t flag = gemm::arrival_flag(tag);
    EXPECT_EQ(flag >> kArrivalCountBits, tag);                           // this launch's tag...
    EXPECT_EQ(flag & gemm::kArrivalCountMask, gemm::kArrivalCountMask);  // ...with a count no ticket reaches
  }
}

/// CTA b takes a ticket at every word (all CTAs in the same order, so they contend);
/// tickets[w * pieces + b].
__global__ void take_tickets(uint64_t* words, int count, uint64_t tag, uint32_t* tickets) {
  if (threadIdx.x != 0) return;
  for (int w = 0; w < count; ++w) tickets[w * gridDim.x + blockIdx.x] = gemm::take_arrival_ticket(words + w, tag);
}

/// Stale contents of ticket words that a launch tagged `tag` must count as no arrival.
std::vector<uint64_t> stale_words(uint64_t tag) {
  const uint64_t other = tag ^ 0x5a5a5a5aull;
  const uint64_t full = (uint64_t(1) << kArrivalCountBits) - 1;
  std::vector<uint64_t> words = {0,
                                 ~uint64_t(0),
                                 other << kArrivalCountBits,
                                 other << kArrivalCountBits | 7,
                                 other << kArrivalCountBits | full,
                                 (tag - 1) << kArrivalCountBits | full,  // +1 carries into this tag, count 0
                                 (tag + 1) << kArrivalCountBits,
                                 gemm::arrival_flag(other),
                                 0x7fc000007fc00000ull};  // two NaN floats
  return words;
}

TEST(ArrivalTicket, EachTicketOnceOverStaleWords) {
  std::string why_not;
  if (!cuda_device_present(&why_not)) GTEST_SKIP() << why_not;
  for (const int pieces : {2, 3, 17, 300}) {
    const uint64_t first_tag = arrival_tag();
    std::vector<uint64_t> words = stale_words(first_tag);
    const int count = static_cast<int>(words.size());
    uint64_t* d_words = nullptr;
    uint32_t* d_tickets = nullptr;
    ASSERT_EQ(cudaMalloc(&d_words, count * sizeof(uint64_t)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&d_tickets, static_cast<size_t>(count) * pieces * sizeof(uint32_t)), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(d_words, words.data(), count * sizeof(uint64_t), cudaMemcpyHostToDevice), cudaSuccess);
    for (int launch = 0; launch < 3; ++launch) {  // launches 1, 2 find the words launch 0, 1 left
      const uint64_t tag = launch == 0 ? first_tag : arrival_tag();
      take_tickets<<<pieces, 32>>>(d_words, count, tag, d_tickets);
      ASSERT_EQ(cudaGetLastError(), cudaSuccess);
      std::vector<uint32_t> tickets(static_cast<size_t>(count) * pieces);
      ASSERT_EQ(cudaMemcpy(tickets.data(), d_tickets, tickets.size() * sizeof(uint32_t), cudaMemcpyDeviceToHost),
                cudaSuccess);
      ASSERT_EQ(cudaMemcpy(words.data(), d_words, count * sizeof(uint64_t), cudaMemcpyDeviceToHost), cudaSuccess);
      for (int w = 0; w < count; ++w) {
        std::vector<int> seen(pieces, 0);
        int bad = 0;
        for (int b = 0; b < pieces; ++b) {
          const uint32_t t = tickets[static_cast<size_t>(w) * pieces + b];
          if (t < static_cast<uint32_t>(pieces))
            ++seen[t];
          else
            ++bad;
        }
        for (int s : seen) bad += s != 1;
        EXPECT_EQ(bad, 0) << pieces << " pieces, launch " << launch << ", stale word " << w << ": tickets not 0.."
                          << pieces - 1 << " once each";
        EXPECT_EQ(words[w], tag << kArrivalCountBits | static_cast<uint64_t>(pieces))
            << pieces << " pieces, launch " << launch << ", word " << w;
      }
    }
    cudaFree(d_words);
    cudaFree(d_tickets);
  }
}

/// Piece `piece` of tile `tile`: thread i's partial sum (small integers: exact sums).
__host__ __device__ float piece_value(int piece, int tile, int i) {
  return static_cast<float>((piece + 1) * 4096 + tile * 64 + i % 61);
}

/// skinny_kernel's order over a block: every thread parks its sum, fences; the block syncs;
/// thread 0 takes the ticket; the last block's threads fence and add every piece (in piece
/// order) from the parking buffers. Grid: pieces x tiles, one word per tile.
__global__ void block_fence_sum(float* parked, uint64_t* words, uint64_t tag, float* out) {
  const int piece = static_cast<int>(blockIdx.x), pieces = static_cast<int>(gridDim.x);
  const int tile = static_cast<int>(blockIdx.y), i = static_cast<int>(threadIdx.x), n = static_cast<int>(blockDim.x);
  float* slots = parked + static_cast<size_t>(tile) * pieces * n;
  __stcg(slots + piece * n + i, piece_value(piece, tile, i));
  __threadfence();
  __syncthreads();
  __shared__ int last;
  if (i == 0) last = gemm::take_arrival_ticket(words + tile, tag) == static_cast<uint32_t>(pieces - 1);
  __syncthreads();
  if (!last) return;
  __threadfence();
  float sum = 0.0f;
  for (int p = 0; p < pieces; ++p) sum += __ldcg(slots + p * n + i);
  out[tile * n + i] = sum;
}

/// wgmma_tma's split_fixup for one consumer warpgroup (128 threads, kAcc accumulators each):
/// piece blockIdx.x of key blockIdx.y; the warpgroup that arrives last writes its sum.
constexpr int kAcc = 8;
__global__ void wgmma_fixup_sum(gemm::WgmmaSchedule s, float* out) {
  const int piece = static_cast<int>(blockIdx.x), key = static_cast<int>(blockIdx.y);
  const int tid = static_cast<int>(threadIdx.x);
  float acc[kAcc];
#pragma unroll
  for (int j = 0; j < kAcc; ++j) acc[j] = piece_value(piece, key, tid * kAcc + j);
  if (!gemm::split_fixup(s, key, 0, acc)) return;
#pragma unroll
  for (int j = 0; j < kAcc; ++j) out[(static_cast<size_t>(key) * 128 + tid) * kAcc + j] = acc[j];
}

/// The exact sum of every piece's value at (tile, i).
float expected_sum(int pieces, int tile, int i) {
  float sum = 0.0f;
  for (int p = 0; p < pieces; ++p) sum += piece_value(p, tile, i);
  return sum;
}

/// Compares `got` (tiles x per_tile) with the exact sums; returns the mismatches.
int mismatches(const std::vector<float>& got, int pieces, int tiles, int per_tile) {
  int bad = 0;
  for (int t = 0; t < tiles; ++t)
    for (int i = 0; i < per_tile; ++i)
      bad += !(got[static_cast<size_t>(t) * per_tile + i] == expected_sum(pieces, t, i));
  return bad;
}

TEST(ArrivalTicket, LastArriverAddsEveryParkedPieceFenceTicketFence) {
  std::string why_not;
  if (!cuda_device_present(&why_not)) GTEST_SKIP() << why_not;
  constexpr int kThreads = 128, kTiles = 96;
  for (const int pieces : {2, 5, 16, 64}) {
    const size_t parked_floats = static_cast<size_t>(kTiles) * pieces * kThreads;
    float *parked = nullptr, *out = nullptr;
    uint64_t* words = nullptr;
    ASSERT_EQ(cudaMalloc(&parked, parked_floats * sizeof(float)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&out, kTiles * kThreads * sizeof(float)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&words, kTiles * sizeof(uint64_t)), cudaSuccess);
    ASSERT_EQ(cudaMemset(words, 0xff, kTiles * sizeof(uint64_t)), cudaSuccess);  // stale: all ones
    for (int launch = 0; launch < 4; ++launch) {
      ASSERT_EQ(cudaMemset(parked, 0xff, parked_floats * sizeof(float)), cudaSuccess);  // NaN: not parked yet
      ASSERT_EQ(cudaMemset(out, 0xff, kTiles * kThreads * sizeof(float)), cudaSuccess);
      block_fence_sum<<<dim3(pieces, kTiles), kThreads>>>(parked, words, arrival_tag(), out);
      ASSERT_EQ(cudaGetLastError(), cudaSuccess);
      std::vector<float> got(static_cast<size_t>(kTiles) * kThreads);
      ASSERT_EQ(cudaMemcpy(got.data(), out, got.size() * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
      EXPECT_EQ(mismatches(got, pieces, kTiles, kThreads), 0) << pieces << " pieces, launch " << launch;
    }
    cudaFree(parked);
    cudaFree(out);
    cudaFree(words);
  }
}

TEST(ArrivalTicket, WgmmaSplitFixupAddsEveryParkedPiece) {
  std::string why_not;
  if (!cuda_device_present(&why_not)) GTEST_SKIP() << why_not;
  constexpr int kKeys = 64, kPerKey = 128 * kAcc;
  for (const int ways : {2, 3, 16}) {
    gemm::WgmmaSchedule s;
    s.ways = ways;
    const size_t partial_bytes = static_cast<size_t>(kKeys) * (ways - 1) * kPerKey * sizeof(float);
    const size_t flag_bytes = static_cast<size_t>(kKeys) * ways * sizeof(uint64_t);
    float* out = nullptr;
    ASSERT_EQ(cudaMalloc(&s.partials, partial_bytes), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&s.flags, flag_bytes), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&out, kKeys * kPerKey * sizeof(float)), cudaSuccess);
    ASSERT_EQ(cudaMemset(s.flags, 0, flag_bytes), cudaSuccess);  // stale: cleared
    for (int launch = 0; launch < 4; ++launch) {
      ASSERT_EQ(cudaMemset(s.partials, 0xff, partial_bytes), cudaSuccess);  // NaN: not parked yet
      ASSERT_EQ(cudaMemset(out, 0xff, kKeys * kPerKey * sizeof(float)), cudaSuccess);
      s.tag = arrival_tag();
      wgmma_fixup_sum<<<dim3(ways, kKeys), 128>>>(s, out);
      ASSERT_EQ(cudaGetLastError(), cudaSuccess);
      std::vector<float> got(static_cast<size_t>(kKeys) * kPerKey);
      ASSERT_EQ(cudaMemcpy(got.data(), out, got.size() * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
      EXPECT_EQ(mismatches(got, ways, kKeys, kPerKey), 0) << ways << " ways, launch " << launch;
    }
    cudaFree(s.partials);
    cudaFree(s.flags);
    cudaFree(out);
  }
}

}  // namespace
}  // namespace gpukern::test::cuda_gemm
