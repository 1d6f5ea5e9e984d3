// Runs the cases of one device: inputs, reference, every selected rung, the copy
// baseline for softmax, and the derived figures (% of reference, % of peak, % of copy).
#pragma once

#include "measure.hpp"
#include "options.hpp"
#include "workload.hpp"

#include <gpukern/gpukern.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gpukern::bench {

/// One (case, rung): measured, or skipped with the reason.
struct Record {
  Case test_case;
  std::string variant;
  int rung_index = 0;  // position in the ladder (naive first)
  bool is_reference = false;
  bool measured = false;  // false: skipped, see reason
  std::string reason;     // why skipped / failed
  std::string decline;    // the rung's typed reason for a decline ("Misaligned"), "" otherwise
  bool failed = false;    // an error other than a declined case

  Timing timing;
  double rate = 0;        // gemm GFLOP/s, softmax GB/s
  std::string reference;  // vendor rung of the same run ("" if none ran)
  std::optional<double> reference_ms, pct_of_reference;
  double peak = 0;  // the hardware peak used (GFLOP/s or GB/s); 0 if unknown
  std::optional<double> pct_of_peak;
  std::optional<double> rel_error;
  bool error_ok = false;
  int64_t error_rows_checked = 0;
  std::optional<double> copy_ms, copy_gbps, pct_of_copy;  // softmax
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
  const std::string& spec() const { return spec_; }

  /// The ladder of `op` on this device, in ladder order.
  const std::vector<Rung>& ladder(gk_op op) const;
  /// The cases this device runs with `options` (sizes and dtypes resolved per backend).
  std::vector<Case> plan() const;
  /// Rungs measured for `op`: --variants (or all) plus the reference.
  std::vector<Rung> selected(gk_op op) const;
  /// Names in --variants that this device's ladders lack.
  std::vector<std::string> unknown_variants() const;

  /// Why `c` cannot run here, checked before anything is allocated: a count overflows
  /// 64 bits, or the memory it takes (with the cache flush buffer) exceeds the host's
  /// available memory or the device's memory. nullopt when it fits.
  std::optional<std::string> check_memory(const Case& c) const;

  /// Runs one case over the selected rungs.
  std::vector<Record> run(const Case& c, const ProgressFn& progress);

  std::size_t flush_bytes() const { return flush_bytes_; }
  int64_t naive_max_size() const { return naive_max_size_; }

 private:
  std::optional<std::string> skip_reason(const Case& c, const Rung& rung) const;
  void finish(std::vector<Record>& records) const;

  std::string spec_;
  const Options& options_;
  Device device_;
  Timer timer_;  // initialized from device_.timer() (not movable: declared after device_)
  DeviceInfo info_{};
  std::vector<Rung> gemm_ladder_, softmax_ladder_;
  std::size_t flush_bytes_ = 0;
  std::unique_ptr<CacheFlusher> flusher_;  // allocated at the first case
  int64_t naive_max_size_ = 0;
};

/// Host memory this process can still take: MemAvailable, lowered to what its cgroup
/// (container) limit leaves; 0 when unknown.
uint64_t available_host_memory();

/// "key=value;" pairs of DeviceInfo::extra.
std::vector<std::pair<std::string, std::string>> parse_extra(const char* extra);

}  // namespace gpukern::bench
