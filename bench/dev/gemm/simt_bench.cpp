// gemm_simt_bench: timing and tuning of the CUDA GEMM ladder's SIMT rungs on a GPU
// machine (bench/dev/gemm/run_device.sh). It opens the module through its entry
// (gpukern_module_api, linked from gpukern_cuda_static), so the backend glue (device
// info, memory, stream, timer, supports/run dispatch) runs as the core drives it, and:
//   bench  median time of every f32 rung and cuBLAS at the given sizes (same run),
//          GFLOP/s, % of cuBLAS, and each rung's relative difference to cuBLAS.
//   tune   candidate configurations of the double_buffer kernel (simt_tune.cu).
//   info   the device and the rungs.
// Correctness is checked by ctest (tests/cuda/gemm, tests/conformance); speed for the
// record by gpukern-bench.
#include "core/backend.hpp"
#include "core/rung_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

using gpukern::core::Backend;
using gpukern::core::CopyKind;
using gpukern::core::GemmArgs;
using gpukern::core::OpKind;

extern "C" const gpukern::core::ModuleApi* gpukern_module_api();

int run_tune(Backend& backend, const std::vector<std::vector<int>>& sizes, FILE* log);  // simt_tune.cu

namespace {

struct DeviceBuffer {
  Backend* backend = nullptr;
  void* ptr = nullptr;
  DeviceBuffer(Backend& b, size_t bytes) : backend(&b), ptr(b.alloc(bytes)) {}
  ~DeviceBuffer() { backend->free(ptr); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

// ---------------------------------------------------------------- bench

struct BenchRow {
  std::string rung;
  int m, n, k;
  double ms, gflops, pct, rel_to_cublas;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

int run_bench(Backend& backend, const std::vector<std::vector<int>>& sizes, FILE* csv) {
  std::vector<std::string> rungs;
  for (const auto& info : backend.variants(OpKind::Gemm))
    if (info.dtypes & gpukern::core::kMaskF32) rungs.push_back(info.name);
  std::fprintf(csv, "rung,m,n,k,ms,gflops,pct_of_cublas,rel_diff_to_cublas\n");
  std::vector<BenchRow> rows;
  std::mt19937 rng(7);
  std::vector<double> last_ms(rungs.size(), 0.0);
  double last_flops = 0;
  for (const auto& s : sizes) {
    const int m = s[0], n = s[1], k = s[2];
    const double flops = 2.0 * m * n * k;
    std::vector<float> ha(size_t(m) * k), hb(size_t(k) * n);
    std::uniform_real_distribution<float> d(-1, 1);
    for (auto& x : ha) x = d(rng);
    for (auto& x : hb) x = d(rng);
    DeviceBuffer da(backend, ha.size() * 4), db(backend, hb.size() * 4), dc(backend, size_t(m) * n * 4),
        dref(backend, size_t(m) * n * 4);
    backend.copy(da.ptr, ha.data(), ha.size() * 4, CopyKind::HostToDevice);
    backend.copy(db.ptr, hb.data(), hb.size() * 4, CopyKind::HostToDevice);
    GemmArgs args;
    args.m = m, args.n = n, args.k = k, args.lda = k, args.ldb = n, args.ldc = n;
    args.a = da.ptr, args.b = db.ptr;
    auto timer = backend.create_timer();
    const auto ladder = backend.variants(gpukern::core::OpKind::Gemm);
    auto time_rung = [&](const std::string& name, void* c, double predicted_ms) -> double {
      args.c = c;
      int rung = -1;
      for (int i = 0; i < int(ladder.size()); ++i)
        if (ladder[i].name == name) rung = i;
      if (rung < 0 || !backend.supports(args, rung).accepted()) return -1;
      if (predicted_ms > 4000) return -2;  // the slow rungs are timed at the smaller sizes
      timer->start();
      backend.gemm(args, rung);  // warm-up, also the estimate
      timer->stop();
      const double first = timer->elapsed_ms();
      const int reps = std::clamp(int(400.0 / std::max(first, 1e-3)), 2, 50);
      std::vector<double> t;
      for (int r = 0; r < reps; ++r) {
        timer->start();
        backend.gemm(args, rung);
        timer->stop();
        t.push_back(timer->elapsed_ms());
      }
      return median(t);
    };
    const double ref_ms = time_rung("cublas", dref.ptr, 0);
    std::vector<float> ref_out(size_t(m) * n), out(size_t(m) * n);
    backend.copy(ref_out.data(), dref.ptr, ref_out.size() * 4, CopyKind::DeviceToHost);
    for (size_t ri = 0; ri < rungs.size(); ++ri) {
      const std::string& rung = rungs[ri];
      const double predicted = last_flops > 0 ? last_ms[ri] * flops / last_flops : 0;
      const double ms = rung == "cublas" ? ref_ms : time_rung(rung, dc.ptr, predicted);
      if (ms == -1) continue;
      if (ms == -2) {
        std::printf("%-14s %5dx%5dx%5d   skipped (predicted %.0f ms per call)\n", rung.c_str(), m, n, k, predicted);
        continue;
      }
      last_ms[ri] = ms;
      double diff2 = 0, ref2 = 0;
      if (rung != "cublas") {
        backend.copy(out.data(), dc.ptr, out.size() * 4, CopyKind::DeviceToHost);
        for (size_t i = 0; i < out.size(); ++i) {
          const double e = double(out[i]) - ref_out[i];
          diff2 += e * e;
          ref2 += double(ref_out[i]) * ref_out[i];
        }
      }
      const double rel = ref2 > 0 ? std::sqrt(diff2 / ref2) : (diff2 > 0 ? INFINITY : 0.0);
      BenchRow row{rung, m, n, k, ms, flops / ms / 1e6, 100.0 * ref_ms / ms, rel};
      rows.push_back(row);
      std::fprintf(csv, "%s,%d,%d,%d,%.4f,%.1f,%.1f,%.3e\n", rung.c_str(), m, n, k, ms, row.gflops, row.pct, rel);
      std::printf("%-14s %5dx%5dx%5d %9.3f ms %9.1f GFLOP/s %6.1f%% of cuBLAS  rel diff %.2e\n", rung.c_str(), m, n, k,
                  ms, row.gflops, row.pct, rel);
      std::fflush(stdout);
    }
    last_flops = flops;
  }
  return 0;
}

std::vector<std::vector<int>> parse_sizes(const std::string& list) {
  std::vector<std::vector<int>> out;
  size_t pos = 0;
  while (pos < list.size()) {
    size_t end = list.find(',', pos);
    if (end == std::string::npos) end = list.size();
    const std::string item = list.substr(pos, end - pos);
    int m = 0, n = 0, k = 0;
    if (std::sscanf(item.c_str(), "%dx%dx%d", &m, &n, &k) != 3) m = n = k = std::atoi(item.c_str());
    out.push_back({m, n, k});
    pos = end + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "bench";
  const std::string sizes = argc > 2 ? argv[2] : "1024,4096,8192,4097x4095x4093,1000";
  const std::string out_dir = argc > 3 ? argv[3] : ".";
  const auto* api = gpukern_module_api();
  std::printf("module %s, abi %d (core expects %d): %s\n", api->name, api->abi_version,
              gpukern::core::kModuleAbiVersion, api->note);
  std::string reason;
  const int count = api->device_count(&reason);
  std::printf("devices: %d%s%s\n", count, reason.empty() ? "" : " - ", reason.c_str());
  if (count == 0) return mode == "info" ? 0 : 2;
  std::unique_ptr<Backend> backend(api->create(0));
  const auto info = backend->device_info();
  std::printf(
      "device: %s (%s), %d SMs, %d MHz, %.1f GiB, driver %s, runtime %s, peak f32 %.1f TFLOP/s, tensor "
      "%.0f TFLOP/s, %.0f GB/s\n",
      info.name.c_str(), info.arch.c_str(), info.compute_units, info.clock_mhz, info.memory_bytes / 1073741824.0,
      info.driver_version.c_str(), info.runtime_version.c_str(), info.peak_f32_gflops / 1e3,
      info.peak_tensor_gflops / 1e3, info.peak_bandwidth_gbps);
  for (const auto& v : backend->variants(OpKind::Gemm))
    std::printf("  rung %-14s %-20s %-8s %s%s\n", v.name.c_str(), gpukern::core::mask_names(v.dtypes).c_str(),
                v.arch.c_str(), v.unavailable.text().c_str(),
                v.kind == gpukern::core::RungKind::Reference ? " (reference)" : "");
  try {
    if (mode == "bench") {
      FILE* csv = std::fopen((out_dir + "/bench.csv").c_str(), "w");
      const int rc = run_bench(*backend, parse_sizes(sizes), csv ? csv : stdout);
      if (csv) std::fclose(csv);
      return rc;
    }
    if (mode == "tune") {
      FILE* log = std::fopen((out_dir + "/tune.csv").c_str(), "w");
      const int rc = run_tune(*backend, parse_sizes(sizes), log ? log : stdout);
      if (log) std::fclose(log);
      return rc;
    }
    if (mode == "info") return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 3;
  }
  std::fprintf(stderr, "usage: gemm_simt_bench bench|tune|info [sizes] [out_dir]\n");
  return 2;
}
