#!/usr/bin/env bash
# Profiles each CUDA rung of one ladder at one size with Nsight Compute and tabulates,
# per kernel: SM, DRAM and L2 throughput (% of peak), achieved occupancy, registers per
# thread, shared memory per block, elapsed cycles and duration, into profile.csv and
# profile.md (include it with: gpukern-report ... --profile DIR/profile.csv).
#
# Each rung runs in its own process under ncu: gpukern-bench with --variants RUNG
# --no-reference --warmup 0 --repeats 1 --flush-mb 0, so the only kernels are that
# rung's (one call; a rung may launch several kernels, e.g. split_row). Clocks are left
# alone (--clock-control none): figures match what the benchmark measures, and the
# GPU's clock settings are not touched.
#
# Usage: scripts/profile_ncu.sh [options]
#   --op gemm|softmax       ladder to profile (default gemm)
#   --dtype f32|tf32|f16|bf16  (default f32)
#   --size SIZE             gemm N or MxNxK, softmax RxC (default 4096 / 4096x4096)
#   --rungs a,b,c           rungs to profile (default: every rung that runs on this GPU)
#   --device cuda:N         device (default cuda)
#   --bench PATH            gpukern-bench (default: $GPUKERN_BENCH, build*/bin/, or PATH)
#   --ncu PATH              ncu (default: $NCU, PATH, /usr/local/cuda/bin/ncu)
#   --out DIR               output directory (default bench/results/profile-<gpu>-<date>)
#   --launch-count N        at most N kernels profiled per rung (default 16)
#   --dry-run               print the commands, run nothing
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
op=gemm dtype=f32 size="" rungs="" device=cuda bench=${GPUKERN_BENCH:-} ncu=${NCU:-} out=""
launch_count=16 dry_run=0

die() { echo "profile_ncu.sh: $*" >&2; exit 2; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --op) op=$2; shift 2 ;;
    --dtype) dtype=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --rungs) rungs=$2; shift 2 ;;
    --device) device=$2; shift 2 ;;
    --bench) bench=$2; shift 2 ;;
    --ncu) ncu=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --launch-count) launch_count=$2; shift 2 ;;
    --dry-run) dry_run=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
done
case "$op" in gemm|softmax) ;; *) die "--op must be gemm or softmax" ;; esac
case "$dtype" in f32|tf32|f16|bf16) ;; *) die "--dtype must be f32, tf32, f16 or bf16" ;; esac
[[ $op == softmax && $dtype == tf32 ]] && die "tf32 is a gemm mode"
[[ -n $size ]] || { [[ $op == gemm ]] && size=4096 || size=4096x4096; }

if [[ -z $bench ]]; then
  for candidate in "$repo"/build/bin/gpukern-bench "$repo"/build*/bin/gpukern-bench; do
    [[ -x $candidate ]] && { bench=$candidate; break; }
  done
  [[ -n $bench ]] || bench=$(command -v gpukern-bench || true)
fi
[[ -n $bench && -x $bench ]] || die "gpukern-bench not found (build it, or pass --bench PATH)"
if [[ -z $ncu ]]; then
  ncu=$(command -v ncu || true)
  [[ -n $ncu ]] || { [[ -x /usr/local/cuda/bin/ncu ]] && ncu=/usr/local/cuda/bin/ncu; }
fi
[[ -n $ncu ]] || { [[ $dry_run == 1 ]] && ncu=ncu || die "ncu not found (pass --ncu PATH)"; }
command -v python3 >/dev/null || die "python3 is needed to tabulate the results"

gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n1 || true)
gpu_name=${gpu_name:-unknown GPU}
if [[ -z $out ]]; then
  gpu_slug=$(echo "$gpu_name" | tr '[:upper:]' '[:lower:]' | tr -cs 'a-z0-9' '-' | sed 's/^-//; s/-$//')
  out="$repo/bench/results/profile-${gpu_slug:-gpu}-$(date -u +%Y-%m-%d)"
fi

if [[ -z $rungs ]]; then
  if [[ $dry_run == 1 ]] && ! "$bench" --backend "$device" --list-rungs "$op" >/dev/null 2>&1; then
    rungs="RUNG"
  else
    rungs=$("$bench" --backend "$device" --dtype "$dtype" --list-rungs "$op" 2>/dev/null | paste -sd, -) ||
      die "cannot list the $op rungs of $device: $("$bench" --backend "$device" --list-rungs "$op" 2>&1 | tail -n1)"
  fi
fi
[[ -n $rungs ]] || die "no $op rung runs on $device"

# Metric names of Nsight Compute's Speed Of Light, Occupancy and Launch Statistics sections.
metrics=(
  gpu__time_duration.sum
  sm__throughput.avg.pct_of_peak_sustained_elapsed
  dram__throughput.avg.pct_of_peak_sustained_elapsed
  lts__throughput.avg.pct_of_peak_sustained_elapsed
  sm__warps_active.avg.pct_of_peak_sustained_active
  launch__registers_per_thread
  launch__shared_mem_per_block_static
  launch__shared_mem_per_block_dynamic
  gpc__cycles_elapsed.max
  launch__grid_size
  launch__block_size
)
metric_list=$(IFS=,; echo "${metrics[*]}")

# Runs a command with stdout+stderr to a log file; with --dry-run only prints it.
run_logged() {
  local log=$1; shift
  if [[ $dry_run == 1 ]]; then printf '%q ' "$@"; echo ">$(printf '%q' "$log") 2>&1"; return 0; fi
  "$@" >"$log" 2>&1
}

[[ $dry_run == 1 ]] || mkdir -p "$out/ncu"
exports=()
IFS=, read -r -a rung_list <<<"$rungs"
for rung in "${rung_list[@]}"; do
  tag="$op-$dtype-$size-$rung"
  echo "profile_ncu.sh: $tag" >&2
  # A rung that fails under ncu (or declines the case) leaves no report: noted, not fatal.
  if ! run_logged "$out/ncu/$tag.log" "$ncu" --clock-control none --target-processes all \
      --metrics "$metric_list" --launch-count "$launch_count" --force-overwrite \
      --export "$out/ncu/$tag" \
      "$bench" --backend "$device" --op "$op" --dtype "$dtype" --sizes "$size" --variants "$rung" \
      --no-reference --warmup 0 --repeats 1 --min-time 0 --flush-mb 0; then
    echo "profile_ncu.sh: ncu failed for $rung (see $out/ncu/$tag.log)" >&2
    if grep -q ERR_NVGPUCTRPERM "$out/ncu/$tag.log" 2>/dev/null; then
      echo "profile_ncu.sh: no permission for GPU counters (run as root, or load the driver with" \
           "NVreg_RestrictProfilingToAdminUsers=0)" >&2
    fi
  fi
  # Raw page as CSV with base units; short kernel names where this ncu supports it.
  if [[ $dry_run == 1 || -s "$out/ncu/$tag.ncu-rep" ]]; then
    run_logged "$out/ncu/$tag.csv" "$ncu" --import "$out/ncu/$tag.ncu-rep" --csv --page raw \
        --print-units base --print-kernel-base function ||
      run_logged "$out/ncu/$tag.csv" "$ncu" --import "$out/ncu/$tag.ncu-rep" --csv --page raw \
        --print-units base || true
  fi
  exports+=("$rung=$out/ncu/$tag.csv")
done
[[ $dry_run == 1 ]] && exit 0

# Tabulate: one row per profiled kernel, in ladder order.
python3 - "$out" "$op" "$dtype" "$size" "$gpu_name" "${exports[@]}" <<'EOF'
import csv, io, os, sys

out, op, dtype, size, gpu = sys.argv[1:6]
pairs = [a.split("=", 1) for a in sys.argv[6:]]
columns = ["op", "dtype", "shape", "rung", "kernel", "sm_throughput_pct", "dram_throughput_pct",
           "l2_throughput_pct", "achieved_occupancy_pct", "registers_per_thread",
           "shared_mem_per_block_bytes", "elapsed_cycles", "duration_us", "grid", "block"]
TIME_SCALE = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3,
              "second": 1e6, "s": 1e6}
BYTE_SCALE = {"byte": 1, "Kbyte": 1e3, "KB": 1e3, "Mbyte": 1e6, "KiB": 1024, "Kibyte": 1024}


def number(text):
    try:
        return float(text.replace(",", ""))
    except (AttributeError, ValueError):
        return None


def show(value, digits=1):
    if value is None:
        return ""
    return str(int(round(value))) if digits == 0 else "{:.{}f}".format(value, digits)


rows = []
for rung, path in pairs:
    lines = []
    if os.path.exists(path):
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    # The CSV starts at the header line naming "Kernel Name" (ncu may print ==PROF== lines first).
    start = next((i for i, l in enumerate(lines) if '"Kernel Name"' in l), None)
    if start is None:
        # Why: the benchmark's table line for the rung ("skipped: reason"), in the ncu log.
        why = "no kernel profiled"
        log = path[:-len(".csv")] + ".log"
        if os.path.exists(log):
            with open(log, encoding="utf-8", errors="replace") as f:
                for line in f:
                    fields = line.split()
                    if rung in fields and ("skipped:" in fields or "failed:" in fields):
                        why = line.split(":", 1)[0].split()[-1] + ":" + line.split(":", 1)[1].rstrip()
        rows.append({"op": op, "dtype": dtype, "shape": size, "rung": rung, "kernel": "({})".format(why.strip())})
        continue
    table = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
    header, body = table[0], table[1:]
    units = {}
    if body and body[0] and not body[0][0].strip():  # the units row (no ID) of --print-units
        units = dict(zip(header, body[0]))
        body = body[1:]
    for values in body:
        r = dict(zip(header, values))
        get = lambda name: number(r.get(name))
        smem = [get("launch__shared_mem_per_block_static"), get("launch__shared_mem_per_block_dynamic")]
        smem_scale = BYTE_SCALE.get(units.get("launch__shared_mem_per_block_static", "byte"), 1)
        duration = get("gpu__time_duration.sum")
        if duration is not None:
            duration *= TIME_SCALE.get(units.get("gpu__time_duration.sum", "nsecond"), 1e-3)
        rows.append({
            "op": op, "dtype": dtype, "shape": size, "rung": rung,
            "kernel": r.get("Kernel Name", ""),
            "sm_throughput_pct": show(get("sm__throughput.avg.pct_of_peak_sustained_elapsed")),
            "dram_throughput_pct": show(get("dram__throughput.avg.pct_of_peak_sustained_elapsed")),
            "l2_throughput_pct": show(get("lts__throughput.avg.pct_of_peak_sustained_elapsed")),
            "achieved_occupancy_pct": show(get("sm__warps_active.avg.pct_of_peak_sustained_active")),
            "registers_per_thread": show(get("launch__registers_per_thread"), 0),
            "shared_mem_per_block_bytes": show(sum(v for v in smem if v is not None) * smem_scale, 0)
                if any(v is not None for v in smem) else "",
            "elapsed_cycles": show(get("gpc__cycles_elapsed.max"), 0),
            "duration_us": show(duration, 2),
            "grid": show(get("launch__grid_size"), 0),
            "block": show(get("launch__block_size"), 0),
        })

with open(os.path.join(out, "profile.csv"), "w", newline="", encoding="utf-8") as f:
    w = csv.DictWriter(f, fieldnames=columns)
    w.writeheader()
    for r in rows:
        w.writerow({c: r.get(c, "") for c in columns})

titles = ["rung", "kernel", "SM %", "DRAM %", "L2 %", "occupancy %", "regs/thread", "smem/block (B)",
          "cycles", "µs", "grid", "block"]
keys = ["rung", "kernel", "sm_throughput_pct", "dram_throughput_pct", "l2_throughput_pct",
        "achieved_occupancy_pct", "registers_per_thread", "shared_mem_per_block_bytes", "elapsed_cycles",
        "duration_us", "grid", "block"]
with open(os.path.join(out, "profile.md"), "w", encoding="utf-8") as f:
    f.write("# Nsight Compute: {} {} {} on {}\n\n".format(op, dtype, size, gpu))
    f.write("ncu --clock-control none; throughputs in % of the peak sustained rate over the kernel's "
            "elapsed time; occupancy = achieved active warps in % of the maximum.\n\n")
    f.write("| " + " | ".join(titles) + " |\n|" + "---|" * len(titles) + "\n")
    for r in rows:
        f.write("| " + " | ".join(str(r.get(k, "")).replace("|", "\\|") for k in keys) + " |\n")
print("wrote {} and {}".format(os.path.join(out, "profile.csv"), os.path.join(out, "profile.md")))
EOF
