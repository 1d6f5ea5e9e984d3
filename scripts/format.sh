#!/usr/bin/env bash
# Formats every C, C++, CUDA and HIP source of the tree with the project's .clang-format.
#   scripts/format.sh [--check]     (--check: list the files that need formatting, exit 1 if any)
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.c' '*.h' '*.cpp' '*.hpp' '*.cu' '*.cuh' '*.hip')
if [ "${1:-}" = --check ]; then
  bad=0
  for f in "${files[@]}"; do
    clang-format "$f" | cmp -s - "$f" || { echo "$f"; bad=1; }
  done
  exit $bad
fi
clang-format -i "${files[@]}"
