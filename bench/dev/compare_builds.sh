#!/usr/bin/env bash
# On the GPU machine: gpukern-bench of two carried builds in one call, interleaved, so a
# change that must not move speed can be checked against the run-to-run noise measured
# in the same call (the second build twice). Logs and JSON go to $OUT.
#   bench/dev/compare_builds.sh BUILD_A BUILD_B [gemm|softmax|all]
set -uo pipefail
a=$1 b=$2 what=${3:-all}
out=${OUT:-/tmp/gpukern-compare}
mkdir -p "$out"
cudnn_dir=$(python3 -c 'import nvidia.cudnn, os; print(os.path.dirname(nvidia.cudnn.__file__) + "/lib")' 2>/dev/null)
[ -n "$cudnn_dir" ] && export LD_LIBRARY_PATH="$cudnn_dir:${LD_LIBRARY_PATH:-}"
# A carried build keeps the absolute paths of the machine it was built on: make them resolve.
for build in "$a" "$b"; do
  bdir=$(sed -n 's/^CMAKE_CACHEFILE_DIR:INTERNAL=//p' "$build/CMakeCache.txt")
  [ -n "$bdir" ] && [ ! -e "$bdir" ] && mkdir -p "$(dirname "$bdir")" && ln -s "$PWD/$build" "$bdir"
done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,temperature.gpu,power.draw --format=csv
common=(--backend cuda --repeats 10 --min-time 0.05 --max-time 0.5 --naive-max-size 1000 -q)
gemm=(--op gemm --dtype f32,tf32,f16,bf16 --gemm-sizes 1000,4096,8192,4097x4095x4093)
softmax=(--op softmax --dtype f32,f16,bf16
         --softmax-sizes 4096x4096,16384x1024,65536x128,1024x32768,64x262144,32768x8192)
run() {  # build tag args...
  local build=$1 tag=$2; shift 2
  local t0=$SECONDS
  timeout 280 "$build/bin/gpukern-bench" "${common[@]}" "$@" --json "$out/$tag.json" > "$out/$tag.txt" 2>&1
  echo "$tag rc=$? $((SECONDS - t0))s"
}
if [ "$what" = gemm ] || [ "$what" = all ]; then
  run "$a" gemm-a "${gemm[@]}"; run "$b" gemm-b "${gemm[@]}"; run "$b" gemm-b2 "${gemm[@]}"
fi
if [ "$what" = softmax ] || [ "$what" = all ]; then
  run "$a" softmax-a "${softmax[@]}"; run "$b" softmax-b "${softmax[@]}"; run "$b" softmax-b2 "${softmax[@]}"
fi
