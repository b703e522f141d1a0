"""vLLM at 8,192-token prompts and many users: why kvplan's TTFT is 2-5x low on aiconfigurator's
aggregated InferenceX rows (issue 30, vllmlongq62). A forensic: no rule of kvplan changes and no
row's replay on the page moves; every figure is the frozen rows' or the simulator's own.

Every row named here was READ (its measured TTFT is quoted in the brief or printed below): were
a rule later written from this, these rows would be SHAPED by it, not held out.

Sections (`main`):
1. The measured TTFT / TPOT ratio of every vLLM InferenceX configuration (model, precision, GPU,
   release, layout, ISL) across its concurrencies (`ratio_lines`): nearly constant per
   configuration, about 7-13 at 1,024-token prompts and 20-45 at 8,192, from 4 users to 128.
2. kvplan's steps, step by step (`trace`): the composition (decodes, prompt-chunk tokens) and the
   price of each step of three rows' replays, under the frozen bench's workload (fixed lengths,
   steady state) and under InferenceX's (tests.benches.aiconfig_harness_replay: 10 x C requests
   of lengths uniform in [0.8, 1] x ISL / OSL, every request measured, the start-up burst of C
   requests at t = 0 included).
3. A counterfactual (`counterfactual_lines`): InferenceX's workload with every prompt chunk's
   own price multiplied by K (1, 2, 3), read as the mean over all requests, the median, and
   the mean without the start-up burst.
4. Growth from 4 users (`growth_lines`, at ISL 8,192 and 1,024): each configuration's TTFT at
   32, 64 and 128 users over its own 4-user TTFT, measured against kvplan's under InferenceX's
   workload read as the mean and as the median (a ratio in which a constant price error
   cancels).
5. The brief's rows (`statistic_lines`): kvplan / measured TTFT of the frozen bench against
   InferenceX's workload read as the mean and as the median.

Run: python -m tests.benches.vllmlong62 (sections 1-3: 29 s of CPU; section 4 about 5 minutes
of CPU an ISL; section 5 about 6 minutes; on the shared 2-core host at a load of ~12, section 5
took 20 minutes of wall time). Not printed by examples/simulate-bench.md's generator.

The candidates the brief lists, read in vLLM's sdists (0.16.0, 0.17.0, 0.18.0, 0.19.0; 0.15.1
has no sdist on PyPI and was not read here): FINDING.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from kvplan.analysis.simulate import run as sim_run
from kvplan.analysis.simulate.scheduler import StepCost
from tests.benches import aiconfig_agg_runs as agg
from tests.benches import aiconfig_harness, aiconfig_harness_replay
from tests.benches.aiconfig_agg_loop import ROUNDS, row_run
from tests.benches.disagg_rows import stated_concurrency

# The traced rows: 8,192 / 1,024 at 64 users, and their 4-user twins (same model, precision,
# GPU, release, layout). All read (the brief quotes the first three's TTFT).
TRACED = {
    "MiniMax-M2.5 FP8, B200 TP4, vLLM 0.19.0": (
        "2026_03_25_minimax_m2_5_b200_sxm_vllm_fp8_agg_8192x1024_c64_tp4_0_ep1_0_64",
        "2026_03_25_minimax_m2_5_b200_sxm_vllm_fp8_agg_8192x1024_c4_tp4_0_ep1_0_86"),
    "gpt-oss-120b MXFP4, H200 TP4, vLLM 0.18.0": (
        "2026_03_25_gpt_oss_120b_h200_sxm_vllm_fp4_agg_8192x1024_c64_tp4_0_ep1_0_188",
        "2026_04_06_gpt_oss_120b_h200_sxm_vllm_fp4_agg_8192x1024_c4_tp4_ep1_500"),
    "Kimi-K2.5 INT4, B200 TP8, vLLM 0.15.1": (
        "2026_03_25_kimi_k2_5_b200_sxm_vllm_int4_agg_8192x1024_c64_tp8_0_ep1_0_321",
        "2026_03_25_kimi_k2_5_b200_sxm_vllm_int4_agg_8192x1024_c4_tp8_0_ep1_0_333"),
}
SCALES = (1.0, 2.0, 3.0)  # the counterfactual's multipliers of a prompt chunk's own price


@dataclass(frozen=True)
class Step:
    """One priced step: its decodes, its prompt chunks' tokens, its seconds."""

    decodes: int
    chunks: tuple[int, ...]
    seconds: float


@dataclass
class Recorder:
    """A step cost that prices each step as `inner` does, plus (scale - 1) x the price of the
    step's prompt chunks alone (1: inner's price), and keeps every step it priced."""

    inner: StepCost
    scale: float = 1.0
    steps: list[Step] = field(default_factory=list)

    @property
    def full_attention_only(self) -> bool:
        return self.inner.full_attention_only

    def _extra(self, chunks: list[tuple[int, int]]) -> float:
        if not chunks or self.scale == 1.0:
            return 0.0
        return (self.scale - 1.0) * self.inner.seconds(decode_contexts=[], chunks=chunks)

    def _keep(self, decodes: int, chunks: list[tuple[int, int]], seconds: float) -> float:
        self.steps.append(Step(decodes, tuple(n for _, n in chunks), seconds))
        return seconds

    def seconds(self, *, decode_contexts: list[int], chunks: list[tuple[int, int]]) -> float:
        t = self.inner.seconds(decode_contexts=decode_contexts, chunks=chunks)
        return self._keep(len(decode_contexts), chunks, t + self._extra(chunks))

    def seconds_from_sums(self, decodes: int, decode_keys: int,
                          chunks: list[tuple[int, int]]) -> float:
        t = self.inner.seconds_from_sums(decodes, decode_keys, chunks)
        return self._keep(decodes, chunks, t + self._extra(chunks))


@contextmanager
def recorded(scale: float = 1.0) -> Iterator[list[Recorder]]:
    """Every vLLM replica built inside it prices its steps through a Recorder of `scale`; the
    list holds them, in the order built."""
    made: list[Recorder] = []
    inner = sim_run.replica_step_cost

    def wrap(sim: sim_run.SimSetup) -> StepCost:
        made.append(Recorder(inner(sim), scale))
        return made[-1]

    sim_run.replica_step_cost = wrap  # type: ignore[assignment]
    try:
        yield made
    finally:
        sim_run.replica_step_cost = inner


def ttft_stats(sent_first: list[tuple[float, float]], concurrency: int
               ) -> tuple[float, float, float]:
    """(mean, median, mean without the first `concurrency` sent) TTFT in ms of requests given as
    (sent s, first token s)."""
    order = sorted(sent_first)
    ttft = [(f - s) * 1e3 for s, f in order]
    return statistics.fmean(ttft), statistics.median(ttft), statistics.fmean(ttft[concurrency:])


def burst_share_ms(concurrency: int, prefill_ms: float,
                   per_user: int = aiconfig_harness_replay.PROMPTS_PER_USER) -> float:
    """What the start-up burst adds to the MEAN TTFT over all requests when its `concurrency`
    prompts, sent together, are prefilled one a step of `prefill_ms` each: the i-th waits i
    prefills (i = 0 .. C - 1), (C - 1) / 2 on average, and the burst is 1 / per_user of the
    requests: (C - 1) / 2 x prefill_ms / per_user."""
    return (concurrency - 1) / 2 * prefill_ms / per_user


def _rows() -> dict[str, dict[str, str]]:
    return {r["id"]: r for r in agg.rows()}


# -- 1. the measured ratio -------------------------------------------------------------------

def ratio_groups() -> dict[tuple[str, ...], list[tuple[int, float]]]:
    """(model, precision, GPU, release, layout, ISL) -> [(concurrency, TTFT / TPOT)] of the vLLM
    InferenceX rows at a release with 1,024-token outputs, one per measurement (a run exported
    twice counted once)."""
    h = aiconfig_harness
    seen: set[tuple[str, str]] = set()
    out: dict[tuple[str, ...], list[tuple[int, float]]] = {}
    for r in agg.rows():
        if (r["backend"] != "vllm" or h.provenance(r) != h.INFERENCEX_ROWS
                or r["osl"] != "1024" or agg.release(r) is None):
            continue
        key = (r["silicon_ttft_ms"], r["silicon_tpot_ms"])
        if key in seen:
            continue
        seen.add(key)
        tp, dp, _, ep = agg.layout(r)
        group = (r["model_path"], r["precision"], r["system"], r["backend_version"],
                 f"TP{tp} DP{dp} EP{ep}", r["isl"])
        out.setdefault(group, []).append(
            (stated_concurrency(r) or 0,
             float(r["silicon_ttft_ms"]) / float(r["silicon_tpot_ms"])))
    return out


def ratio_lines() -> list[str]:
    """A table line per configuration with at least three concurrencies: the ratio's median,
    range, and the concurrencies (those whose TTFT is a queue behind a full KV pool, ratio above
    100, left out)."""
    lines = ["| model, precision, GPU, release, layout | ISL | concurrencies | median ratio | "
             "range |", "|---|---:|---|---:|---|"]
    for g, points in sorted(ratio_groups().items()):
        kept = sorted(p for p in points if p[1] <= 100)
        if len(kept) < 3:
            continue
        ratios = [x for _, x in kept]
        lines.append(f"| {' '.join(g[:5])} | {g[5]} | {', '.join(str(c) for c, _ in kept)} | "
                     f"{statistics.median(ratios):.0f} | {min(ratios):.0f} - {max(ratios):.0f} |")
    return lines


# -- 2. the step traces ----------------------------------------------------------------------

def _run(row: dict[str, str], harness: bool, scale: float = 1.0):  # type: ignore[no-untyped-def]
    conc = stated_concurrency(row)
    assert conc is not None
    version = agg.release(row)
    assert version is not None
    reqs = (aiconfig_harness_replay.workload(int(row["isl"]), int(row["osl"]), conc)
            if harness else None)
    with recorded(scale) as made:
        result = row_run(row, agg.row_setup(row, version), reqs)
    return result, made[0].steps


def step_summary(steps: list[Step]) -> str:
    """Decode-only and chunk-holding steps: how many, their mean price and composition."""
    dec = [s for s in steps if not s.chunks]
    mix = [s for s in steps if s.chunks]
    text = (f"{len(steps):,} steps; decode-only {len(dec):,} at "
            f"{statistics.fmean(s.seconds for s in dec) * 1e3:.1f} ms (mean "
            f"{statistics.fmean(s.decodes for s in dec):.0f} decodes)" if dec else "")
    if mix:
        text += (f"; with a prompt chunk {len(mix):,} at "
                 f"{statistics.fmean(s.seconds for s in mix) * 1e3:.1f} ms (mean "
                 f"{statistics.fmean(s.decodes for s in mix):.0f} decodes + "
                 f"{statistics.fmean(sum(s.chunks) for s in mix):,.0f} chunk tokens in "
                 f"{statistics.fmean(len(s.chunks) for s in mix):.2f} chunks)")
    return text


def trace(name: str, row_id: str, harness: bool, first: int = 8) -> list[str]:
    """The row's replay: its first `first` steps and a steady-state window, composition and
    price, and its TTFT and TPOT."""
    row = _rows()[row_id]
    conc = stated_concurrency(row) or 0
    result, steps = _run(row, harness)
    mean, median, rest = ttft_stats([(r.sent_s, r.first_token_s) for r in result.finished], conc)
    tpot = statistics.fmean((r.finish_s - r.first_token_s) / (r.output_len - 1) * 1e3
                            for r in result.finished if r.output_len > 1)
    kind = ("InferenceX's workload" if harness else
            f"the frozen bench's workload ({ROUNDS} x C fixed-length requests)")
    out = [f"**{name}, {conc} users, {kind}** (measured TTFT {float(row['silicon_ttft_ms']):,.0f}"
           f" ms, TPOT {float(row['silicon_tpot_ms']):.1f} ms): kvplan's TTFT mean {mean:,.0f} / "
           f"median {median:,.0f} / mean without the first {conc} {rest:,.0f} ms, TPOT mean "
           f"{tpot:.1f} ms. {step_summary(steps)}.", "",
           "| step | decodes | chunk tokens | ms |", "|---:|---:|---|---:|"]
    mid = len(steps) // 2
    for i in [*range(min(first, len(steps))), *range(mid, min(mid + first, len(steps)))]:
        s = steps[i]
        out.append(f"| {i} | {s.decodes} | {' + '.join(f'{n:,}' for n in s.chunks) or '-'} | "
                   f"{s.seconds * 1e3:.1f} |")
    return out


# -- 3. the counterfactual -------------------------------------------------------------------

def counterfactual_lines() -> list[str]:
    """InferenceX's workload, the prompt chunks' own price x K: TTFT by statistic, TPOT."""
    lines = ["| row | users | K | measured TTFT / TPOT | kvplan TTFT mean / median / mean "
             "without the burst | kvplan TPOT |", "|---|---:|---:|---:|---:|---:|"]
    for name, ids in TRACED.items():
        for row_id in reversed(ids):
            row = _rows()[row_id]
            conc = stated_concurrency(row) or 0
            for k in SCALES:
                result, _ = _run(row, True, k)
                mean, median, rest = ttft_stats(
                    [(r.sent_s, r.first_token_s) for r in result.finished], conc)
                tpot = statistics.fmean(
                    (r.finish_s - r.first_token_s) / (r.output_len - 1) * 1e3
                    for r in result.finished if r.output_len > 1)
                lines.append(f"| {name} | {conc} | {k:g} | {float(row['silicon_ttft_ms']):,.0f}"
                             f" / {float(row['silicon_tpot_ms']):.1f} | {mean:,.0f} / "
                             f"{median:,.0f} / {rest:,.0f} | {tpot:.1f} |")
    return lines


# -- 4. growth from 4 users: scale-free -------------------------------------------------------

GROWTH_USERS = (32, 64, 128)  # the loads compared with the same configuration's 4 users


def growth_groups(isl: str = "8192") -> dict[tuple[str, ...], dict[int, dict[str, str]]]:
    """(model, precision, GPU, release, layout) -> {concurrency: row} of the vLLM InferenceX
    rows at `isl` / 1,024 that the bench replays, at a release, without attention DP, whose
    configuration has a 4-user row and one of GROWTH_USERS (the first row of a measurement)."""
    h = aiconfig_harness
    out: dict[tuple[str, ...], dict[int, dict[str, str]]] = {}
    for r in agg.rows():
        if (r["backend"] != "vllm" or h.provenance(r) != h.INFERENCEX_ROWS
                or (r["isl"], r["osl"]) != (isl, "1024") or agg.release(r) is None
                or agg.layout(r)[1] > 1 or agg.why_not(r)):
            continue
        tp, _, _, ep = agg.layout(r)
        conc = stated_concurrency(r) or 0
        group = (r["model_path"], r["precision"], r["system"], r["backend_version"],
                 f"TP{tp} EP{ep}")
        out.setdefault(group, {}).setdefault(conc, r)
    return {g: v for g, v in out.items()
            if 4 in v and any(c in v for c in GROWTH_USERS)}


def growth(rows_by_users: dict[int, dict[str, str]]) -> list[tuple[int, float, float, float]]:
    """[(users, measured TTFT(users) / TTFT(4), kvplan's mean / mean(4), kvplan's median /
    median(4))] under InferenceX's workload at kvplan's own prices: a ratio of a configuration
    to itself, so a price off by a constant factor cancels."""
    def stats(row: dict[str, str]) -> tuple[float, float]:
        result, _ = _run(row, True)
        mean, median, _ = ttft_stats([(r.sent_s, r.first_token_s) for r in result.finished],
                                     stated_concurrency(row) or 0)
        return mean, median

    base = rows_by_users[4]
    m4, k4 = float(base["silicon_ttft_ms"]), stats(base)
    out = []
    for users in GROWTH_USERS:
        if users in rows_by_users:
            row = rows_by_users[users]
            k = stats(row)
            out.append((users, float(row["silicon_ttft_ms"]) / m4, k[0] / k4[0], k[1] / k4[1]))
    return out


FULL_POOL = 10.0  # a growth past this (kvplan's or the measured) is a queue behind a full pool


def growth_summary(points: list[tuple[float, float, float]]) -> str:
    """Over (measured, kvplan mean, kvplan median) growths, those with neither the measured nor
    kvplan's mean growth past FULL_POOL: measured / kvplan's growth of the mean and of the
    median, median (quartiles) and how many within 15 %."""
    kept = [p for p in points if max(p[0], p[1]) <= FULL_POOL]

    def part(i: int) -> str:
        r = [p[0] / p[i] for p in kept]
        q1, q2, q3 = statistics.quantiles(r, n=4, method="inclusive")
        return (f"{q2:.2f} (quartiles {q1:.2f} - {q3:.2f}; {sum(abs(x - 1) <= 0.15 for x in r)}"
                " within 15 %)")

    return (f"{len(kept)} of {len(points)} points (the rest past {FULL_POOL:g}: a full KV "
            f"pool): measured growth / kvplan's growth of the mean {part(1)}, of the median "
            f"{part(2)}")


def growth_lines(isl: str = "8192") -> list[str]:
    lines = ["| model, precision, GPU, release, layout | users | measured TTFT / its 4-user "
             "TTFT | kvplan mean / mean at 4 | kvplan median / median at 4 |",
             "|---|---:|---:|---:|---:|"]
    points = []
    for g, by_users in sorted(growth_groups(isl).items()):
        for users, measured, mean, median in growth(by_users):
            points.append((measured, mean, median))
            lines.append(f"| {' '.join(g)} | {users} | {measured:.2f} | {mean:.2f} | "
                         f"{median:.2f} |")
    return [*lines, "", growth_summary(points)]


# -- 5. the brief's rows under the harness's statistic ------------------------------------------

def brief_rows(low: bool = False) -> list[dict[str, str]]:
    """The brief's set: the vLLM InferenceX rows at 8,192 / 1,024 at a release, without attention
    DP, that the bench replays, at concurrency >= 32 (`low`: <= aiconfig_harness.LOW_LOAD)."""
    h = aiconfig_harness
    return [r for r in agg.rows()
            if r["backend"] == "vllm" and h.provenance(r) == h.INFERENCEX_ROWS
            and (r["isl"], r["osl"]) == ("8192", "1024") and agg.release(r) is not None
            and agg.layout(r)[1] == 1 and not agg.why_not(r)
            and ((stated_concurrency(r) or 0) <= h.LOW_LOAD if low
                 else (stated_concurrency(r) or 0) >= 32)]


def statistic_lines() -> list[str]:
    """kvplan / measured TTFT of the brief's rows: the frozen bench's (steady state, fixed
    lengths), and InferenceX's workload read as the mean over every request and as the median;
    median ratio and rows inside aiconfig_agg_runs' band."""
    lines = ["| rows | n | frozen bench | harness workload, mean | harness workload, median |",
             "|---|---:|---:|---:|---:|"]
    for low in (True, False):
        part = brief_rows(low)
        frozen, mean, median = [], [], []
        for row in part:
            measured = float(row["silicon_ttft_ms"])
            replayed = agg.replay(row)
            result, _ = _run(row, True)
            m, md, _ = ttft_stats([(r.sent_s, r.first_token_s) for r in result.finished],
                                  stated_concurrency(row) or 0)
            if replayed.ttft_ms is None:
                continue
            frozen.append(replayed.ttft_ms / measured)
            mean.append(m / measured)
            median.append(md / measured)

        def cell(xs: list[float]) -> str:
            inside = sum(agg.BAND[0] <= x <= agg.BAND[1] for x in xs)
            return f"{statistics.median(xs):.2f} ({inside} inside)"

        name = (f"concurrency <= {aiconfig_harness.LOW_LOAD}" if low else "concurrency >= 32")
        lines.append(f"| {name} | {len(frozen)} | {cell(frozen)} | {cell(mean)} | "
                     f"{cell(median)} |")
    return lines


# Written after sections 1-5 were first printed (vllmlongq62); no rule or constant changed.
FINDING = (
    "What it says (vllmlongq62, written after the sections above were first printed; no rule "
    "or constant changed; every row named or tabled here was read, so a rule later built on "
    "this is SHAPED by them). (1) The code, read in vLLM's sdists 0.16.0, 0.17.0, 0.18.0 and "
    "0.19.0 (0.15.1 has no sdist on PyPI and was not read here; kvplan read its graph and "
    "output paths before: kvplan.perf.vllm_ungraphed, kvplan.engines.vllm.frontend): every "
    "candidate "
    "is either what kvplan already simulates or cannot be the miss. max_num_batched_tokens: "
    "8,192 for the OpenAI server on a GPU of >= 70 GiB but an A100 (engine/arg_utils.py "
    "get_batch_defaults, 0.16.0:1881, 0.17.0:1978, 0.18.0:2012, 0.19.0:2053-2057), kvplan's "
    "default for these rows: the same; an 8,192-token prompt beside C decodes takes two steps "
    "(section 2; the InferenceX scripts' own budgets, e.g. MiniMax 0.19.0's 2 x ISL, are not "
    "in the frozen bench: aiconfig_harness.HARNESS). long_prefill_token_threshold 0 and "
    "max_num_partial_prefills 1 (config/scheduler.py 0.16.0:62, 72, 231; 0.17.0 and 0.18.0:"
    "69, 79, 238; 0.19.0:69, 79, 244-246: the 4 % cap only with partial prefills > 1): no "
    "per-prompt cap, ruled out. Order: running requests first (decodes and a partial prompt's "
    "next chunk), then waiting ones while budget is left (v1/core/sched/scheduler.py 0.16.0:"
    "350, 532-534; 0.17.0:357, 535-541; 0.18.0:373, 553-557; 0.19.0:383, 563-567): kvplan's "
    "scheduler, the same. CUDA graphs: the largest capture size min(2 x max_num_seqs, 512) "
    "capped at the budget (config/vllm.py 0.16.0:1177, 1227-1231; 0.17.0:1329, 1379-1383; "
    "0.18.0:1293, 1343-1347; 0.19.0:1349, 1399-1403): every step with an 8k chunk runs "
    "ungraphed, which kvplan's opt-in launch price puts at ~6 ms a MiniMax step "
    "(tests.benches.lone_prefill): a small part of the miss, and a per-step price cannot make "
    "the miss grow with the users (2). Async scheduling: on by default (config/scheduler.py "
    "async_scheduling None, resolved on; 0.16.0:131, 0.17.0-0.19.0:138), simulated. Logits: "
    "only each request's last scheduled position is sampled (v1/worker/gpu_model_runner.py "
    "`sample_hidden_states = hidden_states[logits_indices]`, 0.16.0:3573, 0.17.0:3648, "
    "0.18.0:3822, 0.19.0:4069), prompt logprobs off: ruled out. Output path: the first token "
    "is sent at once whatever --stream-interval (v1/engine/output_processor.py 0.16.0-0.18.0:"
    "290-294, 0.19.0:285-298): ruled out. Attention in the mixed step: kvplan's is 9.5 / 4.3 / "
    "7.8 ms of the 45.5 / 48.6 / 87.9 ms 8k-prompt step of the three traced rows; three times "
    "slower it would add 19 / 9 / 16 ms against misses of 143 / 121 / 329 ms at 4 users "
    "(section 3): not the main term (kvplan's own split, not a measurement). MoE at 8k tokens "
    "(19.6 / 24.7 / 35.2 ms): a lead, not a rule: Kimi-K2.5's INT4 W4A16 experts run Marlin by "
    "default (0.16.0 model_executor/layers/quantization/compressed_tensors/"
    "compressed_tensors_moe.py:1245-1252; FlashInfer's MxInt4 kernels only with "
    "VLLM_USE_FLASHINFER_MOE_INT4=1, envs.py:163, 1187), whose GEMMs are Ampere's mma.sync, "
    "and gpus.json gives the B200 no mma.sync rate (Hopper's is 2/3 of its peak), so kvplan "
    "prices them at the B200's full bf16 rate; no published figure for Blackwell's mma.sync "
    "rate was found here, so nothing is written. (2) The statistic. The measured TTFT / TPOT "
    "is nearly constant per configuration from 4 to 128 users (section 1: about 7-13 at "
    "1,024-token prompts, 20-45 at 8,192). Section 4 compares each configuration with itself "
    "(TTFT at C users / TTFT at 4), so a constant error in kvplan's prices cancels: over the "
    "58 points at 32, 64 and 128 users (6 left out where kvplan's or the measured growth "
    "passes 10: a full KV pool), measured growth / kvplan's growth of the MEAN over every "
    "request is 1.01 (median; quartiles 0.93 - 1.07; 53 within 15 %), of the MEDIAN 2.37 "
    "(1.92 - 2.82; none within 15 %). The rows' silicon_ttft_ms grows as the mean over all "
    "10 x C requests does, the start-up burst included (the client sends C prompts at t = 0 "
    "and measures every request: InferenceX benchmark_serving.py:427-434, :298 mean_ttft_ms = "
    "np.mean(ttfts); its own docs name mean_ttft as the TTFT, AGENTS.md:491), not as the "
    "median that aiconfig_harness.FINDING called the likelier. The burst gives 1 / 10 of the "
    "requests (C - 1) / 2 prefills of queue, (C - 1) / 20 prefills on the mean "
    "(`burst_share_ms`: 143 ms at 64 users and kvplan's 45.5 ms MiniMax prompt), so the "
    "measured TTFT grows about linearly with the users, while the frozen bench (steady state, "
    "fixed lengths, the burst not measured) barely grows. At 1,024-token prompts (section 4 "
    "at ISL 1,024, 66 points) the mean is still the nearer (1.17, quartiles 1.07 - 1.42, 27 "
    "within 15 %; the median 1.62, 4 within 15 %), but the measured TTFT grows more than "
    "kvplan's mean there, most on MiniMax-M2.5 under 0.19.0 on B200 / B300 (1.5 - 2.0x): a "
    "load-dependent cost that short prompts expose and long ones hide, not read here. (3) What "
    "is left is the prompt's price, the same factor at 4 users as at 64: measured / kvplan "
    "mean TTFT under "
    "InferenceX's workload 3.2 / 3.1 / 4.0 at 4 users and 2.9 / 3.0 / 4.4 at 64 on the traced "
    "rows (section 3). Pricing every prompt chunk's own time x 3 (a counterfactual, not a "
    "rule) brings the means to 161 / 161 / 293 ms at 4 users (measured 208 / 180 / 437) and "
    "582 / 603 / 1,101 at 64 (639 / 634 / 1,729), TPOT 27.8 / 16.1 / 35.3 (23.3 / 16.1 / "
    "48.2): the long prompt's step is tests.benches.lone_prefill's open question (a kernel "
    "running ~50-140 ms a prefill step longer than kvplan prices), which needs a GPU timing "
    "of one 8,192-token mixed step per model, not a scheduler rule (gpt-oss on Hopper: "
    "gptosshopper62). (4) The brief's rows (section 5; vLLM InferenceX 8,192 / 1,024 rows at "
    "a release, no attention DP, replayed), median kvplan / measured TTFT and rows inside "
    "[0.75, 1.33]: at 32 users and more (103 rows) the frozen bench 0.44 (2 inside), "
    "InferenceX's workload read as the mean 0.40 (3), as the median 0.17 (4); at 4 users and "
    "fewer (53) 0.80 (30), 0.38 (0), 0.35 (0). Read as the mean, kvplan's miss is the same at "
    "every load (0.38 -> 0.40): the growth with the users is simulated, the prompt's price "
    "is not; the frozen bench's better low-load figure (0.80) comes from its fixed lengths, "
    "whose users stay in step and queue behind each other (aiconfig_harness.FINDING).")


def main() -> None:
    print("## vllmlongq62: vLLM at 8,192-token prompts and many users (forensic)\n")
    print("### 1. Measured TTFT / TPOT by configuration (vLLM InferenceX rows, OSL 1,024)\n")
    print("\n".join(ratio_lines()))
    print("\n### 2. kvplan's steps\n")
    for name, (row_id, _) in TRACED.items():
        for harness in (False, True):
            print("\n".join(trace(name, row_id, harness)) + "\n")
    print("### 3. InferenceX's workload, prompt chunks priced x K\n")
    print("\n".join(counterfactual_lines()))
    for isl in ("8192", "1024"):
        print(f"\n### 4. TTFT growth from 4 users, same configuration, ISL {isl} "
              "(InferenceX's workload)\n")
        print("\n".join(growth_lines(isl)))
    print("\n### 5. The brief's rows: kvplan / measured TTFT by statistic\n")
    print("\n".join(statistic_lines()))
    if FINDING:
        print(f"\n{FINDING}")


if __name__ == "__main__":
    main()
