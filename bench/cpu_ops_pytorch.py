#!/usr/bin/env python3
"""Times PyTorch's CPU GEMM and conv2d on the cases bench_cpu_ops times in hearth.

Same shapes, thread count, warm-up and median as bench/cpu_ops_vs_pytorch.cpp,
so bench/run_cpu_compare.sh can print the two side by side.

  cpu_ops_pytorch.py [--batch N] [--threads T] [--min-time S] [--csv] [--filter TEXT]
"""
import argparse
import time

import torch
import torch.nn.functional as F

CONV_CASES = [
    # name, in channels, out channels, input size, kernel, stride, padding
    ("conv1_7x7s2_3to64_224", 3, 64, 224, 7, 2, 3),
    ("conv_3x3_64to64_56", 64, 64, 56, 3, 1, 1),
    ("conv_1x1_256to64_56", 256, 64, 56, 1, 1, 0),
    ("conv_3x3_128to128_28", 128, 128, 28, 3, 1, 1),
    ("conv_3x3_256to256_14", 256, 256, 14, 3, 1, 1),
    ("conv_3x3_512to512_7", 512, 512, 7, 3, 1, 1),
]


def time_ms(fn, min_time):
    fn()
    fn()
    runs = []
    start = time.perf_counter()
    while len(runs) < 5 or (time.perf_counter() - start < min_time and len(runs) < 200):
        t0 = time.perf_counter()
        fn()
        runs.append((time.perf_counter() - t0) * 1e3)
    runs.sort()
    return runs[len(runs) // 2]


def time_conv(case, batch, min_time):
    name, c, o, hw, k, stride, pad = case
    x = torch.randn(batch, c, hw, hw)
    w = torch.randn(o, c, k, k) * 0.05
    out = (hw + 2 * pad - k) // stride + 1
    grad = torch.randn(batch, o, out, out)

    def fwd():
        with torch.no_grad():
            F.conv2d(x, w, None, stride, pad)

    xg = x.clone().requires_grad_()
    wg = w.clone().requires_grad_()

    def fwd_bwd():
        xg.grad = None
        wg.grad = None
        F.conv2d(xg, wg, None, stride, pad).backward(grad)

    flop = 2.0 * batch * o * out * out * c * k * k
    return name, time_ms(fwd, min_time), time_ms(fwd_bwd, min_time), flop


def time_fc(batch, min_time):
    x = torch.randn(batch, 2048)
    w = torch.randn(1000, 2048) * 0.02
    b = torch.randn(1000)
    grad = torch.randn(batch, 1000)

    def fwd():
        with torch.no_grad():
            F.linear(x, w, b)

    xg, wg, bg = (t.clone().requires_grad_() for t in (x, w, b))

    def fwd_bwd():
        xg.grad = wg.grad = bg.grad = None
        F.linear(xg, wg, bg).backward(grad)

    return "fc_2048to1000", time_ms(fwd, min_time), time_ms(fwd_bwd, min_time), 2.0 * batch * 2048 * 1000


def time_gemm(size, min_time):
    a = torch.randn(size, size)
    b = torch.randn(size, size)
    grad = torch.randn(size, size)

    def fwd():
        with torch.no_grad():
            torch.mm(a, b)

    ag, bg = a.clone().requires_grad_(), b.clone().requires_grad_()

    def fwd_bwd():
        ag.grad = bg.grad = None
        torch.mm(ag, bg).backward(grad)

    return f"gemm_{size}", time_ms(fwd, min_time), time_ms(fwd_bwd, min_time), 2.0 * size**3


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--min-time", type=float, default=1.0)
    p.add_argument("--csv", action="store_true")
    p.add_argument("--filter", default="")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)

    cases = [lambda c=c: time_conv(c, a.batch, a.min_time) for c in CONV_CASES if a.filter in c[0]]
    if a.filter in "fc_2048to1000":
        cases.append(lambda: time_fc(a.batch, a.min_time))
    if a.filter in "gemm_1024":
        cases.append(lambda: time_gemm(1024, a.min_time))

    if a.csv:
        print("name,fwd_ms,fwd_bwd_ms", flush=True)
    else:
        print(f"PyTorch {torch.__version__} CPU ops, batch {a.batch}, {torch.get_num_threads()} threads")
        print(f"{'case':<24} {'fwd ms':>10} {'fwd+bwd ms':>14} {'fwd GFLOP/s':>10}")
    for run in cases:
        name, fwd, fwd_bwd, flop = run()
        if a.csv:
            print(f"{name},{fwd:.3f},{fwd_bwd:.3f}", flush=True)
        else:
            print(f"{name:<24} {fwd:10.2f} {fwd_bwd:14.2f} {flop / fwd / 1e6:10.1f}", flush=True)


if __name__ == "__main__":
    main()
