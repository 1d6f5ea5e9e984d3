// gemm_launch_cost: what a launch costs the GPU before any GEMM work, for comparing with
// a kernel's own timeline (notes/llm-gemm.md, "A CTA's fixed cost, measured from inside").
// Near-empty kernels (one global store a CTA) launched with the wgmma_tma kernels' shapes:
// 8 or 128 CTAs of 256 or 384 threads, 0 to 227 KB of dynamic shared memory, with and
// without three CUtensorMap parameters. Prints the median and minimum of 30 launches timed
// with CUDA events, on a warm GPU and after a 512 MiB write (the bench's flush); run it
// under Nsight Compute (`ncu --metrics gpu__time_duration.sum`) for the GPU-side durations.
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

namespace {

__global__ void empty_kernel(unsigned long long* out) {
  if (threadIdx.x == 0) out[blockIdx.x] = clock64();
}

__global__ void empty_kernel_maps(const __grid_constant__ CUtensorMap a, const __grid_constant__ CUtensorMap b,
                                  const __grid_constant__ CUtensorMap c, unsigned long long* out) {
  if (threadIdx.x == 0) out[blockIdx.x] = clock64() + a.opaque[0] + b.opaque[1] + c.opaque[2];
}

__global__ void flush_kernel(int4* p, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = make_int4(static_cast<int>(i), 0, 0, 0);
}

struct Case {
  const char* name;
  int smem, grid, block;
  bool maps;
};

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("gemm_launch_cost: no CUDA device\n");
    return 0;
  }
  unsigned long long* out = nullptr;
  int4* flush = nullptr;
  const size_t flush_n = (size_t(512) << 20) / sizeof(int4);
  if (cudaMalloc(&out, 1 << 20) != cudaSuccess || cudaMalloc(&flush, flush_n * sizeof(int4)) != cudaSuccess) {
    std::printf("gemm_launch_cost: cudaMalloc failed\n");
    return 1;
  }
  cudaFuncSetAttribute(empty_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024);
  cudaFuncSetAttribute(empty_kernel_maps, cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024);
  const CUtensorMap map{};
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  const std::vector<Case> cases = {{"8 x 256, 0 KB", 0, 8, 256, false},
                                   {"8 x 256, 100 KB", 100 << 10, 8, 256, false},
                                   {"8 x 256, 164 KB", 164 << 10, 8, 256, false},
                                   {"8 x 256, 214 KB", 214 << 10, 8, 256, false},
                                   {"8 x 256, 227 KB", 227 << 10, 8, 256, false},
                                   {"128 x 384, 214 KB", 214 << 10, 128, 384, false},
                                   {"8 x 256, 214 KB, 3 maps", 214 << 10, 8, 256, true}};
  for (int flushed = 0; flushed < 2; ++flushed)
    for (const Case& c : cases) {
      std::vector<float> us;
      for (int r = 0; r < 30; ++r) {
        if (flushed) flush_kernel<<<528, 512>>>(flush, flush_n);
        cudaEventRecord(start);
        if (c.maps)
          empty_kernel_maps<<<c.grid, c.block, c.smem>>>(map, map, map, out);
        else
          empty_kernel<<<c.grid, c.block, c.smem>>>(out);
        cudaEventRecord(stop);
        cudaEventSynchronize(stop);
        float ms = 0;
        cudaEventElapsedTime(&ms, start, stop);
        us.push_back(ms * 1000.0f);
      }
      std::sort(us.begin(), us.end());
      std::printf("%-26s %s: event us median %.2f min %.2f (%s)\n", c.name, flushed ? "after a flush" : "warm        ",
                  us[us.size() / 2], us[0], cudaGetErrorString(cudaGetLastError()));
    }
  cudaFree(out);
  cudaFree(flush);
  return 0;
}
