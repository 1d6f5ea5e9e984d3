// gemm_chain: calls of one rung back to back on one stream, as a model's layers run them
// (each call its own weight buffer, the activations and outputs shared), against the same
// chain on cuBLAS. Through the public C API, so the calls go through dispatch as an
// application's do. Each round writes 512 MiB (the bench's flush), then times the whole
// chain with one pair of events; the per-call time is the chain's over its length. Rounds
// alternate the rung's chain and cuBLAS's. Run it once with GPUKERN_PDL=off and once
// without to see what launching as programmatic dependents does between calls
// (notes/llm-gemm.md, "Programmatic dependent launch").
//
//   gemm_chain [rung=wgmma_tma] [layers=8] [rounds=40] [shapes=TxNxK,...] [layout=NN|NT]
#include "gpukern/gpukern.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

#define CHECK(call)                                                                        \
  do {                                                                                     \
    const gk_status s_ = (call);                                                           \
    if (s_ != GK_SUCCESS) {                                                                \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, gk_last_error()); \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)

struct Shape {
  long t, n, k;
};

std::vector<Shape> parse_shapes(const std::string& text) {
  std::vector<Shape> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t end = std::min(text.find(',', pos), text.size());
    Shape s{};
    if (std::sscanf(text.substr(pos, end - pos).c_str(), "%ldx%ldx%ld", &s.t, &s.n, &s.k) == 3) out.push_back(s);
    pos = end + 1;
  }
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const std::string rung = argc > 1 ? argv[1] : "wgmma_tma";
  const int layers = argc > 2 ? std::atoi(argv[2]) : 8;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 40;
  const std::vector<Shape> shapes =
      parse_shapes(argc > 4 ? argv[4] : "1x4096x4096,16x4096x4096,128x4096x4096,256x256x256,1000x1000x1000");
  const bool nt = argc > 5 && std::strcmp(argv[5], "NT") == 0;
  gk_handle h = nullptr;
  if (gk_open("cuda", &h) != GK_SUCCESS) {
    std::printf("gemm_chain: no CUDA device (%s)\n", gk_last_error());
    return 0;
  }
  const std::size_t flush_bytes = std::size_t(512) << 20;
  void* flush = nullptr;
  CHECK(gk_malloc(h, flush_bytes, &flush));
  gk_timer timer = nullptr;
  CHECK(gk_timer_create(h, &timer));
  const char* pdl = std::getenv("GPUKERN_PDL");
  for (const Shape& s : shapes) {
    // Inputs: any finite bf16 bytes (0x3c00 = 0.0078); every call must be fast, not right.
    void *x = nullptr, *c = nullptr;
    std::vector<void*> w(static_cast<std::size_t>(layers));
    CHECK(gk_malloc(h, std::size_t(s.t * s.k) * 2, &x));
    CHECK(gk_malloc(h, std::size_t(s.t * s.n) * 2, &c));
    CHECK(gk_memset(h, x, 0x3c, std::size_t(s.t * s.k) * 2));
    for (void*& p : w) {
      CHECK(gk_malloc(h, std::size_t(s.n * s.k) * 2, &p));
      CHECK(gk_memset(h, p, 0x3c, std::size_t(s.n * s.k) * 2));
    }
    const auto chain = [&](const char* variant) {
      for (int l = 0; l < layers; ++l) {
        gk_gemm_desc d{};
        d.trans_a = GK_NO_TRANS;
        d.trans_b = nt ? GK_TRANS : GK_NO_TRANS;
        d.m = s.t, d.n = s.n, d.k = s.k;
        d.alpha = 1.0f, d.beta = 0.0f;
        d.a = x, d.lda = s.k;
        d.b = w[static_cast<std::size_t>(l)], d.ldb = nt ? s.k : s.n;
        d.c = c, d.ldc = s.n;
        d.ab_type = d.c_type = GK_BF16;
        d.variant = variant;
        CHECK(gk_gemm(h, &d));
      }
    };
    std::vector<double> own, ref;
    for (int r = 0; r < rounds + 2; ++r)
      for (int which = 0; which < 2; ++which) {
        const char* variant = which == 0 ? rung.c_str() : "cublas";
        CHECK(gk_memset(h, flush, r & 0xff, flush_bytes));
        CHECK(gk_timer_start(timer));
        chain(variant);
        CHECK(gk_timer_stop(timer));
        double ms = 0;
        CHECK(gk_timer_elapsed_ms(timer, &ms));
        if (r >= 2) (which == 0 ? own : ref).push_back(ms * 1000.0 / layers);
      }
    const double o = median(own), b = median(ref);
    std::printf("%-8s %s %ldx%ldx%ld %s layers %d: %s %.2f us a call, cublas %.2f, %.1f%%\n", pdl ? pdl : "(unset)",
                nt ? "NT" : "NN", s.t, s.n, s.k, rung.c_str(), layers, rung.c_str(), o, b, 100.0 * b / o);
    for (void* p : w) CHECK(gk_free(h, p));
    CHECK(gk_free(h, x));
    CHECK(gk_free(h, c));
  }
  CHECK(gk_timer_destroy(timer));
  CHECK(gk_close(h));
  return 0;
}
