// Tile configurations of the GEMM rungs on Hopper (sm_90, sm_90a: H100, H200): 228 KB of
// shared memory and 64K registers per SM, 227 KB of shared memory per block.
// Each entry is a set of named fields; the rung's config template (PipelineConfig,
// MmaMultistageConfig, WgmmaConfig) derives the rest and checks the invariants.
#pragma once

namespace gpukern::cuda::gemm::sm90 {

/// double_buffer, the throughput tile: 128 x 256, 8 warps of 32 x 128, 8 x 16 outputs per
/// thread. Per kk a lane reads 8 + 16 values for 128 FMAs (8 x 8: 16 for 64), so
/// shared-memory traffic and non-FMA instructions per FMA drop by a third. 3 stages of
/// K = 16 (75 KB); one block of 8 warps per SM, which the cp.async pipeline keeps busy.
struct DoubleBufferLarge {
  static constexpr int kWarpsM = 4, kWarpsN = 2;     // warps per block
  static constexpr int kThreadM = 8, kThreadN = 16;  // outputs per thread
  static constexpr int kBlockK = 16;                 // K per stage
  static constexpr int kStages = 3;
  static constexpr int kMinBlocksPerSm = 1;           // __launch_bounds__: 225 registers per thread
  static constexpr int kArchLo = 900, kArchHi = 999;  // __CUDA_ARCH__ passes that compile it
};

/// double_buffer, the tile for problems with too few Large tiles to cover the SMs
/// (e.g. 1000^3 on 132 SMs): 64 x 128, 4 warps, three blocks per SM.
struct DoubleBufferSmall {
  static constexpr int kWarpsM = 2, kWarpsN = 2;
  static constexpr int kThreadM = 8, kThreadN = 8;
  static constexpr int kBlockK = 16;
  static constexpr int kStages = 4;
  static constexpr int kMinBlocksPerSm = 3;
  static constexpr int kArchLo = 900, kArchHi = 999;
};

/// double_buffer for calls whose Small tiles would leave more than a quarter of the SMs
/// idle (128^3-768^3 on 132 SMs): 16 x 32, one warp of 4 x 4 outputs a thread per K group, four groups splitting
/// each stage's 32 K steps (128 threads). Its time is one block's K loop, which the split
/// shortens four times; 16 x 32 and four groups were the fastest of 16-32 x 32-64 tiles
/// split in 2-8 at 128^3-768^3 on the H200 (notes/cuda-gemm.md, "double_buffer's tiny tile").
struct DoubleBufferTiny {
  static constexpr int kWarpsM = 1, kWarpsN = 1;
  static constexpr int kThreadM = 4, kThreadN = 4;
  static constexpr int kBlockK = 32;
  static constexpr int kStages = 3;
  static constexpr int kSplitK = 4;
  static constexpr int kMinBlocksPerSm = 4;
  static constexpr int kArchLo = 900, kArchHi = 999;
};

/// mma_multistage, every call but the tile-divisible 16-bit ones: 128 x 128, 8 warps of
/// 64 x 32 (a 64 x 64 warp tile with double-buffered fragments and the bounds-checked
/// copy path's addresses spills at the 255-register limit), 4 stages (128 KB).
struct MmaMultistage {
  static constexpr int kBlockM = 128, kBlockN = 128;
  static constexpr int kWarpsM = 2, kWarpsN = 4;
  static constexpr int kStages = 4;
  static constexpr int kArch = 900;  // the __CUDA_ARCH__ pass that compiles it
};

/// mma_multistage, f16/bf16 problems the tiles divide exactly (no bounds checks, so the
/// 64 x 64 warp tile fits in 255 registers): 256 x 128, 8 warps of 64 x 64, 4 stages
/// (192 KB). 32 mma per 8 ldmatrix.x4 per K step against 16 per 6 for 64 x 32: a third
/// less shared-memory traffic per flop, which is what bounds the smaller warp tile.
struct MmaMultistageWide {
  static constexpr int kBlockM = 256, kBlockN = 128;
  static constexpr int kWarpsM = 4, kWarpsN = 2;
  static constexpr int kStages = 4;
  static constexpr int kArch = 900;
};

/// wgmma_tma, the large tile ("128x256c2"): 4 stages of 128 x 256 x (128 bytes of K), 2
/// staging boxes of C per consumer, clusters of 2 CTAs along M that share the B tile
/// through TMA multicast (a third less L2 traffic, which under the H100's power cap
/// turns into clock), L2 raster groups of 16 tile rows. The producer warpgroup issues
/// TMA from one warp (one lane) and gives its registers to the two consumers, which hold 128
/// accumulators per thread. Level with cuBLAS once its tiles fill the SMs.
struct WgmmaTma {
  static constexpr int kBlockM = 128, kBlockN = 256;  // CTA tile (wgmma m64n256 per consumer)
  static constexpr int kStages = 4;
  static constexpr int kClusterM = 2;                            // CTAs per cluster along M
  static constexpr int kProducerRegs = 40, kConsumerRegs = 232;  // setmaxnreg per warpgroup
  static constexpr int kGroupM = 16;                             // tile rows per L2 raster group
  static constexpr int kBBoxRows = 64;                           // rows of one TMA copy of B (a whole box)
  static constexpr int kEpiBoxes = 2;                            // C staging boxes per consumer and round
  static constexpr int kEpiBuffers = 1;                          // staging rounds in flight per consumer
};

/// wgmma_tma, the three-quarter tile in clusters of 2 along M ("128x192c2"): for calls whose
/// 128x256 clusters leave a wave part empty and whose 128x128 tiles take a round more
/// (1536^3: 36 clusters of 128x256 for 66 slots, 144 tiles of 128x128 for 132 SMs, 48
/// clusters of 128x192; 3000^3: 2.2 rounds of 128x256 clusters, 2.9 of 128x192). Two
/// consumers of m64n192 (96 accumulators a thread), which read as many shared-memory
/// bytes per flop as m64n256 within 4%. B is three 64-row boxes, so each CTA of the
/// cluster loads three 32-row pieces and multicasts them. 4 stages of 40 KB; each
/// consumer stages its 64 x 192 slice of 16-bit C in one round of three boxes. The rest
/// (stages, cluster, registers, raster groups) is the large tile's.
struct WgmmaTmaWideC2 : WgmmaTma {
  static constexpr int kBlockN = 192;
  static constexpr int kBBoxRows = 32;
  static constexpr int kEpiBoxes = 3;
};

/// wgmma_tma, the wave-exact tile in clusters of 2 along M ("128x168c2"): for calls whose
/// N divides into 168-wide tile columns that fill whole waves where 128x256 clusters
/// leave a partial round (11008 = 66 x 168 - 80: 256 rows are 132 tiles, 512 rows 264,
/// against 1.3 rounds of 128x256 clusters at 512). cuBLAS runs 168-wide tiles there.
/// Two consumers of m64n168 (84 accumulators a thread). B must be K-major (a linear
/// layer's N x K weight): its 168 rows are three 56-row TMA copies, which the two CTAs of
/// a cluster share out (two and one) and multicast. 5 stages of 37 KB; each consumer
/// stages 128 of its 168 columns of 16-bit C for TMA stores and stores the last 40 from
/// the registers. The rest (cluster, registers, raster groups) is the large tile's.
struct WgmmaTmaWave168C2 : WgmmaTma {
  static constexpr int kBlockN = 168;
  static constexpr int kStages = 5;
  static constexpr int kBBoxRows = 56;
  static constexpr int kEpiBoxes = 2;
};

/// wgmma_tma, the tall tile in clusters of 2 along M ("192x192c2"): three consumer
/// warpgroups of m64n192 (96 accumulators a thread), for calls whose 128x256 clusters
/// leave most of a last round empty where 192x192 ones fill whole rounds (3000^3: 2.2
/// rounds of 128x256 clusters, 1.94 of 192x192 ones; cuBLAS runs 192x192 there); m64n192
/// reads 7% more shared-memory bytes per flop than m64n256. A stage is 48
/// KB (three boxes of A, three of B, loaded as 32-row pieces split between the cluster's
/// CTAs), so 3 of them fit beside each consumer's C staging round of three boxes (72 KB).
/// Four warpgroups share the 64K registers: 24 for the producer, 160 for each consumer.
/// The rest (cluster, B's pieces, C staging, raster groups) is the 128x192 tile's.
struct WgmmaTmaTallC2 : WgmmaTmaWideC2 {
  static constexpr int kBlockM = 192;
  static constexpr int kStages = 3;
  static constexpr int kProducerRegs = 24, kConsumerRegs = 160;
};

/// wgmma_tma, the tall narrow tile in clusters of 2 along M ("192x96c2"): three consumer
/// warpgroups of m64n96 (48 accumulators a thread), for calls whose larger tiles leave a
/// quarter of the SMs idle where these fill one wave (1536^3: 128 tiles, against 72 of
/// 128x256 and 96 of 128x192; cuBLAS runs 192x96 there). m64n96 reads a quarter more
/// shared-memory bytes per flop than m64n192. B is two whole 64-row boxes a stage in
/// either layout (wgmma reads MN-major B in whole boxes), the second box's last 32 rows
/// unused; each CTA of the cluster loads one box and multicasts it. A stage is 40 KB, 5
/// of them beside each consumer's staging box of 16-bit C (its other 32 columns leave
/// from the registers). Registers as the 192x192 tile's.
struct WgmmaTmaTall96C2 : WgmmaTmaTallC2 {
  static constexpr int kBlockN = 96;
  static constexpr int kStages = 5;
  static constexpr int kBBoxRows = 64;
  static constexpr int kEpiBoxes = 1;
  static constexpr bool kWholeBBoxes = true;
};

/// wgmma_tma, the 192x96 tile for 16-bit calls with K-major B ("192x96kc2"): WgmmaTmaTall96C2
/// whose B is its 96 rows alone, two 48-row pieces (one per CTA of the cluster), so a
/// stage brings 36 KB into each SM instead of 40.
struct WgmmaTmaTall96KC2 : WgmmaTmaTall96C2 {
  static constexpr int kBBoxRows = 48;
  static constexpr bool kWholeBBoxes = false;
};

/// wgmma_tma for store-bound calls ("128x256store"): the WgmmaTma tile where K is two K
/// blocks (attention's Q K^T: S x S per head from d = 128), so writing C, not the math,
/// sets the time. A tile's math is shorter than draining its C, so each
/// consumer keeps 4 staging rounds (64 KB) of TMA stores in flight instead of one, and
/// C leaves while the next tiles are computed; 2 operand stages are enough to fetch the
/// next tile during an epilogue.
struct WgmmaTmaStore : WgmmaTma {
  static constexpr int kStages = 2;
  static constexpr int kEpiBuffers = 4;
};

/// wgmma_tma, the mid-size tile ("128x128"): twice the tiles of WgmmaTma, for problems
/// whose 128 x 256 clusters leave SMs idle even with a K split (1000^3: 16 clusters, 16
/// K blocks; 64 of these tiles) or that have a single tile row. Two consumers of
/// m64n128 (64 accumulators a thread); it reads a fifth more shared memory per flop than
/// the large tile. A stage is 32 KB, so 6 of them keep as many bytes in flight as the
/// large tile's 4. No cluster: a one-row problem has no second row to share B with.
struct WgmmaTmaMid {
  static constexpr int kBlockM = 128, kBlockN = 128;
  static constexpr int kStages = 6;
  static constexpr int kClusterM = 1;
  static constexpr int kProducerRegs = 40, kConsumerRegs = 232;
  static constexpr int kGroupM = 16;
  static constexpr int kBBoxRows = 64;
  static constexpr int kEpiBoxes = 2;
  static constexpr int kEpiBuffers = 1;
};

/// A wgmma_tma configuration `Tile` in clusters of 2 CTAs along M that share each B tile
/// through TMA multicast: each CTA loads half of B's copies, whole 64-row boxes where the
/// tile has an even number of them, else half of each box (32-row pieces).
template <class Tile>
struct PairedAlongM : Tile {
  static constexpr int kClusterM = 2;
  static constexpr int kBBoxRows = (Tile::kBlockN / 64) % 2 == 0 ? Tile::kBBoxRows : Tile::kBBoxRows / 2;
};

/// wgmma_tma, the mid-size tile in clusters of 2 along M ("128x128c2"): WgmmaTmaMid whose
/// two CTAs share each B tile through TMA multicast. For calls that stream A past a
/// narrow B (attention's P V: n = d = 64 or 128, K = S): each tile row reads all of B
/// again from L2, as much as A at n = 128, and the cluster halves that.
struct WgmmaTmaMidC2 : PairedAlongM<WgmmaTmaMid> {};

/// wgmma_tma, the narrow tile ("128x64"): for calls of at most 64 columns over a long K
/// (attention's P V at d = 64: n = 64, K = S), where a 128-wide tile computes and
/// stages half padding. Two consumers of m64n64 (32 accumulators a thread); a stage is
/// 24 KB (A 16 KB, B 8 KB), 8 of them keep as many bytes of A in flight as the 128x128
/// tile's 6. No cluster: B is one 64-row box, nothing to split between two CTAs.
struct WgmmaTmaNarrow : WgmmaTmaMid {
  static constexpr int kBlockN = 64;
  static constexpr int kStages = 8;
  static constexpr int kEpiBoxes = 1;
};

/// wgmma_tma, the narrow tile in clusters of 2 along M ("128x64c2"): WgmmaTmaNarrow whose
/// two CTAs share each B tile through TMA multicast (each loads 32 of its 64 rows). For
/// attention's P V at d = 64, where every tile row reads all of V again from L2: the
/// cluster halves those reads.
struct WgmmaTmaNarrowC2 : PairedAlongM<WgmmaTmaNarrow> {};

/// wgmma_tma, the short tile ("64x128"): one consumer warpgroup of m64n128 for problems
/// of at most 64 rows (a 128-row tile would compute twice the rows, and the B tile is
/// what such calls stream), K split so that tiles x ways fill the SMs. 8 stages of 24 KB
/// keep 128 KB of B in flight per SM: the call is a stream of the weights.
struct WgmmaTmaShort {
  static constexpr int kBlockM = 64, kBlockN = 128;
  static constexpr int kStages = 8;
  static constexpr int kClusterM = 1;
  static constexpr int kProducerRegs = 40, kConsumerRegs = 232;
  static constexpr int kGroupM = 16;
  static constexpr int kBBoxRows = 64;
  static constexpr int kEpiBoxes = 2;
  static constexpr int kEpiBuffers = 1;
};

/// wgmma_tma, the short tile in clusters of 2 along M ("64x128c2"): WgmmaTmaShort whose
/// two CTAs share each B tile through TMA multicast (each loads one of its two 64-row
/// boxes). For small calls (K of at most 16 blocks) whose 64-row tiles fill one wave:
/// twice the CTAs of 128x128 tiles, each reading half the B bytes from L2.
struct WgmmaTmaShortC2 : PairedAlongM<WgmmaTmaShort> {};

/// wgmma_tma, the small tile ("64x64"): one consumer of m64n64 (32 accumulators a thread),
/// no cluster, for at most 64 rows (and 128 rows over a short K) whose 64x64 tiles fit one
/// wave: each CTA streams one 64-column slab of B over the whole K, every stage reading
/// B's rows as whole 128-byte lines in either layout. A stage is 16 KB, and 13 of them
/// keep 208 KB in flight per SM.
struct WgmmaTmaSmall : WgmmaTmaShort {
  static constexpr int kBlockN = 64;
  static constexpr int kStages = 13;
  static constexpr int kBBoxRows = 64;
  static constexpr int kEpiBoxes = 1;
};

/// wgmma_tma, the small tile in clusters of 2 along M ("64x64c2"): for calls of 65..128
/// rows over a wide N (a prefill's short batch against a weight matrix), which stream B
/// once: two 64-row tiles share each 64-column B tile through TMA multicast (each CTA
/// loads half of its 64 K rows, 32-row pieces), so 128 x 4096 runs 64 clusters of one
/// tile each over the whole K with no split, where 128x128 tiles need a K split in 2 to
/// fill the SMs and park half their sums.
struct WgmmaTmaSmallC2 : PairedAlongM<WgmmaTmaSmall> {};

/// wgmma_tma, the thin tile ("64x32"): one consumer of m64n32 (16 accumulators a thread)
/// for 16-bit calls with K-major B (a linear layer's N x K weight) whose 64x128 tiles are
/// too few to spread the call over the SMs: at most 64 rows over N = 4096 are 128 tiles of
/// 64x32 over the whole K, one slab of B each, where 64x128 tiles need a K split to fill
/// half the SMs; small squares likewise (512^3: 128 tiles against 32). cuBLAS runs 64-row
/// tiles 8-48 wide there. B is one 32-row TMA copy a stage; a stage is 12 KB, and 16 of
/// them keep 192 KB in flight per SM. C leaves from the registers (its 32 columns are
/// half a staging box of 16-bit C).
struct WgmmaTmaThin : WgmmaTmaShort {
  static constexpr int kBlockN = 32;
  static constexpr int kStages = 16;
  static constexpr int kBBoxRows = 32;
  static constexpr int kEpiBoxes = 1;
};

/// wgmma_tma for tf32 with N-contiguous B (its C^T kernel, a 256 x 128 tile of C): no
/// cluster, otherwise as WgmmaTma.
struct WgmmaTf32NN {
  static constexpr int kBlockM = 128, kBlockN = 256;
  static constexpr int kStages = 4;
  static constexpr int kClusterM = 1;
  static constexpr int kProducerRegs = 40, kConsumerRegs = 232;
  static constexpr int kGroupM = 16;
  static constexpr int kBBoxRows = 64;
  static constexpr int kEpiBoxes = 2;
  static constexpr int kEpiBuffers = 1;
};

/// wgmma_tma's C^T kernel for tf32 with N-contiguous B on a 128 x 128 tile of C (m64n128
/// with A from registers): twice the tiles of WgmmaTf32NN where those are few. A stage is
/// 32 KB (16 KB of each operand), so 6 fit.
struct WgmmaTf32NNMid : WgmmaTf32NN {
  static constexpr int kBlockN = 128;
  static constexpr int kStages = 6;
};

/// The same on a 64 x 128 tile of C (m64n64): four times the tiles of WgmmaTf32NN. A
/// stage is 24 KB (16 KB of user B, 8 KB of user A), 8 of them.
struct WgmmaTf32NNShort : WgmmaTf32NN {
  static constexpr int kBlockN = 64;
  static constexpr int kStages = 8;
};

/// wgmma_tma's C^T kernel for exact f32 (3xTF32) on a 128 x 128 tile of C: the tf32
/// kernel's tile with a stage that also holds the rests of user A (16 KB), 48 KB
/// in all, 4 of them. Each consumer keeps a second set of 64 accumulators (a stage's
/// products, added into the first in f32), so the 256-row tile's 128 do not fit twice.
struct WgmmaF32NNMid : WgmmaTf32NNMid {
  static constexpr bool kExactF32 = true;
  static constexpr int kStages = 4;
};

/// The same on a 64 x 128 tile of C: 32 KB stages (16 KB of user B, 8 KB of user A and
/// 8 KB of its rests), 6 of them.
struct WgmmaF32NNShort : WgmmaTf32NNShort {
  static constexpr bool kExactF32 = true;
  static constexpr int kStages = 6;
};

/// skinny, T <= 32: 64 rows of W per block, 8 warps (4 along N, one m16 tile each; 2 along
/// K, each on its own 128-byte slice of a 256-byte K block). A stage holds 16 KB of W and
/// 2-8 KB of X; as many stages (up to 6) as fit two blocks per SM: 5 W stages (80 KB) in
/// flight per block at T <= 8, 4 at T <= 16, 3 at T <= 32, so that a block alone (the
/// tail of the grid) still pulls its share of HBM bandwidth.
struct Skinny {
  static constexpr int kWarpsN = 4, kWarpsK = 2, kMmaM = 1;
  static constexpr int kSmemPerBlock = 112 * 1024;  // two blocks per SM
  static constexpr int kMaxStages = 6;
};

/// skinny, T <= 16 with K-contiguous W (a linear layer's weight, trans_b): 32 rows of W per
/// block and 512-byte K blocks (8 warps: 2 along N, 4 along K), so each stage reads 512
/// contiguous bytes of every W row instead of 256: half the DRAM row activations per byte.
/// 16 KB of W per stage; 5 stages at T <= 8, 4 at T <= 16 (two blocks per SM).
struct SkinnyKMajor {
  static constexpr int kWarpsN = 2, kWarpsK = 4, kMmaM = 1;
  static constexpr int kSmemPerBlock = 112 * 1024;
  static constexpr int kMaxStages = 6;
};

/// skinny, 32 < T <= 64: 128 rows of W per block (two m16 tiles a warp), so the X tile each
/// block reads from L2 per byte of W halves; stages of 32 KB of W and 16 KB of X, 4 of them
/// (192 KB: one block per SM, which needs its 96 KB of W loads in flight to keep up with HBM).
struct SkinnyWide {
  static constexpr int kWarpsN = 4, kWarpsK = 2, kMmaM = 2;
  static constexpr int kSmemPerBlock = 200 * 1024;  // one block per SM
  static constexpr int kMaxStages = 4;
};

/// skinny's TMA path (16-bit, T <= 16, sm_90): 128 rows of W per work unit by 64 K elements
/// (one 128-byte row of a TMA box per W row, 16 KB, plus 2 KB of X), 8 consumer warps of 16
/// rows each (a stage that lands is drained by 8 warps at once) and one producer warp.
struct SkinnyTma {
  static constexpr int kBlockN = 128;
  static constexpr int kKBoxes = 1;  // 64 K elements per unit
  static constexpr int kMmaM = 1;    // m16 tiles per consumer warp
};

/// skinny's TMA path with 64-row tiles (8 KB of W per unit, 4 consumer warps): one CTA per
/// tile over the whole K for small weights (4096 x 4096), where 64 long streams with the
/// deepest ring and no cut tiles finish before any split over all SMs.
struct SkinnyTma64 : SkinnyTma {
  static constexpr int kBlockN = 64;
};

}  // namespace gpukern::cuda::gemm::sm90
