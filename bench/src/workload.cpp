// Benchmark cases, random inputs and the double-precision reference.
#include "workload.hpp"

#include <gpukern/half.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <tuple>

namespace gpukern::bench {

const char* type_name(BenchType type) {
  switch (type) {
    case BenchType::kTF32:
      return "tf32";
    case BenchType::kF16:
      return "f16";
    case BenchType::kBF16:
      return "bf16";
    default:
      return "f32";
  }
}

std::optional<BenchType> parse_type(std::string_view name) {
  if (name == "f32") return BenchType::kF32;
  if (name == "tf32") return BenchType::kTF32;
  if (name == "f16") return BenchType::kF16;
  if (name == "bf16") return BenchType::kBF16;
  return std::nullopt;
}

gk_dtype storage_type(BenchType type) {
  switch (type) {
    case BenchType::kF16:
      return GK_F16;
    case BenchType::kBF16:
      return GK_BF16;
    default:
      return GK_F32;
  }
}

double error_bound(BenchType type) {
  switch (type) {
    case BenchType::kTF32:
      return 2e-3;
    case BenchType::kF16:
      return 2e-3;
    case BenchType::kBF16:
      return 1e-2;
    default:
      return 1e-5;
  }
}

const char* bias_name(BiasKind bias) {
  switch (bias) {
    case BiasKind::kF32:
      return "f32";
    case BiasKind::kC:
      return "c";
    default:
      return "none";
  }
}

std::optional<BiasKind> parse_bias(std::string_view name) {
  if (name == "none") return BiasKind::kNone;
  if (name == "f32") return BiasKind::kF32;
  if (name == "c") return BiasKind::kC;
  return std::nullopt;
}

const char* activation_name(gk_activation act) {
  switch (act) {
    case GK_ACT_RELU:
      return "relu";
    case GK_ACT_GELU_TANH:
      return "gelu_tanh";
    case GK_ACT_GELU_ERF:
      return "gelu_erf";
    case GK_ACT_SILU:
      return "silu";
    default:
      return "none";
  }
}

std::optional<gk_activation> parse_activation(std::string_view name) {
  for (gk_activation act : {GK_ACT_NONE, GK_ACT_RELU, GK_ACT_GELU_TANH, GK_ACT_GELU_ERF, GK_ACT_SILU})
    if (name == activation_name(act)) return act;
  return std::nullopt;
}

double activate_double(double v, gk_activation act) {
  switch (act) {
    case GK_ACT_RELU:
      return v > 0 ? v : 0.0;
    case GK_ACT_GELU_TANH: {
      const double sqrt_2_over_pi = 0.79788456080286535588;
      return 0.5 * v * (1.0 + std::tanh(sqrt_2_over_pi * (v + 0.044715 * v * v * v)));
    }
    case GK_ACT_GELU_ERF:
      return 0.5 * v * (1.0 + std::erf(v * 0.70710678118654752440));
    case GK_ACT_SILU:
      return v / (1.0 + std::exp(-v));
    default:
      return v;
  }
}

std::string Case::shape_label() const {
  if (op == GK_OP_GEMM) return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  return std::to_string(rows) + "x" + std::to_string(cols);
}

std::string Case::label() const {
  std::string out = shape_label();
  if (op != GK_OP_GEMM) return out;
  if (batch > 1 || batch_reduced_from) {
    out += " batch " + std::to_string(batch);
    if (batch_reduced_from) out += " of " + std::to_string(batch_reduced_from) + " (memory)";
    if (broadcast) out += std::string(" bcast ") + broadcast;
  }
  if (bias != BiasKind::kNone) out += std::string(" bias ") + bias_name(bias);
  if (act != GK_ACT_NONE) out += std::string(" ") + activation_name(act);
  if (chain > 1) out += " chain " + std::to_string(chain);
  return out;
}

double Case::work() const {
  if (op == GK_OP_GEMM) return 2.0 * double(m) * double(n) * double(k) * double(batch);
  return 2.0 * double(rows) * double(cols) * double(dtype_size(storage_type(type)));
}

double Case::bytes_moved() const {
  if (op != GK_OP_GEMM) return work();
  const double in_size = double(dtype_size(storage_type(type)));
  const double out_size = double(dtype_size(output_storage()));
  const double bias_bytes = bias == BiasKind::kNone ? 0.0 : double(n) * double(dtype_size(bias_storage()));
  return in_size * (double(items_a()) * double(m) * double(k) + double(items_b()) * double(k) * double(n)) +
         out_size * double(batch) * double(m) * double(n) + bias_bytes;
}

gk_dtype Case::output_storage() const {
  if (op == GK_OP_GEMM && c_f32) return GK_F32;
  return storage_type(type);
}

gk_dtype Case::bias_storage() const { return bias == BiasKind::kC ? output_storage() : GK_F32; }

int64_t Case::stride_a() const { return items_a() > 1 ? m * k : 0; }
int64_t Case::stride_b() const { return items_b() > 1 ? k * n : 0; }
int64_t Case::stride_c() const { return batch > 1 ? m * n : 0; }

namespace {

// splitmix64's output function: value i of a seed is mix(seed + (i + 1) * gamma), so any
// element can be computed on its own (the arrays are filled in parallel, with the same
// values as one sequential splitmix64 stream).
constexpr uint64_t kSplitmixGamma = 0x9e3779b97f4a7c15ull;
inline uint64_t splitmix64_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace

namespace {

// Element i of a random array, as float before rounding to its storage type.
inline float raw_value(uint64_t seed, uint64_t i, float low, float scale) {
  return low + float(splitmix64_mix(seed + (i + 1) * kSplitmixGamma) >> 40) * scale;
}

// Stores v as `type` at out (element size apart) and returns the stored value as float.
inline float store_value(float v, gk_dtype type, unsigned char* out) {
  switch (type) {
    case GK_F16: {
      const uint16_t h = float_to_f16(v);
      std::memcpy(out, &h, 2);
      return f16_to_float(h);
    }
    case GK_BF16: {
      const uint16_t h = float_to_bf16(v);
      std::memcpy(out, &h, 2);
      return bf16_to_float(h);
    }
    default:
      std::memcpy(out, &v, 4);
      return v;
  }
}

}  // namespace

HostArray random_array(std::size_t count, gk_dtype type, float low, float high, uint64_t seed) {
  HostArray out;
  out.values.resize(count);
  out.bytes.resize(count * dtype_size(type));
  const float scale = (high - low) / float(1ull << 24);
  const std::size_t esize = dtype_size(type);
  // Parallel: the llm suite's largest weights are half a billion elements.
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < count; ++i)
    out.values[i] = store_value(raw_value(seed, i, low, scale), type, &out.bytes[esize * i]);
  return out;
}

float random_value(uint64_t seed, uint64_t index, gk_dtype type, float low, float high) {
  unsigned char bytes[4];
  return store_value(raw_value(seed, index, low, (high - low) / float(1ull << 24)), type, bytes);
}

void random_bytes(unsigned char* out, std::size_t count, gk_dtype type, float low, float high, uint64_t seed,
                  uint64_t first) {
  const float scale = (high - low) / float(1ull << 24);
  const std::size_t esize = dtype_size(type);
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < count; ++i) store_value(raw_value(seed, first + i, low, scale), type, out + esize * i);
}

float load_as_float(const void* data, gk_dtype type, std::size_t index) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  if (type == GK_F32) {
    float v;
    std::memcpy(&v, bytes + 4 * index, 4);
    return v;
  }
  uint16_t h;
  std::memcpy(&h, bytes + 2 * index, 2);
  return type == GK_F16 ? f16_to_float(h) : bf16_to_float(h);
}

int64_t sampled_row_count(int64_t rows, double cost_per_row, double budget) {
  if (rows <= 0) return 0;
  if (double(rows) * cost_per_row <= budget || rows <= 16) return rows;
  // In double first: budget / cost may exceed what int64 holds.
  const double affordable = cost_per_row > 0 ? budget / cost_per_row : double(rows);
  return std::clamp<int64_t>(affordable >= double(rows) ? rows : int64_t(affordable), 16, rows);
}

std::vector<int64_t> sample_rows(int64_t rows, double cost_per_row, double budget, uint64_t seed) {
  const int64_t want = sampled_row_count(rows, cost_per_row, budget);
  std::vector<int64_t> out;
  if (want == rows) {
    out.resize(static_cast<std::size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) out[static_cast<std::size_t>(r)] = r;
    return out;
  }
  std::set<int64_t> chosen{0, rows - 1};
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> pick(1, rows - 2);
  while (int64_t(chosen.size()) < want) chosen.insert(pick(rng));
  return {chosen.begin(), chosen.end()};
}

namespace {

// Rows of the output and the cost of checking one (see reference_rows).
std::pair<int64_t, double> reference_cost(const Case& c) {
  if (c.op == GK_OP_GEMM) return {c.m, double(c.n) * double(c.k)};
  return {c.rows, 16.0 * double(c.cols)};
}

// a * b and a + b on byte counts; false when the result does not fit.
bool mul(uint64_t a, uint64_t b, uint64_t& out) { return !__builtin_mul_overflow(a, b, &out); }
bool add(uint64_t a, uint64_t b, uint64_t& out) { return !__builtin_add_overflow(a, b, &out); }

}  // namespace

std::vector<int64_t> checked_items(int64_t batch, uint64_t seed) {
  if (batch <= 1) return {0};
  std::set<int64_t> chosen{0, batch - 1};
  const int64_t want = std::min<int64_t>(batch, kCheckedItems);
  std::mt19937_64 rng(seed ^ 0x5bd1e995u);
  std::uniform_int_distribution<int64_t> pick(0, batch - 1);
  while (int64_t(chosen.size()) < want) chosen.insert(pick(rng));
  return {chosen.begin(), chosen.end()};
}

std::vector<int64_t> reference_rows(const Case& c, double budget, uint64_t seed) {
  const auto [rows, cost] = reference_cost(c);
  if (c.op != GK_OP_GEMM || c.batch <= 1) return sample_rows(rows, cost, budget, seed);
  // The budget shared by the checked items; rows numbered over the batch.
  const auto items = checked_items(c.batch, seed);
  std::vector<int64_t> out;
  for (int64_t item : items)
    for (int64_t r : sample_rows(rows, cost, budget / double(items.size()), seed + uint64_t(item)))
      out.push_back(item * rows + r);
  return out;
}

std::optional<Footprint> footprint(const Case& c, double reference_budget) {
  const uint64_t in_size = dtype_size(storage_type(c.type));
  const uint64_t out_size = dtype_size(c.output_storage());
  const auto [rows, cost] = reference_cost(c);
  const bool gemm = c.op == GK_OP_GEMM;
  const uint64_t items = gemm ? uint64_t(std::min<int64_t>(c.batch, kCheckedItems)) : 1;
  const uint64_t checked =
      items * uint64_t(sampled_row_count(rows, cost, gemm ? reference_budget / double(items) : reference_budget));
  const uint64_t cols = uint64_t(gemm ? c.n : c.cols);
  const uint64_t batch = gemm ? uint64_t(c.batch) : 1;

  Footprint f;
  uint64_t elements = 0, bytes = 0, output = 0;
  if (gemm) {
    // Device: the stored items of A and B, and the bias. Host: B's values (kept for the next
    // case of the same weights, or one checked item's recomputed), the checked rows of A as
    // float, and the chunk the inputs are generated in.
    for (const auto& [count, r, k] : {std::tuple<uint64_t, uint64_t, uint64_t>{uint64_t(c.items_a()), c.m, c.k},
                                      {uint64_t(c.items_b()) * uint64_t(c.chain), c.k, c.n}}) {
      if (!mul(r, k, elements) || !mul(elements, count, bytes) || !mul(bytes, in_size, bytes) ||
          !add(f.device_bytes, bytes, f.device_bytes))
        return std::nullopt;
    }
    if (!mul(uint64_t(c.k), uint64_t(c.n), elements) || !mul(elements, in_size + sizeof(float), bytes) ||
        !add(f.host_bytes, bytes, f.host_bytes) || !mul(checked, uint64_t(c.k), elements) ||
        !mul(elements, sizeof(float), bytes) || !add(f.host_bytes, bytes, f.host_bytes) ||
        !add(f.host_bytes, kUploadChunkBytes, f.host_bytes) ||
        !add(f.device_bytes, cols * sizeof(float), f.device_bytes))
      return std::nullopt;
  } else {
    // softmax x: on the host the stored bytes and the float values; on the device the bytes.
    if (!mul(uint64_t(c.rows), uint64_t(c.cols), elements) || !mul(elements, in_size + sizeof(float), bytes) ||
        !add(f.host_bytes, bytes, f.host_bytes) || !mul(elements, in_size, bytes) ||
        !add(f.device_bytes, bytes, f.device_bytes))
      return std::nullopt;
  }
  // Output (rows x cols per item) on the device; on the host the reference (doubles) and the
  // downloaded rows of the checked sample.
  if (!mul(uint64_t(rows), cols, elements) || !mul(elements, batch, elements) || !mul(elements, out_size, output) ||
      !add(f.device_bytes, output, f.device_bytes) || !mul(checked, cols, elements) ||
      !mul(elements, sizeof(double) + out_size, bytes) || !add(f.host_bytes, bytes, f.host_bytes))
    return std::nullopt;
  // The copy and read streams of the same bytes run first, in a buffer freed before A and
  // C are made (B may be there already: counted as if all were at once).
  const double moved = c.bytes_moved();
  if (!(moved < 1.8e19) || !add(f.device_bytes, uint64_t(moved), f.device_bytes)) return std::nullopt;
  return f;
}

namespace {

// out[r][j] = sum_p a_rows[r][p] * op(B)[p][j] for `count` rows of A (compact, k floats
// each), B stored as in `c` (k x n, or n x k when transposed).
void multiply_rows(const Case& c, const float* a_rows, std::size_t count, const float* b, double* out) {
  const int64_t ldb = c.trans_b ? c.k : c.n;  // B stored n x k when transposed
  const int64_t n = c.n, k = c.k;
  // Parallel over (group of sampled rows, block of columns): a few rows (T = 1 in the llm
  // suite) still spread over every core, and each block of B is read once per group of
  // rows rather than once per row (the llm suite's B reaches half a billion elements).
  // B is read along its stored rows: k-outer / j-inner when untransposed, a dot product per
  // column when transposed (B stored n x k).
  constexpr int64_t kColumnBlock = 256;
  constexpr std::size_t kRowGroup = 16;
  const int64_t blocks = (n + kColumnBlock - 1) / kColumnBlock;
  const int64_t groups = int64_t((count + kRowGroup - 1) / kRowGroup);
#pragma omp parallel for schedule(dynamic)
  for (int64_t task = 0; task < groups * blocks; ++task) {
    const std::size_t r0 = std::size_t(task / blocks) * kRowGroup, r1 = std::min(count, r0 + kRowGroup);
    const int64_t j0 = (task % blocks) * kColumnBlock, j1 = std::min(n, j0 + kColumnBlock);
    if (c.trans_b) {
      // Four partial sums: one chain of dependent adds would bound the dot product by the
      // add latency.
      for (int64_t j = j0; j < j1; ++j) {
        const float* b_row = b + j * ldb;
        for (std::size_t r = r0; r < r1; ++r) {
          const float* a_row = a_rows + r * std::size_t(k);
          double sums[4] = {0, 0, 0, 0};
          int64_t p = 0;
          for (; p + 4 <= k; p += 4)
            for (int u = 0; u < 4; ++u) sums[u] += double(a_row[p + u]) * double(b_row[p + u]);
          for (; p < k; ++p) sums[0] += double(a_row[p]) * double(b_row[p]);
          out[r * std::size_t(n) + std::size_t(j)] = (sums[0] + sums[1]) + (sums[2] + sums[3]);
        }
      }
    } else {
      for (int64_t p = 0; p < k; ++p) {
        const float* b_row = b + p * ldb;
        for (std::size_t r = r0; r < r1; ++r) {
          const double a_ip = double(a_rows[r * std::size_t(k) + std::size_t(p)]);
          double* row = &out[r * std::size_t(n)];
          for (int64_t j = j0; j < j1; ++j) row[j] += a_ip * double(b_row[j]);
        }
      }
    }
  }
}

}  // namespace

Reference gemm_reference(const Case& c, const OperandSource& a, const OperandSource& b, const std::vector<float>& bias,
                         const std::vector<int64_t>& rows) {
  Reference ref;
  ref.rows = rows;
  ref.cols = c.n;
  ref.total_rows = c.m * c.batch;
  ref.rows_per_item = c.m;
  ref.item_stride = c.batch > 1 ? c.stride_c() : 0;
  ref.values.assign(rows.size() * std::size_t(c.n), 0.0);
  const int64_t lda = c.trans_a ? c.m : c.k;  // A stored k x m when transposed
  const uint64_t b_count = uint64_t(c.k) * uint64_t(c.n);
  std::vector<float> b_item, a_rows;
  // Rows are ascending, so the rows of one item are consecutive.
  for (std::size_t first = 0; first < rows.size();) {
    const int64_t item = rows[first] / c.m;
    std::size_t last = first;
    while (last < rows.size() && rows[last] / c.m == item) ++last;
    const std::size_t count = last - first;
    // B of this item: the host values when they hold it, else recomputed.
    const uint64_t b_base = uint64_t(c.items_b() > 1 ? item : 0) * b_count;
    const float* b_values = b.values ? b.values + b_base : nullptr;
    if (!b_values) {
      b_item.resize(b_count);
#pragma omp parallel for schedule(static)
      for (uint64_t i = 0; i < b_count; ++i) b_item[i] = b.at(b_base + i);
      b_values = b_item.data();
    }
    // The checked rows of op(A_item), compact.
    const uint64_t a_base = uint64_t(c.items_a() > 1 ? item : 0) * uint64_t(c.m) * uint64_t(c.k);
    a_rows.resize(count * std::size_t(c.k));
#pragma omp parallel for schedule(static)
    for (std::size_t r = 0; r < count; ++r) {
      const int64_t i = rows[first + r] % c.m;
      for (int64_t p = 0; p < c.k; ++p)
        a_rows[r * std::size_t(c.k) + std::size_t(p)] = a.at(a_base + uint64_t(c.trans_a ? p * lda + i : i * lda + p));
    }
    double* out = &ref.values[first * std::size_t(c.n)];
    multiply_rows(c, a_rows.data(), count, b_values, out);
    // The epilogue in double: act(alpha * acc + bias[j]).
    for (std::size_t r = 0; r < count; ++r)
      for (int64_t j = 0; j < c.n; ++j) {
        double& v = out[r * std::size_t(c.n) + std::size_t(j)];
        v = double(c.alpha) * v + (bias.empty() ? 0.0 : double(bias[std::size_t(j)]));
        v = activate_double(v, c.act);
      }
    first = last;
  }
  return ref;
}

Reference softmax_reference(const Case& c, const float* x, const std::vector<int64_t>& rows) {
  Reference ref;
  ref.rows = rows;
  ref.cols = c.cols;
  ref.total_rows = c.rows;
  ref.values.resize(rows.size() * std::size_t(c.cols));
  const int64_t cols = c.cols;
#pragma omp parallel for schedule(dynamic)
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const float* in = x + rows[r] * cols;
    double* out = &ref.values[r * std::size_t(cols)];
    double max_value = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < cols; ++j) max_value = std::max(max_value, double(in[j]));
    double sum = 0;
    for (int64_t j = 0; j < cols; ++j) sum += std::exp(double(in[j]) - max_value);
    if (c.log_softmax) {
      const double log_sum = std::log(sum);
      for (int64_t j = 0; j < cols; ++j) out[j] = double(in[j]) - max_value - log_sum;
    } else {
      for (int64_t j = 0; j < cols; ++j) out[j] = std::exp(double(in[j]) - max_value) / sum;
    }
  }
  return ref;
}

std::optional<double> relative_error(const Reference& ref, const void* output, gk_dtype type, int64_t ld) {
  double diff2 = 0, ref2 = 0;
  for (std::size_t r = 0; r < ref.rows.size(); ++r) {
    for (int64_t j = 0; j < ref.cols; ++j) {
      const double want = ref.values[r * std::size_t(ref.cols) + std::size_t(j)];
      const double got = load_as_float(output, type, r * std::size_t(ld) + std::size_t(j));
      if (!std::isfinite(got)) return std::nullopt;
      diff2 += (got - want) * (got - want);
      ref2 += want * want;
    }
  }
  if (ref2 == 0) return diff2 == 0 ? 0.0 : std::numeric_limits<double>::infinity();
  return std::sqrt(diff2 / ref2);
}

}  // namespace gpukern::bench
