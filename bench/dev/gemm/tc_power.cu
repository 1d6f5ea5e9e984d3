// gemm_tc_bench power mode (see tc_bench.cu): board power, SM clock and power-cap
// clock reasons sampled through NVML while one call runs back to back.
#include "tc_bench.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

namespace gpukern::dev {
namespace {

using core::DType;

/// NVML through dlopen (no nvml.h on the build machine): the few calls power mode needs.
struct Nvml {
  using Dev = void*;
  int (*init)() = nullptr;
  int (*handle)(unsigned, Dev*) = nullptr;
  int (*power)(Dev, unsigned*) = nullptr;              // milliwatts
  int (*clock)(Dev, int, unsigned*) = nullptr;         // 1 = SM clock, MHz
  int (*reasons)(Dev, unsigned long long*) = nullptr;  // clock event reasons bit mask
  int (*temp)(Dev, int, unsigned*) = nullptr;
  Dev dev = nullptr;
  bool ok = false;
  Nvml() {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    if (!lib) return;
    init = reinterpret_cast<int (*)()>(dlsym(lib, "nvmlInit_v2"));
    handle = reinterpret_cast<int (*)(unsigned, Dev*)>(dlsym(lib, "nvmlDeviceGetHandleByIndex_v2"));
    power = reinterpret_cast<int (*)(Dev, unsigned*)>(dlsym(lib, "nvmlDeviceGetPowerUsage"));
    clock = reinterpret_cast<int (*)(Dev, int, unsigned*)>(dlsym(lib, "nvmlDeviceGetClockInfo"));
    reasons = reinterpret_cast<int (*)(Dev, unsigned long long*)>(dlsym(lib, "nvmlDeviceGetCurrentClocksEventReasons"));
    if (!reasons)
      reasons =
          reinterpret_cast<int (*)(Dev, unsigned long long*)>(dlsym(lib, "nvmlDeviceGetCurrentClocksThrottleReasons"));
    temp = reinterpret_cast<int (*)(Dev, int, unsigned*)>(dlsym(lib, "nvmlDeviceGetTemperature"));
    int cur = 0;
    CHECK(cudaGetDevice(&cur));
    ok = init && handle && power && clock && reasons && temp && init() == 0 && handle(unsigned(cur), &dev) == 0;
  }
};

/// Runs `f` back to back (with TC_FLUSH_MB memsets between calls) for `secs` seconds
/// while sampling NVML every 5 ms after the first second; prints one line.
void power_phase(const Nvml& nv, const char* name, const char* tname, double flop, const std::function<void()>& f,
                 cudaStream_t s, double secs) {
  std::atomic<bool> sampling{false}, stop{false};
  double p_sum = 0, c_sum = 0, t_max = 0;
  long samples = 0, capped = 0;
  std::thread sampler([&] {
    while (!stop.load()) {
      if (sampling.load() && nv.ok) {
        unsigned mw = 0, mhz = 0, deg = 0;
        unsigned long long why = 0;
        nv.power(nv.dev, &mw);
        nv.clock(nv.dev, 1, &mhz);
        nv.reasons(nv.dev, &why);
        nv.temp(nv.dev, 0, &deg);
        p_sum += mw / 1000.0;
        c_sum += mhz;
        t_max = std::max(t_max, double(deg));
        capped += (why & 0x4ull) ? 1 : 0;  // software power cap
        ++samples;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  constexpr int kBatch = 64;
  std::vector<cudaEvent_t> ev(2 * kBatch);
  for (auto& e : ev) CHECK(cudaEventCreate(&e));
  std::vector<float> times;
  const auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (el > secs) break;
    sampling.store(el > 1.0);
    for (int i = 0; i < kBatch; ++i) {
      flush_before_call(i, s);
      CHECK(cudaEventRecord(ev[2 * i], s));
      f();
      CHECK(cudaEventRecord(ev[2 * i + 1], s));
    }
    CHECK(cudaStreamSynchronize(s));
    if (el > 1.0)
      for (int i = 0; i < kBatch; ++i) {
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
        times.push_back(ms);
      }
  }
  stop.store(true);
  sampler.join();
  for (auto& e : ev) cudaEventDestroy(e);
  std::sort(times.begin(), times.end());
  const double ms = times.empty() ? 0 : times[times.size() / 2];
  const double watts = samples ? p_sum / samples : 0, mhz = samples ? c_sum / samples : 0;
  std::printf(
      "power %-10s %-4s %8.4f ms %7.1f TFLOP/s  %6.1f W %6.0f MHz  capped %5.1f%%  %6.1f mJ/call  %4.0f C  (%zu calls, "
      "%ld samples)\n",
      name, tname, ms, flop / ms / 1e9, watts, mhz, samples ? 100.0 * capped / samples : 0.0, watts * ms, t_max,
      times.size(), samples);
}

}  // namespace

int power_mode(const CudaContext& ctx, cublasHandle_t h, const std::vector<std::array<int64_t, 3>>& shapes,
               const Variant& rung, const std::vector<Variant>& variants) {
  const Nvml nv;
  if (!nv.ok) std::printf("NVML not available: times only\n");
  const double secs = std::getenv("TC_POWER_SECS") ? std::atof(std::getenv("TC_POWER_SECS")) : 3.0;
  const char* only = std::getenv("TC_RUNGS");
  for (const DType dt : {DType::BF16, DType::F16})
    for (const auto& sh : shapes) {
      Bench x = make_bench(sh[0], sh[1], sh[2], dt, false, false, false, ctx.stream);
      const double flop = 2.0 * sh[0] * sh[1] * sh[2];
      const char* tname = dtype_label(dt);
      std::printf("%lldx%lldx%lld %s\n", (long long)sh[0], (long long)sh[1], (long long)sh[2], tname);
      auto cub = [&] { run_cublas(h, x.g, x.c, dt); };
      power_phase(nv, "cublas", tname, flop, cub, ctx.stream, secs);
      power_phase(
          nv, rung.first.c_str(), tname, flop, [&] { rung.second(x.g); }, ctx.stream, secs);
      for (auto& [name, run] : variants)
        if (only && std::strstr(only, name.c_str()))
          power_phase(
              nv, name.c_str(), tname, flop, [&, run = run] { run(x.g); }, ctx.stream, secs);
      power_phase(nv, "cublas", tname, flop, cub, ctx.stream, secs);
      power_phase(
          nv, rung.first.c_str(), tname, flop, [&] { rung.second(x.g); }, ctx.stream, secs);
      free_bench(x);
    }
  return 0;
}

}  // namespace gpukern::dev
