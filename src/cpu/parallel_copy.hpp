// The CPU backend's memory copy (gk_memcpy on the CPU): the backend's threads, each
// copying one contiguous chunk, with non-temporal (streaming) stores for copies larger
// than the caches, so that a copy runs at the machine's memory bandwidth as the rungs do.
#pragma once

#include "cpu/cpu_features.hpp"

#include <cstddef>
#include <cstdint>

namespace gpukern::cpu {

/// How the copy stores: Auto picks Streaming from streaming_copy_threshold() bytes on.
enum class CopyStores { Auto, Cached, Streaming };

/// Copies `bytes` from `src` to `dst` with up to `threads` OpenMP threads. Overlapping
/// ranges are allowed and copied as memmove does (on one thread: the chunks of a parallel
/// copy would read what another thread has already overwritten).
GK_CPU_TESTED void parallel_copy(void* dst, const void* src, std::size_t bytes, int threads,
                                 CopyStores stores = CopyStores::Auto);

/// The same with the streaming loop of `isa`'s registers (parallel_copy above: active_isa()),
/// which must not exceed what the CPU supports. Tests run every path with it.
GK_CPU_TESTED void parallel_copy(void* dst, const void* src, std::size_t bytes, int threads, CopyStores stores,
                                 Isa isa);

/// Size from which Auto streams: a quarter of the last-level cache, at least 4 MiB (glibc's
/// default for its own non-temporal memcpy). Beyond it source and destination no longer
/// fit in the cache the copy shares with everything else, and ordinary stores would read
/// every destination line before writing it.
GK_CPU_TESTED std::size_t streaming_copy_threshold();

/// gk_memread on the CPU: reads `bytes` at `src` with up to `threads` OpenMP threads (one
/// contiguous chunk each, as parallel_copy) and returns the sum of the bytes, each an
/// unsigned 8-bit value, modulo 2^64.
GK_CPU_TESTED uint64_t parallel_byte_sum(const void* src, std::size_t bytes, int threads);

}  // namespace gpukern::cpu
