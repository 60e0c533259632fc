#!/usr/bin/env bash
# Data parallelism over NCCL, on a machine with at least two GPUs:
#   1. NCCL collectives (all_reduce sum/avg/max/min, broadcast, all_gather,
#      reduce_scatter, barrier) between 2 processes, checked by each rank;
#   2. a rank that never joins an all_reduce makes the other fail within the
#      timeout (watchdog, ncclCommAbort) and the launcher exit non-zero;
#   3. the small CNN trained by 2 processes on cuda:0 and cuda:1 logs the same
#      losses as 1 process with 2 accumulation steps over the same batches;
#   4. throughput of `hearth train` on 1 and 2 GPUs at the same per-GPU batch
#      (samples/s, and the 2-GPU / 1-GPU ratio). Printed, never asserted.
# Usage, from the source root after building with CUDA:
#   tests/gpu/ddp_nccl.sh [build-dir]     (FASHION_MNIST_DIR: where the data set is,
#                                          SCALING_MODEL (small_cnn; resnet50 works too),
#                                          SCALING_STEPS, SCALING_BATCH: the throughput run)
set -uo pipefail
BUILD=${1:-build}
HEARTH=$BUILD/bin/hearth
WORKER=$BUILD/bin/hearth_dist_worker
DATA_DIR=${FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
export FASHION_MNIST_DIR=$DATA_DIR
# NVLink multicast stays off (hearth sets these in every process it starts, too).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
failures=0
check() {  # check NAME CONDITION-STATUS OUTPUT-FILE
  if [ "$2" -eq 0 ]; then echo "PASS $1"; else echo "FAIL $1"; sed 's/^/    /' "$3" | tail -30; failures=$((failures + 1)); fi
}

gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
if [ "$gpus" -lt 2 ]; then
  echo "SKIP: $gpus GPU(s) visible; these tests need 2"
  exit 0
fi
"$HEARTH" env | grep -E "^build:|process group" || true

# 1. collectives
"$HEARTH" launch --nproc_per_node 2 "$WORKER" collectives nccl > "$TMP/coll.log" 2>&1
grep -q "\[rank 0\] collectives ok on rank 0 of 2 (nccl)" "$TMP/coll.log" &&
  grep -q "\[rank 1\] collectives ok on rank 1 of 2 (nccl)" "$TMP/coll.log"
check "nccl collectives across 2 GPUs" $? "$TMP/coll.log"

# 2. a hung rank: the watchdog aborts within the timeout
start=$SECONDS
HEARTH_DIST_TIMEOUT=10 timeout 120 "$HEARTH" launch --nproc_per_node 2 --grace_period 2 "$WORKER" hang nccl \
  > "$TMP/hang.log" 2>&1
rc=$?
took=$((SECONDS - start))
[ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "\[nccl\] rank 0 of 2: all_reduce (collective #1) did not finish within 10 s" "$TMP/hang.log"
check "a hung rank fails the other within the timeout (exit $rc after ${took} s)" $? "$TMP/hang.log"

# 3. 2 GPUs = 1 GPU with 2 accumulation steps over the same batches
"$HEARTH" launch --nproc_per_node 2 "$WORKER" train "$TMP/ddp.txt" ddp cuda > "$TMP/ddp.log" 2>&1 &&
  CUDA_VISIBLE_DEVICES=0 "$WORKER" train "$TMP/ref.txt" ref cuda >> "$TMP/ddp.log" 2>&1 &&
  python3 - "$TMP/ddp.txt" "$TMP/ref.txt" >> "$TMP/ddp.log" 2>&1 <<'PY'
import sys
a = [float(x) for x in open(sys.argv[1])]
b = [float(x) for x in open(sys.argv[2])]
print("2 GPUs:", a)
print("1 GPU: ", b)
assert len(a) == len(b) == 4, "expected 4 losses each"
# cuDNN may pick different algorithms per process: float tolerance, not bits.
bad = [i for i in range(4) if abs(a[i] - b[i]) > 1e-3 * abs(b[i])]
assert not bad, f"steps {bad} differ"
PY
check "DDP over NCCL logs the losses of gradient accumulation" $? "$TMP/ddp.log"
cat "$TMP/ddp.log" | grep -E "^(2 GPUs|1 GPU)" || true

# 4. scaling
model=${SCALING_MODEL:-small_cnn}
steps=${SCALING_STEPS:-300}
batch=${SCALING_BATCH:-512}
declare -A sps
for n in 1 2; do
  "$HEARTH" train --devices $n --model "$model" --data_dir "$DATA_DIR" --per_device_train_batch_size "$batch" \
    --max_steps "$steps" --logging_steps 50 --eval_strategy no --save_strategy no --disable_tqdm \
    --report_to jsonl --overwrite_output_dir --output_dir "$TMP/scale$n" > "$TMP/scale$n.log" 2>&1
  sps[$n]=$(python3 -c "
import json, sys
rows = [json.loads(l) for l in open('$TMP/scale$n/metrics.jsonl')]
print([r for r in rows if 'train_samples_per_second' in r][-1]['train_samples_per_second'])" 2>/dev/null || echo 0)
done
echo
echo "$model, Fashion-MNIST, per-GPU batch $batch, $steps steps (whole run, warm-up included):"
printf "  %-8s %14s\n" GPUs samples/s
printf "  %-8s %14.0f\n" 1 "${sps[1]}" 2 "${sps[2]}"
python3 -c "a, b = float('${sps[1]}'), float('${sps[2]}'); print(f'  2-GPU / 1-GPU: {b / a:.2f}x' if a > 0 else '  (a run failed: see below)')"
[ "${sps[2]}" != "0" ] || tail -20 "$TMP/scale2.log"

echo
if [ $failures -eq 0 ]; then echo "ddp_nccl: all passed"; else echo "ddp_nccl: $failures failed"; fi
exit $failures
