// call_overhead: the library's cost per call, apart from the kernels. Times many calls of a
// tiny GEMM (default 1 x 1 x 1, f32) per variant on one backend, so dispatch, validation and
// option reads show instead of the work. GPU backends time the host side of each call (the
// launches queue up; a synchronize ends each batch).
//
// usage: call_overhead [backend] [variant ...]      e.g. call_overhead cpu auto naive
//        env CALLS (default 200000), SIZE (m = n = k, default 1), DTYPE (f32, default, or bf16:
//        A, B and C in bf16, the tensor-core rungs' common call)
#include <gpukern/gpukern.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  const std::string backend = argc > 1 ? argv[1] : "cpu";
  std::vector<std::string> variants;
  for (int i = 2; i < argc; ++i) variants.emplace_back(argv[i]);
  if (variants.empty()) variants = {"auto", "naive"};
  const long calls = std::getenv("CALLS") ? std::atol(std::getenv("CALLS")) : 200000;
  const int size = std::getenv("SIZE") ? std::atoi(std::getenv("SIZE")) : 1;
  const bool bf16 = std::getenv("DTYPE") && std::string(std::getenv("DTYPE")) == "bf16";
  try {
    gpukern::Device dev(backend);
    const std::size_t bytes = sizeof(float) * static_cast<std::size_t>(size) * size;  // f32 or bf16: enough
    gpukern::Buffer a = dev.alloc(bytes), b = dev.alloc(bytes), c = dev.alloc(bytes);
    std::vector<float> ones(static_cast<std::size_t>(size) * size, 1.0f);
    dev.upload(a, ones.data(), bytes);
    dev.upload(b, ones.data(), bytes);
    gpukern::GemmDesc g;
    g.m = g.n = g.k = size;
    g.a = a.data();
    g.b = b.data();
    g.c = c.data();
    g.lda = g.ldb = g.ldc = size;
    if (bf16) g.ab_type = g.c_type = GK_BF16;  // the ones above read as bf16 1.0078 and 0: any values do
    // Two rounds of every variant, alternating, so a drift of the machine shows as a spread.
    for (int round = 0; round < 2; ++round)
      for (const std::string& v : variants) {
        g.variant = v.c_str();
        for (int i = 0; i < 1000; ++i) dev.gemm(g);
        dev.synchronize();
        const auto t0 = std::chrono::steady_clock::now();
        for (long i = 0; i < calls; ++i) dev.gemm(g);
        dev.synchronize();
        const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
        std::printf("%-16s %8.3f us/call\n", v.c_str(), us / static_cast<double>(calls));
      }
  } catch (const gpukern::Error& e) {
    std::fprintf(stderr, "call_overhead: %s\n", e.what());
    return 1;
  }
  return 0;
}
