#!/usr/bin/env bash
# Data-parallel scaling on the GPUs of one host: hearth (through `hearth launch`)
# and PyTorch DDP (through torchrun), same models, per-GPU batches and
# precision, in one run. Prints a table: model, GPUs, samples/s and scaling
# efficiency (throughput / (N x one-GPU throughput)) of each, and their ratio.
#
#   bench/scaling.sh                     # GPUS="1 2 4 8" MODELS="resnet50 bert-base" PRECISION=bf16-mixed
#   GPUS="1 2" ITERS=10 bench/scaling.sh
#
# NVLink multicast stays off, here and in every process hearth launch starts.
set -euo pipefail
HEARTH=${HEARTH:-build/bin/hearth}
GPUS=${GPUS:-"1 2 4 8"}
MODELS=${MODELS:-"resnet50 bert-base"}
PRECISION=${PRECISION:-bf16-mixed}
ITERS=${ITERS:-20}
WARMUP=${WARMUP:-5}
OUT=${OUT:-scaling-out}
TORCH=${TORCH:-1}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p "$OUT"
available=$(nvidia-smi -L 2>/dev/null | wc -l)
results="$OUT/scaling.jsonl"
status=0  # a failed run is reported and the others still run; the exit status says so
: > "$results"
for model in $MODELS; do
  for n in $GPUS; do
    if [ "$n" -gt "$available" ]; then
      echo "skipping $n GPUs: only $available here" >&2
      continue
    fi
    dir="$OUT/hearth-$model-$n"
    "$HEARTH" launch --nproc_per_node "$n" "$HEARTH" bench --model "$model" --precision "$PRECISION" --phase train \
      --iters "$ITERS" --warmup "$WARMUP" --output-dir "$dir" > "$dir.log" 2>&1 ||
      { echo "hearth failed on $n GPUs ($model):" >&2; tail -20 "$dir.log" >&2; status=1; continue; }
    python3 -c "import json,sys; r=json.load(open('$dir/bench_results.json')); \
print(json.dumps({'framework':'hearth','model':'$model','world_size':$n, \
'samples_per_s':r['results'][0]['samples_per_s'],'allreduce':r.get('allreduce')}))" >> "$results"
    if [ "$TORCH" = 1 ]; then
      torchrun --standalone --nproc_per_node "$n" bench/ddp_pytorch.py --model "$model" --iters "$ITERS" \
        --warmup "$WARMUP" 2> "$OUT/torch-$model-$n.log" | grep '"framework"' >> "$results" || tail -5 "$OUT/torch-$model-$n.log"
    fi
  done
done
python3 - "$results" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
get = lambda fw, m, n: next((r["samples_per_s"] for r in rows if r["framework"].startswith(fw) and r["model"] == m
                             and r["world_size"] == n), None)
print("%-10s %5s %13s %8s %13s %8s %7s" % ("model", "GPUs", "hearth s/s", "eff", "PyTorch s/s", "eff", "ratio"))
for m in dict.fromkeys(r["model"] for r in rows):
    h1, t1 = get("hearth", m, 1), get("pytorch", m, 1)
    for n in sorted({r["world_size"] for r in rows if r["model"] == m}):
        h, t = get("hearth", m, n), get("pytorch", m, n)
        eff = lambda v, one: "%.1f%%" % (100 * v / (n * one)) if v and one else "-"
        print("%-10s %5d %13s %8s %13s %8s %7s" % (m, n, "%.1f" % h if h else "-", eff(h, h1),
              "%.1f" % t if t else "-", eff(t, t1), "%.2f" % (h / t) if h and t else "-"))
    for r in rows:
        if r["framework"] == "hearth" and r["model"] == m and r.get("allreduce"):
            print("  %s on %d GPUs: %s" % (m, r["world_size"], r["allreduce"]))
PY
exit $status
