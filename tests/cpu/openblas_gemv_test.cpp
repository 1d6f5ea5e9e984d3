// The `openblas_gemv` reference rung through the public API: every matrix-vector product
// (m == 1 or n == 1, all transposes, strided operands, beta == 0 over a NaN-poisoned C)
// against the double reference, and the typed declines of everything else. Skipped with
// the reason where OpenBLAS is not installed.
#include "gemm_check.hpp"

#include <gtest/gtest.h>

#include <string>

namespace gpukern::cpu::test {
namespace {

using core::DType;

class OpenBlasGemv : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(gk_open("cpu", &handle_), GK_SUCCESS) << gk_last_error();
    int count = 0;
    ASSERT_EQ(gk_variant_count(handle_, GK_OP_GEMM, &count), GK_SUCCESS);
    for (int i = 0; i < count; ++i) {
      gk_variant_info info;
      ASSERT_EQ(gk_get_variant_info(handle_, GK_OP_GEMM, i, &info), GK_SUCCESS);
      if (std::string(info.name) != "openblas_gemv") continue;
      EXPECT_EQ(info.is_reference, 1);
      EXPECT_EQ(info.auto_position, -1);
      if (!info.runs_here) GTEST_SKIP() << "openblas_gemv unavailable: " << info.reason;
      return;
    }
    FAIL() << "no openblas_gemv rung in the CPU gemm ladder";
  }
  void TearDown() override {
    if (handle_) gk_close(handle_);
  }

  /// Runs the call with the rung forced; failures are reported with the status and message.
  gk_status run(const core::GemmArgs& g) {
    const gk_gemm_desc d = gemm_desc(g, "openblas_gemv");
    return gk_gemm(handle_, &d);
  }

  gk_handle handle_ = nullptr;
};

TEST_F(OpenBlasGemv, VectorProductsEveryTranspose) {
  struct Scale {
    float alpha, beta;
  };
  const int64_t shapes[][3] = {{1, 1037, 515}, {1037, 1, 515}, {1, 1, 77}};
  for (const auto& shape : shapes)
    for (int trans = 0; trans < 4; ++trans)
      for (const Scale s : {Scale{1.0f, 0.0f}, Scale{-0.75f, 1.5f}, Scale{2.0f, -0.0f}}) {
        const GemmCase c{shape[0],   shape[1], shape[2], (trans & 1) != 0, (trans & 2) != 0, DType::F32,
                         DType::F32, s.alpha,  s.beta};
        check_gemm(
            c, [&](const core::GemmArgs& g) { ASSERT_EQ(run(g), GK_SUCCESS) << gk_last_error(); }, "openblas_gemv");
      }
}

TEST_F(OpenBlasGemv, DeclinesWhatIsNotAVectorProduct) {
  std::vector<float> a(64 * 64, 1.0f), b(64 * 64, 1.0f), c(64 * 64, 0.0f);
  core::GemmArgs g = gemm_args(2, 64, 64, a.data(), 64, b.data(), 64, c.data(), 64);
  EXPECT_EQ(run(g), GK_UNSUPPORTED);
  EXPECT_EQ(gk_last_decline(), GK_DECLINE_SHAPE_LIMIT);
  EXPECT_NE(std::string(gk_last_error()).find("m = 2 and n = 64"), std::string::npos) << gk_last_error();
  g.m = 1;
  g.ab_type = g.c_type = DType::BF16;
  EXPECT_EQ(run(g), GK_UNSUPPORTED);
  EXPECT_EQ(gk_last_decline(), GK_DECLINE_DTYPE) << gk_last_error();
}

}  // namespace
}  // namespace gpukern::cpu::test
