// Rung 10 `wmma`: the first tensor-core rung. f16/bf16 inputs, f32 accumulation.
//
// Change from 09 (double_buffer, SIMT FFMA): the inner product runs on the tensor
// cores through the portable WMMA API. A warp multiplies 16x16x16 fragments with one
// instruction sequence (HMMA in SASS) instead of 16*16*16 scalar FMAs spread over its
// lanes, so the arithmetic rate rises by about an order of magnitude (the H100's dense
// f16/bf16 tensor-core peak is some fifteen times its FP32 FMA peak).
//
// Structure: a 128x128 block tile walks K in steps of 32. Each step the block copies
// one A tile and one B tile into shared memory, in the operands' own majorness, so the
// global reads are coalesced for either transpose and the fragments load with
// wmma::row_major or wmma::col_major to match. The next step's tiles are read into
// registers while the tensor cores work on the current one. 8 warps in a 2x4 grid own
// 64x32 of C each (4x2 fragments). Rows are padded by 16 bytes: WMMA's fragment loads
// read 8 rows at one column, and the pad spreads them over different banks.
//
// Any shape, alignment and leading dimension: 16-byte loads where a whole aligned
// chunk is in range, element loads with zero fill elsewhere; the epilogue goes through
// a per-warp scratch tile so that alpha/beta and the bounds check see plain (row, col).
#include "cuda/gemm/tensor_core.cuh"
#include "cuda/gemm/tensor_core_common.cuh"

#include <mma.h>

namespace gpukern::cuda::gemm {
namespace {

struct WmmaConfig {
  static constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 32;
  static constexpr int kWarpsM = 2, kWarpsN = 4;
  static constexpr int kFrag = 16;  // the WMMA 16x16x16 shape for 16-bit inputs
  static constexpr int kWarpTileM = kBlockM / kWarpsM, kWarpTileN = kBlockN / kWarpsN;
  static constexpr int kFragsM = kWarpTileM / kFrag, kFragsN = kWarpTileN / kFrag;
  static constexpr int kThreads = kWarpsM * kWarpsN * 32;
  static constexpr int kPad = 8;     // elements (16 bytes) added to every shared row
  static constexpr int kChunk = 8;   // elements per 16-byte global load
  static constexpr int kGroupM = 8;  // tile rows per L2 raster group
  static_assert(kWarpTileM % kFrag == 0 && kWarpTileN % kFrag == 0,
                "a warp tile must be a whole number of 16x16 fragments");
  static_assert(kBlockK % kFrag == 0, "the K step must be a whole number of fragments");
  static_assert((kBlockM * kBlockK) % (kChunk * kThreads) == 0 && (kBlockN * kBlockK) % (kChunk * kThreads) == 0,
                "every thread must copy the same number of 16-byte chunks per tile");
  static_assert(kPad % 8 == 0, "WMMA needs ldm to be a multiple of 16 bytes");
};

/// One operand tile in shared memory, stored as R rows of C contiguous elements
/// (R x C = rows of the operand's storage: M or N rows when K-major, K rows otherwise).
template <class T, int R, int C>
struct SmemTile {
  static constexpr int kLd = C + WmmaConfig::kPad;
  T data[R][kLd];
};

/// Copies an R x C tile of storage starting at (row0, col0) between global memory
/// and registers, then registers and shared memory: the register step lets the next
/// tile's loads overlap the current tile's MMAs.
template <class T, int R, int C>
struct TileLoader {
  static constexpr int kChunksPerRow = C / WmmaConfig::kChunk;
  static constexpr int kChunks = R * kChunksPerRow / WmmaConfig::kThreads;
  static_assert(C % WmmaConfig::kChunk == 0, "tile rows must be whole 16-byte chunks");
  uint4 regs[kChunks];

  __device__ void load(const T* src, int64_t ld, int rows, int cols, int row0, int col0, bool vec_ok) {
#pragma unroll
    for (int i = 0; i < kChunks; ++i) {
      const int idx = static_cast<int>(threadIdx.x) + i * WmmaConfig::kThreads;
      const int r = row0 + idx / kChunksPerRow;
      const int c = col0 + (idx % kChunksPerRow) * WmmaConfig::kChunk;
      const T* p = src + static_cast<int64_t>(r) * ld + c;
      if (vec_ok && r < rows && c + WmmaConfig::kChunk <= cols) {
        regs[i] = *reinterpret_cast<const uint4*>(p);
      } else {
        T e[WmmaConfig::kChunk];
#pragma unroll
        for (int j = 0; j < WmmaConfig::kChunk; ++j)
          e[j] = (r < rows && c + j < cols) ? p[j] : gpu::from_float<T>(0.0f);
        memcpy(&regs[i], e, sizeof(e));
      }
    }
  }

  __device__ void store(SmemTile<T, R, C>& tile) const {
#pragma unroll
    for (int i = 0; i < kChunks; ++i) {
      const int idx = static_cast<int>(threadIdx.x) + i * WmmaConfig::kThreads;
      *reinterpret_cast<uint4*>(&tile.data[idx / kChunksPerRow][(idx % kChunksPerRow) * WmmaConfig::kChunk]) = regs[i];
    }
  }
};

template <class T, bool kAKMajor, bool kBKMajor>
__global__ void __launch_bounds__(WmmaConfig::kThreads) wmma_kernel(TcProblem p, bool a_vec_ok, bool b_vec_ok) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  using namespace nvcuda;
  using Cfg = WmmaConfig;
  constexpr int BM = Cfg::kBlockM, BN = Cfg::kBlockN, BK = Cfg::kBlockK;
  // Storage shapes: (M, K) or (K, M) for A; (N, K) or (K, N) for B.
  constexpr int kARows = kAKMajor ? BM : BK, kACols = kAKMajor ? BK : BM;
  constexpr int kBRows = kBKMajor ? BN : BK, kBCols = kBKMajor ? BK : BN;
  using ATile = SmemTile<T, kARows, kACols>;
  using BTile = SmemTile<T, kBRows, kBCols>;
  constexpr int kScratchBytes = (Cfg::kThreads / 32) * Cfg::kFrag * Cfg::kFrag * sizeof(float);
  constexpr int kTileBytes = sizeof(ATile) + sizeof(BTile);
  static_assert(kScratchBytes <= kTileBytes, "the epilogue scratch reuses the operand tiles");
  __shared__ __align__(128) unsigned char smem[kTileBytes];
  ATile& a_tile = *reinterpret_cast<ATile*>(smem);
  BTile& b_tile = *reinterpret_cast<BTile*>(smem + sizeof(ATile));

  const TileCoord tile = tile_coords(static_cast<int>(blockIdx.x), p.tiles_m, p.tiles_n, Cfg::kGroupM);
  const int m0 = tile.m * BM, n0 = tile.n * BN;
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int warp_m = warp / Cfg::kWarpsN, warp_n = warp % Cfg::kWarpsN;

  const T* a = static_cast<const T*>(p.a);
  const T* b = static_cast<const T*>(p.b);
  TileLoader<T, kARows, kACols> a_loader;
  TileLoader<T, kBRows, kBCols> b_loader;
  // (row0, col0, rows, cols) of each operand's storage for the K step at k0.
  auto load_step = [&](int k0) {
    if constexpr (kAKMajor)
      a_loader.load(a, p.lda, p.m, p.k, m0, k0, a_vec_ok);
    else
      a_loader.load(a, p.lda, p.k, p.m, k0, m0, a_vec_ok);
    if constexpr (kBKMajor)
      b_loader.load(b, p.ldb, p.n, p.k, n0, k0, b_vec_ok);
    else
      b_loader.load(b, p.ldb, p.k, p.n, k0, n0, b_vec_ok);
  };

  using ALayout = std::conditional_t<kAKMajor, wmma::row_major, wmma::col_major>;
  using BLayout = std::conditional_t<kBKMajor, wmma::col_major, wmma::row_major>;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[Cfg::kFragsM][Cfg::kFragsN];
#pragma unroll
  for (int i = 0; i < Cfg::kFragsM; ++i)
#pragma unroll
    for (int j = 0; j < Cfg::kFragsN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

  load_step(0);
  for (int k0 = 0; k0 < p.k; k0 += BK) {
    __syncthreads();  // every warp is done reading the previous tiles
    a_loader.store(a_tile);
    b_loader.store(b_tile);
    __syncthreads();
    if (k0 + BK < p.k) load_step(k0 + BK);  // in flight while the MMAs below run
#pragma unroll
    for (int kk = 0; kk < BK; kk += Cfg::kFrag) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, T, ALayout> a_frag[Cfg::kFragsM];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, T, BLayout> b_frag[Cfg::kFragsN];
#pragma unroll
      for (int i = 0; i < Cfg::kFragsM; ++i) {
        const int mm = warp_m * Cfg::kWarpTileM + i * Cfg::kFrag;
        const T* src = kAKMajor ? &a_tile.data[mm][kk] : &a_tile.data[kk][mm];
        wmma::load_matrix_sync(a_frag[i], src, ATile::kLd);
      }
#pragma unroll
      for (int j = 0; j < Cfg::kFragsN; ++j) {
        const int nn = warp_n * Cfg::kWarpTileN + j * Cfg::kFrag;
        const T* src = kBKMajor ? &b_tile.data[nn][kk] : &b_tile.data[kk][nn];
        wmma::load_matrix_sync(b_frag[j], src, BTile::kLd);
      }
#pragma unroll
      for (int i = 0; i < Cfg::kFragsM; ++i)
#pragma unroll
        for (int j = 0; j < Cfg::kFragsN; ++j) wmma::mma_sync(acc[i][j], a_frag[i], b_frag[j], acc[i][j]);
    }
  }

  // Epilogue: fragment -> warp scratch (16x16 f32) -> alpha/beta, bounds, store.
  __syncthreads();  // the scratch overlays the operand tiles
  float* scratch = reinterpret_cast<float*>(smem) + warp * Cfg::kFrag * Cfg::kFrag;
  const int r = lane / 2, c = (lane % 2) * 8;  // each lane owns 8 consecutive columns of a row
#pragma unroll
  for (int i = 0; i < Cfg::kFragsM; ++i)
#pragma unroll
    for (int j = 0; j < Cfg::kFragsN; ++j) {
      wmma::store_matrix_sync(scratch, acc[i][j], Cfg::kFrag, wmma::mem_row_major);
      __syncwarp();
      const int row = m0 + warp_m * Cfg::kWarpTileM + i * Cfg::kFrag + r;
      const int col = n0 + warp_n * Cfg::kWarpTileN + j * Cfg::kFrag + c;
#pragma unroll
      for (int e = 0; e < 8; e += 2)
        store_c_pair<T>(p, row, col + e, scratch[r * Cfg::kFrag + c + e], scratch[r * Cfg::kFrag + c + e + 1]);
      __syncwarp();
    }
#endif
}

template <class T, bool kAKMajor, bool kBKMajor>
void launch_wmma(TcProblem p, bool a_vec_ok, bool b_vec_ok, const CudaContext& ctx) {
  p.tiles_m = ceil_div(p.m, WmmaConfig::kBlockM);
  p.tiles_n = ceil_div(p.n, WmmaConfig::kBlockN);
  wmma_kernel<T, kAKMajor, kBKMajor>
      <<<p.tiles_m * p.tiles_n, WmmaConfig::kThreads, 0, ctx.stream>>>(p, a_vec_ok, b_vec_ok);
  GK_LAUNCH_CHECK();
}

template <class T>
void launch_wmma_typed(const core::GemmArgs& args, const CudaContext& ctx) {
  const TcProblem p = make_tc_problem(args);
  const bool a_vec_ok = row_alignment_reason("A", args.a, args.lda, 2, 16).accepted();
  const bool b_vec_ok = row_alignment_reason("B", args.b, args.ldb, 2, 16).accepted();
  const bool ak = a_is_k_major(args), bk = b_is_k_major(args);
  if (ak && bk)
    launch_wmma<T, true, true>(p, a_vec_ok, b_vec_ok, ctx);
  else if (ak)
    launch_wmma<T, true, false>(p, a_vec_ok, b_vec_ok, ctx);
  else if (bk)
    launch_wmma<T, false, true>(p, a_vec_ok, b_vec_ok, ctx);
  else
    launch_wmma<T, false, false>(p, a_vec_ok, b_vec_ok, ctx);
}

}  // namespace

core::Verdict wmma_supports(const core::GemmArgs& args, const CudaContext&) {
  if (args.ab_type != core::DType::F16 && args.ab_type != core::DType::BF16)
    return {core::Decline::Dtype, "takes f16 or bf16 inputs"};
  return tc_shape_reason(args);
}

void wmma_run(const core::GemmArgs& args, const CudaContext& ctx) {
  if (tc_trivial_call(args, ctx)) return;
  if (args.ab_type == core::DType::F16)
    launch_wmma_typed<gpu::half_t>(args, ctx);
  else
    launch_wmma_typed<gpu::bf16_t>(args, ctx);
}

}  // namespace gpukern::cuda::gemm
