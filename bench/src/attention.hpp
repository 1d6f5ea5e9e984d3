// gpukern-bench --op attention: multi-head attention forward as three library calls
// (scores = Q K^T / sqrt(d) batched over batch x heads, softmax of the scores (causal or
// not), out = P V), timed step by step with the library's own choice of rung, against the
// same three steps on the vendor rungs (the gemm reference, batched; the softmax reference
// over all rows at once) in the same run, and checked against a double-precision reference.
#pragma once

#include "measure.hpp"
#include "options.hpp"
#include "runner.hpp"
#include "workload.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace gpukern::bench {

/// One attention shape: items = batch x heads of Q, K, V (seq x head_dim each).
struct AttentionCase {
  BenchType type = BenchType::kF16;
  int64_t batch = 32, heads = 32, seq = 512, head_dim = 64;
  bool causal = false;
  int64_t batch_reduced_from = 0;  // the batch asked for, when the device's memory took fewer

  int64_t items() const { return batch * heads; }
  /// Multiply-adds x 2 of both gemms (the scores are computed in full, masked or not).
  double flops() const;
  /// "32x32 S 512 d 64 causal".
  std::string label() const;
};

/// One path (the library's auto rungs, or the vendor rungs) of one case.
struct AttentionRecord {
  AttentionCase test_case;
  std::string variant;  // "auto" (the library's choice per call) or "vendor"
  bool is_reference = false;
  bool measured = false;
  bool failed = false;               // an error other than a declined call
  std::string reason;                // why not measured
  std::string decline;               // the typed reason of a declined call
  std::string note;                  // what the path computes when it differs (the vendor's unmasked softmax)
  std::array<std::string, 3> rungs;  // the rung of each call: Q K^T, softmax, P V
  Timing timing;                     // the three calls together
  std::array<double, 3> step_ms{};   // the median of each call
  double gflops = 0;
  std::optional<double> reference_ms, pct_of_reference, rel_error;
  bool error_ok = false;
  int64_t error_rows_checked = 0;
};

/// The cases of --op attention on `runner`'s device: per dtype, head dimension and sequence
/// length; a batch too large for the device's memory is halved until it fits.
std::vector<AttentionCase> attention_plan(const DeviceRunner& runner);
/// Why `c` cannot run on `runner`'s device, or nullopt.
std::optional<std::string> attention_memory(const DeviceRunner& runner, const AttentionCase& c);
/// Both paths of one case.
std::vector<AttentionRecord> run_attention(DeviceRunner& runner, const AttentionCase& c);
/// The table of one case's records on stdout.
void print_attention(const std::vector<AttentionRecord>& records, bool header);
/// A record as JSON (schema 1, "op": "attention"); `measured` tells results from skipped.
nlohmann::json attention_json(const AttentionRecord& r, const DeviceInfo& info);

}  // namespace gpukern::bench
