// The GEMM rungs launched as programmatic dependents (context.cuh launch_kernel /
// ClusterLaunch with dependent_launch): each must wait for the stream's previous kernel
// before it touches global memory (docs/kernel-contract.md). The previous kernel here lets
// its dependents start at once (griddepcontrol.launch_dependents), sleeps, and only then
// writes the call's A and B (poisoned with NaN until then) and fills C with NaN: a rung
// that read its operands or stored C before the wait would leave NaN or stale values in C.
// A probe launched the same way without the wait shows that the device does start the
// dependent early (else the tests skip: they could not fail).
#include "gemm_harness.cuh"

#include "cuda/arch/grid_dependency.cuh"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace gpukern::test::cuda_gemm {
namespace {

constexpr uint64_t kSleepNs = 200 * 1000;  // far longer than a dependent's launch

__device__ uint64_t global_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/// The previous kernel: lets dependents launch, sleeps, then copies the staged A and B
/// into the call's buffers and writes NaN (all bits set) over C's m x n cells.
__global__ void late_writer(const uint4* a_src, uint4* a_dst, size_t a_vectors, const uint4* b_src, uint4* b_dst,
                            size_t b_vectors, unsigned char* c, int64_t ldc_bytes, int64_t rows, int64_t row_bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
  const uint64_t start = global_ns();
  while (global_ns() - start < kSleepNs) __nanosleep(1000);
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < a_vectors; i += stride) a_dst[i] = a_src[i];
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < b_vectors; i += stride) b_dst[i] = b_src[i];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x)
    for (int64_t j = threadIdx.x; j < row_bytes; j += blockDim.x) c[r * ldc_bytes + j] = 0xff;
}

/// A dependent that does not wait: records the first word of `a` as it finds it.
__global__ void impatient_probe(const uint32_t* a, uint32_t* seen) { *seen = *a; }

/// The bytes of an operand stored `rows` x `ld` elements of `dtype`, in whole 16-byte vectors.
size_t operand_vectors(int64_t rows, int64_t ld, DType dtype) {
  return (size_t(rows * ld) * core::dtype_size(dtype) + 15) / 16;
}

class DependentLaunch : public OnStream, public ::testing::WithParamInterface<std::string> {};

TEST_P(DependentLaunch, WaitsForThePreviousKernelsWrites) {
  const std::string rung = GetParam();
  std::string why_not;
  if (!rung_runs_here(rung, &why_not)) GTEST_SKIP() << why_not;
  const CudaContext* ctx = device_context(stream_, &why_not);
  if (!ctx) GTEST_SKIP() << why_not;
  if (!cuda::dependent_launch(*ctx)) GTEST_SKIP() << "no programmatic dependent launch on this device";

  // Shapes that reach each kernel the rung launches as a dependent: wgmma_tma's own and its
  // C^T kernel (tf32, exact f32), skinny's GEMV, mma and TMA paths, double_buffer's tiles.
  std::vector<Case> cases;
  auto add = [&](int64_t m, int64_t n, int64_t k, int layout, DType ab, DType c, bool tf32) {
    Case x = Case::shape(m, n, k, layout);
    x.ab = ab;
    x.c = c;
    x.tf32 = tf32;
    cases.push_back(x);
  };
  if (rung == "wgmma_tma") {
    for (int layout : {0, 2}) add(256, 256, 256, layout, DType::BF16, DType::BF16, false);
    add(129, 200, 264, 0, DType::F16, DType::F32, false);
    add(256, 256, 256, 0, DType::F32, DType::F32, true);
    add(512, 512, 512, 0, DType::F32, DType::F32, false);
  } else if (rung == "skinny") {
    for (int layout : {0, 2}) {
      add(1, 4096, 1024, layout, DType::F32, DType::F32, false);
      add(4, 1024, 2048, layout, DType::BF16, DType::BF16, false);
      add(16, 4096, 4096, layout, DType::BF16, DType::BF16, false);
    }
  } else {
    for (int layout : {0, 3}) {
      add(128, 128, 128, layout, DType::F32, DType::F32, false);
      add(1000, 1000, 256, layout, DType::F32, DType::F32, false);
    }
  }

  uint32_t* seen = nullptr;
  ASSERT_EQ(cudaMalloc(&seen, sizeof(uint32_t)), cudaSuccess);
  uint64_t seed = 7;
  int ran = 0, early = 0;
  for (const Case& c : cases) {
    Problem problem(c, stream_, ++seed);
    const core::GemmArgs& args = problem.args();
    const size_t a_vectors = operand_vectors(c.trans_a ? c.k : c.m, args.lda, c.ab);
    const size_t b_vectors = operand_vectors(c.trans_b ? c.n : c.k, args.ldb, c.ab);
    // Stage the operands and poison them: only the late writer puts them back.
    void *a_stage = nullptr, *b_stage = nullptr;
    ASSERT_EQ(cudaMalloc(&a_stage, a_vectors * 16), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&b_stage, b_vectors * 16), cudaSuccess);
    auto* a = const_cast<void*>(args.a);
    auto* b = const_cast<void*>(args.b);
    ASSERT_EQ(cudaMemcpyAsync(a_stage, a, a_vectors * 16, cudaMemcpyDeviceToDevice, stream_), cudaSuccess);
    ASSERT_EQ(cudaMemcpyAsync(b_stage, b, b_vectors * 16, cudaMemcpyDeviceToDevice, stream_), cudaSuccess);
    ASSERT_EQ(cudaMemsetAsync(a, 0xff, a_vectors * 16, stream_), cudaSuccess);
    ASSERT_EQ(cudaMemsetAsync(b, 0xff, b_vectors * 16, stream_), cudaSuccess);
    const int64_t c_elem = int64_t(core::dtype_size(c.c));
    const auto launch_writer = [&] {
      late_writer<<<64, 256, 0, stream_>>>(static_cast<const uint4*>(a_stage), static_cast<uint4*>(a), a_vectors,
                                           static_cast<const uint4*>(b_stage), static_cast<uint4*>(b), b_vectors,
                                           static_cast<unsigned char*>(args.c), args.ldc * c_elem, c.m, c.n * c_elem);
    };
    // The probe: started early, it finds A still poisoned.
    launch_writer();
    cuda::launch_kernel(true, impatient_probe, dim3(1), 32, 0, stream_, static_cast<const uint32_t*>(args.a), seen);
    uint32_t probe = 0;
    ASSERT_EQ(cudaMemcpyAsync(&probe, seen, sizeof probe, cudaMemcpyDeviceToHost, stream_), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    if (probe == 0xffffffffu) ++early;
    // The call itself, right behind the writer (A and B poisoned again first).
    ASSERT_EQ(cudaMemsetAsync(a, 0xff, a_vectors * 16, stream_), cudaSuccess);
    ASSERT_EQ(cudaMemsetAsync(b, 0xff, b_vectors * 16, stream_), cudaSuccess);
    launch_writer();
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);
    std::string message;
    const gk_status status = run_rung(rung, args, stream_, &message);
    ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    if (status != GK_UNSUPPORTED) {
      ASSERT_EQ(status, GK_SUCCESS) << rung << ", " << c.describe() << ": " << message;
      const Outcome o = problem.check();
      EXPECT_TRUE(o.passes(error_bound(c))) << rung << ", " << c.describe() << ": " << o.describe();
      ++ran;
    }
    cudaFree(a_stage);
    cudaFree(b_stage);
  }
  cudaFree(seen);
  if (early == 0) GTEST_SKIP() << "the device never started a dependent before its previous kernel ended";
  EXPECT_GE(ran, static_cast<int>(cases.size()) - 1) << "the rung declined more than one case";
}

INSTANTIATE_TEST_SUITE_P(Rungs, DependentLaunch, ::testing::Values("wgmma_tma", "skinny", "double_buffer"));

}  // namespace
}  // namespace gpukern::test::cuda_gemm
