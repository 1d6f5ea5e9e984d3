// Timing one call repeatedly with the device Timer: warm-up, cache flush before
// every timed run, adaptive repeat count, and the median with its spread.
#pragma once

#include <gpukern/gpukern.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace gpukern::bench {

/// How long and how often to measure one (case, rung).
struct TimingPolicy {
  int warmup = 2;           // untimed calls first (module load, autotuning, page faults)
  int repeats = 10;         // timed calls, adapted by min_time / max_time below
  double min_time_s = 0.1;  // fast calls: repeat more until calls + flushes take this long
  double max_time_s = 4.0;  // slow calls: repeat less (but at least 3) to stay under this
  int max_repeats = 2000;   // ceiling of the min_time adaptation
  /// Warm-up goes on (calls and flushes) until this much wall time has passed, past
  /// `warmup` calls (the CPU runner sets it: see DeviceRunner::run).
  double min_warmup_s = 0;
};

/// Median and spread of the timed runs, in milliseconds.
struct Timing {
  double median_ms = 0, min_ms = 0, max_ms = 0, q1_ms = 0, q3_ms = 0;
  int repeats = 0;
};

/// Evicts the device's last-level cache between timed runs by writing a buffer
/// larger than it, so that small sizes are measured from memory, as in real use,
/// rather than flattered by inputs left in cache by the previous run. On the CPU the
/// buffer is written by ordinary stores of the calling thread, not by memset: a large
/// memset may stream past the caches (rep stosb, non-temporal stores) and evict nothing.
class CacheFlusher {
 public:
  CacheFlusher(Device& device, std::size_t bytes);
  /// Queues the flush on the device's stream (untimed: the timer starts after it).
  void flush();
  std::size_t bytes() const { return buffer_.size(); }
  /// Wall time of one flush, measured once: counted against --max-time, because at
  /// small sizes the flushes, not the timed calls, take most of the time.
  double cost_ms() const { return cost_ms_; }

 private:
  Device& device_;
  Buffer buffer_;
  bool host_ = false;  // CPU backend: the buffer is host memory
  int value_ = 0;
  double cost_ms_ = 0;
};

/// How many timed calls `policy` asks for when one call (and its flush) takes about
/// estimate_ms + flush_ms (estimate_ms < 0: unknown, policy.repeats).
int repeat_count(const TimingPolicy& policy, double estimate_ms, double flush_ms);

/// Runs `call` policy.warmup times, then times it; each timed run is preceded by a
/// flush (when `flusher` is non-null). `call` throws gpukern::Error on failure,
/// which propagates (the first warm-up call is where a rung declines a case).
Timing measure(Device& device, Timer& timer, CacheFlusher* flusher, const TimingPolicy& policy,
               const std::function<void()>& call);

/// Several calls measured in one loop, alternating (a b, b a, a b, ...: repeat r in order
/// when r is even, in reverse when odd), each timed run after its own flush: what slowly
/// changes over a run (a GPU's clock under its power cap, other load on a CPU) then falls
/// on all alike, so their ratios are the calls' own. Warm-up and repeat count as
/// measure(), sized by the slowest; the last call runs last. One Timing per call, in order.
std::vector<Timing> measure_together(Device& device, Timer& timer, CacheFlusher* flusher, const TimingPolicy& policy,
                                     const std::vector<const std::function<void()>*>& calls);

/// How read_stream walks memory. CPUs differ in which is faster, so the bench times both
/// and keeps the faster: PageGroups reads a line of each of four pages in turn (four DRAM
/// pages open at once: the faster on the Intel Xeon VMs measured), Sequential reads each
/// thread's range in order (the faster on AMD Zen 5, where the page groups reach about
/// half of it).
enum class ReadPattern { PageGroups, Sequential };

/// The CPU backend's read-only stream: sums `bytes` of host memory as 64-bit words with
/// up to `threads` OpenMP threads (the backend's count; at least 1 MiB a thread, as the
/// backend's copy), so that the machine's read bandwidth is measured as the rungs see it.
/// Returns the sum, which the caller keeps so that no load can be optimized away.
uint64_t read_stream(const void* data, std::size_t bytes, int threads, ReadPattern pattern);

/// Median / quartiles of a sample (sorted copy).
Timing summarize(std::vector<double> times_ms);

/// The timing of one of `calls` calls timed together (--chain): every time over `calls`.
Timing per_call(Timing t, int calls);

}  // namespace gpukern::bench
