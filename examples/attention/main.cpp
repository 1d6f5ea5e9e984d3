// Example application: multi-head attention forward, out = softmax(Q K^T / sqrt(d)) V for
// every (batch, head), from three library calls on the backend GPUKERN_BACKEND names
// (default auto):
//   1. scores = Q K^T          one strided-batched gemm over batch x heads (NT: K is S x d)
//   2. P = softmax(scale x)    one batched softmax, in place, scale = 1/sqrt(d), causal or not
//   3. out = P V               one strided-batched gemm (NN)
// Q, K, V and out are [batch][heads][seq][head_dim], P is [batch][heads][seq][seq], all packed.
// The result is checked against a double-precision host computation; the time of the
// three calls is printed.
//   attention [--batch B] [--heads H] [--seq S] [--head-dim D] [--causal] [--dtype f32|f16|bf16]
//             [--repeats N]
// Exit status 0 when the result matches, 1 when it does not, 2 on a library or usage error.
#include <gpukern/gpukern.hpp>
#include <gpukern/half.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Settings {
  int64_t batch = 2, heads = 3, seq = 77, head_dim = 32;
  bool causal = false;
  gk_dtype dtype = GK_F32;
  int repeats = 5;
};

const char* dtype_name(gk_dtype t) { return t == GK_F16 ? "f16" : t == GK_BF16 ? "bf16" : "f32"; }

// Parses argv into `s`; false (after a message) on a wrong argument.
bool parse(int argc, char** argv, Settings& s) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--causal") {
      s.causal = true;
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "attention: %s needs a value\n", arg.c_str());
      return false;
    }
    const std::string value = argv[++i];
    if (arg == "--dtype") {
      if (value != "f32" && value != "f16" && value != "bf16") {
        std::fprintf(stderr, "attention: --dtype %s is not f32, f16 or bf16\n", value.c_str());
        return false;
      }
      s.dtype = value == "f16" ? GK_F16 : value == "bf16" ? GK_BF16 : GK_F32;
      continue;
    }
    char* end = nullptr;
    const long long number = std::strtoll(value.c_str(), &end, 10);
    if (*end != '\0' || number < 1 || number > (1 << 20)) {
      std::fprintf(stderr, "attention: %s %s is not a whole number from 1 to 2^20\n", arg.c_str(), value.c_str());
      return false;
    }
    if (arg == "--batch")
      s.batch = number;
    else if (arg == "--heads")
      s.heads = number;
    else if (arg == "--seq")
      s.seq = number;
    else if (arg == "--head-dim")
      s.head_dim = number;
    else if (arg == "--repeats")
      s.repeats = int(number);
    else {
      std::fprintf(stderr, "attention: unknown option %s\n", arg.c_str());
      return false;
    }
  }
  return true;
}

// Host values rounded to the storage type, and their bytes as the device gets them.
struct HostTensor {
  std::vector<float> values;
  std::vector<unsigned char> bytes;
};

HostTensor make_tensor(std::size_t count, gk_dtype type, float phase) {
  HostTensor t;
  t.values.resize(count);
  t.bytes.resize(count * gpukern::dtype_size(type));
  for (std::size_t i = 0; i < count; ++i) {
    float v = std::sin(phase * float(i % 9973) + 0.001f * float(i));
    if (type == GK_F32) {
      std::memcpy(&t.bytes[4 * i], &v, 4);
    } else {
      const uint16_t h = type == GK_F16 ? gpukern::float_to_f16(v) : gpukern::float_to_bf16(v);
      std::memcpy(&t.bytes[2 * i], &h, 2);
      v = type == GK_F16 ? gpukern::f16_to_float(h) : gpukern::bf16_to_float(h);
    }
    t.values[i] = v;
  }
  return t;
}

float load(const std::vector<unsigned char>& bytes, gk_dtype type, std::size_t i) {
  if (type == GK_F32) {
    float v;
    std::memcpy(&v, &bytes[4 * i], 4);
    return v;
  }
  uint16_t h;
  std::memcpy(&h, &bytes[2 * i], 2);
  return type == GK_F16 ? gpukern::f16_to_float(h) : gpukern::bf16_to_float(h);
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  if (!parse(argc, argv, s)) return 2;
  const int64_t items = s.batch * s.heads, seq = s.seq, dim = s.head_dim;
  const std::size_t qkv_count = std::size_t(items * seq * dim), p_count = std::size_t(items * seq * seq);
  const HostTensor q = make_tensor(qkv_count, s.dtype, 0.37f), k = make_tensor(qkv_count, s.dtype, 0.11f),
                   v = make_tensor(qkv_count, s.dtype, 0.23f);
  const std::size_t esize = gpukern::dtype_size(s.dtype);
  try {
    gpukern::Device device;  // GPUKERN_BACKEND: auto, cpu, cuda, hip
    std::printf("backend %s (%s); batch %lld, heads %lld, seq %lld, head dim %lld, %s%s\n", device.backend().c_str(),
                device.info().name, (long long)s.batch, (long long)s.heads, (long long)seq, (long long)dim,
                dtype_name(s.dtype), s.causal ? ", causal" : "");

    gpukern::Buffer dq = device.alloc(qkv_count * esize), dk = device.alloc(qkv_count * esize);
    gpukern::Buffer dv = device.alloc(qkv_count * esize), dout = device.alloc(qkv_count * esize);
    gpukern::Buffer dp = device.alloc(p_count * esize);
    device.upload(dq, q.bytes.data(), q.bytes.size());
    device.upload(dk, k.bytes.data(), k.bytes.size());
    device.upload(dv, v.bytes.data(), v.bytes.size());

    gpukern::GemmDesc scores;  // scores_i = Q_i K_i^T for every (batch, head) i
    scores.trans_b = GK_TRANS;
    scores.m = seq;
    scores.n = seq;
    scores.k = dim;
    scores.a = dq.data();
    scores.lda = dim;
    scores.b = dk.data();
    scores.ldb = dim;
    scores.c = dp.data();
    scores.ldc = seq;
    scores.ab_type = scores.c_type = s.dtype;
    scores.batch_count = items;
    scores.stride_a = scores.stride_b = seq * dim;
    scores.stride_c = seq * seq;

    gpukern::SoftmaxDesc softmax;  // P_i = softmax(scores_i / sqrt(d)), masked, in place
    softmax.rows = seq;
    softmax.cols = seq;
    softmax.x = softmax.y = dp.data();
    softmax.ldx = softmax.ldy = seq;
    softmax.dtype = s.dtype;
    softmax.batch_count = items;
    softmax.stride_x = softmax.stride_y = seq * seq;
    softmax.scale = 1.0f / std::sqrt(float(dim));
    softmax.causal = s.causal ? 1 : 0;  // row r keeps columns c <= r

    gpukern::GemmDesc weighted;  // out_i = P_i V_i
    weighted.m = seq;
    weighted.n = dim;
    weighted.k = seq;
    weighted.a = dp.data();
    weighted.lda = seq;
    weighted.b = dv.data();
    weighted.ldb = dim;
    weighted.c = dout.data();
    weighted.ldc = dim;
    weighted.ab_type = weighted.c_type = s.dtype;
    weighted.batch_count = items;
    weighted.stride_a = seq * seq;
    weighted.stride_b = weighted.stride_c = seq * dim;

    auto forward = [&] {
      device.gemm(scores);
      device.softmax(softmax);
      device.gemm(weighted);
    };
    forward();  // first call: module load, page faults
    gpukern::Timer timer = device.timer();
    std::vector<double> times;
    for (int r = 0; r < s.repeats; ++r) {
      timer.start();
      forward();
      timer.stop();
      times.push_back(timer.elapsed_ms());
    }
    std::sort(times.begin(), times.end());
    const std::string rungs = device.select(scores) + ", " + device.select(softmax) + ", " + device.select(weighted);

    std::vector<unsigned char> out(qkv_count * esize);
    device.synchronize();
    device.download(out.data(), dout, out.size());

    // The double reference of every output row.
    const double scale = double(softmax.scale);
    double worst = 0, diff2 = 0, ref2 = 0;
    std::vector<double> row(static_cast<std::size_t>(seq)), want(static_cast<std::size_t>(dim));
    for (int64_t item = 0; item < items; ++item) {
      const std::size_t base = std::size_t(item * seq * dim);
      for (int64_t i = 0; i < seq; ++i) {
        const int64_t kept = s.causal ? i + 1 : seq;
        double max = -1e300, sum = 0;
        for (int64_t j = 0; j < kept; ++j) {
          double dot = 0;
          for (int64_t p = 0; p < dim; ++p)
            dot += double(q.values[base + std::size_t(i * dim + p)]) * k.values[base + std::size_t(j * dim + p)];
          row[std::size_t(j)] = scale * dot;
          max = std::fmax(max, row[std::size_t(j)]);
        }
        for (int64_t j = 0; j < kept; ++j) sum += (row[std::size_t(j)] = std::exp(row[std::size_t(j)] - max));
        std::fill(want.begin(), want.end(), 0.0);
        for (int64_t j = 0; j < kept; ++j)
          for (int64_t p = 0; p < dim; ++p)
            want[std::size_t(p)] += row[std::size_t(j)] / sum * v.values[base + std::size_t(j * dim + p)];
        for (int64_t p = 0; p < dim; ++p) {
          const double got = load(out, s.dtype, base + std::size_t(i * dim + p));
          const double err = std::fabs(got - want[std::size_t(p)]);
          worst = std::isnan(got) ? INFINITY : std::fmax(worst, err);  // fmax keeps an earlier inf
          diff2 += err * err;
          ref2 += want[std::size_t(p)] * want[std::size_t(p)];
        }
      }
    }
    const double relative = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
    // The library's bounds on relative error (f16 and bf16 round P between the calls).
    const double bound = s.dtype == GK_F32 ? 1e-5 : s.dtype == GK_F16 ? 2e-3 : 1e-2;
    std::printf("rungs: %s\n", rungs.c_str());
    std::printf("time of the three calls: median %.4g ms, best %.4g ms (%d runs)\n", times[times.size() / 2],
                times.front(), s.repeats);
    std::printf("max abs error %.3g, relative error %.3g (bound %.0e)\n", worst, relative, bound);
    if (!(relative <= bound) || !std::isfinite(worst)) {
      std::printf("FAILED: result differs from the host computation\n");
      return 1;
    }
    std::printf("OK\n");
    return 0;
  } catch (const gpukern::Error& e) {
    std::fprintf(stderr, "gpukern error: %s\n", e.what());
    return 2;
  }
}
