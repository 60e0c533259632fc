#!/usr/bin/env bash
# The library on a CPU without AVX: `hearth env` and a few training steps of the
# small CNN under QEMU's user-mode emulator as a plain x86-64 CPU ("qemu64":
# SSE2 and SSE3, no AVX, no BMI), where any instruction beyond it stops the
# process with SIGILL. A build compiled for x86-64-v3 fails here at its first
# AVX instruction.
#   run_on_plain_x86_64.sh HEARTH_BINARY WORK_DIR
# Exits 77 (skipped) without qemu-x86_64 (Debian: qemu-user).
set -euo pipefail
hearth=$1 work=$2
command -v qemu-x86_64 >/dev/null || { echo "skipped: qemu-x86_64 is not installed (qemu-user)"; exit 77; }
# OpenBLAS reads the CPU's model, which the emulator does not change: name the
# core it would pick on such a CPU (its own dispatch, not hearth's).
export OPENBLAS_CORETYPE=PRESCOTT OMP_WAIT_POLICY=passive XDG_CONFIG_HOME=$work/no-user-config
unset HEARTH_CPU_LEVEL
# A SIGILL would leave a core file of the emulated process in the working directory.
ulimit -c 0
emulate() { qemu-x86_64 -cpu qemu64 "$hearth" "$@"; }

out=$(emulate env 2>&1) || { echo "$out"; echo "FAIL: hearth env died on a plain x86-64 CPU" >&2; exit 1; }
grep '^cpu kernels: baseline ' <<<"$out" || { echo "$out"; echo "FAIL: expected the baseline kernels" >&2; exit 1; }
out=$(emulate train --cpu --model small_cnn --dataset fashion_mnist --max_steps 3 --max_train_samples 256 \
        --max_eval_samples 256 --eval_strategy no --save_strategy no --report_to none --disable_tqdm true \
        --output_dir "$work/run" --overwrite_output_dir 2>&1) ||
  { echo "$out"; echo "FAIL: training died on a plain x86-64 CPU" >&2; exit 1; }
grep -E '^ +eval_accuracy +0\.[0-9]+' <<<"$out"
echo "OK: hearth trains on a plain x86-64 CPU (emulated)"
