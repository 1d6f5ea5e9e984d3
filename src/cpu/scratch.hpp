// Per-calling-thread working memory of the CPU rungs (packed panels, softmax scratch rows).
#pragma once

#include "core/types.hpp"

#include <cstddef>
#include <cstdlib>
#include <string>

#if defined(__linux__)
#include <sys/mman.h>  // madvise
#endif

namespace gpukern::cpu {

/// A 64-byte aligned float buffer that only grows. Keep one per calling thread
/// (thread_local): repeated calls then do not pay for fresh pages (page faults cost
/// several % of a GEMM at N = 1024). Get it before a parallel region, so an allocation
/// failure is an error value, not a std::terminate from inside OpenMP.
/// Buffers of kHugeBytes and more are 2 MiB aligned and asked for transparent huge pages
/// (Linux, where THP is "madvise" by default on many distributions): a 4096^2 GEMM packs
/// 64 MiB of A, which with 4 KiB pages costs 16384 page faults per call (it is not kept
/// between calls) and a TLB miss on nearly every new A panel. Measured on Zen 5: +4% at
/// 4096^3, 1 and 2 threads.
class ScratchBuffer {
 public:
  ScratchBuffer() = default;
  ScratchBuffer(const ScratchBuffer&) = delete;
  ScratchBuffer& operator=(const ScratchBuffer&) = delete;
  ~ScratchBuffer() { std::free(data_); }

  float* get(std::size_t floats) {
    if (floats > capacity_) {
      std::free(data_);
      const std::size_t bytes = core::ceil_div<std::size_t>(floats * sizeof(float), 64) * 64;
      const bool huge = bytes >= kHugeBytes;
      const std::size_t align = huge ? kHugePage : 64;
      data_ = static_cast<float*>(std::aligned_alloc(align, core::ceil_div(bytes, align) * align));
      if (!data_) {
        capacity_ = 0;
        throw core::Error(core::Status::OutOfMemory,
                          "cpu: cannot allocate " + std::to_string(bytes) + " bytes of working memory");
      }
      capacity_ = floats;
#ifdef MADV_HUGEPAGE
      if (huge) madvise(data_, core::ceil_div(bytes, align) * align, MADV_HUGEPAGE);  // a hint: failure is harmless
#endif
    }
    return data_;
  }

  /// Frees the buffer if it holds more than `floats`: big buffers are not kept between
  /// calls (a 4096^2 GEMM packs 64 MiB; faulting it in again costs < 1% of such a call).
  void trim(std::size_t floats) {
    if (capacity_ > floats) {
      std::free(data_);
      data_ = nullptr;
      capacity_ = 0;
    }
  }

  /// What stays allocated between calls: 32 MiB (a 2048^2 GEMM packs 17 MiB of A).
  static constexpr std::size_t kKeepFloats = (32u << 20) / sizeof(float);
  /// Huge pages from this size on (smaller buffers would waste most of a 2 MiB page).
  static constexpr std::size_t kHugeBytes = 4u << 20, kHugePage = 2u << 20;

 private:
  float* data_ = nullptr;
  std::size_t capacity_ = 0;
};

}  // namespace gpukern::cpu
