"""`kvplan simulate`: the run's figures as a table and JSON records, the per-step timeline as
CSV text, and its plot (matplotlib, imported only for --plot)."""

from __future__ import annotations

import csv
import io
from dataclasses import asdict
from pathlib import Path
from typing import Any

from kvplan.analysis.answers import simulate_headline
from kvplan.analysis.simulate.run import SimResult
from kvplan.model.spec import ModelSpec
from kvplan.present.answers import simulate_answer
from kvplan.present.estimate_view import assumption_records, assumptions_views
from kvplan.present.render import Column, View

_LATENCIES = (("ttft_ms", "TTFT (ms)"), ("tpot_ms", "TPOT (ms)"), ("itl_ms", "ITL (ms)"),
              ("e2e_ms", "E2E (ms)"))


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f}"


def simulate_records(result: SimResult, *, model: str, gpu: str) -> dict[str, Any]:
    """The JSON contract: issue 30's keys first, then the run's settings."""
    m = asdict(result.metrics)
    s = result.setup
    return {
        **{k: m[k] for k in ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms", "request_throughput",
                             "output_throughput", "preemptions", "kv_usage",
                             "prefix_hit_rate", "goodput")},
        "slo": m["slo"],
        "num_requests": m["num_requests"],
        "duration_s": m["duration_s"],
        "input_tokens": m["input_tokens"],
        "output_tokens": m["output_tokens"],
        "steps": m["steps"],
        "model": model,
        "gpu": gpu,
        "engine": s.plan.engine,
        "engine_version": s.plan.engine_version,
        "tp": s.plan.tp,
        "dp": s.dp,
        "kv_dtype": s.plan.kv_dtype,
        "num_blocks": s.plan.num_blocks,
        "block_size": s.plan.block_size,
        "kv_cache_groups": [g.kind for g in s.groups],
        "max_num_seqs": s.scheduler.max_num_seqs,
        "max_num_batched_tokens": s.scheduler.max_num_batched_tokens,
        "max_model_len": s.scheduler.max_model_len,
        "prefix_caching": s.caching,
        **_hybrid_pool_records(result),
        **({} if result.metrics.spec_decode is None
           else {"spec_decode": result.metrics.spec_decode}),
    }


def _hybrid_pool_records(result: SimResult) -> dict[str, Any]:
    """SGLang's hybrid pools, only where the run has one: the sliding-window pool's tokens
    (swa_max_total_num_tokens) and use (and, with the SWA radix cache's hits simulated, the
    sliding-layer tokens its eviction tombstoned), the mamba pool's slots and those running
    requests hold (and, with the mamba radix cache's hits simulated, the states its eviction
    took from the tree)."""
    s, m = result.setup, result.metrics
    out: dict[str, Any] = {}
    if s.swa is not None:
        out |= {"swa_tokens": s.swa.tokens, "swa_window": s.swa.window,
                "swa_usage": m.swa_usage}
        if m.swa_tombstoned_tokens is not None:
            out["swa_tombstoned_tokens"] = m.swa_tombstoned_tokens
    slots = s.sglang_pool.mamba_slots() if s.sglang_pool is not None else None
    if slots is not None:
        out |= {"mamba_slots": slots, "mamba_slots_used": m.mamba_slots_used}
        if m.mamba_states_evicted is not None:
            out["mamba_states_evicted"] = m.mamba_states_evicted
    return out


def simulate_view(result: SimResult, *, model: str, gpu: str, notes: list[str],
                  spec: ModelSpec | None = None) -> View:
    """The run's view; `spec` (as the engine serves it): its assumptions, as estimate and plan
    show them (an engine release newer than kvplan has read: kvplan.engines.base)."""
    m = result.metrics
    rows = [[label, _ms(getattr(m, key)["mean"]), _ms(getattr(m, key)["p50"]),
             _ms(getattr(m, key)["p90"]), _ms(getattr(m, key)["p99"])]
            for key, label in _LATENCIES]
    s = result.setup
    hit = "-" if m.prefix_hit_rate is None else f"{m.prefix_hit_rate:.1%}"
    shown = [
        f"{m.num_requests:,} requests in {m.duration_s:,.2f} s: {m.request_throughput:,.2f} "
        f"req/s, {m.output_throughput:,.0f} output tok/s"
        + ("" if m.goodput is None else f", goodput {m.goodput:,.2f} req/s"),
        f"preemptions {m.preemptions:,}; KV usage mean {m.kv_usage['mean']:.1%}, max "
        f"{m.kv_usage['max']:.1%} of {s.plan.num_blocks:,} blocks; prefix hit rate {hit}",
        *notes,
    ]
    return View(
        answer=simulate_answer(simulate_headline(result)),
        # Attention-DP ranks inside one engine's TP group (SGLang, TensorRT-LLM): its GPUs.
        title=(f"{model} on {s.plan.tp} {gpu} ({s.dp} attention-DP ranks)" if s.plan.dp_attention
               else f"{model} on {s.dp} x {s.plan.tp} {gpu}")
        + f": simulated serving ({m.steps:,} steps)",
        columns=[Column(header="latency"), Column(header="mean", numeric=True),
                 Column(header="p50", numeric=True), Column(header="p90", numeric=True),
                 Column(header="p99", numeric=True)],
        rows=rows,
        records={**simulate_records(result, model=model, gpu=gpu),
                 **({} if spec is None else assumption_records(spec))},
        notes=tuple(shown),
        more=() if spec is None else assumptions_views(spec),
    )


TIMELINE_COLUMNS = ("replica", "step_start_s", "step_ms", "tokens", "running", "waiting",
                    "kv_usage")


def timeline_csv(result: SimResult) -> str:
    """--timeline: one row per step (replica, start, duration, batch tokens, running and
    waiting requests after it, KV usage)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(TIMELINE_COLUMNS)
    for replica, r in result.timeline:
        writer.writerow([replica, f"{r.start_s:.6f}", f"{r.seconds * 1e3:.4f}", r.tokens,
                         r.running, r.waiting, f"{r.kv_usage:.6f}"])
    return out.getvalue()


def write_timeline_plot(result: SimResult, path: Path, title: str, fmt: str) -> None:
    """--plot FILE: KV usage, and running / waiting requests, against time (replica 0)."""
    from matplotlib.figure import Figure

    steps = [r for replica, r in result.timeline if replica == 0]
    # Each step's state holds from its end until the next step ends (idle gaps stay flat).
    t = [r.start_s + r.seconds for r in steps]
    fig = Figure(figsize=(9, 6), layout="constrained")
    top, bottom = fig.subplots(2, 1, sharex=True)
    top.plot(t, [r.kv_usage * 100 for r in steps], color="C0", linewidth=0.8,
             drawstyle="steps-post")
    top.set_ylabel("KV usage (%)")
    top.set_ylim(0, 105)
    top.set_title(title)
    bottom.plot(t, [r.running for r in steps], color="C1", linewidth=0.8, label="running",
                drawstyle="steps-post")
    bottom.plot(t, [r.waiting for r in steps], color="C2", linewidth=0.8, label="waiting",
                drawstyle="steps-post")
    bottom.set_ylabel("requests")
    bottom.set_xlabel("time (s)")
    bottom.legend(loc="upper right")
    fig.savefig(path, format=fmt)
