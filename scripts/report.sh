#!/usr/bin/env bash
# Regenerates bench/report/ (report.md and the PNG plots) from every committed run in
# bench/results/ and the Nsight Compute profiles in bench/results/profiles/.
set -euo pipefail
cd "$(dirname "$0")/.."
profiles=()
for f in bench/results/profiles/*.csv; do [ -f "$f" ] && profiles+=(--profile "$f"); done
python3 bench/report/gpukern_report.py bench/results/*.json --out bench/report "${profiles[@]}"
