// Bad gemm arguments (src/core/validate.cpp): every argument, on every available
// backend. Each must give the named status with a message naming the argument, and
// leave every buffer untouched. Minimal valid leading dimensions must be accepted.
#include "core/rejection.hpp"
#include "support/reference.hpp"

#include <functional>
#include <ostream>
#include <tuple>

namespace gpukern::test {
namespace {

constexpr int64_t kM = 7, kN = 5, kK = 3;  // distinct, so a check of the wrong dimension shows
constexpr std::size_t kElements = 4096;    // per buffer; the operands sit after 16 guard cells
constexpr int64_t kHuge = int64_t{1} << 40;
constexpr int64_t kTwo31 = int64_t{1} << 31;

struct BadGemm {
  const char* name;
  std::function<void(GemmDesc&)> mutate;
  gk_status expected;
  std::vector<const char*> words;  // the message names at least one
  const char* also = nullptr;      // a second argument the message must name as well
};

/// gtest prints the case by its name.
void PrintTo(const BadGemm& bad, std::ostream* out) { *out << bad.name; }

const std::vector<BadGemm>& bad_gemm_cases() {
  static const std::vector<BadGemm> cases = {
      {"negative_m", [](GemmDesc& d) { d.m = -1; }, GK_INVALID_ARGUMENT, {"m"}},
      {"negative_n", [](GemmDesc& d) { d.n = -3; }, GK_INVALID_ARGUMENT, {"n"}},
      {"negative_k", [](GemmDesc& d) { d.k = -1; }, GK_INVALID_ARGUMENT, {"k"}},
      {"m_times_n_overflows_int64",
       [](GemmDesc& d) {
         d.m = kHuge;
         d.n = kHuge;
         d.ldb = kHuge;
         d.ldc = kHuge;
       },
       GK_INVALID_ARGUMENT,
       {"m", "n", "c", "ldc"}},
      {"m_times_k_overflows_int64",
       [](GemmDesc& d) {
         d.m = kHuge;
         d.k = kHuge;
         d.lda = kHuge;
       },
       GK_INVALID_ARGUMENT,
       {"m", "k", "a", "lda"}},
      {"k_times_n_overflows_int64",
       [](GemmDesc& d) {
         d.k = kHuge;
         d.n = kHuge;
         d.lda = kHuge;
         d.ldb = kHuge;
         d.ldc = kHuge;
       },
       GK_INVALID_ARGUMENT,
       {"k", "n", "b", "ldb"}},
      // The element count fits in int64, the byte count does not fit in 64 bits.
      {"a_bytes_overflow",
       [](GemmDesc& d) {
         d.m = kTwo31;
         d.lda = kTwo31;
         d.n = 1;
         d.ldb = 1;
         d.ldc = 1;
       },
       GK_INVALID_ARGUMENT,
       {"a", "lda", "m"}},
      {"c_bytes_overflow",
       [](GemmDesc& d) {
         d.m = kTwo31;
         d.ldc = kTwo31;
         d.k = 1;
         d.lda = 1;
       },
       GK_INVALID_ARGUMENT,
       {"c", "ldc", "m"}},
      {"lda_below_k_NN", [](GemmDesc& d) { d.lda = kK - 1; }, GK_INVALID_ARGUMENT, {"lda"}},
      {"lda_below_m_TN",  // stored A is k x m: lda >= m (here lda >= k would wrongly pass)
       [](GemmDesc& d) {
         d.trans_a = GK_TRANS;
         d.lda = kM - 1;
       },
       GK_INVALID_ARGUMENT,
       {"lda"}},
      {"ldb_below_n_NN", [](GemmDesc& d) { d.ldb = kN - 1; }, GK_INVALID_ARGUMENT, {"ldb"}},
      {"ldb_below_k_NT",  // stored B is n x k: ldb >= k
       [](GemmDesc& d) {
         d.trans_b = GK_TRANS;
         d.ldb = kK - 1;
       },
       GK_INVALID_ARGUMENT,
       {"ldb"}},
      {"ldc_below_n", [](GemmDesc& d) { d.ldc = kN - 1; }, GK_INVALID_ARGUMENT, {"ldc"}},
      {"lda_zero", [](GemmDesc& d) { d.lda = 0; }, GK_INVALID_ARGUMENT, {"lda"}},
      {"ldb_negative", [](GemmDesc& d) { d.ldb = -5; }, GK_INVALID_ARGUMENT, {"ldb"}},
      {"ldc_negative", [](GemmDesc& d) { d.ldc = -1; }, GK_INVALID_ARGUMENT, {"ldc"}},
      {"null_a", [](GemmDesc& d) { d.a = nullptr; }, GK_INVALID_ARGUMENT, {"a"}},
      {"null_b", [](GemmDesc& d) { d.b = nullptr; }, GK_INVALID_ARGUMENT, {"b"}},
      {"null_c", [](GemmDesc& d) { d.c = nullptr; }, GK_INVALID_ARGUMENT, {"c"}},
      {"null_c_with_k_zero",
       [](GemmDesc& d) {
         d.c = nullptr;
         d.k = 0;
       },
       GK_INVALID_ARGUMENT,
       {"c"}},
      {"unknown_ab_type", [](GemmDesc& d) { set_raw(d.ab_type, 7); }, GK_INVALID_ARGUMENT, {"ab_type"}},
      {"negative_ab_type", [](GemmDesc& d) { set_raw(d.ab_type, -1); }, GK_INVALID_ARGUMENT, {"ab_type"}},
      {"unknown_c_type", [](GemmDesc& d) { set_raw(d.c_type, 3); }, GK_INVALID_ARGUMENT, {"c_type"}},
      {"c_type_f16_with_f32_inputs", [](GemmDesc& d) { d.c_type = GK_F16; }, GK_INVALID_ARGUMENT, {"c_type"}},
      {"c_type_bf16_with_f16_inputs",
       [](GemmDesc& d) {
         d.ab_type = GK_F16;
         d.c_type = GK_BF16;
       },
       GK_INVALID_ARGUMENT,
       {"c_type"}},
      {"c_type_f16_with_bf16_inputs",
       [](GemmDesc& d) {
         d.ab_type = GK_BF16;
         d.c_type = GK_F16;
       },
       GK_INVALID_ARGUMENT,
       {"c_type"}},
      {"allow_tf32_with_f16",
       [](GemmDesc& d) {
         d.ab_type = d.c_type = GK_F16;
         d.allow_tf32 = 1;
       },
       GK_INVALID_ARGUMENT,
       {"allow_tf32"}},
      {"allow_tf32_with_bf16",
       [](GemmDesc& d) {
         d.ab_type = GK_BF16;
         d.c_type = GK_F32;
         d.allow_tf32 = 1;
       },
       GK_INVALID_ARGUMENT,
       {"allow_tf32"}},
      {"unknown_trans_a", [](GemmDesc& d) { set_raw(d.trans_a, 2); }, GK_INVALID_ARGUMENT, {"trans_a"}},
      {"unknown_trans_b", [](GemmDesc& d) { set_raw(d.trans_b, -1); }, GK_INVALID_ARGUMENT, {"trans_b"}},
      {"variant_with_bad_characters", [](GemmDesc& d) { d.variant = "naive; rm"; }, GK_INVALID_ARGUMENT, {"variant"}},
      // C must not share memory with A or B (they used to run and return garbage).
      {"c_is_a", [](GemmDesc& d) { d.c = byte_offset(d.a, 0); }, GK_INVALID_ARGUMENT, {"c"}, "a"},
      {"c_starts_in_the_last_row_of_a",
       [](GemmDesc& d) { d.c = byte_offset(d.a, ((kM - 1) * kK + 2) * 4); },
       GK_INVALID_ARGUMENT,
       {"c"},
       "a"},
      {"c_ends_in_the_first_row_of_a",  // C's 35 elements start 16 before A
       [](GemmDesc& d) { d.c = byte_offset(d.a, -16 * 4); },
       GK_INVALID_ARGUMENT,
       {"c"},
       "a"},
      {"c_inside_transposed_b",
       [](GemmDesc& d) {
         d.trans_b = GK_TRANS;
         d.ldb = kK;
         d.c = byte_offset(d.b, 4 * 4);
       },
       GK_INVALID_ARGUMENT,
       {"c"},
       "b"},
      {"c_rows_interleaved_with_a_rows",  // A's rows 10 apart, C's rows 5 apart: they cross
       [](GemmDesc& d) {
         d.lda = 10;
         d.c = byte_offset(d.a, 3 * 4);
       },
       GK_INVALID_ARGUMENT,
       {"c"},
       "a"},
      // Pointers must be aligned to their element size (they were read through misaligned loads).
      {"a_misaligned_f32", [](GemmDesc& d) { d.a = byte_offset(d.a, 1); }, GK_INVALID_ARGUMENT, {"a"}},
      {"b_misaligned_f16",
       [](GemmDesc& d) {
         d.ab_type = d.c_type = GK_F16;
         d.b = byte_offset(d.b, 1);
       },
       GK_INVALID_ARGUMENT,
       {"b"}},
      {"c_misaligned_by_two_f32", [](GemmDesc& d) { d.c = byte_offset(d.c, 2); }, GK_INVALID_ARGUMENT, {"c"}},
      {"c_misaligned_f32_with_bf16_inputs",
       [](GemmDesc& d) {
         d.ab_type = GK_BF16;
         d.c = byte_offset(d.c, 6);
       },
       GK_INVALID_ARGUMENT,
       {"c"}},
      // Strided batches (gk_gemm_ex_desc).
      {"negative_batch_count", [](GemmDesc& d) { d.batch_count = -1; }, GK_INVALID_ARGUMENT, {"batch_count"}},
      {"negative_stride_a",
       [](GemmDesc& d) {
         d.batch_count = 2;
         d.stride_a = -kM * kK;
       },
       GK_INVALID_ARGUMENT,
       {"stride_a"}},
      {"negative_stride_bias", [](GemmDesc& d) { d.stride_bias = -1; }, GK_INVALID_ARGUMENT, {"stride_bias"}},
      {"batch_items_of_c_overlap",  // items 1 element apart: item 1's row 0 is item 0's row 0 shifted
       [](GemmDesc& d) {
         d.batch_count = 3;
         d.stride_a = kM * kK;
         d.stride_b = kK * kN;
         d.stride_c = 1;
       },
       GK_INVALID_ARGUMENT,
       {"stride_c"}},
      {"batch_items_of_c_share_one_matrix",
       [](GemmDesc& d) {
         d.batch_count = 2;
         d.stride_c = 0;
       },
       GK_INVALID_ARGUMENT,
       {"stride_c"}},
      {"batched_c_reaches_into_a",  // C right after A's item 0: inside A's item 1
       [](GemmDesc& d) {
         d.c = byte_offset(d.a, 4 * kM * kK);
         d.batch_count = 2;
         d.stride_a = kM * kK;
         d.stride_c = kM * kN;
       },
       GK_INVALID_ARGUMENT,
       {"c"},
       "a"},
      // The fused epilogue.
      {"bias_without_length",
       [](GemmDesc& d) {
         d.bias = d.a;
         d.bias_length = 0;
       },
       GK_INVALID_ARGUMENT,
       {"bias_length"}},
      {"bias_length_is_m_not_n",
       [](GemmDesc& d) {
         d.bias = d.a;
         d.bias_length = kM;
       },
       GK_INVALID_ARGUMENT,
       {"bias_length"}},
      {"bias_length_without_bias", [](GemmDesc& d) { d.bias_length = kN; }, GK_INVALID_ARGUMENT, {"bias_length"}},
      {"bias_type_f16_with_f32_c",
       [](GemmDesc& d) {
         d.bias = d.a;
         d.bias_length = kN;
         d.bias_type = GK_F16;
       },
       GK_INVALID_ARGUMENT,
       {"bias_type"}},
      {"bias_type_out_of_range",
       [](GemmDesc& d) {
         d.bias = d.a;
         d.bias_length = kN;
         set_raw(d.bias_type, 7);
       },
       GK_INVALID_ARGUMENT,
       {"bias_type"}},
      {"bias_misaligned",
       [](GemmDesc& d) {
         d.bias = byte_offset(d.a, 2);
         d.bias_length = kN;
       },
       GK_INVALID_ARGUMENT,
       {"bias"}},
      {"bias_inside_c",
       [](GemmDesc& d) {
         d.bias = d.c;
         d.bias_length = kN;
       },
       GK_INVALID_ARGUMENT,
       {"bias"},
       "c"},
      {"unknown_activation", [](GemmDesc& d) { set_raw(d.activation, 5); }, GK_INVALID_ARGUMENT, {"activation"}},
      {"negative_activation", [](GemmDesc& d) { set_raw(d.activation, -1); }, GK_INVALID_ARGUMENT, {"activation"}},
      // The descriptor's size (append-only growth).
      {"size_zero", [](GemmDesc& d) { d.size = 0; }, GK_INVALID_ARGUMENT, {"size"}},
      {"size_of_an_older_smaller_struct",
       [](GemmDesc& d) { d.size = sizeof(gk_gemm_ex_desc) - 8; },
       GK_INVALID_ARGUMENT,
       {"size"}},
      {"size_garbage", [](GemmDesc& d) { d.size = std::size_t{1} << 40; }, GK_INVALID_ARGUMENT, {"size"}},
  };
  return cases;
}

/// A valid 7 x 5 x 3 f32 call whose buffers hold a byte pattern.
struct GemmBuffers {
  explicit GemmBuffers(Device& dev) : a(dev, kElements * 4), b(dev, kElements * 4), c(dev, kElements * 4) {
    desc.m = kM;
    desc.n = kN;
    desc.k = kK;
    desc.a = a.at(16, 4);
    desc.lda = kK;
    desc.b = b.at(16, 4);
    desc.ldb = kN;
    desc.c = c.at(16, 4);
    desc.ldc = kN;
  }
  void expect_untouched() const {
    EXPECT_EQ(a.changes(), "") << "A buffer";
    EXPECT_EQ(b.changes(), "") << "B buffer";
    EXPECT_EQ(c.changes(), "") << "C buffer (output must be untouched)";
  }
  PatternedBuffer a, b, c;
  GemmDesc desc;
};

class GemmBadArgument : public ::testing::TestWithParam<std::tuple<std::string, BadGemm>> {};

TEST_P(GemmBadArgument, IsRejectedAndTouchesNothing) {
  const auto& [backend, bad] = GetParam();
  Device& dev = shared_device(backend);
  GemmBuffers buffers(dev);
  bad.mutate(buffers.desc);
  const std::string message = expect_status(gk_gemm_ex(dev.handle(), &buffers.desc), bad.expected, bad.words);
  if (bad.also) {
    EXPECT_TRUE(contains_word(message, bad.also)) << message << " does not name " << bad.also;
  }
  buffers.expect_untouched();
  // gk_gemm_select validates the same way.
  char name[GK_NAME_LEN] = {};
  EXPECT_EQ(gk_gemm_ex_select(dev.handle(), &buffers.desc, name, sizeof name), bad.expected);
}

std::string bad_gemm_name(const ::testing::TestParamInfo<std::tuple<std::string, BadGemm>>& info) {
  return std::get<0>(info.param) + "_" + std::get<1>(info.param).name;
}

INSTANTIATE_TEST_SUITE_P(Validation, GemmBadArgument,
                         ::testing::Combine(::testing::ValuesIn(available_backend_names()),
                                            ::testing::ValuesIn(bad_gemm_cases())),
                         bad_gemm_name);

class GemmArguments : public ::testing::TestWithParam<std::string> {};

TEST_P(GemmArguments, UnknownRungIsRejectedListingTheValidOnes) {
  Device& dev = shared_device(GetParam());
  GemmBuffers buffers(dev);
  buffers.desc.variant = "no_such_rung";
  expect_unknown_rung_rejected(gk_gemm_ex(dev.handle(), &buffers.desc), dev, GK_OP_GEMM, "no_such_rung");
  buffers.expect_untouched();
}

TEST_P(GemmArguments, NullDescriptorAndHandle) {
  Device& dev = shared_device(GetParam());
  GemmBuffers buffers(dev);
  const std::string message = expect_status(gk_gemm(dev.handle(), nullptr), GK_INVALID_ARGUMENT, {});
  EXPECT_TRUE(contains_text(message, "desc")) << message;
  expect_status(gk_gemm_ex(nullptr, &buffers.desc), GK_INVALID_ARGUMENT, {"handle"});
  buffers.expect_untouched();
}

// The smallest legal leading dimension depends on the transposes: lda >= k (N) or m (T),
// ldb >= n (N) or k (T), ldc >= n. Each must be accepted and give the right result.
TEST_P(GemmArguments, MinimalLeadingDimensionsAreAccepted) {
  Device& dev = shared_device(GetParam());
  for (bool trans_a : {false, true})
    for (bool trans_b : {false, true}) {
      SCOPED_TRACE(std::string(trans_a ? "T" : "N") + (trans_b ? "T" : "N"));
      Random rng;
      const int64_t lda = trans_a ? kM : kK, ldb = trans_b ? kK : kN;
      const Window wa = make_window(trans_a ? kK : kM, lda, lda, 0);
      const Window wb = make_window(trans_b ? kN : kK, ldb, ldb, 0);
      const Window wc = make_window(kM, kN, kN, 8);
      HostArray a(GK_F32, wa.total), b(GK_F32, wb.total), c(GK_F32, wc.total);
      auto random = [&](int64_t, int64_t) { return rng.uniform(-1, 1); };
      fill_window(a, wa, Pattern::Padding, random);
      fill_window(b, wb, Pattern::Padding, random);
      fill_window(c, wc, Pattern::Guard, [](int64_t, int64_t) { return 0.0; });
      DeviceArray da(dev, a), db(dev, b), dc(dev, c);
      GemmDesc d;
      d.trans_a = trans_a ? GK_TRANS : GK_NO_TRANS;
      d.trans_b = trans_b ? GK_TRANS : GK_NO_TRANS;
      d.m = kM;
      d.n = kN;
      d.k = kK;
      d.a = da.data();
      d.lda = lda;
      d.b = db.data();
      d.ldb = ldb;
      d.c = static_cast<float*>(dc.data()) + wc.offset;
      d.ldc = kN;
      expect_status(gk_gemm_ex(dev.handle(), &d), GK_SUCCESS, {});
      HostArray after = dc.read(GK_F32, wc.total);
      EXPECT_EQ(changes_outside(c, after, wc), "");
      const auto ref =
          reference_gemm(trans_a, trans_b, kM, kN, kK, 1.0, MatrixView{&a, wa}, MatrixView{&b, wb}, 0.0, nullptr);
      EXPECT_TRUE(compare(read_window(after, wc), ref, kN).passes(1e-5));
    }
}

// With K = 0 (or M = 0) A and B are not read, so they may be null.
TEST_P(GemmArguments, NullInputsAreAcceptedWhenNotRead) {
  Device& dev = shared_device(GetParam());
  GemmBuffers buffers(dev);
  buffers.desc.k = 0;
  buffers.desc.a = nullptr;
  buffers.desc.b = nullptr;
  buffers.desc.beta = 0.0f;
  expect_status(gk_gemm_ex(dev.handle(), &buffers.desc), GK_SUCCESS, {});
  std::vector<float> c(static_cast<std::size_t>(kM * kN));
  dev.synchronize();
  for (int64_t r = 0; r < kM; ++r)
    dev.download(c.data() + r * kN, static_cast<float*>(buffers.desc.c) + r * kN, kN * 4);
  for (float v : c) EXPECT_EQ(v, 0.0f) << "K = 0, beta = 0 must give C = 0";
}

// A default GemmDesc is an empty call (all sizes 0) with the leading dimensions at 1, the
// least BLAS's rule (ld >= max(1, stored row length)) allows; it used to be rejected for
// lda = 0. A C descriptor left at zero breaks that rule and is rejected by name.
TEST_P(GemmArguments, DefaultDescriptorIsAValidEmptyCall) {
  Device& dev = shared_device(GetParam());
  GemmDesc d;
  EXPECT_EQ(d.lda, 1);
  EXPECT_EQ(d.ldb, 1);
  EXPECT_EQ(d.ldc, 1);
  expect_status(gk_gemm_ex(dev.handle(), &d), GK_SUCCESS, {});
  const gk_gemm_desc zero{};
  expect_status(gk_gemm(dev.handle(), &zero), GK_INVALID_ARGUMENT, {"lda"});
}

// Operands that share a parent matrix but no element are accepted: A in columns [0, k)
// and C in columns [k, k + m) of one m x (k + m) matrix (the same row stride), and B = A
// (inputs may alias each other): C = A * A^T.
TEST_P(GemmArguments, NeighbouringOperandsAreAccepted) {
  Device& dev = shared_device(GetParam());
  Random rng;
  const int64_t ld = kK + kM;
  const Window wa = make_window(kM, kK, ld, 8);
  Window wc = wa;
  wc.cols = kM;
  wc.offset += kK;
  HostArray parent(GK_F32, wa.total);
  fill_window(parent, wa, Pattern::Guard, [&](int64_t, int64_t) { return rng.uniform(-1, 1); });
  for (int64_t r = 0; r < kM; ++r)
    for (int64_t c = 0; c < kM; ++c) parent.set_bits(wc.index(r, c), pattern_bits(GK_F32, Pattern::Poison));
  DeviceArray device_parent(dev, parent);
  const float* base = static_cast<const float*>(device_parent.data());
  GemmDesc d;
  d.trans_b = GK_TRANS;
  d.m = d.n = kM;
  d.k = kK;
  d.a = d.b = base + wa.offset;
  d.lda = d.ldb = d.ldc = ld;
  d.c = const_cast<float*>(base) + wc.offset;
  expect_status(gk_gemm_ex(dev.handle(), &d), GK_SUCCESS, {});
  const HostArray after = device_parent.read(GK_F32, wa.total);
  EXPECT_EQ(changes_outside(parent, after, wc), "") << "A or the guard cells changed";
  const MatrixView a{&parent, wa};
  const auto ref = reference_gemm(false, true, kM, kM, kK, 1.0, a, a, 0.0, nullptr);
  EXPECT_TRUE(compare(read_window(after, wc), ref, kM).passes(1e-5));
}

// An application built against a newer header passes a larger descriptor: accepted while
// every field this library does not know is zero, refused by name when one is set.
TEST_P(GemmArguments, LargerDescriptorFromNewerHeader) {
  Device& dev = shared_device(GetParam());
  GemmBuffers buffers(dev);
  struct Newer {
    gk_gemm_ex_desc known;
    int64_t future_field;
  } newer{};
  newer.known = buffers.desc;
  newer.known.size = sizeof newer;
  char name[GK_NAME_LEN] = {};
  expect_status(gk_gemm_ex_select(dev.handle(), &newer.known, name, sizeof name), GK_SUCCESS, {});
  newer.future_field = 1;
  expect_status(gk_gemm_ex(dev.handle(), &newer.known), GK_INVALID_ARGUMENT, {"size"});
  buffers.expect_untouched();
}

// Layouts of batched C that are legal: blocked items, and items interleaved row by row
// (item b's row i at b * stride_c + i * ldc, as heads interleaved in one activation tensor);
// batch_count 0 is an empty call that touches nothing.
TEST_P(GemmArguments, BatchLayoutsThatDoNotOverlapAreAccepted) {
  Device& dev = shared_device(GetParam());
  GemmBuffers buffers(dev);
  GemmDesc& d = buffers.desc;
  d.batch_count = 3;
  d.stride_a = kM * kK;
  d.stride_b = 0;
  char name[GK_NAME_LEN] = {};
  d.stride_c = (kM - 1) * kN + kN;
  expect_status(gk_gemm_ex_select(dev.handle(), &d, name, sizeof name), GK_SUCCESS, {});
  d.stride_c = kN;
  d.ldc = 3 * kN;
  expect_status(gk_gemm_ex_select(dev.handle(), &d, name, sizeof name), GK_SUCCESS, {});
  d.ldc = 3 * kN - 1;  // the last item's rows reach into the next row of the first
  expect_status(gk_gemm_ex_select(dev.handle(), &d, name, sizeof name), GK_INVALID_ARGUMENT, {"stride_c"});
  d.ldc = 3 * kN;
  d.batch_count = 0;
  expect_status(gk_gemm_ex(dev.handle(), &d), GK_SUCCESS, {});
  buffers.expect_untouched();
}

INSTANTIATE_TEST_SUITE_P(Validation, GemmArguments, ::testing::ValuesIn(available_backend_names()), BackendName());

}  // namespace
}  // namespace gpukern::test
