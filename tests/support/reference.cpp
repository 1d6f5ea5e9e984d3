// Double-precision references, error measure and random inputs; see reference.hpp.
#include "support/reference.hpp"

#include "core/activation.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>

namespace gpukern::test {

uint64_t base_seed() {
  static const uint64_t seed = [] {
    if (const char* env = std::getenv("GPUKERN_TEST_SEED"))
      return static_cast<uint64_t>(std::strtoull(env, nullptr, 0));
    std::random_device device;
    return (static_cast<uint64_t>(device()) << 32) ^ device();
  }();
  return seed;
}

namespace {
uint64_t next_seed() {
  static std::atomic<uint64_t> counter{0};
  // splitmix64 of base + counter: well-spread seeds for consecutive cases
  uint64_t z = base_seed() + 0x9e3779b97f4a7c15ull * (++counter);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
}  // namespace

Random::Random() : Random(next_seed()) {}

double Random::uniform(double lo, double hi) {
  std::uniform_real_distribution<double> dist(lo, hi);
  for (;;) {
    double v = dist(engine_);
    if (v != 0.0) return v;
  }
}

int64_t Random::index(int64_t n) {
  std::uniform_int_distribution<int64_t> dist(0, n - 1);
  return dist(engine_);
}

std::vector<double> reference_gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
                                   const MatrixView& a, const MatrixView& b, double beta, const MatrixView* c) {
  // Dense copies of op(A) (m x k) and op(B) (k x n), then an i-k-j loop the compiler
  // vectorizes; the rows are independent, so OpenMP splits them for large cases.
  std::vector<double> op_a(static_cast<std::size_t>(m * k)), op_b(static_cast<std::size_t>(k * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p) op_a[static_cast<std::size_t>(i * k + p)] = trans_a ? a.at(p, i) : a.at(i, p);
  for (int64_t p = 0; p < k; ++p)
    for (int64_t j = 0; j < n; ++j) op_b[static_cast<std::size_t>(p * n + j)] = trans_b ? b.at(j, p) : b.at(p, j);

  std::vector<double> out(static_cast<std::size_t>(m * n), 0.0);
  // Threads only where they pay: waking a team for a small case costs more than the
  // case when the machine is busy.
  const bool large = m * n * k >= (int64_t{1} << 22);
#pragma omp parallel for schedule(static) if (large)
  for (int64_t i = 0; i < m; ++i) {
    double* row = out.data() + i * n;
    for (int64_t p = 0; p < k; ++p) {
      const double av = op_a[static_cast<std::size_t>(i * k + p)];
      const double* brow = op_b.data() + p * n;
      for (int64_t j = 0; j < n; ++j) row[j] += av * brow[j];
    }
    for (int64_t j = 0; j < n; ++j) {
      row[j] *= alpha;
      if (beta != 0.0) row[j] += beta * c->at(i, j);
    }
  }
  return out;
}

void reference_epilogue(std::vector<double>& out, int64_t n, const MatrixView* bias, int act) {
  for (std::size_t i = 0; i < out.size(); ++i) {
    const int64_t col = static_cast<int64_t>(i) % n;
    out[i] = core::activate_ref(out[i] + (bias ? bias->at(0, col) : 0.0), act);
  }
}

std::vector<double> reference_softmax(const MatrixView& x, bool log_softmax) {
  return reference_softmax_ex(x, log_softmax, 1.0, false, 0);
}

std::vector<double> reference_softmax_ex(const MatrixView& x, bool log_softmax, double scale, bool causal,
                                         int64_t causal_offset) {
  const int64_t rows = x.window.rows, cols = x.window.cols;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> out(static_cast<std::size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r) {
    double* y = out.data() + r * cols;
    const int64_t kept = causal ? std::clamp<int64_t>(r + causal_offset + 1, 0, cols) : cols;
    for (int64_t c = kept; c < cols; ++c) y[c] = log_softmax ? -inf : 0.0;  // masked: x is not read
    if (kept == 0) continue;
    double max = -inf;
    bool has_nan = false;
    for (int64_t c = 0; c < kept; ++c) {
      const double v = scale * x.at(r, c);
      has_nan = has_nan || std::isnan(v);
      max = std::max(max, v);
    }
    if (has_nan || max == -inf) {  // NaN in the row, or every kept element -inf: NaN row
      for (int64_t c = 0; c < kept; ++c) y[c] = nan;
      continue;
    }
    double sum = 0;
    for (int64_t c = 0; c < kept; ++c) sum += std::exp(scale * x.at(r, c) - max);
    const double log_sum = std::log(sum);
    for (int64_t c = 0; c < kept; ++c) {
      const double shifted = scale * x.at(r, c) - max;  // -inf stays -inf
      y[c] = log_softmax ? shifted - log_sum : std::exp(shifted) / sum;
    }
  }
  return out;
}

Comparison compare(const std::vector<double>& out, const std::vector<double>& ref, int64_t cols) {
  Comparison result;
  double diff2 = 0, ref2 = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double o = out[i], r = ref[i];
    bool special_ok = true;
    if (std::isnan(r))
      special_ok = std::isnan(o);
    else if (std::isinf(r))
      special_ok = o == r;
    else if (!std::isfinite(o))
      special_ok = false;
    else {
      diff2 += (o - r) * (o - r);
      ref2 += r * r;
    }
    if (!special_ok && result.special_mismatches++ == 0) {
      std::ostringstream s;
      s << "element (" << static_cast<int64_t>(i) / cols << ", " << static_cast<int64_t>(i) % cols << ") is " << o
        << ", reference " << r;
      result.first_problem = s.str();
    }
  }
  result.relative_error = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  return result;
}

double error_bound(const std::string& arithmetic, gk_dtype output_type) {
  double bound = 1e-5;
  if (arithmetic == "tf32")
    bound = 2e-3;
  else if (arithmetic == "f16")
    bound = 2e-3;
  else if (arithmetic == "bf16")
    bound = 1e-2;
  if (output_type != GK_F32) bound += unit_roundoff(output_type);
  return bound;
}

std::vector<double> read_window(const HostArray& array, const Window& w) {
  std::vector<double> out(static_cast<std::size_t>(w.rows * w.cols));
  for (int64_t r = 0; r < w.rows; ++r)
    for (int64_t c = 0; c < w.cols; ++c) out[static_cast<std::size_t>(r * w.cols + c)] = array.get(w.index(r, c));
  return out;
}

}  // namespace gpukern::test
