#!/usr/bin/env bash
# Runs the GPU test binary under NVIDIA's compute-sanitizer: memcheck (out of
# bounds and misaligned accesses, leaks of device memory, errors of CUDA API
# calls) and racecheck (shared-memory data races in the kernels), then prints
# each tool's summary and the tests' results. Exits non-zero when a tool
# reports an error or a test fails.
#
# Usage: scripts/gpu_sanitize.sh [build-dir]        (default: build)
# Variables:
#   SANITIZE_TOOLS        the tools to run (default: "memcheck racecheck";
#                         also "initcheck synccheck")
#   SANITIZE_GTEST_FILTER the tests to run. The default leaves out the golden
#                         models and the Fashion-MNIST run (minutes under the
#                         sanitizer, and they add no kernel that parity does not
#                         run) and the tests that need their own process with a
#                         memory limit.
#   HEARTH_PARITY_FILTER  a substring of the parity cases to keep (default:
#                         all); e.g. "conv" to chase one kernel family.
#   SANITIZE_LOG_DIR      where the full logs go (default: <build-dir>/sanitize)
#   SANITIZE_LEAK_CHECK   1: memcheck also lists memory still allocated at exit
# Memcheck slows kernels down 10-100x: expect tens of minutes for the whole
# parity table; narrow it with HEARTH_PARITY_FILTER when iterating.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=${1:-build}
bin="$build_dir/bin/hearth_gpu_tests"
[[ -x "$bin" ]] || { echo "gpu_sanitize: $bin not found; build with CUDA first (make build CUDA=ON)" >&2; exit 2; }

sanitizer=${COMPUTE_SANITIZER:-}
if [[ -z "$sanitizer" ]]; then
  if command -v compute-sanitizer >/dev/null 2>&1; then
    sanitizer=$(command -v compute-sanitizer)
  elif [[ -x /usr/local/cuda/bin/compute-sanitizer ]]; then
    sanitizer=/usr/local/cuda/bin/compute-sanitizer
  else
    echo "gpu_sanitize: compute-sanitizer not found (it ships with the CUDA toolkit); set COMPUTE_SANITIZER" >&2
    exit 2
  fi
fi

tools=${SANITIZE_TOOLS:-memcheck racecheck}
# Left out by default besides the above: the tests that provoke out-of-memory
# on purpose (the failing cudaMallocAsync is an API error to the sanitizer)
# and inject failures into whole training steps (minutes under racecheck, no
# kernel of their own).
filter=${SANITIZE_GTEST_FILTER:--*Golden*:Torchvision*:CudaMemoryLimit.*:CudaOomLimit.*:CudaMemory.OutOfMemory*:CudaOomStep.*}
log_dir=${SANITIZE_LOG_DIR:-$build_dir/sanitize}
mkdir -p "$log_dir"
status=0
summaries=()
for tool in $tools; do
  log="$log_dir/$tool.log"
  extra=()
  case "$tool" in
    # hearth keeps some device and pinned memory for the life of the process
    # on purpose (GEMM workspaces, library handles, the pinned-block cache,
    # the index-error slot), which a leak check at exit lists; SANITIZE_LEAK_CHECK=1
    # asks for that list anyway.
    memcheck) [[ "${SANITIZE_LEAK_CHECK:-0}" == 1 ]] && extra=(--leak-check full) ;;
    racecheck) extra=(--racecheck-report all) ;;
  esac
  echo "::: compute-sanitizer --tool $tool ($bin --gtest_filter=$filter${HEARTH_PARITY_FILTER:+, parity cases matching \"$HEARTH_PARITY_FILTER\"})"
  start=$SECONDS
  set +e
  tool_filter=$filter
  # The pinned-block test keeps a kernel busy on purpose, for seconds, which
  # racecheck stretches past any budget; it has no shared memory to check.
  [[ "$tool" == racecheck && -z "${SANITIZE_GTEST_FILTER:-}" ]] && tool_filter="$filter:PinnedMemory.ABlockIsNotReused*"
  "$sanitizer" --tool "$tool" "${extra[@]}" --error-exitcode 99 --print-limit 100 \
    "$bin" --gtest_filter="$tool_filter" >"$log" 2>&1
  rc=$?
  set -e
  took=$((SECONDS - start))
  summary=$(grep -E "^========= (ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY)" "$log" | tail -n 3 | tr '\n' ' ')
  tests=$(grep -E "^\[  (PASSED|FAILED|SKIPPED) +\]" "$log" | tr '\n' ' ')
  summaries+=("$(printf '%-10s exit %-3s %5d s  %s %s' "$tool" "$rc" "$took" "${summary:-no summary line}" "$tests")")
  if ((rc != 0)); then
    status=1
    echo "gpu_sanitize: $tool exited with $rc; its first reports ($log):"
    grep -E "^========= " "$log" | head -n 60 || true
    grep -E "^\[  FAILED  \]" "$log" | head -n 20 || true
  fi
done

echo
echo "::: compute-sanitizer summaries (full logs in $log_dir)"
printf '%s\n' "${summaries[@]}"
exit $status
