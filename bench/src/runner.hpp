// Runs the cases of one device: inputs, reference, every selected rung, the copy (and on
// the CPU the read) stream of the same bytes, and the derived figures (% of reference,
// % of peak, % of copy, % of read).
#pragma once

#include "measure.hpp"
#include "options.hpp"
#include "workload.hpp"

#include <gpukern/gpukern.hpp>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gpukern::bench {

/// The rung of the fused-epilogue reference (cuBLASLt): measured for epilogue cases (and the
/// epilogue suite's plain cells), and their reference when it ran.
inline constexpr const char* kEpilogueReference = "cublaslt";

/// One (case, rung): measured, or skipped with the reason.
struct Record {
  Case test_case;
  std::string variant;
  int rung_index = 0;  // position in the ladder (naive first)
  bool is_reference = false;
  bool measured = false;    // false: skipped, see reason
  std::string reason;       // why skipped / failed
  std::string decline;      // the rung's typed reason for a decline ("Misaligned"), "" otherwise
  bool failed = false;      // an error other than a declined case
  std::string auto_choice;  // variant "auto" (--variants auto): the rung the library ran

  Timing timing;
  double rate = 0;        // gemm GFLOP/s, softmax GB/s
  double gbps = 0;        // effective bandwidth: Case::bytes_moved() / median time
  std::string reference;  // vendor rung of the same run ("" if none ran)
  std::optional<double> reference_ms, pct_of_reference;
  double peak = 0;  // the hardware peak used (GFLOP/s or GB/s); 0 if unknown
  std::optional<double> pct_of_peak;
  std::optional<double> rel_error;
  bool error_ok = false;
  int64_t error_rows_checked = 0;
  // The same-run device-to-device copy whose traffic (read + write) equals bytes_moved,
  // and on the CPU a read-only stream over bytes_moved: time, GB/s, and % = their time
  // over the rung's time (the rung's effective bandwidth over theirs).
  std::optional<double> copy_ms, copy_gbps, pct_of_copy;
  std::optional<double> read_ms, read_gbps, pct_of_read;
  // An epilogue case: the same rung's plain call (same shape and batch, no epilogue),
  // timed in the same loop as the fused one, the two alternating (measure_together), and
  // pct_of_plain = 100 * plain_ms / ms (100: the epilogue costs nothing).
  std::optional<double> plain_ms, pct_of_plain;
};

/// Notes a failed or declined call in `r` (a Record or an AttentionRecord): the reason,
/// failed unless the rung declined, the typed decline; then waits for `device`'s queue so
/// that the next call starts on an idle device (an error there is left to that call).
template <class R>
void note_error(R& r, const Error& e, Device& device) {
  r.reason = e.what();
  r.failed = e.status() != Status::Unsupported;
  if (e.decline() != GK_DECLINE_NONE) r.decline = gk_decline_name(e.decline());
  try {
    device.synchronize();
  } catch (const Error&) {
  }
}

/// The copy and read streams of one byte count (StreamTimes::read on the CPU only).
struct StreamTimes {
  std::optional<Timing> copy, read;
};

/// A ladder rung as the bench sees it.
struct Rung {
  VariantInfo info;
  int index = 0;
};

/// Called before (done = false) and after (done = true) each (case, rung), for progress.
using ProgressFn = std::function<void(const Case&, const Record&, bool done)>;

class DeviceRunner {
 public:
  DeviceRunner(std::string spec, const Options& options);

  Device& device() { return device_; }
  const DeviceInfo& info() const { return info_; }
  bool is_cpu() const;
  /// Whether a rung is timed in one loop with its reference (--paired; auto: not on the CPU).
  bool paired() const;
  const std::string& spec() const { return spec_; }

  /// The ladder of `op` on this device, in ladder order.
  const std::vector<Rung>& ladder(gk_op op) const;
  /// The cases this device runs with `options` (sizes and dtypes resolved per backend).
  std::vector<Case> plan() const;
  /// Rungs measured for case `c`: --variants (or all), the fast set for c's dtype with
  /// --variants fast (a suite's default), plus the reference.
  std::vector<Rung> selected(const Case& c) const;
  /// Names in --variants that this device's ladders lack.
  std::vector<std::string> unknown_variants() const;

  /// Why `c` cannot run here, checked before anything is allocated: a count overflows
  /// 64 bits, or the memory it takes (with the cache flush buffer) exceeds the host's
  /// available memory or the device's memory. nullopt when it fits.
  std::optional<std::string> check_memory(const Case& c) const;

  /// Runs one case over the selected rungs.
  std::vector<Record> run(const Case& c, const ProgressFn& progress);

  /// Why work needing `need` cannot run here (host or device memory, the flush buffer
  /// counted), in words starting with `what`; nullopt when it fits.
  std::optional<std::string> check_footprint(const std::string& what, const Footprint& need) const;
  /// The cache flusher (allocated at its first use; null with --flush-mb 0) and the timer.
  CacheFlusher* flusher();
  Timer& timer() { return timer_; }
  const Options& options() const { return options_; }

  std::size_t flush_bytes() const { return flush_bytes_; }
  int64_t naive_max_size() const { return naive_max_size_; }

 private:
  std::optional<std::string> skip_reason(const Case& c, const Rung& rung) const;
  /// The copy / read streams moving `bytes`, timed at the first case that needs them.
  const StreamTimes& stream_times(uint64_t bytes, CacheFlusher* flusher);
  /// Peaks and the ratios to the case's reference; `paired_reference`: the record of the
  /// reference the other rungs were timed with (--paired), or null.
  void finish(std::vector<Record>& records, const Record* paired_reference) const;

  std::string spec_;
  const Options& options_;
  Device device_;
  Timer timer_;  // initialized from device_.timer() (not movable: declared after device_)
  DeviceInfo info_{};
  std::vector<Rung> gemm_ladder_, softmax_ladder_;
  std::size_t flush_bytes_ = 0;
  std::unique_ptr<CacheFlusher> flusher_;  // allocated at the first case
  int64_t naive_max_size_ = 0;
  std::map<uint64_t, StreamTimes> streams_;  // by bytes moved
  bool ramped_ = false;                      // the CPU's threads have streamed before timing
  /// gemm's B (host values and device copy) of the last case, kept for the next case of
  /// the same (dtype, N, K): the llm suite's weights reach half a billion elements.
  struct WeightCache {
    gk_dtype type = GK_F32;
    std::size_t count = 0;
    uint64_t seed = 0;
    HostArray host;
    Buffer device;
  };
  WeightCache weights_;
  volatile uint64_t read_checksum_ = 0;  // the read streams' sums, kept
};

/// Fills `count` elements of device memory at `data` with random_array(count, type, low, high,
/// seed)'s bytes, generated and uploaded in chunks of kUploadChunkBytes.
void upload_random(Device& device, void* data, uint64_t count, gk_dtype type, float low, float high, uint64_t seed);

/// Whether a rung's dtype list ("f32,tf32,f16") takes `type`; tf32 is a permission that
/// exact f32 rungs satisfy too.
bool takes(const VariantInfo& v, BenchType type);

/// Host memory this process can still take: MemAvailable, lowered to what its cgroup
/// (container) limit leaves; 0 when unknown.
uint64_t available_host_memory();

/// "key=value;" pairs of DeviceInfo::extra.
std::vector<std::pair<std::string, std::string>> parse_extra(const char* extra);

}  // namespace gpukern::bench
