"""Time `kvplan sweep`'s core on a ~100,000-point grid and print points per second.

Run:  .venv/bin/python examples/bench_sweep.py

Grid: 50 contexts (1k..50k step 1k) x 20 batches x 2 KV dtypes x 5 schemes x 10 GPUs = 100,000
points for llama-3.1-8b (vLLM). The grid is evaluated three times; the best run is reported,
next to the naive rate (estimate + plan_capacity for each of 2,000 sampled points).
Timings vary by machine, so examples/sweep-bench.md records one run (it is not a golden file).
"""

from __future__ import annotations

import os
import platform
import sys
import time

from kvplan.analysis.sweep import (
    SweepGrid,
    default_max_num_batched_tokens,
    evaluate,
    parse_int_list,
    scheme_spec,
)
from kvplan.capacity.plan import plan_capacity
from kvplan.engines.base import PlanInputs
from kvplan.hardware.gpus import GPUS
from kvplan.kv.cache import estimate
from kvplan.sources.resolve import load_spec


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main() -> None:
    import numpy as np
    import pandas as pd

    spec = load_spec("llama-3.1-8b")
    grid = SweepGrid(
        contexts=parse_int_list("--context", "1k..50k:+1k"),
        batches=parse_int_list("--batch", "1..20:+1"),
        kv_dtypes=("bf16", "fp8"),
        schemes=("native", "mha", "gqa", "mqa", "mla"),
        gpus=tuple(GPUS)[:10],
    )
    runs = []
    for _ in range(3):
        start = time.perf_counter()
        df = evaluate(spec, grid)
        runs.append(time.perf_counter() - start)
    best = min(runs)
    # The naive way, for scale: estimate + plan_capacity for every point (a sample of them).
    sample = df.sample(n=2000, random_state=0).to_dict("records")
    start = time.perf_counter()
    for rec in sample:
        _, sized = scheme_spec(spec, rec["scheme"].split("-")[0], groups=grid.groups)
        bs = grid.resolved_block_size
        estimate(sized, context=rec["context"], batch=rec["batch"], kv_dtype=rec["kv_dtype"],
                 block_size=bs, tp=rec["tp"])
        gpu = GPUS[rec["gpu"]]
        plan_capacity(sized, PlanInputs(
            context=rec["context"], kv_dtype=rec["kv_dtype"], block_size=bs, tp=rec["tp"],
            total_bytes=gpu.total_bytes,
            max_num_batched_tokens=default_max_num_batched_tokens(
                gpu.total_bytes, is_a100=gpu.is_a100)))
    naive = len(sample) / (time.perf_counter() - start)
    print("# `kvplan sweep` core benchmark")
    print()
    print("Output of `.venv/bin/python examples/bench_sweep.py` (timings vary by machine).")
    print()
    print("```")
    print(f"machine:  {platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, "
          f"{cpu_model()}")
    print(f"python:   {platform.python_version()}, pandas {pd.__version__}, "
          f"numpy {np.__version__}")
    print(f"model:    {spec.id}, engine {grid.engine.value}")
    print(f"grid:     {len(grid.contexts)} contexts x {len(grid.batches)} batches x "
          f"{len(grid.kv_dtypes)} dtypes x {len(grid.schemes)} schemes x {len(grid.gpus)} GPUs "
          f"= {grid.num_points:,} points")
    print(f"rows:     {len(df):,} x {len(df.columns)} columns")
    print(f"wall:     {', '.join(f'{t:.3f} s' for t in runs)} (best {best:.3f} s)")
    print(f"speed:    {len(df) / best:,.0f} points/s")
    print(f"naive:    {naive:,.0f} points/s (estimate + plan_capacity per point, "
          f"{len(sample):,} sampled points; {grid.num_points / naive:,.1f} s for the grid)")
    print("```")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
