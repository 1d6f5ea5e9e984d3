// Command-line parsing of gpukern-bench with CLI11.
#include "options.hpp"

#include "suite.hpp"

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace gpukern::bench {

namespace {

// "4097x4095x4093" -> {4097, 4095, 4093}; throws CLI::ValidationError.
SizeSpec parse_size(const std::string& text) {
  SizeSpec spec;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    std::size_t end = text.find_first_of("xX", begin);
    if (end == std::string::npos) end = text.size();
    const std::string part = text.substr(begin, end - begin);
    std::size_t used = 0;
    long long value = 0;
    try {
      value = std::stoll(part, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (part.empty() || used != part.size() || value <= 0)
      throw CLI::ValidationError("--sizes", "'" + text + "' is not N, MxNxK or RxC with positive integers");
    spec.dims.push_back(value);
    begin = end + 1;
  }
  if (spec.dims.size() > 3) throw CLI::ValidationError("--sizes", "'" + text + "' has more than three dimensions");
  return spec;
}

std::vector<SizeSpec> parse_sizes(const std::vector<std::string>& texts) {
  std::vector<SizeSpec> out;
  for (const auto& t : texts) out.push_back(parse_size(t));
  return out;
}

// Numbers print as typed ("1e+30", "nan", "5"), not as CLI11's "%f" of the range.
std::string number_text(double value) { return fmt::format("{}", value); }

// A real-valued option within [low, high]; NaN and infinities are out of range too
// (CLI11's own range checks let NaN through).
void require_range(const char* option, double value, double low, double high, const char* meaning) {
  if (std::isfinite(value) && value >= low && value <= high) return;
  throw CLI::ValidationError(option, number_text(value) + " is out of range; expected " + meaning);
}

// A comma list of names (--backend, --variants, --slow-rungs) must not hold empty names:
// "--backend ," would otherwise mean "no backend given" and run every backend.
void require_names(const char* option, const std::vector<std::string>& names, const std::string& typed) {
  for (const auto& name : names)
    if (name.empty()) throw CLI::ValidationError(option, "empty name in '" + typed + "'");
}

// "a,b" -> {"a", "b"}, keeping empty items ("a,,b", ",") for require_names to refuse.
std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  for (std::size_t begin = 0; begin <= text.size();) {
    std::size_t end = text.find(',', begin);
    if (end == std::string::npos) end = text.size();
    out.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return out;
}

// A positive whole number of a comma-list option ("--suite-t 1,16"); throws CLI::ValidationError.
int64_t parse_count(const char* option, const std::string& text) {
  std::size_t used = 0;
  long long value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (text.empty() || used != text.size() || value <= 0)
    throw CLI::ValidationError(option, "'" + text + "' is not a positive whole number");
  return value;
}

// "4096x11008" -> (4096, 11008): a --suite-nk entry.
std::pair<int64_t, int64_t> parse_weight(const std::string& text) {
  const std::size_t x = text.find_first_of("xX");
  if (x == std::string::npos) throw CLI::ValidationError("--suite-nk", "'" + text + "' is not NxK");
  return {parse_count("--suite-nk", text.substr(0, x)), parse_count("--suite-nk", text.substr(x + 1))};
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ",") + item;
  return out;
}

}  // namespace

std::vector<SizeSpec> default_sizes(gk_op op, bool is_cpu) {
  auto make = [](std::initializer_list<std::vector<int64_t>> list) {
    std::vector<SizeSpec> out;
    for (const auto& dims : list) out.push_back(SizeSpec{dims});
    return out;
  };
  if (op == GK_OP_GEMM) {
    if (is_cpu) return make({{256}, {512}, {1024}, {2048}});
    return make({{1024}, {2048}, {4096}, {8192}, {4097, 4095, 4093}});
  }
  // Softmax shapes of docs/ANCHORS: square, many short rows, few long rows; on the CPU
  // scaled so that the largest (512 MiB in f32) is far beyond the last-level cache.
  if (is_cpu) return make({{1024, 1024}, {4096, 4096}, {16384, 1024}, {65536, 128}, {1024, 32768}, {16384, 8192}});
  return make({{4096, 4096}, {16384, 1024}, {65536, 128}, {1024, 32768}, {64, 262144}, {32768, 8192}});
}

std::vector<BenchType> default_types(gk_op op, bool is_cpu) {
  if (is_cpu) return {BenchType::kF32};
  if (op == GK_OP_GEMM) return {BenchType::kF32, BenchType::kTF32, BenchType::kF16, BenchType::kBF16};
  return {BenchType::kF32, BenchType::kF16, BenchType::kBF16};
}

std::optional<int> parse_options(int argc, char** argv, Options& options) {
  CLI::App app{
      "gpukern-bench: runs every rung of the gemm and softmax ladders on every backend found,\n"
      "against the vendor reference rung measured in the same run, and writes a table and JSON."};
  app.get_formatter()->column_width(34);

  std::string backend_text = "all", op_text = "all";
  std::vector<std::string> dtype_texts, size_texts, gemm_size_texts, softmax_size_texts, variant_texts;
  std::vector<std::string> layout_texts, token_texts, weight_texts;
  double flush_mb = -1;
  int64_t naive_max = -1;
  int threads = 0;

  app.add_option("--backend", backend_text,
                 "all (every available backend), or a comma list of cpu, cuda, cuda:N, hip, hip:N")
      ->capture_default_str();
  app.add_option("--op", op_text,
                 "gemm, softmax, all (gemm and softmax) or attention (Q*K^T, softmax, P*V: the library's "
                 "calls against the same three steps on the vendor rungs)")
      ->check(CLI::IsMember({"gemm", "softmax", "all", "attention"}))
      ->capture_default_str();
  app.add_option("--dtype", dtype_texts,
                 "comma list of f32, tf32 (f32 data, allow_tf32), f16, bf16 "
                 "[default: f32 on the CPU; f32,tf32,f16,bf16 on GPUs; tf32 is gemm only]")
      ->delimiter(',')
      ->check(CLI::IsMember({"f32", "tf32", "f16", "bf16"}));
  app.add_option("--sizes", size_texts,
                 "comma list: N (square), MxNxK (gemm), RxC (softmax); an entry applies to the ops it fits")
      ->delimiter(',');
  app.add_option("--gemm-sizes", gemm_size_texts, "sizes for gemm only (N or MxNxK)")->delimiter(',');
  app.add_option("--softmax-sizes", softmax_size_texts, "shapes for softmax only (N or RxC)")->delimiter(',');
  app.add_option("--variants", variant_texts,
                 "all, fast, or a comma list of rung names (the reference rung is measured too); fast = per "
                 "dtype the rungs auto may pick and the three highest rungs of the ladder; auto = also the "
                 "library's own choice, recorded with the rung it ran [default: all; fast with --suite]")
      ->delimiter(',');
  app.add_option("--suite", options.suites,
                 "gemm workload suites, comma list: llm (T x N x K of a transformer's linear layers, NN and "
                 "NT), square (128 to 8192, non-powers of two included), attention (batched Q*K^T and P*V of "
                 "32 x 32 heads, S 512..4096, d 64 and 128) and/or epilogue (4096^3 and 8192^3 plain, "
                 "bias + gelu_tanh, bias + relu); they replace the gemm sizes")
      ->delimiter(',')
      ->check(CLI::IsMember(suite_names()));
  app.add_option("--suite-t", token_texts,
                 "llm suite: the token counts T (gemm m) to run, comma list [default: 1,2,4,...,2048,8192; "
                 "f32/tf32 at 1,16,512]; given, every dtype runs at these")
      ->delimiter(',');
  app.add_option("--suite-nk", weight_texts,
                 "llm suite: the weight shapes NxK to run, comma list [default: 4096x4096, 11008x4096, "
                 "4096x11008, 14336x4096, 4096x14336, 128256x4096]")
      ->delimiter(',');
  app.add_flag("--no-reference", "do not add the vendor reference rung to --variants (for profiling)");
  app.add_option("--paired", options.paired,
                 "time each rung in one loop with the reference's call, the two alternating (--op attention: the "
                 "library's path with the vendor's): on, off, or auto (on for GPUs, whose clock moves between "
                 "states within a case; off on the CPU, where OpenBLAS's threads spin on after its calls)")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->capture_default_str();
  app.add_option("--threads", threads, "CPU threads (sets GPUKERN_NUM_THREADS; the library bounds it)");
  app.add_option("--warmup", options.timing.warmup,
                 "untimed calls before timing (0 to 1000000); on the CPU, unless given, each rung's "
                 "warm-up also lasts 0.3 s at least")
      ->capture_default_str();
  app.add_option("--repeats", options.timing.repeats,
                 "timed calls (more while under --min-time, fewer, at least 3, past --max-time; 1 to 1000000)")
      ->capture_default_str();
  app.add_option("--min-time", options.timing.min_time_s,
                 "seconds of measuring (timed calls and cache flushes) at least, per rung and case (0 to 3600)")
      ->capture_default_str();
  app.add_option("--max-time", options.timing.max_time_s,
                 "seconds of measuring at most, per rung and case (above 0, up to 3600)")
      ->capture_default_str();
  app.add_option("--flush-mb", flush_mb,
                 "MiB written between timed calls to evict caches, 0 to 1048576; 0 = warm caches "
                 "[default: 2x the last-level cache on the CPU (at least 64), 512 on GPUs]");
  app.add_option(
      "--naive-max-size", naive_max,
      "gemm: run the slow rungs only while cbrt(M*N*K*batch) <= this [default: 1024 on the CPU, 4096 on GPUs]");
  app.add_flag("--skip-slow", options.skip_slow, "never run the slow rungs (see --slow-rungs)");
  app.add_option("--slow-rungs", options.slow_rungs, "rungs that --naive-max-size and --skip-slow apply to")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--layout", layout_texts,
                 "gemm op(A) op(B), comma list of NN, NT, TN, TT [default: NN; the llm suite NN,NT]")
      ->delimiter(',')
      ->check(CLI::IsMember({"NN", "NT", "TN", "TT"}));
  int64_t batch = 1;
  std::string broadcast_text;
  std::vector<std::string> bias_texts, act_texts, seq_texts, dim_texts;
  int64_t heads = 0;
  app.add_option("--batch", batch,
                 "gemm: batch items of a strided-batched call (packed strides) [default 1]; attention: the "
                 "batch (items = batch x heads) [default 32]");
  int chain = 1;
  app.add_option("--chain", chain,
                 "gemm: each timed call is N calls back to back, each reading its own copy of B (as a "
                 "model's layers read their weights; A and C shared), and the time over N is the call's "
                 "[default 1]; the rung and its reference are chained alike");
  app.add_option("--broadcast", broadcast_text, "gemm with --batch: one item of A or B shared by all (stride 0)")
      ->check(CLI::IsMember({"a", "b"}));
  app.add_option("--bias", bias_texts,
                 "gemm fused epilogue bias, comma list of none, f32, c (C's type): a vector over the columns")
      ->delimiter(',')
      ->check(CLI::IsMember({"none", "f32", "c"}));
  app.add_option("--act", act_texts,
                 "gemm fused epilogue activation, comma list of none, relu, gelu_tanh, gelu_erf, silu; "
                 "every --bias x --act pair is a case")
      ->delimiter(',')
      ->check(CLI::IsMember({"none", "relu", "gelu_tanh", "gelu_erf", "silu"}));
  app.add_flag("--causal", options.causal, "attention: causal mask (row r keeps columns <= r)");
  app.add_option("--heads", heads, "attention: heads per batch item [default 32]");
  app.add_option("--seq", seq_texts, "attention: sequence lengths S, comma list [default 512,1024,2048,4096]")
      ->delimiter(',');
  app.add_option("--head-dim", dim_texts, "attention: head dimensions d, comma list [default 64,128]")->delimiter(',');
  app.add_flag("--c-f32", options.c_f32, "gemm: C in f32 for f16/bf16 inputs (default: C in the input type)");
  app.add_flag("--log-softmax", options.log_softmax, "softmax: benchmark log-softmax instead");
  app.add_option("--ref-budget", options.reference_budget,
                 "work of the double-precision check per case (gemm multiply-adds, softmax elements), "
                 ">= 0; beyond it a random sample of rows (at least 16) is checked")
      ->capture_default_str();
  app.add_option("--seed", options.seed, "seed of the random inputs")->capture_default_str();
  app.add_option("--json", options.json_path,
                 "write results as JSON to FILE, or to DIR/<device>-<yyyy-mm-dd>.json when a directory "
                 "(existing, or ending in '/'); one file per device");
  app.add_flag("--list", options.list, "list backends, devices and rungs (like gpukern-info) and exit");
  app.add_flag("--dry-run", options.dry_run,
               "print the cases and the rungs each would measure (and any case too large), then exit");
  app.add_option(
         "--list-rungs", options.list_rungs,
         "print the names of the OP rungs that run on the --backend device (and take a --dtype), one a line, and exit")
      ->check(CLI::IsMember({"gemm", "softmax"}));
  app.add_flag("--check", options.check, "exit with 1 when a result exceeds its error bound");
  app.add_flag("-q,--quiet", options.quiet, "no table on stdout");

  try {
    app.parse(argc, argv);
    options.sizes = parse_sizes(size_texts);
    options.gemm_sizes = parse_sizes(gemm_size_texts);
    options.softmax_sizes = parse_sizes(softmax_size_texts);

    const TimingPolicy& t = options.timing;
    require_range("--warmup", t.warmup, 0, 1e6, "0 to 1000000 calls");
    require_range("--repeats", t.repeats, 1, 1e6, "1 to 1000000 calls");
    require_range("--min-time", t.min_time_s, 0, 3600, "0 to 3600 seconds");
    require_range("--max-time", t.max_time_s, 1e-6, 3600, "more than 0, at most 3600 seconds");
    if (app.count("--flush-mb"))
      require_range("--flush-mb", flush_mb, 0, 1048576, "0 (no flush) to 1048576 MiB (1 TiB)");
    if (app.count("--naive-max-size") && naive_max < 1)
      throw CLI::ValidationError("--naive-max-size",
                                 std::to_string(naive_max) + " is out of range; expected a size >= 1");
    require_range("--ref-budget", options.reference_budget, 0, std::numeric_limits<double>::max(),
                  "a number >= 0 (0: check the minimum sample of 16 rows)");
    if (app.count("--json") && options.json_path.empty())
      throw CLI::ValidationError("--json", "empty file name; give FILE or DIR/");

    for (const auto& t : token_texts) options.suite_tokens.push_back(parse_count("--suite-t", t));
    for (const auto& w : weight_texts) options.suite_weights.push_back(parse_weight(w));
    const bool llm = std::find(options.suites.begin(), options.suites.end(), "llm") != options.suites.end();
    if (!llm && (!token_texts.empty() || !weight_texts.empty()))
      throw CLI::ValidationError(token_texts.empty() ? "--suite-nk" : "--suite-t", "applies to --suite llm only");
    if (!options.suites.empty() && !gemm_size_texts.empty())
      throw CLI::ValidationError("--gemm-sizes", "--suite sets the gemm shapes; give one or the other");
    if (!options.suites.empty() && op_text == "softmax")
      throw CLI::ValidationError("--suite", "the suites are gemm shapes; --op softmax runs none of them");

    if (chain < 1 || chain > 64)
      throw CLI::ValidationError("--chain", std::to_string(chain) + " is out of range; expected 1 to 64");
    options.chain = chain;
    if (app.count("--batch")) {
      if (batch < 1 || batch > (int64_t(1) << 30))
        throw CLI::ValidationError("--batch", std::to_string(batch) + " is out of range; expected 1 to 2^30");
      options.batch = batch;
    }
    if (!broadcast_text.empty()) {
      if (options.batch.value_or(1) < 2) throw CLI::ValidationError("--broadcast", "needs --batch 2 or more");
      options.broadcast = broadcast_text[0];
    }
    for (const auto& t : bias_texts) options.biases.push_back(*parse_bias(t));
    for (const auto& t : act_texts) options.activations.push_back(*parse_activation(t));
    for (const auto& t : seq_texts) options.attention_seqs.push_back(parse_count("--seq", t));
    for (const auto& t : dim_texts) options.attention_dims.push_back(parse_count("--head-dim", t));
    if (app.count("--heads")) {
      if (heads < 1) throw CLI::ValidationError("--heads", std::to_string(heads) + " is not a positive whole number");
      options.heads = heads;
    }
    options.attention = op_text == "attention";
    if (!options.attention) {
      for (const char* name : {"--causal", "--heads", "--seq", "--head-dim"})
        if (app.count(name)) throw CLI::ValidationError(name, "applies to --op attention only");
    } else {
      if (!options.suites.empty())
        throw CLI::ValidationError("--suite", "--op attention has its own shapes (--seq, --head-dim)");
      for (const char* name : {"--broadcast", "--bias", "--act", "--layout", "--c-f32"})
        if (app.count(name)) throw CLI::ValidationError(name, "does not apply to --op attention");
    }

    options.backends = split_list(backend_text);
    require_names("--backend", options.backends, backend_text);
    require_names("--variants", variant_texts, joined(variant_texts));
    require_names("--slow-rungs", options.slow_rungs, joined(options.slow_rungs));

    // The library owns the bound on threads (GPUKERN_NUM_THREADS): ask it, and say which
    // option was wrong in its words.
    if (app.count("--threads")) {
      try {
        gpukern::set_option("GPUKERN_NUM_THREADS", std::to_string(threads));
      } catch (const gpukern::Error& e) {
        throw CLI::ValidationError("--threads",
                                   std::to_string(threads) + " is not a valid thread count (" + e.what() + ")");
      }
      options.threads = threads;
    }
  } catch (const CLI::ParseError& e) {
    // --help exits 0; every wrong argument exits 2, the usual code of a usage error
    // (CLI11's own codes, 101-115, would differ per kind of mistake).
    return app.exit(e) == 0 ? 0 : 2;
  }

  options.with_reference = app.count("--no-reference") == 0;
  options.warmup_given = app.count("--warmup") > 0;

  // A suite is gemm work: softmax runs with it only when --op asks for it by name.
  if (!options.suites.empty() && app.count("--op") == 0) op_text = "gemm";
  options.ops.clear();
  if (op_text == "gemm" || op_text == "all") options.ops.push_back(GK_OP_GEMM);
  if (op_text == "softmax" || op_text == "all") options.ops.push_back(GK_OP_SOFTMAX);

  for (const auto& t : dtype_texts) options.types.push_back(*parse_type(t));
  // "all" anywhere in the list means every rung; "fast" adds the fast set to the names.
  options.fast_variants = !options.suites.empty() && variant_texts.empty();
  bool all = false;
  for (const auto& v : variant_texts) {
    if (v == "all")
      all = true;
    else if (v == "fast")
      options.fast_variants = true;
    else if (v == "auto")
      options.with_auto = true;
    else
      options.variants.push_back(v);
  }
  if (all) {
    options.variants.clear();
    options.fast_variants = false;
  }
  // "auto" alone: the library's choice and the reference, no other rung.
  options.auto_only = options.with_auto && options.variants.empty() && !options.fast_variants && !all;

  if (app.count("--flush-mb")) options.flush_mb = flush_mb;
  if (app.count("--naive-max-size")) options.naive_max_size = naive_max;
  for (const auto& text : layout_texts) {
    const Layout layout{text[0] == 'T', text[1] == 'T'};
    if (std::find(options.layouts.begin(), options.layouts.end(), layout) == options.layouts.end())
      options.layouts.push_back(layout);
  }
  return std::nullopt;
}

}  // namespace gpukern::bench
