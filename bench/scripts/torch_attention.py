#!/usr/bin/env python3
"""Times PyTorch's attention at the shapes of `gpukern-bench --op attention` and writes a small
JSON that gpukern-report reads next to the bench runs (the attention table's torch columns).

Two paths per (dtype, S, d):
  math: torch's unfused math path, three kernels as an application writes them:
        attn = (Q @ K^T) * scale; masked_fill (causal); softmax; attn @ V
  sdpa: torch.nn.functional.scaled_dot_product_attention (fused; flash or memory-efficient
        kernels where torch has them), for reference.
Q, K, V are [batch, heads, S, d]; every timed call follows a write of 512 MiB that evicts the
L2, as gpukern-bench flushes; CUDA events around each call; the median of the timed calls.
A batch that does not fit the GPU's memory is halved until it does (recorded in
batch_reduced_from); compare throughput (gflops) with the bench, which counts the same flops.

    python3 bench/scripts/torch_attention.py --json bench/results/torch-attention.json [--causal]
"""

import argparse
import datetime
import json
import math
import sys


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--json", required=True, help="output file")
    p.add_argument("--dtype", default="f16,bf16", help="comma list of f32, f16, bf16 [default: f16,bf16]")
    p.add_argument("--seq", default="512,1024,2048,4096", help="sequence lengths S, comma list")
    p.add_argument("--head-dim", default="64,128", help="head dimensions d, comma list")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--heads", type=int, default=32)
    p.add_argument("--causal", action="store_true", help="causal mask (row r keeps columns <= r)")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument("--flush-mb", type=float, default=512, help="MiB written before every timed call (0: none)")
    return p.parse_args()


def main():
    args = parse_args()
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        print("torch_attention.py: PyTorch is not installed", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("torch_attention.py: no CUDA device", file=sys.stderr)
        return 2
    dtypes = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
    wanted = args.dtype.split(",")
    for name in wanted:
        if name not in dtypes:
            print("torch_attention.py: --dtype {} is not f32, f16 or bf16".format(name), file=sys.stderr)
            return 2
    seqs = [int(x) for x in args.seq.split(",")]
    dims = [int(x) for x in args.head_dim.split(",")]
    device = torch.device("cuda")
    flush = torch.empty(int(args.flush_mb * (1 << 20)), dtype=torch.uint8, device=device) if args.flush_mb else None

    def timed(fn):
        """Median ms of fn over the timed calls, each after an L2 flush."""
        for _ in range(args.warmup):
            fn()
        torch.cuda.synchronize()
        times = []
        for i in range(args.repeats):
            if flush is not None:
                flush.fill_(i & 0xff)
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            stop.record()
            stop.synchronize()
            times.append(start.elapsed_time(stop))
        times.sort()
        return times[len(times) // 2]

    results = []
    for name in wanted:
        dtype = dtypes[name]
        for d in dims:
            for s in seqs:
                batch = args.batch
                while True:
                    try:
                        record = measure(torch, F, timed, dtype, batch, args.heads, s, d, args.causal, device)
                        break
                    except torch.cuda.OutOfMemoryError:
                        torch.cuda.empty_cache()
                        if batch == 1:
                            record = None
                            break
                        batch = (batch + 1) // 2
                if record is None:
                    print("{} S {} d {}: out of memory at batch 1".format(name, s, d), file=sys.stderr)
                    continue
                record.update({"dtype": name, "batch_reduced_from": args.batch if batch != args.batch else None})
                results.append(record)
                print("{} {}x{} S {} d {}{}: math {:.3f} ms, sdpa {:.3f} ms".format(
                    name, batch, args.heads, s, d, " causal" if args.causal else "", record["math_ms"],
                    record["sdpa_ms"]), file=sys.stderr)

    now = datetime.datetime.now(datetime.timezone.utc)
    run = {
        "tool": "torch_attention", "schema": 1, "date": now.strftime("%Y-%m-%d"),
        "time_utc": now.strftime("%Y-%m-%dT%H:%M:%SZ"), "command": " ".join(sys.argv),
        "torch_version": torch.__version__, "cuda_version": torch.version.cuda,
        "device": {"name": torch.cuda.get_device_name(device), "backend": "cuda"},
        "settings": {"warmup": args.warmup, "repeats": args.repeats, "flush_mb": args.flush_mb,
                     "timing": "CUDA events around each call; median; a write of flush_mb MiB before each",
                     "flops": "4 * batch * heads * S^2 * d (both matmuls in full, masked or not)"},
        "results": results,
    }
    with open(args.json, "w", encoding="utf-8") as f:
        json.dump(run, f, indent=1)
        f.write("\n")
    print("wrote {}".format(args.json), file=sys.stderr)
    return 0


def measure(torch, F, timed, dtype, batch, heads, s, d, causal, device):
    gen = torch.Generator(device=device).manual_seed(42)
    q, k, v = (torch.rand(batch, heads, s, d, device=device, dtype=dtype, generator=gen) * 2 - 1 for _ in range(3))
    scale = 1.0 / math.sqrt(d)
    mask = torch.ones(s, s, dtype=torch.bool, device=device).triu_(1) if causal else None

    def math_path():
        attn = torch.matmul(q, k.transpose(-2, -1)).mul_(scale)
        if mask is not None:
            attn.masked_fill_(mask, float("-inf"))
        return torch.matmul(torch.softmax(attn, dim=-1), v)

    def sdpa():
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    # The two paths agree (a wrong mask would show here, not in the timings).
    error = ((math_path().float() - sdpa().float()).norm() / sdpa().float().norm()).item()
    math_ms = timed(math_path)
    sdpa_ms = timed(sdpa)
    flops = 4.0 * batch * heads * s * s * d
    return {"batch": batch, "heads": heads, "seq": s, "head_dim": d, "causal": causal, "flops": flops,
            "math_ms": math_ms, "math_gflops": flops / (math_ms * 1e6), "sdpa_ms": sdpa_ms,
            "sdpa_gflops": flops / (sdpa_ms * 1e6), "math_vs_sdpa_rel_error": error}


if __name__ == "__main__":
    sys.exit(main())
