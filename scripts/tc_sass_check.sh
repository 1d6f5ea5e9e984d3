#!/usr/bin/env bash
# Checks the machine code of the tensor-core GEMM rungs in a built CUDA module:
#   wgmma_tma_kernel      must contain HGMMA (Hopper warpgroup MMA; sm_90a code)
#   mma_multistage_kernel must contain HMMA  (mma.sync) and LDSM (ldmatrix)
#   wmma_kernel           must contain HMMA
# and reports local-memory spills (LDL/STL) in them as warnings.
# Usage: scripts/tc_sass_check.sh PATH/TO/libgpukern_cuda.so (or any binary with the kernels)
# Exit 0 = all found; 1 = a check failed; 77 = cuobjdump missing (ctest SKIP_RETURN_CODE).
set -euo pipefail
module=${1:?usage: $0 MODULE}
# cuobjdump: on PATH (a CUDA toolkit install), else from the nvidia-cuda-cuobjdump wheel
# that scripts/install-deps.sh installs where nvcc has no cuobjdump beside it.
cuobjdump=$(command -v cuobjdump || true)
if [ -z "$cuobjdump" ]; then
  for py in python3 /usr/bin/python3; do
    command -v "$py" >/dev/null || continue
    cuobjdump=$("$py" - <<'PY' 2>/dev/null || true
import glob, os
try:
    import nvidia
    for d in nvidia.__path__:
        for f in sorted(glob.glob(os.path.join(d, "*", "bin", "cuobjdump"))):
            print(f); raise SystemExit
except ImportError:
    pass
PY
)
    [ -n "$cuobjdump" ] && break
  done
fi
[ -n "$cuobjdump" ] || { echo "SKIP: cuobjdump not found (CUDA toolkit or pip nvidia-cuda-cuobjdump): SASS not checked"; exit 77; }
[ -f "$module" ] || { echo "no such file: $module"; exit 1; }
sass=$(mktemp)
trap 'rm -f "$sass"' EXIT
"$cuobjdump" -sass "$module" > "$sass"
# Count, per kernel family, the functions and the instructions of interest.
report=$(awk '
  /Function : / { f = $3; fam = "";
                  if (f ~ /wgmma_tma_kernel/) fam = "wgmma";
                  else if (f ~ /mma_multistage_kernel/) fam = "mma";
                  else if (f ~ /wmma_kernel/) fam = "wmma";
                  if (fam != "") funcs[fam]++ ; next }
  fam != "" && /HGMMA/ { hgmma[fam]++ }
  fam != "" && /HMMA/  { hmma[fam]++ }
  fam != "" && /LDSM/  { ldsm[fam]++ }
  fam != "" && /(LDL|STL)/ { spill[fam]++ }
  END { for (k in funcs) printf "%s %d %d %d %d %d\n", k, funcs[k], hgmma[k]+0, hmma[k]+0, ldsm[k]+0, spill[k]+0 }
' "$sass")
status=0
check() {  # family instruction column-name
  local fam=$1 col=$2 what=$3
  local line; line=$(grep "^$fam " <<<"$report" || true)
  if [ -z "$line" ]; then echo "FAIL: no $fam kernels in $module"; status=1; return; fi
  local n; n=$(awk -v c="$col" '{print $c}' <<<"$line")
  if [ "$n" -gt 0 ]; then echo "ok: $fam kernels contain $what ($n)"; else echo "FAIL: $fam kernels contain no $what"; status=1; fi
  local s; s=$(awk '{print $6}' <<<"$line")
  [ "$s" -eq 0 ] || echo "warning: $fam kernels use local memory ($s LDL/STL)"
}
check wgmma 3 HGMMA
check mma 4 HMMA
check mma 5 LDSM
check wmma 4 HMMA
exit $status
