// gpukern-bench --op attention; see attention.hpp.
#include "attention.hpp"

#include "output.hpp"
#include "suite.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

namespace gpukern::bench {

namespace {

// The seeds of Q, K and V of a case: the same inputs for both paths and in every run.
uint64_t input_seed(uint64_t seed, const AttentionCase& c, int which) {
  uint64_t h = 1469598103934665603ull ^ seed;
  for (unsigned char ch : fmt::format("attention {} {} {} {}", type_name(c.type), c.seq, c.head_dim, which))
    h = (h ^ ch) * 1099511628211ull;
  return h;
}

// The first vendor rung of a ladder that takes `type` other than the fused-epilogue reference
// (cuBLAS; OpenBLAS sgemm before sgemv), or "" when the ladder has none.
std::string vendor_rung(const std::vector<Rung>& ladder, BenchType type) {
  for (const auto& r : ladder)
    if (r.info.is_reference && r.info.runs_here && takes(r.info, type) &&
        r.info.name != std::string(kEpilogueReference))
      return r.info.name;
  return "";
}

// Footprint of a case: Q, K, V and the output (items x S x d each) and P (items x S x S) on
// the device; on the host the chunk inputs are generated in, the checked items' K and V as
// float and the reference.
std::optional<Footprint> attention_footprint(const AttentionCase& c, double budget) {
  const double in_size = double(dtype_size(storage_type(c.type)));
  const double items = double(c.items()), s = double(c.seq), d = double(c.head_dim);
  const double device = in_size * items * s * (4.0 * d + s);
  const double checked_items = double(std::min<int64_t>(c.items(), kCheckedItems));
  const double rows = checked_items * double(sampled_row_count(c.seq, 2.0 * s * d, budget / checked_items));
  // Chunk, K and V of one item as float, two references and the downloaded rows.
  const double host = double(kUploadChunkBytes) + 2.0 * 4.0 * s * d + rows * d * (2.0 * 8.0 + in_size);
  if (!(device < 1.8e19)) return std::nullopt;
  return Footprint{uint64_t(host), uint64_t(device)};
}

// out[r] = softmax over the kept columns of (alpha q_r . k_j) times V, in double, for the
// checked rows of the checked items.
Reference attention_reference(const AttentionCase& c, float alpha, bool causal, const std::vector<int64_t>& rows,
                              const std::array<uint64_t, 3>& seeds) {
  const gk_dtype type = storage_type(c.type);
  const int64_t s = c.seq, d = c.head_dim;
  Reference ref;
  ref.rows = rows;
  ref.cols = d;
  ref.total_rows = c.items() * s;
  ref.rows_per_item = s;
  ref.item_stride = s * d;
  ref.values.assign(rows.size() * std::size_t(d), 0.0);
  std::vector<float> k_item(std::size_t(s * d)), v_item(std::size_t(s * d));
  for (std::size_t first = 0; first < rows.size();) {
    const int64_t item = rows[first] / s;
    std::size_t last = first;
    while (last < rows.size() && rows[last] / s == item) ++last;
    const uint64_t base = uint64_t(item) * uint64_t(s * d);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < s * d; ++i) {
      k_item[std::size_t(i)] = random_value(seeds[1], base + uint64_t(i), type, -1.0f, 1.0f);
      v_item[std::size_t(i)] = random_value(seeds[2], base + uint64_t(i), type, -1.0f, 1.0f);
    }
#pragma omp parallel for schedule(dynamic)
    for (std::size_t index = first; index < last; ++index) {
      const int64_t r = rows[index] % s;
      const int64_t kept = causal ? std::min(s, r + 1) : s;
      std::vector<double> q(static_cast<std::size_t>(d)), scores(static_cast<std::size_t>(kept));
      for (int64_t p = 0; p < d; ++p)
        q[std::size_t(p)] = random_value(seeds[0], base + uint64_t(r * d + p), type, -1.0f, 1.0f);
      double max_score = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < kept; ++j) {
        double dot = 0;
        for (int64_t p = 0; p < d; ++p) dot += q[std::size_t(p)] * double(k_item[std::size_t(j * d + p)]);
        scores[std::size_t(j)] = double(alpha) * dot;
        max_score = std::max(max_score, scores[std::size_t(j)]);
      }
      double sum = 0;
      for (auto& v : scores) sum += (v = std::exp(v - max_score));
      double* out = &ref.values[index * std::size_t(d)];
      for (int64_t j = 0; j < kept; ++j)
        for (int64_t p = 0; p < d; ++p) out[p] += scores[std::size_t(j)] / sum * double(v_item[std::size_t(j * d + p)]);
    }
    first = last;
  }
  return ref;
}

}  // namespace

double AttentionCase::flops() const { return 4.0 * double(items()) * double(seq) * double(seq) * double(head_dim); }

std::string AttentionCase::label() const {
  std::string out = fmt::format("{}x{} S {} d {}", batch, heads, seq, head_dim);
  if (batch_reduced_from) out += fmt::format(" (batch {} of {}: memory)", batch, batch_reduced_from);
  return out + (causal ? " causal" : "");
}

std::optional<std::string> attention_memory(const DeviceRunner& runner, const AttentionCase& c) {
  const std::string what = fmt::format("attention {} {}", type_name(c.type), c.label());
  const auto need = attention_footprint(c, runner.options().reference_budget);
  if (!need) return what + ": too large (its element counts overflow 64-bit integers)";
  return runner.check_footprint(what, *need);
}

std::vector<AttentionCase> attention_plan(const DeviceRunner& runner) {
  const Options& options = runner.options();
  const bool cpu = runner.is_cpu();
  const auto types = !options.types.empty() ? options.types
                     : cpu                  ? std::vector<BenchType>{BenchType::kF32}
                                            : std::vector<BenchType>{BenchType::kF16, BenchType::kBF16};
  // The attention suite's shapes unless --seq / --head-dim / --batch / --heads say otherwise.
  std::vector<AttentionCase> cases;
  for (BenchType type : types)
    for (int64_t d : options.attention_dims.empty() ? attention_dims() : options.attention_dims)
      for (int64_t s : options.attention_seqs.empty() ? attention_seqs() : options.attention_seqs) {
        AttentionCase c;
        c.type = type;
        c.batch = options.batch.value_or(kAttentionBatch);
        c.heads = options.heads.value_or(kAttentionHeads);
        c.seq = s;
        c.head_dim = d;
        c.causal = options.causal;
        // P (items x S x S) is the large buffer: 32 GiB in 16 bits at 32 x 32 x 4096^2.
        const int64_t asked = c.batch;
        while (c.batch > 1 && attention_memory(runner, c)) c.batch = (c.batch + 1) / 2;
        if (c.batch != asked) c.batch_reduced_from = asked;
        cases.push_back(c);
      }
  return cases;
}

std::vector<AttentionRecord> run_attention(DeviceRunner& runner, const AttentionCase& c) {
  Device& device = runner.device();
  const Options& options = runner.options();
  const gk_dtype type = storage_type(c.type);
  const int64_t s = c.seq, d = c.head_dim, items = c.items();
  const std::size_t esize = dtype_size(type);
  const std::array<uint64_t, 3> seeds{input_seed(options.seed, c, 0), input_seed(options.seed, c, 1),
                                      input_seed(options.seed, c, 2)};
  CacheFlusher* flusher = runner.flusher();

  // The device memory, refused as a whole case (both paths skipped with the reason) rather
  // than ending the run when the device has less free than it has in all.
  Buffer q, k, v, out, p;
  try {
    q = device.alloc(std::size_t(items * s * d) * esize);
    k = device.alloc(std::size_t(items * s * d) * esize);
    v = device.alloc(std::size_t(items * s * d) * esize);
    out = device.alloc(std::size_t(items * s * d) * esize);
    p = device.alloc(std::size_t(items * s * s) * esize);
  } catch (const Error& e) {
    std::vector<AttentionRecord> records(2);
    for (int i = 0; i < 2; ++i) {
      records[std::size_t(i)].test_case = c;
      records[std::size_t(i)].variant = i ? "vendor" : "auto";
      records[std::size_t(i)].is_reference = i == 1;
      records[std::size_t(i)].reason = e.what();
    }
    return records;
  }
  upload_random(device, q.data(), uint64_t(items * s * d), type, -1.0f, 1.0f, seeds[0]);
  upload_random(device, k.data(), uint64_t(items * s * d), type, -1.0f, 1.0f, seeds[1]);
  upload_random(device, v.data(), uint64_t(items * s * d), type, -1.0f, 1.0f, seeds[2]);

  // The checked rows: a few items (first, last, others), a sample of rows in each.
  const auto checked = checked_items(items, seeds[0]);
  std::vector<int64_t> rows;
  for (int64_t item : checked)
    for (int64_t r : sample_rows(s, 2.0 * double(s) * double(d), options.reference_budget / double(checked.size()),
                                 seeds[0] + uint64_t(item)))
      rows.push_back(item * s + r);
  const float alpha = 1.0f / std::sqrt(float(d));
  const Reference masked = attention_reference(c, alpha, c.causal, rows, seeds);
  const Reference full = c.causal ? attention_reference(c, alpha, false, rows, seeds) : Reference{};

  // The library's calls: scores = alpha Q K^T (NT), softmax in place over each item's rows,
  // out = P V (NN); every item packed.
  GemmDesc scores;
  scores.trans_b = GK_TRANS;
  scores.m = s;
  scores.n = s;
  scores.k = d;
  scores.alpha = alpha;
  scores.a = q.data();
  scores.lda = d;
  scores.b = k.data();
  scores.ldb = d;
  scores.c = p.data();
  scores.ldc = s;
  scores.ab_type = scores.c_type = type;
  scores.allow_tf32 = c.type == BenchType::kTF32;
  scores.batch_count = items;
  scores.stride_a = scores.stride_b = s * d;
  scores.stride_c = s * s;
  SoftmaxDesc softmax;
  softmax.rows = s;
  softmax.cols = s;
  softmax.x = softmax.y = p.data();
  softmax.ldx = softmax.ldy = s;
  softmax.dtype = type;
  softmax.batch_count = items;
  softmax.stride_x = softmax.stride_y = s * s;
  softmax.causal = c.causal ? 1 : 0;
  GemmDesc weighted;
  weighted.m = s;
  weighted.n = d;
  weighted.k = s;
  weighted.a = p.data();
  weighted.lda = s;
  weighted.b = v.data();
  weighted.ldb = d;
  weighted.c = out.data();
  weighted.ldc = d;
  weighted.ab_type = weighted.c_type = type;
  weighted.allow_tf32 = scores.allow_tf32;
  weighted.batch_count = items;
  weighted.stride_a = s * s;
  weighted.stride_b = weighted.stride_c = s * d;

  const std::string vendor_gemm = vendor_rung(runner.ladder(GK_OP_GEMM), c.type);
  const std::string vendor_softmax = vendor_rung(runner.ladder(GK_OP_SOFTMAX), c.type);

  // The two paths: the library's calls (auto rungs) and the same three steps on the vendor
  // rungs. On a GPU (runner.paired()) they are timed in one loop, a pass of each in turn
  // (the order alternating), so that the device's clock states fall on both alike
  // (runner.cpp says why); the CPU times each path in a loop of its own.
  struct Path {
    AttentionRecord r;
    GemmDesc g1, g2;
    SoftmaxDesc sm;
    bool live = false;  // set up and warmed up without an error
    double estimate_ms = -1;
    std::vector<double> totals;
    std::array<std::vector<double>, 3> per_step;
  };
  std::array<Path, 2> paths;
  for (int i = 0; i < 2; ++i) {
    const bool vendor = i == 1;
    Path& path = paths[std::size_t(i)];
    AttentionRecord& r = path.r;
    r.test_case = c;
    r.variant = vendor ? "vendor" : "auto";
    r.is_reference = vendor;
    path.g1 = scores;
    path.g2 = weighted;
    path.sm = softmax;
    if (vendor) {
      if (vendor_gemm.empty()) {
        r.reason = "no vendor gemm rung on this device";
        continue;
      }
      path.g1.variant = path.g2.variant = vendor_gemm.c_str();
      if (!vendor_softmax.empty()) {
        // The vendor softmax over every row at once (the items are packed); it has no mask.
        path.sm.variant = vendor_softmax.c_str();
        path.sm.rows = items * s;
        path.sm.batch_count = 1;
        path.sm.stride_x = path.sm.stride_y = 0;
        path.sm.causal = 0;
        if (c.causal) r.note = vendor_softmax + " has no causal mask: the vendor path is the softmax of the full rows";
      }
    }
    path.live = true;
  }
  std::array<Timer, 3> timers{device.timer(), device.timer(), device.timer()};
  // Step 0, 1, 2 of a path: Q K^T, softmax, P V.
  auto step_call = [&](Path& path, int step) {
    if (step == 1)
      device.softmax(path.sm);
    else
      device.gemm(step == 0 ? path.g1 : path.g2);
  };
  auto steps = [&](Path& path) {
    for (int step = 0; step < 3; ++step) step_call(path, step);
  };
  // One pass: flush, then each call between its own timer's events.
  auto pass = [&](Path& path, std::array<double, 3>& ms) {
    if (flusher) flusher->flush();
    for (int step = 0; step < 3; ++step) {
      timers[std::size_t(step)].start();
      step_call(path, step);
      timers[std::size_t(step)].stop();
    }
    for (int step = 0; step < 3; ++step) ms[std::size_t(step)] = timers[std::size_t(step)].elapsed_ms();
    return ms[0] + ms[1] + ms[2];
  };
  auto timed = [&](Path& path) {
    std::array<double, 3> ms{};
    path.totals.push_back(pass(path, ms));
    for (int step = 0; step < 3; ++step) path.per_step[std::size_t(step)].push_back(ms[std::size_t(step)]);
  };
  auto guarded = [&](Path& path, auto&& work) {
    try {
      work();
    } catch (const Error& e) {
      note_error(path.r, e, device);
      path.live = false;
    }
  };
  for (Path& path : paths) {
    if (!path.live) continue;
    guarded(path, [&] {
      path.r.rungs = {path.r.is_reference ? vendor_gemm : device.select(path.g1),
                      path.sm.variant ? std::string(path.sm.variant) : device.select(path.sm),
                      path.r.is_reference ? vendor_gemm : device.select(path.g2)};
      std::array<double, 3> ms{};
      double warm_total = 0;
      for (int w = 0; w < options.timing.warmup; ++w) {
        warm_total += path.estimate_ms = pass(path, ms);
        if (warm_total > 0.5e3 * options.timing.max_time_s) break;
      }
    });
  }
  const double flush_ms = flusher ? flusher->cost_ms() : 0.0;
  if (runner.paired() && paths[0].live && paths[1].live) {
    const int repeats = repeat_count(options.timing, paths[0].estimate_ms + paths[1].estimate_ms, 2 * flush_ms);
    for (int rep = 0; rep < repeats && paths[0].live && paths[1].live; ++rep)
      for (int i = 0; i < 2; ++i) {
        Path& path = paths[std::size_t(rep % 2 == 0 ? i : 1 - i)];
        guarded(path, [&] { timed(path); });
      }
  } else {
    for (Path& path : paths)
      if (path.live)
        guarded(path, [&] {
          const int repeats = repeat_count(options.timing, path.estimate_ms, flush_ms);
          for (int rep = 0; rep < repeats; ++rep) timed(path);
        });
  }
  for (Path& path : paths) {
    if (!path.live) continue;
    AttentionRecord& r = path.r;
    guarded(path, [&] {
      // The path's own output, from one more run on poisoned memory (the other path's
      // passes wrote the same buffers).
      device.memset(out.data(), 0xff, std::size_t(items * s * d) * esize);
      steps(path);
      r.timing = summarize(path.totals);
      for (int step = 0; step < 3; ++step)
        r.step_ms[std::size_t(step)] = summarize(path.per_step[std::size_t(step)]).median_ms;
      r.gflops = c.flops() / (r.timing.median_ms * 1e6);
      const Reference& ref = r.is_reference && c.causal && !vendor_softmax.empty() ? full : masked;
      std::vector<unsigned char> host(ref.rows.size() * std::size_t(d) * esize);
      for (std::size_t i = 0; i < ref.rows.size(); ++i)
        device.download(host.data() + i * std::size_t(d) * esize,
                        static_cast<unsigned char*>(out.data()) + std::size_t(ref.row_offset(ref.rows[i], d)) * esize,
                        std::size_t(d) * esize);
      r.rel_error = relative_error(ref, host.data(), type, d);
      r.error_rows_checked = int64_t(ref.rows.size());
      r.error_ok = r.rel_error && *r.rel_error <= error_bound(c.type);
      r.measured = true;
    });
  }
  std::vector<AttentionRecord> records{paths[0].r, paths[1].r};
  // % of the vendor path of the same run (of the same loop on a GPU).
  const AttentionRecord& vendor = records.back();
  for (auto& r : records)
    if (r.measured && vendor.measured) {
      r.reference_ms = vendor.timing.median_ms;
      r.pct_of_reference = 100.0 * vendor.timing.median_ms / r.timing.median_ms;
    }
  return records;
}

void print_attention(const std::vector<AttentionRecord>& records, bool header) {
  if (header)
    fmt::print("\n{:<6} {:<30} {:<8} {:>10} {:>9} {:>9} {:>9} {:>10} {:>7} {:>10}  {}\n", "dtype", "attention", "path",
               "ms", "QK^T ms", "softmax", "PV ms", "GFLOP/s", "%ref", "rel.err", "rungs");
  for (const auto& r : records) {
    const AttentionCase& c = r.test_case;
    if (!r.measured) {
      fmt::print("{:<6} {:<30} {:<8} {}{}: {}\n", type_name(c.type), c.label(), r.variant,
                 r.failed ? "failed" : "skipped", r.decline.empty() ? "" : " [" + r.decline + "]", r.reason);
      continue;
    }
    fmt::print(
        "{:<6} {:<30} {:<8} {:>10.4g} {:>9.4g} {:>9.4g} {:>9.4g} {:>10.0f} {:>7} {:>10}  {}\n", type_name(c.type),
        c.label(), r.variant, r.timing.median_ms, r.step_ms[0], r.step_ms[1], r.step_ms[2], r.gflops,
        r.pct_of_reference ? fmt::format("{:.1f}%", *r.pct_of_reference) : "-",
        r.rel_error ? fmt::format("{:.1e}{}", *r.rel_error, r.error_ok ? "" : " !") : "NaN/inf !",
        fmt::format("{},{},{}", r.rungs[0], r.rungs[1], r.rungs[2]) + (r.note.empty() ? "" : " (" + r.note + ")"));
  }
  std::fflush(stdout);
}

nlohmann::json attention_json(const AttentionRecord& r, const DeviceInfo& info) {
  using nlohmann::json;
  const AttentionCase& c = r.test_case;
  auto number = [](const std::optional<double>& value) { return value ? json(*value) : json(nullptr); };
  json j;
  j["op"] = "attention";
  j["variant"] = r.variant;
  j["rung_index"] = r.is_reference ? 1 : 0;
  j["is_reference"] = r.is_reference;
  j["dtype"] = type_name(c.type);
  j["batch"] = c.batch;
  j["heads"] = c.heads;
  j["seq"] = c.seq;
  j["head_dim"] = c.head_dim;
  j["causal"] = c.causal;
  j["items"] = c.items();
  j["batch_reduced_from"] = c.batch_reduced_from ? json(c.batch_reduced_from) : json(nullptr);
  j["note"] = r.note.empty() ? json(nullptr) : json(r.note);
  j["backend"] = info.backend;
  j["device"] = info.name;
  if (!r.measured) {
    put_not_measured(j, r);
    return j;
  }
  j["rungs"] = {{"scores", r.rungs[0]}, {"softmax", r.rungs[1]}, {"weighted", r.rungs[2]}};
  put_timing(j, r.timing);
  j["scores_ms"] = r.step_ms[0];
  j["softmax_ms"] = r.step_ms[1];
  j["weighted_ms"] = r.step_ms[2];
  j["flops"] = c.flops();
  j["gflops"] = r.gflops;
  j["reference"] = r.pct_of_reference ? json("vendor") : json(nullptr);
  j["reference_ms"] = number(r.reference_ms);
  j["pct_of_reference"] = number(r.pct_of_reference);
  j["rel_error"] = number(r.rel_error);
  j["error_bound"] = error_bound(c.type);
  j["error_ok"] = r.error_ok;
  j["error_rows_checked"] = r.error_rows_checked;
  return j;
}

}  // namespace gpukern::bench
