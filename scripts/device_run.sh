#!/usr/bin/env bash
# One call on the GPU machine over a carried build (default build-dev, configured with
# -DGPUKERN_CUDA_ARCHS=90a): GPU conformance tests, compute-sanitizer memcheck and
# racecheck on small odd shapes for every CUDA rung, the CUDA benchmark (JSON), and
# Nsight Compute profiles of the f32 gemm ladder. Logs and results go to $OUT.
#   scripts/device_run.sh [BUILD_DIR] [all|tests]     (NCU=0: no profile)
set -uo pipefail
build=${1:-build-dev}
out=${OUT:-/tmp/gpukern-device}
mkdir -p "$out"
mode=${2:-all}   # all, or tests (GPU tests and sanitizers only)
tmp=$(mktemp -d)  # at most 8 files come back: full logs are appended to $out/logs.txt
cudnn_dir=$(python3 -c 'import nvidia.cudnn, os; print(os.path.dirname(nvidia.cudnn.__file__) + "/lib")' 2>/dev/null)
[ -n "$cudnn_dir" ] && export LD_LIBRARY_PATH="$cudnn_dir:${LD_LIBRARY_PATH:-}"
bench="$build/bin/gpukern-bench"
# The carried build keeps the absolute paths of the machine it was built on: make them resolve.
home=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
[ -n "$home" ] && [ ! -e "$home" ] && mkdir -p "$(dirname "$home")" && ln -s "$PWD" "$home"
bdir=$(sed -n 's/^CMAKE_CACHEFILE_DIR:INTERNAL=//p' "$build/CMakeCache.txt")
[ -n "$bdir" ] && [ ! -e "$bdir" ] && ln -s "$PWD/$build" "$bdir"
phase() { echo "== $(date +%T) $*"; }

phase info
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm --format=csv
"$build/bin/gpukern-info" > "$tmp/info.txt" 2>&1; echo "gpukern-info rc=$?"; cat "$tmp/info.txt" >> "$out/logs.txt"

if [ "$mode" = all ]; then
phase "benchmark (cuda)"
common=(--backend cuda --repeats 10 --min-time 0.05 --max-time 1 --naive-max-size 4096)
timeout 130 "$bench" "${common[@]}" --op gemm --dtype f32,tf32,f16,bf16 \
  --gemm-sizes 1000,4096,8192,4097x4095x4093 --json "$out/gemm.json" > "$out/bench.txt" 2> "$tmp/bench.err"
echo "bench gemm rc=$?"
timeout 80 "$bench" "${common[@]}" --op softmax --dtype f32,f16,bf16 \
  --softmax-sizes 4096x4096,16384x1024,65536x128,1024x32768,64x262144,32768x8192 \
  --json "$out/softmax.json" >> "$out/bench.txt" 2>> "$tmp/bench.err"
echo "bench softmax rc=$?"; tail -3 "$tmp/bench.err"; cat "$tmp/bench.err" >> "$out/logs.txt"
fi

phase "GPU tests"
# The test binaries directly (ctest's gtest discovery needs the CMake of the build machine).
timeout 200 "$build/bin/gpukern_conformance_tests" --backend=cuda > "$tmp/conformance.log" 2>&1
echo "conformance rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests ran|FAILED  \]" "$tmp/conformance.log" | head -30
timeout 60 "$build/bin/gpukern_gpu_tests" > "$tmp/gpu_tests.log" 2>&1
echo "gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED) " "$tmp/gpu_tests.log"
cat "$tmp/conformance.log" "$tmp/gpu_tests.log" | grep -vE "^\[       OK|^\[ RUN" >> "$out/logs.txt"

phase "compute-sanitizer"
# Softmax sizes reach every policy path: warp_row, block_row (registers and the hybrid
# register + shared-memory rows over 32 KB), split_row clusters (few long rows).
small=(--backend cuda --op all --dtype f32,tf32,f16,bf16 --gemm-sizes 67x33x45,64x40x48
       --softmax-sizes 33x127,3x5000,8x20000,2x262144
       --warmup 0 --repeats 1 --min-time 0 --max-time 0.01 --flush-mb 0 -q)
for tool in memcheck racecheck; do
  timeout 50 compute-sanitizer --tool $tool --error-exitcode 9 "$bench" "${small[@]}" \
    > "$tmp/sanitizer_$tool.log" 2>&1
  echo "$tool rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$tmp/sanitizer_$tool.log" | tail -2
  head -c 200000 "$tmp/sanitizer_$tool.log" >> "$out/logs.txt"
done
# wgmma_tma's split last round (more tiles than SMs, long K): partial sums through global memory.
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 "$bench" --backend cuda --op gemm --dtype tf32,f16 \
  --variants wgmma_tma --no-reference --gemm-sizes 1500x2900x1100 --warmup 0 --repeats 1 --min-time 0 \
  --max-time 0.01 --flush-mb 0 -q > "$tmp/sanitizer_split.log" 2>&1
echo "memcheck (split) rc=$?"; grep -E "ERROR SUMMARY" "$tmp/sanitizer_split.log" | tail -1

[ "$mode" = all ] && [ "${NCU:-1}" = 1 ] || { phase done; grep -E "^(cuda|gemm|softmax)|%" "$out/bench.txt" 2>/dev/null | tail -60; exit 0; }
phase "ncu profile (gemm f32 4096)"
GPUKERN_BENCH="$bench" timeout 60 scripts/profile_ncu.sh --op gemm --dtype f32 --size 4096 \
  --out "$tmp/profile" > "$tmp/profile.log" 2>&1
echo "ncu rc=$?"; tail -3 "$tmp/profile.log"; cp "$tmp"/profile/profile.csv "$tmp"/profile/profile.md "$out/" 2>/dev/null
phase done
grep -E "^(cuda|gemm|softmax)|%" "$out/bench.txt" | tail -60
