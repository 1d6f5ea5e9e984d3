// Progress, table and JSON of gpukern-bench; see output.hpp.
#include "output.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <cctype>
#include <ctime>
#include <thread>
#include <filesystem>
#include <fstream>

namespace gpukern::bench {

namespace {

std::string percent(const std::optional<double>& value) {
  return value ? fmt::format("{:.1f}%", *value) : std::string("-");
}

std::string error_text(const Record& r) {
  if (!r.rel_error) return "NaN/inf !";
  return fmt::format("{:.1e}{}", *r.rel_error, r.error_ok ? "" : " !");
}

std::string rate_text(double rate) {
  if (rate >= 100) return fmt::format("{:.0f}", rate);
  if (rate >= 1) return fmt::format("{:.2f}", rate);
  return fmt::format("{:.3f}", rate);
}

// A JSON number, or null for a missing value (JSON has no NaN).
nlohmann::json number(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

const char* dtype_text(gk_dtype type) { return type == GK_F32 ? "f32" : type == GK_F16 ? "f16" : "bf16"; }

void put_shape(nlohmann::json& j, const Case& c) {
  if (c.op == GK_OP_GEMM) {
    j["m"] = c.m;
    j["n"] = c.n;
    j["k"] = c.k;
    j["layout"] = std::string(c.trans_a ? "T" : "N") + (c.trans_b ? "T" : "N");
    j["trans_a"] = c.trans_a;
    j["trans_b"] = c.trans_b;
    j["suite"] = c.suite.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.suite);
    j["c_dtype"] = dtype_text(c.output_storage());
    // Strided batches (elements between items; 0: one item shared) and the fused epilogue.
    j["batch"] = c.batch;
    j["stride_a"] = c.stride_a();
    j["stride_b"] = c.stride_b();
    j["stride_c"] = c.stride_c();
    j["broadcast"] = c.broadcast ? nlohmann::json(std::string(1, c.broadcast)) : nlohmann::json(nullptr);
    j["batch_reduced_from"] = c.batch_reduced_from ? nlohmann::json(c.batch_reduced_from) : nlohmann::json(nullptr);
    j["bias"] = bias_name(c.bias);
    j["bias_dtype"] =
        c.bias == BiasKind::kNone ? nlohmann::json(nullptr) : nlohmann::json(dtype_text(c.bias_storage()));
    j["stride_bias"] = 0;
    j["act"] = activation_name(c.act);
    j["chain"] = c.chain;
    j["alpha"] = c.alpha;
  } else {
    j["rows"] = c.rows;
    j["cols"] = c.cols;
    j["log_softmax"] = c.log_softmax;
  }
}

}  // namespace

// ---- progress ----

Progress::Progress(std::size_t total_steps)
    : total_(total_steps),
      tty_(isatty(STDERR_FILENO) != 0),
      start_(std::chrono::steady_clock::now()),
      case_start_(start_) {}

void Progress::step(const std::string& device, const Case& c, const Record& r, bool done) {
  if (done) ++done_;
  label_ = fmt::format("{} {} {} {} {}", device, c.op == GK_OP_GEMM ? "gemm" : "softmax", type_name(c.type), c.label(),
                       r.variant);
  if (tty_) draw();
}

void Progress::draw() {
  constexpr int kWidth = 30;
  const int filled = total_ ? int(kWidth * done_ / total_) : kWidth;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  fmt::print(stderr, "\r\033[K[{}{}] {}/{} {:.0f}s  {}", std::string(std::size_t(filled), '#'),
             std::string(std::size_t(kWidth - filled), '.'), done_, total_, seconds, label_);
  std::fflush(stderr);
  shown_ = true;
}

void Progress::case_done(const std::string& device, const Case& c, const std::vector<Record>& records) {
  ++cases_;
  const auto now = std::chrono::steady_clock::now();
  const double seconds = std::chrono::duration<double>(now - case_start_).count();
  case_start_ = now;
  if (tty_) return;
  std::string rungs;
  for (const auto& r : records) {
    if (!rungs.empty()) rungs += ", ";
    rungs += r.variant + " " + (r.measured ? rate_text(r.rate) : std::string(r.failed ? "failed" : "skipped"));
  }
  fmt::print(stderr, "[{}/{}] {} {} {} {}: {} {} ({:.1f} s)\n", done_, total_, device,
             c.op == GK_OP_GEMM ? "gemm" : "softmax", type_name(c.type), c.label(), rungs,
             c.op == GK_OP_GEMM ? "GFLOP/s" : "GB/s", seconds);
  std::fflush(stderr);
}

void Progress::clear() {
  if (tty_ && shown_) {
    fmt::print(stderr, "\r\033[K");
    std::fflush(stderr);
    shown_ = false;
  }
}

void Progress::finish() {
  clear();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  fmt::print(stderr, "{} measurements in {} cases, {:.1f} s\n", done_, cases_, seconds);
}

// ---- table ----

void TablePrinter::device_header(const DeviceRunner& runner, const Options& options) {
  const DeviceInfo& i = runner.info();
  fmt::print("\n== {}:{}  {}  ({}, {} {}, {} MHz)  peak f32 {:.0f} GFLOP/s", i.backend, i.index, i.name, i.arch,
             i.compute_units, runner.is_cpu() ? "threads" : "compute units", i.clock_mhz, i.peak_f32_gflops);
  if (i.peak_tensor_gflops > 0) fmt::print(", tensor {:.0f} GFLOP/s", i.peak_tensor_gflops);
  if (i.peak_bandwidth_gbps > 0) fmt::print(", memory {:.0f} GB/s", i.peak_bandwidth_gbps);
  fmt::print(" ==\n");
  if (i.extra[0]) fmt::print("   {}\n", i.extra);
  std::string slow;
  for (const auto& name : options.slow_rungs) slow += (slow.empty() ? "" : ",") + name;
  fmt::print("   cache flush {} MiB between timed calls; {}\n", runner.flush_bytes() >> 20,
             options.skip_slow
                 ? "slow rungs (" + slow + ") not run"
                 : "gemm rungs " + slow + " only up to " + std::to_string(runner.naive_max_size()) + "^3");
  last_op_ = -1;
}

void TablePrinter::print_case(const std::vector<Record>& records) {
  if (records.empty()) return;
  const Case& c = records.front().test_case;
  const bool gemm = c.op == GK_OP_GEMM;
  if (last_op_ != int(c.op)) {
    last_op_ = int(c.op);
    if (gemm)
      fmt::print("\n{:<6} {:<18} {:<6} {:<16} {:>10} {:>7} {:>10} {:>8} {:>7} {:>7} {:>7} {:>7} {:>10}\n", "dtype",
                 "shape", "layout", "gemm rung", "ms", "IQR", "GFLOP/s", "GB/s", "%ref", "%peak", "%copy", "%read",
                 "rel.err");
    else
      fmt::print("\n{:<6} {:<18} {:<16} {:>10} {:>7} {:>10} {:>7} {:>7} {:>7} {:>7} {:>10}\n", "dtype", "shape",
                 "softmax rung", "ms", "IQR", "GB/s", "%ref", "%peak", "%copy", "%read", "rel.err");
  }
  const std::string layout = std::string(c.trans_a ? "T" : "N") + (c.trans_b ? "T" : "N");
  for (const auto& r : records) {
    const std::string name =
        r.variant + (r.is_reference ? "*" : "") + (r.auto_choice.empty() ? "" : ">" + r.auto_choice);
    if (!r.measured) {
      fmt::print("{:<6} {:<18} {}{:<16} {}{}: {}\n", type_name(c.type), c.label(),
                 gemm ? fmt::format("{:<6} ", layout) : "", name, r.failed ? "failed" : "skipped",
                 r.decline.empty() ? "" : " [" + r.decline + "]", r.reason);
      continue;
    }
    // Spread: interquartile range / median, the run-to-run noise of this measurement
    // (robust to one preempted run; the JSON keeps min and max too).
    const double spread = 100.0 * (r.timing.q3_ms - r.timing.q1_ms) / r.timing.median_ms;
    const std::string ms = fmt::format("{:.4g}", r.timing.median_ms);
    // An epilogue case: its speed against the same rung's plain call, after the error.
    const std::string plain = r.pct_of_plain ? fmt::format("  {:.1f}% of plain", *r.pct_of_plain) : "";
    if (gemm)
      fmt::print("{:<6} {:<18} {:<6} {:<16} {:>10} {:>6.1f}% {:>10} {:>8} {:>7} {:>7} {:>7} {:>7} {:>10}{}\n",
                 type_name(c.type), c.label(), layout, name, ms, spread, rate_text(r.rate), rate_text(r.gbps),
                 percent(r.pct_of_reference), percent(r.pct_of_peak), percent(r.pct_of_copy), percent(r.pct_of_read),
                 error_text(r), plain);
    else
      fmt::print("{:<6} {:<18} {:<16} {:>10} {:>6.1f}% {:>10} {:>7} {:>7} {:>7} {:>7} {:>10}\n", type_name(c.type),
                 c.shape_label(), name, ms, spread, rate_text(r.rate), percent(r.pct_of_reference),
                 percent(r.pct_of_peak), percent(r.pct_of_copy), percent(r.pct_of_read), error_text(r));
  }
  std::fflush(stdout);
}

// ---- JSON ----

void put_timing(nlohmann::json& j, const Timing& t) {
  j["ms"] = t.median_ms;
  j["ms_min"] = t.min_ms;
  j["ms_max"] = t.max_ms;
  j["ms_q1"] = t.q1_ms;
  j["ms_q3"] = t.q3_ms;
  j["repeats"] = t.repeats;
}

nlohmann::json run_json(const DeviceRunner& runner, const Options& options, const std::vector<Record>& records) {
  using nlohmann::json;
  const DeviceInfo& i = runner.info();
  json extra = json::object();
  for (const auto& [key, value] : parse_extra(i.extra)) extra[key] = value;
  json device = {
      {"name", i.name},
      {"backend", i.backend},
      {"index", i.index},
      {"arch", i.arch},
      {"arch_number", i.arch_number},
      {"compute_units", i.compute_units},
      {"clock_mhz", i.clock_mhz},
      {"memory_bytes", i.memory_bytes},
      {"driver_version", i.driver_version},
      {"runtime_version", i.runtime_version},
      {"peak_f32_gflops", i.peak_f32_gflops},
      {"peak_tensor_gflops", i.peak_tensor_gflops},
      {"peak_bandwidth_gbps", i.peak_bandwidth_gbps},
      {"extra", extra},
  };

  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &utc);

  const TimingPolicy& t = options.timing;
  json settings = {
      {"warmup", t.warmup},
      {"repeats", t.repeats},
      {"min_time_s", t.min_time_s},
      {"max_time_s", t.max_time_s},
      {"flush_bytes", runner.flush_bytes()},
      {"threads", options.threads ? json(*options.threads) : json(nullptr)},
      {"naive_max_size", runner.naive_max_size()},
      {"skip_slow", options.skip_slow},
      {"slow_rungs", options.slow_rungs},
      {"seed", options.seed},
      {"host_load_start", number(options.load_at_start)},
      {"host_load_end", number(load_average())},
      {"host_cpus", std::thread::hardware_concurrency()},
      {"reference_budget", options.reference_budget},
      {"paired", runner.paired()},
      {"timing",
       "device Timer around each call (GPU events on the device's stream, a steady clock on the "
       "CPU); ms = median of the timed calls, ms_min/ms_max/ms_q1/ms_q3 their spread; a memset of "
       "flush_bytes before every timed call evicts the caches (on the CPU a store to every line "
       "of flush_bytes on the calling thread; 0 = warm caches); on the CPU the threads stream "
       "memory for 1 s before the run's first timing, and each rung's warm-up lasts 0.3 s at "
       "least unless --warmup was given; paired (--paired, by default on GPUs): every rung but the "
       "reference is timed in one loop with the reference's call (and an epilogue case's plain "
       "call), alternating, and reference_ms is the reference's median from that loop"},
      {"suites", options.suites},
      {"bandwidth",
       "bytes = bytes a call moves at the least (gemm: A and B read once, C written once, C read "
       "too only when beta != 0, which the bench never sets; softmax: x read once, y written "
       "once); gbps = bytes / ms. copy_ms: a device-to-device copy of bytes/2 bytes (traffic = "
       "read + write = bytes), and read_ms: a read-only sum over bytes (on the CPU with the "
       "backend's threads, the faster of two walks: lines of four pages in turn, and in "
       "address order; on GPUs gk_memread); each timed once per distinct byte count per run (on the CPU twice, "
       "the faster median kept), flushed like the rungs; pct_of_copy = 100 * copy_ms / ms, "
       "pct_of_read = 100 * read_ms / ms"},
      {"error_check",
       "rel_error = ||out - ref||_F / ||ref||_F against a double-precision host reference on the "
       "same rounded inputs; when rows x work exceeds reference_budget (gemm multiply-adds; "
       "softmax elements x 16) a random sample of rows, always with the first and last, is "
       "checked: error_rows_checked"},
  };

  json results = json::array(), skipped = json::array();
  for (const auto& r : records) {
    const Case& c = r.test_case;
    const bool gemm = c.op == GK_OP_GEMM;
    json j;
    j["op"] = gemm ? "gemm" : "softmax";
    j["variant"] = r.variant;
    if (r.variant == "auto") j["auto_choice"] = r.auto_choice.empty() ? json(nullptr) : json(r.auto_choice);
    j["rung_index"] = r.rung_index;
    j["is_reference"] = r.is_reference;
    j["dtype"] = type_name(c.type);
    put_shape(j, c);
    if (!r.measured) {
      put_not_measured(j, r);
      j["backend"] = i.backend;
      j["device"] = i.name;
      skipped.push_back(j);
      continue;
    }
    put_timing(j, r.timing);
    if (gemm) {
      j["gflops"] = r.rate;
      j["peak_gflops"] = r.peak > 0 ? json(r.peak) : json(nullptr);
      j["bytes"] = c.bytes_moved();
      j["gbps"] = r.gbps;
    } else {
      j["bytes"] = c.bytes_moved();
      j["gbps"] = r.rate;
      j["peak_gbps"] = r.peak > 0 ? json(r.peak) : json(nullptr);
    }
    j["reference"] = r.reference.empty() ? json(nullptr) : json(r.reference);
    j["reference_ms"] = number(r.reference_ms);
    j["pct_of_reference"] = number(r.pct_of_reference);
    j["pct_of_peak"] = number(r.pct_of_peak);
    j["rel_error"] = number(r.rel_error);
    j["error_bound"] = error_bound(c.type);
    j["error_ok"] = r.error_ok;
    j["error_rows_checked"] = r.error_rows_checked;
    j["error_rows_total"] = gemm ? c.m : c.rows;
    j["copy_ms"] = number(r.copy_ms);
    j["copy_gbps"] = number(r.copy_gbps);
    j["pct_of_copy"] = number(r.pct_of_copy);
    j["read_ms"] = number(r.read_ms);
    j["read_gbps"] = number(r.read_gbps);
    j["pct_of_read"] = number(r.pct_of_read);
    if (gemm) {
      j["plain_ms"] = number(r.plain_ms);
      j["pct_of_plain"] = number(r.pct_of_plain);
    }
    j["backend"] = i.backend;
    j["device"] = i.name;
    results.push_back(j);
  }

  return json{
      {"schema", 1},
      {"tool", "gpukern-bench"},
      {"library_version", gk_version()},
      {"date", today_utc()},
      {"time_utc", stamp},
      {"git_commit", kGitCommit},
      {"command", options.command_line},
      {"device", device},
      {"settings", settings},
      {"results", results},
      {"skipped", skipped},
  };
}

std::string slug(const std::string& text) {
  std::string out;
  for (unsigned char ch : text) {
    if (std::isalnum(ch))
      out += char(std::tolower(ch));
    else if (!out.empty() && out.back() != '-')
      out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "device" : out;
}

std::optional<double> load_average() {
  std::ifstream file("/proc/loadavg");
  double one_minute = 0;
  if (file >> one_minute) return one_minute;
  return std::nullopt;
}

std::string today_utc() {
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char day[16];
  std::strftime(day, sizeof day, "%Y-%m-%d", &utc);
  return day;
}

std::string json_file_for(const std::string& json_option, const DeviceInfo& info, std::size_t device_count,
                          const std::vector<std::string>& suites) {
  namespace fs = std::filesystem;
  const bool is_dir = (!json_option.empty() && json_option.back() == '/') || fs::is_directory(json_option);
  if (is_dir) {
    std::string name = slug(info.name);
    // A CPU's marketing name can equal another machine's; the backend keeps files apart.
    if (name.find(slug(info.backend)) == std::string::npos && std::string(info.backend) == "cpu") name = "cpu-" + name;
    std::string suffix;
    for (const auto& suite : suites) suffix += "-" + suite;
    return (fs::path(json_option) / (name + "-" + today_utc() + suffix + ".json")).string();
  }
  if (device_count <= 1) return json_option;
  fs::path p(json_option);
  return (p.parent_path() /
          (p.stem().string() + "-" + info.backend + std::to_string(info.index) + p.extension().string()))
      .string();
}

}  // namespace gpukern::bench
