// Example application: scores = softmax(Q * K^T / sqrt(d)) on the backend chosen by
// GPUKERN_BACKEND (default auto), checked against a plain host loop.
// Exit status 0 when the result matches, 1 when it does not, 2 on a library error.
#include <gpukern/gpukern.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

int main() {
  const int tokens = 37, dim = 24;  // Q, K: tokens x dim; scores: tokens x tokens
  std::vector<float> q(tokens * dim), k(tokens * dim);
  for (int i = 0; i < tokens * dim; ++i) {
    q[i] = std::sin(0.37f * static_cast<float>(i));
    k[i] = std::cos(0.11f * static_cast<float>(i));
  }
  try {
    gpukern::Device device;  // GPUKERN_BACKEND: auto, cpu, cuda, hip
    std::printf("backend %s (%s)\n", device.backend().c_str(), device.info().name);

    const std::size_t matrix_bytes = q.size() * sizeof(float);
    const std::size_t score_bytes = static_cast<std::size_t>(tokens) * tokens * sizeof(float);
    gpukern::Buffer dq = device.alloc(matrix_bytes), dk = device.alloc(matrix_bytes);
    gpukern::Buffer scores = device.alloc(score_bytes);
    device.upload(dq, q.data(), matrix_bytes);
    device.upload(dk, k.data(), matrix_bytes);

    gpukern::GemmDesc gemm;  // scores = Q * K^T / sqrt(dim)
    gemm.trans_b = GK_TRANS;
    gemm.m = tokens;
    gemm.n = tokens;
    gemm.k = dim;
    gemm.alpha = 1.0f / std::sqrt(static_cast<float>(dim));
    gemm.a = dq.data();
    gemm.lda = dim;
    gemm.b = dk.data();
    gemm.ldb = dim;
    gemm.c = scores.data();
    gemm.ldc = tokens;
    device.gemm(gemm);

    gpukern::SoftmaxDesc softmax;  // in place, row by row
    softmax.rows = tokens;
    softmax.cols = tokens;
    softmax.x = scores.data();
    softmax.ldx = tokens;
    softmax.y = scores.data();
    softmax.ldy = tokens;
    device.softmax(softmax);

    std::vector<float> result(static_cast<std::size_t>(tokens) * tokens);
    device.synchronize();
    device.download(result.data(), scores, score_bytes);
    std::printf("gemm rung %s, softmax rung %s\n", device.last_variant(GK_OP_GEMM).c_str(),
                device.last_variant(GK_OP_SOFTMAX).c_str());

    double worst = 0;
    for (int i = 0; i < tokens; ++i) {
      std::vector<double> row(tokens);
      double max = -1e300, sum = 0;
      for (int j = 0; j < tokens; ++j) {
        double dot = 0;
        for (int p = 0; p < dim; ++p) dot += double(q[i * dim + p]) * k[j * dim + p];
        row[j] = dot / std::sqrt(double(dim));
        max = std::fmax(max, row[j]);
      }
      for (int j = 0; j < tokens; ++j) sum += std::exp(row[j] - max);
      for (int j = 0; j < tokens; ++j) {
        const double expected = std::exp(row[j] - max) / sum;
        worst = std::fmax(worst, std::fabs(result[i * tokens + j] - expected));
      }
    }
    std::printf("max abs error %.3g\n", worst);
    if (!(worst < 1e-5)) {
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
