#!/usr/bin/env bash
# Runs hearth's bench_cpu_ops and the PyTorch script on the same cases with the
# same thread count and prints one table: times in ms and hearth / torch ratios
# (below 1 means hearth is faster).
#
#   bench/run_cpu_compare.sh [BUILD_DIR] [-- extra arguments for both, e.g. --batch 16 --threads 2]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build="${1:-$here/../build}"
[[ $# -gt 0 ]] && shift
[[ "${1:-}" == "--" ]] && shift
args=("$@")
has_threads=0
for a in "${args[@]}"; do [[ "$a" == "--threads" ]] && has_threads=1; done
# Default: every core of this machine, for both sides.
[[ $has_threads == 1 ]] || args+=(--threads "$(nproc)")

bench="$build/bin/bench_cpu_ops"
if [[ ! -x "$bench" ]]; then
  echo "run_cpu_compare: $bench not found; build it with: cmake --build $build --target bench_cpu_ops" >&2
  exit 1
fi

# PyTorch may live in the system interpreter rather than the first python3 on PATH.
python=""
for p in python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null && "$p" -c "import torch" 2>/dev/null; then python="$p"; break; fi
done
if [[ -z "$python" ]]; then
  echo "run_cpu_compare: no python3 with torch found (Debian: apt-get install python3-torch)" >&2
  exit 1
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "running hearth ($bench ${args[*]})..." >&2
"$bench" --csv "${args[@]}" >"$tmp/hearth.csv"
echo "running PyTorch ($python $here/cpu_ops_pytorch.py ${args[*]})..." >&2
"$python" "$here/cpu_ops_pytorch.py" --csv "${args[@]}" >"$tmp/torch.csv"

echo "hearth vs PyTorch $("$python" -c 'import torch; print(torch.__version__)') on the CPU (${args[*]})"
awk -F, '
  NR == FNR { if (FNR > 1) { tf[$1] = $2; tb[$1] = $3 } next }
  FNR == 1 {
    printf "%-24s %10s %10s %7s   %12s %12s %7s\n", "case", "hearth fwd", "torch fwd", "ratio", "hearth f+b", "torch f+b", "ratio"
    next
  }
  ($1 in tf) {
    printf "%-24s %10.2f %10.2f %6.2fx   %12.2f %12.2f %6.2fx\n", $1, $2, tf[$1], $2 / tf[$1], $3, tb[$1], $3 / tb[$1]
  }
' "$tmp/torch.csv" "$tmp/hearth.csv"
echo "(times in ms, median of repeated runs; ratio = hearth / torch, below 1 means hearth is faster)"
