// The TMA host helpers (src/cuda/gemm/tensor_core/tma_host.cu): encode_tensor_map keeps the
// maps it encoded last per thread, so a repeated call skips the driver. Each map it returns,
// found or encoded, must be the bytes a fresh encoding of the same operand gives: the test
// walks keys that differ from a base in one field each (type, pointer, pitch, rows,
// columns, walk, box rows, batch items, batch stride), more of them than the cache holds,
// twice over, and compares every answer with the map encoded on a thread of its own (an
// empty cache). A key that left out a field would return the base's map for its variant.
#include "gemm_harness.cuh"

#include "cuda/gemm/tensor_core/tma_host.cuh"

#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace gpukern::test::cuda_gemm {
namespace {

struct MapArgs {
  CUtensorMapDataType type;
  std::size_t elem_bytes;
  const void* ptr;
  int64_t ld;
  int rows, cols;
  gemm::TmaWalk walk;
  int box_rows;
  gemm::TmaItems batch;
};

CUtensorMap encode(const MapArgs& a) {
  return gemm::encode_tensor_map(a.type, a.elem_bytes, a.ptr, a.ld, a.rows, a.cols, a.walk, a.box_rows, a.batch);
}

TEST(TmaHost, RepeatedMapsAreTheFreshEncoding) {
  std::string why_not;
  if (!cuda_device_present(&why_not)) GTEST_SKIP() << why_not;
  void* mem = nullptr;
  ASSERT_EQ(cudaMalloc(&mem, 1 << 22), cudaSuccess);
  char* base_ptr = static_cast<char*>(mem);
  const MapArgs base{CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, base_ptr, 512, 256, 384, gemm::TmaWalk::AlongRows, 64, {}};
  std::vector<MapArgs> keys = {base};
  auto vary = [&](auto change) {
    MapArgs a = base;
    change(a);
    keys.push_back(a);
  };
  vary([](MapArgs& a) { a.type = CU_TENSOR_MAP_DATA_TYPE_FLOAT16; });
  vary([&](MapArgs& a) { a.ptr = base_ptr + 4096; });
  vary([](MapArgs& a) { a.ld = 1024; });
  vary([](MapArgs& a) { a.rows = 200; });
  vary([](MapArgs& a) { a.cols = 320; });
  vary([](MapArgs& a) { a.walk = gemm::TmaWalk::AcrossRows; });
  vary([](MapArgs& a) { a.box_rows = 32; });
  vary([](MapArgs& a) { a.batch = {3, 512 * 256}; });
  vary([](MapArgs& a) { a.batch = {3, 512 * 300}; });
  vary([](MapArgs& a) { a.batch = {4, 512 * 256}; });
  vary([](MapArgs& a) {
    a.type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    a.elem_bytes = 4;
  });
  ASSERT_GT(keys.size(), 8u) << "more keys than the cache holds, so entries are replaced";

  std::vector<CUtensorMap> fresh(keys.size());
  int device = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  std::string thread_error;
  std::thread([&] {
    try {
      // This thread's cache is empty; the driver needs the device's context current here too.
      if (cudaSetDevice(device) != cudaSuccess || cudaFree(nullptr) != cudaSuccess)
        throw std::runtime_error("no context");
      for (std::size_t i = 0; i < keys.size(); ++i) fresh[i] = encode(keys[i]);
    } catch (const std::exception& e) {
      thread_error = e.what();
    }
  }).join();
  ASSERT_EQ(thread_error, "");
  for (std::size_t i = 1; i < keys.size(); ++i)
    EXPECT_NE(std::memcmp(&fresh[i], &fresh[0], sizeof(CUtensorMap)), 0) << "variant " << i << " encodes as the base";

  for (int pass = 0; pass < 2; ++pass)
    for (std::size_t i = 0; i < keys.size(); ++i) {
      const CUtensorMap base_map = encode(base);  // the base between every two, so it is always cached
      EXPECT_EQ(std::memcmp(&base_map, &fresh[0], sizeof(CUtensorMap)), 0) << "pass " << pass << " base";
      const CUtensorMap map = encode(keys[i]);
      EXPECT_EQ(std::memcmp(&map, &fresh[i], sizeof(CUtensorMap)), 0) << "pass " << pass << " key " << i;
    }
  cudaFree(mem);
}

// L2 fetches 256 bytes around a missed box row only where the kernel's next stage reads
// the rest of them: rows walked along K that start on 256-byte lines.
TEST(TmaHost, L2PromotionFollowsTheWalkAndThePitch) {
  using gemm::TmaWalk;
  EXPECT_EQ(gemm::tma_l2_promotion(TmaWalk::AlongRows, 8192), CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
  EXPECT_EQ(gemm::tma_l2_promotion(TmaWalk::AlongRows, 256), CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
  // 1000 and 3000 bf16 elements a row: rows off the 256-byte lines.
  EXPECT_EQ(gemm::tma_l2_promotion(TmaWalk::AlongRows, 2000), CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
  EXPECT_EQ(gemm::tma_l2_promotion(TmaWalk::AlongRows, 6000), CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
  EXPECT_EQ(gemm::tma_l2_promotion(TmaWalk::AlongRows, 128 * 3), CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
  // Across rows (an N-contiguous weight, C) whatever the pitch.
  EXPECT_EQ(gemm::tma_l2_promotion(TmaWalk::AcrossRows, 256512), CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
  EXPECT_EQ(gemm::tma_l2_promotion(TmaWalk::AcrossRows, 8192), CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
  EXPECT_EQ(gemm::tma_l2_promotion(TmaWalk::AcrossRows, 2000), CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
}

}  // namespace
}  // namespace gpukern::test::cuda_gemm
