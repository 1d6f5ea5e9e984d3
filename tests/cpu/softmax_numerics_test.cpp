// Numerics of the `omp_simd` softmax row kernels on rows built to break them, on every ISA
// path this machine has and in every storage type: rows up to 2^26 elements (a row's sum
// must not drift, though f32 keeps only 24 bits), all values equal, one element far above
// the rest, blocks at very different magnitudes (a block's exponentials must survive being
// brought to the row's maximum: no normal-range probability may come back 0), huge spreads,
// -inf mixed in. Every element is checked, not only the norm of the error: losing a
// probability of 1e-19 next to ones of 5e-4 changes the norm by nothing.
//
// Each row draws its values from a small palette (element j holds palette[index(j)]), so
// the double reference needs one exp per palette entry, and rows of 2^26 elements stay
// cheap to build and to check.
#include "cpu/softmax/kernel.hpp"
#include "cpu_test_util.hpp"
#include "softmax_test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <sstream>
#include <string>

namespace gpukern::cpu::test {
namespace {

using core::DType;

constexpr int64_t kLongest = int64_t{1} << 26;  // the longest row the bound is promised for

/// A row of `cols` elements whose element j holds palette[index(j)]: `groups` groups of
/// `group` consecutive elements cycle along the row, and inside a group the values step
/// through `inner` entries; element `spike_at` (when >= 0) holds the last palette entry.
struct PaletteRow {
  std::string name;
  int64_t cols = 0;
  std::vector<float> palette;  // groups * inner entries, then the spike's
  int64_t group = 1, groups = 1, inner = 1;
  int64_t spike_at = -1;

  int64_t index(int64_t j) const {
    if (j == spike_at) return static_cast<int64_t>(palette.size()) - 1;
    return (j / group) % groups * inner + j % inner;
  }
};

/// x[j] = (j % 41) - 20, the row on which a single f32 running sum drifts.
PaletteRow periodic(int64_t cols) {
  PaletteRow row{"periodic (j % 41) - 20", cols, {}, 1, 41, 1};
  for (int v = -20; v <= 20; ++v) row.palette.push_back(static_cast<float>(v));
  return row;
}

/// Every element the same: each output is 1/cols, and the sum counts to cols in steps of 1.
PaletteRow all_equal(int64_t cols) { return {"all equal", cols, {0.75f}}; }

/// Zeros with one element at 18 (e^18 ~ 2^26: at 2^26 elements the one holds half the mass).
PaletteRow spike(int64_t cols) {
  PaletteRow row{"zeros and one 18", cols, {0.0f, 18.0f}};
  row.spike_at = cols / 2 + 3;
  return row;
}

/// Blocks of kSoftmaxBlock elements at the given levels (cycling along the row), each
/// block a small ramp above its level (steps of 0.125 over 7 elements).
PaletteRow blocks(const std::string& name, int64_t cols, const std::vector<float>& levels) {
  PaletteRow row{name, cols, {}, kSoftmaxBlock, static_cast<int64_t>(levels.size()), 7};
  for (float level : levels)
    for (int k = 0; k < 7; ++k) row.palette.push_back(level + 0.125f * static_cast<float>(k));
  return row;
}

/// 97 values drawn once from [lo, hi], `negative_infinities` of them -inf, scattered
/// along the row (97 is prime: no block or vector sees the same pattern twice in a row).
PaletteRow scattered(const std::string& name, int64_t cols, float lo, float hi, int negative_infinities) {
  PaletteRow row{name, cols, {}, 1, 97, 1};
  std::mt19937 rng(static_cast<unsigned>(cols + 97));
  std::uniform_real_distribution<float> dist(lo, hi);
  for (int k = 0; k < 97; ++k) row.palette.push_back(k < negative_infinities ? -INFINITY : dist(rng));
  std::shuffle(row.palette.begin(), row.palette.end(), rng);
  return row;
}

// ---- tolerances by storage type (design.md "Numerics") ----

double unit_roundoff(DType t) { return t == DType::F16 ? 0x1p-11 : t == DType::BF16 ? 0x1p-8 : 0x1p-24; }
/// Smallest normal value of the storage type.
double normal_min(DType t) { return t == DType::F16 ? 0x1p-14 : FLT_MIN; }
/// How far an output below normal_min may be off: one f16 subnormal step; for f32 and bf16,
/// FLT_MIN (a path may flush subnormal exponentials to 0).
double below_normal_tolerance(DType t) { return t == DType::F16 ? 0x1p-24 : FLT_MIN; }
double frobenius_bound(DType t) { return t == DType::F16 ? 2e-3 : t == DType::BF16 ? 1e-2 : 1e-5; }
/// What f32 math may add to an element's relative error: x - max rounded to f32 (|x - max|
/// < 88 for any normal output: 3.8e-6), the exponentials (2 ulp each), the block rescales
/// and the per-block f32 partial sums.
constexpr double kMathTolerance = 2e-5;

float stored_value(DType t, float v) {
  Stored one(t, 1);
  one.set(0, v);
  return one.get(0);
}

/// Runs `row` through the kernel (in place, or from x into a separate y with streaming
/// stores) and checks every output against the double reference.
void check_row(const SoftmaxKernel& kernel, DType type, const PaletteRow& row, bool log, bool in_place) {
  const int64_t n = row.cols;
  const std::size_t entries = row.palette.size();
  Stored palette(type, entries);  // the palette as stored, and its stored words
  for (std::size_t k = 0; k < entries; ++k) palette.set(k, row.palette[k]);
  std::vector<int64_t> count(entries);
  Stored x(type, static_cast<std::size_t>(n));
  for (int64_t j = 0; j < n; ++j) {
    const int64_t k = row.index(j);
    ++count[k];
    if (type == DType::F32)
      x.words32[j] = palette.words32[k];
    else
      x.words16[j] = palette.words16[k];
  }

  // Reference in double, per palette entry.
  double max = -INFINITY, sum = 0;
  for (std::size_t k = 0; k < entries; ++k)
    if (count[k] > 0) max = std::max(max, static_cast<double>(palette.get(k)));
  ASSERT_TRUE(std::isfinite(max)) << row.name << ": the test rows have a finite maximum";
  for (std::size_t k = 0; k < entries; ++k)
    if (count[k] > 0) sum += static_cast<double>(count[k]) * std::exp(palette.get(k) - max);
  std::vector<double> ref(entries), ref_stored(entries);
  for (std::size_t k = 0; k < entries; ++k) {
    const double shifted = palette.get(k) - max;
    ref[k] = log ? shifted - std::log(sum) : std::exp(shifted) / sum;
    // f16 cannot hold most probabilities of a long row (below 6e-8 they round to 0): its
    // norm is taken against the reference as f16 stores it, which is what a right kernel writes.
    ref_stored[k] = type == DType::F16 ? stored_value(type, static_cast<float>(ref[k])) : ref[k];
  }

  Stored y(type, in_place ? 0 : static_cast<std::size_t>(n));
  y.fill_nan();
  kernel.rows(one_row(x.data(), in_place ? x.data() : y.data(), n, type, log), 0, 1, !in_place, softmax_scratch_row());
  const Stored& out = in_place ? x : y;

  const double tolerance = unit_roundoff(type) + kMathTolerance;
  double num = 0, den = 0;
  int64_t wrong = 0, first_wrong = -1;
  for (int64_t j = 0; j < n; ++j) {
    const int64_t k = row.index(j);
    const double got = out.get(j), want = ref[k];
    bool ok;
    if (std::isnan(got))
      ok = false;
    else if (std::isinf(want) || want == 0)
      ok = got == want;  // -inf inputs: 0, or -inf for log
    else if (log)
      ok = std::fabs(got - want) <= tolerance * std::max(1.0, std::fabs(want));
    else if (want >= normal_min(type))
      ok = std::fabs(got - want) <= tolerance * want;
    else
      ok = std::fabs(got - want) <= below_normal_tolerance(type);
    if (!ok && wrong++ == 0) first_wrong = j;
    if (std::isfinite(want)) {
      num += (got - ref_stored[k]) * (got - ref_stored[k]);
      den += ref_stored[k] * ref_stored[k];
    }
  }
  std::ostringstream what;
  what << kernel.name << " " << core::dtype_name(type) << " " << row.name << ", " << n << " elements"
       << (log ? ", log" : "") << (in_place ? ", in place" : ", streamed");
  if (first_wrong >= 0)
    what << ": first wrong output at " << first_wrong << " (x = " << palette.get(row.index(first_wrong)) << "): got "
         << out.get(first_wrong) << ", want " << ref[row.index(first_wrong)];
  EXPECT_EQ(wrong, 0) << what.str();
  EXPECT_LE(den > 0 ? std::sqrt(num / den) : std::sqrt(num), frobenius_bound(type)) << what.str();
}

/// The parameters: an ISA path and a storage type.
struct PathAndType {
  Isa isa;
  DType type;
};
std::string name_of(const PathAndType& p) { return std::string(isa_name(p.isa)) + "_" + core::dtype_name(p.type); }
void PrintTo(const PathAndType& p, std::ostream* out) { *out << name_of(p); }

class SoftmaxNumerics : public ::testing::TestWithParam<PathAndType> {
 protected:
  void SetUp() override {
    if (isa() > cpu_features().best)
      GTEST_SKIP() << isa_name(isa()) << " path: this CPU offers only " << supported_isa_list(cpu_features().best);
  }
  Isa isa() const { return GetParam().isa; }
  DType type() const { return GetParam().type; }
  void check(const PaletteRow& row, bool log, bool in_place) {
    check_row(softmax_kernel_for(isa()), type(), row, log, in_place);
  }
};

// Blocks whose maxima differ by up to 64 (rescaled), by more (the block redone against its
// own maximum), falling again, and -inf blocks, at lengths whose exponentials are kept
// between the passes (<= kSoftmaxScratch) and beyond. The first row is the report's: three
// blocks at 0 | 64 | 100, whose middle outputs (1.1e-19) came back 0.
TEST_P(SoftmaxNumerics, BlocksAtDifferentMagnitudes) {
  const std::vector<std::vector<float>> level_sets = {
      {0, 64, 100},
      {0, 64, 100, 30, -50, 170, -INFINITY, 120, 60},
      {-INFINITY, -INFINITY, 5, 69, 133, 197, 150, 80},
  };
  std::vector<float> rising, falling;  // staircases of 40 per block (inside the slack of 64)
  for (int b = 0; b < kSoftmaxScratch / kSoftmaxBlock; ++b) {
    rising.push_back(40.0f * static_cast<float>(b) - 600.0f);
    falling.push_back(600.0f - 40.0f * static_cast<float>(b));
  }
  for (bool log : {false, true}) {
    for (const auto& levels : level_sets)
      for (int64_t cols : {3 * kSoftmaxBlock, 3 * kSoftmaxBlock + 5, kSoftmaxScratch - 3, kSoftmaxScratch + 37})
        for (bool in_place : {false, true}) check(blocks("blocks", cols, levels), log, in_place);
    check(blocks("rising staircase", kSoftmaxScratch, rising), log, false);
    check(blocks("falling staircase", kSoftmaxScratch, falling), log, false);
  }
}

// Values scattered over a wide range (most probabilities underflow, the top few carry the
// row), over a narrow one, with and without -inf elements.
TEST_P(SoftmaxNumerics, HugeSpreadAndNegativeInfinity) {
  for (bool log : {false, true})
    for (int64_t cols : {int64_t{97}, int64_t{4099}, kSoftmaxScratch, kSoftmaxScratch + 7, int64_t{262147}})
      for (bool in_place : {false, true}) {
        check(scattered("spread over [-300, 300]", cols, -300.0f, 300.0f, 0), log, in_place);
        check(scattered("spread over [-300, 300] with -inf", cols, -300.0f, 300.0f, 9), log, in_place);
        check(scattered("spread over [-40, 40] with -inf", cols, -40.0f, 40.0f, 30), log, in_place);
      }
}

// Long rows: the report's row on the scalar path (262144 elements of (j % 41) - 20), then
// rows of 2^26 elements (in place: 256 MiB of f32 each).
TEST_P(SoftmaxNumerics, LongRowsKeepTheirSum) {
  check(periodic(262144), false, false);
  check(periodic(262144 + 13), true, false);
  check(periodic(kLongest), false, true);
  check(periodic(kLongest), true, true);
  // (f16 rounds 1/2^26 to 0, so an equal row of f16 could not show a wrong sum.)
  if (type() != DType::F16) check(all_equal(kLongest), false, true);
  check(spike(kLongest), false, true);
  check(blocks("blocks", kLongest, {0, 64, 100, 30, -50, 170, -INFINITY, 120, 60}), false, true);
}

std::vector<PathAndType> every_path_and_type() {
  std::vector<PathAndType> out;
  for (Isa isa : {Isa::Avx512, Isa::Avx2, Isa::Scalar})
    for (DType type : {DType::F32, DType::F16, DType::BF16}) out.push_back({isa, type});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Paths, SoftmaxNumerics, ::testing::ValuesIn(every_path_and_type()),
                         [](const ::testing::TestParamInfo<PathAndType>& info) { return name_of(info.param); });

}  // namespace
}  // namespace gpukern::cpu::test
