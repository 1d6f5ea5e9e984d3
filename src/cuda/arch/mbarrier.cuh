// mbarrier primitives (sm_90+): shared-memory barriers that complete a phase once their
// expected arrivals and transaction bytes (TMA, bulk copies, st.async) are in, waited on
// by phase parity. One thin wrapper per PTX instruction; barriers are named by their
// shared-window address (arch::smem_addr). NVIDIA only: call from device code compiled
// for sm_90 or later.
#pragma once

#include <cstdint>

namespace gpukern::cuda::arch {

/// elect.sync over the whole warp: true in exactly one lane (the lowest active one).
/// Producer loops run on a whole, converged warp and guard each issue (TMA, expect_tx)
/// with it: the loop state then stays warp-uniform, in uniform registers, where a loop
/// run by one thread keeps it in per-thread registers and moves every TMA operand over
/// with R2UR in a loop of its own.
__device__ __forceinline__ bool elect_one() {
  uint32_t elected = 0;
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "elect.sync _|p, 0xffffffff;\n"
      "selp.u32 %0, 1, 0, p;\n"
      "}\n"
      : "=r"(elected));
  return elected != 0;
}

/// Initializes the barrier at `bar` for `count` arrivals per phase.
__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

/// Makes barrier initialization visible to the async proxy (TMA) and the cluster.
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

/// Blocks until the phase with parity `parity` of `bar` has completed (CTA scope).
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  uint32_t done = 0;
  do {
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n"
        "}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (!done);
}

/// The same wait with acquire semantics at cluster scope, for barriers whose
/// transactions come from other CTAs of the cluster (st.async, remote bulk copies).
__device__ __forceinline__ void mbar_wait_acquire_cluster(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "WAIT_%=:\n"
      "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT_%=;\n"
      "}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}

/// One arrival that also announces `bytes` of transactions for the current phase.
__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}

/// One arrival.
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

/// Arrival on the barrier at the same shared-memory offset in cluster CTA `cta_rank`.
/// Default (CTA-scope release) semantics: the arrival only announces that this warp is
/// done with a buffer (e.g. its wgmma reads of a stage, which wgmma.wait_group already
/// guarantees), it publishes no data. The `.release.cluster` form costs a
/// MEMBAR.ALL.GPU per arrival.
__device__ __forceinline__ void mbar_arrive_cluster(uint32_t bar, uint32_t cta_rank) {
  asm volatile(
      "{\n"
      ".reg .b32 remote;\n"
      "mapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n"
      "}\n" ::"r"(bar),
      "r"(cta_rank)
      : "memory");
}

}  // namespace gpukern::cuda::arch
