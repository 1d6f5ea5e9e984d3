#!/usr/bin/env bash
# Builds every backend this machine can compile (CPU always; CUDA where nvcc is found;
# HIP where hipcc is found) and runs the whole test suite. GPU tests skip with a
# message when no GPU is present.
#   BUILD_DIR (default build), GPUKERN_CUDA_ARCHS (default: the full fat binary)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
BUILD_DIR=${BUILD_DIR:-build}
args=(-G Ninja -DCMAKE_BUILD_TYPE=Release)
[ -n "${GPUKERN_CUDA_ARCHS:-}" ] && args+=("-DGPUKERN_CUDA_ARCHS=${GPUKERN_CUDA_ARCHS}")
[ -n "${GPUKERN_HIP_ARCHS:-}" ] && args+=("-DGPUKERN_HIP_ARCHS=${GPUKERN_HIP_ARCHS}")
cmake -S . -B "$BUILD_DIR" "${args[@]}"
cmake --build "$BUILD_DIR" -j "$(nproc)"
"$BUILD_DIR"/bin/gpukern-info | grep -E "^backend" || true
status=0
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)" || status=$?
# ctest shows skipped tests without their reason: list the reasons (no GPU, missing ISA).
log="$BUILD_DIR/Testing/Temporary/LastTest.log"
if [ -f "$log" ] && grep -q "Skipped$" "$log"; then
  echo "Skipped tests, by reason:"
  { grep -hE "Skipped$" -A1 "$log" | grep -vE "Skipped$|^--$" | sort | uniq -c | sort -rn; } || true
fi
exit $status
