// Command-line parsing of gpukern-bench with CLI11.
#include "options.hpp"

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <cstdio>

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
  if (spec.dims.size() > 3)
    throw CLI::ValidationError("--sizes", "'" + text + "' has more than three dimensions");
  return spec;
}

std::vector<SizeSpec> parse_sizes(const std::vector<std::string>& texts) {
  std::vector<SizeSpec> out;
  for (const auto& t : texts) out.push_back(parse_size(t));
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

  std::string backend_text = "all", op_text = "all", layout = "NN";
  std::vector<std::string> dtype_texts, size_texts, gemm_size_texts, softmax_size_texts, variant_texts;
  double flush_mb = -1;
  int64_t naive_max = -1;
  int threads = 0;

  app.add_option("--backend", backend_text,
                 "all (every available backend), or a comma list of cpu, cuda, cuda:N, hip, hip:N")
      ->capture_default_str();
  app.add_option("--op", op_text, "gemm, softmax or all")
      ->check(CLI::IsMember({"gemm", "softmax", "all"}))
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
  app.add_option("--softmax-sizes", softmax_size_texts, "shapes for softmax only (N or RxC)")
      ->delimiter(',');
  app.add_option("--variants", variant_texts,
                 "all, or a comma list of rung names (the reference rung is measured too)")
      ->delimiter(',');
  app.add_flag("--no-reference", "do not add the vendor reference rung to --variants (for profiling)");
  app.add_option("--threads", threads, "CPU threads (sets GPUKERN_NUM_THREADS)")->check(CLI::PositiveNumber);
  app.add_option("--warmup", options.timing.warmup, "untimed calls before timing")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--repeats", options.timing.repeats,
                 "timed calls (more while under --min-time, fewer, at least 3, past --max-time)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--min-time", options.timing.min_time_s, "seconds of measuring (timed calls and cache flushes) at least, per rung and case")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--max-time", options.timing.max_time_s, "seconds of measuring at most, per rung and case")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--flush-mb", flush_mb,
                 "MiB written between timed calls to evict caches; 0 = warm caches "
                 "[default: 2x the last-level cache on the CPU (at least 64), 512 on GPUs]")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--naive-max-size", naive_max,
                 "gemm: run the slow rungs only while cbrt(M*N*K) <= this [default: 1024 on the CPU, 4096 on GPUs]")
      ->check(CLI::PositiveNumber);
  app.add_flag("--skip-slow", options.skip_slow, "never run the slow rungs (see --slow-rungs)");
  app.add_option("--slow-rungs", options.slow_rungs,
                 "rungs that --naive-max-size and --skip-slow apply to")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--layout", layout, "gemm op(A) op(B): NN, NT, TN or TT")
      ->check(CLI::IsMember({"NN", "NT", "TN", "TT"}))
      ->capture_default_str();
  app.add_flag("--c-f32", options.c_f32, "gemm: C in f32 for f16/bf16 inputs (default: C in the input type)");
  app.add_flag("--log-softmax", options.log_softmax, "softmax: benchmark log-softmax instead");
  app.add_option("--ref-budget", options.reference_budget,
                 "work of the double-precision check per case (gemm multiply-adds, softmax elements); "
                 "beyond it a random sample of rows is checked")
      ->capture_default_str();
  app.add_option("--seed", options.seed, "seed of the random inputs")->capture_default_str();
  app.add_option("--json", options.json_path,
                 "write results as JSON to FILE, or to DIR/<device>-<yyyy-mm-dd>.json when a directory "
                 "(existing, or ending in '/'); one file per device");
  app.add_flag("--list", options.list, "list backends, devices and rungs (like gpukern-info) and exit");
  app.add_option("--list-rungs", options.list_rungs,
                 "print the names of the OP rungs that run on the --backend device (and take a --dtype), one a line, and exit")
      ->check(CLI::IsMember({"gemm", "softmax"}));
  app.add_flag("--check", options.check, "exit with 1 when a result exceeds its error bound");
  app.add_flag("-q,--quiet", options.quiet, "no table on stdout");

  try {
    app.parse(argc, argv);
    options.sizes = parse_sizes(size_texts);
    options.gemm_sizes = parse_sizes(gemm_size_texts);
    options.softmax_sizes = parse_sizes(softmax_size_texts);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  options.with_reference = app.count("--no-reference") == 0;
  options.backends.clear();
  for (std::size_t begin = 0; begin <= backend_text.size();) {
    std::size_t end = backend_text.find(',', begin);
    if (end == std::string::npos) end = backend_text.size();
    if (end > begin) options.backends.push_back(backend_text.substr(begin, end - begin));
    begin = end + 1;
  }
  if (options.backends.empty()) options.backends.push_back("all");

  options.ops.clear();
  if (op_text != "softmax") options.ops.push_back(GK_OP_GEMM);
  if (op_text != "gemm") options.ops.push_back(GK_OP_SOFTMAX);

  for (const auto& t : dtype_texts) options.types.push_back(*parse_type(t));
  options.variants = variant_texts;
  for (const auto& v : variant_texts)
    if (v == "all") options.variants.clear();  // "all" anywhere in the list means every rung

  if (threads > 0) options.threads = threads;
  if (flush_mb >= 0) options.flush_mb = flush_mb;
  if (naive_max > 0) options.naive_max_size = naive_max;
  options.trans_a = layout[0] == 'T';
  options.trans_b = layout[1] == 'T';
  return std::nullopt;
}

}  // namespace gpukern::bench
