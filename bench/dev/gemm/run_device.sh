#!/usr/bin/env bash
# The CUDA GEMM development drivers on a GPU machine, in one call. Build first (on any
# machine with nvcc; no GPU needed):
#   cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUKERN_CUDA_ARCHS=90a \
#         -DGPUKERN_HIP=OFF -DGPUKERN_BUILD_DEV=ON
#   ninja -C build gemm_simt_bench gemm_tc_bench
# then, on the GPU machine (with the device tool: carry=[build]):
#   bench/dev/gemm/run_device.sh [OUT] [BUILD]
# runs the timing of every f32 rung against cuBLAS, the double_buffer candidate sweep,
# the tensor-core rungs against cuBLAS and their variants; logs and CSVs go to OUT.
# Set SKIP_TUNE, SKIP_TC or SKIP_VARIANTS to leave a part out; GEMM_BENCH_SIZES and
# GEMM_TUNE_SIZES replace the default sizes. Correctness: ctest -L cuda (tests/cuda).
set -euo pipefail
cd "$(dirname "$0")/../../.."
out=${1:-${OUT:-dev-gemm-out}}
build=${2:-build}
bin=$build/bin
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv || true
"$bin/gemm_simt_bench" info
echo "== SIMT rungs against cuBLAS"
timeout "${BENCH_TIMEOUT:-100}" "$bin/gemm_simt_bench" bench "${GEMM_BENCH_SIZES:-1024,2048,4096,8192,4097x4095x4093,1000}" \
  "$out" 2>&1 | tee "$out/bench.out" || true
if [ -z "${SKIP_TUNE:-}" ]; then
  echo "== double_buffer candidates"
  timeout "${TUNE_TIMEOUT:-80}" "$bin/gemm_simt_bench" tune "${GEMM_TUNE_SIZES:-4096,8192,4097x4095x4093,1000,2048}" \
    "$out" > "$out/tune.out" 2>&1 || true
  grep -E "4096x|8192x|4097x|1000x" "$out/tune.out" | head -80 || true
fi
if [ -z "${SKIP_TC:-}" ]; then
  echo "== tensor-core rungs against cuBLAS"
  timeout "${TC_TIMEOUT:-150}" "$bin/gemm_tc_bench" bench 2>&1 | tee "$out/tc_bench.out" || true
fi
if [ -z "${SKIP_VARIANTS:-}" ]; then
  echo "== tensor-core variants"
  timeout "${VARIANTS_TIMEOUT:-150}" "$bin/gemm_tc_bench" variants 2>&1 | tee "$out/tc_variants.out" || true
fi
