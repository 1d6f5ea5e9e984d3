// The line between the two sm_90 parts whose measurements differ: the H100 SXM (3.35 TB/s of
// memory bandwidth) and the H200 (4.8 TB/s, the same 132 SMs). The H200's bandwidth speeds up
// the vendor's memory-bound kernels more than some of ours, so the measured auto table
// (auto_table.hpp) and wgmma_tma's tile table (12_wgmma_tma.cu) have rows for one side of it,
// read against core::DeviceArch::mem_gbps. Host data only.
#pragma once

namespace gpukern::cuda {

/// Peak memory bandwidth in GB/s from which a device counts as the H200's side.
constexpr int kHighBandwidthGbps = 4000;

/// Whether wgmma_tma's own rules take a device's H200-measured rows. A bandwidth of 0 (not
/// known) counts as below the line: the rules keep the H100-measured choice. (The auto
/// table's entries are bounded through core::ArchSupport instead, which an unknown
/// bandwidth meets.)
constexpr bool high_bandwidth(int mem_gbps) { return mem_gbps >= kHighBandwidthGbps; }

}  // namespace gpukern::cuda
