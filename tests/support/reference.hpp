// The double-precision host reference every rung is checked against, the error
// measure (relative Frobenius norm) and the per-dtype bounds from docs/design.md,
// and the random inputs (fresh for every case, reproducible from a printed seed).
#pragma once

#include "support/host_array.hpp"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace gpukern::test {

/// Random numbers for one case. The seed is printed with every failure; set
/// GPUKERN_TEST_SEED to replay a run (each case then derives its seed from it).
class Random {
 public:
  Random();  // a fresh seed: the run's base seed plus a per-process counter
  explicit Random(uint64_t seed) : seed_(seed), engine_(seed) {}
  uint64_t seed() const { return seed_; }
  /// Uniform in [lo, hi), never exactly zero (inputs are never zeros).
  double uniform(double lo, double hi);
  /// Uniform integer in [0, n).
  int64_t index(int64_t n);

 private:
  uint64_t seed_;
  std::mt19937_64 engine_;
};

/// The run's base seed (GPUKERN_TEST_SEED, else from std::random_device).
uint64_t base_seed();

/// A matrix as the library sees it: element (r, c) of the stored matrix is
/// array.get(window.index(r, c)).
struct MatrixView {
  const HostArray* array = nullptr;
  Window window;
  double at(int64_t row, int64_t col) const { return array->get(window.index(row, col)); }
};

/// C = alpha * op(A) * op(B) + beta * C in double, from the stored (rounded) values;
/// beta == 0 never reads C. Returns the m x n result, row-major and dense.
std::vector<double> reference_gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
                                   const MatrixView& a, const MatrixView& b, double beta, const MatrixView* c);

/// The fused GEMM epilogue on a reference result `out` (rows of n, dense), in place:
/// out[i][j] = act(out[i][j] + bias[j]) with bias element j = bias->at(0, j) (nullptr: none)
/// and act a gk_activation (core::activate_ref).
void reference_epilogue(std::vector<double>& out, int64_t n, const MatrixView* bias, int act);

/// Softmax (or log-softmax) of every row of x in double: a row with a NaN, or with
/// every element -inf, gives NaN everywhere in that row (as PyTorch does).
std::vector<double> reference_softmax(const MatrixView& x, bool log_softmax);

/// The extended softmax: softmax(scale * x) over the columns each row keeps. With `causal`,
/// row r keeps columns c <= r + causal_offset; masked outputs are 0 (log-softmax: -inf)
/// whatever x holds there, and a row that keeps no column is all 0 (log-softmax: all -inf).
/// Over the kept columns, NaN or all -inf give a NaN row as above.
std::vector<double> reference_softmax_ex(const MatrixView& x, bool log_softmax, double scale, bool causal,
                                         int64_t causal_offset);

/// Result of comparing an output with the reference.
struct Comparison {
  double relative_error = 0;       // ||out - ref||_F / ||ref||_F over the finite reference cells
  int64_t special_mismatches = 0;  // NaN/inf where the reference differs, or vice versa
  std::string first_problem;       // where the first special mismatch is
  bool passes(double bound) const {
    return special_mismatches == 0 && relative_error <= bound;  // NaN never passes
  }
};

/// Compares out (same layout as ref, row-major rows x cols) with the reference: NaN in
/// the reference must be NaN in out, +-inf must match exactly, finite must be finite.
/// When ||ref|| is 0 the absolute error is reported instead.
Comparison compare(const std::vector<double>& out, const std::vector<double>& ref, int64_t cols);

/// The bound for an arithmetic class ("f32", "tf32", "f16", "bf16") from docs/design.md,
/// plus the rounding of the output type when it is narrower than f32.
double error_bound(const std::string& arithmetic, gk_dtype output_type);

/// The rows x cols window of `array`, read back into a dense row-major vector.
std::vector<double> read_window(const HostArray& array, const Window& w);

}  // namespace gpukern::test
