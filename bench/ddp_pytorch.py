#!/usr/bin/env python3
"""PyTorch DistributedDataParallel throughput for the scaling comparison.

Run under torchrun (one process per GPU): the reference workloads (ResNet-50
batch 128 per GPU, BERT-base seq 128 batch 64 per GPU), bf16 autocast
(channels_last for the CNN), synthetic data, SGD momentum / AdamW, DDP with its
default 25 MB buckets. Rank 0 prints one JSON line: model, world size,
per-GPU batch, global samples/s.

    torchrun --nproc_per_node N bench/ddp_pytorch.py --model resnet50 [--iters 20 --warmup 5]
"""
import argparse
import json
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="resnet50", choices=["resnet50", "bert-base"])
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    args = ap.parse_args()
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    dev = torch.device("cuda", local)
    torch.manual_seed(0)
    if args.model == "resnet50":
        import torchvision
        bs = 128
        model = torchvision.models.resnet50(num_classes=1000).to(dev).to(memory_format=torch.channels_last)
        x = torch.randn(bs, 3, 224, 224, device=dev).contiguous(memory_format=torch.channels_last)
        y = torch.randint(0, 1000, (bs,), device=dev)
        opt_cls = lambda p: torch.optim.SGD(p, lr=0.01, momentum=0.9)
    else:
        from transformers import BertConfig, BertForSequenceClassification
        bs = 64
        model = BertForSequenceClassification(BertConfig(num_labels=2)).to(dev)
        x = torch.randint(0, 28996, (bs, 128), device=dev)
        y = torch.randint(0, 2, (bs,), device=dev)
        opt_cls = lambda p: torch.optim.AdamW(p, lr=2e-5)
    ddp = nn.parallel.DistributedDataParallel(model, device_ids=[local])
    opt = opt_cls(ddp.parameters())
    loss_fn = nn.CrossEntropyLoss()

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = ddp(x)
            logits = out.logits if hasattr(out, "logits") else out
            loss = loss_fn(logits.float(), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()
    dist.barrier()
    t0 = time.perf_counter()
    for _ in range(args.iters):
        step()
    torch.cuda.synchronize()
    dt = (time.perf_counter() - t0) / args.iters
    rates = torch.tensor([bs / dt], device=dev)
    dist.all_reduce(rates)
    if rank == 0:
        print(json.dumps({"framework": "pytorch-ddp", "model": args.model, "world_size": world, "batch_per_gpu": bs,
                          "samples_per_s": round(rates.item(), 1), "ms_per_step": round(dt * 1e3, 2)}), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
