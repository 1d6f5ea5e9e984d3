// The line between the two sm_90 parts whose measurements differ: the H100 SXM (3.35 TB/s of
// memory bandwidth) and the H200 (4.8 TB/s, the same 132 SMs). The H200's bandwidth speeds up
// the vendor's memory-bound kernels more than some of ours, so the measured auto table
// (auto_table.hpp) and wgmma_tma's tile table (12_wgmma_tma.cu) have rows for one side of it,
// read against core::DeviceArch::mem_gbps. Host data only.
#pragma once

namespace gpukern::cuda {

/// Peak memory bandwidth in GB/s from which a device counts as the H200's side.
constexpr int kHighBandwidthGbps = 4000;

}  // namespace gpukern::cuda
