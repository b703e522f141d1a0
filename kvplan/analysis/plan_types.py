"""What `kvplan plan` asks and answers: the request, a layout, a candidate plan, an alternative
and the serving plan with its verdict, margin and cost (kvplan.analysis.planner searches)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kvplan.capacity.plan import CapacityPlan
from kvplan.engines.base import DEFAULT_ENGINE, Engine
from kvplan.engines.launch import LaunchLayout, LaunchPlan
from kvplan.hardware.gpus import GPU

FITS, BORDERLINE, DOES_NOT_FIT = "FITS", "BORDERLINE", "DOES NOT FIT"


# The plan's layout is the one its launch command spells out: one type (kvplan.engines.launch).
Layout = LaunchLayout


@dataclass(frozen=True, kw_only=True)
class Candidate:
    layout: Layout
    kv_dtype: str
    mem_fraction: float
    context: int
    capacity: CapacityPlan  # one replica (per attention-DP rank with dp_attention)
    max_concurrency: float  # requests of `context` tokens, all replicas together
    gpu: GPU
    default_fraction: bool = True  # the engine's default fraction (not one the search chose)

    @property
    def requests(self) -> int:
        return self.capacity.max_requests * self.layout.replicas


@dataclass(frozen=True, kw_only=True)
class Margin:
    """The KV headroom of a candidate against the target, and kvplan's error band around it."""

    margin_bytes: int  # per GPU: KV budget - the KV the target's requests need (< 0: short)
    margin_requests: int  # whole requests the layout holds - the target
    band_bytes: int  # kvplan's measured error around this KV budget (per GPU)
    expected_error: dict[str, Any]  # the engine's measured error (kvplan.engines.accuracy)

    @property
    def inside_error(self) -> bool:
        return abs(self.margin_bytes) <= self.band_bytes


@dataclass(frozen=True, kw_only=True)
class Alternative:
    label: str
    fits: bool
    gpus: int | None
    requests: int | None
    command: str | None = None
    candidate: Candidate | None = field(default=None, compare=False)
    cost_per_hour_usd: float | None = None
    with_command: bool = False  # the planner writes its launch command

    def to_dict(self) -> dict[str, Any]:
        c = self.candidate
        return {"label": self.label, "fits": self.fits, "gpus": self.gpus,
                "requests": self.requests, "command": self.command,
                "gpu": c.gpu.name if c is not None else None,
                "cost_per_hour_usd": self.cost_per_hour_usd,
                "layout": c.layout.to_dict() if c is not None else None,
                "kv_dtype": c.kv_dtype if c is not None else None,
                "context": c.context if c is not None else None,
                "max_concurrency": c.max_concurrency if c is not None else None}


@dataclass(frozen=True, kw_only=True)
class PlanRequest:
    concurrency: int
    context: int
    gpu: GPU
    gpus_per_node: int = 8
    nodes: int = 1
    engine: Engine = DEFAULT_ENGINE
    engine_version: str | None = None
    # None: every dtype the engine supports here; ENGINE_AUTO: the engine's own (plan_serving)
    kv_dtypes: tuple[str, ...] | None = None
    mem_fraction: float | None = None  # None: search the engine's fractions
    max_num_batched_tokens: int | None = None
    max_num_seqs: int | None = None  # None: the engine's default (as `kvplan estimate`)
    model_ref: str | None = None  # what to put in the launch command (HF id or path)
    extra: dict[str, Any] = field(default_factory=dict)  # further PlanInputs fields
    # Several GPU types (--gpu H100,H200): searched in turn; () is `gpu` alone.
    gpu_types: tuple[GPU, ...] = ()
    prices: dict[str, float] = field(default_factory=dict)  # preset name -> USD per GPU-hour
    # A context above the model's maximum is planned (the launch line then carries the engine's
    # override) rather than refused (kvplan.engines.context).
    allow_long_context: bool = False
    # One role of a PD-disaggregated deployment (kvplan.analysis.disagg): SGLang runs such a
    # prefill server without its piecewise prefill CUDA graphs (kvplan.engines.sglang.
    # prefill_graph, `disaggregation_mode != "null"`).
    disaggregated: bool = False
    # The time model's opt-in rules (kvplan.perf.cost_rules.CostRules); None: none.
    cost_rules: Any = None
    # The drafts' mean acceptance length (plan --spec-mean-accept-len / --spec-acceptance-rate):
    # the cost model prices the drafter's k tokens a step only with it (plan_search._cost_setup).
    spec_mean_accept_len: float | None = None

    @property
    def gpu_list(self) -> tuple[GPU, ...]:
        return self.gpu_types or (self.gpu,)


@dataclass(frozen=True, kw_only=True)
class ServingPlan:
    model: str
    engine: str
    engine_version: str | None
    gpu: str
    concurrency: int
    context: int
    fits: bool
    chosen: Candidate | None  # the plan (or, when nothing fits, the closest candidate)
    command: str | None
    alternatives: tuple[Alternative, ...] = field(default_factory=tuple)
    searched: int = 0
    prediction: Any = None  # kvplan.perf.costmodel.Prediction at the target load, when modelled
    margin: Margin | None = None
    verdict: str = DOES_NOT_FIT
    reason: str = ""  # why the verdict (BORDERLINE: the headroom inside kvplan's error)
    max_num_seqs: int | None = None  # the running-request cap plan recommends
    max_num_seqs_given: int | None = None  # --max-num-seqs as given (None: engine default)
    layout_text: str = ""  # the chosen layout as its launch command runs it (the engine's words)
    cost_per_hour_usd: float | None = None  # the whole layout
    ranking: str = ""  # how the plan was chosen among the GPU types and layouts
    none_reason: str = ""  # when no alternative serves the target: why
    launch: LaunchPlan | None = None  # every command (head node first); `command` is the head's

    def to_dict(self) -> dict[str, Any]:
        c = self.chosen
        m = self.margin
        p = self.prediction
        return {
            "model": self.model, "engine": self.engine, "engine_version": self.engine_version,
            "gpu": self.gpu, "concurrency": self.concurrency, "context": self.context,
            "fits": self.fits, "verdict": self.verdict, "reason": self.reason,
            "layout": c.layout.to_dict() if c else None,
            "max_concurrency": c.max_concurrency if c else 0.0,
            "max_requests": c.requests if c else 0,
            "kv_dtype": c.kv_dtype if c else None,
            "mem_fraction": c.mem_fraction if c else None,
            "dp_attention": c.layout.dp_attention if c else False,
            "kv_budget_bytes": c.capacity.kv_budget_bytes if c else None,
            "weights_bytes": c.capacity.weights_bytes if c else None,
            # The checkpoint's format and what the weights figure assumed of it (estimate's
            # stages[].weights_breakdown notes: e.g. the MXFP4 kernel vLLM picks, and why).
            "quantization": c.capacity.quantization if c else None,
            "weights_notes": _weights_notes(c.capacity) if c else [],
            "num_blocks": c.capacity.num_blocks if c else None,
            "block_size": c.capacity.block_size if c else None,
            "margin_bytes": m.margin_bytes if m else None,
            "margin_requests": m.margin_requests if m else None,
            "expected_error": ({**m.expected_error, "band_bytes": m.band_bytes} if m else None),
            "max_num_seqs": self.max_num_seqs,
            "cost_per_hour_usd": self.cost_per_hour_usd,
            "usd_per_million_output_tokens": p.cost_per_million_tokens_usd if p else None,
            "ranking": self.ranking,
            "command": self.command,
            # One argv list per command to run, head node first (`command` is the first).
            "commands": [cmd.argv for cmd in self.launch.commands] if self.launch else None,
            "launch": self.launch.to_dict() if self.launch else None,
            "alternatives": [a.to_dict() for a in self.alternatives],
            "no_alternative_reason": self.none_reason or None,
            "candidates_searched": self.searched,
            "tpot_ms": p.tpot_ms if p else None,
            "ttft_ms": p.ttft_ms if p else None,
            "output_tokens_per_s_per_gpu": p.output_tokens_per_s_per_gpu if p else None,
        }


def _weights_notes(capacity: CapacityPlan) -> list[str]:
    """The notes of each pipeline stage's weights breakdown, each once, in stage order."""
    notes: dict[str, None] = {}
    for stage in capacity.stages:
        if stage.weights_breakdown is not None:
            notes.update(dict.fromkeys(stage.weights_breakdown.notes))
    return list(notes)
