// The harness of the batched / fused-epilogue tests; see fused_harness.cuh. Buffers are
// small enough (a few million elements) for a host reference in double.
#include "fused_harness.cuh"

#include "core/activation.hpp"
#include "support/cuda_check.hpp"
#include "support/reference.hpp"

#include <gpukern/half.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <sstream>
#include <stdexcept>

namespace gpukern::test::cuda_gemm {
namespace {

/// Host storage of one dtype, read and written as double / float.
struct HostBuffer {
  DType type = DType::F32;
  std::vector<unsigned char> bytes;

  HostBuffer() = default;
  HostBuffer(DType t, int64_t count) : type(t), bytes(static_cast<size_t>(count) * core::dtype_size(t)) {}
  int64_t count() const { return static_cast<int64_t>(bytes.size() / core::dtype_size(type)); }
  void set(int64_t i, float v) {
    if (type == DType::F32) {
      std::memcpy(&bytes[i * 4], &v, 4);
    } else {
      const uint16_t h = type == DType::F16 ? float_to_f16(v) : float_to_bf16(v);
      std::memcpy(&bytes[i * 2], &h, 2);
    }
  }
  double get(int64_t i) const {
    if (type == DType::F32) {
      float v;
      std::memcpy(&v, &bytes[i * 4], 4);
      return v;
    }
    uint16_t h;
    std::memcpy(&h, &bytes[i * 2], 2);
    return type == DType::F16 ? f16_to_float(h) : bf16_to_float(h);
  }
  void fill_nan() {
    for (int64_t i = 0; i < count(); ++i) set(i, std::nanf(""));
  }
  bool same_bits(const HostBuffer& o, int64_t i) const {
    const size_t es = core::dtype_size(type);
    return std::memcmp(&bytes[i * es], &o.bytes[i * es], es) == 0;
  }
};

/// Where the items of a stored rows x cols matrix go: leading dimension, batch stride and
/// the buffer's element count (with a guard row past the last item).
struct Placement {
  int64_t ld = 0, stride = 0, elems = 0;
};

Placement place(int64_t rows, int64_t cols, int64_t batch, Items items, bool is_c) {
  const int64_t cols1 = std::max<int64_t>(cols, 1), rows1 = std::max<int64_t>(rows, 1);
  const int64_t aligned = (cols1 + 7) / 8 * 8;  // 16 bytes for every dtype
  Placement p;
  switch (items) {
    case Items::Padded:
      p.ld = aligned + 8;
      p.stride = rows1 * p.ld + 16;
      break;
    case Items::Broadcast:
      p.ld = aligned + 8;
      p.stride = 0;
      break;
    case Items::Interleaved:
      // C keeps a guard column between neighbouring items (an odd pitch for C).
      p.ld = batch * (is_c ? cols1 + 1 : aligned) + (is_c ? 2 : 0);
      p.stride = is_c ? cols1 + 1 : aligned;
      break;
    case Items::Odd:
      p.ld = cols1 + 3;
      p.stride = rows1 * p.ld + 5;
      break;
  }
  p.elems = (batch - 1) * p.stride + (rows1 + 1) * p.ld;
  return p;
}

float uniform(std::mt19937_64& rng) { return std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng); }

const char* items_name(Items i) {
  switch (i) {
    case Items::Padded:
      return "padded";
    case Items::Broadcast:
      return "broadcast";
    case Items::Interleaved:
      return "interleaved";
    case Items::Odd:
      return "odd";
  }
  return "?";
}

}  // namespace

struct FusedProblem::Host {
  HostBuffer a, b, c0, c, bias;
  std::vector<double> ref;    // batch x m x n
  std::vector<char> in_item;  // per element of C: inside some item's window
};

std::string FusedCase::arithmetic() const {
  if (ab == DType::F16) return "f16";
  if (ab == DType::BF16) return "bf16";
  return tf32 ? "tf32" : "f32";
}

std::string FusedCase::describe() const {
  static const char* const kActs[] = {"none", "relu", "gelu_tanh", "gelu_erf", "silu"};
  std::ostringstream s;
  s << arithmetic() << (c == DType::F32 && ab != DType::F32 ? ">f32" : "") << ' ' << (trans_a ? 'T' : 'N')
    << (trans_b ? 'T' : 'N') << ' ' << m << 'x' << n << 'x' << k << " batch " << batch << " (A " << items_name(a_items)
    << ", B " << items_name(b_items) << ", C " << items_name(c_items) << ") alpha=" << alpha << " beta=" << beta
    << " bias "
    << (bias == BiasKind::None  ? "none"
        : bias == BiasKind::F32 ? "f32"
                                : "C type")
    << (bias != BiasKind::None ? (bias_per_item ? " per item" : " shared") : "") << " act " << kActs[act];
  return s.str();
}

FusedProblem::FusedProblem(const FusedCase& c, cudaStream_t stream, uint64_t seed)
    : case_(c), stream_(stream), host_(new Host) {
  std::mt19937_64 rng(seed);
  const int64_t a_rows = c.trans_a ? c.k : c.m, a_cols = c.trans_a ? c.m : c.k;
  const int64_t b_rows = c.trans_b ? c.n : c.k, b_cols = c.trans_b ? c.k : c.n;
  const Placement pa = place(a_rows, a_cols, c.batch, c.a_items, false);
  const Placement pb = place(b_rows, b_cols, c.batch, c.b_items, false);
  const Placement pc = place(c.m, c.n, c.batch, c.c_items, true);
  Host& h = *host_;

  // Operands: NaN, then random values in every item's window.
  auto fill = [&](HostBuffer& buf, DType t, const Placement& p, int64_t rows, int64_t cols) {
    buf = HostBuffer(t, p.elems);
    buf.fill_nan();
    for (int64_t item = 0; item < c.batch; ++item)
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t col = 0; col < cols; ++col) buf.set(item * p.stride + r * p.ld + col, uniform(rng));
  };
  fill(h.a, c.ab, pa, a_rows, a_cols);
  fill(h.b, c.ab, pb, b_rows, b_cols);
  // C: all NaN when beta == 0 (never read), else random everywhere (guards included).
  h.c0 = HostBuffer(c.c, pc.elems);
  h.in_item.assign(static_cast<size_t>(pc.elems), 0);
  for (int64_t i = 0; i < pc.elems; ++i) {
    if (c.beta == 0.0f)
      h.c0.set(i, std::nanf(""));
    else
      h.c0.set(i, uniform(rng));
  }
  for (int64_t item = 0; item < c.batch; ++item)
    for (int64_t r = 0; r < c.m; ++r)
      for (int64_t col = 0; col < c.n; ++col) h.in_item[item * pc.stride + r * pc.ld + col] = 1;
  // Bias: n values per item (stride n + 8) or one shared vector; NaN between vectors.
  const DType bias_type = c.bias == BiasKind::CType ? c.c : DType::F32;
  const int64_t stride_bias = c.bias_per_item ? c.n + 8 : 0;
  if (c.bias != BiasKind::None) {
    h.bias = HostBuffer(bias_type, (c.bias_per_item ? c.batch : 1) * (c.n + 8));
    h.bias.fill_nan();
    for (int64_t item = 0; item < (c.bias_per_item ? c.batch : 1); ++item)
      for (int64_t col = 0; col < c.n; ++col) h.bias.set(item * stride_bias + col, uniform(rng));
  }

  // The reference, in double from the stored values.
  h.ref.assign(static_cast<size_t>(c.batch * c.m * c.n), 0.0);
  for (int64_t item = 0; item < c.batch; ++item) {
    const int64_t ao = item * pa.stride, bo = item * pb.stride, co = item * pc.stride;
    for (int64_t r = 0; r < c.m; ++r)
      for (int64_t col = 0; col < c.n; ++col) {
        double s = 0;
        for (int64_t kk = 0; kk < c.k; ++kk)
          s += h.a.get(ao + (c.trans_a ? kk * pa.ld + r : r * pa.ld + kk)) *
               h.b.get(bo + (c.trans_b ? col * pb.ld + kk : kk * pb.ld + col));
        double v = static_cast<double>(c.alpha) * s;
        if (c.beta != 0.0f) v += static_cast<double>(c.beta) * h.c0.get(co + r * pc.ld + col);
        if (c.bias != BiasKind::None) v += h.bias.get(item * stride_bias + col);
        h.ref[(item * c.m + r) * c.n + col] = core::activate_ref(v, c.act);
      }
  }

  // The device copies and the call.
  auto upload = [&](void** dst, const HostBuffer& src) {
    GK_TEST_CUDA_OK(cudaMalloc(dst, std::max<size_t>(src.bytes.size(), 16)));
    GK_TEST_CUDA_OK(cudaMemcpy(*dst, src.bytes.data(), src.bytes.size(), cudaMemcpyHostToDevice));
  };
  upload(&a_, h.a);
  upload(&b_, h.b);
  upload(&c_, h.c0);
  if (c.bias != BiasKind::None) upload(&bias_, h.bias);
  args_.trans_a = c.trans_a;
  args_.trans_b = c.trans_b;
  args_.m = c.m;
  args_.n = c.n;
  args_.k = c.k;
  args_.alpha = c.alpha;
  args_.beta = c.beta;
  args_.a = a_;
  args_.lda = pa.ld;
  args_.b = b_;
  args_.ldb = pb.ld;
  args_.c = c_;
  args_.ldc = pc.ld;
  args_.ab_type = c.ab;
  args_.c_type = c.c;
  args_.allow_tf32 = c.tf32;
  args_.batch = c.batch;
  args_.stride_a = pa.stride;
  args_.stride_b = pb.stride;
  args_.stride_c = pc.stride;
  args_.bias = bias_;
  args_.bias_type = bias_type;
  args_.stride_bias = stride_bias;
  args_.act = static_cast<core::Activation>(c.act);
}

FusedProblem::~FusedProblem() {
  cudaStreamSynchronize(stream_);
  cudaFree(a_);
  cudaFree(b_);
  cudaFree(c_);
  cudaFree(bias_);
  delete host_;
}

void FusedProblem::reset_c() {
  GK_TEST_CUDA_OK(cudaMemcpyAsync(c_, host_->c0.bytes.data(), host_->c0.bytes.size(), cudaMemcpyHostToDevice, stream_));
  GK_TEST_CUDA_OK(cudaStreamSynchronize(stream_));
}

Outcome FusedProblem::check() {
  Host& h = *host_;
  h.c = HostBuffer(case_.c, h.c0.count());
  GK_TEST_CUDA_OK(cudaStreamSynchronize(stream_));
  GK_TEST_CUDA_OK(cudaMemcpy(h.c.bytes.data(), c_, h.c.bytes.size(), cudaMemcpyDeviceToHost));
  Outcome o;
  double d2 = 0, r2 = 0;
  for (int64_t i = 0; i < h.c.count(); ++i)
    if (!h.in_item[i] && !h.c.same_bits(h.c0, i)) ++o.guard_changed;
  for (int64_t item = 0; item < case_.batch; ++item)
    for (int64_t r = 0; r < case_.m; ++r)
      for (int64_t col = 0; col < case_.n; ++col) {
        const double v = h.c.get(item * args_.stride_c + r * args_.ldc + col);
        const double ref = h.ref[(item * case_.m + r) * case_.n + col];
        if (!std::isfinite(v)) {
          ++o.nonfinite;
          continue;
        }
        d2 += (v - ref) * (v - ref);
        r2 += ref * ref;
      }
  o.error = r2 > 0 ? std::sqrt(d2 / r2) : std::sqrt(d2);
  return o;
}

bool run_fused(const FusedCase& c, uint64_t seed, cudaStream_t stream, const std::string& label,
               const std::function<void(const core::GemmArgs&)>& run, int repeats) {
  FusedProblem problem(c, stream, seed);
  const double bound = test::error_bound(c.arithmetic(), static_cast<gk_dtype>(static_cast<int>(c.c)));
  for (int r = 0; r < repeats; ++r) {
    problem.reset_c();
    try {
      run(problem.args());
    } catch (const std::exception& e) {
      ADD_FAILURE() << label << ", " << c.describe() << ": threw " << e.what();
      return false;
    }
    const cudaError_t launch = cudaGetLastError();
    if (launch != cudaSuccess) {
      ADD_FAILURE() << label << ", " << c.describe() << ": " << cudaGetErrorString(launch);
      return false;
    }
    const Outcome o = problem.check();
    if (!o.passes(bound)) {
      ADD_FAILURE() << label << ", " << c.describe() << " (seed " << seed << ", run " << r << "): " << o.describe()
                    << " (bound " << bound << ")";
      return false;
    }
  }
  return true;
}

std::vector<FusedCase> fused_cases(const std::vector<std::vector<int64_t>>& shapes,
                                   const std::vector<TypeChoice>& types, const std::vector<Items>& placements) {
  std::vector<FusedCase> cases;
  int index = 0;
  for (int64_t batch : {1, 3, 17})
    for (const auto& s : shapes)
      for (int layout = 0; layout < 4; ++layout)
        for (const auto& type : types) {
          FusedCase c;
          c.m = s[0], c.n = s[1], c.k = s[2];
          if (batch * c.m * c.n * std::max<int64_t>(c.k, 1) > 20000000) continue;
          const int i = index++;
          c.trans_a = layout & 1;
          c.trans_b = layout & 2;
          c.ab = type.ab;
          c.tf32 = type.tf32;
          c.batch = batch;
          c.act = i % 5;
          c.bias = static_cast<BiasKind>(i % 3);
          c.bias_per_item = (i / 3) % 2 == 1;
          c.c = (i / 2) % 2 == 0 || type.ab == DType::F32 ? type.ab : DType::F32;
          const size_t np = placements.size();
          c.a_items = placements[i % np];
          c.b_items = placements[(i / np) % np];
          const Items c_choices[] = {Items::Padded, Items::Interleaved, Items::Odd};
          c.c_items = c_choices[(i / 7) % 3];
          if (i % 4 == 1) c.alpha = -0.75f, c.beta = 1.25f;
          if (i % 4 == 3) c.alpha = 1.5f;  // beta 0 with NaN in C
          cases.push_back(c);
        }
  return cases;
}

}  // namespace gpukern::test::cuda_gemm
