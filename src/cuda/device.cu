// The CUDA part of the backend glue: vendor:: of src/cuda/context.cuh (the HIP part is
// src/hip/device.hip). The glue itself (device discovery, streams, memory, timers,
// dispatch) is backend.cu, shared by both modules; here is only what differs on NVIDIA:
// the backend's name and note, why no device is usable, and the device description.
#include "cuda/context.cuh"
#include "cuda/measurement_knob.hpp"

#include <string>

namespace gpukern::cuda {
namespace {

/// "13.0" from 13000.
std::string version_string(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

/// FP32 lanes per SM: 64 on the data-centre Ampere part (sm_80), 128 on every other
/// architecture we build for (sm_86, sm_89, sm_90, sm_120).
int fp32_lanes_per_sm(int arch) { return arch == 80 ? 64 : 128; }

/// Dense f16 tensor-core FLOP per clock per SM with f32 accumulation: an estimate for
/// the device report (A100: 2048, H100: 4096, GeForce Ampere/Ada/Blackwell: 1024).
int tensor_flops_per_clock_per_sm(int arch) {
  if (arch >= 90 && arch < 100) return 4096;
  if (arch == 80) return 2048;
  if (arch == 100 || arch == 103) return 8192;
  return 1024;
}

/// Why no device can be used, in words, for gpukern-info.
std::string describe_count_error(cudaError_t e) {
  switch (e) {
    case cudaErrorNoDevice:
      return "no CUDA device found";
    case cudaErrorInsufficientDriver:
      return "the NVIDIA driver is missing or older than this build's CUDA runtime (" + version_string(CUDART_VERSION) +
             ")";
    case cudaErrorStubLibrary:
      return "only the CUDA driver stub library was found (no NVIDIA driver installed)";
    default:
      return std::string("cudaGetDeviceCount failed: ") + cudaGetErrorString(e);
  }
}

}  // namespace

namespace vendor {

const char* backend_name() { return "cuda"; }
const char* module_note() { return "SIMT and tensor-core GEMM ladders, softmax ladder; cuBLAS and cuDNN references"; }

std::string no_device_reason(cudaError_t e) {
  return e == cudaSuccess ? "no CUDA device found" : describe_count_error(e);
}

DeviceDescription describe_device(int index) {
  cudaDeviceProp prop{};
  GK_GPU_CHECK(cudaGetDeviceProperties(&prop, index));
  int clock_khz = 0, memory_clock_khz = 0;
  GK_GPU_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, index));
  GK_GPU_CHECK(cudaDeviceGetAttribute(&memory_clock_khz, cudaDevAttrMemoryClockRate, index));
  DeviceDescription d;
  d.name = prop.name;
  d.arch.vendor = core::Vendor::Nvidia;
  d.arch.cc = prop.major * 10 + prop.minor;
  d.arch.name = "sm_" + std::to_string(d.arch.cc);
  d.compute_units = prop.multiProcessorCount;
  d.warp_size = prop.warpSize;
  d.smem_per_block_optin = prop.sharedMemPerBlockOptin;
  d.l2_bytes = static_cast<size_t>(prop.l2CacheSize);
  d.cluster_launch = prop.major >= 9;
  d.memory_bytes = prop.totalGlobalMem;
  d.clock_mhz = clock_khz / 1000;
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  d.driver_version = version_string(driver);
  d.runtime_version = version_string(runtime);
  const double ghz = clock_khz / 1e6;
  d.peak_f32_gflops = double(d.compute_units) * fp32_lanes_per_sm(d.arch.cc) * 2.0 * ghz;
  d.peak_tensor_gflops = double(d.compute_units) * tensor_flops_per_clock_per_sm(d.arch.cc) * ghz;
  // Double data rate: two transfers per memory clock over the whole bus.
  d.peak_bandwidth_gbps = 2.0 * memory_clock_khz * 1e3 * (prop.memoryBusWidth / 8.0) / 1e9;
  d.arch.mem_gbps = static_cast<int>(d.peak_bandwidth_gbps + 0.5);
  return d;
}

}  // namespace vendor

/// GPUKERN_PDL=off|on, read once per process (a measurement knob, measurement_knob.hpp);
/// on when unset.
bool programmatic_launch_enabled() {
  static const bool enabled = knob_choice("GPUKERN_PDL", knob_value("GPUKERN_PDL"), {"off", "on"}) != 1;
  return enabled;
}

}  // namespace gpukern::cuda
