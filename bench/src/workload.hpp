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

/// The fused epilogue's bias of a gemm case: none, an f32 vector, or one in C's type.
enum class BiasKind { kNone, kF32, kC };
const char* bias_name(BiasKind bias);
std::optional<BiasKind> parse_bias(std::string_view name);
/// "none", "relu", "gelu_tanh", "gelu_erf", "silu" (the names of --act).
const char* activation_name(gk_activation act);
std::optional<gk_activation> parse_activation(std::string_view name);
/// The activation in double precision, for the reference (gk_activation's formulas).
double activate_double(double v, gk_activation act);

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
  // gemm: strided batches (packed: item b of A at a + b*m*k, likewise B and C) and the epilogue.
  int64_t batch = 1;                // batch items
  char broadcast = 0;               // 'a' or 'b': that operand has one item, stride 0, shared by all
  int64_t batch_reduced_from = 0;   // the batch asked for, when the device's memory took fewer (0: as asked)
  BiasKind bias = BiasKind::kNone;  // a vector of n values over the columns, shared by the items
  gk_activation act = GK_ACT_NONE;
  float alpha = 1.0f;  // gemm alpha (the attention suite's Q*K^T keeps 1)
  int chain = 1;       // gemm: calls back to back per timed call, each with its own copy of B (--chain)

  /// "1024x1024x1024" (m x n x k) or "4096x4096" (rows x cols).
  std::string shape_label() const;
  /// shape_label() with the batch and epilogue when present: "512x512x64 batch 1024 bias f32 relu".
  std::string label() const;
  /// gemm: 2*m*n*k*batch flops; softmax: bytes read + written (x once, y once).
  double work() const;
  /// Bytes a call moves at the least: gemm A and B read once (one item when broadcast), C
  /// written once and the bias read once (C is also read when beta != 0; the bench's calls
  /// have beta = 0); softmax x read once and y written once (= work()).
  double bytes_moved() const;
  /// Storage type of C (gemm) or y (softmax).
  gk_dtype output_storage() const;
  /// Storage type of the bias (GK_F32 or C's type); meaningful when bias != kNone.
  gk_dtype bias_storage() const;
  bool has_epilogue() const { return bias != BiasKind::kNone || act != GK_ACT_NONE; }
  /// Elements between batch items (packed; 0 for the broadcast operand, and for the bias).
  int64_t stride_a() const;
  int64_t stride_b() const;
  int64_t stride_c() const;
  /// Items stored of A and B (1 when broadcast, else batch).
  int64_t items_a() const { return broadcast == 'a' ? 1 : batch; }
  int64_t items_b() const { return broadcast == 'b' ? 1 : batch; }
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
/// Element `index` of random_array(.., seed) as float (after rounding to `type`): any element
/// can be computed on its own, so batched inputs too large for host memory are generated
/// in chunks and the reference recomputes the elements it needs.
float random_value(uint64_t seed, uint64_t index, gk_dtype type, float low, float high);
/// The stored bytes of elements [first, first + count) of random_array(.., seed).
void random_bytes(unsigned char* out, std::size_t count, gk_dtype type, float low, float high, uint64_t seed,
                  uint64_t first);

/// Reads element `index` of an array stored as `type` as float.
float load_as_float(const void* data, gk_dtype type, std::size_t index);

/// Reference values of a sample of output rows, in double precision.
struct Reference {
  std::vector<int64_t> rows;   // checked rows, ascending; all rows when small enough
  int64_t cols = 0;            // values per row
  std::vector<double> values;  // rows.size() x cols, row-major
  int64_t total_rows = 0;
  // Batched outputs: row g is row g % rows_per_item of item g / rows_per_item, which starts
  // item_stride elements after the previous item (0: one item).
  int64_t rows_per_item = 0;
  int64_t item_stride = 0;
  /// Element offset of row g in an output of leading dimension ld.
  int64_t row_offset(int64_t g, int64_t ld) const {
    if (item_stride == 0 || rows_per_item <= 0) return g * ld;
    return (g / rows_per_item) * item_stride + (g % rows_per_item) * ld;
  }
};

/// Picks the rows to check: all of them when rows*cost_per_row <= budget, else a
/// random sample (at least 16) that always includes the first and the last row,
/// where tile-edge bugs show.
std::vector<int64_t> sample_rows(int64_t rows, double cost_per_row, double budget, uint64_t seed);
/// How many rows sample_rows picks.
int64_t sampled_row_count(int64_t rows, double cost_per_row, double budget);

/// The output rows of `c` checked against the reference under `budget` (--ref-budget:
/// gemm multiply-adds; softmax elements, each counted 16 times since the check holds doubles).
/// A batched gemm checks a few items (the first, the last and up to kCheckedItems - 2 others)
/// and a sample of rows in each; rows are numbered over the batch (item * m + row).
std::vector<int64_t> reference_rows(const Case& c, double budget, uint64_t seed);
/// Most batch items a batched case checks (each needs its B recomputed on the host).
constexpr int64_t kCheckedItems = 8;
/// The items of a batch of `batch` checked by the reference, ascending.
std::vector<int64_t> checked_items(int64_t batch, uint64_t seed);

/// Memory one case takes at its peak (the buffer of the same-size copy and read streams
/// counted as if it coexisted with the inputs), counted before anything is allocated so
/// that a case too large for the machine is refused with a message instead of failing
/// midway.
struct Footprint {
  uint64_t host_bytes = 0;    // random inputs (stored bytes and float values), reference, downloaded rows
  uint64_t device_bytes = 0;  // inputs, output and the streams' buffer on the device
};
/// Host bytes of the chunks batched inputs are generated and uploaded in.
constexpr uint64_t kUploadChunkBytes = uint64_t(64) << 20;
/// nullopt when an element or byte count of `c` does not fit in 64 bits.
std::optional<Footprint> footprint(const Case& c, double reference_budget);

/// Where the reference reads an operand's values: element i (over all stored items) is
/// values[i] when the values are on the host, else random_value(seed, i, type, low, high).
struct OperandSource {
  const float* values = nullptr;
  uint64_t seed = 0;
  gk_dtype type = GK_F32;
  float low = -1.0f, high = 1.0f;
  float at(uint64_t i) const { return values ? values[i] : random_value(seed, i, type, low, high); }
};

/// C_b = act(alpha op(A_b) op(B_b) + bias) (beta 0) for the sampled rows (numbered over the
/// batch); bias: n values (rounded to their type) or empty.
Reference gemm_reference(const Case& c, const OperandSource& a, const OperandSource& b, const std::vector<float>& bias,
                         const std::vector<int64_t>& rows);
/// softmax / log-softmax of the sampled rows of x.
Reference softmax_reference(const Case& c, const float* x, const std::vector<int64_t>& rows);

/// Relative Frobenius error over the checked rows; nullopt when the output holds
/// NaN or inf where the reference is finite (a failed or unwritten output).
std::optional<double> relative_error(const Reference& ref, const void* output, gk_dtype type, int64_t ld);

}  // namespace gpukern::bench
