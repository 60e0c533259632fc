#!/usr/bin/env python3
"""Where PyTorch's training step spends its device time, by kernel family.

Profiles a few training steps (the same workload as compare_pytorch.py:
ResNet-50 batch 128 or VGG16 batch 64 channels-last with SGD and momentum,
BERT-base batch 64 x 128 tokens with AdamW; synthetic data; bf16 autocast, or
float32 with or without TF32 matmuls) in PyTorch eager or under
torch.compile, and prints the CUDA kernel time per step grouped by family (convolutions, GEMMs, Triton's fused
kernels, batch norm, elementwise, optimizer, copies), with the largest kernels.
It is the reference side of hearth's `HEARTH_PROFILE_OPS=events` table.

    python3 bench/kernel_breakdown.py --model resnet50 --mode compile [--steps 5] [--top 12]
    python3 bench/kernel_breakdown.py --model bert-base --mode compile
    python3 bench/kernel_breakdown.py --model bert-base --mode eager --precision tf32
"""
import argparse
import collections

import torch
import torch.nn as nn
import torchvision

BATCH = {"resnet50": 128, "vgg16": 64, "bert-base": 64}

# First match wins; names are lower-cased kernel names.
FAMILIES = [
    ("convolution", ("conv", "xmma", "implicit", "dgrad", "wgrad", "fprop", "cudnn")),
    ("triton fused", ("triton",)),
    ("batch norm", ("batch_norm", "batchnorm", "welford", "bn_")),
    ("layer norm", ("layer_norm", "layernorm")),
    ("attention", ("flash", "fmha", "attention", "sdpa")),
    ("gemm", ("gemm", "cutlass", "cublas", "sm90_", "nvjet")),
    ("optimizer", ("multi_tensor", "foreach", "sgd", "adam")),
    ("copy / cast", ("copy", "cast", "fill")),
    ("reduction", ("reduce", "softmax", "nll", "cross_entropy", "log_softmax")),
    ("pooling", ("pool",)),
    ("elementwise", ("elementwise", "vectorized", "unrolled")),
]


def family(name):
    n = name.lower()
    for fam, keys in FAMILIES:
        if any(k in n for k in keys):
            return fam
    return "other"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="resnet50", choices=sorted(BATCH))
    ap.add_argument("--mode", default="compile", choices=["eager", "compile"])
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--top", type=int, default=12)
    ap.add_argument("--precision", default="bf16-mixed", choices=["bf16-mixed", "fp32", "tf32"],
                    help="bf16 autocast (default), float32, or float32 with TF32 matmuls allowed")
    args = ap.parse_args()

    torch.backends.cuda.matmul.allow_tf32 = args.precision == "tf32"
    torch.backends.cudnn.allow_tf32 = args.precision == "tf32"
    torch.manual_seed(0)
    bs = BATCH[args.model]
    if args.model == "bert-base":
        from transformers import BertConfig, BertForSequenceClassification
        model = BertForSequenceClassification(BertConfig(num_labels=2)).cuda()
        x = torch.randint(0, 28996, (bs, 128), device="cuda")
        y = torch.randint(0, 2, (bs,), device="cuda")
        opt = torch.optim.AdamW(model.parameters(), lr=2e-5)
    else:
        model = getattr(torchvision.models, args.model)(num_classes=1000).cuda().to(memory_format=torch.channels_last)
        x = torch.randn(bs, 3, 224, 224, device="cuda").contiguous(memory_format=torch.channels_last)
        y = torch.randint(0, 1000, (bs,), device="cuda")
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    forward = torch.compile(model) if args.mode == "compile" else model
    loss_fn = nn.CrossEntropyLoss()

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=args.precision == "bf16-mixed"):
            out = forward(x)
            loss = loss_fn((out.logits if hasattr(out, "logits") else out).float(), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    for _ in range(5):
        step()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(args.steps):
            step()
        torch.cuda.synchronize()

    per_family = collections.Counter()
    per_kernel = collections.Counter()
    calls = collections.Counter()
    for e in prof.events():
        if e.device_type != torch.autograd.DeviceType.CUDA:
            continue
        us = e.device_time_total if hasattr(e, "device_time_total") else e.cuda_time_total
        per_family[family(e.name)] += us
        per_kernel[e.name] += us
        calls[family(e.name)] += 1
    total = sum(per_family.values())
    print("%s %s %s batch %d: %.2f ms of kernels per step (%s, PyTorch %s)" %
          (args.model, args.mode, args.precision, bs, total / 1e3 / args.steps, torch.cuda.get_device_name(), torch.__version__))
    print("%-14s %10s %8s %7s" % ("family", "ms/step", "kernels", "share"))
    for fam, us in per_family.most_common():
        print("%-14s %10.2f %8d %6.1f%%" % (fam, us / 1e3 / args.steps, calls[fam] // args.steps, 100 * us / total))
    print("largest kernels (ms/step):")
    for name, us in per_kernel.most_common(args.top):
        print("  %8.3f  %s" % (us / 1e3 / args.steps, name[:110]))


if __name__ == "__main__":
    main()
