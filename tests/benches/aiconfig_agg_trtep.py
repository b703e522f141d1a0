"""TensorRT-LLM's aggregated rows with EP = TP under TP attention (issue 30, trta2a56 and
trtmoe56): where kvplan's prefill step goes on them, before and after trta2a56's rule (commit
bcea93d: TensorRT-LLM's fused MoE runs no EP all-to-all without attention DP,
kvplan.engines.trtllm.engine `cost_traits`).

Analysis only: no rule or constant is set here. `is_tp_attention_ep` is the selection of the 142
rows that rule shaped (tests/data/sim_to_real/aiconfig_agg_trta2a56_rows.txt, SHAPED_BY);
`prefill_split` splits one prefill step of a representative row into the terms of
kvplan.perf.roofline.step_time (as tests.benches.tp_breakdown does), checked against the
simulator's own step, so the table is the time the simulator charges, not a second model.

Printed by tests.benches.aiconfig_agg_runs (its section of examples/simulate-bench.md; `python
-m tests.benches.aiconfig_agg_runs --trt-ep` prints this part alone, the 142 rows replayed).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from kvplan.analysis.simulate.run import SimSetup
from kvplan.perf.roofline import step_time

# The rule the rows shaped (tests/benches/fitted_rows.py SHAPED_BY).
SHAPED_COMMIT = "bcea93d"
# The representative row's setup: 124 of the 142 rows are Qwen3-235B-A22B-FP8 on H100 under
# TensorRT-LLM 1.0.0rc3 (TP 4 EP 4: 61, TP 8 EP 8: 63); one 1,024-token prompt alone in a step.
MODEL, PRECISION, SYSTEM, VERSION = "Qwen/Qwen3-235B-A22B-FP8", "fp8", "h100_sxm", "1.0.0rc3"
TP = EP = 8
PROMPT = 1024
# roofline.step_time's by_op names, by the column they go to.
_COLUMNS = {"experts": ("experts",), "EP all-to-all": ("ep_all_to_all",),
            "TP all-reduce": ("tp_all_reduce",), "other GEMMs": ("attention_proj", "mlp",
                                                                 "lm_head"),
            "attention": ("attention",), "kernel floors": ("small_kernels",),
            "layer overhead": ("layer_overhead",), "prefill launch": ("prefill_launch",)}


def is_tp_attention_ep(row: dict[str, str]) -> bool:
    """A TensorRT-LLM row whose MoE layers are expert-parallel over the whole TP group (EP =
    TP > 1) with TP attention (no attention DP), as aiconfig_agg_runs.layout reads it."""
    def n(field: str) -> int:
        return int(row[field].strip() or "0") or 1
    tp, ep = n("tp_size"), n("moe_ep_size")
    return (row["backend"] == "trtllm" and n("attention_dp_size") == 1 and ep == tp > 1)


@dataclass(frozen=True, kw_only=True)
class PrefillSplit:
    label: str
    total_ms: float
    ms: dict[str, float]  # column -> ms


def prefill_split(sim: SimSetup, *, all_to_all: bool, launch: bool = True) -> PrefillSplit:
    """One `PROMPT`-token prompt alone in a step of `sim`'s cost (the row's setup as
    aiconfig_agg_runs builds it), split by term. all_to_all: as before trta2a56's rule (the EP
    all-to-all charged under TP attention, and no launch time), else as the simulator charges
    it now (asserted); launch False: without trtprefill57's eager launch time (as at
    bcea93d)."""
    cost = sim.cost
    eff = replace(cost.eff, ep_all_to_all_needs_dp=False) if all_to_all else cost.eff
    # The prompt's tokens are a context request's: TensorRT-LLM's context-step kernels, as the
    # simulator charges a step with a prefill chunk (trtsim67, kvplan.perf.mixed_step).
    st = step_time(cost.spec, cost.gpu, tokens=PROMPT, context=1, requests=1, logits=1,
                   layout=cost.layout, eff=eff, context_tokens=PROMPT)
    # The lm_head with its TP logits gather (logitsgather63) is MixedStepCost.head_seconds's,
    # over the step's rows: the dense part's one-row gather is not the step's.
    by_op = {k: v for k, v in st.by_op.items()
             if k not in ("attention", "lm_head", "tp_logits_gather", "logits_gather")}
    by_op["lm_head"] = cost.head_seconds(1)
    by_op["attention"] = cost.attention_seconds([], [(0, PROMPT)])
    # The eager step's launch time (trtprefill57, 08aee189: kvplan.perf.trtllm_ops), as the
    # simulator adds it to a step with a prefill chunk.
    with_launch = launch and not all_to_all
    by_op["prefill_launch"] = cost.launch_seconds(PROMPT) if with_launch else 0.0
    total = sum(by_op.values()) + eff.step_overhead_s
    if with_launch:
        expected = cost.seconds(decode_contexts=[], chunks=[(0, PROMPT)])
        assert abs(total - expected) < 1e-9, (total, expected)
    ms = {col: sum(by_op.get(k, 0.0) for k in names) * 1e3 for col, names in _COLUMNS.items()}
    assert abs(sum(ms.values()) + eff.step_overhead_s * 1e3 - total * 1e3) < 1e-6, by_op
    label = ("before bcea93d (EP all-to-all charged)" if all_to_all
             else "since 08aee189 (as simulated)" if with_launch
             else "bcea93d (no all-to-all, no launch time)")
    return PrefillSplit(label=label, total_ms=total * 1e3, ms=ms)


def print_split(sim_of: Callable[[], SimSetup]) -> None:
    """The split table; `sim_of`: the representative row's setup (aiconfig_agg_runs._setup,
    passed in so this module does not import the one that prints it)."""
    sim = sim_of()
    print(f"\nWhere kvplan's prefill step goes on these rows (tests/benches/aiconfig_agg_trtep.py: "
          f"the simulator's step split by term, checked against its total): {MODEL} on "
          f"{SYSTEM}, TensorRT-LLM {VERSION}, TP {TP} EP {EP}, one {PROMPT:,}-token prompt "
          "alone in a step, ms.\n")
    rows = [prefill_split(sim, all_to_all=True),
            prefill_split(sim, all_to_all=False, launch=False),
            prefill_split(sim, all_to_all=False)]
    print("| step | total | " + " | ".join(_COLUMNS) + " |")
    print("|---|---:|" + "---:|" * len(_COLUMNS))
    for r in rows:
        print(f"| {r.label} | {r.total_ms:.2f} | "
              + " | ".join(f"{r.ms[c]:.2f}" for c in _COLUMNS) + " |")
