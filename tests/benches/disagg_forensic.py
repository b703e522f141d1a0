"""`python -m tests.benches.disagg_forensic [--rows FILE]`: why the disaggregated rows miss
(issue 29, disaggwhy59). A forensic, not a fit: nothing here changes a prediction.

Over every replayed prospective row of examples/disagg-bench.md sections 3a / 3b / 3k (SGLang)
and 3j (TensorRT-LLM), each replayed exactly as the page replays it (disagg_rows.replay, the
default switches), this prints per row: engine, GPU, precision, both roles' layouts, ISL / OSL,
concurrency, measured vs kvplan TTFT and TPOT; kvplan's TTFT by phase (the simulation's own
split, kvplan.analysis.simulate.disagg_sim.TtftPhases: decode admission, prefill queue, prefill
steps, transfer, decode side) and its decode step by part (the time model's ops at the
simulation's mean decode batch, grouped: dense GEMMs, KV reads, MoE experts, communication,
launch / host); and what the measured numbers say by themselves:

- seated: requests decoding at once per decode rank by Little's law, S = C x (O - 1) x TPOT /
  (TTFT + (O - 1) x TPOT) / decode ranks (the measured request spends (O - 1) x TPOT of its
  time in flight decoding);
- rho: the measured request rate C / (TTFT + (O - 1) x TPOT) over kvplan's prefill capacity
  (every step full: workers x ranks x prompts a step / the step, disagg_rows.prefill_capacity);
  over 0.9 the measured TTFT can be a saturated prefill's queue, well under it cannot;
- TTFT / TPOT: the measured TTFT in the row's own decode steps;
- step at S: kvplan's TPOT at S requests a rank over the measured TPOT: the step's cost apart
  from the occupancy (kvplan's own TPOT is at the batch its simulation seats). The cost model's
  naive roofline (Prediction.roofline_ms_per_step) was tried as a floor and dropped: it reads
  every expert's weights on each GPU (no EP split), so the measured TPOT sat below it on 58 of
  the 103 TTFT-low rows.

Then the rows outside [0.75, 1.33] classified (TTFT low / high, TPOT low / high; a row can be in
a TTFT class and a TPOT class) by engine, GPU, precision, ISL, OSL and concurrency band.
"""

from __future__ import annotations

import argparse
import math
import statistics
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

import kvplan.analysis.disagg_ratio as disagg_ratio
from kvplan.analysis.disagg import _role_request
from kvplan.analysis.plan_search import predict as predict_step
from kvplan.analysis.simulate.disagg_sim import DisaggSimResult, TtftPhases
from kvplan.sources.resolve import load_model
from tests.benches.disagg_rows import (
    BAND,
    MODELS,
    PREFIX,
    ROOT,
    SWITCHES,
    Replay,
    layout,
    prefill_capacity,
    prospective_rows,
    replay,
    replay_setup,
)

# The time model's decode ops (kvplan.perf.costmodel Prediction.decode_ms_by_op), grouped.
GROUPS = {"attention": "kv", "experts": "moe", "layer_overhead": "host",
          "small_kernels": "host", "mtp_draft": "dense"}
COMM_WORDS = ("all_reduce", "all_gather", "alltoall", "all_to_all", "a2a", "gather", "dispatch",
              "combine", "reduce_scatter")
PARTS = ("dense", "kv", "moe", "comm", "host")


def group(op: str) -> str:
    if op in GROUPS:
        return GROUPS[op]
    if any(w in op for w in COMM_WORDS):
        return "comm"
    if "moe" in op or "expert" in op or "router" in op:
        return "moe"
    return "dense"  # attention_proj, mlp, lm_head: GEMMs over the weights


@dataclass(frozen=True, kw_only=True)
class Forensic:
    rep: Replay
    engine: str
    gpu: str
    precision: str
    prefill: str  # layout label
    decode: str
    decode_ranks: int  # over every decode worker
    phases: TtftPhases | None
    sim_decode_batch: float
    step_parts: dict[str, float]  # kvplan's decode step at the simulated batch, ms by group
    seated: float  # Little's law, per decode rank
    rho: float | None  # measured rate over kvplan's prefill capacity
    step_at_seated: float | None  # kvplan's TPOT at `seated` over the measured TPOT

    @property
    def ttft_ratio(self) -> float:
        assert self.rep.ttft_ms is not None
        return self.rep.ttft_ms / self.rep.measured_ttft_ms

    @property
    def tpot_ratio(self) -> float:
        assert self.rep.tpot_ms is not None
        return self.rep.tpot_ms / self.rep.measured_tpot_ms

    def classes(self) -> list[str]:
        out = []
        if self.ttft_ratio < BAND[0]:
            out.append("TTFT low")
        elif self.ttft_ratio > BAND[1]:
            out.append("TTFT high")
        if self.tpot_ratio < BAND[0]:
            out.append("TPOT low")
        elif self.tpot_ratio > BAND[1]:
            out.append("TPOT high")
        return out


@contextmanager
def _recording() -> Iterator[list[DisaggSimResult]]:
    """The simulation results evaluate_xy computes while inside (the last is the row's)."""
    seen: list[DisaggSimResult] = []
    real = disagg_ratio.simulate_disagg

    def wrapped(inp: Any, **kw: Callable[..., float]) -> DisaggSimResult:
        res = real(inp, **kw)
        seen.append(res)
        return res

    disagg_ratio.simulate_disagg = wrapped  # type: ignore[assignment]
    try:
        yield seen
    finally:
        disagg_ratio.simulate_disagg = real


def _lay(row: dict[str, str], role: str) -> str:
    lay = layout(row, role)
    text = f"{row[f'{role}_num_workers']}x" + (f"DP{lay.dp}" if lay.dp_attention else f"TP{lay.tp}")
    return text + (f"EP{lay.ep}" if lay.ep > 1 else "")


def forensic(row: dict[str, str], **switch: bool) -> Forensic | None:
    with _recording() as seen:
        rep = replay(row, prospective=True, **switch)
    if not rep.replayed or rep.ttft_ms is None or rep.tpot_ms is None:
        return None
    res = seen[-1] if seen else None
    st = replay_setup(row)
    spec, _ = load_model(str(ROOT / MODELS[(row["model_path"], row["precision"])][0]))
    lay = st.decode.layout
    ranks = int(row["decode_num_workers"]) * lay.replicas
    ctx = replace(st.decode, context=st.req.input_len + st.req.output_len // 2)

    def step(batch: int) -> Any:
        return predict_step(spec, _role_request(st.req, batch * lay.replicas), ctx)

    sim_batch = res.decode_batch if res is not None else 1.0
    p = step(max(1, round(sim_batch)))
    parts = dict.fromkeys(PARTS, 0.0)
    if p is not None:
        for op, ms in p.decode_ms_by_op.items():
            parts[group(op)] += ms
    o, c = rep.output_len, rep.concurrency or 0
    decode_ms = (o - 1) * rep.measured_tpot_ms
    in_flight_ms = rep.measured_ttft_ms + decode_ms
    seated = c * decode_ms / in_flight_ms / ranks
    cap = prefill_capacity(rep)
    rho = None
    if cap is not None:
        n, pranks, ms, _ = cap
        capacity = int(row["prefill_num_workers"]) * pranks * n / (ms / 1e3)
        rho = c / (in_flight_ms / 1e3) / capacity
    q = step(max(1, round(seated)))
    at_seated = q.tpot_ms / rep.measured_tpot_ms if q is not None else None
    return Forensic(rep=rep, engine=row["backend"], gpu=row["system"].removesuffix("_sxm"),
                    precision=row["precision"], prefill=_lay(row, "prefill"),
                    decode=_lay(row, "decode"), decode_ranks=ranks,
                    phases=res.phases if res is not None else None,
                    sim_decode_batch=sim_batch, step_parts=parts, seated=seated, rho=rho,
                    step_at_seated=at_seated)


def band(c: int) -> str:
    for hi, name in ((16, "C<=16"), (128, "C 17-128"), (1024, "C 129-1024")):
        if c <= hi:
            return name
    return "C>1024"


def row_line(f: Forensic) -> str:
    r, ph = f.rep, f.phases
    phase = ("-" if ph is None else " / ".join(f"{x:,.0f}" for x in (
        ph.admission_ms, ph.prefill_queue_ms, ph.prefill_ms, ph.transfer_ms, ph.decode_side_ms)))
    parts = " / ".join(f"{f.step_parts[k]:.1f}" for k in PARTS)
    rho = "-" if f.rho is None else f"{f.rho:.2f}"
    floor = "-" if f.step_at_seated is None else f"{f.step_at_seated:.2f}"
    assert r.ttft_ms is not None and r.tpot_ms is not None
    return (f"| {r.id.removeprefix(PREFIX)} | {f.engine} {f.gpu} {f.precision} | {f.prefill} : "
            f"{f.decode} | {r.input_len}/{r.output_len} | {r.concurrency} | "
            f"{r.measured_ttft_ms:,.0f} / {r.ttft_ms:,.0f} | {r.measured_tpot_ms:.2f} / "
            f"{r.tpot_ms:.2f} | {f.ttft_ratio:.2f} / {f.tpot_ratio:.2f} | {phase} | "
            f"{f.sim_decode_batch:.1f}: {parts} | {f.seated:.1f} | {rho} | "
            f"{r.measured_ttft_ms / r.measured_tpot_ms:,.0f} | {floor} | "
            f"{', '.join(f.classes()) or 'in'} |")


def _median(xs: list[float]) -> str:
    return f"{statistics.median(xs):.2f}" if xs else "-"


def summary(done: list[Forensic]) -> list[str]:
    out = [f"Replayed rows: {len(done)}; both inside: "
           f"{sum(not f.classes() for f in done)}; outside: {sum(bool(f.classes()) for f in done)}",
           ""]
    cls = Counter(c for f in done for c in f.classes())
    combos = Counter(" + ".join(f.classes()) for f in done if f.classes())
    out.append("Classes (a row may be in a TTFT and a TPOT class): " + "; ".join(
        f"{k} {v}" for k, v in cls.most_common()))
    out.append("Combinations: " + "; ".join(f"{k} {v}" for k, v in combos.most_common()))
    keys: dict[str, Callable[[Forensic], str]] = {
        "engine": lambda f: f.engine, "GPU": lambda f: f.gpu,
        "precision": lambda f: f.precision, "ISL": lambda f: str(f.rep.input_len),
        "OSL": lambda f: str(f.rep.output_len),
        "concurrency": lambda f: band(f.rep.concurrency or 0)}
    for name, key in keys.items():
        out.append("")
        out.append(f"By {name} (rows; TTFT low / high; TPOT low / high; median TTFT, TPOT ratio):")
        for v in sorted({key(f) for f in done}):
            sub = [f for f in done if key(f) == v]
            n = Counter(c for f in sub for c in f.classes())
            out.append(f"- {v}: {len(sub)}; {n['TTFT low']} / {n['TTFT high']}; "
                       f"{n['TPOT low']} / {n['TPOT high']}; "
                       f"{_median([f.ttft_ratio for f in sub])}, "
                       f"{_median([f.tpot_ratio for f in sub])}")
    return out


def lenses(done: list[Forensic], name: str) -> list[str]:
    """The derived checks over one class's rows."""
    sub = [f for f in done if name in f.classes()]
    if not sub:
        return []
    out = ["", f"{name} ({len(sub)} rows), kvplan's TTFT by phase (median share: admission / "
           "prefill queue / prefill / transfer / decode side) and the measured lenses:"]
    phased = [f for f in sub if f.phases is not None and f.rep.ttft_ms]
    if phased:
        def share(get: Callable[[TtftPhases], float]) -> str:
            return _median([get(f.phases) / (f.rep.ttft_ms or math.nan)  # type: ignore[arg-type]
                            for f in phased])
        out.append("- kvplan TTFT shares: " + " / ".join(share(g) for g in (
            lambda p: p.admission_ms, lambda p: p.prefill_queue_ms, lambda p: p.prefill_ms,
            lambda p: p.transfer_ms, lambda p: p.decode_side_ms)))
    rhos = [f.rho for f in sub if f.rho is not None]
    out.append(f"- rho (measured rate / kvplan prefill capacity): median {_median(rhos)}; "
               f">= 0.9 on {sum(r >= 0.9 for r in rhos)} of {len(rhos)}")
    out.append("- measured TTFT in its own decode steps: median "
               f"{_median([f.rep.measured_ttft_ms / f.rep.measured_tpot_ms for f in sub])}")
    out.append("- seated per decode rank (Little) over the users a rank: median "
               f"{_median([f.seated / ((f.rep.concurrency or 1) / f.decode_ranks) for f in sub])}")
    steps = [f.step_at_seated for f in sub if f.step_at_seated is not None]
    out.append(f"- kvplan's TPOT at the seated batch over the measured: median {_median(steps)}; "
               f"inside [0.75, 1.33] on {sum(BAND[0] <= x <= BAND[1] for x in steps)} of "
               f"{len(steps)}")
    return out


def table(done: list[Forensic]) -> list[str]:
    return ["| row | engine | P : D | ISL/OSL | C | TTFT ms meas / kvplan | TPOT ms meas / "
            "kvplan | ratio TTFT / TPOT | kvplan TTFT phases ms (adm / queue / prefill / xfer / "
            "decode side) | sim batch: step ms (dense / kv / moe / comm / host) | seated | rho | "
            "TTFT/TPOT | step at S | class |",
            "|" + "---|" * 15] + [row_line(f) for f in done]


def run(**switch: bool) -> list[Forensic]:
    done = []
    for row in prospective_rows():
        if row["backend"] not in ("sglang", "trtllm"):
            continue
        f = forensic(row, **switch)
        if f is not None:
            done.append(f)
    return sorted(done, key=lambda f: (f.engine, f.gpu, f.precision, f.rep.id))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", help="also write the per-row table to this file")
    ap.add_argument("--off", nargs="*", default=[], choices=SWITCHES,
                    help="replay with these of disagg_rows.predict's switches off (`client`: "
                         "the rows before disaggwhy59's rule)")
    args = ap.parse_args()
    done = run(**dict.fromkeys(args.off, False))
    out = summary(done)
    for name in ("TTFT low", "TTFT high", "TPOT low", "TPOT high"):
        out += lenses(done, name)
    print("\n".join(out))
    if args.rows:
        with open(args.rows, "w") as fh:
            fh.write("\n".join(table(done)) + "\n")


if __name__ == "__main__":
    main()
