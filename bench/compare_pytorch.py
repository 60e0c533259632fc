#!/usr/bin/env python3
"""hearth against PyTorch on the same GPU, in one run.

Runs the reference benchmark's workloads (ResNet-50 batch 128, VGG16 batch 64,
BERT-base sequence length 128 batch 64; synthetic data on the device; SGD with
momentum for the CNNs, AdamW for BERT; cross-entropy) in PyTorch for each
requested precision, then `hearth bench` with the same settings, and prints one
table: model, phase, precision, PyTorch samples/s, hearth samples/s, ratio and
the peak memory of each.

    python3 bench/compare_pytorch.py --hearth build/bin/hearth [--precisions fp32,bf16-mixed]
        [--models resnet50,vgg16,bert-base] [--iters 20] [--warmup 5] [--compile] [--hearth-eager] [--out DIR]

PyTorch modes: fp32 is eager float32 (cuDNN's default TF32 convolutions, full
float32 matmuls), measured a second time with TF32 matmuls allowed
(`torch.backends.cuda.matmul.allow_tf32 = True`, Hugging Face's `--tf32`),
which is what hearth's float32 does by default; bf16-mixed is eager autocast
bf16 with channels_last for the CNNs; --compile adds torch.compile over the
bf16 model (slow to start: minutes). --hearth-eager adds hearth without step
graphs (the eager path).
"""
import argparse
import json
import os
import subprocess
import sys
import time

import torch
import torch.nn as nn

BATCH = {"resnet50": 128, "vgg16": 64, "bert-base": 64}


def build(model):
    if model in ("resnet50", "vgg16"):
        import torchvision
        return getattr(torchvision.models, model)(num_classes=1000), "image"
    from transformers import BertConfig, BertForSequenceClassification
    return BertForSequenceClassification(BertConfig(num_labels=2)), "text"


def measure_torch(model_name, precision, compiled, args, tf32=False):
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.manual_seed(0)
    dev = "cuda"
    model, kind = build(model_name)
    model = model.to(dev)
    bs = BATCH[model_name]
    half = precision == "bf16-mixed"
    if kind == "image":
        x = torch.randn(bs, 3, 224, 224, device=dev)
        y = torch.randint(0, 1000, (bs,), device=dev)
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        if half:
            model = model.to(memory_format=torch.channels_last)
            x = x.contiguous(memory_format=torch.channels_last)
    else:
        x = torch.randint(0, 28996, (bs, 128), device=dev)
        y = torch.randint(0, 2, (bs,), device=dev)
        opt = torch.optim.AdamW(model.parameters(), lr=2e-5)
    forward = torch.compile(model) if compiled else model
    loss_fn = nn.CrossEntropyLoss()

    def logits_of(out):
        return out.logits if hasattr(out, "logits") else out

    def train_step():
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=half):
            loss = loss_fn(logits_of(forward(x)).float(), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    def eval_step():
        with torch.inference_mode(), torch.autocast("cuda", dtype=torch.bfloat16, enabled=half):
            forward(x)

    rows = []
    torch.cuda.reset_peak_memory_stats()
    for phase, step in (("train", train_step), ("eval", eval_step)):
        model.train(phase == "train")
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        first = time.perf_counter() - t0
        for _ in range(args.warmup - 1):
            step()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(args.iters):
            step()
        torch.cuda.synchronize()
        dt = (time.perf_counter() - t0) / args.iters
        rows.append({"model": model_name, "phase": phase,
                     "precision": precision + ("+compile" if compiled else "") + ("+tf32" if tf32 else ""),
                     "samples_per_s": bs / dt, "peak_bytes": torch.cuda.max_memory_allocated(),
                     "first_step_s": first})
    del model, opt, forward
    torch.cuda.empty_cache()
    return rows


def measure_hearth(model_name, precision, args, eager=False):
    out_dir = os.path.join(args.out, "hearth-%s-%s%s" % (model_name, precision, "-eager" if eager else ""))
    cmd = [args.hearth, "bench", "--model", model_name, "--precision", precision, "--iters", str(args.iters),
           "--warmup", str(args.warmup), "--output-dir", out_dir] + (["--no-step-graphs"] if eager else [])
    proc = subprocess.run(cmd, capture_output=True, text=True)
    sys.stderr.write(proc.stdout + proc.stderr)
    if proc.returncode != 0:
        return [{"model": model_name, "phase": p, "precision": precision, "error": proc.stderr.strip()[-200:]}
                for p in ("train", "eval")]
    with open(os.path.join(out_dir, "bench_results.json")) as f:
        return json.load(f)["results"]


def gib(b):
    return "%.2f GiB" % (b / 2**30) if b else "-"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hearth", default="build/bin/hearth")
    ap.add_argument("--precisions", default="fp32,bf16-mixed")
    ap.add_argument("--models", default="resnet50,vgg16,bert-base")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--hearth-eager", action="store_true", help="also hearth without step graphs")
    ap.add_argument("--out", default="compare-out")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.backends.cudnn.benchmark = False  # PyTorch's default, as users run it
    table = []
    for precision in args.precisions.split(","):
        for m in args.models.split(","):
            theirs = measure_torch(m, precision, False, args)
            tf32 = measure_torch(m, precision, False, args, tf32=True) if precision == "fp32" else []
            compiled = measure_torch(m, precision, True, args) if args.compile and precision != "fp32" else []
            ours = {(r["model"], r["phase"]): r for r in measure_hearth(m, precision, args)}
            eager = {(r["model"], r["phase"]): r for r in measure_hearth(m, precision, args, eager=True)} \
                if args.hearth_eager else {}
            for t in theirs:
                key = (t["model"], t["phase"])
                pick = lambda rows: next((r for r in rows if r["phase"] == t["phase"]), None)
                table.append((t, pick(tf32), pick(compiled), ours.get(key, {}), eager.get(key, {})))
    print("GPU: %s, PyTorch %s" % (torch.cuda.get_device_name(), torch.__version__))
    cols = [("model", "%-10s"), ("phase", "%-6s"), ("precision", "%-11s"), ("PyTorch", "%9s"),
            ("PT tf32", "%9s"), ("compile", "%9s"), ("hearth", "%9s"), ("vs best", "%8s")]
    if args.hearth_eager:
        cols.append(("h eager", "%9s"))
    cols += [("PT mem", "%9s"), ("comp mem", "%9s"), ("hearth mem", "%10s")]
    print(" ".join(f % n for n, f in cols))
    num = lambda r: "%.1f" % r["samples_per_s"] if r and r.get("samples_per_s") else "-"
    records = []
    for t, t32, c, h, e in table:
        best = max(r["samples_per_s"] for r in (t, t32, c) if r)
        hs = h.get("samples_per_s")
        vals = [t["model"], t["phase"], t["precision"], num(t), num(t32), num(c), num(h) if hs else "error",
                "%.2f" % (hs / best) if hs else "-"]
        if args.hearth_eager:
            vals.append(num(e))
        vals += [gib(t["peak_bytes"]), gib(c["peak_bytes"]) if c else "-", gib(h.get("peak_bytes", 0))]
        print(" ".join(f % v for (_, f), v in zip(cols, vals)))
        records.append({"pytorch": t, "pytorch_tf32": t32, "compile": c, "hearth": h, "hearth_eager": e})
    with open(os.path.join(args.out, "compare_pytorch.json"), "w") as f:
        json.dump(records, f, indent=1)


if __name__ == "__main__":
    main()
