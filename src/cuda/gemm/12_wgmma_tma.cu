// Rung 12 `wgmma_tma`: Hopper (sm_90a) tensor-core GEMM. f16/bf16 in every transpose,
// tf32 for K-major A and B; f32 accumulation.
//
// Change from 11 (mma_multistage): the three jobs that mma.sync kernels give every
// warp are split and handed to the hardware units built for them on Hopper.
//  * Loads: the tensor memory accelerator (TMA) copies each 64-row box of an operand
//    tile from global to shared memory in one instruction issued by one thread, in the
//    128-byte swizzled layout the tensor cores read without bank conflicts, zero-filling
//    whatever lies outside the matrix (odd shapes need no edge code). Completion is
//    counted in bytes on an mbarrier: no cp.async groups, no address arithmetic per thread.
//  * Math: wgmma (HGMMA in SASS) lets a warpgroup of 4 warps multiply a 64x256x16 block
//    straight out of shared memory, asynchronously, with the accumulators in registers;
//    no ldmatrix, no fragment registers. It reaches the H100's dense rate; mma.sync
//    reaches about two thirds of it.
//  * Warp specialization: one producer warpgroup (40 registers after setmaxnreg) only
//    issues TMA; two consumer warpgroups (232 registers) only issue wgmma, each owning
//    64x256 of the 128x256 block tile. A kStages-deep ring of shared-memory stages with
//    a "full" and an "empty" mbarrier per stage lets loads run ahead of the math.
//  * Persistence: one CTA per SM loops over tiles in an L2-grouped order; the producer
//    starts the next tile's loads while the consumers run the epilogue of this one.
//  * Clusters of 2 CTAs along M share the B tile: each CTA loads half of it and TMA
//    multicasts it to both, halving B's L2 traffic (the L2 -> SM bandwidth, not the
//    tensor cores, is the next limit at 128x256 tiles).
// Operand rows that TMA cannot address (row pitch not a multiple of 16 bytes) go
// through the same pipeline with the producer warpgroup copying element by element
// into the same swizzled layout (no clusters): slower, but far above the rungs below.
//
// Measured (H100 SXM, 2026-11-21): see the report table; filled in from
// scripts/tc_gemm_device.cu.
#include "cuda/gemm/tensor_core.cuh"
#include "cuda/gemm/tensor_core_common.cuh"
#include "cuda/gemm/tensor_core_sm90.cuh"

#include <cuda.h>          // CUtensorMap and its enums (types only: the library never links -lcuda)
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled

#include <array>
#include <atomic>

namespace gpukern::cuda::gemm {
namespace {

/// Tile configuration of the warp-specialized kernel. Every operand tile is a set of
/// 64-row "boxes" of 128-byte rows (64 f16/bf16 or 32 f32 elements of K when K-major,
/// 64 elements of M or N when MN-major): one TMA box, one swizzle pattern, 8 KB.
template <int kStages_, int kClusterM_, int kProducerRegs_, int kConsumerRegs_>
struct WgmmaConfig {
  static constexpr int kBlockM = 128, kBlockN = 256;
  static constexpr int kConsumers = 2;   // consumer warpgroups, 64 rows of the tile each
  static constexpr int kStages = kStages_;
  static constexpr int kClusterM = kClusterM_;
  static constexpr int kGroupM = 16;     // tile rows per L2 raster group
  static constexpr int kProducerRegs = kProducerRegs_, kConsumerRegs = kConsumerRegs_;

  static constexpr int kRowBytes = 128;  // one 128-byte swizzle row
  static constexpr int kBoxRows = 64;
  static constexpr int kBoxBytes = kBoxRows * kRowBytes;
  static constexpr int kABoxes = kBlockM / kBoxRows, kBBoxes = kBlockN / kBoxRows;
  static constexpr int kStageBytes = (kABoxes + kBBoxes) * kBoxBytes;
  static constexpr int kThreads = (kConsumers + 1) * 128;
  static constexpr int kBarrierBytes = 2 * kStages * 8;
  static constexpr int kSmemBytes = kStages * kStageBytes + kBarrierBytes + 1024;  // + alignment slack

  static_assert(kBlockM == 64 * kConsumers, "each consumer warpgroup owns one m64 slice of the tile");
  static_assert(kBlockN == 256, "the consumers issue m64n256 wgmma: the tile is 256 wide");
  static_assert(kBlockM % kBoxRows == 0 && kBlockN % kBoxRows == 0, "tiles are whole 64-row boxes");
  static_assert(kBBoxes % kClusterM == 0, "the CTAs of a cluster split B's boxes evenly");
  static_assert(kGroupM % kClusterM == 0, "an L2 raster group holds whole clusters");
  static_assert(kStageBytes % 1024 == 0, "128-byte swizzle needs every box 1024-byte aligned");
  static_assert(kSmemBytes <= 227 * 1024, "an H100 block gets at most 227 KB of shared memory");
  static_assert(kConsumers * kConsumerRegs * 128 + kProducerRegs * 128 <= 65536,
                "the warpgroups' registers must fit the SM's 64K register file");
};

// The H100 table: TMA with 2-CTA clusters (one issuing thread: the producer needs few
// registers); the element-copy producer without clusters, with registers for its
// 128 threads' address arithmetic.
using TmaConfig = WgmmaConfig<4, 2, 40, 232>;
using CopyConfig = WgmmaConfig<4, 1, 56, 224>;

/// The persistent schedule: cluster tiles (kClusterM block tiles stacked along M)
/// visited in L2 raster order, and K blocks per tile.
struct WgmmaSchedule {
  int cluster_tiles_m = 0, tiles_n = 0, total = 0, k_blocks = 0;
};

template <class T>
constexpr int kElemsPerRow = 128 / static_cast<int>(sizeof(T));  // K elements per stage (BK)

/// Element-copy producer: copies one operand tile (kBoxes boxes) into the swizzled
/// layout TMA would have written, zero-filling outside the matrix. Used only when the
/// operand's row pitch rules TMA out, so every element is read on its own.
template <class Cfg, class T, bool kKMajor, int kBoxes>
__device__ __forceinline__ void copy_operand_tile(uint8_t* dst, const T* src, int64_t ld,
                                                  int mn_extent, int k_extent, int mn0, int k0,
                                                  int thread) {
  constexpr int kPerChunk = 16 / static_cast<int>(sizeof(T));
  constexpr int kChunksPerRow = Cfg::kRowBytes / 16;
  constexpr int kChunks = kBoxes * Cfg::kBoxRows * kChunksPerRow;
  static_assert(kChunks % 128 == 0, "the producer warpgroup copies whole rounds of chunks");
#pragma unroll 2
  for (int idx = thread; idx < kChunks; idx += 128) {
    const int chunk = idx % kChunksPerRow;
    const int r = (idx / kChunksPerRow) % Cfg::kBoxRows;
    const int box = idx / (kChunksPerRow * Cfg::kBoxRows);
    // Storage coordinates: (mn, k) when K-major, (k, mn) otherwise.
    const int row = kKMajor ? mn0 + box * Cfg::kBoxRows + r : k0 + r;
    const int col = kKMajor ? k0 + chunk * kPerChunk : mn0 + box * Cfg::kBoxRows + chunk * kPerChunk;
    const int rows = kKMajor ? mn_extent : k_extent, cols = kKMajor ? k_extent : mn_extent;
    const T* g = src + static_cast<int64_t>(row) * ld + col;
    T e[kPerChunk];
#pragma unroll
    for (int j = 0; j < kPerChunk; ++j) {
      float v = (row < rows && col + j < cols) ? gpu::to_float(g[j]) : 0.0f;
      if constexpr (sizeof(T) == 4) {  // tf32: round to nearest like the TMA path's conversion
        uint32_t t;
        asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(t) : "f"(v));
        v = __uint_as_float(t);
      }
      e[j] = gpu::from_float<T>(v);
    }
    uint4 packed;
    memcpy(&packed, e, sizeof(packed));
    *reinterpret_cast<uint4*>(dst + box * Cfg::kBoxBytes + r * Cfg::kRowBytes + ((chunk ^ (r & 7)) << 4)) =
        packed;
  }
}

template <class Cfg, class T, bool kAKMajor, bool kBKMajor, bool kTma>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    wgmma_tma_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                     TcProblem p, WgmmaSchedule sched) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  static_assert(sizeof(T) == 2 || (kAKMajor && kBKMajor), "wgmma reads 32-bit operands K-major only");
  static_assert(kTma || Cfg::kClusterM == 1, "the element-copy producer runs without clusters");
  constexpr int kCluster = Cfg::kClusterM;
  constexpr int kBK = kElemsPerRow<T>;
  constexpr int kKSteps = sizeof(T) == 2 ? kBK / 16 : kBK / 8;  // wgmma K per instruction: 16 or 8
  // Descriptor advance per K step: 32 bytes along a K-major row; 16 rows of 128 bytes
  // when MN-major (K runs down the rows of a box).
  constexpr uint32_t kAStep = kAKMajor ? 32 : 16 * Cfg::kRowBytes;
  constexpr uint32_t kBStep = kBKMajor ? 32 : 16 * Cfg::kRowBytes;
  // Leading byte offset: unused for K-major 128-byte swizzle (the K step fits in a row);
  // for MN-major it is the distance between 64-element boxes along M/N. Stride byte
  // offset: 8 rows of 128 bytes, the swizzle atom.
  constexpr uint32_t kALbo = kAKMajor ? 16 : Cfg::kBoxBytes, kBLbo = kBKMajor ? 16 : Cfg::kBoxBytes;
  constexpr uint32_t kSbo = 8 * Cfg::kRowBytes;

  extern __shared__ uint8_t smem_raw[];
  const uint32_t raw_addr = sm90::smem_addr(smem_raw);
  const uint32_t base = (raw_addr + 1023) & ~1023u;
  uint8_t* const smem = smem_raw + (base - raw_addr);
  auto a_tile = [&](int s) { return base + s * Cfg::kStageBytes; };
  auto b_tile = [&](int s) { return base + s * Cfg::kStageBytes + Cfg::kABoxes * Cfg::kBoxBytes; };
  const uint32_t full_bar = base + Cfg::kStages * Cfg::kStageBytes;  // kStages x 8 bytes
  const uint32_t empty_bar = full_bar + Cfg::kStages * 8;

  const int warpgroup = static_cast<int>(threadIdx.x) / 128;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int warp_in_group = (static_cast<int>(threadIdx.x) / 32) % 4;
  const uint32_t rank = kCluster > 1 ? sm90::cluster_cta_rank() : 0;
  const int cluster_id = static_cast<int>(blockIdx.x) / kCluster;
  const int clusters = static_cast<int>(gridDim.x) / kCluster;

  if (threadIdx.x == 0) {
    for (int s = 0; s < Cfg::kStages; ++s) {
      sm90::mbar_init(full_bar + 8 * s, kTma ? 1 : 128);
      // One arrival per consumer warp of every CTA that reads this CTA's multicast.
      sm90::mbar_init(empty_bar + 8 * s, Cfg::kConsumers * 4 * kCluster);
    }
    sm90::fence_barrier_init();
  }
  if constexpr (kCluster > 1) sm90::cluster_sync();  // peers arrive on and write to our barriers
  else __syncthreads();

  auto tile_origin = [&](int t, int& m0, int& n0) {
    const TileCoord c = tile_coords(t, sched.cluster_tiles_m, sched.tiles_n, Cfg::kGroupM / kCluster);
    m0 = (c.m * kCluster + static_cast<int>(rank)) * Cfg::kBlockM;
    n0 = c.n * Cfg::kBlockN;
  };

  if (warpgroup == 0) {
    // ---------------- producer ----------------
    sm90::warpgroup_reg_dealloc<Cfg::kProducerRegs>();
    if constexpr (kTma) {
      if (threadIdx.x == 0) {
        sm90::prefetch_tensor_map(&map_a);
        sm90::prefetch_tensor_map(&map_b);
        int stage = 0;
        uint32_t phase = 0;
        for (int t = cluster_id; t < sched.total; t += clusters) {
          int m0, n0;
          tile_origin(t, m0, n0);
          for (int kb = 0; kb < sched.k_blocks; ++kb) {
            const int k0 = kb * kBK;
            const uint32_t full = full_bar + 8 * stage;
            sm90::mbar_wait(empty_bar + 8 * stage, phase ^ 1);  // every reader released the stage
            sm90::mbar_arrive_expect_tx(full, Cfg::kStageBytes);
#pragma unroll
            for (int i = 0; i < Cfg::kABoxes; ++i) {
              const int mn = m0 + i * Cfg::kBoxRows;
              sm90::tma_load_2d(a_tile(stage) + i * Cfg::kBoxBytes, &map_a, full, kAKMajor ? k0 : mn,
                                kAKMajor ? mn : k0);
            }
#pragma unroll
            for (int i = static_cast<int>(rank); i < Cfg::kBBoxes; i += kCluster) {
              const int mn = n0 + i * Cfg::kBoxRows;
              const uint32_t dst = b_tile(stage) + i * Cfg::kBoxBytes;
              if constexpr (kCluster > 1)
                sm90::tma_load_2d_multicast(dst, &map_b, full, kBKMajor ? k0 : mn, kBKMajor ? mn : k0,
                                            static_cast<uint16_t>((1u << kCluster) - 1));
              else
                sm90::tma_load_2d(dst, &map_b, full, kBKMajor ? k0 : mn, kBKMajor ? mn : k0);
            }
            if (++stage == Cfg::kStages) { stage = 0; phase ^= 1; }
          }
        }
      }
    } else {
      const int thread = static_cast<int>(threadIdx.x);
      int stage = 0;
      uint32_t phase = 0;
      for (int t = cluster_id; t < sched.total; t += clusters) {
        int m0, n0;
        tile_origin(t, m0, n0);
        for (int kb = 0; kb < sched.k_blocks; ++kb) {
          const int k0 = kb * kBK;
          sm90::mbar_wait(empty_bar + 8 * stage, phase ^ 1);
          uint8_t* const a_dst = smem + stage * Cfg::kStageBytes;
          copy_operand_tile<Cfg, T, kAKMajor, Cfg::kABoxes>(a_dst, static_cast<const T*>(p.a), p.lda, p.m,
                                                            p.k, m0, k0, thread);
          copy_operand_tile<Cfg, T, kBKMajor, Cfg::kBBoxes>(a_dst + Cfg::kABoxes * Cfg::kBoxBytes,
                                                            static_cast<const T*>(p.b), p.ldb, p.n, p.k,
                                                            n0, k0, thread);
          sm90::fence_proxy_async();  // ordinary stores above, wgmma reads next
          sm90::mbar_arrive(full_bar + 8 * stage);
          if (++stage == Cfg::kStages) { stage = 0; phase ^= 1; }
        }
      }
    }
  } else {
    // ---------------- consumers ----------------
    sm90::warpgroup_reg_alloc<Cfg::kConsumerRegs>();
    const int consumer = warpgroup - 1;
    float acc[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) acc[i] = 0.0f;
    // Lane 0 of each warp hands a finished stage back to every producer that fills it.
    auto release = [&](int s) {
      if (lane != 0) return;
      if constexpr (kCluster > 1) {
#pragma unroll
        for (int r = 0; r < kCluster; ++r) sm90::mbar_arrive_cluster(empty_bar + 8 * s, r);
      } else {
        sm90::mbar_arrive(empty_bar + 8 * s);
      }
    };
    int stage = 0;
    uint32_t phase = 0;
    for (int t = cluster_id; t < sched.total; t += clusters) {
      int m0, n0;
      tile_origin(t, m0, n0);
      int prev_stage = 0;
      for (int kb = 0; kb < sched.k_blocks; ++kb) {
        sm90::mbar_wait(full_bar + 8 * stage, phase);
        sm90::wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < kKSteps; ++kk) {
          const uint64_t desc_a =
              sm90::make_sw128_desc(a_tile(stage) + consumer * Cfg::kBoxBytes + kk * kAStep, kALbo, kSbo);
          const uint64_t desc_b = sm90::make_sw128_desc(b_tile(stage) + kk * kBStep, kBLbo, kSbo);
          const int accumulate = (kb > 0 || kk > 0) ? 1 : 0;
          if constexpr (sizeof(T) == 2)
            sm90::wgmma_m64n256k16<T, kAKMajor ? 0 : 1, kBKMajor ? 0 : 1>(acc, desc_a, desc_b, accumulate);
          else
            sm90::wgmma_m64n256k8_tf32(acc, desc_a, desc_b, accumulate);
        }
        sm90::wgmma_commit();
        sm90::wgmma_wait<1>();  // the previous stage's wgmmas are done reading it
        if (kb > 0) release(prev_stage);
        prev_stage = stage;
        if (++stage == Cfg::kStages) { stage = 0; phase ^= 1; }
      }
      sm90::wgmma_wait<0>();
      release(prev_stage);

      // Epilogue straight from the accumulators: thread (warp w, lane l) holds rows
      // 16w + l/4 and +8, columns 8i + 2(l%4) and +1 of its 64x256 slice.
      const int row = m0 + consumer * 64 + warp_in_group * 16 + lane / 4;
      const int col = n0 + 2 * (lane % 4);
#pragma unroll
      for (int i = 0; i < 32; ++i) {
        store_c_pair<T>(p, row, col + 8 * i, acc[4 * i], acc[4 * i + 1]);
        store_c_pair<T>(p, row + 8, col + 8 * i, acc[4 * i + 2], acc[4 * i + 3]);
      }
    }
  }
  if constexpr (kCluster > 1) sm90::cluster_sync();  // no CTA leaves while a peer may still signal it
#endif
}

// ---------------------------------------------------------------- host side

PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult status{};
    const cudaError_t e =
        cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &status);
    return (e == cudaSuccess && status == cudaDriverEntryPointSuccess)
               ? reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p)
               : nullptr;
  }();
  return fn;
}

/// TMA descriptor of one operand stored as `rows` x `cols` (cols contiguous), read in
/// boxes of 64 rows x 128 bytes with the 128-byte swizzle. Out-of-range elements read
/// as zero (OOB fill NONE means zeros; NaN fill would be the other choice).
template <class T>
CUtensorMap make_tensor_map(const void* ptr, int64_t ld, int rows, int cols) {
  CUtensorMapDataType type = std::is_same_v<T, gpu::bf16_t>   ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                             : std::is_same_v<T, gpu::half_t> ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                                              : CU_TENSOR_MAP_DATA_TYPE_TFLOAT32;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(ld) * sizeof(T)};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(kElemsPerRow<T>), 64};
  const cuuint32_t elem_strides[2] = {1, 1};
  CUtensorMap map{};
  CUresult r = tensor_map_encoder()(&map, type, 2, const_cast<void*>(ptr), dims, strides, box, elem_strides,
                                    CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                    CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS && type == CU_TENSOR_MAP_DATA_TYPE_TFLOAT32) {
    type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;  // same bits; the tensor cores then truncate to tf32
    r = tensor_map_encoder()(&map, type, 2, const_cast<void*>(ptr), dims, strides, box, elem_strides,
                             CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                             CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  }
  if (r != CUDA_SUCCESS)
    throw core::Error(core::Status::DeviceError,
                      "cuTensorMapEncodeTiled failed with CUresult " + std::to_string(static_cast<int>(r)));
  return map;
}

/// Whether TMA can address an operand: 16-byte aligned base and row pitch.
bool tma_addressable(const void* ptr, int64_t ld, std::size_t elem_bytes) {
  return row_alignment_reason("", ptr, ld, elem_bytes, 16).empty();
}

/// Concurrently resident clusters of `kernel` (cached per device: it depends only on
/// the kernel and the device).
template <class Kernel>
int max_active_clusters(Kernel kernel, const cudaLaunchConfig_t& config, int device) {
  static std::array<std::atomic<int>, 64> cache{};
  if (device >= 0 && device < 64 && cache[device].load() != 0) return cache[device].load();
  int clusters = 0;
  if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &config) != cudaSuccess) {
    (void)cudaGetLastError();
    clusters = -1;  // cannot launch clusters here: remembered as "none"
  }
  if (device >= 0 && device < 64) cache[device].store(clusters);
  return clusters;
}

template <class Cfg, class T, bool kAKMajor, bool kBKMajor, bool kTma>
bool launch_config(const core::GemmArgs& args, const CudaContext& ctx) {
  auto kernel = wgmma_tma_kernel<Cfg, T, kAKMajor, kBKMajor, kTma>;
  TcProblem p = make_tc_problem(args);
  p.tiles_m = ceil_div(p.m, Cfg::kBlockM);
  p.tiles_n = ceil_div(p.n, Cfg::kBlockN);
  WgmmaSchedule sched;
  sched.cluster_tiles_m = ceil_div(p.tiles_m, Cfg::kClusterM);
  sched.tiles_n = p.tiles_n;
  sched.total = sched.cluster_tiles_m * sched.tiles_n;
  sched.k_blocks = ceil_div(p.k, kElemsPerRow<T>);

  CUtensorMap map_a{}, map_b{};
  if constexpr (kTma) {
    map_a = kAKMajor ? make_tensor_map<T>(args.a, args.lda, p.m, p.k) : make_tensor_map<T>(args.a, args.lda, p.k, p.m);
    map_b = kBKMajor ? make_tensor_map<T>(args.b, args.ldb, p.n, p.k) : make_tensor_map<T>(args.b, args.ldb, p.k, p.n);
  }
  GK_GPU_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSmemBytes));

  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = Cfg::kClusterM;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cudaLaunchConfig_t config{};
  config.blockDim = dim3(Cfg::kThreads);
  config.dynamicSmemBytes = Cfg::kSmemBytes;
  config.stream = ctx.stream;
  config.attrs = attr;
  config.numAttrs = 1;

  int resident = ctx.sm_count;  // clusters that fit at once: one CTA per SM without clusters
  if constexpr (Cfg::kClusterM > 1) {
    config.gridDim = dim3(Cfg::kClusterM);
    resident = max_active_clusters(kernel, config, ctx.device);
    if (resident <= 0) return false;
  }
  const int clusters = std::max(1, std::min(resident, sched.total));
  config.gridDim = dim3(clusters * Cfg::kClusterM);
  GK_GPU_CHECK(cudaLaunchKernelEx(&config, kernel, map_a, map_b, p, sched));
  return true;
}

template <class T, bool kAKMajor, bool kBKMajor>
void launch_wgmma_layout(const core::GemmArgs& args, const CudaContext& ctx) {
  const bool tma = tma_addressable(args.a, args.lda, sizeof(T)) && tma_addressable(args.b, args.ldb, sizeof(T));
  if (tma && ctx.cluster_launch && launch_config<TmaConfig, T, kAKMajor, kBKMajor, true>(args, ctx)) return;
  launch_config<CopyConfig, T, kAKMajor, kBKMajor, false>(args, ctx);
}

template <class T>
void launch_wgmma_typed(const core::GemmArgs& args, const CudaContext& ctx) {
  const bool ak = a_is_k_major(args), bk = b_is_k_major(args);
  if constexpr (sizeof(T) == 4) {
    launch_wgmma_layout<T, true, true>(args, ctx);  // supports() admitted K-major A and B only
  } else {
    if (ak && bk) launch_wgmma_layout<T, true, true>(args, ctx);
    else if (ak) launch_wgmma_layout<T, true, false>(args, ctx);
    else if (bk) launch_wgmma_layout<T, false, true>(args, ctx);
    else launch_wgmma_layout<T, false, false>(args, ctx);
  }
}

/// Whether this module holds sm_90a machine code for the kernels (a build without the
/// 90a target would run an empty body on an H100).
bool built_for_sm90a() {
  cudaFuncAttributes attr{};
  if (cudaFuncGetAttributes(&attr, wgmma_tma_kernel<CopyConfig, gpu::bf16_t, true, false, false>) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return attr.binaryVersion == 90;
}

}  // namespace

std::string gemm_wgmma_tma_supports(const core::GemmArgs& args, const CudaContext& ctx) {
  if (ctx.arch != 90) return "needs sm_90a";
  if (const std::string r = tc_shape_reason(args); !r.empty()) return r;
  switch (args.type()) {
    case core::GemmType::F16:
    case core::GemmType::BF16:
      break;
    case core::GemmType::TF32:
      if (args.trans_a || !args.trans_b)
        return "tf32 needs K-major A and B (trans_a = N, trans_b = T): wgmma has no 32-bit transpose";
      break;
    default:
      return "f32 needs allow_tf32 (tensor cores)";
  }
  if (ctx.smem_per_block_optin < static_cast<std::size_t>(TmaConfig::kSmemBytes))
    return "needs " + std::to_string(TmaConfig::kSmemBytes / 1024) + " KB of shared memory per block";
  if (!tensor_map_encoder()) return "driver lacks cuTensorMapEncodeTiled";
  if (!built_for_sm90a()) return "module not built for sm_90a";
  return {};
}

void gemm_wgmma_tma(const core::GemmArgs& args, const CudaContext& ctx) {
  if (tc_trivial_call(args, ctx)) return;
  switch (args.ab_type) {
    case core::DType::F16: launch_wgmma_typed<gpu::half_t>(args, ctx); break;
    case core::DType::BF16: launch_wgmma_typed<gpu::bf16_t>(args, ctx); break;
    default: launch_wgmma_typed<float>(args, ctx); break;
  }
}

}  // namespace gpukern::cuda::gemm
