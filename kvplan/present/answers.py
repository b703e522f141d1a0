"""Each command's one-line answer in words (the numbers come from kvplan.analysis.answers): the
first line of the table output, before the tables (issue 28, "answer first")."""

from __future__ import annotations

from collections.abc import Sequence

from kvplan._util.units import human_bytes
from kvplan.analysis.answers import (
    CheckHeadline,
    CompareHeadline,
    EstimateHeadline,
    PlanHeadline,
    RatePlanHeadline,
    SimulateHeadline,
    SweepHeadline,
    VerifyHeadline,
)

EXPLAIN_HINT = "--explain shows the derivation (JSON and Markdown carry all of it)."


def names_text(names: Sequence[str]) -> str:
    """'A', 'A and B', 'A, B and C'."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _requests(n: int) -> str:
    return f"{n:,} request" + ("" if n == 1 else "s")


def estimate_answer(h: EstimateHeadline) -> str:
    """'110 requests of 4,096 tokens fit (110.85x) on H100-80GB, vLLM 0.32, bf16 KV', or without
    a device the bytes: 'KV (bf16): 128.00 KiB/token, 512.00 MiB/request of 4,096 tokens'."""
    if h.max_requests is None or h.max_concurrency is None:
        per_token = ("" if h.bytes_per_token is None else
                     f"{human_bytes(h.bytes_per_token)}/token, ")
        text = (f"KV ({h.kv_dtype}): {per_token}"
                f"{human_bytes(h.bytes_per_sequence)}/request of {h.context:,} tokens")
        if h.batch > 1:
            text += f", {human_bytes(h.bytes_per_batch)} for {h.batch:,}"
        return text
    fit = (f"{_requests(h.max_requests)} of {h.context:,} tokens "
           + ("fits" if h.max_requests == 1 else "fit") if h.max_requests else
           f"Not one request of {h.context:,} tokens fits")
    where = ", ".join(p for p in (
        h.device, f"{h.engine} {h.engine_version or ''}".strip() if h.engine else None,
        f"{h.kv_dtype} KV") if p)
    return f"{fit} ({h.max_concurrency:,.2f}x) on {where}"


def plan_answer(h: PlanHeadline) -> str:
    """'FITS: 50 requests of 32,768 tokens on 8 x H100-80GB, tp 4, dp 2 (56.02x)'."""
    target = f"{h.verdict}: {_requests(h.concurrency)} of {h.context:,} tokens"
    if h.gpus is None or h.requests is None or h.max_concurrency is None:
        return f"{target} on {h.gpu}"
    if h.verdict == "DOES NOT FIT" and h.requests >= h.concurrency and h.reason:
        return f"{target}; {h.reason}"  # the KV fits; something else (the host tiers) does not
    if h.verdict == "DOES NOT FIT":  # the closest layout, and what it holds
        return (f"{target}; {h.gpus} x {h.gpu} ({h.layout}) holds "
                f"{h.requests:,}")
    return f"{target} on {h.gpus} x {h.gpu}, {h.layout} ({h.max_concurrency:,.2f}x)"


def rate_plan_answer(h: RatePlanHeadline) -> str:
    if h.gpus is None:
        return (f"DOES NOT MEET: no layout of up to {h.max_gpus} x {h.gpu} serves "
                f"{h.rate:g} req/s within the SLOs")
    if h.dp_attention_layout is not None:
        return (f"MEETS: {h.rate:g} req/s within the SLOs on {h.gpus} x {h.gpu} "
                f"({h.dp_attention_layout})")
    stages = f" x pp {h.pp}" if h.pp > 1 else ""
    return (f"MEETS: {h.rate:g} req/s within the SLOs on {h.gpus} x {h.gpu} (tp {h.tp}{stages} x "
            f"{h.replicas} replica{'' if h.replicas == 1 else 's'})")


def compare_answer(h: CompareHeadline) -> str:
    """'Cheapest KV: MQA, 16,384 B/token (0.0312x MHA); the native 0.2500x' (the native scheme
    is the table's starred row)."""
    text = (f"Cheapest KV: {names_text(h.cheapest)}, {h.bytes_per_token:,} B/token "
            f"({h.ratio_vs_mha:.4f}x MHA)")
    if h.native_bytes_per_token == h.bytes_per_token:
        return text + ", the native scheme"
    return text + f"; the native {h.native_ratio_vs_mha:.4f}x"


def sweep_answer(h: SweepHeadline) -> str:
    if h.max_requests is not None and h.context is not None:
        where = f" ({', '.join(h.where)})" if h.where else ""
        return (f"Most requests: {h.max_requests:,} of {h.context:,} tokens{where}, of "
                f"{h.points:,} points")
    if h.least_bytes_per_sequence is None or h.most_bytes_per_sequence is None:
        return "No points."
    return (f"KV per sequence: {human_bytes(h.least_bytes_per_sequence)} to "
            f"{human_bytes(h.most_bytes_per_sequence)} over {h.points:,} points")


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f} ms"


def simulate_answer(h: SimulateHeadline) -> str:
    text = (f"{h.num_requests:,} requests at {h.request_throughput:,.2f} req/s: p90 TTFT "
            f"{_ms(h.ttft_p90_ms)}, TPOT {_ms(h.tpot_p90_ms)}")
    if h.goodput is not None:
        text += f"; goodput {h.goodput:,.2f} req/s"
    elif h.preemptions:
        text += f"; {h.preemptions:,} preemptions"
    return text


def check_answer(h: CheckHeadline) -> str:
    server = f"{h.engine} {h.version or ''}".strip()
    if h.agree:
        return f"AGREE: {server} matches the plan on {h.compared} quantities"
    return (f"DISAGREE: {server} differs from the plan on {len(h.disagreeing)} of "
            f"{h.compared} quantities")


def verify_answer(h: VerifyHeadline) -> str:
    same = h.measured_num_blocks == h.planned_num_blocks
    checks = ", ".join(
        [("peak within budget" if h.peak_ok else "peak OVER budget"),
         ("freed" if h.freed_ok else "NOT freed")]
        + ([] if h.decode_ok else ["decode output NOT FINITE"]))
    blocks = (f"{h.measured_num_blocks:,} blocks held, as planned" if same else
              f"{h.measured_num_blocks:,} blocks held, {h.planned_num_blocks:,} planned")
    sign = "+" if h.difference_bytes >= 0 else "-"
    return f"{blocks}; KV bytes {sign}{abs(h.difference_bytes):,} B; {checks}"
