"""A real CUDA load for the GPU tests: a few GB held and a matmul loop. Prints 'ready' when busy.

The fake secret on its command line checks that masking works on real processes too.
"""

from __future__ import annotations

import argparse
import time

import torch


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--hold-gb", type=float, default=4)
    parser.add_argument("--compute", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--token", default="")
    parser.add_argument("--device", type=int, default=0)
    parser.add_argument("--duty", type=float, default=1.0, help="share of each 200 ms spent computing (0-1)")
    parser.add_argument("--kind", choices=("fp32", "tf32", "bf16", "tiny", "copy"), default="fp32",
                        help="what the work is: an FP32 matmul (torch's default: no TF32), the same with TF32 on or in "
                             "bf16, a loop of tiny kernels each waited for, or a 1 GiB device-to-device copy")
    parser.add_argument("--per-period", type=int, default=0,
                        help="run this many matmuls in each 200 ms, then rest: a known amount of GPU work, however "
                             "another process shares the GPU")
    args = parser.parse_args()
    device = torch.device("cuda", args.device)
    held = torch.empty(int(args.hold_gb * 2**30), dtype=torch.uint8, device=device)
    if args.kind in ("tiny", "copy"):
        other_work(args.kind, device, args.seconds)
        return
    torch.backends.cuda.matmul.allow_tf32 = args.kind == "tf32"
    dtype = torch.bfloat16 if args.kind == "bf16" else torch.float32
    a = torch.randn(8192, 8192, device=device, dtype=dtype)
    b = torch.randn(8192, 8192, device=device, dtype=dtype)
    torch.cuda.synchronize(device)
    print("ready", flush=True)
    end = time.time() + args.seconds
    period = 0.2
    while time.time() < end:
        if not args.compute:
            time.sleep(0.5)
        elif args.per_period:
            start = time.time()
            for _ in range(args.per_period):
                a = (a @ b).clamp_(-1, 1)
            torch.cuda.synchronize(device)
            time.sleep(max(0.0, start + period - time.time()))
        elif args.duty >= 1.0:
            for _ in range(10):
                a = (a @ b).clamp_(-1, 1)
            torch.cuda.synchronize(device)
        else:  # compute for duty x 200 ms, then rest: a GPU busy part of the time, like most real jobs
            start = time.time()
            while time.time() - start < args.duty * period:
                a = (a @ b).clamp_(-1, 1)
                torch.cuda.synchronize(device)
            time.sleep(max(0.0, start + period - time.time()))
    del held


def other_work(kind: str, device: torch.device, seconds: float) -> None:
    """A loop of tiny kernels, each waited for (the GPU waits on its host), or 1 GiB copied on the device."""
    x = torch.randn(64, device=device) if kind == "tiny" else torch.empty(2**30, dtype=torch.uint8, device=device)
    y = torch.empty_like(x)
    torch.cuda.synchronize(device)
    print("ready", flush=True)
    end = time.time() + seconds
    while time.time() < end:
        if kind == "tiny":
            x.add_(1.0)
        else:
            y.copy_(x)
        torch.cuda.synchronize(device)


if __name__ == "__main__":
    main()
