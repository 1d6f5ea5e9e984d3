// The HIP part of the backend glue: vendor:: of src/cuda/context.cuh. The glue itself
// (device discovery, streams, memory, timers, dispatch) is src/cuda/backend.cu,
// compiled by this module through portable.cuh; here is only what differs on AMD:
// the backend's name and note, why no device is usable, and the device description.
#include "cuda/context.cuh"

#include <unistd.h>

#include <cstdlib>
#include <string>

#ifndef GPUKERN_HIP_TARGETS
#error "GPUKERN_HIP_TARGETS (the offload targets, comma-separated) comes from src/hip/CMakeLists.txt"
#endif

namespace gpukern::cuda::vendor {
namespace {

/// "5.2.21153" from HIP's version number 50221153 (major * 10^7 + minor * 10^5 + patch).
std::string version_string(int v) {
  return std::to_string(v / 10000000) + "." + std::to_string(v / 100000 % 100) + "." + std::to_string(v % 100000);
}

/// "gfx90a" from "gfx90a:sramecc+:xnack-" (target features do not change the code object we load).
std::string target_name(const char* gcn_arch_name) {
  const std::string full = gcn_arch_name;
  return full.substr(0, full.find(':'));
}

/// The gfx number read as hex (gfx90a -> 0x90a, gfx1030 -> 0x1030): ordered within a
/// family; CudaContext::arch.gfx on HIP.
int arch_number(const std::string& target) {
  return target.rfind("gfx", 0) == 0 ? static_cast<int>(std::strtol(target.c_str() + 3, nullptr, 16)) : 0;
}

bool built_for(const std::string& target) {
  const std::string targets = "," GPUKERN_HIP_TARGETS ",";
  return targets.find("," + target + ",") != std::string::npos;
}

/// FP32 FLOP per clock per compute unit: 64 lanes of FMA, doubled on CDNA2/3 by packed
/// FP32 (v_pk_fma_f32: MI250X 95.7 TFLOP/s = 220 CUs x 1.7 GHz x 256).
int f32_flops_per_clock_per_cu(int arch) { return arch == 0x90a || (arch >= 0x940 && arch < 0x1000) ? 256 : 128; }

/// Dense f16 matrix-core FLOP per clock per CU with f32 accumulation (MI250X: 383
/// TFLOP/s = 220 x 1.7 GHz x 1024; MI300X: 1307 = 304 x 2.1 GHz x 2048); 0 where there are
/// no matrix cores (RDNA2).
int matrix_flops_per_clock_per_cu(int arch) {
  if (arch == 0x90a || arch == 0x908) return 1024;
  if (arch >= 0x940 && arch < 0x1000) return 2048;
  return 0;
}

}  // namespace

const char* backend_name() { return "hip"; }

const char* module_note() {
  return "compile-verified only: shares the CUDA-tested kernel sources; not run on AMD hardware";
}

std::string no_device_reason(hipError_t e) {
  std::string why = "no HIP device: ";
  why += e == hipSuccess ? std::string("the ROCm runtime found no AMD GPU")
                         : std::string("hipGetDeviceCount returned ") + hipGetErrorName(e);
  if (::access("/dev/kfd", F_OK) != 0) why += " (no /dev/kfd: no AMD GPU or amdgpu kernel driver on this machine)";
  return why;
}

DeviceDescription describe_device(int index) {
  hipDeviceProp_t prop{};
  GK_GPU_CHECK(hipGetDeviceProperties(&prop, index));
  DeviceDescription d;
  d.name = prop.name;
  d.arch.vendor = core::Vendor::Amd;
  d.arch.name = target_name(prop.gcnArchName);
  // A device of another ISA finds no code object in this module: every launch would fail.
  if (!built_for(d.arch.name))
    throw core::Error(core::Status::Unavailable, "HIP device " + std::to_string(index) + " is " + d.arch.name +
                                                     "; this build has code for " GPUKERN_HIP_TARGETS
                                                     " only (configure with GPUKERN_HIP_ARCHS)");
  d.arch.gfx = arch_number(d.arch.name);
  d.compute_units = prop.multiProcessorCount;
  d.warp_size = prop.warpSize;
  d.smem_per_block_optin = prop.sharedMemPerBlock;  // LDS per workgroup (64 KB), no opt-in on AMD
  d.l2_bytes = static_cast<size_t>(prop.l2CacheSize);
  d.cluster_launch = false;
  d.memory_bytes = prop.totalGlobalMem;
  d.clock_mhz = prop.clockRate / 1000;
  int driver = 0, runtime = 0;
  if (hipDriverGetVersion(&driver) == hipSuccess) d.driver_version = version_string(driver);
  if (hipRuntimeGetVersion(&runtime) == hipSuccess) d.runtime_version = version_string(runtime);
  const double ghz = prop.clockRate / 1e6;
  d.peak_f32_gflops = double(d.compute_units) * f32_flops_per_clock_per_cu(d.arch.gfx) * ghz;
  d.peak_tensor_gflops = double(d.compute_units) * matrix_flops_per_clock_per_cu(d.arch.gfx) * ghz;
  // Double data rate: two transfers per memory clock over the whole bus.
  d.peak_bandwidth_gbps = 2.0 * prop.memoryClockRate * 1e3 * (prop.memoryBusWidth / 8.0) / 1e9;
  d.arch.mem_gbps = static_cast<int>(d.peak_bandwidth_gbps + 0.5);
  return d;
}

}  // namespace gpukern::cuda::vendor
