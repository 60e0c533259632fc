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
#   FUZZ_BUILD_DIR the build directory (default build-fuzz)
#   FUZZ_DIR       corpora and crash inputs (default $FUZZ_BUILD_DIR/fuzz-run)
#   JOBS           build jobs (default: all cores)
#   FUZZ_NO_BUILD  1: use the targets already built
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
  build_start=$SECONDS
  cmake --preset fuzz -B "$build_dir" "${launcher[@]}" >/dev/null
  cmake --build "$build_dir" -j "$jobs" --target hearth_fuzzers
  echo "run_fuzzers: built in $((SECONDS - build_start)) s"
fi

if (($# > 0)); then
  targets=("$@")
else
  mapfile -t targets < <(grep -v '^$' "$build_dir/fuzz_targets.txt")
fi

# Each target starts from its committed seeds and grows a working corpus of
# its own outside the source tree.
failed=()
for name in "${targets[@]}"; do
  bin="$build_dir/bin/fuzz_$name"
  [[ -x "$bin" ]] || { echo "run_fuzzers: no target $bin (known: $(tr '\n' ' ' <"$build_dir/fuzz_targets.txt"))" >&2; exit 2; }
  corpus="$work/corpus/$name"
  mkdir -p "$corpus" "$work/artifacts" "$work/logs"
  args=(-max_total_time="$seconds" -timeout="$timeout" -rss_limit_mb=2048 -max_len=65536
        -print_final_stats=1 -artifact_prefix="$work/artifacts/$name-")
  [[ -f "fuzz/dict/$name.dict" ]] && args+=(-dict="fuzz/dict/$name.dict")
  log="$work/logs/$name.log"
  echo "::: fuzz $name (${seconds} s)"
  if "$bin" "${args[@]}" "$corpus" "fuzz/corpus/$name" >"$log" 2>&1; then
    grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb' "$log" | tr '\n' ' '
    echo "corpus: $(find "$corpus" -type f | wc -l) files"
  else
    failed+=("$name")
    echo "run_fuzzers: fuzz_$name FAILED; the end of its log ($log):"
    tail -n 60 "$log"
  fi
done

if ((${#failed[@]} > 0)); then
  echo "run_fuzzers: failures in: ${failed[*]}; inputs in $work/artifacts/ (replay: $build_dir/bin/fuzz_<name> <file>)"
  exit 1
fi
echo "run_fuzzers: ${#targets[@]} targets, ${seconds} s each, no failures"
