// The harness of the batched / fused-epilogue tests of the CUDA GEMM rungs: one strided
// batch prepared on the host (random operands in every item's window, NaN in every cell
// the call must not read, C all NaN when beta == 0, guard cells between and around the
// items of C), run on the device, and checked against a double reference computed on the
// host: C_b = act(alpha * op(A_b) op(B_b) + beta * C_b + bias_b[col]) per item, relative
// Frobenius error over all items within the dtype's bound, no non-finite output, every
// guard cell bit-identical.
#pragma once

#include "gemm_harness.cuh"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace gpukern::test::cuda_gemm {

/// How the items of an operand sit in memory.
enum class Items {
  Padded,       ///< one after the other, rows padded to 16 bytes and a gap between items
  Broadcast,    ///< stride 0: every item reads item 0 (A and B only)
  Interleaved,  ///< side by side: row r of every item, then row r + 1 (stride = one item's row)
  Odd,          ///< like Padded, but rows and items start off 16-byte boundaries (odd strides)
};

/// The bias of a case.
enum class BiasKind { None, F32, CType };

/// One batched call.
struct FusedCase {
  int64_t m = 1, n = 1, k = 1;
  bool trans_a = false, trans_b = false;
  DType ab = DType::F32, c = DType::F32;
  bool tf32 = false;
  float alpha = 1.0f, beta = 0.0f;
  int64_t batch = 1;
  Items a_items = Items::Padded, b_items = Items::Padded, c_items = Items::Padded;
  BiasKind bias = BiasKind::None;
  bool bias_per_item = false;  ///< stride_bias = n + 8 (else 0: one vector for every item)
  int act = GK_ACT_NONE;

  std::string describe() const;
  std::string arithmetic() const;
};

/// A batched call prepared on the device, with its host reference (buffers freed by the destructor).
class FusedProblem {
 public:
  FusedProblem(const FusedCase& c, cudaStream_t stream, uint64_t seed);
  ~FusedProblem();
  FusedProblem(const FusedProblem&) = delete;
  FusedProblem& operator=(const FusedProblem&) = delete;

  const core::GemmArgs& args() const { return args_; }
  const FusedCase& spec() const { return case_; }
  /// Puts C back to its initial contents.
  void reset_c();
  /// Compares C on the device with the reference and the guard cells with their initial bits.
  Outcome check();

 private:
  struct Host;  // host copies and the reference
  FusedCase case_;
  cudaStream_t stream_;
  core::GemmArgs args_;
  void *a_ = nullptr, *b_ = nullptr, *c_ = nullptr, *bias_ = nullptr;
  Host* host_ = nullptr;
};

/// Runs `run` on a fresh FusedProblem of `c` (`repeats` times, C reset before each) and
/// reports a failure with `label`; returns whether every run passed.
bool run_fused(const FusedCase& c, uint64_t seed, cudaStream_t stream, const std::string& label,
               const std::function<void(const core::GemmArgs&)>& run, int repeats = 1);

/// The cases a rung is checked over: batch 1, 3 and 17 crossed with `shapes` {m, n, k},
/// the four transposes and `types` ({ab, tf32}); every other feature (activation, bias kind
/// and its per-item stride, A/B/C item placement from `placements`, C type, alpha/beta with
/// beta 0 on NaN) rotates with the case index so each value meets every rung many times.
/// Cases whose host reference would exceed ~2e7 multiply-adds are left out.
struct TypeChoice {
  DType ab;
  bool tf32;
};
std::vector<FusedCase> fused_cases(const std::vector<std::vector<int64_t>>& shapes,
                                   const std::vector<TypeChoice>& types, const std::vector<Items>& placements);

}  // namespace gpukern::test::cuda_gemm
