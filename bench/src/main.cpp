// gpukern-bench: every rung of every ladder on every backend found, against the vendor
// reference of the same run; a table on stdout, JSON for gpukern-report.
#include "attention.hpp"
#include "options.hpp"
#include "output.hpp"
#include "runner.hpp"

#include <gpukern/gpukern.hpp>

#include <fmt/core.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <fstream>
#include <memory>

namespace gpukern::bench {
namespace {

void print_rungs(const char* op_name, const std::vector<VariantInfo>& rungs) {
  fmt::print("  {} ladder:\n", op_name);
  for (const auto& v : rungs) {
    std::string where =
        v.runs_here ? "runs here" : std::string("not here [") + gk_decline_name(v.decline) + "]: " + v.reason;
    fmt::print("    {:<16} {:<18} {:<8} {}{}{}\n      {}\n", v.name, v.dtypes, v.min_arch, where,
               v.is_reference ? "  [reference]" : "", v.experimental ? "  [experimental]" : "", v.description);
  }
}

// ", driver X, runtime Y" with only the versions the backend reports (the CPU reports no
// driver, only its OpenMP runtime).
std::string versions_text(const DeviceInfo& i) {
  std::string out;
  if (i.driver_version[0]) out += fmt::format(", driver {}", i.driver_version);
  if (i.runtime_version[0]) out += fmt::format(", runtime {}", i.runtime_version);
  return out;
}

// --list: the same facts as gpukern-info, through the public API.
int list_everything() {
  fmt::print("libgpukern {}\n", gk_version());
  for (const auto& b : list_backends()) {
    if (!b.available) {
      fmt::print("\nbackend {}: unavailable: {}\n", b.name, b.reason);
      continue;
    }
    fmt::print("\nbackend {}: {} device(s){}{}\n", b.name, b.device_count, b.note[0] ? "; " : "", b.note);
    for (int d = 0; d < b.device_count; ++d) {
      const std::string spec = std::string(b.name) + ":" + std::to_string(d);
      try {
        Device device(std::string(b.name) == "cpu" ? std::string("cpu") : spec);
        const DeviceInfo i = device.info();
        fmt::print("  device {}: {} ({}), {} {}, {} MHz, {:.1f} GiB{}\n", i.index, i.name, i.arch, i.compute_units,
                   std::string(b.name) == "cpu" ? "threads" : "compute units", i.clock_mhz,
                   double(i.memory_bytes) / double(1ull << 30), versions_text(i));
        fmt::print("  peak: f32 {:.0f} GFLOP/s, tensor {:.0f} GFLOP/s, memory {:.0f} GB/s\n", i.peak_f32_gflops,
                   i.peak_tensor_gflops, i.peak_bandwidth_gbps);
        if (i.extra[0]) fmt::print("  {}\n", i.extra);
        print_rungs("gemm", device.variants(GK_OP_GEMM));
        print_rungs("softmax", device.variants(GK_OP_SOFTMAX));
      } catch (const Error& e) {
        fmt::print("  device {}: cannot open: {}\n", d, e.what());
      }
    }
  }
  return 0;
}

// --backend names -> device specs to open; nullopt (after a message) when one is unusable.
std::optional<std::vector<std::string>> resolve_backends(const Options& options) {
  const auto backends = list_backends();
  std::vector<std::string> specs;
  for (const auto& wanted : options.backends) {
    if (wanted == "all") {
      for (const auto& b : backends)
        if (b.available) specs.push_back(b.name);
      continue;
    }
    const std::string base = wanted.substr(0, wanted.find(':'));
    const BackendInfo* found = nullptr;
    for (const auto& b : backends)
      if (base == b.name) found = &b;
    if (!found) {
      std::string known;
      for (const auto& b : backends) known += std::string(known.empty() ? "" : ", ") + b.name;
      fmt::print(stderr, "gpukern-bench: unknown backend '{}' (known: {}, all)\n", wanted, known);
      return std::nullopt;
    }
    if (!found->available) {
      fmt::print(stderr, "gpukern-bench: backend '{}' is unavailable: {}\n", wanted, found->reason);
      return std::nullopt;
    }
    specs.push_back(wanted);
  }
  if (specs.empty()) fmt::print(stderr, "gpukern-bench: no backend available\n");
  return specs;
}

// Why the JSON file cannot be written at `path` (its directory cannot be made or written
// to), checked before measuring so that a long run is not lost to a wrong --json.
std::optional<std::string> json_path_problem(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(path).has_parent_path() ? fs::path(path).parent_path() : fs::path(".");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return fmt::format("--json: cannot create the directory {}: {}", dir.string(), ec.message());
  if (!fs::is_directory(dir, ec)) return fmt::format("--json: {} is not a directory", dir.string());
  if (fs::is_directory(path, ec)) return fmt::format("--json: {} is a directory", path);
  if (access(dir.c_str(), W_OK) != 0)
    return fmt::format("--json: cannot write in {}: {}", dir.string(), std::strerror(errno));
  return std::nullopt;
}

bool write_json(const std::string& path, const nlohmann::json& run) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  std::error_code ec;
  if (p.has_parent_path()) fs::create_directories(p.parent_path(), ec);
  std::ofstream file(p);
  file << run.dump(1) << '\n';
  if (!file) {
    fmt::print(stderr, "gpukern-bench: cannot write {}\n", path);
    return false;
  }
  fmt::print(stderr, "wrote {}\n", path);
  return true;
}

// --list-rungs OP: the rungs of the first selected device that run here (and take one of
// the --dtype types, when given), one a line, for scripts.
int list_rungs(const Options& options) {
  const auto specs = resolve_backends(options);
  if (!specs || specs->empty()) return 2;
  Device device((*specs)[0]);
  for (const auto& v : device.variants(options.list_rungs == "gemm" ? GK_OP_GEMM : GK_OP_SOFTMAX)) {
    bool wanted = v.runs_here != 0 && options.types.empty();
    for (BenchType type : options.types) wanted = wanted || (v.runs_here && takes(v, type));
    if (wanted) fmt::print("{}\n", v.name);
  }
  return 0;
}

// What a directory-mode JSON file name ends in: the suites, "attention" for --op attention
// ("attention-causal" with the mask, so that both runs of a day keep their files).
std::vector<std::string> file_tags(const Options& options) {
  std::vector<std::string> tags = options.suites;
  if (options.attention) tags.push_back(options.causal ? "attention-causal" : "attention");
  return tags;
}

int run_benchmarks(const Options& options) {
  const auto specs = resolve_backends(options);
  if (!specs || specs->empty()) return 2;

  std::vector<std::unique_ptr<DeviceRunner>> runners;
  for (const auto& spec : *specs) runners.push_back(std::make_unique<DeviceRunner>(spec, options));

  // A name no selected device knows is a typo: list the valid ones.
  for (const auto& name : options.variants) {
    bool known = false;
    for (const auto& r : runners) {
      const auto unknown = r->unknown_variants();
      known = known || std::find(unknown.begin(), unknown.end(), name) == unknown.end();
    }
    if (!known) {
      std::string valid;
      for (const auto& r : runners)
        for (gk_op op : {GK_OP_GEMM, GK_OP_SOFTMAX})
          for (const auto& rung : r->ladder(op))
            if (valid.find(std::string(rung.info.name) + ",") == std::string::npos)
              valid += std::string(rung.info.name) + ",";
      if (!valid.empty()) valid.pop_back();
      fmt::print(stderr, "gpukern-bench: unknown rung '{}' (valid here: {})\n", name, valid);
      return 2;
    }
  }

  // Everything that would stop the run midway is checked before the first measurement:
  // cases too large for the machine and an unwritable --json.
  std::vector<std::string> problems;
  for (const auto& r : runners) {
    for (const auto& c : r->plan())
      if (auto why = r->check_memory(c)) problems.push_back(r->spec() + ": " + *why);
    if (options.attention)
      for (const auto& c : attention_plan(*r))
        if (auto why = attention_memory(*r, c)) problems.push_back(r->spec() + ": " + *why);
    if (!options.json_path.empty())
      if (auto why = json_path_problem(json_file_for(options.json_path, r->info(), runners.size(), file_tags(options))))
        problems.push_back(*why);
  }
  if (options.dry_run) {
    // One line per case: what it is and the rungs it would measure.
    for (const auto& r : runners) {
      std::size_t measurements = 0;
      const auto cases = r->plan();
      for (const auto& c : cases) {
        std::string rungs;
        for (const auto& rung : r->selected(c)) rungs += (rungs.empty() ? "" : ",") + std::string(rung.info.name);
        measurements += r->selected(c).size();
        fmt::print("{} {} {} {}{}{}: {}\n", r->spec(), c.op == GK_OP_GEMM ? "gemm" : "softmax", type_name(c.type),
                   c.label(),
                   c.op == GK_OP_GEMM ? std::string(" ") + (c.trans_a ? "T" : "N") + (c.trans_b ? "T" : "N") : "",
                   c.suite.empty() ? "" : " " + c.suite, rungs);
      }
      std::size_t attention_cases = 0;
      if (options.attention)
        for (const auto& c : attention_plan(*r)) {
          fmt::print("{} attention {} {}: auto,vendor\n", r->spec(), type_name(c.type), c.label());
          measurements += 2;
          ++attention_cases;
        }
      fmt::print("{}: {} cases, {} rung measurements\n", r->spec(), cases.size() + attention_cases, measurements);
    }
  }
  for (const auto& p : problems) fmt::print(stderr, "gpukern-bench: {}\n", p);
  if (!problems.empty()) return 2;
  if (options.dry_run) return 0;

  std::size_t steps = 0;
  for (const auto& r : runners) {
    for (const auto& c : r->plan()) steps += r->selected(c).size();
    if (options.attention) steps += 2 * attention_plan(*r).size();
  }

  Progress progress(steps);
  TablePrinter table;
  int over_bound = 0, failed = 0;
  std::map<std::string, std::map<std::string, int>> skipped;  // reason -> rung -> cells
  for (const auto& runner : runners) {
    const std::string label = std::string(runner->info().backend) + ":" + std::to_string(runner->info().index);
    if (!options.quiet) {
      progress.clear();
      table.device_header(*runner, options);
    }
    std::vector<Record> records;
    for (const auto& c : runner->plan()) {
      auto done = runner->run(
          c, [&](const Case& cc, const Record& r, bool finished) { progress.step(label, cc, r, finished); });
      progress.case_done(label, c, done);
      if (!options.quiet) {
        progress.clear();
        table.print_case(done);
      }
      for (const auto& r : done) {
        over_bound += r.measured && !r.error_ok;
        failed += r.failed;
        if (!r.measured && !r.failed) ++skipped[r.decline.empty() ? "not run" : r.decline][r.variant];
      }
      records.insert(records.end(), done.begin(), done.end());
    }
    std::vector<AttentionRecord> attention;
    if (options.attention) {
      bool header = true;
      for (const auto& c : attention_plan(*runner)) {
        Record shown;
        shown.variant = "attention";
        progress.step(label, Case{}, shown, false);
        auto done = run_attention(*runner, c);
        progress.case_counted();
        for (const auto& r : done) {
          progress.step(label, Case{}, shown, true);
          over_bound += r.measured && !r.error_ok;
          failed += r.failed;
          if (!r.measured && !r.failed) ++skipped[r.decline.empty() ? "not run" : r.decline]["attention " + r.variant];
        }
        if (!options.quiet) {
          progress.clear();
          print_attention(done, header);
          header = false;
        }
        attention.insert(attention.end(), done.begin(), done.end());
      }
    }
    if (!options.json_path.empty()) {
      progress.clear();
      const auto path = json_file_for(options.json_path, runner->info(), runners.size(), file_tags(options));
      nlohmann::json run = run_json(*runner, options, records);
      for (const auto& r : attention)
        run[r.measured ? "results" : "skipped"].push_back(attention_json(r, runner->info()));
      if (!write_json(path, run)) return 2;
    }
  }
  progress.finish();
  if (!skipped.empty() && !options.quiet) {
    // Skipped cells by the rungs' typed reasons (the table and JSON carry each detail).
    fmt::print("\nskipped cells by reason:\n");
    for (const auto& [reason, rungs] : skipped) {
      int total = 0;
      std::string names;
      for (const auto& [rung, n] : rungs) {
        total += n;
        names += fmt::format("{}{} {}", names.empty() ? "" : ", ", rung, n);
      }
      fmt::print("  {:<15} {:>4}  ({})\n", reason, total, names);
    }
  }
  if (over_bound) fmt::print(stderr, "warning: {} result(s) above their error bound (marked !)\n", over_bound);
  if (failed) fmt::print(stderr, "warning: {} rung run(s) failed (see the table / JSON \"skipped\")\n", failed);
  return options.check && (over_bound || failed) ? 1 : 0;
}

}  // namespace
}  // namespace gpukern::bench

int main(int argc, char** argv) {
  using namespace gpukern::bench;
  Options options;
  if (auto rc = parse_options(argc, argv, options)) return *rc;
  for (int i = 0; i < argc; ++i)
    options.command_line += (i ? " " : "") + std::filesystem::path(i ? argv[i] : argv[0]).string();
  options.load_at_start = load_average();
  try {
    if (options.list) return list_everything();
    if (!options.list_rungs.empty()) return list_rungs(options);
    return run_benchmarks(options);
  } catch (const gpukern::Error& e) {
    fmt::print(stderr, "gpukern-bench: {}\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    // check_memory refuses the cases that cannot fit; this is memory taken by others meanwhile.
    fmt::print(stderr, "gpukern-bench: out of host memory (other processes took it during the run?)\n");
    return 2;
  }
}
