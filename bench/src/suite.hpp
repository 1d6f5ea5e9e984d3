// The workload suites of gpukern-bench (--suite): the gemm shapes applications run, as
// opposed to the ladder's square sizes. `llm` is a transformer's linear layers (A = T x K
// activations, B = the N x K or K x N weights); `square` is square sizes from 128 to 8192
// with non-powers of two between them. `attention` is the batched Q*K^T and P*V of multi-head
// attention; `epilogue` is large square gemms plain and with fused bias + activation.
#pragma once

#include "options.hpp"
#include "workload.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace gpukern::bench {

/// The names --suite takes.
const std::vector<std::string>& suite_names();

/// llm: token counts T (the gemm's m), every dtype.
const std::vector<int64_t>& llm_tokens();
/// llm: token counts of the f32 and tf32 cells (a slice: 32-bit weights are not what
/// inference runs, but the rungs take them).
const std::vector<int64_t>& llm_f32_tokens();
/// llm: weight shapes (N, K): Llama-style projections 4096x4096, 11008x4096 and 4096x11008
/// (MLP up/down), 14336x4096 and 4096x14336 (a wider MLP), 128256x4096 (a vocabulary head).
const std::vector<std::pair<int64_t, int64_t>>& llm_weights();
/// square: the sizes N of the N^3 cases.
const std::vector<int64_t>& square_sizes();

/// attention: items = batch x heads of the batched gemms, the sequence lengths S and head
/// dimensions d.
constexpr int64_t kAttentionBatch = 32, kAttentionHeads = 32;
const std::vector<int64_t>& attention_seqs();
const std::vector<int64_t>& attention_dims();
/// epilogue: the sizes N of the N^3 cases, and the (bias, activation) pairs next to plain.
const std::vector<int64_t>& epilogue_sizes();
const std::vector<std::pair<BiasKind, gk_activation>>& epilogue_pairs();

/// `base` once per --bias x --act pair (none when not given), with --batch and --broadcast.
std::vector<Case> with_batch_and_epilogues(const Case& base, const Options& options);

/// The gemm cases of `suite` (one of suite_names()) for `types`, in the order dtype,
/// layout, shape: llm takes T from --suite-t and (N, K) from --suite-nk when given
/// (f32/tf32 then at every T given, else at llm_f32_tokens()), layouts from --layout
/// (default NN and NT: B stored N x K, as a linear layer's weight); square takes
/// --layout (default NN); attention: per dtype, d and S, Q*K^T (m = n = S, k = d, NT: A = Q
/// S x d, B = K S x d) and P*V (m = S, n = d, k = S, NN), batch --batch or 32 x 32; epilogue:
/// per dtype and size plain, bias (C's type) + gelu_tanh, bias + relu.
std::vector<Case> suite_cases(const std::string& suite, const Options& options, const std::vector<BenchType>& types);

}  // namespace gpukern::bench
