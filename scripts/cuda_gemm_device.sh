#!/usr/bin/env bash
# The CUDA GEMM ladder on a GPU machine, in one call: build here, run there.
#
#   scripts/cuda_gemm_device.sh build [ARCHS]  builds build-cudadev/gemm_check with nvcc
#                                             (default sm_90a), the module's sources plus
#                                             src/cuda/devtools; needs no GPU
#   scripts/cuda_gemm_device.sh run [OUT]      on the GPU machine: device info, the
#                                             correctness sweep of every rung and dtype,
#                                             the timing of every f32 rung vs cuBLAS, the
#                                             Hopper config sweep, compute-sanitizer on
#                                             small shapes; logs and CSVs under OUT
#
# With the device tool: build here, then run with carry=[build-cudadev] and the command
# `scripts/cuda_gemm_device.sh run $OUT`.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=build-cudadev
mode=${1:-}

build() {
  local CCACHE; CCACHE=$(command -v ccache || true)
  local archs=${1:-90a} gencode=() objects=() sources
  for a in ${archs//;/ }; do gencode+=("-gencode=arch=compute_${a},code=sm_${a}"); done
  mkdir -p "$BUILD/obj"
  sources=(src/cuda/backend.cu src/cuda/gemm/*.cu src/cuda/devtools/*.cu src/cuda/devtools/*.cpp)
  local flags=(-std=c++17 -O3 --expt-relaxed-constexpr -Isrc -Iinclude -Xptxas=-v "${gencode[@]}")
  for s in "${sources[@]}"; do objects+=("$BUILD/obj/$(echo "$s" | tr / _).o"); done
  printf '%s\n' "${sources[@]}" | xargs -P "$(nproc)" -I{} sh -c \
    'o='"$BUILD"'/obj/$(echo {} | tr / _).o; '"$CCACHE"' nvcc '"${flags[*]}"' -c {} -o $o 2> $o.log || { cat $o.log; exit 255; }'
  nvcc "${gencode[@]}" -o "$BUILD/gemm_check" "${objects[@]}" -lcublas
  cat "$BUILD"/obj/*.log | grep -E "spill|Used" | sort | uniq -c | sort -rn | head -5 || true
  echo "built $BUILD/gemm_check for ${archs}"
}

run() {
  local out=${1:-${OUT:-$BUILD/out}} bin=$BUILD/gemm_check
  mkdir -p "$out"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv || true
  "$bin" info
  echo "== check, SIMT rungs and cuBLAS (every dtype; details in check.log)"
  GEMM_CHECK_RUNGS=naive,coalesced,smem_tiled,blocktile_1d,blocktile_2d,vectorized,rect_tile,warptile,double_buffer,cublas \
    timeout "${CHECK_TIMEOUT:-90}" "$bin" check "" "$out" 2>&1 | tee "$out/check.out" | tail -n 25 || true
  echo "== check, tensor-core rungs (details in tc/check.log)"
  mkdir -p "$out/tc"
  GEMM_CHECK_RUNGS=wmma,mma_multistage,wgmma_tma timeout "${CHECK_TIMEOUT:-90}" "$bin" check "" "$out/tc" 2>&1 \
    | grep -v "^  rung" | tail -n 15 || true
  echo "== bench"
  timeout "${BENCH_TIMEOUT:-100}" "$bin" bench "${GEMM_BENCH_SIZES:-1024,2048,4096,8192,4097x4095x4093,1000}" "$out" 2>&1 | tee "$out/bench.out" || true
  if [ -z "${SKIP_TUNE:-}" ]; then
    echo "== tune"
    timeout "${TUNE_TIMEOUT:-80}" "$bin" tune "${GEMM_TUNE_SIZES:-4096,8192,4097x4095x4093,1000,2048}" "$out" > "$out/tune.out" 2>&1 || true
  fi
  if command -v compute-sanitizer > /dev/null && [ -z "${SKIP_SANITIZER:-}" ]; then
    echo "== compute-sanitizer memcheck (small shapes)"
    timeout "${SANITIZER_TIMEOUT:-60}" compute-sanitizer --tool memcheck --print-limit 20 "$bin" quick "" /tmp > "$out/memcheck.out" 2>&1 || true
    tail -n 3 "$out/memcheck.out"
  fi
  echo "== bench summary"
  grep -E "^(double_buffer|warptile|cublas) " "$out/bench.out" || true
  [ -f "$out/tune.out" ] && sort -t'%' -k1 "$out/tune.out" | grep -E "4096x|8192x|4097x|1000x" | head -80 || true
}

case "$mode" in
  build) build "${2:-}" ;;
  run) run "${2:-}" ;;
  *) echo "usage: $0 build [ARCHS] | run [OUT]" >&2; exit 2 ;;
esac
