// What gpukern-bench writes: the progress line on stderr, the table on stdout, and
// the JSON results file (schema 1, docs/design.md "Benchmark results format").
#pragma once

#include "options.hpp"
#include "runner.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace gpukern::bench {

/// Progress on stderr: a redrawn bar when stderr is a terminal, otherwise one line per case.
class Progress {
 public:
  explicit Progress(std::size_t total_steps);
  /// A (case, rung) starts (done = false) or is done.
  void step(const std::string& device, const Case& c, const Record& r, bool done);
  /// One case done (all its rungs); prints the line in non-terminal mode.
  void case_done(const std::string& device, const Case& c, const std::vector<Record>& records);
  /// One case done that is not a gemm or softmax case (--op attention): counted only.
  void case_counted() { ++cases_; }
  /// Erases the bar before something else is printed to the terminal.
  void clear();
  void finish();

 private:
  void draw();
  std::size_t total_, done_ = 0, cases_ = 0;
  bool tty_;
  bool shown_ = false;
  std::string label_;
  std::chrono::steady_clock::time_point start_, case_start_;
};

/// Prints the table of one device's results so far (a header per device and op).
class TablePrinter {
 public:
  void device_header(const DeviceRunner& runner, const Options& options);
  void print_case(const std::vector<Record>& records);

 private:
  int last_op_ = -1;
};

/// The median and spread of `t` into `j`: ms, ms_min, ms_max, ms_q1, ms_q3, repeats.
void put_timing(nlohmann::json& j, const Timing& t);
/// A record not measured (a Record or an AttentionRecord) into `j`: status "failed" or
/// "skipped", the reason, and the typed decline when there is one.
template <class R>
void put_not_measured(nlohmann::json& j, const R& r) {
  j["status"] = r.failed ? "failed" : "skipped";
  j["reason"] = r.reason;
  if (!r.decline.empty()) j["decline"] = r.decline;
}

/// The JSON object of one run on one device.
nlohmann::json run_json(const DeviceRunner& runner, const Options& options, const std::vector<Record>& records);

/// Where --json writes the run of `runner` (directory mode, or one file per device). In
/// directory mode a suite run's name ends in its suites (<device>-<date>-llm.json), so that
/// it does not replace the same day's ladder run.
std::string json_file_for(const std::string& json_option, const DeviceInfo& info, std::size_t device_count,
                          const std::vector<std::string>& suites);

/// "nvidia-h100-80gb-hbm3": lowercase, runs of other characters as one '-'.
std::string slug(const std::string& text);
/// The host's 1-minute load average (/proc/loadavg), if readable: other work on the
/// machine during a run shows up here, and CPU results under load are not comparable.
std::optional<double> load_average();
/// yyyy-mm-dd (UTC) of now.
std::string today_utc();

/// The git commit the bench was built from ("unknown" outside a checkout).
extern const char* const kGitCommit;

}  // namespace gpukern::bench
