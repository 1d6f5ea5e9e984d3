// The kernel of rung 09 `double_buffer` and its configuration template (the rung, with
// its header comment, the per-architecture table and the launcher, is
// 09_double_buffer.cu; the tile configurations are in cuda/gemm/configs/). Kept in a
// header so a tuning driver can instantiate other configurations of the same kernel.
#pragma once

#include "cuda/gemm/gemm_common.cuh"
#include "cuda/arch/cp_async.cuh"
#include "cuda/arch/grid_dependency.cuh"
#include "cuda/gemm/simt/warp_tiling.cuh"
#include "cuda/gemm/tensor_core_common.cuh"

namespace gpukern::cuda::gemm {

/// The configuration of double_buffer_kernel for a tile `Tile` with the named fields
/// kWarpsM, kWarpsN (warps per block), kThreadM, kThreadN (outputs per thread), kBlockK
/// (K per stage), kStages (shared-memory stages in flight), kMinBlocksPerSm (the
/// occupancy target of __launch_bounds__, which caps registers per thread) and
/// kArchLo..kArchHi (the __CUDA_ARCH__ values whose device pass compiles the kernel's
/// body; the launcher picks the config whose range holds the device, never a kernel with
/// an empty body).
template <class Tile, class = void>
struct SplitKOf {
  static constexpr int value = 1;
};
template <class Tile>
struct SplitKOf<Tile, std::void_t<decltype(Tile::kSplitK)>> {
  static constexpr int value = Tile::kSplitK;
};

/// kSplitK (optional, default 1): groups of kWarpsM x kWarpsN warps that share the block
/// tile and split every stage's K steps (group g takes kk = g, g + kSplitK, ...); their
/// sums are added through shared memory at the end. A tile of a few outputs per SM then
/// still has enough warps, and each thread a K loop kSplitK times shorter: the form for
/// calls of a few tiles, whose time is one block's K loop.
template <class Tile>
struct PipelineConfig {
  using Tiling = WarpTiling<Tile::kWarpsM, Tile::kWarpsN, Tile::kThreadM, Tile::kThreadN>;
  static constexpr int kSplitK = SplitKOf<Tile>::value;
  static constexpr int kThreads = Tiling::kThreads * kSplitK;  // threads of a block: kSplitK groups
  static constexpr int kBlockK = Tile::kBlockK;
  static constexpr int kStages = Tile::kStages;
  static constexpr int kMinBlocksPerSm = Tile::kMinBlocksPerSm;
  static constexpr int kPad = 4;     // floats per shared row: 16-byte aligned rows, spread transposing stores
  static constexpr int kGroupM = 8;  // block swizzle: tile rows walked together (L2 reuse of B panels)
  static constexpr int kPipeSmemBytes =
      kStages * kBlockK * ((Tiling::kBlockM + kPad) + (Tiling::kBlockN + kPad)) * static_cast<int>(sizeof(float));
  /// The groups past the first park their sums here once the pipeline is drained.
  static constexpr int kReduceSmemBytes =
      (kSplitK - 1) * Tiling::kBlockM * Tiling::kBlockN * static_cast<int>(sizeof(float));
  static constexpr int kSmemBytes = kPipeSmemBytes > kReduceSmemBytes ? kPipeSmemBytes : kReduceSmemBytes;
  /// The fused epilogue stages the C tile in shared memory one band at a time (sub-tile row
  /// h of every lane: kWarpsM x kSubStrideM rows); its kernel has the larger of the two.
  static constexpr int kBandRows = Tiling::kWarpsM * Tiling::kSubStrideM;
  static constexpr int kBandPitch = Tiling::kBlockN + kPad;
  static constexpr int kEpilogueSmemBytes =
      kSplitK > 1 || kSmemBytes > kBandRows* kBandPitch * 4 ? kSmemBytes : kBandRows* kBandPitch * 4;

  static_assert(kStages >= 2, "a pipeline needs at least two stages to overlap copy and compute");
  static_assert(kBlockK % 4 == 0, "the K step must be a multiple of 4");
  static_assert(kSplitK >= 1 && kBlockK % (2 * kSplitK) == 0,
                "each K group takes an even number of a stage's K steps (register double buffering)");
  static_assert(kThreads <= 1024, "a thread block holds at most 1024 threads");
  static_assert(kMinBlocksPerSm >= 1, "occupancy target must be at least one block per SM");
  static_assert(Tile::kArchLo > 0 && Tile::kArchLo <= Tile::kArchHi,
                "a config is compiled for a range of device passes, never the host pass");

  /// True for the __CUDA_ARCH__ values this config is built for (0, the host pass, never).
  static constexpr bool compiled_for(int cuda_arch) { return cuda_arch >= Tile::kArchLo && cuda_arch <= Tile::kArchHi; }
};

/// One thread's share of the cp.async copies of one operand's K tiles into a K-major
/// shared stage (stage[kk * smem_ld + mn]). Consecutive threads walk the operand's
/// contiguous storage direction so every warp request coalesces.
///  - K-contiguous operand (A not transposed, B transposed): 4-byte copies, transposed
///    on the way into shared memory (cp.async cannot scatter a 16-byte group).
///  - MN-contiguous operand: 16-byte copies when kVec (operand 16-byte aligned,
///    ld % 4 == 0), otherwise 4-byte copies; either way the order is kept.
/// Every element outside the operand is copied with src_bytes = 0, which zero-fills it:
/// edge tiles of any shape, unaligned leading dimensions and K tails need no other path.
template <int kTileMN, int kTileK, int kThreads, bool kKContiguous, bool kVec>
struct OperandPipe {
  static constexpr bool kWide = !kKContiguous && kVec;
  static constexpr int kWidth = kWide ? 4 : 1;                     // floats per copy
  static constexpr int kContig = kKContiguous ? kTileK : kTileMN;  // extent along contiguous storage
  static constexpr int kOther = kKContiguous ? kTileMN : kTileK;
  static constexpr int kLanesContig = kContig / kWidth;
  static_assert(kContig % kWidth == 0, "16-byte copies need the contiguous tile extent to be a multiple of 4");
  // A tile with fewer copies than the block has threads leaves the last threads idle.
  static constexpr int kCopyThreads = kLanesContig * kOther < kThreads ? kLanesContig * kOther : kThreads;
  static constexpr bool kSomeIdle = kCopyThreads < kThreads;
  static_assert(kCopyThreads % kLanesContig == 0, "the threads must cover whole rows along the contiguous direction");
  static constexpr int kOtherStep = kCopyThreads / kLanesContig;
  static_assert(kOther % kOtherStep == 0, "every thread must issue the same number of copies per tile");
  static constexpr int kCopies = kOther / kOtherStep;
  static_assert(kCopies <= 32, "the per-copy validity mask holds 32 bits");

  // Everything that does not change from one K tile to the next is computed once, so
  // issuing a tile costs a pointer add, a predicate and the copy per element group.
  const float* src;     // this thread's copy 0 of the next tile to issue
  int64_t copy_stride;  // elements between this thread's successive copies
  int64_t tile_stride;  // elements from one K tile to the next
  int dst_offset;       // shared offset of copy 0 inside a stage
  int k_offset;         // K index of copy 0 relative to the tile's k0
  uint32_t mn_valid;    // K-contiguous: bit i = copy i's row/column is inside the operand
  int mn_bytes;         // MN-contiguous: bytes of this thread's group inside the operand

  __device__ __forceinline__ OperandPipe(const float* x, int64_t ld, int mn0, int mn_size, int smem_ld) {
    const int c_off = (static_cast<int>(threadIdx.x) % kLanesContig) * kWidth;
    const int o_off = static_cast<int>(threadIdx.x) / kLanesContig;
    if constexpr (kKContiguous) {
      src = x + static_cast<int64_t>(mn0 + o_off) * ld + c_off;
      copy_stride = kOtherStep * ld;
      tile_stride = kTileK;
      dst_offset = c_off * smem_ld + o_off;  // transposed: (kk = c_off, mn = o_off)
      k_offset = c_off;
      mn_valid = 0;
#pragma unroll
      for (int i = 0; i < kCopies; ++i) mn_valid |= uint32_t(mn0 + o_off + i * kOtherStep < mn_size) << i;
      mn_bytes = 0;
    } else {
      src = x + static_cast<int64_t>(o_off) * ld + mn0 + c_off;
      copy_stride = kOtherStep * ld;
      tile_stride = kTileK * ld;
      dst_offset = o_off * smem_ld + c_off;
      k_offset = o_off;
      mn_valid = 0;
      mn_bytes = 4 * min(max(mn_size - (mn0 + c_off), 0), kWidth);
    }
  }

  /// Issues the copies of K tile [k0, k0 + kTileK) into `stage` (not committed) and
  /// moves on to the next tile. Out-of-range groups copy 0 bytes (their address is
  /// never dereferenced) and so zero-fill their destination.
  template <int kSmemLd>
  __device__ __forceinline__ void issue(float* stage, int k0, int k_size) {
    if constexpr (kSomeIdle) {
      if (static_cast<int>(threadIdx.x) >= kCopyThreads) return;
    }
    const float* s = src;
    float* dst = stage + dst_offset;
#pragma unroll
    for (int i = 0; i < kCopies; ++i) {
      if constexpr (kKContiguous) {
        const bool ok = ((mn_valid >> i) & 1u) && k0 + k_offset < k_size;
        arch::cp_async_4(dst + i * kOtherStep, s, ok ? 4 : 0);
      } else {
        const bool k_ok = k0 + k_offset + i * kOtherStep < k_size;
        if constexpr (kWide)
          arch::cp_async_16(dst + i * kOtherStep * kSmemLd, s, k_ok ? mn_bytes : 0);
        else
          arch::cp_async_4(dst + i * kOtherStep * kSmemLd, s, k_ok ? mn_bytes : 0);
      }
      s += copy_stride;
    }
    src += tile_stride;
  }
};

/// Block index -> (tile_m, tile_n), walking kGroupM tile rows down before moving right,
/// so the blocks resident at one time share a few A panels and B panels in L2.
template <int kGroupM>
__device__ __forceinline__ void grouped_tile(int block, int tiles_m, int tiles_n, int& tile_m, int& tile_n) {
  const int per_group = kGroupM * tiles_n;
  const int group = block / per_group;
  const int first_m = group * kGroupM;
  const int rows = min(tiles_m - first_m, kGroupM);
  const int in_group = block - group * per_group;
  tile_m = first_m + in_group % rows;
  tile_n = in_group / rows;
}

/// One block tile of C (blockIdx.x, grouped for L2) of batch item batch.item() (blockIdx.y;
/// each operand at its base + item * stride, stride 0 broadcasting it). kEpilogue: C =
/// act(alpha*acc + beta*C + bias) (`epi`) in f32; without it the plain store.
template <class Cfg, bool kTransA, bool kTransB, bool kVec, bool kEpilogue = false>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocksPerSm)
    double_buffer_kernel(SgemmProblem p, bool c_vec, BatchLaunch batch = {}, Epilogue epi = {}) {
  if constexpr (Cfg::compiled_for(gpu::kDeviceArch)) {
    arch::wait_grid_dependency();  // launched as a programmatic dependent (launch_double_buffer)
    const int64_t item = batch.item();
    p.a += item * batch.strides.a;
    p.b += item * batch.strides.b;
    p.c += item * batch.strides.c;
    using T = typename Cfg::Tiling;
    constexpr int kBlockK = Cfg::kBlockK, kStages = Cfg::kStages;
    constexpr int kLdA = T::kBlockM + Cfg::kPad, kLdB = T::kBlockN + Cfg::kPad;
    constexpr int kStageA = kBlockK * kLdA, kStageB = kBlockK * kLdB;
    extern __shared__ float4 smem_raw[];
    float* a_stages = reinterpret_cast<float*>(smem_raw);  // [kStages][kBlockK][kLdA]: (kk, row)
    float* b_stages = a_stages + kStages * kStageA;        // [kStages][kBlockK][kLdB]: (kk, col)

    int tile_m, tile_n;
    grouped_tile<Cfg::kGroupM>(static_cast<int>(blockIdx.x), ceil_div(p.m, T::kBlockM), ceil_div(p.n, T::kBlockN),
                               tile_m, tile_n);
    const int row0 = tile_m * T::kBlockM, col0 = tile_n * T::kBlockN;

    OperandPipe<T::kBlockM, kBlockK, Cfg::kThreads, a_is_k_contiguous<kTransA>, kVec> a_pipe(p.a, p.lda, row0, p.m,
                                                                                             kLdA);
    OperandPipe<T::kBlockN, kBlockK, Cfg::kThreads, b_is_k_contiguous<kTransB>, kVec> b_pipe(p.b, p.ldb, col0, p.n,
                                                                                             kLdB);
    const int k_tiles = ceil_div(p.k, kBlockK);

    // Prologue: kStages - 1 tiles in flight before the first use.
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) {
      if (s < k_tiles) {
        a_pipe.template issue<kLdA>(a_stages + s * kStageA, s * kBlockK, p.k);
        b_pipe.template issue<kLdB>(b_stages + s * kStageB, s * kBlockK, p.k);
      }
      arch::cp_async_commit();  // empty groups keep the wait count uniform
    }

    // K group (kSplitK of them) and this thread's place in its group's warp tiling.
    constexpr int kSplitK = Cfg::kSplitK, kSteps = kBlockK / kSplitK;
    const int group = static_cast<int>(threadIdx.x) / T::kThreads;
    const int in_group = static_cast<int>(threadIdx.x) % T::kThreads;
    const int r_base = T::row_base(in_group), c_base = T::col_base(in_group);
    float acc[T::kThreadM][T::kThreadN] = {};
    float a_frag[2][T::kThreadM], b_frag[2][T::kThreadN];
    auto load_frags = [&](float(&a)[T::kThreadM], float(&b)[T::kThreadN], int stage, int kk) {
      const float* a_s = a_stages + stage * kStageA + kk * kLdA + r_base;
      const float* b_s = b_stages + stage * kStageB + kk * kLdB + c_base;
#pragma unroll
      for (int i = 0; i < T::kSubM; ++i)
        *reinterpret_cast<float4*>(&a[4 * i]) = *reinterpret_cast<const float4*>(a_s + i * T::kSubStrideM);
#pragma unroll
      for (int j = 0; j < T::kSubN; ++j)
        *reinterpret_cast<float4*>(&b[4 * j]) = *reinterpret_cast<const float4*>(b_s + j * T::kSubStrideN);
    };

    // Tile 0 has landed once at most kStages - 2 younger groups are pending.
    arch::cp_async_wait<kStages - 2>();
    __syncthreads();
    load_frags(a_frag[0], b_frag[0], 0, group);

    int read_stage = 0;
    for (int kt = 0; kt < k_tiles; ++kt) {
      // Refill the stage every warp finished reading before the last barrier.
      const int next = kt + kStages - 1;
      if (next < k_tiles) {
        const int write_stage = next % kStages;
        a_pipe.template issue<kLdA>(a_stages + write_stage * kStageA, next * kBlockK, p.k);
        b_pipe.template issue<kLdB>(b_stages + write_stage * kStageB, next * kBlockK, p.k);
      }
      arch::cp_async_commit();

#pragma unroll
      for (int step = 0; step < kSteps; ++step) {
        // This group's K step kk = group + step * kSplitK of the stage (every one without
        // a split). Register double buffering: the fragments of the next step load while
        // this step's FMAs issue. At the last step the next fragments come from the next
        // tile, so the barrier sits here: it orders "next tile landed" (the wait) and
        // "every warp has read its last fragments of this stage" (they were loaded one
        // step ago) before anyone reads on, and the first shared loads of the next tile
        // overlap this tile's last FMAs instead of stalling after the barrier.
        if (step == kSteps - 1) {
          arch::cp_async_wait<kStages - 2>();
          __syncthreads();
          read_stage = read_stage + 1 == kStages ? 0 : read_stage + 1;
          load_frags(a_frag[(step + 1) % 2], b_frag[(step + 1) % 2], read_stage, group);
        } else {
          load_frags(a_frag[(step + 1) % 2], b_frag[(step + 1) % 2], read_stage, group + (step + 1) * kSplitK);
        }
#pragma unroll
        for (int i = 0; i < T::kThreadM; ++i)
#pragma unroll
          for (int j = 0; j < T::kThreadN; ++j) acc[i][j] += a_frag[step % 2][i] * b_frag[step % 2][j];
      }
    }
    arch::cp_async_wait<0>();  // no copy may outlive the block (only empty groups remain)

    if constexpr (kSplitK > 1) {
      // The groups past the first park their sums in the drained stages (float4 q of
      // thread t of group g at (g - 1, q, t): consecutive threads, consecutive 16 bytes),
      // and the first adds them in the groups' order.
      constexpr int kQuads = T::kThreadM * T::kThreadN / 4;
      float4* park = reinterpret_cast<float4*>(smem_raw);
      __syncthreads();  // every group's last fragment loads are done
      if (group > 0) {
#pragma unroll
        for (int q = 0; q < kQuads; ++q) {
          const int i = (4 * q) / T::kThreadN, j = (4 * q) % T::kThreadN;
          park[((group - 1) * kQuads + q) * T::kThreads + in_group] =
              make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
        }
      }
      __syncthreads();
      if (group > 0) return;
#pragma unroll 1
      for (int g = 1; g < kSplitK; ++g)
#pragma unroll
        for (int q = 0; q < kQuads; ++q) {
          const int i = (4 * q) / T::kThreadN, j = (4 * q) % T::kThreadN;
          const float4 v = park[((g - 1) * kQuads + q) * T::kThreads + in_group];
          acc[i][j] += v.x, acc[i][j + 1] += v.y, acc[i][j + 2] += v.z, acc[i][j + 3] += v.w;
        }
    }

    if constexpr (kEpilogue && kSplitK == 1) {
      // The fused epilogue goes through shared memory (the pipeline's, idle now), one band
      // of 4-row sub-tiles at a time (sub-tile row h of every lane: kWarpsM x kSubStrideM
      // rows of the block), written from there by a rolled loop: one copy of the
      // activation code instead of one per register of the tile.
      constexpr int kBandRows = Cfg::kBandRows, kPitch = Cfg::kBandPitch;
      float* band = reinterpret_cast<float*>(smem_raw);
      const int warp_m = r_base / T::kWarpTileM, lane_row = r_base % T::kWarpTileM;  // (lm * 4)
      constexpr int kQuadsPerRow = T::kBlockN / 4;
#pragma unroll
      for (int h = 0; h < T::kSubM; ++h) {
        __syncthreads();  // the pipeline's last reads, or the previous band's stores, are done
#pragma unroll
        for (int ii = 0; ii < 4; ++ii)
#pragma unroll
          for (int j = 0; j < T::kSubN; ++j) {
            const int i = 4 * h + ii;
            *reinterpret_cast<float4*>(
                &band[(warp_m * T::kSubStrideM + lane_row + ii) * kPitch + c_base + j * T::kSubStrideN]) =
                make_float4(acc[i][4 * j], acc[i][4 * j + 1], acc[i][4 * j + 2], acc[i][4 * j + 3]);
          }
        __syncthreads();
#pragma unroll 1
        for (int qd = static_cast<int>(threadIdx.x); qd < kBandRows * kQuadsPerRow; qd += T::kThreads) {
          const int br = qd / kQuadsPerRow, c = (qd % kQuadsPerRow) * 4;
          const int row = row0 + (br / T::kSubStrideM) * T::kWarpTileM + h * T::kSubStrideM + br % T::kSubStrideM;
          const int col = col0 + c;
          if (row >= p.m || col >= p.n) continue;
          store_c4_epilogue(p.c + static_cast<int64_t>(row) * p.ldc + col,
                            *reinterpret_cast<const float4*>(&band[br * kPitch + c]), p.alpha, p.beta,
                            min(4, p.n - col), c_vec, epi, item, col);
        }
      }
    } else {
      // From the registers: the plain store, or a K-split tile's epilogue (its first
      // group's few outputs a thread, each four through the shared epilogue store).
#pragma unroll
      for (int i = 0; i < T::kThreadM; ++i) {
        const int row = row0 + r_base + (i / 4) * T::kSubStrideM + i % 4;
#pragma unroll
        for (int j = 0; j < T::kSubN; ++j) {
          const int col = col0 + c_base + j * T::kSubStrideN;
          const float4 v = make_float4(acc[i][4 * j], acc[i][4 * j + 1], acc[i][4 * j + 2], acc[i][4 * j + 3]);
          if constexpr (kEpilogue) {
            if (row < p.m && col < p.n)
              store_c4_epilogue(p.c + static_cast<int64_t>(row) * p.ldc + col, v, p.alpha, p.beta, min(4, p.n - col),
                                c_vec, epi, item, col);
          } else {
            store_c4(p, row, col, v, c_vec);
          }
        }
      }
    }
  }
}

/// Launches double_buffer_kernel<Cfg> for the call's layout and alignment: `batch`
/// items (grid dimension y, in chunks of kMaxBatchPerLaunch) with `strides`, and the
/// epilogue instantiation when `epi` is active. Batch strides must keep every item as
/// aligned as item 0 for the 16-byte paths; the checks here take them into account.
/// kFusable = false instantiates no epilogue kernel (each costs compile time). `dependent`:
/// as a programmatic dependent of the stream's previous kernel (launch_kernel).
template <class Cfg, bool kFusable = true>
void launch_double_buffer(const SgemmProblem& p, cudaStream_t stream, int device, int64_t batch = 1,
                          BatchStrides strides = {}, const Epilogue& epi = {}, bool dependent = false) {
  using T = typename Cfg::Tiling;
  const int64_t blocks = int64_t(ceil_div(p.m, T::kBlockM)) * ceil_div(p.n, T::kBlockN);
  const auto item_aligned = [batch](int64_t stride) { return batch == 1 || stride % 4 == 0; };
  // 16-byte copies for the MN-contiguous operands when all of them allow it.
  const bool a_vec = !p.trans_a || (aligned16(p.a) && p.lda % 4 == 0 && item_aligned(strides.a));
  const bool b_vec = p.trans_b || (aligned16(p.b) && p.ldb % 4 == 0 && item_aligned(strides.b));
  const bool vec = a_vec && b_vec;
  const bool c_vec = c_vector_ok(p) && item_aligned(strides.c);
  static_assert(Cfg::kEpilogueSmemBytes <= 227 * 1024, "the stages must fit one block's shared memory");
  dispatch_layout(p.trans_a, p.trans_b, [&](auto ta, auto tb) {
    constexpr bool kTa = decltype(ta)::value, kTb = decltype(tb)::value;
    auto launch = [&](auto kernel_constant) {
      constexpr auto kernel = decltype(kernel_constant)::value;
      const int smem = epi.active() ? Cfg::kEpilogueSmemBytes : Cfg::kSmemBytes;
      allow_dynamic_smem_once(kernel, smem, device);
      for_batch_chunks(batch, strides, [&](const BatchLaunch& chunk, unsigned count) {
        launch_kernel(dependent, kernel, dim3(static_cast<unsigned>(blocks), count), Cfg::kThreads, smem, stream, p,
                      c_vec, chunk, epi);
      });
    };
    // A layout with no MN-contiguous operand has a single (4-byte) copy path.
    auto pick = [&](auto epilogue) {
      constexpr bool kEpi = decltype(epilogue)::value;
      using Scalar = std::integral_constant<decltype(&double_buffer_kernel<Cfg, kTa, kTb, false, kEpi>),
                                            &double_buffer_kernel<Cfg, kTa, kTb, false, kEpi>>;
      using Vector = std::integral_constant<decltype(&double_buffer_kernel<Cfg, kTa, kTb, true, kEpi>),
                                            &double_buffer_kernel<Cfg, kTa, kTb, true, kEpi>>;
      if constexpr (!kTa && kTb)
        launch(Scalar{});
      else if (vec)
        launch(Vector{});
      else
        launch(Scalar{});
    };
    if (!epi.active())
      pick(std::false_type{});
    else if constexpr (kFusable)
      pick(std::true_type{});
    else
      throw core::Error(core::Status::InternalError, "double_buffer: this configuration has no epilogue kernel");
  });
}

/// double_buffer's tiles (Auto: none forced).
enum class DoubleBufferTile { Auto = 0, Large = 1, Small = 2, Tiny = 3 };

/// The tile double_buffer runs `args` on (the rule in 09_double_buffer.cu;
/// GPUKERN_DOUBLE_BUFFER_TILE=large|small|tiny forces it, for measurement). Never Auto;
/// never Small for a call with an epilogue (Small has no epilogue kernel).
DoubleBufferTile double_buffer_tile(const core::GemmArgs& args, const CudaContext& ctx);

}  // namespace gpukern::cuda::gemm
