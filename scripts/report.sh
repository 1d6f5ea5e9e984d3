#!/usr/bin/env bash
# Regenerates bench/report/ (report.md and the PNG plots) and the README's measured tables
# from every committed run in bench/results/ and the Nsight Compute profiles in
# bench/results/profiles/.
set -euo pipefail
cd "$(dirname "$0")/.."
profiles=()
for f in bench/results/profiles/*.csv; do [ -f "$f" ] && profiles+=(--profile "$f"); done
# Debian's python3-matplotlib belongs to the system interpreter; prefer one that has it.
py=python3
for candidate in /usr/bin/python3 python3; do
  if "$candidate" -c 'import matplotlib' 2>/dev/null; then py=$candidate; break; fi
done
"$py" bench/report/gpukern_report.py bench/results/*.json --out bench/report "${profiles[@]}"
# The README's measured tables are generated from the same runs (between their markers).
"$py" bench/report/gpukern_report.py bench/results/*.json --readme README.md
