// Correctness part of the softmax development driver: every rung's policy and a choice
// of development candidates (sweep.hpp: paths outside the policies, forced) on odd
// shapes, five memory layouts (contiguous, padded 16-byte strides, odd strides,
// unaligned pointers, in place), softmax and log-softmax, special rows (all -inf, NaN,
// half -inf, +inf), with the output poisoned before the call and guard cells around it;
// rows == 0 / cols == 0; and tensors of more than 2^31 elements. The module's own paths
// are tested by ctest (tests/cuda/softmax); this checks the candidates before they are
// timed.
#include "driver_common.hpp"
#include "sweep.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

namespace softmax_dev {
namespace {

constexpr int64_t kGuard = 64;  // elements of guard before and after each buffer

enum class Layout { Contiguous, Padded, OddStride, Unaligned, InPlace };
const char* layout_name(Layout l) {
  switch (l) {
    case Layout::Contiguous:
      return "contiguous";
    case Layout::Padded:
      return "padded";
    case Layout::OddStride:
      return "odd-stride";
    case Layout::Unaligned:
      return "unaligned";
    default:
      return "in-place";
  }
}

struct Tally {
  int passed = 0, failed = 0, declined = 0;
  std::set<std::string> reasons;
};

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// Whether a development candidate is among the tested ones: block_row's shared-memory
/// kernel and two hybrids; split_row's split across blocks, every grid configuration,
/// the streaming kernel and the 256x8+s4 hybrid at the smallest cluster and at 4 and 16
/// CTAs (the pair exchange across CTAs, empty chunks), the pipelined "/dN" hybrids at
/// the smallest cluster and at 4; warp_row's f32-exps and cold-call layouts.
bool tested_candidate(const Variant& v) {
  const std::string& n = v.config;
  if (v.rung == "block_row") return n == "1024/smem" || n == "256x8+s4" || n == "512x8+s2";
  if (v.rung == "split_row") {
    if (n == "blocks" || starts_with(n, "g")) return true;
    const bool base = starts_with(n, "t256s2/") || starts_with(n, "t512s4/") || starts_with(n, "256x8+s4/c");
    if (base) return ends_with(n, "/c0") || ends_with(n, "/c4") || ends_with(n, "/c16");
    if (n.find("/d") != std::string::npos) return ends_with(n, "/c0") || ends_with(n, "/c4");
    return false;
  }
  if (v.rung == "warp_row")
    return n == "4x4/fexp" || n == "32x4/fexp" || n == "2x8" || starts_with(n, "8x2/") ||
           n.find("/r") != std::string::npos || n.find("/g") != std::string::npos || n.find("/L") != std::string::npos;
  return false;
}

std::vector<Variant> test_variants(const std::string& only_rung) {
  std::vector<Variant> v = ladder_variants();
  for (Variant& c : sweep_variants())
    if (tested_candidate(c)) v.push_back(std::move(c));
  if (!only_rung.empty())
    v.erase(std::remove_if(v.begin(), v.end(), [&](const Variant& x) { return x.rung != only_rung; }), v.end());
  return v;
}

/// Runs `v`; "" when it ran, else the reason it declined. Device errors are failures.
std::string run_variant(const Variant& v, const SoftmaxArgs& a, const CudaContext& ctx, bool& device_error) {
  device_error = false;
  try {
    std::string why = v.run(a, ctx);
    if (!why.empty()) return why;
    const cudaError_t e = cudaStreamSynchronize(ctx.stream);
    if (e != cudaSuccess) {
      device_error = true;
      return std::string("device error: ") + cudaGetErrorString(e);
    }
    return {};
  } catch (const gpukern::core::Error& e) {
    device_error = e.status() != gpukern::core::Status::Unsupported;
    cudaGetLastError();
    return std::string(device_error ? "error: " : "unsupported at run: ") + e.what();
  }
}

}  // namespace

int run_tests(const CudaContext& ctx, uint64_t seed, const std::string& only_rung) {
  const auto variants = test_variants(only_rung);
  std::map<std::string, Tally> tally;
  int failures = 0, printed = 0;
  auto fail = [&](const std::string& what) {
    ++failures;
    if (printed++ < 40) std::printf("  FAIL %s\n", what.c_str());
  };
  const int64_t col_list[] = {1, 7, 33, 64, 127, 128, 1000, 4097, 40000, 100000};
  const int64_t row_list[] = {1, 7, 33, 300};
  for (DType t : {DType::F32, DType::F16, DType::BF16}) {
    const size_t es = dsize(t);
    for (int64_t cols : col_list) {
      for (int64_t rows : row_list) {
        if (rows == 300 && cols > 4097) continue;
        std::vector<float> x = make_values(rows * cols, seed + static_cast<uint64_t>(rows * 131 + cols), t);
        const bool special = rows >= 7;
        if (special) {
          for (int64_t j = 0; j < cols; ++j) x[j] = -INFINITY;                // row 0: all -inf -> NaN
          x[1 * cols + cols / 2] = NAN;                                       // row 1: a NaN -> NaN
          for (int64_t j = 0; j < cols; j += 2) x[2 * cols + j] = -INFINITY;  // row 2: half -inf
          x[3 * cols] = INFINITY;                                             // row 3: +inf -> NaN
        }
        std::map<bool, std::vector<double>> ref;
        for (bool log : {false, true}) {
          ref[log].resize(static_cast<size_t>(rows * cols));
          for (int64_t r = 0; r < rows; ++r) reference_row(x.data() + r * cols, cols, log, ref[log].data() + r * cols);
        }
        for (Layout layout :
             {Layout::Contiguous, Layout::Padded, Layout::OddStride, Layout::Unaligned, Layout::InPlace}) {
          const int64_t round8 = (cols + 7) / 8 * 8;
          int64_t ldx = cols, ldy = cols, offset = 0;
          if (layout == Layout::Padded) {
            ldx = round8 + 8;
            ldy = round8 + 16;
          }
          if (layout == Layout::OddStride) {
            ldx = cols + 3;
            ldy = cols + 5;
          }
          if (layout == Layout::Unaligned) offset = 1;
          if (layout == Layout::InPlace) {
            ldx = ldy = round8 + 8;
          }
          const int64_t x_elems = 2 * kGuard + 1 + rows * ldx, y_elems = 2 * kGuard + 1 + rows * ldy;
          // Host image of x: guards and row gaps poisoned (0xff bytes), rows encoded.
          std::vector<char> x_image(static_cast<size_t>(x_elems) * es, static_cast<char>(0xff));
          for (int64_t r = 0; r < rows; ++r)
            encode(x.data() + r * cols, cols, t, x_image.data() + (kGuard + offset + r * ldx) * es);
          void *xbuf = nullptr, *ybuf = nullptr;
          CHECK_CUDA(cudaMalloc(&xbuf, x_image.size()));
          CHECK_CUDA(cudaMalloc(&ybuf, static_cast<size_t>(y_elems) * es));
          const bool in_place = layout == Layout::InPlace;
          for (bool log : {false, true}) {
            if (log && layout != Layout::Contiguous && layout != Layout::InPlace) continue;
            for (const Variant& v : variants) {
              // Stream-ordered: the rungs run on ctx.stream, a non-blocking stream that
              // does not wait for work on the legacy default stream.
              CHECK_CUDA(cudaMemcpyAsync(xbuf, x_image.data(), x_image.size(), cudaMemcpyHostToDevice, ctx.stream));
              CHECK_CUDA(cudaMemsetAsync(ybuf, 0xff, static_cast<size_t>(y_elems) * es, ctx.stream));
              SoftmaxArgs a;
              a.rows = rows;
              a.cols = cols;
              a.dtype = t;
              a.log = log;
              a.x = static_cast<char*>(xbuf) + (kGuard + offset) * es;
              a.ldx = ldx;
              a.y = in_place ? const_cast<void*>(a.x) : static_cast<char*>(ybuf) + (kGuard + offset) * es;
              a.ldy = ldy;
              const std::string key = v.rung + (v.config == "policy" ? "" : "/" + v.config);
              bool device_error = false;
              const std::string why = run_variant(v, a, ctx, device_error);
              char where[160];
              std::snprintf(where, sizeof where, "%s %s %lldx%lld %s%s", key.c_str(), dname(t), (long long)rows,
                            (long long)cols, layout_name(layout), log ? " log" : "");
              if (!why.empty()) {
                if (device_error) {
                  fail(std::string(where) + ": " + why);
                  ++tally[key].failed;
                } else {
                  ++tally[key].declined;
                  tally[key].reasons.insert(why.substr(0, 110));
                }
                continue;
              }
              const void* out_buf = in_place ? xbuf : ybuf;
              const int64_t ld = in_place ? ldx : ldy;
              const int64_t elems = in_place ? x_elems : y_elems;
              std::vector<char> image(static_cast<size_t>(elems) * es);
              CHECK_CUDA(cudaMemcpy(image.data(), out_buf, image.size(), cudaMemcpyDeviceToHost));
              // Guards and gaps untouched.
              bool guards_ok = true;
              for (int64_t i = 0; i < elems && guards_ok; ++i) {
                const int64_t rel = i - kGuard - offset;
                const bool inside = rel >= 0 && rel < rows * ld && rel % ld < cols;
                if (inside) continue;
                for (size_t b = 0; b < es; ++b)
                  if (static_cast<unsigned char>(image[i * es + b]) != 0xff) guards_ok = false;
              }
              // Values: cuDNN's special-value behaviour is its own, so its special rows are skipped.
              const int64_t first_row = (special && v.rung == "cudnn") ? 4 : 0;
              std::vector<double> r_part(ref[log].begin() + first_row * cols, ref[log].end());
              std::vector<float> out(static_cast<size_t>((rows - first_row) * cols));
              for (int64_t r = first_row; r < rows; ++r)
                for (int64_t j = 0; j < cols; ++j)
                  out[(r - first_row) * cols + j] = decode(image.data(), kGuard + offset + r * ld + j, t);
              const double err = compare(r_part, out);
              if (!guards_ok || err < 0 || err > bound(t)) {
                char msg[96];
                std::snprintf(msg, sizeof msg, ": err %.3e%s", err, guards_ok ? "" : ", guard cells written");
                fail(std::string(where) + msg);
                ++tally[key].failed;
              } else {
                ++tally[key].passed;
              }
            }
          }
          CHECK_CUDA(cudaFree(xbuf));
          CHECK_CUDA(cudaFree(ybuf));
        }
      }
    }
  }
  // rows == 0 or cols == 0: a no-op that touches nothing.
  {
    void* buf = nullptr;
    CHECK_CUDA(cudaMalloc(&buf, 4096));
    for (const Variant& v : variants)
      for (int which = 0; which < 2; ++which) {
        CHECK_CUDA(cudaMemsetAsync(buf, 0xff, 4096, ctx.stream));
        SoftmaxArgs a;
        a.rows = which ? 5 : 0;
        a.cols = which ? 0 : 5;
        a.x = buf;
        a.y = buf;
        a.ldx = a.ldy = 5;
        bool device_error = false;
        const std::string why = run_variant(v, a, ctx, device_error);
        std::vector<unsigned char> h(4096);
        CHECK_CUDA(cudaMemcpy(h.data(), buf, 4096, cudaMemcpyDeviceToHost));
        const bool untouched = std::all_of(h.begin(), h.end(), [](unsigned char c) { return c == 0xff; });
        if (device_error || !untouched)
          fail(v.rung + "/" + v.config + " empty call: " + (why.empty() ? "buffer written" : why));
      }
    CHECK_CUDA(cudaFree(buf));
  }
  std::printf("\ncorrectness (odd shapes x dtypes x layouts x log, special rows, guards):\n");
  for (const auto& [key, t] : tally) {
    std::printf("  %-18s passed %5d  failed %3d  declined %4d\n", key.c_str(), t.passed, t.failed, t.declined);
    for (const auto& r : t.reasons) std::printf("      declined: %s\n", r.c_str());
  }
  std::printf("tests: %d failure(s)\n", failures);
  return failures;
}

/// Tensors of more than 2^31 elements (f16): rows past element 2^31 must be right.
int run_big_tests(const CudaContext& ctx, uint64_t seed, const std::string& only_rung) {
  int failures = 0;
  struct Case {
    int64_t rows, cols, chunk_rows;
    std::vector<int64_t> check;
  };
  const Case cases[] = {
      {(int64_t(1) << 22) + 1,
       512,
       65536,
       {0, 1, 65535, 65536, int64_t(1) << 21, (int64_t(1) << 22) - 1, int64_t(1) << 22}},
      {8193, 262144, 64, {0, 63, 64, 8191, 8192}},
  };
  const DType t = DType::F16;
  for (const Case& c : cases) {
    const size_t bytes = static_cast<size_t>(c.rows * c.cols) * 2;
    void *x = nullptr, *y = nullptr;
    CHECK_CUDA(cudaMalloc(&x, bytes));
    CHECK_CUDA(cudaMalloc(&y, bytes));
    const std::vector<float> chunk = make_values(c.chunk_rows * c.cols, seed + 99, t);
    {
      std::vector<char> enc(static_cast<size_t>(c.chunk_rows * c.cols) * 2);
      encode(chunk.data(), c.chunk_rows * c.cols, t, enc.data());
      const size_t chunk_bytes = enc.size();
      CHECK_CUDA(cudaMemcpyAsync(x, enc.data(), chunk_bytes, cudaMemcpyHostToDevice, ctx.stream));
      for (size_t off = chunk_bytes; off < bytes; off += chunk_bytes)
        CHECK_CUDA(cudaMemcpyAsync(static_cast<char*>(x) + off, x, std::min(chunk_bytes, bytes - off),
                                   cudaMemcpyDeviceToDevice, ctx.stream));
      CHECK_CUDA(cudaStreamSynchronize(ctx.stream));
    }
    std::vector<Variant> variants = test_variants(only_rung);
    for (const Variant& v : variants) {
      // naive reads a 512 KB row per thread three times: minutes on the long-row case.
      if (v.rung == "naive" && c.cols > 4096) continue;
      // The grid path walks every row in every CTA: millions of short rows take seconds a
      // configuration; the long-row case checks its 64-bit offsets.
      if (v.config[0] == 'g' && c.cols < 65536) continue;
      CHECK_CUDA(cudaMemsetAsync(y, 0xff, bytes, ctx.stream));
      SoftmaxArgs a;
      a.rows = c.rows;
      a.cols = c.cols;
      a.x = x;
      a.y = y;
      a.ldx = a.ldy = c.cols;
      a.dtype = t;
      bool device_error = false;
      const auto t0 = std::chrono::steady_clock::now();
      const std::string why = run_variant(v, a, ctx, device_error);
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      const std::string key = v.rung + (v.config == "policy" ? "" : "/" + v.config);
      if (!why.empty()) {
        std::printf("  big %lldx%lld %-16s %s\n", (long long)c.rows, (long long)c.cols, key.c_str(),
                    why.substr(0, 120).c_str());
        if (device_error) ++failures;
        continue;
      }
      double worst = 0;
      for (int64_t r : c.check) {
        std::vector<char> row(static_cast<size_t>(c.cols) * 2);
        CHECK_CUDA(cudaMemcpy(row.data(), static_cast<char*>(y) + static_cast<size_t>(r * c.cols) * 2, row.size(),
                              cudaMemcpyDeviceToHost));
        std::vector<double> ref(static_cast<size_t>(c.cols));
        reference_row(chunk.data() + (r % c.chunk_rows) * c.cols, c.cols, false, ref.data());
        std::vector<float> out(static_cast<size_t>(c.cols));
        for (int64_t j = 0; j < c.cols; ++j) out[j] = decode(row.data(), j, t);
        const double err = compare(ref, out);
        worst = (err < 0 || worst < 0) ? -1 : std::max(worst, err);
      }
      const bool ok = worst >= 0 && worst <= bound(t);
      if (!ok) ++failures;
      std::printf("  big %lldx%lld %-16s %8.1f ms  err %.2e %s\n", (long long)c.rows, (long long)c.cols, key.c_str(),
                  ms, worst, ok ? "ok" : "FAIL");
    }
    CHECK_CUDA(cudaFree(x));
    CHECK_CUDA(cudaFree(y));
  }
  std::printf("big tests: %d failure(s)\n", failures);
  return failures;
}

}  // namespace softmax_dev
