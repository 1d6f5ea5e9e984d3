// gemm_check: the CUDA GEMM ladder's own device driver, used by
// scripts/cuda_gemm_device.sh on the GPU machine. It opens the module through its
// exported entry (gpukern_module_api), so the backend glue (device count, device info,
// memory, stream, timer, supports/run dispatch) is exercised as the core would, and:
//   check  every rung x dtype over odd shapes, both transposes, alpha/beta, strided and
//          misaligned operands, K = 0; output poisoned (NaN when beta == 0), guard cells
//          around C; error = ||C - ref||_F / ||ref||_F against a double-precision GPU
//          reference; bounds f32 1e-5, tf32 2e-3, f16 2e-3, bf16 1e-2.
//   bench  median time of every f32 rung and cuBLAS at the given sizes (same run),
//          GFLOP/s, % of cuBLAS, and each rung's relative difference to cuBLAS.
// The test suite and gpukern-bench are the project's real tools; this exists so the
// ladder can be checked and timed before (and independently of) them.
#include "core/backend.hpp"
#include "core/rung_table.hpp"
#include "cuda/portable.cuh"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

using gpukern::core::Backend;
using gpukern::core::CopyKind;
using gpukern::core::DType;
using gpukern::core::GemmArgs;
using gpukern::core::OpKind;

extern "C" const gpukern::core::ModuleApi* gpukern_module_api();

int run_tune(Backend& backend, const std::vector<std::vector<int>>& sizes, FILE* log);  // gemm_tune.cu

namespace {

// ---------------------------------------------------------------- reference

__global__ void reference_kernel(int m, int n, int k, bool ta, bool tb, double alpha, double beta, const float* a,
                                 int64_t lda, const float* b, int64_t ldb, const float* c0, int64_t ldc, double* out) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= m || col >= n) return;
  double acc = 0.0;
  for (int kk = 0; kk < k; ++kk) {
    const double x = ta ? a[int64_t(kk) * lda + row] : a[int64_t(row) * lda + kk];
    const double y = tb ? b[int64_t(col) * ldb + kk] : b[int64_t(kk) * ldb + col];
    acc += x * y;
  }
  double r = alpha * acc;
  if (beta != 0.0) r += beta * double(c0[int64_t(row) * ldc + col]);
  out[int64_t(row) * n + col] = r;
}

struct DeviceBuffer {
  Backend* backend = nullptr;
  void* ptr = nullptr;
  DeviceBuffer(Backend& b, size_t bytes) : backend(&b), ptr(b.alloc(bytes)) {}
  ~DeviceBuffer() { backend->free(ptr); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

uint16_t to_half_bits(float v) {
  const __half h = __float2half_rn(v);
  uint16_t bits;
  std::memcpy(&bits, &h, 2);
  return bits;
}
uint16_t to_bf16_bits(float v) {
  const __nv_bfloat16 h = __float2bfloat16_rn(v);
  uint16_t bits;
  std::memcpy(&bits, &h, 2);
  return bits;
}
float from_bits(uint16_t bits, DType t) {
  if (t == DType::F16) {
    __half h;
    std::memcpy(&h, &bits, 2);
    return __half2float(h);
  }
  __nv_bfloat16 h;
  std::memcpy(&h, &bits, 2);
  return __bfloat162float(h);
}

constexpr float kGuard = 7777.0f;

/// GEMM_CHECK_RUNGS=name,name limits the check to those rungs (default: all).
bool selected(const std::string& rung) {
  const char* list = std::getenv("GEMM_CHECK_RUNGS");
  if (!list || !*list) return true;
  const std::string padded = "," + std::string(list) + ",";
  return padded.find("," + rung + ",") != std::string::npos;
}

struct Case {
  int m, n, k;
  bool ta, tb;
  int ld_mode;     // 0 compact, 1 rounded up to a multiple of 4 plus 4, 2 plus 3 (unaligned)
  float alpha, beta;
  int a_offset;    // floats: shifts A off 16-byte alignment when odd
};

struct Typed {
  DType ab, c;
  bool tf32;
  double bound;
  const char* label;
};

const Typed kTypes[] = {
    {DType::F32, DType::F32, false, 1e-5, "f32"},   {DType::F32, DType::F32, true, 2e-3, "tf32"},
    {DType::F16, DType::F16, false, 2e-3, "f16"},   {DType::F16, DType::F32, false, 2e-3, "f16>f32"},
    {DType::BF16, DType::BF16, false, 1e-2, "bf16"}, {DType::BF16, DType::F32, false, 1e-2, "bf16>f32"},
};

struct Checker {
  Backend& backend;
  FILE* log;
  int failures = 0, passes = 0, declines = 0;
  std::mt19937 rng{12345};

  void run_case(const Case& cs, bool all_types) {
    const int rows_a = cs.ta ? cs.k : cs.m, cols_a = cs.ta ? cs.m : cs.k;
    const int rows_b = cs.tb ? cs.n : cs.k, cols_b = cs.tb ? cs.k : cs.n;
    auto ld_of = [&](int cols) -> int64_t {
      if (cs.ld_mode == 1) return (cols + 3) / 4 * 4 + 4;
      return std::max(1, cols + (cs.ld_mode == 2 ? 3 : 0));
    };
    const int64_t lda = ld_of(cols_a), ldb = ld_of(cols_b), ldc = ld_of(cs.n);
    const size_t a_elems = size_t(std::max(rows_a, 1)) * lda + cs.a_offset;
    const size_t b_elems = size_t(std::max(rows_b, 1)) * ldb;
    const size_t c_elems = size_t(cs.m + 1) * ldc;  // one guard row below C

    // Logical entries random, padding NaN: a rung reading outside the matrix shows up.
    std::vector<float> a(a_elems, NAN), b(b_elems, NAN);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    for (int r = 0; r < rows_a; ++r)
      for (int c = 0; c < cols_a; ++c) a[cs.a_offset + size_t(r) * lda + c] = d(rng);
    for (int r = 0; r < rows_b; ++r)
      for (int c = 0; c < cols_b; ++c) b[size_t(r) * ldb + c] = d(rng);
    std::vector<float> c0(c_elems, kGuard);
    for (int r = 0; r < cs.m; ++r)
      for (int c = 0; c < cs.n; ++c) c0[size_t(r) * ldc + c] = cs.beta == 0.0f ? NAN : d(rng);

    for (const Typed& t : kTypes) {
      if (!all_types && (t.ab != DType::F32 || t.tf32)) continue;
      GemmArgs args;
      args.trans_a = cs.ta;
      args.trans_b = cs.tb;
      args.m = cs.m;
      args.n = cs.n;
      args.k = cs.k;
      args.alpha = cs.alpha;
      args.beta = cs.beta;
      args.lda = lda;
      args.ldb = ldb;
      args.ldc = ldc;
      args.ab_type = t.ab;
      args.c_type = t.c;
      args.allow_tf32 = t.tf32;
      check_type(cs, t, args, a, b, c0);
    }
  }

  static std::string describe(const Case& cs) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%dx%dx%d %c%c ld%d a+%d alpha=%g beta=%g", cs.m, cs.n, cs.k, cs.ta ? 'T' : 'N',
                  cs.tb ? 'T' : 'N', cs.ld_mode, cs.a_offset, cs.alpha, cs.beta);
    return buf;
  }

  // Converts the f32 host operands to the call's storage type, computes the reference
  // from exactly the values the rung sees, runs each rung and compares.
  void check_type(const Case& cs, const Typed& t, GemmArgs args, const std::vector<float>& a32,
                  const std::vector<float>& b32, const std::vector<float>& c32) {
    const size_t ab_size = gpukern::core::dtype_size(t.ab), c_size = gpukern::core::dtype_size(t.c);
    auto convert = [&](const std::vector<float>& src, DType to, std::vector<float>& rounded) {
      std::vector<uint8_t> bytes(src.size() * gpukern::core::dtype_size(to));
      rounded = src;
      for (size_t i = 0; i < src.size(); ++i) {
        if (to == DType::F32) {
          std::memcpy(&bytes[4 * i], &src[i], 4);
        } else {
          const uint16_t bits = to == DType::F16 ? to_half_bits(src[i]) : to_bf16_bits(src[i]);
          std::memcpy(&bytes[2 * i], &bits, 2);
          rounded[i] = from_bits(bits, to);
        }
      }
      return bytes;
    };
    std::vector<float> a_r, b_r, c_r;
    const auto a_bytes = convert(a32, t.ab, a_r);
    const auto b_bytes = convert(b32, t.ab, b_r);
    const auto c_bytes = convert(c32, t.c, c_r);

    DeviceBuffer da(backend, a_bytes.size()), db(backend, b_bytes.size()), dc(backend, c_bytes.size());
    backend.copy(da.ptr, a_bytes.data(), a_bytes.size(), CopyKind::HostToDevice);
    backend.copy(db.ptr, b_bytes.data(), b_bytes.size(), CopyKind::HostToDevice);

    // Reference in double on the device, from the rounded values.
    const size_t out_elems = size_t(cs.m) * cs.n;
    std::vector<double> ref(out_elems, 0.0);
    if (out_elems > 0) {
      DeviceBuffer ra(backend, a_r.size() * 4), rb(backend, b_r.size() * 4), rc(backend, c_r.size() * 4),
          rout(backend, out_elems * 8);
      backend.copy(ra.ptr, a_r.data(), a_r.size() * 4, CopyKind::HostToDevice);
      backend.copy(rb.ptr, b_r.data(), b_r.size() * 4, CopyKind::HostToDevice);
      backend.copy(rc.ptr, c_r.data(), c_r.size() * 4, CopyKind::HostToDevice);
      const dim3 block(32, 8), grid((cs.n + 31) / 32, (cs.m + 7) / 8);
      reference_kernel<<<grid, block>>>(cs.m, cs.n, cs.k, cs.ta, cs.tb, cs.alpha, cs.beta,
                                        static_cast<const float*>(ra.ptr) + cs.a_offset, args.lda,
                                        static_cast<const float*>(rb.ptr), args.ldb,
                                        static_cast<const float*>(rc.ptr), args.ldc, static_cast<double*>(rout.ptr));
      GK_LAUNCH_CHECK();
      GK_GPU_CHECK(cudaDeviceSynchronize());
      backend.copy(ref.data(), rout.ptr, out_elems * 8, CopyKind::DeviceToHost);
    }

    args.a = static_cast<const uint8_t*>(da.ptr) + cs.a_offset * ab_size;
    args.b = db.ptr;
    args.c = dc.ptr;
    // Which rungs take this call, asked with the real pointers (alignment declines).
    std::vector<std::string> rungs;
    for (const auto& info : backend.variants(OpKind::Gemm)) {
      if (!(info.dtypes & gpukern::core::type_mask(args))) continue;
      if (!selected(info.name)) continue;
      const std::string why = backend.supports(args, info.name);
      if (why.empty()) {
        rungs.push_back(info.name);
      } else {
        ++declines;
        std::fprintf(log, "  decline %-14s %-8s %s: %s\n", info.name.c_str(), t.label, describe(cs).c_str(),
                     why.c_str());
      }
    }
    std::vector<uint8_t> out_bytes(c_bytes.size());
    for (const auto& rung : rungs) {
      backend.copy(dc.ptr, c_bytes.data(), c_bytes.size(), CopyKind::HostToDevice);
      std::string error;
      try {
        backend.gemm(args, rung);
        backend.synchronize();
      } catch (const std::exception& e) {
        error = e.what();
      }
      backend.copy(out_bytes.data(), dc.ptr, out_bytes.size(), CopyKind::DeviceToHost);
      double diff2 = 0, ref2 = 0, max_abs = 0;
      size_t guard_bad = 0, nan_count = 0;
      for (int r = 0; r <= cs.m; ++r)
        for (int c = 0; c < args.ldc; ++c) {
          const size_t i = size_t(r) * args.ldc + c;
          float v;
          if (t.c == DType::F32) std::memcpy(&v, &out_bytes[4 * i], 4);
          else {
            uint16_t bits;
            std::memcpy(&bits, &out_bytes[2 * i], 2);
            v = from_bits(bits, t.c);
          }
          if (r == cs.m || c >= cs.n) {
            const float g = c_r[i];
            if (!(v == g)) ++guard_bad;
            continue;
          }
          const double e = double(v) - ref[size_t(r) * cs.n + c];
          if (std::isnan(v)) ++nan_count;
          diff2 += e * e;
          ref2 += ref[size_t(r) * cs.n + c] * ref[size_t(r) * cs.n + c];
          max_abs = std::max(max_abs, std::fabs(e));
        }
      const double rel = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
      const bool ok = error.empty() && nan_count == 0 && guard_bad == 0 && rel <= t.bound;
      (ok ? passes : failures)++;
      std::fprintf(log, "%s %-14s %-8s %-44s rel=%.3e nan=%zu guard=%zu %s\n", ok ? "PASS" : "FAIL", rung.c_str(),
                   t.label, describe(cs).c_str(), rel, nan_count, guard_bad, error.c_str());
      if (!ok) std::fprintf(stderr, "FAIL %s %s %s rel=%.3e nan=%zu guard=%zu %s\n", rung.c_str(), t.label,
                            describe(cs).c_str(), rel, nan_count, guard_bad, error.c_str());
    }
  }
};

int run_check(Backend& backend, FILE* log, bool quick) {
  Checker checker{backend, log};
  const int shapes[][3] = {{1, 1, 1},       {7, 7, 7},       {33, 1, 127},   {1, 33, 7},       {127, 129, 65},
                           {128, 128, 128}, {257, 127, 300}, {33, 17, 0},    {1000, 1000, 1000}, {130, 260, 1001},
                           {4, 8, 12},      {132, 260, 36}};
  int index = 0;
  for (const auto& s : shapes) {
    if (quick && s[0] * s[1] > 300 * 300) continue;  // quick: small shapes only (runs under compute-sanitizer)
    for (int layout = 0; layout < 4; ++layout) {
      const bool ta = layout & 1, tb = layout & 2;
      // Compact, aligned-padded and unaligned-padded leading dimensions, rotating; the
      // misaligned A pointer exercises the alignment declines and the 4-byte copy paths.
      const int mode = index % 3;
      const bool small = s[0] * s[1] <= 260 * 260;
      checker.run_case({s[0], s[1], s[2], ta, tb, mode, 1.0f, 0.0f, 0}, small && !quick);
      checker.run_case({s[0], s[1], s[2], ta, tb, (mode + 1) % 3, 0.5f, -1.25f, 0}, false);
      if (index % 2) checker.run_case({s[0], s[1], s[2], ta, tb, 1, 2.0f, 0.5f, 1}, false);
      ++index;
    }
  }
  // The sizes the benchmark reports, checked once in each layout (f32, the SIMT rungs and cuBLAS).
  if (!quick)
    for (int layout = 0; layout < 4; ++layout)
      checker.run_case({4097, 4095, 4093, bool(layout & 1), bool(layout & 2), 0, 1.0f, 0.0f, 0}, false);
  if (!quick)
    for (int layout = 0; layout < 4; ++layout)
      checker.run_case({2052, 1028, 516, bool(layout & 1), bool(layout & 2), 1, 1.0f, 0.5f, 0}, false);
  if (!quick) checker.run_case({1024, 1024, 1024, false, false, 0, 1.0f, 0.0f, 0}, true);
  std::printf("check: %d passed, %d failed, %d declines logged\n", checker.passes, checker.failures,
              checker.declines);
  return checker.failures == 0 ? 0 : 1;
}

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
    auto time_rung = [&](const std::string& rung, void* c, double predicted_ms) -> double {
      args.c = c;
      if (!backend.supports(args, rung).empty()) return -1;
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
      std::printf("%-14s %5dx%5dx%5d %9.3f ms %9.1f GFLOP/s %6.1f%% of cuBLAS  rel diff %.2e\n", rung.c_str(), m, n,
                  k, ms, row.gflops, row.pct, rel);
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
  const std::string mode = argc > 1 ? argv[1] : "check";
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
  std::printf("device: %s (%s), %d SMs, %d MHz, %.1f GiB, driver %s, runtime %s, peak f32 %.1f TFLOP/s, tensor "
              "%.0f TFLOP/s, %.0f GB/s\n",
              info.name.c_str(), info.arch.c_str(), info.compute_units, info.clock_mhz,
              info.memory_bytes / 1073741824.0, info.driver_version.c_str(), info.runtime_version.c_str(),
              info.peak_f32_gflops / 1e3, info.peak_tensor_gflops / 1e3, info.peak_bandwidth_gbps);
  for (const auto& v : backend->variants(OpKind::Gemm))
    std::printf("  rung %-14s %-20s min %-6s %s%s\n", v.name.c_str(), gpukern::core::mask_names(v.dtypes).c_str(),
                v.min_arch.c_str(), v.unavailable.c_str(), v.is_reference ? " (reference)" : "");
  try {
    if (mode == "check" || mode == "quick") {
      FILE* log = std::fopen((out_dir + "/check.log").c_str(), "w");
      const int rc = run_check(*backend, log ? log : stdout, mode == "quick");
      if (log) std::fclose(log);
      return rc;
    }
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
  std::fprintf(stderr, "usage: gemm_check check|quick|bench|tune|info [sizes] [out_dir]\n");
  return 2;
}
