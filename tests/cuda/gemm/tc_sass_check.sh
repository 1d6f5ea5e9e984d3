#!/usr/bin/env bash
# Checks the machine code of the tensor-core GEMM rungs in a built CUDA module (ctest
# cuda.tc_sass, tests/cuda/gemm/CMakeLists.txt):
#   wgmma_tma_kernel, wgmma_tf32_nn_kernel
#                         must contain HGMMA (Hopper warpgroup MMA; sm_90a code)
#   mma_multistage_kernel must contain HMMA  (mma.sync) and LDSM (ldmatrix)
#   wmma_kernel           must contain HMMA
#   tcgen05_kernel        must contain UTCHMMA (tcgen05.mma) and LDTM (tcgen05.ld) in its
#                         sm_100a code, and no local memory; this part is skipped when
#                         the module has no sm_100a code (CUDA < 12.8), unless
#                         --expect-sm100a says the build put it there. The rung is
#                         compile-verified only: this is all the checking it gets.
#                         Its kernels must exist in no other architecture's code (the
#                         rung is built for sm_100a only).
# and reports local-memory spills (LDL/STL) in the others as warnings.
# Usage: tests/cuda/gemm/tc_sass_check.sh PATH/TO/libgpukern_cuda.so [--expect-sm100a]
# Exit 0 = all found; 1 = a check failed; 77 = cuobjdump or nvdisasm (which cuobjdump
# runs to disassemble) missing: skipped, with the reason (ctest SKIP_RETURN_CODE).
set -euo pipefail
module=${1:?usage: $0 MODULE [--expect-sm100a]}
expect_sm100a=0
[ "${2:-}" = "--expect-sm100a" ] && expect_sm100a=1
# A CUDA tool: on PATH (a CUDA toolkit install), else from the nvidia-cuda-* wheels
# (pip nvidia-cuda-cuobjdump, nvidia-cuda-nvdisasm) where nvcc has none beside it.
find_tool() {  # name
  local found; found=$(command -v "$1" || true)
  if [ -z "$found" ]; then
    for py in python3 /usr/bin/python3; do
      command -v "$py" >/dev/null || continue
      found=$("$py" - "$1" <<'PY' 2>/dev/null || true
import glob, os, sys
try:
    import nvidia
    for d in nvidia.__path__:
        for f in sorted(glob.glob(os.path.join(d, "*", "bin", sys.argv[1]))):
            print(f); raise SystemExit
except ImportError:
    pass
PY
)
      [ -n "$found" ] && break
    done
  fi
  echo "$found"
}
cuobjdump=$(find_tool cuobjdump)
[ -n "$cuobjdump" ] || { echo "SKIP: cuobjdump not found (CUDA toolkit or pip nvidia-cuda-cuobjdump): SASS not checked"; exit 77; }
# cuobjdump -sass runs nvdisasm, from NVDISASM_PATH, PATH or beside itself.
nvdisasm=""
[ -n "${NVDISASM_PATH:-}" ] && [ -x "$NVDISASM_PATH/nvdisasm" ] && nvdisasm=$NVDISASM_PATH/nvdisasm
[ -z "$nvdisasm" ] && [ -x "$(dirname "$cuobjdump")/nvdisasm" ] && nvdisasm=$(dirname "$cuobjdump")/nvdisasm
[ -z "$nvdisasm" ] && nvdisasm=$(find_tool nvdisasm)
[ -n "$nvdisasm" ] || { echo "SKIP: nvdisasm not found (CUDA toolkit or pip nvidia-cuda-nvdisasm; cuobjdump needs it): SASS not checked"; exit 77; }
export NVDISASM_PATH
NVDISASM_PATH=$(dirname "$nvdisasm")
[ -f "$module" ] || { echo "no such file: $module"; exit 1; }
sass=$(mktemp)
trap 'rm -f "$sass"' EXIT
"$cuobjdump" -sass "$module" > "$sass" || { echo "FAIL: cuobjdump -sass $module"; exit 1; }
# Count, per kernel family, the functions and the instructions of interest.
# tcgen05 kernels count in sm_100a code; anywhere else they are counted as misplaced.
report=$(awk '
  /^arch = / { arch = $3 }
  /Function : / { f = $3; fam = "";
                  if (f ~ /tcgen05_kernel/) { if (arch == "sm_100a") fam = "tcgen05"; else misplaced++ }
                  else if (f ~ /wgmma_tma_kernel|wgmma_tf32_nn_kernel/) fam = "wgmma";
                  else if (f ~ /mma_multistage_kernel/) fam = "mma";
                  else if (f ~ /wmma_kernel/) fam = "wmma";
                  if (fam != "") funcs[fam]++ ; next }
  fam != "" && /HGMMA/ { hgmma[fam]++ }
  fam != "" && /HMMA/  { hmma[fam]++ }
  fam != "" && /LDSM/  { ldsm[fam]++ }
  fam != "" && /(LDL|STL)/ { spill[fam]++ }
  fam != "" && /UTCHMMA/ { utchmma[fam]++ }
  fam != "" && /LDTM/ { ldtm[fam]++ }
  END { for (k in funcs) printf "%s %d %d %d %d %d %d %d\n", k, funcs[k], hgmma[k]+0, hmma[k]+0, ldsm[k]+0,
                                spill[k]+0, utchmma[k]+0, ldtm[k]+0;
        printf "misplaced_tcgen05 %d\n", misplaced + 0 }
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
misplaced=$(awk '/^misplaced_tcgen05 / {print $2}' <<<"$report")
if [ "$misplaced" -ne 0 ]; then
  echo "FAIL: $misplaced tcgen05 kernels in code for other architectures than sm_100a"; status=1
else
  echo "ok: no tcgen05 kernels outside sm_100a code"
fi
check wgmma 3 HGMMA
check mma 4 HMMA
check mma 5 LDSM
check wmma 4 HMMA
if grep -q "^tcgen05 " <<<"$report"; then
  check tcgen05 7 UTCHMMA
  check tcgen05 8 LDTM
  line=$(grep "^tcgen05 " <<<"$report")
  echo "info: tcgen05 sm_100a code: $(awk '{print $2}' <<<"$line") kernels, $(awk '{print $7}' <<<"$line") UTCHMMA," \
       "$(awk '{print $8}' <<<"$line") LDTM (compile-verified only: never run)"
  if [ "$(awk '{print $6}' <<<"$line")" -ne 0 ]; then echo "FAIL: tcgen05 kernels use local memory"; status=1; fi
elif [ "$expect_sm100a" -eq 1 ]; then
  echo "FAIL: the build targets sm_100a but $module has no tcgen05 kernels in sm_100a code"; status=1
else
  echo "skip: no sm_100a code in $module (CUDA < 12.8?): tcgen05 not checked"
fi
exit $status
