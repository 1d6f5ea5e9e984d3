#!/usr/bin/env bash
# On the GPU machine, over a carried build (bin/, lib/, CMakeCache.txt): the checks a
# change to the CUDA module must pass there, each phase logged under $OUT.
#   bench/dev/device_check.sh BUILD [phase ...]
# phases: conformance, unit (core + gpu tests on the CUDA backend), softmax (tests/cuda
# softmax, large cases too), gemm (tests/cuda gemm), sanitize (memcheck, racecheck).
set -uo pipefail
build=$1; shift
out=${OUT:-/tmp/gpukern-device}
mkdir -p "$out"
cudnn_dir=$(python3 -c 'import nvidia.cudnn, os; print(os.path.dirname(nvidia.cudnn.__file__) + "/lib")' 2>/dev/null)
[ -n "$cudnn_dir" ] && export LD_LIBRARY_PATH="$cudnn_dir:${LD_LIBRARY_PATH:-}"
bdir=$(sed -n 's/^CMAKE_CACHEFILE_DIR:INTERNAL=//p' "$build/CMakeCache.txt")
[ -n "$bdir" ] && [ ! -e "$bdir" ] && mkdir -p "$(dirname "$bdir")" && ln -s "$PWD/$build" "$bdir"
bin=$build/bin
log=$out/checks.log
step() {  # name timeout command...
  local name=$1 limit=$2; shift 2
  local t0=$SECONDS
  timeout "$limit" "$@" > "$out/$name.log" 2>&1
  local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s  $(grep -hE '^\[  (PASSED|FAILED) |ERROR SUMMARY|RACECHECK SUMMARY' "$out/$name.log" | tr '\n' ' ' | cut -c1-200)" | tee -a "$log"
  grep -E "^\[  FAILED  \]" "$out/$name.log" | head -20
}
small=(--backend cuda --op all --dtype f32,tf32,f16,bf16 --gemm-sizes 67x33x45,64x40x48
       --softmax-sizes 33x127,3x5000,8x20000,2x262144
       --warmup 0 --repeats 1 --min-time 0 --max-time 0.01 --flush-mb 0 -q)
for phase in "$@"; do
  case $phase in
    conformance) step conformance 300 "$bin/gpukern_conformance_tests" --backend=cuda ;;
    unit)
      step gpu_tests 120 "$bin/gpukern_gpu_tests"
      step core_tests 200 "$bin/gpukern_core_tests" --gtest_filter='-ModuleFile*:ModuleLoading*:*ThrowingProbe*:*FailingDevice*' ;;
    softmax)
      step cuda_softmax 200 "$bin/gpukern_cuda_softmax_tests"
      step cuda_softmax_large 300 "$bin/gpukern_cuda_softmax_large_tests" ;;
    gemm) for t in "$bin"/gpukern_cuda_gemm*_tests; do step "$(basename "$t")" 300 "$t"; done ;;
    sanitize)
      for tool in memcheck racecheck; do
        step "$tool" 120 compute-sanitizer --tool $tool --error-exitcode 9 "$bin/gpukern-bench" "${small[@]}"
      done
      step memcheck_split 90 compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/gpukern-bench" --backend cuda \
        --op gemm --dtype tf32,f16 --variants wgmma_tma --no-reference --gemm-sizes 1500x2900x1100 --warmup 0 \
        --repeats 1 --min-time 0 --max-time 0.01 --flush-mb 0 -q ;;
    info) step info 60 "$bin/gpukern-info" ;;
  esac
done
