#!/usr/bin/env bash
# Times every wgmma_tma tile configuration and K split (GPUKERN_WGMMA_CONFIG forced, see
# src/cuda/gemm/tensor_core/12_wgmma_tma.cu) against cuBLAS with gpukern-bench, on a GPU
# machine, and prints one table of % of cuBLAS per shape: the data the rung's choice
# table (choose_wgmma_config) is tuned from. Build gpukern-bench first (no dev build
# needed), then:
#   bench/dev/gemm/wgmma_configs.sh [OUT] [BUILD]
# OUT (default wgmma-configs-out) gets one JSON per configuration and layout and
# table.md. Environment: CONFIGS (";"-separated names; "table" = the rung's own
# choice, the variable unset), SIZES (gpukern-bench --sizes), DTYPES, LAYOUTS, and
# BENCH_ARGS (extra gpukern-bench options, e.g. "--min-time 0.05"). GPUKERN_WGMMA_SCHEDULE
# (static or claimed) in the environment applies to every run: run the script once per
# schedule to compare them.
set -euo pipefail
cd "$(dirname "$0")/../../.."
out=${1:-wgmma-configs-out}
build=${2:-build}
bench=$build/bin/gpukern-bench
mkdir -p "$out"
configs=${CONFIGS:-"table;128x256c2;128x256c2 splitk2;128x256c2 splitk3;128x128;128x128 splitk2;128x128 splitk4;64x128;64x128 splitk2;64x128 splitk4;tf32nn;tf32nn splitk2;tf32nn splitk4"}
sizes=${SIZES:-128x4096x4096,256x4096x4096,256x4096x11008,512x4096x4096,512x4096x11008,16x4096x11008,1000,1536,4096}
dtypes=${DTYPES:-bf16,f16,tf32}
layouts=${LAYOUTS:-NN NT}
IFS=';' read -r -a config_list <<<"$configs"
for config in "${config_list[@]}"; do
  for layout in $layouts; do
    # A forced tile applies to the calls its kernel runs: tf32nn names to tf32 NN only,
    # f32nn names to exact f32 (either layout), the others to everything else (tf32 NN and
    # exact f32 calls would run the table's choice).
    dt=$dtypes
    case "$config" in
      table) ;;
      tf32nn*) [ "$layout" = NN ] || continue; dt=tf32 ;;
      f32nn*) dt=f32 ;;
      *)
        dt=$(echo "$dtypes" | tr ',' '\n' | grep -vx f32 | paste -sd, -)
        [ "$layout" = NN ] && dt=$(echo "$dt" | tr ',' '\n' | grep -vx tf32 | paste -sd, -)
        ;;
    esac
    [ -n "$dt" ] || continue
    file="$out/$(echo "$config" | tr ' ' '_')-$layout.json"
    echo "== $config $layout"
    if [ "$config" = table ]; then
      env -u GPUKERN_WGMMA_CONFIG "$bench" --backend cuda --op gemm --dtype "$dt" --variants wgmma_tma \
        --layout "$layout" --sizes "$sizes" --json "$file" -q ${BENCH_ARGS:-} || true
    else
      GPUKERN_WGMMA_CONFIG="$config" "$bench" --backend cuda --op gemm --dtype "$dt" --variants wgmma_tma \
        --layout "$layout" --sizes "$sizes" --json "$file" -q ${BENCH_ARGS:-} || true
    fi
  done
done
python3 - "$out" <<'PY' | tee "$out/table.md"
import glob, json, os, sys
out = sys.argv[1]
cells, configs = {}, []
for path in sorted(glob.glob(os.path.join(out, "*.json"))):
    name = os.path.basename(path)[:-5]
    config, layout = name.rsplit("-", 1)
    config = config.replace("_", " ")
    if config not in configs:
        configs.append(config)
    for r in json.load(open(path)).get("results", []):
        if r.get("op") != "gemm" or r.get("is_reference"):
            continue
        key = (r["dtype"], layout, f'{r["m"]}x{r["n"]}x{r["k"]}')
        pct = r.get("pct_of_reference")
        ok = "" if r.get("error_ok", True) else " ERR"
        cells.setdefault(key, {})[config] = "-" if pct is None else f"{pct:.1f}{ok}"
configs.sort(key=lambda c: (c != "table", c))
print("% of cuBLAS (same run), wgmma_tma per configuration; 'table' = the rung's own choice\n")
print("| dtype | layout | MxNxK | " + " | ".join(configs) + " |")
print("|" + "---|" * (3 + len(configs)))
for key in sorted(cells):
    print("| " + " | ".join(key) + " | " + " | ".join(cells[key].get(c, "") for c in configs) + " |")
PY
