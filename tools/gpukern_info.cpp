// gpukern-info: every known backend with its devices or the reason it is unavailable,
// and every rung of every ladder with whether it can run here and, if not, why.
// Exit status 0; non-zero when GPUKERN_BACKEND names a backend that is unknown or
// unavailable (the reason is printed).
#include <gpukern/gpukern.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

void print_extra(const char* extra) {
  // "key=value;key=value;" -> one indented line each
  std::string s = extra;
  std::size_t start = 0;
  while (start < s.size()) {
    std::size_t end = s.find(';', start);
    if (end == std::string::npos) end = s.size();
    if (end > start) std::printf("    %s\n", s.substr(start, end - start).c_str());
    start = end + 1;
  }
}

void print_ladder(gpukern::Device& dev, gk_op op, const char* title) {
  std::printf("  %s rungs:\n", title);
  for (const auto& v : dev.variants(op)) {
    const std::string where =
        v.runs_here ? "runs here" : std::string("not here [") + gk_decline_name(v.decline) + "]: " + v.reason;
    std::printf("    %-16s %-18s %-6s %s\n", v.name, v.dtypes, v.min_arch[0] ? v.min_arch : "-", where.c_str());
    std::string tags = v.is_reference ? " [reference]" : "";
    if (v.experimental) tags += " [experimental: never run on hardware; never picked by auto]";
    if (v.auto_position >= 0) tags += " [auto #" + std::to_string(v.auto_position + 1) + "]";
    std::printf("    %-16s   %s%s\n", "", v.description, tags.c_str());
  }
  const auto table = dev.auto_table(op);
  if (table.empty()) return;
  std::printf("  %s auto table (measured; first match picks, else auto's ranked order):\n", title);
  for (const auto& e : table)
    std::printf("    %-24s %-44s -> %s%s%s\n", e.label, e.shape, e.variant, e.arch[0] ? "  on " : "", e.arch);
}

void print_device(const std::string& spec) {
  gpukern::Device dev(spec);
  gk_device_info i = dev.info();
  std::printf("  device %s:%d  %s  (%s)\n", i.backend, i.index, i.name, i.arch);
  std::printf("    compute units %d, clock %d MHz, memory %.1f GiB, peak f32 %.0f GFLOP/s", i.compute_units,
              i.clock_mhz, static_cast<double>(i.memory_bytes) / (1u << 30), i.peak_f32_gflops);
  if (i.peak_tensor_gflops > 0) std::printf(", tensor %.0f GFLOP/s", i.peak_tensor_gflops);
  // The measured auto tables may bound an entry by it (an H100 and an H200 differ there).
  if (i.peak_bandwidth_gbps > 0) std::printf(", memory bandwidth %.0f GB/s", i.peak_bandwidth_gbps);
  std::printf("\n");
  // Only the versions the backend reports: the CPU has no driver, only an OpenMP runtime.
  if (i.driver_version[0] && i.runtime_version[0])
    std::printf("    driver %s, runtime %s\n", i.driver_version, i.runtime_version);
  else if (i.driver_version[0] || i.runtime_version[0])
    std::printf("    %s %s\n", i.driver_version[0] ? "driver" : "runtime",
                i.driver_version[0] ? i.driver_version : i.runtime_version);
  print_extra(i.extra);
  print_ladder(dev, GK_OP_GEMM, "gemm");
  print_ladder(dev, GK_OP_SOFTMAX, "softmax");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) {
    std::printf(
        "usage: %s\n  Lists libgpukern backends, devices and rungs.\n"
        "  GPUKERN_BACKEND selects the backend applications get (auto, cpu, cuda[:N], hip[:N]).\n",
        argv[0]);
    return std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h" ? 0 : 2;
  }
  try {
    std::printf("libgpukern %s\n", gk_version());
    for (const auto& b : gpukern::list_backends()) {
      if (b.available) {
        std::printf("backend %s: available, %d device(s)%s%s\n", b.name, b.device_count, b.note[0] ? " - " : "",
                    b.note);
        for (int d = 0; d < b.device_count; ++d) {
          try {
            print_device(std::string(b.name) + ":" + std::to_string(d));
          } catch (const gpukern::Error& e) {
            std::printf("  device %s:%d: %s\n", b.name, d, e.what());
          }
        }
      } else {
        std::printf("backend %s: unavailable: %s%s%s\n", b.name, b.reason, b.note[0] ? " - " : "", b.note);
      }
    }
  } catch (const gpukern::Error& e) {
    std::fprintf(stderr, "gpukern-info: %s\n", e.what());
    return 1;
  }
  // What an application would get from GPUKERN_BACKEND.
  const char* env = std::getenv("GPUKERN_BACKEND");
  try {
    gpukern::Device chosen;
    std::printf("GPUKERN_BACKEND=%s selects %s:%d\n", env ? env : "(unset: auto)", chosen.info().backend,
                chosen.info().index);
  } catch (const gpukern::Error& e) {
    std::fprintf(stderr, "gpukern-info: %s\n", e.what());  // the message names GPUKERN_BACKEND
    return 3;
  }
  return 0;
}
