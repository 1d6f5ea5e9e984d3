// Split-K arrival tickets: the CTAs (or warps) that computed K pieces of one output tile each
// take a ticket at the tile's arrival word when their piece is done; all but the last park
// their f32 partial sums in a workspace and leave, the last adds them and stores the tile.
// Nobody waits for a piece that has not arrived, so the pieces need not be co-resident. One
// protocol for skinny_kernel's split tiles, the TMA path's cut tiles (skinny/) and wgmma_tma's
// split tiles (tensor_core/wgmma_schedule.cuh). wgmma_tma's claimed tiles use the same word as a
// launch-wide counter: the n-th claim's ticket is n - 1, with no clearing pass.
//
// The word: tag << kArrivalCountBits | count, where `tag` is unique to the launch
// (arrival_tag) and `count` counts the launch's arrivals so far. The workspace comes from a
// pool and holds whatever its last user left; a word whose tag is not this launch's counts as
// no arrival, so it needs no clearing pass. (Another launch's word never carries this tag;
// leftover data, such as parked sums, does with probability 2^-40 per word.)
//  * Tag current: every change to the word is +1 by an arrival of this launch (the pool hands
//    a workspace to its next user only after the launch that freed it), so the count an
//    atomicAdd returns is the number of earlier arrivals: that is the ticket, in one atomic
//    round trip.
//  * Tag stale (the launch's first arrival at this word, and any that raced it): the
//    atomicAdd's increment of a stale value claims nothing. The arrival installs tag | 1
//    (ticket 0, for itself) by compare-and-swap on the value it last saw; of those racing, one
//    CAS succeeds, and each of the others, seeing the current tag, takes a ticket by atomicAdd.
//  Counts stay far below 2^kArrivalCountBits (a tile has at most one piece per K block and per
//  CTA of the grid; the policies cut one into at most a few hundred; a launch that claims
//  tiles claims fewer than kMaxArrivals), so an increment never carries into the tag.
//
// Memory ordering: the ticket's atomics are relaxed and order nothing; each caller orders its
// partial sums itself, in one of two ways:
//  * fence-ticket-fence (skinny_kernel, the TMA path): every thread that stored partial sums
//    runs __threadfence() before the (block or warp) barrier that precedes the ticket, and the
//    last arriver's threads run __threadfence() after the barrier that hands them the ticket,
//    before they read the parked sums. The fences, with the atomic read-modify-writes between
//    them, make every parked sum visible to the last arriver.
//  * ticket first (wgmma_tma): the ticket only names the parking buffer (ticket t < ways - 1
//    parks in buffer t); each buffer is handed over by its own ready word, a release store of
//    arrival_flag(tag) after the park (behind a __threadfence) and an acquire load by the last,
//    which spins until every buffer's word holds the flag.
#pragma once

#include "cuda/workspace.cuh"

#include <cstdint>

namespace gpukern::cuda::gemm {

/// Bits of the arrival count in a ticket word; the tag has the other 40.
constexpr int kArrivalCountBits = 24;
constexpr uint64_t kArrivalCountMask = (uint64_t(1) << kArrivalCountBits) - 1;
/// Arrivals at one word a launch may make at most (its count must not reach the mask).
constexpr int64_t kMaxArrivals = int64_t(kArrivalCountMask) - 1;
constexpr uint64_t kArrivalTagLimit = uint64_t(1) << (64 - kArrivalCountBits);

/// This launch's tag (host): launch-unique (launch_tags, 40 bits of it), never 0.
inline uint64_t arrival_tag() {
  for (;;)
    if (const uint64_t tag = launch_tags(1) % kArrivalTagLimit; tag != 0) return tag;
}

/// The value of a launch's "done" flags (wgmma_tma's ready words): its tag with a count no
/// ticket word reaches, so neither a stale word of another launch nor cleared memory holds it.
__host__ __device__ constexpr uint64_t arrival_flag(uint64_t tag) {
  return tag << kArrivalCountBits | kArrivalCountMask;
}

/// The ticket of an arrival whose atomicAdd(word, 1) returned `old` (arrival_fetch), for the
/// launch tagged `tag`. Split from the increment so a caller can issue the atomic early and
/// read its answer later (wgmma_tma's tile claims), hiding the round trip.
__device__ __forceinline__ uint32_t resolve_arrival_ticket(uint64_t* word, uint64_t tag, unsigned long long old) {
  auto* w = reinterpret_cast<unsigned long long*>(word);
  if ((old >> kArrivalCountBits) == tag) return static_cast<uint32_t>(old & kArrivalCountMask);
  for (unsigned long long cur = old + 1;;) {
    if ((cur >> kArrivalCountBits) == tag) return static_cast<uint32_t>(atomicAdd(w, 1ull) & kArrivalCountMask);
    const unsigned long long seen = atomicCAS(w, cur, (static_cast<unsigned long long>(tag) << kArrivalCountBits) | 1);
    if (seen == cur) return 0;
    cur = seen;
  }
}

/// The increment of an arrival at `word`: its answer goes to resolve_arrival_ticket.
__device__ __forceinline__ unsigned long long arrival_fetch(uint64_t* word) {
  return atomicAdd(reinterpret_cast<unsigned long long*>(word), 1ull);
}

/// This arrival's ticket at `word` for the launch tagged `tag`: 0, 1, 2, ... in arrival order
/// (the last of `pieces` arrivals gets pieces - 1). See the top of this file.
__device__ __forceinline__ uint32_t take_arrival_ticket(uint64_t* word, uint64_t tag) {
  return resolve_arrival_ticket(word, tag, arrival_fetch(word));
}

}  // namespace gpukern::cuda::gemm
