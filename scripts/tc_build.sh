#!/usr/bin/env bash
# Builds the standalone tensor-core GEMM driver (scripts/tc_gemm_device.cu) for sm_90a
# with nvcc alone, into build-tcdev/ (ignored; carried to the GPU machine as a binary).
# Prints the register/spill report of every kernel into build-tcdev/ptxas.log.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build-tcdev
if [ "${1:-}" = trace ]; then  # the timeline build (tc_gemm_device.cu's trace mode)
  nvcc -std=c++17 -O3 -Isrc -Iinclude -gencode arch=compute_90a,code=sm_90a -DTC_TRACE \
    scripts/tc_gemm_device.cu src/cuda/gemm/tma_host.cu -lcublas -o build-tcdev/tc_gemm_trace
  exit
fi
nvcc -std=c++17 -O3 -Isrc -Iinclude -gencode arch=compute_90a,code=sm_90a -Xptxas -v \
  scripts/tc_gemm_device.cu src/cuda/gemm/tma_host.cu -lcublas -o build-tcdev/tc_gemm_device 2> build-tcdev/ptxas.log || {
  grep -E "error" build-tcdev/ptxas.log | head -20; exit 1; }
grep -E "spill" build-tcdev/ptxas.log | sort | uniq -c
