#!/usr/bin/env bash
# Builds libgpukern and runs gpukern-bench on every backend this machine has, writing
# bench/results/<device>-<date>.json. Extra arguments go to gpukern-bench. The gemm
# workload suites are separate runs of gpukern-bench (bench/README.md "Workload suites"):
#   build/bin/gpukern-bench --backend cuda --suite llm --json bench/results/   (-> ...-llm.json)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUKERN_BUILD_TESTS=OFF
cmake --build "$BUILD_DIR" -j "$(nproc)"
"$BUILD_DIR"/bin/gpukern-info
"$BUILD_DIR"/bin/gpukern-bench --backend all --op all --json bench/results/ "$@"
