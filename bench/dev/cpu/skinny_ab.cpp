// Development driver (not shipped): the CPU `skinny` rung of two or more builds of
// libgpukern in one process, call by call, against a threaded read stream of the weights
// in the same rotation. On a shared machine the bench's separate runs (one read sample per
// run) move by 10-15%; alternating the builds call by call, each after the same cache
// flush, compares them under the same conditions.
//
//   skinny_ab CALLS T N K NN|NT LIB [LIB ...]
//
// Each LIB is a libgpukern.so, loaded apart (RTLD_LOCAL | RTLD_DEEPBIND, so that each keeps
// its own code and state), optionally followed by @RUNG to time another rung than `skinny`
// (LIB@openblas_gemv: the OpenBLAS reference in the same rotation, with SERIAL_FLUSH=1; the
// same file may appear once per rung). C = A(T x K) op(B) with B stored K x N (NN) or
// N x K (NT), f32, 64-byte aligned as gk_malloc gives. Per call a 64 MiB flush (a store to
// every line; FLUSH_MB overrides; 0: warm), after 1 s of the read stream. The flush runs on
// the OpenMP threads; SERIAL_FLUSH=1 runs it on the calling thread alone, as the bench does
// (fair to OpenBLAS, whose own threads otherwise start while OpenMP's still spin).
// Threads: GPUKERN_NUM_THREADS (the read stream uses as many). CPU_TIME=1 times with the
// calling thread's CPU clock instead of the wall clock: with one thread, time the OS gave
// to other processes then does not count. Prints, per build, the min and median time and
// their percentage of the read stream's. Outputs of all builds are compared (max |diff|).
#include <gpukern/gpukern.h>

#include "probe_common.hpp"

#include <dlfcn.h>
#include <immintrin.h>
#include <omp.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using OpenFn = gk_status (*)(const char*, gk_handle*);
using GemmFn = gk_status (*)(gk_handle, const gk_gemm_desc*);

double now(bool cpu_time) {
  if (cpu_time) {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
  }
  return probe::seconds();
}

using probe::aligned_floats;
using probe::flush_caches;
using probe::read_stream;

}  // namespace

int main(int argc, char** argv) {
  if (argc < 7) {
    std::fprintf(stderr, "usage: %s CALLS T N K NN|NT LIB [LIB ...]\n", argv[0]);
    return 2;
  }
  if (!__builtin_cpu_supports("avx512f")) {
    std::fprintf(stderr, "skinny_ab: the read stream needs AVX-512\n");
    return 77;
  }
  const int calls = std::atoi(argv[1]);
  const int64_t t_rows = std::atoll(argv[2]), n = std::atoll(argv[3]), k = std::atoll(argv[4]);
  const bool nt = std::string(argv[5]) == "NT";
  const bool cpu_time = std::getenv("CPU_TIME") && std::string(std::getenv("CPU_TIME")) == "1";
  if (const char* threads = std::getenv("GPUKERN_NUM_THREADS")) omp_set_num_threads(std::atoi(threads));
  const int64_t flush_mb = std::getenv("FLUSH_MB") ? std::atoll(std::getenv("FLUSH_MB")) : 64;
  const bool serial_flush = std::getenv("SERIAL_FLUSH") && std::string(std::getenv("SERIAL_FLUSH")) == "1";

  std::vector<std::string> libs(argv + 6, argv + argc);
  std::vector<GemmFn> gemm;
  std::vector<gk_handle> handles;
  std::vector<std::string> rungs;
  for (const std::string& spec : libs) {
    const std::size_t at = spec.find('@');
    const std::string path = spec.substr(0, at);
    rungs.push_back(at == std::string::npos ? "skinny" : spec.substr(at + 1));
    void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (!lib) {
      std::fprintf(stderr, "skinny_ab: %s\n", dlerror());
      return 1;
    }
    auto open = reinterpret_cast<OpenFn>(dlsym(lib, "gk_open"));
    gemm.push_back(reinterpret_cast<GemmFn>(dlsym(lib, "gk_gemm")));
    gk_handle h = nullptr;
    if (!open || !gemm.back() || open("cpu", &h) != GK_SUCCESS) {
      std::fprintf(stderr, "skinny_ab: %s: no cpu device\n", path.c_str());
      return 1;
    }
    handles.push_back(h);
  }

  float *a = aligned_floats(t_rows * k), *w = aligned_floats(n * k), *c = aligned_floats(t_rows * n);
  for (int64_t i = 0; i < t_rows * k; ++i) a[i] = float(i % 97) / 97.0f - 0.5f;
#pragma omp parallel for
  for (int64_t i = 0; i < n * k; ++i) w[i] = float((i * 2654435761u) % 1000) / 1000.0f - 0.5f;
  std::vector<float> first(std::size_t(t_rows * n));
  std::vector<char> flush(std::size_t(flush_mb) << 20);
  volatile float sink_start = 0;

  gk_gemm_desc d{};
  d.trans_a = GK_NO_TRANS;
  d.trans_b = nt ? GK_TRANS : GK_NO_TRANS;
  d.m = t_rows;
  d.n = n;
  d.k = k;
  d.alpha = 1.0f;
  d.a = a;
  d.lda = k;
  d.b = w;
  d.ldb = nt ? k : n;
  d.c = c;
  d.ldc = n;
  d.ab_type = d.c_type = GK_F32;

  // 1 s of the read stream first: on a VM whose vCPUs were idle, the first few hundred
  // milliseconds of work run slower.
  for (const double start = now(false); now(false) - start < 1.0;) sink_start += read_stream(w, n * k);

  const std::size_t slots = libs.size() + 1;  // the builds, then the read stream
  std::vector<std::vector<double>> ms(slots);
  volatile float sink = 0;
  for (int call = -1; call < calls; ++call)  // call -1: warm-up, outputs compared
    for (std::size_t i = 0; i < slots; ++i) {
      const std::size_t slot = (i + std::size_t(call + 1)) % slots;  // rotate the order
      if (!flush.empty() && serial_flush) {
        volatile char* lines = flush.data();
        for (std::size_t line = 0; line < flush.size() / 64; ++line) lines[line * 64] = char(call + int(slot));
      } else if (!flush.empty()) {
        flush_caches(flush, call + int(slot));
      }
      const double start = now(cpu_time);
      if (slot == libs.size()) {
        sink = sink + read_stream(w, n * k);
      } else if (d.variant = rungs[slot].c_str(); gemm[slot](handles[slot], &d) != GK_SUCCESS) {
        std::fprintf(stderr, "skinny_ab: %s: gk_gemm failed\n", libs[slot].c_str());
        return 1;
      }
      const double elapsed = now(cpu_time) - start;
      if (call >= 0) ms[slot].push_back(1e3 * elapsed);
      if (call == -1 && slot < libs.size()) {
        if (slot == 0) std::copy(c, c + t_rows * n, first.begin());
        double diff = 0;
        for (int64_t j = 0; j < t_rows * n; ++j) diff = std::max(diff, double(std::fabs(c[j] - first[j])));
        if (slot != 0) std::printf("%s: max |diff| against the first build %.3g\n", libs[slot].c_str(), diff);
      }
    }
  for (auto& v : ms) std::sort(v.begin(), v.end());
  const auto& read = ms.back();
  std::printf("%s T %lld, N %lld, K %lld, %d calls: read stream min %.3f ms (%.1f GB/s), median %.3f ms\n",
              nt ? "NT" : "NN", (long long)t_rows, (long long)n, (long long)k, calls, read[0],
              4.0 * double(n * k) / read[0] / 1e6, read[read.size() / 2]);
  for (std::size_t i = 0; i < libs.size(); ++i) {
    const auto& v = ms[i];
    std::printf("  %-40s min %.3f ms (%.0f%% of read)  median %.3f ms (%.0f%%)\n", libs[i].c_str(), v[0],
                100 * read[0] / v[0], v[v.size() / 2], 100 * read[read.size() / 2] / v[v.size() / 2]);
  }
  return 0;
}
