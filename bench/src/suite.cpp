// Workload suites; see suite.hpp.
#include "suite.hpp"

#include <algorithm>
#include <tuple>

namespace gpukern::bench {

const std::vector<std::string>& suite_names() {
  static const std::vector<std::string> names{"llm", "square", "attention", "epilogue"};
  return names;
}

const std::vector<int64_t>& llm_tokens() {
  static const std::vector<int64_t> tokens{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 8192};
  return tokens;
}

const std::vector<int64_t>& llm_f32_tokens() {
  static const std::vector<int64_t> tokens{1, 16, 512};
  return tokens;
}

const std::vector<std::pair<int64_t, int64_t>>& llm_weights() {
  static const std::vector<std::pair<int64_t, int64_t>> weights{{4096, 4096},  {11008, 4096}, {4096, 11008},
                                                                {14336, 4096}, {4096, 14336}, {128256, 4096}};
  return weights;
}

const std::vector<int64_t>& square_sizes() {
  static const std::vector<int64_t> sizes{128, 256, 384, 512, 768, 1000, 1024, 1536, 2048, 3000, 4096, 6144, 8192};
  return sizes;
}

const std::vector<int64_t>& attention_seqs() {
  static const std::vector<int64_t> seqs{512, 1024, 2048, 4096};
  return seqs;
}

const std::vector<int64_t>& attention_dims() {
  static const std::vector<int64_t> dims{64, 128};
  return dims;
}

const std::vector<int64_t>& epilogue_sizes() {
  static const std::vector<int64_t> sizes{4096, 8192};
  return sizes;
}

const std::vector<std::pair<BiasKind, gk_activation>>& epilogue_pairs() {
  static const std::vector<std::pair<BiasKind, gk_activation>> pairs{
      {BiasKind::kNone, GK_ACT_NONE}, {BiasKind::kC, GK_ACT_GELU_TANH}, {BiasKind::kC, GK_ACT_RELU}};
  return pairs;
}

std::vector<Case> with_batch_and_epilogues(const Case& base, const Options& options) {
  const auto biases = options.biases.empty() ? std::vector<BiasKind>{BiasKind::kNone} : options.biases;
  const auto acts = options.activations.empty() ? std::vector<gk_activation>{GK_ACT_NONE} : options.activations;
  std::vector<Case> out;
  for (BiasKind bias : biases)
    for (gk_activation act : acts) {
      Case c = base;
      c.batch = options.batch.value_or(1);
      c.broadcast = options.broadcast;
      c.chain = options.chain;
      c.bias = bias;
      c.act = act;
      out.push_back(c);
    }
  return out;
}

namespace {

Case gemm_case(const std::string& suite, BenchType type, const Layout& layout, int64_t m, int64_t n, int64_t k,
               const Options& options) {
  Case c;
  c.op = GK_OP_GEMM;
  c.type = type;
  c.m = m;
  c.n = n;
  c.k = k;
  c.trans_a = layout.trans_a;
  c.trans_b = layout.trans_b;
  c.c_f32 = options.c_f32 && type != BenchType::kF32 && type != BenchType::kTF32;
  c.suite = suite;
  return c;
}

bool is_32_bit(BenchType type) { return type == BenchType::kF32 || type == BenchType::kTF32; }

}  // namespace

std::vector<Case> suite_cases(const std::string& suite, const Options& options, const std::vector<BenchType>& types) {
  std::vector<Case> cases;
  auto add = [&](const Case& c) {
    const auto more = with_batch_and_epilogues(c, options);
    cases.insert(cases.end(), more.begin(), more.end());
  };
  if (suite == "square") {
    const std::vector<Layout> layouts = options.layouts.empty() ? std::vector<Layout>{Layout{}} : options.layouts;
    for (BenchType type : types)
      for (const Layout& layout : layouts)
        for (int64_t size : square_sizes()) add(gemm_case(suite, type, layout, size, size, size, options));
    return cases;
  }
  if (suite == "attention") {
    // Per dtype, d and S: Q*K^T then P*V, every item packed.
    const int64_t items = options.batch.value_or(kAttentionBatch * kAttentionHeads);
    for (BenchType type : types)
      for (int64_t d : attention_dims())
        for (int64_t s : attention_seqs()) {
          for (const auto& [layout, m, n, k] :
               {std::tuple<Layout, int64_t, int64_t, int64_t>{{false, true}, s, s, d}, {{false, false}, s, d, s}}) {
            Case c = gemm_case(suite, type, layout, m, n, k, options);
            c.batch = items;
            cases.push_back(c);
          }
        }
    return cases;
  }
  if (suite == "epilogue") {
    const std::vector<Layout> layouts = options.layouts.empty() ? std::vector<Layout>{Layout{}} : options.layouts;
    for (BenchType type : types)
      for (const Layout& layout : layouts)
        for (int64_t size : epilogue_sizes())
          for (const auto& [bias, act] : epilogue_pairs()) {
            Case c = gemm_case(suite, type, layout, size, size, size, options);
            c.bias = bias;
            c.act = act;
            cases.push_back(c);
          }
    return cases;
  }
  // llm
  const std::vector<Layout> layouts =
      options.layouts.empty() ? std::vector<Layout>{Layout{false, false}, Layout{false, true}} : options.layouts;
  const auto& weights = options.suite_weights.empty() ? llm_weights() : options.suite_weights;
  const bool tokens_given = !options.suite_tokens.empty();
  for (BenchType type : types) {
    std::vector<int64_t> tokens = tokens_given ? options.suite_tokens : llm_tokens();
    if (is_32_bit(type) && !tokens_given) tokens = llm_f32_tokens();
    for (const Layout& layout : layouts)
      for (const auto& [n, k] : weights)
        for (int64_t t : tokens) add(gemm_case(suite, type, layout, t, n, k, options));
  }
  return cases;
}

}  // namespace gpukern::bench
