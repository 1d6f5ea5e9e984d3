#!/usr/bin/env python3
"""What the bench's cache flush charges to the timed call on a GPU (a probe, torch only).

gpukern-bench flushes a GPU's L2 before each timed call by writing a 512 MiB buffer
(gk_memset). The flush leaves the L2 full of dirty lines, and a timed call that brings
new lines into L2 writes as many of them back to memory. This times, with CUDA events
(median of --repeats), after two flushes:
  * memset: the bench's flush (the buffer written, L2 left dirty);
  * clean:  the same write, then a read of another 512 MiB buffer (the dirty lines are
            written back during the flush, the L2 holds clean lines of no operand),
three calls on weights W of the llm suite's sizes (16-bit, N x K):
  * gemv: y = x W^T with x of one row (cuBLAS through torch.matmul);
  * read: a sum of all of W (a read-bound reduction);
  * copy: the bench's copy of the same byte count (the first half copied onto the second).
Run on the GPU machine: python3 bench/dev/gemm/flush_writeback.py
"""
import argparse

import torch


def timed(fn, flush, repeats):
    times = []
    for _ in range(repeats + 2):
        flush()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(stop) * 1e3)  # microseconds
    times = sorted(times[2:])
    return times[len(times) // 2]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shapes", default="4096x4096,14336x4096,128256x4096", help="weights N x K")
    parser.add_argument("--flush-mb", type=int, default=512)
    parser.add_argument("--repeats", type=int, default=50)
    args = parser.parse_args()
    dev = torch.device("cuda")
    flush_bytes = args.flush_mb << 20
    dirty = torch.empty(flush_bytes, dtype=torch.uint8, device=dev)
    other = torch.ones(flush_bytes // 4, dtype=torch.int32, device=dev)
    value = [0]

    def flush_memset():
        value[0] = (value[0] + 1) & 0xFF
        dirty.fill_(value[0])

    def flush_clean():
        flush_memset()
        other.sum()

    # No "warm" column: without a flush queued ahead of it, each call waits for its own
    # launch from an idle GPU, and the events time the host.
    flushes = {"memset": flush_memset, "clean": flush_clean}
    print(f"device: {torch.cuda.get_device_name()}, L2 {torch.cuda.get_device_properties(0).L2_cache_size >> 20} MiB")
    print(f"{'weight':>14} {'call':>5} " + " ".join(f"{f + ' us':>10} {f + ' GB/s':>12}" for f in flushes))
    for shape in args.shapes.split(","):
        n, k = (int(v) for v in shape.split("x"))
        w = torch.randn(n, k, device=dev, dtype=torch.bfloat16)
        x = torch.randn(1, k, device=dev, dtype=torch.bfloat16)
        wb = w.numel() * w.element_size()
        buf = torch.empty(wb, dtype=torch.uint8, device=dev)
        half = wb // 2
        calls = {
            "gemv": (lambda: torch.matmul(x, w.t()), wb + 2 * (k + n)),
            "read": (lambda: w.sum(), wb),
            "copy": (lambda: buf[half : 2 * half].copy_(buf[:half]), 2 * half),
        }
        for name, (fn, nbytes) in calls.items():
            cells = []
            for f in flushes.values():
                us = timed(fn, f, args.repeats)
                cells.append(f"{us:10.1f} {nbytes / us / 1e3:12.0f}")
            print(f"{shape:>14} {name:>5} " + " ".join(cells))
        del w, buf


if __name__ == "__main__":
    main()
