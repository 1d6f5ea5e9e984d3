// The CPU GEMM rungs over what they fuse, through the public API (gk_gemm_ex with the rung
// forced): `naive` and `omp_simd` fuse batches and the epilogue (padded, broadcast and
// interleaved items, every activation and bias type; omp_simd once per ISA path),
// `openblas` fuses batches (it loops over the items itself; the epilogue is the core's
// pass, checked by the conformance suite with every rung). Against the double reference
// (gemm_batch_check.hpp); openblas is skipped with the reason where OpenBLAS is absent.
#include "gemm_batch_check.hpp"
#include "support/gemm_desc.hpp"

#include <gpukern/gpukern.h>
#include <gtest/gtest.h>

#include <string>

namespace gpukern::cpu::test {
namespace {

using core::Activation;
using core::DType;

class CpuBatchRungs : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(gk_open("cpu", &handle_), GK_SUCCESS) << gk_last_error(); }
  void TearDown() override {
    if (handle_) gk_close(handle_);
    gk_set_option("GPUKERN_CPU_ISA", nullptr);
  }
  /// Whether rung `name` runs here (GTEST_SKIP-worthy reason in `why_not` when not).
  bool runs_here(const std::string& name, std::string* why_not) {
    int count = 0;
    EXPECT_EQ(gk_variant_count(handle_, GK_OP_GEMM, &count), GK_SUCCESS);
    for (int i = 0; i < count; ++i) {
      gk_variant_info info;
      EXPECT_EQ(gk_get_variant_info(handle_, GK_OP_GEMM, i, &info), GK_SUCCESS);
      if (name != info.name) continue;
      if (!info.runs_here) *why_not = name + " unavailable: " + info.reason;
      return info.runs_here != 0;
    }
    *why_not = "no " + name + " rung in the CPU gemm ladder";
    return false;
  }
  void check_rung(const BatchCase& t, const char* rung) {
    check_batch(
        t,
        [&](const core::GemmArgs& g) {
          const gk_gemm_ex_desc d = gpukern::test::gemm_ex_desc(g, rung);
          ASSERT_EQ(gk_gemm_ex(handle_, &d), GK_SUCCESS) << rung << ": " << gk_last_error();
        },
        rung);
  }
  /// Every layout of the items; with `epilogue`, every activation and bias type.
  void check_all(const char* rung, bool epilogue) {
    int layout = 0;
    for (int64_t batch : {1, 3, 17})
      for (int act = 0; act < 5; ++act, ++layout) {
        BatchCase t;
        t.batch = batch;
        t.m = 21;
        t.n = 34;
        t.k = 29;
        t.ta = layout % 2 == 1;
        t.tb = layout % 3 == 1;
        t.a_items = layout % 4 == 1 ? ItemLayout::Broadcast : ItemLayout::Padded;
        t.b_items = layout % 4 == 2 ? ItemLayout::Broadcast : ItemLayout::Padded;
        t.c_items = layout % 4 == 3 && batch > 1 ? CLayout::Interleaved : CLayout::Apart;
        if (epilogue) {
          t.act = static_cast<Activation>(act);
          t.bias = layout % 3;
          t.bias_per_item = layout % 2 == 0;
        }
        t.beta = layout % 2 == 0 ? 0.0f : 0.5f;
        t.alpha = layout % 5 == 0 ? -1.0f : 1.0f;
        for (DType type : {DType::F32, DType::BF16}) {
          t.ab = t.c = type;
          check_rung(t, rung);
        }
      }
  }

  gk_handle handle_ = nullptr;
};

TEST_F(CpuBatchRungs, Naive) { check_all("naive", true); }

TEST_F(CpuBatchRungs, OmpSimdEveryPath) {
  for (const char* isa : {"avx512", "avx2", "scalar"}) {
    ASSERT_EQ(gk_set_option("GPUKERN_CPU_ISA", isa), GK_SUCCESS);
    SCOPED_TRACE(isa);
    check_all("omp_simd", true);
  }
}

TEST_F(CpuBatchRungs, OpenBlasLoopsOverItems) {
  std::string why_not;
  if (!runs_here("openblas", &why_not)) GTEST_SKIP() << why_not;
  check_all("openblas", false);
}

}  // namespace
}  // namespace gpukern::cpu::test
