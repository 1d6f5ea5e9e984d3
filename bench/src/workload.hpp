// What one benchmark case is (operation, benchmark dtype, shape), its random host
// inputs, and the double-precision host reference the measured outputs are checked against.
#pragma once

#include <gpukern/gpukern.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpukern::bench {

/// The dtypes of the command line. kTF32 is f32 storage with allow_tf32, recorded as "tf32".
enum class BenchType { kF32, kTF32, kF16, kBF16 };

const char* type_name(BenchType type);
std::optional<BenchType> parse_type(std::string_view name);
/// Storage type of inputs and of C / y (tf32 stores f32).
gk_dtype storage_type(BenchType type);
/// Accepted relative error (docs/design.md "Numerics"): f32 1e-5, tf32 2e-3, f16 2e-3, bf16 1e-2.
double error_bound(BenchType type);

/// One (op, dtype, shape). gemm uses m, n, k; softmax uses rows, cols.
struct Case {
  gk_op op = GK_OP_GEMM;
  BenchType type = BenchType::kF32;
  int64_t m = 0, n = 0, k = 0;
  int64_t rows = 0, cols = 0;
  bool trans_a = false, trans_b = false;  // gemm: op(A), op(B)
  bool c_f32 = false;                     // gemm: C stored as f32 instead of the input type
  bool log_softmax = false;               // softmax: log-softmax instead of softmax
  std::string suite;                      // gemm: the --suite the case belongs to, "" if none

  /// "1024x1024x1024" (m x n x k) or "4096x4096" (rows x cols).
  std::string shape_label() const;
  /// gemm: 2*m*n*k flops; softmax: bytes read + written (x once, y once).
  double work() const;
  /// Bytes a call moves at the least: gemm A and B read once and C written once (C is
  /// also read when beta != 0; the bench's calls have beta = 0); softmax x read once and
  /// y written once (= work()).
  double bytes_moved() const;
  /// Storage type of C (gemm) or y (softmax).
  gk_dtype output_storage() const;
};

/// Host copy of an input: the bytes the device gets, and the same values as float
/// (after rounding to f16/bf16), which the reference uses so that only the
/// kernel's own arithmetic shows up as error.
struct HostArray {
  std::vector<unsigned char> bytes;
  std::vector<float> values;
};

/// `count` uniform values in [low, high), deterministic in `seed`, stored as `type`.
HostArray random_array(std::size_t count, gk_dtype type, float low, float high, uint64_t seed);

/// Reads element `index` of an array stored as `type` as float.
float load_as_float(const void* data, gk_dtype type, std::size_t index);

/// Reference values of a sample of output rows, in double precision.
struct Reference {
  std::vector<int64_t> rows;   // checked rows, ascending; all rows when small enough
  int64_t cols = 0;            // values per row
  std::vector<double> values;  // rows.size() x cols, row-major
  int64_t total_rows = 0;
};

/// Picks the rows to check: all of them when rows*cost_per_row <= budget, else a
/// random sample (at least 16) that always includes the first and the last row,
/// where tile-edge bugs show.
std::vector<int64_t> sample_rows(int64_t rows, double cost_per_row, double budget, uint64_t seed);
/// How many rows sample_rows picks.
int64_t sampled_row_count(int64_t rows, double cost_per_row, double budget);

/// The output rows of `c` checked against the reference under `budget` (--ref-budget:
/// gemm multiply-adds; softmax elements, each counted 16 times since the check holds doubles).
std::vector<int64_t> reference_rows(const Case& c, double budget, uint64_t seed);

/// Memory one case takes at its peak (the buffer of the same-size copy and read streams
/// counted as if it coexisted with the inputs), counted before anything is allocated so
/// that a case too large for the machine is refused with a message instead of failing
/// midway.
struct Footprint {
  uint64_t host_bytes = 0;    // random inputs (stored bytes and float values), reference, downloaded rows
  uint64_t device_bytes = 0;  // inputs, output and the streams' buffer on the device
};
/// nullopt when an element or byte count of `c` does not fit in 64 bits.
std::optional<Footprint> footprint(const Case& c, double reference_budget);

/// C = op(A) op(B) (alpha 1, beta 0) for the sampled rows; A, B as float values.
Reference gemm_reference(const Case& c, const float* a, const float* b, const std::vector<int64_t>& rows);
/// softmax / log-softmax of the sampled rows of x.
Reference softmax_reference(const Case& c, const float* x, const std::vector<int64_t>& rows);

/// Relative Frobenius error over the checked rows; nullopt when the output holds
/// NaN or inf where the reference is finite (a failed or unwritten output).
std::optional<double> relative_error(const Reference& ref, const void* output, gk_dtype type, int64_t ld);

}  // namespace gpukern::bench
