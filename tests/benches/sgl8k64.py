"""SGLang's aggregated rows at 8,192-token prompts and >= 8 users, kvplan about 3x high on TTFT
(issue 30, sgl8k64; the class tests.benches.aggmiss63 found): the class as
examples/simulate-bench.md prints it, where its TTFT goes in kvplan's replay, and a
COUNTERFACTUAL under InferenceX's harness (tests.benches.aiconfig_harness_replay's workload) at
the flags each row's script passes, with and without SGLang's ignore-EOS admission
(kvplan.analysis.simulate.sglang_scheduler rule 4, written in this session after the class's
rows were read, from SGLang's code; frozen at RULE_COMMIT before this counterfactual was run).
Nothing fitted; no frozen replay moves (rule 4 is opt-in: SglangOptionsSim.ignore_eos).

The class (`class_rows`): the page's held-out SGLang rows at ISL 8,192 and concurrency >= 8.

FINDING (page as committed at a5f87c17; every row of the class was read before rule 4 was
written, so the class SHAPED rule 4 and nothing here is held out for it):
- The class: 74 rows (47 configurations: Qwen3.5-397B-A17B FP8 / BF16 on B200 / B300 / H200,
  SGLang 0.5.9 / 0.5.10.post1, TP 4 / 8, EP 1 / 4 / 8; GLM-5 FP8 B200 / B300 nightly; three
  DeepSeek-V3 FP8 B300 0.5.10.post1 TP 4 rows), OSL 1,024 in all: 58 InferenceX rows and 16 from
  aiconfigurator's gap-analysis files (tests.benches.aiconfig_harness.provenance), 14 of which
  repeat an InferenceX row's measured TTFT to 0.1 ms. TTFT high 71, low 3 (the DeepSeek rows,
  0.34 - 0.65, whose TPOT is also low, 0.31 - 0.51); median TTFT ratio 3.21, TPOT 0.90 (TPOT
  inside but for those three). The ratio GROWS with the users in every configuration (Qwen3.5
  FP8 B300 0.5.10.post1 TP 4: 3.15 / 4.86 / 6.73 / 9.39 / 11.77 at 8 / 16 / 32 / 64 / 128; H200
  TP 8: 2.60 -> 7.69 at 8 -> 64; GLM-5 B200: 2.08 -> 5.50): a queue that kvplan builds and the
  runs did not.
- Where kvplan's TTFT goes (frozen replays with the step log, 3 rows; test_sgl8k64): SGLang
  0.5.9's defaults on a card of >= 160 GiB give a chunk and input budget of 16,384, so
  add_one_req takes ONE 8,192-token prompt a step (kvplan.engines.sglang.options
  MAX_PREFILL_TOKENS; server_args.py 0.5.9:976-990 the chunk by GPU memory, 8,192 on H200).
  Qwen3.5 FP8 B200 TP 4, 16 users: 48 prefill steps of 8,192 tokens at 266.8 ms each (the GPU
  76.5 ms: experts 38.2, gated-delta-net 13.8, TP all-reduce 13.4; the eager launches 2,840 ops
  x 67 us = 190.3 ms, kvplan.perf.efficiency PREFILL_LAUNCH_FIT), 3,069 decode steps of 12.0 ms;
  each round's 16 prompts arrive together (the fixed lengths keep the users in step: SGLang runs
  prefills first, so all decode together and finish together) and the k-th waits k prefills:
  TTFTs 267, 534, ..., 4,269 ms, mean 17 / 2 x 266.8 = 2,267.8 (measured 1,190.0). Qwen3.5 FP8
  B300 0.5.10.post1 TP 4, 32 users: the same step (266.1 ms; the piecewise prefill graphs are
  off under the flashinfer_trtllm MoE runner, server_args.py 0.5.10.post1:2722-2731,
  kvplan.engines.sglang.prefill_graph, and the script's --enable-symm-mem, :1078-1139), mean 33
  / 2 x 266.1 = 4,391 (measured 652). GLM-5 FP8 B200 TP 8, 16 users: 342.3 ms a step (2,702
  launches, 181.0 ms), 8.5 x 342.3 = 2,909.5 (measured 939.8). The prefill step itself is not
  the excess: under the harness below the same step gives 0.88 - 1.09 of the 0.5.10.post1 rows.
  aiconfigurator's B200 SGLang 0.5.9 kernel tables (moe, gdn, context_attention parquet at
  095f58a51) were not compared: no parquet reader on this host (they would price the 76.5 ms,
  not the 190.3).
- How the rows were measured (tests.benches.aiconfig_harness.HARNESS, not repeated):
  InferenceX's client, 10 x C prompts with lengths uniform in [0.8, 1] x ISL / OSL,
  --ignore-eos, every request in the mean TTFT (the start-up burst included); the scripts
  (SCRIPTS) pass --disable-radix-cache and, on B200 0.5.9, chunk and input budgets of 32,768 and
  --scheduler-recv-interval 10 / 30. The spread lengths break the lockstep.
- SGLang's scheduler, read at 0.5.9 and 0.5.10.post1 (sdists): mixed chunks are off by default
  and in every script here; the new-token ratio does not bind (pools of millions of tokens); the
  chunk size follows GPU memory as kvplan has it. ONE code-following difference, rule 4 of
  kvplan.analysis.simulate.sglang_scheduler (RULE_COMMIT): with the radix cache disabled, a
  request sent with ignore_eos is admitted by PrefillAdder.add_one_req_ignore_eos
  (schedule_policy.py 0.5.9:731 `if req.sampling_params.ignore_eos and getattr(self.tree_cache,
  "disable", True)`; ChunkCache.disable is always True, mem_cache/chunk_cache.py 0.5.9:44-49,
  taken with --disable-radix-cache and chunked prefill on, managers/scheduler.py 0.5.9:677-690),
  which has no refusal at the input budget left: two 8,192-token prompts a 16,384 step, four at
  32,768 (three by add_one_req), the chunk filled with the last prompt cut. Opt-in
  (SglangOptionsSim.ignore_eos: the client's flag), so no frozen replay moves.
- The counterfactual (`harness`, each configuration's first row, mean TTFT / measured, the
  medians over configurations; run once after RULE_COMMIT, 06:09 UTC): all 47, frozen 3.22 ->
  harness at the engine's defaults 0.57 -> + the script's flags 0.61 -> + rule 4 0.61 (TPOT
  0.97); 8 - 16 users (25) 2.60 -> 0.59 -> 0.66 -> 0.66; 32 - 128 users (22) 4.94 -> 0.56 ->
  0.55 -> 0.55. So the class's 3x is the bench's fixed lengths (aiconfig_harness_replay's
  mechanism, as aggmiss63 guessed), not a scheduler rule: under the harness kvplan falls BELOW
  the measured. Rule 4 moves no configuration by more than 0.03 (Qwen3.5 FP8 B300 0.5.10.post1
  at 128 users, 1.09 -> 1.06; the spread lengths rarely queue two prompts; it binds in the
  fixed-length bench only, whose engine defaults keep the radix cache on). By part: Qwen3.5 on
  0.5.10.post1 (B300 FP8 / BF16, its own scripts) 0.87 - 1.06, inside; Qwen3.5 FP8 on 0.5.9
  (B200, and B300 at the B200 script, assumed) 0.39 - 0.75, TTFT low though the same step prices
  the 0.5.10.post1 rows well: the measured 0.5.9 TTFT is 2.6x the 0.5.10.post1 one on the same
  B300 TP 4 at 64 users (2,419.8 vs 921.4 ms) at a like TPOT (27.69 vs 26.28), which no rule of
  kvplan's tells apart (both eager, kvplan's 8,192-token step the same 266 ms; the 0.5.9
  script's recv interval 30 is simulated); GLM-5 (the B200 script of 2026-04-03, assumed) 0.48 -
  0.68; H200 (no recv interval; the script's 16,384 chunk over the H200 default of 8,192) 0.69 -
  0.72, from 0.80 - 0.97 at the defaults; the three DeepSeek-V3 B300 TP 4 rows 0.13 (TPOT 0.34 -
  0.53: these runs are slow at every step, not read).
- Other SGLang held-out sets: prospective52, 59 and 61 replay every run with the radix cache on
  (SGLang's default; their data files and runners say so) and without ignore_eos, so rule 4
  cannot apply: before = after by construction, not re-run.
Left: the 0.5.9 vs 0.5.10.post1 prefill difference at the same flags; kvplan's eager launch
price (67 us an op, fitted on DeepSeek H200 prefills) on Blackwell, which is 71 % of the
8,192-token step here.

The flags (SemiAnalysisAI/InferenceX, benchmarks/single_node/, the last commit touching the
script at or before the row's `measured=` date unless said): SCRIPTS. Taken: --chunked-prefill-
size, --max-prefill-tokens, --max-running-requests, --mem-fraction-static, --kv-cache-dtype
fp8_e4m3, --disable-radix-cache (every script here passes it), --scheduler-recv-interval, and the
client's --ignore-eos (benchmarks/benchmark_lib.sh, aiconfig_harness.HARNESS). Not taken (no
switch in kvplan's cost model): --attention-backend, --moe-runner-backend, --enable-symm-mem,
--enable-flashinfer-allreduce-fusion, --cuda-graph-max-bs, --mamba-ssm-dtype, --stream-interval
(does not delay the first token, aiconfig_sglang_flags).

Run: python -m tests.benches.sgl8k64 (the class from the page, about a second);
`python -m tests.benches.sgl8k64 harness` adds the counterfactual (each configuration once;
about 20 minutes wall on the loaded shared host at sgl8k64).
"""

from __future__ import annotations

import statistics
import sys
from collections import defaultdict
from dataclasses import dataclass

from kvplan._util.errors import KvplanError
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.run import setup, simulate
from kvplan.analysis.simulate.sglang_scheduler import SglangOptionsSim
from kvplan.engines.base import Engine
from tests.benches import (
    aggmiss63,
    aiconfig_harness_replay,
    aiconfig_nightly,
    aiconfig_sglang_flags,
)
from tests.benches import aiconfig_agg_runs as agg
from tests.benches.aiconfig_sglang_flags import ScriptFlags
from tests.benches.disagg_rows import stated_concurrency

RULE_COMMIT = "60fedc1c"  # sglang_scheduler rule 4, frozen before `harness` was run
ISL = 8192
MIN_USERS = 8
INFERENCEX = "SemiAnalysisAI/InferenceX"


def class_rows(rows: list[aggmiss63.PageRow]) -> list[aggmiss63.PageRow]:
    """The class: held-out SGLang rows at ISL 8,192 and >= 8 users."""
    return [r for r in rows if r.split == aggmiss63.HELD_OUT and r.backend == "sglang"
            and r.isl == ISL and r.concurrency >= MIN_USERS]


@dataclass(frozen=True)
class Script:
    """One script's flags as a function of the concurrency (None: the script is not known)."""

    source: str
    chunk: int
    max_prefill: int
    running: int | None  # None: the concurrency (--max-running-requests $CONC)
    mem_fraction: float
    kv_fp8: bool
    recv: tuple[int, int]  # (below 16 users, from 16): 1 where not passed

    def flags(self, conc: int) -> ScriptFlags:
        return ScriptFlags(source=self.source, chunked_prefill_size=self.chunk,
                           max_prefill_tokens=self.max_prefill,
                           max_running_requests=self.running or conc,
                           mem_fraction_static=self.mem_fraction, kv_fp8=self.kv_fp8,
                           recv_interval=self.recv[conc >= 16])


_QWEN_B200 = Script(f"{INFERENCEX} qwen3.5_fp8_b200.sh at 64c20b6b5 (2026-03-11):31-42,56-60",
                    32768, 32768, 128, 0.82, True, (10, 30))
# (model, precision, GPU, release) -> the script; `ASSUMED` marks a script read at a date other
# than the row's (none existed for that GPU then).
SCRIPTS: dict[tuple[str, str, str, str], Script] = {
    ("Qwen3.5-397B-A17B", "fp8", "b200_sxm", "0.5.9"): _QWEN_B200,
    ("Qwen3.5-397B-A17B", "fp8", "h200_sxm", "0.5.9"): Script(
        f"{INFERENCEX} qwen3.5_fp8_h200.sh at 2116fc435 (2026-03-02):38-49", 16384, 16384, 128,
        0.8, True, (1, 1)),
    ("Qwen3.5-397B-A17B", "fp8", "b300_sxm", "0.5.10.post1"): Script(
        f"{INFERENCEX} qwen3.5_fp8_b300.sh at c0f62a2ef (2026-04-17):36-51", 16384, 16384, None,
        0.8, True, (10, 10)),
    ("Qwen3.5-397B-A17B", "bf16", "b300_sxm", "0.5.10.post1"): Script(
        f"{INFERENCEX} qwen3.5_bf16_b300.sh at 77c8b9657 (2026-04-17):31-42,56-62", 32768,
        32768, 128, 0.82, False, (10, 30)),
    # The B300 0.5.9 rows (measured 2026-04-03) predate every B300 script: the B200 one.
    ("Qwen3.5-397B-A17B", "fp8", "b300_sxm", "0.5.9"): _QWEN_B200,
    # GLM-5 on B200 (measured 2026-03-20): the script reached main on 2026-04-03 (800f57aaf,
    # :43-56); the earlier one (f991b9639, 2026-02-11, another image) ran EAGLE. B300 as B200.
    ("GLM-5", "fp8", "b200_sxm", "nightly-dev"): Script(
        f"{INFERENCEX} glm5_fp8_b200.sh at 800f57aaf (2026-04-03):43-56", 32768, 32768, None,
        0.85, True, (1, 1)),
    ("GLM-5", "fp8", "b300_sxm", "nightly-dev"): Script(
        f"{INFERENCEX} glm5_fp8_b200.sh at 800f57aaf (2026-04-03):43-56", 32768, 32768, None,
        0.85, True, (1, 1)),
}
ASSUMED = frozenset({("Qwen3.5-397B-A17B", "fp8", "b300_sxm", "0.5.9"),
                     ("GLM-5", "fp8", "b200_sxm", "nightly-dev"),
                     ("GLM-5", "fp8", "b300_sxm", "nightly-dev")})


def script_flags(row: dict[str, str], page: aggmiss63.PageRow) -> ScriptFlags | None:
    """The flags of the row's script (DeepSeek: aiconfig_sglang_flags'), or None."""
    if row["model_path"].startswith("deepseek-ai/"):
        got = aiconfig_sglang_flags.script_flags(row)
        return None if isinstance(got, str) else got
    script = SCRIPTS.get((page.model, page.precision, page.system, page.version))
    return None if script is None else script.flags(page.concurrency)


def release_of(row: dict[str, str]) -> str:
    """The release the row is replayed at: its own, or a nightly's first candidate."""
    version = agg.release(row)
    if version is not None:
        return version
    build = aiconfig_nightly.nightly_of(row)
    assert build is not None and build.candidates
    return build.candidates[0]


def harness(row: dict[str, str], flags: ScriptFlags | None, ignore_eos: bool
            ) -> tuple[float, float] | None:
    """(mean TTFT, mean TPOT) in ms over every request of InferenceX's workload for the row
    (aiconfig_harness_replay.workload) at `flags` (None: the engine's defaults) with the
    ignore-EOS admission on or off; None where kvplan refuses."""
    conc = stated_concurrency(row)
    assert conc is not None
    isl, osl = int(row["isl"]), int(row["osl"])
    config, kv_dtype, _ = agg.AGG_MODELS[(row["model_path"], row["precision"])]
    spec = agg._spec(config)
    tp, ep = agg.layout(row)[0], agg.layout(row)[3]
    extra: dict[str, object] = {}
    opts = None
    if flags is not None:
        tp, ep = aiconfig_sglang_flags.real_layout(row)
        extra = {"mem_fraction": flags.mem_fraction_static, "disable_radix_cache": True}
        kv_dtype = "fp8" if flags.kv_fp8 else kv_dtype
        opts = SglangOptionsSim(chunked_prefill_size=flags.chunked_prefill_size,
                                max_prefill_tokens=flags.max_prefill_tokens,
                                scheduler_recv_interval=flags.recv_interval,
                                ignore_eos=ignore_eos)
    try:
        inputs = estimate_inputs(spec, context=isl + osl + agg.CONTEXT_PAD, kv_dtype=kv_dtype,
                                 engine=Engine("sglang"), gpu=agg.GPUS[row["system"]], tp=tp,
                                 engine_version=release_of(row), ep=ep, **extra)
        sim, _ = setup(inputs.spec, inputs, sglang=opts,
                       max_num_seqs=None if flags is None else flags.max_running_requests)
        done = simulate(sim, aiconfig_harness_replay.workload(isl, osl, conc),
                        concurrency=conc).finished
    except KvplanError:
        return None
    ttft = statistics.fmean((r.first_token_s - r.sent_s) * 1e3 for r in done)
    tpot = statistics.fmean((r.finish_s - r.first_token_s) / (r.output_len - 1) * 1e3
                            for r in done if r.output_len > 1)
    return ttft, tpot


def _config(p: aggmiss63.PageRow, row: dict[str, str]) -> tuple[str, ...]:
    return (p.model, p.precision, p.system, p.version, row["tp_size"], row["moe_ep_size"],
            str(p.concurrency))


def report(rows: list[aggmiss63.PageRow]) -> None:
    """The class by configuration, from the page."""
    frozen = aggmiss63.frozen_rows()
    part = class_rows(rows)
    print(f"Class: {len(part)} rows; TTFT high {sum(r.ttft == 'high' for r in part)}, low "
          f"{sum(r.ttft == 'low' for r in part)}; median TTFT ratio "
          f"{statistics.median(r.ttft_ratio for r in part):.2f}, TPOT "
          f"{statistics.median(r.tpot_ratio for r in part):.2f}.\n")
    groups: dict[tuple[str, ...], list[aggmiss63.PageRow]] = defaultdict(list)
    for r in part:
        groups[_config(r, frozen[r.id])].append(r)
    print("| model | precision | GPU | release | TP | EP | users | rows | TTFT ratio | "
          "TPOT ratio |")
    print("|---|---|---|---|---:|---:|---:|---:|---:|---:|")
    for key in sorted(groups, key=lambda k: (*k[:6], int(k[6]))):
        g = groups[key]
        print("| " + " | ".join(key) + f" | {len(g)} | {g[0].ttft_ratio:.2f} | "
              f"{g[0].tpot_ratio:.2f} |")


def counterfactual(rows: list[aggmiss63.PageRow]) -> None:
    """Each configuration of the class once (the first row of it): measured, the page's frozen
    ratio, and mean TTFT / measured under the harness at the defaults, at the script's flags,
    and at the flags with the ignore-EOS admission (its TPOT ratio beside)."""
    frozen = aggmiss63.frozen_rows()
    seen: dict[tuple[str, ...], aggmiss63.PageRow] = {}
    for r in class_rows(rows):
        seen.setdefault(_config(r, frozen[r.id]), r)
    print("\n| configuration | measured TTFT / TPOT ms | frozen | harness, defaults | + script "
          "flags | + ignore-EOS admission (TPOT) | script |")
    print("|---|---|---:|---:|---:|---:|---|")
    out: list[tuple[tuple[str, ...], float, list[float | None]]] = []
    for key in sorted(seen, key=lambda k: (*k[:6], int(k[6]))):
        p = seen[key]
        row = frozen[p.id]
        m_ttft, m_tpot = float(row["silicon_ttft_ms"]), float(row["silicon_tpot_ms"])
        flags = script_flags(row, p)
        got: list[float | None] = [p.ttft_ratio]
        cells = [harness(row, None, False)]
        cells += [None, None] if flags is None else [harness(row, flags, False),
                                                     harness(row, flags, True)]
        got += [None if c is None else c[0] / m_ttft for c in cells]
        tpot = None if cells[2] is None else cells[2][1] / m_tpot
        out.append((key, m_ttft, got + [tpot]))
        assumed = (p.model, p.precision, p.system, p.version) in ASSUMED
        print("| " + " ".join(key) + f" | {m_ttft:,.1f} / {m_tpot:.2f} | "
              + " | ".join("-" if x is None else f"{x:.2f}" for x in got[:3])
              + f" | {'-' if got[3] is None else f'{got[3]:.2f}'} "
              f"({'-' if tpot is None else f'{tpot:.2f}'}) | "
              f"{'none' if flags is None else flags.source.split(' ')[1]}"
              f"{' (assumed)' if assumed else ''} |", flush=True)
    print("\n| part | configurations | frozen | harness, defaults | + script flags | "
          "+ ignore-EOS admission | its TPOT |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    parts = {"all": out, "users 8-16": [x for x in out if int(x[0][6]) <= 16],
             "users 32-128": [x for x in out if int(x[0][6]) >= 32]}
    for name, part in parts.items():
        cells = []
        for i in range(5):
            vals = [g[i] for _, _, g in part if g[i] is not None and g[3] is not None]
            cells.append(f"{statistics.median(vals):.2f}" if vals else "-")
        n = sum(g[3] is not None for _, _, g in part)
        print(f"| {name} | {n} | " + " | ".join(cells) + " |")


def main(argv: list[str]) -> None:
    rows = aggmiss63.page_rows(aggmiss63.PAGE.read_text(), aggmiss63.frozen_rows())
    report(rows)
    if "harness" in argv:
        counterfactual(rows)


if __name__ == "__main__":
    main(sys.argv[1:])
