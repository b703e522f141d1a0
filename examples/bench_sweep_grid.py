"""Time `kvplan sweep`'s core on a grid that varies every dimension but the context.

Run:  .venv/bin/python examples/bench_sweep_grid.py

Grid: 300 memory fractions x 10 GPUs x 7 KV dtypes x 5 schemes = 105,000 points for
llama-3.1-8b (vLLM), one context and batch. Before every grid dimension was vectorised this took
about 20 s (one plan per point); now one plan runs per (scheme, dtype, TP, GPU) and the memory
fractions, contexts and batches are numpy arrays. A benchmark, not a test: timings vary by
machine.
"""

from __future__ import annotations

import time

from kvplan import SweepGrid, load_model, sweep
from kvplan.hardware.gpus import GPUS


def main() -> None:
    spec = load_model("llama-3.1-8b")
    grid = SweepGrid(
        contexts=(4096,),
        kv_dtypes=("fp32", "bf16", "fp16", "fp8", "int8", "int4", "nvfp4"),
        schemes=("native", "mha", "gqa", "mqa", "mla"),
        gpus=tuple(GPUS)[:10],
        mem_fractions=tuple(round(0.5 + i / 600, 6) for i in range(1, 301)),
    )
    runs = []
    for _ in range(3):
        start = time.perf_counter()
        df = sweep(spec, grid)
        runs.append(time.perf_counter() - start)
    print(f"{len(df):,} points; best of 3: {min(runs):.3f} s "
          f"({len(df) / min(runs):,.0f} points/s)")


if __name__ == "__main__":
    main()
