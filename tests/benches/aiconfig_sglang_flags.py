"""A COUNTERFACTUAL for aiconfigurator's SGLang DeepSeek aggregated rows (issue 30, sglmoe56):
the rows replayed under InferenceX's workload (tests.benches.aiconfig_harness_replay) and at the
server flags InferenceX's script for the row states at the row's date, not the frozen bench's
engine defaults and fixed lengths. Written after the frozen replays' TTFT was seen (so nothing
here is blind); nothing fitted. It asks how much of the frozen rows' TTFT miss is the bench's
workload and the scripts' flags, and what SGLang's --scheduler-recv-interval (read from SGLang's
code: kvplan.analysis.simulate.sglang_scheduler rule 3, written after these rows were read:
fitted_rows.AGG_RECV_SHAPED) adds.

The rows: those of tests.benches.aiconfig_agg_runs that are SGLang DeepSeek-V3 / R1, that the
frozen bench replays (or replayed until sglmoe56: the 21 below) or kvplan refuses at replay
(10 B200 FP8 TP 4 rows: no KV pool at the default memory fraction), and whose provenance is
InferenceX (all of them, tests.benches.aiconfig_harness.provenance), less the one SGLang 0.5.6
row (measured 2025-12-31: its script, benchmarks/dsr1_fp8_b200_docker.sh then, was not read).

The flags (SemiAnalysisAI/InferenceX; the last commit touching each script before the row's
`measured=` date): SCRIPTS. Taken: --chunked-prefill-size, --max-prefill-tokens,
--max-running-requests, --mem-fraction-static, --kv-cache-dtype fp8_e4m3 (kvplan's "fp8"),
--disable-radix-cache, --scheduler-recv-interval. Not taken (kvplan's cost model has no switch
for them): --attention-backend, --moe-runner-backend, --enable-flashinfer-allreduce-fusion,
--enable-symm-mem, --cuda-graph-max-bs; --stream-interval does not delay the first token
(scheduler_output_processor_mixin.py 0.5.9:969-978: `len(output_ids) % interval == 1`).

The layout: the row's, but for the B300 NVFP4 rows written as tp_size m x m with MoE TP m, EP m
(cohort moehybrid55's 21 rows, refused by the frozen bench since sglmoe56 for this reason,
aiconfig_agg_runs.INFERENCEX_TP_EP): InferenceX's config for them, dsr1-fp4-b300-sglang
(.github/configs/nvidia-master.yaml at 9ebeafb4e, the commit that added the config and its
script on 2026-04-17, the rows' date), runs `{ tp: 4, ep: 4, conc 4-128 }` and
`{ tp: 8, ep: 8, conc 4-16 }` at 8,192 / 1,024 (both at 1,024 / 1,024 from 4 to 128), which is
every such row's (MoE TP, EP, concurrency): replayed here at TP m, EP m (`real_layout`).

Run: python -m tests.benches.aiconfig_sglang_flags (22 minutes wall, one process on the loaded
shared 2-core host at sglmoe56; prints the table by ISL x concurrency and by GPU / layout).
"""

from __future__ import annotations

import re
import statistics
import sys
from collections import defaultdict
from dataclasses import dataclass

from kvplan._util.errors import KvplanError
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.run import setup, simulate
from kvplan.analysis.simulate.sglang_scheduler import SglangOptionsSim
from kvplan.engines.base import Engine
from tests.benches import aiconfig_agg_runs as agg
from tests.benches import aiconfig_harness, aiconfig_harness_replay
from tests.benches.disagg_rows import PREFIX, stated_concurrency
from tests.benches.fitted_rows import Shaped

INFERENCEX = "SemiAnalysisAI/InferenceX"
RECV_RULE_COMMIT = "20138f6e"  # kvplan.analysis.simulate.sglang_scheduler rule 3


@dataclass(frozen=True, kw_only=True)
class ScriptFlags:
    """The SGLang server flags one InferenceX script passes for one run."""

    source: str  # script at commit, lines
    chunked_prefill_size: int
    max_prefill_tokens: int | None  # None: not passed (SGLang's 16,384)
    max_running_requests: int
    mem_fraction_static: float
    kv_fp8: bool  # --kv-cache-dtype fp8_e4m3
    recv_interval: int  # --scheduler-recv-interval (1: not passed)


# (system, precision) -> (script, commit): the last commit touching the script before the rows'
# dates (2026-03-25 for B200 / H200, 2026-04-17 for B300).
SCRIPTS = {
    ("b200_sxm", "fp8"): ("benchmarks/single_node/dsr1_fp8_b200.sh", "64c20b6b5"),
    ("b200_sxm", "fp4"): ("benchmarks/single_node/dsr1_fp4_b200.sh", "64c20b6b5"),
    ("h200_sxm", "fp8"): ("benchmarks/single_node/dsr1_fp8_h200.sh", "41aff0afc"),
    ("b300_sxm", "fp8"): ("benchmarks/single_node/dsr1_fp8_b300.sh", "5b302f147"),
    ("b300_sxm", "fp4"): ("benchmarks/single_node/dsr1_fp4_b300.sh", "9ebeafb4e"),
}


def real_layout(row: dict[str, str]) -> tuple[int, int]:
    """(TP, EP) the run used: the row's, but TP m, EP m for a B300 NVFP4 row written as tp_size
    m x m (module docstring)."""
    tp, _, moe_tp, ep = agg.layout(row)
    if row["system"] == "b300_sxm" and row["precision"] == "fp4" and 1 < ep < tp:
        assert moe_tp == ep and tp == moe_tp * ep, row["id"]
        return moe_tp, ep
    return tp, ep


def script_flags(row: dict[str, str]) -> ScriptFlags | str:
    """The flags the row's script passes at (TP, concurrency, ISL, OSL), or why none."""
    script, commit = SCRIPTS[(row["system"], row["precision"])]
    tp, _ = real_layout(row)
    conc = stated_concurrency(row) or 0
    isl, osl = int(row["isl"]), int(row["osl"])
    where = f"{INFERENCEX} {script} at {commit}"
    if row["precision"] == "fp4":
        # dsr1_fp4_b200.sh:27-42 (dsr1_fp4_b300.sh:31-51): recv 30 from concurrency 16, else
        # 10; --max-running-requests 256 --mem-fraction-static 0.85 --kv-cache-dtype fp8_e4m3
        # --chunked-prefill-size 16384, no --max-prefill-tokens.
        return ScriptFlags(source=f"{where}, the launch line", chunked_prefill_size=16384,
                           max_prefill_tokens=None, max_running_requests=256,
                           mem_fraction_static=0.85, kv_fp8=True,
                           recv_interval=30 if conc >= 16 else 10)
    if row["system"] == "h200_sxm":
        # dsr1_fp8_h200.sh:30-44: --max-running-requests 512 at 1,024 / 1,024, else 256;
        # --chunked-prefill-size 32768 --max-prefill-tokens 32768 --mem-fraction-static 0.82;
        # no --kv-cache-dtype, no --scheduler-recv-interval.
        return ScriptFlags(source=f"{where}:30-44", chunked_prefill_size=32768,
                           max_prefill_tokens=32768,
                           max_running_requests=512 if (isl, osl) == (1024, 1024) else 256,
                           mem_fraction_static=0.82, kv_fp8=False, recv_interval=1)
    # dsr1_fp8_b200.sh:29-59 (dsr1_fp8_b300.sh:33-63): TP 8: recv 30 from concurrency 16, else
    # 10; 128 running, 0.82, chunk and input budget 32,768. TP 4 (8,192 / 1,024 only, else the
    # script exits): 32 running, 0.95, 8,192 and 8,192, recv 10. --kv-cache-dtype fp8_e4m3.
    if tp == 8:
        return ScriptFlags(source=where, chunked_prefill_size=32768, max_prefill_tokens=32768,
                           max_running_requests=128, mem_fraction_static=0.82, kv_fp8=True,
                           recv_interval=30 if conc >= 16 else 10)
    if tp == 4 and (isl, osl) == (8192, 1024):
        return ScriptFlags(source=where, chunked_prefill_size=8192, max_prefill_tokens=8192,
                           max_running_requests=32, mem_fraction_static=0.95, kv_fp8=True,
                           recv_interval=10)
    return f"{script} refuses TP {tp} at {isl} / {osl}"


def _config_layout(row: dict[str, str]) -> bool:
    """Whether the frozen bench refuses the row only as a TP m EP m run that InferenceX's
    config names (aiconfig_agg_runs.INFERENCEX_TP_EP; replayed here at that layout)."""
    key = (row["backend"], row["backend_version"], row["model_path"], row["system"],
           row["precision"])
    return key in agg.INFERENCEX_TP_EP and agg.tp_times_ep(row)


def studied() -> list[dict[str, str]]:
    """The module docstring's rows, in file order."""
    h = aiconfig_harness
    return [r for r in agg.rows()
            if r["backend"] == "sglang" and r["model_path"].startswith("deepseek-ai/DeepSeek-")
            and (not agg.why_not(r) or _config_layout(r))
            and h.provenance(r) == h.INFERENCEX_ROWS and agg.release(r) != "0.5.6"]


def recv_shaped() -> Shaped:
    """The rows that shaped SGLang's recv-interval rule in the simulator: `studied()`, whose
    TTFT under InferenceX's workload at the engine's defaults (the harness replay) came out
    below the measured, more so with concurrency, before the rule was written from SGLang's
    code. Not a cost-model rule and no frozen replay moves with it (the interval's default is
    1), so it is kept apart from fitted_rows.SHAPED_BY, as fitted_rows.SIM_LAUNCH_SHAPED is;
    only this counterfactual reads it."""
    return Shaped(commit=RECV_RULE_COMMIT,
                  rule="SGLang's --scheduler-recv-interval in `simulate --engine sglang` (the "
                       "requests sent taken every N decode steps, at once after an extend step: "
                       "SGLang 0.5.9 managers/scheduler.py:1222-1227, "
                       "scheduler_recv_skipper.py, environ.py:232-235), written after these "
                       "rows' TTFT under InferenceX's workload at the engine's defaults came "
                       "out a median 0.69 of the measured (0.27 at 8,192 / 1,024, "
                       "concurrency 128)",
                  rows=tuple(PREFIX + r["id"] for r in studied()))


def harness_ttft(row: dict[str, str], flags: ScriptFlags | None, recv: bool = True
                 ) -> tuple[float, float] | None:
    """(mean, median) TTFT in ms over every request of InferenceX's workload for the row, at
    `flags` (None: the engine's defaults, the row's layout, as the frozen bench) with or without
    their recv interval; None where kvplan refuses."""
    conc = stated_concurrency(row)
    assert conc is not None
    isl, osl = int(row["isl"]), int(row["osl"])
    config, kv_dtype, _ = agg.AGG_MODELS[(row["model_path"], row["precision"])]
    spec = agg._spec(config)
    tp, ep = real_layout(row) if flags is not None else (agg.layout(row)[0], agg.layout(row)[3])
    extra: dict[str, object] = {}
    opts = None
    if flags is not None:
        extra = {"mem_fraction": flags.mem_fraction_static, "disable_radix_cache": True}
        kv_dtype = "fp8" if flags.kv_fp8 else kv_dtype
        opts = SglangOptionsSim(chunked_prefill_size=flags.chunked_prefill_size,
                                max_prefill_tokens=flags.max_prefill_tokens,
                                scheduler_recv_interval=flags.recv_interval if recv else 1)
    try:
        inputs = estimate_inputs(spec, context=isl + osl + agg.CONTEXT_PAD, kv_dtype=kv_dtype,
                                 engine=Engine("sglang"), gpu=agg.GPUS[row["system"]], tp=tp,
                                 engine_version=agg.release(row), ep=ep, **extra)
        sim, _ = setup(inputs.spec, inputs, sglang=opts,
                       max_num_seqs=None if flags is None else flags.max_running_requests)
        result = simulate(sim, aiconfig_harness_replay.workload(isl, osl, conc),
                          concurrency=conc)
    except KvplanError:
        return None
    ttfts = [(r.first_token_s - r.sent_s) * 1e3 for r in result.finished]
    return statistics.fmean(ttfts), statistics.median(ttfts)


def _key_isl_conc(row: dict[str, str]) -> str:
    return f"ISL {int(row['isl']):,}, conc. {stated_concurrency(row)}"


def _key_host(row: dict[str, str]) -> str:
    tp, ep = real_layout(row)
    return (f"{row['system']} {row['precision']} SGLang {row['backend_version']} TP{tp}"
            + (f" EP{ep}" if ep > 1 else ""))


def main() -> None:
    lines: list[tuple[dict[str, str], float, list[float | None]]] = []
    for row in studied():
        flags = script_flags(row)
        got: list[float | None] = [agg.replay(row).ttft_ms]  # None: the frozen bench refuses
        default = harness_ttft(row, None)
        got.append(None if default is None else default[0])
        if isinstance(flags, str):
            got += [None, None]
        else:
            for recv in (False, True):
                r = harness_ttft(row, flags, recv)
                got.append(None if r is None else r[0])
        lines.append((row, float(row["silicon_ttft_ms"]), got))
        print(row["id"], *(f"{x:.1f}" if x is not None else "-" for x in got),
              file=sys.stderr, flush=True)
    names = ("frozen bench", "harness workload, defaults", "+ script flags, no recv interval",
             "+ recv interval")
    print("| rows | n | " + " | ".join(f"{n}: median ratio (median abs err)" for n in names)
          + " |")
    print("|---|---:|" + "---:|" * len(names))
    for title, key in (("all", lambda r: "all"), ("", _key_isl_conc), ("", _key_host)):
        groups: dict[str, list[tuple[float, list[float | None]]]] = defaultdict(list)
        for row, measured, got in lines:
            groups[key(row)].append((measured, got))
        for name in sorted(groups, key=_natural):
            part = groups[name]
            cells = []
            for i in range(len(names)):
                ratios = [g[i] / m for m, g in part if g[i] is not None]
                cells.append(f"{statistics.median(ratios):.2f} "
                             f"({statistics.median(abs(x - 1) for x in ratios):.1%}; "
                             f"n {len(ratios)})" if ratios else "-")
            print(f"| {title or name} | {len(part)} | " + " | ".join(cells) + " |")


def _natural(text: str) -> list[object]:
    return [int(t.replace(",", "")) if t.replace(",", "").isdigit() else t
            for t in re.split(r"(\d[\d,]*)", text)]


if __name__ == "__main__":
    main()
