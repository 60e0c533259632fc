#!/usr/bin/env bash
# The library runs on any x86-64 CPU: no object of libhearth but the AVX2 and
# AVX-512 copies of the hot kernels may hold an instruction beyond the baseline
# (a VEX or EVEX encoding, BMI1/BMI2, LZCNT, MOVBE). And the copies must hold
# some, or the dispatch would choose between identical code.
#   check_baseline_code.sh OBJECT_LISTS_DIR
# where baseline.txt lists the library's objects (its own and the baseline
# copies) and avx2.txt / avx512.txt the other copies, one path a line (the
# build writes them from its target lists, so stale objects of renamed
# sources in the build directory are not read).
# (tzcnt is left out: compilers emit `rep bsf` for the baseline, which
# disassembles as tzcnt and runs as bsf on older CPUs.)
set -euo pipefail
lists=$1
wide='^(v[a-z0-9]+|andn|bextr|blsi|blsmsk|blsr|bzhi|pdep|pext|mulx|rorx|sarx|shlx|shrx|lzcnt|movbe|kmov[bwdq])$'
count_wide() {
  local n=0 c o
  while IFS= read -r o; do
    [[ -n $o ]] || continue
    c=$(objdump -d --no-show-raw-insn "$o" | awk -F'\t' 'NF >= 2 { split($2, a, " "); print a[1] }' | grep -cE "$wide" || true)
    if [[ $c -gt 0 && ${report:-0} == 1 ]]; then echo "  $(basename "$o"): $c instructions beyond x86-64" >&2; fi
    n=$((n + c))
  done <"$1"
  echo "$n"
}
baseline=$(report=1 count_wide "$lists/baseline.txt")
echo "baseline objects: $baseline instructions beyond x86-64"
((baseline == 0)) || { echo "FAIL: the baseline objects above would not run on every x86-64 CPU" >&2; exit 1; }
for level in avx2 avx512; do
  [[ -f $lists/$level.txt ]] || { echo "$level: not built (HEARTH_CPU_DISPATCH off)"; continue; }
  n=$(count_wide "$lists/$level.txt")
  echo "$level copies: $n wide instructions"
  ((n > 0)) || { echo "FAIL: the $level copies hold no $level instruction: are they compiled for it?" >&2; exit 1; }
done
