// Command line of gpukern-bench (docs/design.md "Command line"), parsed with CLI11.
#pragma once

#include "measure.hpp"
#include "workload.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpukern::bench {

/// op(A) op(B) of a gemm: --layout NN, NT, TN or TT.
struct Layout {
  bool trans_a = false, trans_b = false;
  bool operator==(const Layout& other) const { return trans_a == other.trans_a && trans_b == other.trans_b; }
};

/// A --sizes entry: "N" (square gemm N^3, softmax NxN), "MxNxK" (gemm only) or
/// "RxC" (softmax only).
struct SizeSpec {
  std::vector<int64_t> dims;  // 1, 2 or 3 numbers
  bool fits(gk_op op) const { return dims.size() == 1 || dims.size() == (op == GK_OP_GEMM ? 3u : 2u); }
};

struct Options {
  std::vector<std::string> backends{"all"};  // "all" or names/specs: cpu, cuda, cuda:1, hip
  std::vector<gk_op> ops{GK_OP_GEMM, GK_OP_SOFTMAX};
  std::vector<BenchType> types;         // empty: per-backend default
  std::vector<SizeSpec> sizes;          // --sizes: both ops (entries that fit)
  std::vector<SizeSpec> gemm_sizes;     // --gemm-sizes (overrides --sizes for gemm)
  std::vector<SizeSpec> softmax_sizes;  // --softmax-sizes (overrides --sizes for softmax)
  std::vector<std::string> variants;    // empty: all rungs (suites: the fast rungs); see fast_variants
  bool fast_variants = false;           // --variants fast, the default of a suite
  bool with_auto = false;               // --variants auto: also measure the library's own choice
  bool auto_only = false;               // --variants auto alone: only it and the reference
  bool with_reference = true;           // measure the vendor rung even if not listed
  std::string paired = "auto";          // --paired: time a rung in one loop with its reference (auto: GPUs)
  bool warmup_given = false;            // --warmup given: exactly that many warm-up calls
  std::optional<int> threads;           // GPUKERN_NUM_THREADS
  TimingPolicy timing;
  std::optional<double> flush_mb;                          // cache flush buffer; 0 = no flush (warm caches)
  std::optional<int64_t> naive_max_size;                   // gemm: slow rungs only while cbrt(m*n*k) <= this
  bool skip_slow = false;                                  // never run the slow rungs
  std::vector<std::string> slow_rungs{"naive"};            // what --naive-max-size and --skip-slow apply to
  std::vector<Layout> layouts;                             // --layout; empty: NN (suites: their own)
  std::vector<std::string> suites;                         // --suite llm,square (gemm workload suites)
  std::vector<int64_t> suite_tokens;                       // --suite-t: the llm suite's T (m) values; empty: all
  std::vector<std::pair<int64_t, int64_t>> suite_weights;  // --suite-nk: its (N, K); empty: all
  bool c_f32 = false;                                      // gemm C in f32 for f16/bf16 inputs
  std::optional<int64_t> batch;                            // --batch: gemm batch items (attention: batch)
  int chain = 1;                                           // --chain: gemm calls back to back a timed call
  char broadcast = 0;                                      // --broadcast a|b: that operand's stride 0
  std::vector<BiasKind> biases;                            // --bias: empty = none
  std::vector<gk_activation> activations;                  // --act: empty = none
  bool attention = false;                                  // --op attention: the three calls of attention
  bool causal = false;                                     // --causal (attention)
  std::optional<int64_t> heads;                            // --heads (attention) [default 32]
  std::vector<int64_t> attention_seqs, attention_dims;     // --seq, --head-dim (attention)
  bool log_softmax = false;
  double reference_budget = double(1 << 28);  // multiply-adds (gemm) / elements (softmax) checked
  uint64_t seed = 42;
  std::string json_path;  // empty: no JSON
  bool list = false;
  bool dry_run = false;                 // print the cases and rungs a run would measure, and exit
  std::string list_rungs;               // "gemm" / "softmax": rung names that run here, one a line
  bool check = false;                   // exit 1 when a result exceeds its error bound
  bool quiet = false;                   // no table on stdout
  std::string command_line;             // argv as typed, recorded in the JSON
  std::optional<double> load_at_start;  // 1-minute load average when the run began
};

/// Parses argv. Returns the exit code to stop with (help, bad option), or nullopt to go on.
std::optional<int> parse_options(int argc, char** argv, Options& options);

/// Default sizes when none were given, per op and backend kind.
std::vector<SizeSpec> default_sizes(gk_op op, bool is_cpu);
/// Default dtypes when none were given (CPU f32 only to keep runs short).
std::vector<BenchType> default_types(gk_op op, bool is_cpu);

}  // namespace gpukern::bench
