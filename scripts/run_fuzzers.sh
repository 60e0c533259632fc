#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ (clang, ASan + UBSan; the `fuzz`
# configure preset) and runs each one for a bounded time. Fails when any target
# finds a crash, a leak, a timeout or an input that escapes hearth's error
# types; the input that did it is kept in $FUZZ_DIR/artifacts/ for a
# regression test.
#
# Usage: scripts/run_fuzzers.sh [target ...]     (default: every target)
# Variables:
#   FUZZ_SECONDS   time per target (default 60)
#   FUZZ_TIMEOUT   seconds one input may take before it counts as a hang (default 10)
#   FUZZ_SEED      libFuzzer's random seed (default: a new one each run). CI fixes
#                  it, so a red run replays exactly and a green one stays green
#                  for the same code; longer runs without it explore further.
#   FUZZ_BUILD_DIR the build directory (default build-fuzz)
#   FUZZ_DIR       corpora and crash inputs (default $FUZZ_BUILD_DIR/fuzz-run)
#   JOBS           build jobs (default: all cores)
#   FUZZ_PARALLEL  targets fuzzed at once (default: JOBS)
#   FUZZ_NO_BUILD  1: use the targets already built
#   CMAKE_ARGS     extra -D options for the configure step (CI: -DHEARTH_WERROR=ON)
# ASAN_OPTIONS is honoured (e.g. detect_leaks=0 where LeakSanitizer cannot run).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${FUZZ_SECONDS:-60}
timeout=${FUZZ_TIMEOUT:-10}
build_dir=${FUZZ_BUILD_DIR:-build-fuzz}
work=${FUZZ_DIR:-$build_dir/fuzz-run}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}

if [[ "${FUZZ_NO_BUILD:-0}" != 1 ]]; then
  launcher=()
  if command -v ccache >/dev/null 2>&1; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  fi
  read -r -a extra <<<"${CMAKE_ARGS:-}"
  build_start=$SECONDS
  cmake --preset fuzz -B "$build_dir" "${launcher[@]}" "${extra[@]}" >/dev/null
  cmake --build "$build_dir" -j "$jobs" --target hearth_fuzzers
  echo "run_fuzzers: built in $((SECONDS - build_start)) s"
fi

if (($# > 0)); then
  targets=("$@")
else
  mapfile -t targets < <(grep -v '^$' "$build_dir/fuzz_targets.txt")
fi

# What a failed run's log says went wrong, in a word or two.
failure_kind() {
  local log=$1
  if grep -q 'ERROR: libFuzzer: timeout' "$log"; then echo "hang (timeout)"
  elif grep -q 'ERROR: libFuzzer: out-of-memory' "$log"; then echo "out of memory"
  elif grep -q 'ERROR: LeakSanitizer' "$log"; then echo "leak"
  elif grep -q '^fuzz: ' "$log"; then echo "unclean error"
  elif grep -q 'runtime error:' "$log"; then echo "undefined behaviour"
  elif grep -q 'ERROR: AddressSanitizer' "$log"; then
    echo "ASan: $(grep -m1 -o 'ERROR: AddressSanitizer: [a-z-]*' "$log" | sed 's/.*: //')"
  else echo "crash"
  fi
}

# The value of one of libFuzzer's final statistics (-print_final_stats=1), or "?".
final_stat() {
  local value
  value=$(grep -m1 "^stat::$2:" "$1" | awk '{print $2}' || true)
  echo "${value:-?}"
}

# Each target starts from its committed seeds and grows a working corpus of
# its own outside the source tree. libFuzzer stops a target at its first
# failure, so "crashes" is 0 or 1 per target. A target is one process on one
# core, so FUZZ_PARALLEL targets (default: one per core) run side by side; each
# still gets its full FUZZ_SECONDS.
parallel=${FUZZ_PARALLEL:-$jobs}
((parallel >= 1)) || parallel=1
mkdir -p "$work/artifacts" "$work/logs" "$work/results"
rm -f "$work/results/"*
for name in "${targets[@]}"; do
  [[ -x "$build_dir/bin/fuzz_$name" ]] || { echo "run_fuzzers: no target $build_dir/bin/fuzz_$name (known: $(tr '\n' ' ' <"$build_dir/fuzz_targets.txt"))" >&2; exit 2; }
done

# Runs one target; its outcome goes to $work/results/<name> (result, crashes).
fuzz_one() {
  local name=$1
  local bin="$build_dir/bin/fuzz_$name" corpus="$work/corpus/$name" log="$work/logs/$name.log"
  mkdir -p "$corpus"
  local args=(-max_total_time="$seconds" -timeout="$timeout" -rss_limit_mb=2048 -max_len=65536
              -print_final_stats=1 -artifact_prefix="$work/artifacts/$name-")
  [[ -n "${FUZZ_SEED:-}" ]] && args+=(-seed="$FUZZ_SEED")
  [[ -f "fuzz/dict/$name.dict" ]] && args+=(-dict="fuzz/dict/$name.dict")
  if "$bin" "${args[@]}" "$corpus" "fuzz/corpus/$name" >"$log" 2>&1; then
    printf 'ok\n0\n' >"$work/results/$name"
  else
    local result input
    result=$(failure_kind "$log")
    input=$(grep -m1 -o 'Test unit written to [^ ]*' "$log" | sed 's/Test unit written to //' || true)
    [[ -n "$input" ]] && result+=": $input"
    printf '%s\n1\n' "$result" >"$work/results/$name"
  fi
}

running=0
for name in "${targets[@]}"; do
  if ((running >= parallel)); then
    wait -n || true
    running=$((running - 1))
  fi
  echo "::: fuzz $name (${seconds} s)"
  fuzz_one "$name" &
  running=$((running + 1))
done
wait || true

failed=()
summary=()
for name in "${targets[@]}"; do
  log="$work/logs/$name.log"
  if [[ -f "$work/results/$name" ]]; then
    { read -r result; read -r crashes; } <"$work/results/$name"
  else
    result="no result (the run was killed)"
    crashes=1
  fi
  if [[ "$crashes" != 0 ]]; then
    failed+=("$name")
    echo "run_fuzzers: fuzz_$name FAILED ($result); the end of its log ($log):"
    tail -n 60 "$log" || true
  fi
  summary+=("$(printf '%-20s %12s %8s %7s %8d  %s' "$name" "$(final_stat "$log" number_of_executed_units)" \
    "$(final_stat "$log" average_exec_per_sec)" "$crashes" "$(find "$work/corpus/$name" -type f | wc -l)" "$result")")
done

echo
echo "::: fuzz summary (${seconds} s per target; logs in $work/logs/)"
printf '%-20s %12s %8s %7s %8s  %s\n' target executions exec/s crashes corpus result
printf '%s\n' "${summary[@]}"
if ((${#failed[@]} > 0)); then
  echo "run_fuzzers: failures in: ${failed[*]}; inputs in $work/artifacts/ (replay: $build_dir/bin/fuzz_<name> <file>)"
  exit 1
fi
echo "run_fuzzers: ${#targets[@]} targets, ${seconds} s each, no failures"
