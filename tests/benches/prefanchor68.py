"""`python -m tests.benches.prefanchor68`: kvplan's full prefill step at the configuration of each
PUBLISHED prefill-worker throughput (tests/data/disagg/prefill_anchors68.json: LMSYS's 96 H100
EP32 blog, DeepSeek's H800 profile, LMSYS's GB200 NVL72 part II), kvplan's tokens a second a GPU
over the published, and the step's ops (issue 29; dis3j67's TTFT-low class, where section 3's
measured request rates say the prefill role serves ~1/1.7 of kvplan's full step). The anchors are
HELD OUT: committed (30aa1746) before any was priced; nothing is fitted to them. Printed only, on
no generated page; no rule, constant or default moves.

The step is the one the disaggregated replay prices a role's prefill with
(disagg_rows._setup: `prefill_batching(...).step_ms(tokens, prompts)`, the busiest rank's step,
kvplan.perf.roofline.step_time's ops), at an SGLang prefill role laid out as the anchor states it
(attention DP over its ranks, EP over the same ranks, DeepEP normal mode, --moe-dense-tp-size 1,
--enable-dp-lm-head, 32 redundant experts, --mem-fraction-static 0.835 as sgl-project/sglang#6017's
prefill command gives),
on a section-3 row of the same GPU and precision as the template for everything the anchor does
not state (its SGLang release, decode role, model files: disagg_rows.MODELS). A rank's step takes
tokens_per_rank // ISL whole prompts; kvplan's rate a GPU is those tokens over the step.

What kvplan does not model and the anchors ran: SGLang's two-batch overlap (H100: +27-35% by the
blog's ablation), EPLB's imbalance (the default-EPLB 4K row vs its simulated-perfect one:
50,302 / 59,337 a node), the GB200 low-precision run's o_proj NVFP4 / q_b FP8 and its weights
offloaded to host memory (kvplan holds them on the GPU). FINDING below.

FINDING (prefanchor68; the 7 anchors HELD OUT, committed at 30aa1746 before pricing; section 3's
rows below shaped; no rule, constant or default moves)

kvplan / published, tokens a second a GPU at each anchor's full step:
- LMSYS 96 H100, prefill 4 nodes DP32 EP32, DeepEP normal, TBO, block FP8, 16,384 tokens a rank:
  0.81 / 0.83 / 0.86 at ISL 1K / 2K / 4K (default EPLB: 7,209 / 6,818 / 6,288 published,
  5,824 / 5,685 / 5,420 kvplan), 0.73 against the simulated-perfect-EPLB 7,417. kvplan's step
  (4K: 3,023 ms) is ep_all_to_all 1,209 (DeepEP normal at EP 32 as aiconfigurator measured it,
  58 MoE layers x 20.8 ms), experts 967, attention 282, attention_proj 246, prefill_launch 133,
  mlp 89, mla_up_proj 48, small_kernels 47, summed serially; with the all-to-all wholly hidden
  (what two-batch overlap approaches) 9,030. The published rates lie between the two bounds.
- DeepSeek's own H800 profile (EP32, 4K x 16K tokens a GPU, TBO), priced on H100 (no DeepEP
  measurement on H800): 0.69 (7,839 published).
- LMSYS GB200 part II, high precision (BF16 attention, FP8 MoE, 4 ranks, weights offloaded to
  host, priced on a card with the memory to hold them): 0.86 / 0.93 at 16,000 / 32,000 tokens a
  rank (unstated; 18,471 published). Low precision (NVFP4 MoE, FP8 KV, 2 ranks): DeepEP at EP 2
  is unmeasured, so priced with SGLang's gather in its place: 0.98 / 1.09 (26,156 published);
  kvplan there holds the checkpoint's bf16 attention projections (the blog's o_proj NVFP4 and
  q_b FP8 are faster) and ctxstep67's NVFP4 experts at 0.38-0.40 of the kernel table (slower):
  the two move the ratio opposite ways.
So kvplan's full prefill step is not too fast against any published prefill worker: 0.69-1.09,
median 0.86, and on H100 the gap is the overlap kvplan does not model. The section-3 class's
measured rates (second table: Little's law over the rows' TTFT / TPOT, as if prefill-bound)
are 2,906-11,387 tokens a second a GPU: on GB200 FP4 (cfg483)
10,783 against LMSYS's 26,156 on the same GPU and checkpoint (an older SGLang), on B200 FP8 at
ISL 8K (cfg459) 2,906, under half of what LMSYS's H100s served a GPU. The 1.7x class is then the
deployments' (steps emptier or rarer than the full step the load lens assumes, or a rate the
rows' prefill role does not set), not the step's cost: no op's published cost carries it, and
no rule is written.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any
from unittest.mock import patch

from kvplan._util.errors import InputError
from kvplan.analysis.disagg import _candidate, prefill_batching
from kvplan.analysis.plan_types import Layout
from kvplan.hardware.gpus import get_gpu
from kvplan.perf import costmodel
from kvplan.sources.resolve import load_model
from tests.benches import ctxstep67, srt_slurm_sglang
from tests.benches.disagg_rows import MODELS, ROOT, _request, _with_role, prospective_rows

DATA = Path(__file__).resolve().parents[2] / "tests" / "data" / "disagg" / \
    "prefill_anchors68.json"
# The section-3 row each (GPU, precision) takes its unstated settings from (release, decode
# role, model files); H800 has no row: H100's, on the H800 preset.
TEMPLATES = {("H100", "fp8"): "h100_sxm", ("H800", "fp8"): "h100_sxm",
             ("GB200", "fp8"): "gb200", ("GB200", "fp4"): "gb200"}
DEEPSEEK = ("deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-R1")
# A GB200 anchor's tokens a rank are unstated: priced at both (the anchors file's `assumed`).
UNSTATED_TOKENS = (16384, 32768)
# DeepEP prefill roles of sgl-project/sglang#6017 (the H100 blog's reproduction) and the GB200
# part II recipes: --ep-num-redundant-experts 32.
REDUNDANT_EXPERTS = 32
# --mem-fraction-static of #6017's prefill command (0.835; quoted in sgl-project/sglang#9787):
# SGLang's default one reserves for the chunked prefill size, which at these budgets leaves none.
MEM_FRACTION = 0.835
# kvplan holds no DeepEP measurement on H800 (deepep_speeds.json): DeepSeek's profile priced on the
# H100 preset, the same compute, HBM and memory as kvplan's H800 (kvplan.hardware.gpus), its EP32
# all-to-all crossing the same 400 Gb/s RDMA NICs between 4 nodes (H800 cuts only NVLink).
STAND_IN = {"H800": "H100"}
OFFLOAD_MEMORY = 4  # `price`: a card this many times the memory where kvplan holds no weights


@dataclass(frozen=True, kw_only=True)
class Anchor:
    id: str
    gpu: str
    precision: str
    ranks: int
    dp: int
    ep: int
    isl: int
    tokens_per_rank: int | None
    measured_per_gpu: float  # tokens/s a GPU, as published


@cache
def anchors() -> tuple[Anchor, ...]:
    raw = json.loads(DATA.read_text(encoding="utf-8"))["anchors"]
    return tuple(Anchor(id=a["id"], gpu=a["gpu"], precision=a["precision"],
                        ranks=a["prefill_ranks"], dp=a["dp_attention"], ep=a["ep"],
                        isl=a["isl"], tokens_per_rank=a["tokens_per_rank"],
                        measured_per_gpu=float(a["measured_tokens_per_s_per_gpu"]))
                 for a in raw)


@dataclass(frozen=True, kw_only=True)
class Priced:
    anchor: Anchor
    tokens_per_rank: int  # whole prompts: prompts x ISL
    prompts: int
    step_ms: float
    by_op: dict[str, float]  # ms
    release: str
    held: bool  # False: kvplan does not hold the weights on the ranks (priced off-device)
    deepep: bool  # False: priced with SGLang's gather in place of the anchor's DeepEP (`price`)

    @property
    def per_gpu(self) -> float:
        """kvplan's prefill tokens a second a GPU: a rank's step's tokens over the step."""
        return self.tokens_per_rank * 1e3 / self.step_ms

    @property
    def ratio(self) -> float:
        return self.per_gpu / self.anchor.measured_per_gpu

    @property
    def overlapped_per_gpu(self) -> float:
        """The rate were the step's MoE all-to-all wholly hidden behind its compute (the bound
        two-batch overlap approaches; kvplan sums the ops serially)."""
        hidden = self.by_op.get("ep_all_to_all", 0.0) + self.by_op.get("dp_gather_all_reduce", 0.0)
        return self.tokens_per_rank * 1e3 / (self.step_ms - hidden)


def _template(a: Anchor) -> dict[str, str]:
    system = TEMPLATES[(a.gpu, a.precision)]
    return next(r for r in prospective_rows() if r["backend"] == "sglang"
                and r["mode"] == "disagg" and r["system"] == system
                and r["precision"] == a.precision and r["model_path"] in DEEPSEEK)


def _row(a: Anchor) -> dict[str, str]:
    """The template row at the anchor's prefill layout and ISL, matched to no recipe (no
    config id)."""
    row = dict(_template(a))
    row.update(prefill_num_workers="1", prefill_tp_size="1",
               prefill_attention_dp_size=str(a.dp), prefill_moe_ep_size=str(a.ep),
               prefill_moe_tp_size="1", isl=str(a.isl),
               silicon_data_source=row["silicon_data_source"].replace("config_id=", "was_id="))
    return row


def _role(a: Anchor, tokens_per_rank: int, deepep: bool) -> srt_slurm_sglang.SglangRole:
    return srt_slurm_sglang.SglangRole(
        workers=1, tp_size=a.dp, dp_size=a.dp, ep_size=a.ep, enable_dp_attention=True,
        max_running_requests=None, chunked_prefill_size=tokens_per_rank * a.dp,
        max_prefill_tokens=None, mem_fraction_static=MEM_FRACTION, max_total_tokens=None,
        context_length=None, cuda_graph_max_bs=None, moe_a2a_backend="deepep" if deepep else None,
        deepep_mode="normal", moe_dense_tp_size=1, enable_dp_lm_head=True,
        moe_nvfp4_dispatch=a.precision == "fp4", ep_num_redundant_experts=REDUNDANT_EXPERTS)


def price(a: Anchor, tokens_per_rank: int) -> Priced | None:
    """kvplan's full prefill step at the anchor (module docstring) and its ops. Where kvplan
    does not hold the weights and a prompt's KV on the anchor's ranks (the GB200 part II
    instances, which offload weights to host memory), the step on a card of OFFLOAD_MEMORY x
    the memory, the same compute and bandwidth: the time model charges no memory, and the
    host prefetch the blog overlaps is not priced (`held` False). None: kvplan's time model does
    not price the anchor's layout. Where kvplan has no DeepEP measurement at the anchor's EP
    (GB200 EP 2: deepep_speeds.json holds EP 4), the step with SGLang's gather all-reduce in
    place of DeepEP (the path section 3's SGLang NVFP4 rows run; `deepep` False), a variant, not
    the anchor's own path."""
    for deepep in (True, False):
        try:
            got = _price(a, tokens_per_rank, 1, deepep)
        except InputError as e:
            if "does not hold" not in str(e):
                raise
            got = _price(a, tokens_per_rank, OFFLOAD_MEMORY, deepep)
        if got is not None:
            return got
    return None


def _price(a: Anchor, tokens_per_rank: int, memory_x: int, deepep: bool) -> Priced | None:
    row = _row(a)
    spec, _ = load_model(str(ROOT / MODELS[(row["model_path"], row["precision"])][0]))
    req, p_req = _request(row, 1), _request(row, 1, "prefill")
    gpu = get_gpu(STAND_IN.get(a.gpu, a.gpu))
    gpu = replace(gpu, memory_bytes=gpu.memory_bytes * memory_x,
                  reported_total_bytes=(gpu.reported_total_bytes * memory_x
                                        if gpu.reported_total_bytes else None))
    req, p_req = replace(req, gpu=gpu), replace(p_req, gpu=gpu)
    p_req = _with_role(p_req, _role(a, tokens_per_rank, deepep))
    lay = Layout(tp=a.dp, dp=a.dp, dp_attention=True, ep=a.ep,
                 gpus_per_node=p_req.prefill.gpus_per_node)
    p_req = replace(p_req, prefill=lay)
    prefill = _candidate(spec, p_req, "prefill", lay)
    # The decode role sets only the batching's decode admission, not the prefill step: the
    # prefill's own layout and flags (the template's decode layout may not fit the anchor's GPU).
    decode = _candidate(spec, replace(p_req, decode=lay), "decode", lay)
    prompts = max(1, tokens_per_rank // a.isl)
    b = prefill_batching(spec, p_req, prefill, decode, token_budget=prompts * a.isl,
                         max_seqs=prompts)
    assert b is not None
    got: list[Any] = []
    real = costmodel.step_time

    def capture(*args: Any, **kw: Any) -> Any:
        res = real(*args, **kw)
        got.append(res)
        return res

    with patch.object(costmodel, "step_time", capture):
        ms = b.step_ms.__wrapped__(prompts * a.isl, prompts)
    if ms is None:
        return None
    return Priced(anchor=a, tokens_per_rank=prompts * a.isl, prompts=prompts, step_ms=ms,
                  by_op={k: v * 1e3 for k, v in got[-1].by_op.items()},
                  release=str(p_req.engine_version), held=memory_x == 1, deepep=deepep)


def priced_all() -> list[tuple[Anchor, Priced | None]]:
    return [(a, price(a, t)) for a in anchors()
            for t in ((a.tokens_per_rank,) if a.tokens_per_rank else UNSTATED_TOKENS)]


def main() -> None:
    done = priced_all()
    print("| anchor | GPU | ranks | ISL | tokens a rank (prompts) | step ms | kvplan tok/s/GPU "
          "| a2a hidden | published | kvplan / published |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for a, p in done:
        head = f"| {a.id} | {a.gpu} {a.precision} | DP{a.dp} EP{a.ep} | {a.isl:,} | "
        if p is None:
            print(head + "- | unpriced | | | " + f"{a.measured_per_gpu:,.0f} | |")
            continue
        print(head + f"{p.tokens_per_rank:,} ({p.prompts}) | {p.step_ms:,.0f} | "
              f"{p.per_gpu:,.0f} | {p.overlapped_per_gpu:,.0f} | {a.measured_per_gpu:,.0f} | "
              f"{p.ratio:.2f}"
              f"{'' if p.held else ' (off-device)'}{'' if p.deepep else ' (gather)'}"
              f"{f' (on {STAND_IN[a.gpu]})' if a.gpu in STAND_IN else ''} |")
    print()
    for a, p in done:
        if p is None:
            continue
        ops = sorted(p.by_op.items(), key=lambda kv: -kv[1])
        print(f"{a.id} @ {p.tokens_per_rank:,} (SGLang {p.release}): "
              + ", ".join(f"{k} {v:,.0f}" for k, v in ops if v >= 0.5) + " ms")
    print()
    print("Section 3's class rows (ctxstep67.ROWS; shaped): kvplan's full step's tokens a second "
          "a rank, and the measured request rate's (kvplan's over ctxstep67's `need`)")
    print()
    print("| row | layout | ISL x prompts a rank | step ms | kvplan tok/s/rank | need | "
          "measured tok/s/rank |")
    print("|---|---|---|---|---|---|---|")
    for rid in ctxstep67.ROWS:
        c = ctxstep67.context_step(rid)
        rate = c.tokens * 1e3 / c.step_ms
        print(f"| {rid} | {c.label} | {c.isl:,} x {c.prompts} | {c.step_ms:,.0f} | {rate:,.0f} | "
              f"{c.need:.2f} | {rate / c.need:,.0f} |")


if __name__ == "__main__":
    main()
