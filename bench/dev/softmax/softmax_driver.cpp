// Development driver for the CUDA softmax ladder: calls the rungs through the ladder
// table and the tunable rungs' development candidates (sweep.hpp) by name, checks every
// output against a double-precision host reference, and times every rung x
// configuration x dtype x shape against a device-to-device copy of the same bytes and
// against cuDNN. Built with -DGPUKERN_BUILD_DEV=ON and run by cuda_softmax_device.sh;
// not part of the module.
//
//   softmax_driver [--tests] [--perf] [--big] [--out DIR] [--seed N] [--no-sweep] [--shapes RxC,...] [--rung NAME]
//                  [--configs PREFIX,...] [--flush [--flush-repeats N]]
//   --flush: time single calls after a 512 MiB memset, as gpukern-bench does, instead of
//   back-to-back batches. --rung: perf and tests of this rung only. --configs: perf of
//   the configurations whose names start with these prefixes only ("policy" included).
#include "driver_common.hpp"
#include "sweep.hpp"

#if __has_include(<cudnn.h>)
#include <cudnn.h>
static_assert(CUDNN_DATA_FLOAT == 0 && CUDNN_DATA_HALF == 2 && CUDNN_DATA_BFLOAT16 == 9 &&
                  CUDNN_SOFTMAX_ACCURATE == 1 && CUDNN_SOFTMAX_LOG == 2 && CUDNN_SOFTMAX_MODE_CHANNEL == 1 &&
                  CUDNN_STATUS_SUCCESS == 0 && CUDNN_STATUS_NOT_SUPPORTED == 3000,
              "src/cuda/softmax/cudnn.cu mirrors these values of cuDNN 9's ABI");
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace softmax_dev;
FILE* g_csv = nullptr;
int g_failures = 0;

// ----- timing -----

/// Median over batches of the per-call time; calls rotate over `sets` buffer sets so
/// that inputs come from DRAM, not L2. Returns <0 on failure.
/// --flush: time as gpukern-bench does instead: before each call a 512 MiB memset of
/// a scratch buffer (a different byte each time) evicts the caches, and events
/// bracket the one call; median of g_flush_repeats calls after 3 warm-ups, on set 0.
bool g_flush = false;
/// --rung NAME: perf measures this rung only (policy and sweep); the copy still runs.
std::string g_only_rung;
/// --configs A,B: perf measures only configurations whose name starts with one of
/// these prefixes ("policy" for the rungs' policies).
std::vector<std::string> g_only_configs;
bool config_selected(const std::string& config) {
  if (g_only_configs.empty()) return true;
  for (const auto& p : g_only_configs)
    if (config.rfind(p, 0) == 0) return true;
  return false;
}
int g_flush_repeats = 60;
void* g_flush_buf = nullptr;
constexpr size_t kFlushBytes = size_t(512) << 20;

double time_calls(const std::function<void(int)>& call, int sets, cudaStream_t stream, double budget_ms = 30) {
  cudaEvent_t a, b;
  CHECK_CUDA(cudaEventCreate(&a));
  CHECK_CUDA(cudaEventCreate(&b));
  if (g_flush) {
    if (!g_flush_buf) CHECK_CUDA(cudaMalloc(&g_flush_buf, kFlushBytes));
    static int value = 0;
    std::vector<double> t;
    for (int i = 0; i < 3 + g_flush_repeats; ++i) {
      value = (value + 1) & 0xff;
      CHECK_CUDA(cudaMemsetAsync(g_flush_buf, value, kFlushBytes, stream));
      CHECK_CUDA(cudaEventRecord(a, stream));
      call(0);
      CHECK_CUDA(cudaEventRecord(b, stream));
      CHECK_CUDA(cudaEventSynchronize(b));
      float ms = 0;
      CHECK_CUDA(cudaEventElapsedTime(&ms, a, b));
      if (i >= 3) t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    CHECK_CUDA(cudaEventDestroy(a));
    CHECK_CUDA(cudaEventDestroy(b));
    (void)sets;
    (void)budget_ms;
    return t.size() % 2 ? t[t.size() / 2] : 0.5 * (t[t.size() / 2 - 1] + t[t.size() / 2]);
  }
  int counter = 0;
  auto batch = [&](int k) {
    CHECK_CUDA(cudaEventRecord(a, stream));
    for (int i = 0; i < k; ++i) call(counter++ % sets);
    CHECK_CUDA(cudaEventRecord(b, stream));
    CHECK_CUDA(cudaEventSynchronize(b));
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, a, b));
    return double(ms) / k;
  };
  const double first = batch(1);  // warm-up, also the estimate
  int k = std::max(1, static_cast<int>(0.5 / std::max(first, 1e-4)));
  k = std::max(k, std::min(sets, 64));
  if (first > 20) k = 1;
  int batches = static_cast<int>(budget_ms / (first * k));
  batches = std::max(first > 50 ? 2 : 5, std::min(batches, 25));
  batch(k);  // second warm-up at the batch size
  std::vector<double> t;
  for (int i = 0; i < batches; ++i) t.push_back(batch(k));
  std::sort(t.begin(), t.end());
  CHECK_CUDA(cudaEventDestroy(a));
  CHECK_CUDA(cudaEventDestroy(b));
  return t[t.size() / 2];
}

// ----- performance -----

struct PerfRow {
  std::string rung, config, dtype;
  int64_t rows, cols;
  bool log;
  double ms, tbps, pct_copy, pct_cudnn, err;
  std::string status;
};
std::vector<PerfRow> g_perf;

void perf_shape(const CudaContext& ctx, int64_t rows, int64_t cols, DType t, uint64_t seed, bool sweep) {
  const int64_t n = rows * cols;
  const size_t bytes = static_cast<size_t>(n) * dsize(t);
  const int sets = static_cast<int>(std::min<size_t>(16, std::max<size_t>(1, (size_t(256) << 20) / (2 * bytes) + 1)));
  std::vector<void*> xs(sets), ys(sets);
  for (int i = 0; i < sets; ++i) {
    CHECK_CUDA(cudaMalloc(&xs[i], bytes));
    CHECK_CUDA(cudaMalloc(&ys[i], bytes));
  }
  const std::vector<float> values = make_values(n, seed, t);
  {
    std::vector<char> host(bytes);
    encode(values.data(), n, t, host.data());
    CHECK_CUDA(cudaMemcpy(xs[0], host.data(), bytes, cudaMemcpyHostToDevice));
    for (int i = 1; i < sets; ++i) CHECK_CUDA(cudaMemcpy(xs[i], xs[0], bytes, cudaMemcpyDeviceToDevice));
    CHECK_CUDA(cudaDeviceSynchronize());  // the rungs run on a non-blocking stream
  }
  // Rows checked: all of a small tensor, else 96 spread over it (first and last included).
  std::vector<int64_t> check_rows;
  if (n <= (int64_t(1) << 22))
    for (int64_t r = 0; r < rows; ++r) check_rows.push_back(r);
  else
    for (int64_t i = 0; i < 96; ++i) check_rows.push_back(i * (rows - 1) / 95);
  check_rows.erase(std::unique(check_rows.begin(), check_rows.end()), check_rows.end());
  std::map<bool, std::vector<double>> ref;
  for (bool log : {false, true}) {
    auto& r = ref[log];
    r.resize(check_rows.size() * static_cast<size_t>(cols));
    parallel_for(static_cast<int64_t>(check_rows.size()), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i)
        reference_row(values.data() + check_rows[i] * cols, cols, log, r.data() + i * cols);
    });
  }
  auto check = [&](bool log) {
    std::vector<float> out(check_rows.size() * static_cast<size_t>(cols));
    std::vector<char> row(static_cast<size_t>(cols) * dsize(t));
    for (size_t i = 0; i < check_rows.size(); ++i) {
      CHECK_CUDA(cudaMemcpy(row.data(), static_cast<char*>(ys[0]) + check_rows[i] * cols * dsize(t), row.size(),
                            cudaMemcpyDeviceToHost));
      for (int64_t j = 0; j < cols; ++j) out[i * cols + j] = decode(row.data(), j, t);
    }
    return compare(ref[log], out);
  };

  auto args_for = [&](int set, bool log) {
    SoftmaxArgs a;
    a.rows = rows;
    a.cols = cols;
    a.x = xs[set];
    a.ldx = cols;
    a.y = ys[set];
    a.ldy = cols;
    a.dtype = t;
    a.log = log;
    return a;
  };
  const double moved = 2.0 * bytes;  // read + written
  const double copy_ms =
      time_calls([&](int s) { CHECK_CUDA(cudaMemcpyAsync(ys[s], xs[s], bytes, cudaMemcpyDeviceToDevice, ctx.stream)); },
                 sets, ctx.stream);
  const double copy_tbps = moved / copy_ms / 1e9;
  std::printf("\n== %lld x %lld %s: %d buffer sets, copy %.4f ms = %.3f TB/s\n", (long long)rows, (long long)cols,
              dname(t), sets, copy_ms, copy_tbps);
  g_perf.push_back({"copy", "-", dname(t), rows, cols, false, copy_ms, copy_tbps, 100, 0, 0, "ok"});

  double cudnn_ms[2] = {0, 0};
  auto measure = [&](const Variant& v, bool log) {
    if (!g_only_rung.empty() && v.rung != g_only_rung) return;
    if (!config_selected(v.config)) return;
    CHECK_CUDA(cudaMemsetAsync(ys[0], 0xff, bytes, ctx.stream));
    std::string why;
    try {
      why = v.run(args_for(0, log), ctx);
      CHECK_CUDA(cudaStreamSynchronize(ctx.stream));
      CHECK_CUDA(cudaGetLastError());
    } catch (const std::exception& e) {
      why = std::string("error: ") + e.what();
      cudaGetLastError();
    }
    if (!why.empty()) {
      if (v.config == "policy")
        std::printf("  %-10s %-12s %s: declines: %s\n", v.rung.c_str(), v.config.c_str(), log ? "log" : "   ",
                    why.c_str());
      if (why.rfind("error", 0) == 0) ++g_failures;
      return;
    }
    const double err = check(log);
    const bool ok = err >= 0 && err <= bound(t);
    if (!ok) ++g_failures;
    double ms = -1;
    try {
      ms = time_calls([&](int s) { v.run(args_for(s, log), ctx); }, sets, ctx.stream);
    } catch (const std::exception& e) {
      std::printf("  %s %s: timing error %s\n", v.rung.c_str(), v.config.c_str(), e.what());
      ++g_failures;
      return;
    }
    if (v.rung == "cudnn") cudnn_ms[log] = ms;
    const double tbps = moved / ms / 1e9;
    const double pc = 100.0 * copy_ms / ms;
    const double pd = cudnn_ms[log] > 0 ? 100.0 * cudnn_ms[log] / ms : 0;
    std::printf("  %-10s %-12s %s %9.4f ms %6.3f TB/s %6.1f%% copy %7.1f%% cudnn  err %.2e %s\n", v.rung.c_str(),
                v.config.c_str(), log ? "log" : "   ", ms, tbps, pc, pd, err, ok ? "ok" : "FAIL");
    g_perf.push_back({v.rung, v.config, dname(t), rows, cols, log, ms, tbps, pc, pd, err, ok ? "ok" : "FAIL"});
  };
  // cuDNN first, so that every other row has its % of cuDNN.
  auto ladder = ladder_variants();
  std::rotate(ladder.begin(), ladder.end() - 1, ladder.end());
  for (const auto& v : ladder) measure(v, false);
  for (const auto& v : ladder)
    if (v.rung == "cudnn" || v.rung == "warp_row" || v.rung == "block_row" || v.rung == "split_row") measure(v, true);
  if (sweep) {
    const int64_t vec = 16 / static_cast<int64_t>(dsize(t));
    for (const auto& v : sweep_variants()) {
      // split_row's streaming ("t256s4/c0") and hybrid ("256x8+s4/c8") kernels only on
      // rows of 64 KB or more, block_row's hybrids ("256x8+s4") on rows over 32 KB.
      const int64_t row_bytes = cols * static_cast<int64_t>(dsize(t));
      const bool hybrid = v.config.find('+') != std::string::npos;
      if (v.rung == "split_row" && (v.config[0] == 't' || hybrid) && row_bytes < 64 * 1024) continue;
      if (v.rung == "block_row" && hybrid && row_bytes <= 32 * 1024) continue;
      // Skip layouts far larger than the row (mostly idle threads).
      const auto x = v.config.find('x');
      if (x != std::string::npos && v.config != "blocks") {
        const int64_t threads = std::stoll(v.config.substr(0, x));
        const int64_t packs = std::stoll(v.config.substr(x + 1));
        int64_t cluster = 1;
        if (const auto c = v.config.find("/c"); c != std::string::npos)
          cluster = std::max<int64_t>(1, std::stoll(v.config.substr(c + 2)));
        if (threads * packs * cluster > 4 * (cols / vec) && threads * packs > cols / vec) continue;
      }
      measure(v, false);
    }
  }
  // The copy again, at the end: the spread of two measurements of the same thing.
  const double copy_end_ms =
      time_calls([&](int s) { CHECK_CUDA(cudaMemcpyAsync(ys[s], xs[s], bytes, cudaMemcpyDeviceToDevice, ctx.stream)); },
                 sets, ctx.stream);
  std::printf("  copy again %.4f ms = %.3f TB/s (first %.4f ms)\n", copy_end_ms, moved / copy_end_ms / 1e9, copy_ms);
  // What auto would pick.
  SoftmaxArgs a = args_for(0, false);
  if (const std::string name = auto_pick(a, ctx); !name.empty()) {
    std::printf("  auto -> %s\n", name.c_str());
    g_perf.push_back({"auto", name, dname(t), rows, cols, false, 0, 0, 0, 0, 0, "ok"});
  }
  for (int i = 0; i < sets; ++i) {
    CHECK_CUDA(cudaFree(xs[i]));
    CHECK_CUDA(cudaFree(ys[i]));
  }
}

/// Summary lines: per shape and dtype, the copy, the best policy-level rung, auto's
/// pick, cuDNN, the best configuration; `prefix` starts each line. only_last: the shape
/// measured last (printed as each shape ends, so that a run cut short keeps them).
void print_summary(const char* prefix, bool only_last) {
  const PerfRow* last_copy = nullptr;
  for (const auto& r : g_perf)
    if (r.rung == "copy") last_copy = &r;
  for (const auto& c : g_perf) {
    if (c.rung != "copy" || (only_last && &c != last_copy)) continue;
    const PerfRow* best = nullptr;
    const PerfRow* cfg = nullptr;
    const PerfRow* dnn = nullptr;
    std::string pick;
    for (const auto& r : g_perf) {
      if (r.rows != c.rows || r.cols != c.cols || r.dtype != c.dtype || r.log) continue;
      if (r.rung == "auto") pick = r.config;
      if (r.rung == "cudnn") dnn = &r;
      if (r.rung == "copy" || r.rung == "auto" || r.rung == "cudnn" || r.status != "ok") continue;
      if (r.config == "policy" && (!best || r.tbps > best->tbps)) best = &r;
      if (!cfg || r.tbps > cfg->tbps) cfg = &r;
    }
    double auto_tbps = 0;
    for (const auto& r : g_perf)
      if (r.rows == c.rows && r.cols == c.cols && r.dtype == c.dtype && !r.log && r.rung == pick &&
          r.config == "policy")
        auto_tbps = r.tbps;
    char shape[32];
    std::snprintf(shape, sizeof shape, "%lldx%lld", (long long)c.rows, (long long)c.cols);
    std::printf("%s%-14s %-5s %6.3f | %-10s %6.3f %6.1f %7.1f %8.1e | %-10s %6.3f | %6.3f | %s %s %.3f (%.1f%%)\n",
                prefix, shape, c.dtype.c_str(), c.tbps, best ? best->rung.c_str() : "-", best ? best->tbps : 0,
                best ? best->pct_copy : 0, best ? best->pct_cudnn : 0, best ? best->err : 0, pick.c_str(), auto_tbps,
                dnn ? dnn->tbps : 0, cfg ? cfg->rung.c_str() : "-", cfg ? cfg->config.c_str() : "-",
                cfg ? cfg->tbps : 0, cfg ? cfg->pct_copy : 0);
  }
}

}  // namespace

namespace softmax_dev {
// softmax_driver_tests.cpp; only_rung: test this rung's variants only ("" = all).
int run_tests(const CudaContext& ctx, uint64_t seed, const std::string& only_rung);
int run_big_tests(const CudaContext& ctx, uint64_t seed, const std::string& only_rung);
}  // namespace softmax_dev

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // whole lines reach the log even if the run is cut short
  bool tests = false, perf = false, big = false, sweep = true;
  std::string out_dir = ".";
  std::string only_shapes;  // --shapes 1024x32768,64x262144: perf on these shapes only
  uint64_t seed = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--tests")
      tests = true;
    else if (a == "--perf")
      perf = true;
    else if (a == "--big")
      big = true;
    else if (a == "--no-sweep")
      sweep = false;
    else if (a == "--flush")
      g_flush = true;
    else if (a == "--flush-repeats" && i + 1 < argc)
      g_flush_repeats = std::stoi(argv[++i]);
    else if (a == "--out" && i + 1 < argc)
      out_dir = argv[++i];
    else if (a == "--seed" && i + 1 < argc)
      seed = std::stoull(argv[++i]);
    else if (a == "--shapes" && i + 1 < argc)
      only_shapes = "," + std::string(argv[++i]) + ",";
    else if (a == "--rung" && i + 1 < argc)
      g_only_rung = argv[++i];
    else if (a == "--configs" && i + 1 < argc) {
      std::string list = argv[++i];
      for (size_t b = 0, e; b <= list.size(); b = e + 1) {
        e = list.find(',', b);
        if (e == std::string::npos) e = list.size();
        if (e > b) g_only_configs.push_back(list.substr(b, e - b));
      }
    }
  }
  if (!tests && !perf && !big) tests = perf = big = true;
  std::printf("seed %llu\n", (unsigned long long)seed);
  const CudaContext ctx = make_context();
  const auto t_start = std::chrono::steady_clock::now();
  auto stamp = [&](const char* what) {
    std::printf("[%6.1f s] %s\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count(),
                what);
    std::fflush(stdout);
  };
  if (tests) {
    stamp("tests");
    g_failures += run_tests(ctx, seed, g_only_rung);
  }
  if (big) {
    stamp("big tests");
    g_failures += run_big_tests(ctx, seed, g_only_rung);
  }
  if (perf) {
    stamp("perf");
    const int64_t shapes[][2] = {{4096, 4096}, {16384, 1024}, {65536, 128}, {1024, 32768}, {64, 262144}, {32768, 8192}};
    for (const auto& s : shapes) {
      const std::string key = "," + std::to_string(s[0]) + "x" + std::to_string(s[1]) + ",";
      if (!only_shapes.empty() && only_shapes.find(key) == std::string::npos) continue;
      for (DType t : {DType::F32, DType::F16, DType::BF16}) {
        perf_shape(ctx, s[0], s[1], t, seed + s[0] * 7 + s[1], sweep);
        print_summary("SUMMARY ", true);
      }
    }
    g_csv = std::fopen((out_dir + "/softmax_perf.csv").c_str(), "w");
    if (g_csv) {
      std::fprintf(g_csv, "rung,config,dtype,rows,cols,log,ms,tbps,pct_copy,pct_cudnn,err,status\n");
      for (const auto& r : g_perf)
        std::fprintf(g_csv, "%s,%s,%s,%lld,%lld,%d,%.5f,%.4f,%.2f,%.2f,%.3e,%s\n", r.rung.c_str(), r.config.c_str(),
                     r.dtype.c_str(), (long long)r.rows, (long long)r.cols, r.log ? 1 : 0, r.ms, r.tbps, r.pct_copy,
                     r.pct_cudnn, r.err, r.status.c_str());
      std::fclose(g_csv);
    }
    std::printf("\n%-14s %-5s %6s | %-10s %6s %6s %7s %8s | %-10s %6s | %6s | best config\n", "shape", "dtype", "copy",
                "best rung", "TB/s", "%copy", "%cudnn", "err", "auto", "TB/s", "cudnn");
    print_summary("", false);
  }
  stamp("done");
  std::printf("\n%s: %d failure(s)\n", g_failures ? "FAILED" : "PASSED", g_failures);
  return g_failures ? 1 : 0;
}
