// Rung 14 `skinny`: GEMM with one short side (min(m, n) <= 64: the T tokens of LLM decode
// and small-batch inference) at the memory-bandwidth limit; f16, bf16 (f32 accumulation),
// tf32 and exact f32, every transpose, sm_80+.
//
// With T <= 64 the work is reading the long operand (the weights, W: N x K) once; the
// T x K activations (X) are small and stay in L2. The tile rungs (11, 12) spend a 128-row
// M tile on T rows (up to 99% of the tensor-core work on zeros) and cover N with too few
// blocks to keep enough bytes in flight. This rung changes the decomposition, not the
// instructions (mma.sync, ldmatrix and cp.async, as in 11):
//  * Swap AB: W is the mma's A operand (16 rows of N per m16 fragment: nothing wasted on
//    the weight side) and X the B operand (n8 tiles of T: 1, 2, 4 or 8 of them; the kernel
//    is instantiated per count). C(t, n) is written through strides, so a call whose short
//    side is n (C = op(A) op(B) with op(A) N x K) is the same kernel with C's strides swapped.
//  * W streams through shared memory in 16-byte cp.async chunks (evict-first in L2), in a
//    ring of K blocks: 16 KB of W per stage, up to 6 stages, two blocks per SM, so 100-160 KB
//    of loads per SM are in flight (what HBM3 needs to run at full rate), and a block alone
//    at the end of the grid still has 48-80 KB in flight. K-contiguous W at T <= 16 takes
//    32-row tiles with 512-byte K blocks (longer contiguous reads per W row); the other
//    layouts 64-row tiles with 256-byte K blocks (N-contiguous rows of 128 bytes or more). Fragments come
//    from swizzled shared memory with ldmatrix (K-contiguous W: a linear layer's weight,
//    trans_b) or ldmatrix.trans (N-contiguous W: B stored K x N); tf32 reads 32-bit words.
//  * Split K twice. Inside a block, two warps share each 16-row W tile, each on its own
//    128-byte half of every K block; their sums meet once in shared memory at the end. Across
//    blocks, the K blocks are cut into `splits` ranges (chosen so that the N tiles x ranges
//    fill the SMs' block slots with the fewest waves): each block parks its f32 sums in a
//    workspace and the last block of an N tile to arrive (a tagged arrival word, no clearing
//    pass) adds them in split order and runs the epilogue. Deterministic; nobody waits.
//  * Exact f32 runs the same pipeline with 3xTF32 (x = big + small, both tf32; big*big +
//    big*small + small*big with f32 accumulation carries f32 accuracy): three tensor-core
//    mma per product still leave the kernel memory-bound at T <= 64, where CUDA-core FMAs
//    at T = 64 would not be.
// Edges: cp.async with a short source zero-fills, so any N, K and T work (rows of X past T
// and K past the end are zeros); C is written element by element through its strides
// (any ldc, any alignment; beta == 0 never reads C). Operands whose rows do not start on
// 16-byte boundaries are declined (Misaligned).
// TMA path (skinny_tma.cuh): on sm_90, calls of any dtype with T <= 16 whose activations are
// stored K-contiguous and that have one batch item run a one-wave kernel instead (at most one
// CTA per SM, each streaming an equal share of the weights by TMA into a ring of stages) where
// skinny_tma_plan chooses it (tf32 and exact f32 by their own rules, skinny_tma_plan_32), with
// the tile and grid it chooses (one CTA per 64-row tile for small weights, one per K chunk of
// a 128-row tile where those fill the SMs, else equal shares over all SMs); every other call,
// and GPUKERN_SKINNY_TMA=off, runs skinny_kernel.
// GEMV path (skinny_gemv.cuh): calls with T <= 4, K-contiguous activations and one batch
// item that skinny_gemv_policy gives it (every 32-bit one; 16-bit ones at one or two tokens
// on the H200) run on CUDA cores before any of that: 16-byte loads of W straight into
// registers and T f32 FMAs an element, a K split where the groups are few
// (GPUKERN_SKINNY_GEMV=off|all|<splits> for measurement).
// Batches and the epilogue are fused (skinny.cuh): batch items along grid dimension y, and
// bias + activation applied where C is written, once, by whichever block writes it (the
// block itself, or a split tile's last arriving block). The epilogue is a separate kernel
// instantiation, so the plain one is unchanged.
#include "cuda/gemm/skinny/skinny_launch.cuh"
#include "cuda/gemm/tensor_core.cuh"
#include "cuda/measurement_knob.hpp"

#include <string>

namespace gpukern::cuda::gemm {

bool skinny_shape(const core::GemmArgs& args) { return std::min(args.m, args.n) <= kSkinnyMaxT; }

core::Verdict skinny_supports(const core::GemmArgs& args, const CudaContext& ctx) {
  if (!skinny_shape(args))
    return {core::Decline::ShapeLimit, "min(m, n) > " + std::to_string(kSkinnyMaxT) + " (not a skinny GEMM)"};
  if (core::Verdict v = tc_shape_reason(args); !v.accepted()) return v;
  const std::size_t elem = core::dtype_size(args.ab_type);
  for (auto v :
       {row_alignment_reason("A", args.a, args.lda, elem, 16), row_alignment_reason("B", args.b, args.ldb, elem, 16)})
    if (!v.accepted()) return {v.reason, v.detail + " (cp.async copies 16-byte chunks)"};
  for (auto v : {batch_stride_reason(args, "a", args.stride_a, elem, 16),
                 batch_stride_reason(args, "b", args.stride_b, elem, 16)})
    if (!v.accepted()) return {v.reason, v.detail + " (cp.async copies 16-byte chunks)"};
  if (ctx.smem_per_block_optin < skinny_smem_needed(elem))
    return {core::Decline::Resource,
            "needs " + std::to_string(skinny_smem_needed(elem) / 1024) + " KB of shared memory per block"};
  return {};
}

namespace {

void skinny_dispatch(const core::GemmArgs& args, const CudaContext& ctx, const SkinnyCall& call) {
  switch (args.type()) {
    case core::GemmType::F16:
      return skinny_launch_f16(call, ctx);
    case core::GemmType::BF16:
      return skinny_launch_bf16(call, ctx);
    case core::GemmType::TF32:
      return skinny_launch_tf32(call, ctx);
    case core::GemmType::F32:
      return skinny_launch_f32(call, ctx);
  }
}

/// A count of 1..4096 at the start of `s` (advanced past it), or -1.
int parse_count(const char*& s) {
  if (*s < '0' || *s > '9') return -1;
  int v = 0;
  while (*s >= '0' && *s <= '9' && v <= 4096) v = v * 10 + (*s++ - '0');
  return v <= 4096 ? v : -1;
}

/// The knob `variable` parsed once per process: unset or empty gives Setting{}; "off" sets
/// `off`; any other text goes to `parse` (false: malformed), and a malformed value throws
/// InvalidArgument naming `expected` wherever the setting is used. Each caller's `parse` is
/// its own instantiation, with its own parsed value.
template <class Setting, class Parse>
Setting parsed_knob(const char* variable, const char* expected, Parse parse) {
  struct Parsed {
    Setting setting;
    std::string error;  // the malformed value
  };
  static const Parsed parsed = [&] {
    Parsed r;
    const std::string value = knob_value(variable);
    if (value == "off")
      r.setting.off = true;
    else if (!value.empty() && !parse(value.c_str(), r.setting))
      r.error = value;
    return r;
  }();
  if (!parsed.error.empty())
    throw core::Error(core::Status::InvalidArgument,
                      std::string(variable) + "='" + parsed.error + "': expected " + expected);
  return parsed.setting;
}

}  // namespace

SkinnyTmaSetting skinny_tma_setting() {
  return parsed_knob<SkinnyTmaSetting>(
      "GPUKERN_SKINNY_TMA", "off, all, <stages> or <stages>x<CTAs per SM> (stages 0 or 2.., 1-8 CTAs per SM)",
      [](const char* s, SkinnyTmaSetting& setting) {
        setting.all = true;
        if (std::string(s) == "all") return true;
        const int stages = parse_count(s);
        int per_sm = 0;
        bool ok = stages >= 0 && stages != 1;
        if (ok && *s == 'x') {
          ++s;
          per_sm = parse_count(s);
          ok = per_sm >= 1 && per_sm <= 8;
        }
        setting.shape.stages = stages;
        setting.shape.ctas_per_sm = per_sm;
        return ok && *s == '\0';
      });
}

SkinnyGemvSetting skinny_gemv_setting() {
  return parsed_knob<SkinnyGemvSetting>("GPUKERN_SKINNY_GEMV", "off, all or <K ranges per group> (1-4096)",
                                        [](const char* s, SkinnyGemvSetting& setting) {
                                          if (std::string(s) == "all") {
                                            setting.all = true;
                                            return true;
                                          }
                                          setting.splits = parse_count(s);
                                          return setting.splits >= 1 && *s == '\0';
                                        });
}

void skinny_run_split(const core::GemmArgs& args, const CudaContext& ctx, int forced_splits) {
  if (tc_trivial_call(args, ctx, epilogue_of(args), args.batch)) return;
  SkinnyCall call = make_skinny_call(args);
  call.forced_splits = forced_splits;
  skinny_dispatch(args, ctx, call);
}

void skinny_run_mode(const core::GemmArgs& args, const CudaContext& ctx, SkinnyTmaMode mode, SkinnyTmaShape shape) {
  if (tc_trivial_call(args, ctx, epilogue_of(args), args.batch)) return;
  SkinnyCall call = make_skinny_call(args);
  call.tma_mode = mode;
  call.tma = shape;
  skinny_dispatch(args, ctx, call);
}

void skinny_run_gemv(const core::GemmArgs& args, const CudaContext& ctx, int splits, int evict_first) {
  if (tc_trivial_call(args, ctx, epilogue_of(args), args.batch)) return;
  SkinnyCall call = make_skinny_call(args);
  call.gemv_mode = SkinnyTmaMode::kForce;
  call.gemv_splits = splits;
  call.gemv_evict_first = evict_first;
  skinny_dispatch(args, ctx, call);
}

void skinny_run(const core::GemmArgs& args, const CudaContext& ctx) { skinny_run_split(args, ctx, 0); }

}  // namespace gpukern::cuda::gemm
