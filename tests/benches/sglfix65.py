"""sglfix65 (issue 30): SGLang's low-load TTFT on Blackwell, kvplan's ~200 ms part that does not
grow with the prompt (aggfaith64's FINDING, part 1). A FINDING: no rule is changed.

The rows (`rows`): aggfaith64's pool (held-out InferenceX rows at concurrency <= 4, replayed
with CLIENT_WORKLOAD on) filtered to SGLang on B200 / B300. READ: the four rows decomposed
request by request (`decompose`), one server each of Qwen3.5-397B-A17B FP8 (TP 4) and
DeepSeek-V3 FP8 (TP 8), SGLang 0.5.9 on B200, at ISL 1,024 and 8,192: they were read before
the arms below ran, so they are SHAPED for anything said of them; the other rows are held out.

Arms (`run ARM OUT.jsonl`): 'base', the bench's replay as it is; 'nolaunch', the same with
SGLang's eager prefill launch time set to 0 (Efficiency.prefill_launch_s, a counterfactual: it
isolates the GPU part of kvplan's TTFT, so the measured TTFT can be regressed on it).

FINDING (`FINDING` below; measured after this module's selection and arms were written and
committed to nothing; nothing fitted, no rule changed).

Run: python -m tests.benches.sglfix65 decompose | run ARM OUT.jsonl (ARM in ARMS; 59 rows,
about 30 s of CPU an arm) | report BASE.jsonl NOLAUNCH.jsonl [SCRIPT.jsonl
SCRIPT_NOLAUNCH.jsonl]
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

from tests.benches import aggfaith64
from tests.benches import aiconfig_agg_client as client
from tests.benches import aiconfig_agg_runs as agg
from tests.benches.b200ttft64 import fit
from tests.benches.disagg_rows import stated_concurrency

FINDING = (
    "sglfix65 (issue 30), no rule changed. (1) WHICH PART (`decompose`, the four READ rows, "
    "mean ms a request under the client's workload): Qwen3.5-397B FP8 B200 TP 4 SGLang 0.5.9, "
    "1,024 / 8,192 in: intake 0 / 0 (no --frontend), waiting for the running step 14.3 / 14.3, "
    "prefill eager launch 190.3 / 199.8, prefill GPU 28.9 / 82.3, output path 0 / 0; TTFT "
    "233.4 / 296.4 (measured 338.3 / 608.9). DeepSeek-V3 FP8 B200 TP 8 0.5.9: 0 / 0, 18.5 / "
    "18.5, 133.9 / 148.2, 31.5 / 141.3, 0 / 0; 183.9 / 308.0 (measured 183.2 / 478.6). The "
    "fixed part is the eager prefill launch (MixedStepCost.launch_seconds): 2,840 ops x 67 us "
    "= 190.3 ms a prefill step (Qwen3.5), 1,986 x 67 us = 133.1 ms (DeepSeek-V3; 2,107 ops = "
    "141.2 ms at 7,372 and 8,192, where kvplan.perf.engine_traits.fuses_allreduce_norm is "
    "off), PREFILL_LAUNCH_FIT's 67 us fitted on four "
    "H200 DeepSeek bench_one_batch prefills, summed with the GPU time. The GPU part of one "
    "7,372-token step: Qwen3.5 experts 34.4, gated-delta-net 12.4, TP all-reduce 12.2, "
    "attention 2.5; DeepSeek-V3 experts 46.5, all-reduce 39.4, attention 12.6, projections "
    "12.6. (2) IS IT REAL, the code (sglang 0.5.9 / 0.5.10.post1 PyPI sdists, python/sglang/"
    "srt/...): an extend batch runs eagerly at 0.5.9 (model_executor/cuda_graph_runner.py:276 "
    "captures ForwardMode.DECODE only; server_args.py:604 enable_piecewise_cuda_graph = "
    "False); at 0.5.10.post1 piecewise graphs are on by default (server_args.py:637) but off "
    "under the flashinfer_trtllm MoE runner (:2722-2731), which SM 10.0 sets by default for "
    "Qwen3.5 FP8 (0.5.9 server_args.py:1579-1599, 0.5.10.post1 :1952-1974) and DeepSeek-V3 "
    "FP8 (0.5.9 :1289-1310), and which the InferenceX scripts pass (qwen3.5_fp8_b200.sh, "
    "dsr1_fp8_b200.sh at 64c20b6b5: --moe-runner-backend flashinfer_trtllm). So every row "
    "here runs its prefill eagerly: the launch is real by the code; its SIZE (67 us an op, "
    "added to the GPU time) is a fit the code cannot check. No scheduler poll, sleep or JIT is "
    "charged per run; the one poll lag the code has, --scheduler-recv-interval "
    "(managers/scheduler.py 0.5.9:1222-1227, scheduler_recv_skipper.py; environ.py:232-235 "
    "weights: decode 1, an extend step 1000, so the poll after a prefill always receives), is "
    "passed by the B200 scripts (10 below 16 users) and already simulated by kvplan when given "
    "(the bench keeps the default 1). (3) THE ROWS (`report`, 50 rows, 9 refused alike; "
    "measured = a x kvplan + b; 'GPU part': the nolaunch arm, the launch priced at 0): "
    "pooled MLA held out (23) a 5.18 / b -811 ms, but three DeepSeek-V3 FP8 B300 0.5.10.post1 "
    "rows measure 2,050 ms at 4 users (ratio 0.15, slow TPOT too): without them (20) a 2.02 / "
    "b -200, and at ISL 1,024 (14) median ratio 0.98, measured = 1.48 x GPU part + 127 ms: the "
    "1,024-token rows hold a fixed part of about kvplan's launch (133 ms DeepSeek). MoE "
    "(Qwen3.5) held out (23): ratio 0.77 at 1,024, 0.69 at 8,192; by release Qwen3.5 FP8 "
    "0.5.9 (19 rows, 2 READ) 0.69 against 0.5.10.post1 FP8 1.02 (2) and BF16 1.13 (4) at the "
    "same kvplan step (both eager): the low 0.5.9 rows, not a Blackwell-wide fixed part, pull "
    "the pooled slope. At the scripts' flags (script arm: the recv interval, chunk 32,768, "
    "radix cache off, ignore-EOS) kvplan's 1,024-token TTFT rises by the poll lag: DeepSeek "
    "0.5.9 184 -> 249 ms (ratio 0.99 -> 1.29), Qwen3.5 0.5.9 233 -> 276 (0.69 -> 0.81), "
    "Qwen3.5 BF16 0.5.10.post1 1.13 -> 1.32. BY HOST (per row): at 1,024 tokens several B300 "
    "rows measure LESS than kvplan's launch alone: GLM-5 FP8 115 ms (launch 181), Qwen3.5 "
    "BF16 0.5.10.post1 TP 4 / 8 159 / 156 (166), Qwen3.5 FP8 0.5.9 TP 4 / 8 189 / 172 (190; "
    "the same release, script and layouts on B200 measure 338 / 305): there the launch as "
    "priced cannot be right ((measured - kvplan's GPU-part TTFT) / ops: 17 us GLM-5, 43 - 51 "
    "us Qwen3.5, against 67), while "
    "the B200 DeepSeek rows hold about all of it. So the fixed part is right in kind by the "
    "code, about right in size on the B200 DeepSeek rows, too large on B300 and too small on "
    "the B200 Qwen3.5 0.5.9 rows: it varies by host and release in opposite directions, so "
    "no one launch price fits (not refitted: a fitted constant, and nothing in SGLang's code "
    "sets a host's per-op time). The 50 rows hold 33 distinct measurements (rows repeat a "
    "measured TTFT to the last digit), so the fits above weigh some servers two or three "
    "times. What the pooled negative intercept reflects is the SLOPE: measured / kvplan "
    "falls from 0.98 (MLA) / 0.77 (MoE) at 1,024 to 0.64 / 0.69 at 8,192. Code read for it: "
    "the B200 chunk (server_args.py 0.5.9:976-990, 16,384 on >= 160 GiB; the scripts 32,768) "
    "holds one 8,192-token prompt whole, so the chunk does not explain it; the attention "
    "backend is the scripts' (trtllm_mha / trtllm_mla, and Qwen3.5's default moves from triton "
    "at 0.5.9 :1600-1605 to trtllm_mha at 0.5.10.post1 :1977-2005), a small op here (2.5 / 12.6 "
    "ms of the step). Kernel tables (aiconfigurator 095f58a51, SGLang 0.5.9 B200, tests/data): "
    "DeepSeek-V3 TP 8 at 8,192 / 1,024 tokens, kvplan / table: experts 51.7 / 76.0 and 14.9 / "
    "31.5 ms (the table's Triton fused MoE, not the flashinfer_trtllm runner served), TP "
    "all-reduce 43.6 / 47.5 and 6.3 / 11.6, MLA context 15.5 / 18.2 (128-head rows / 8) and "
    "0.24 / 0.88: at the tables the 8,192 step gains some 31 ms of the 170 ms the rows miss. "
    "Qwen3.5-397B's expert shape (512 experts, top-10) and its chunked gated-delta-rule "
    "prefill have no table (the gdn table times only conv1d in context). Left: the 8,192-token "
    "GPU slope on Blackwell (experts under flashinfer_trtllm, the GDN chunk kernel, a host "
    "cost that grows with the tokens), and why Qwen3.5 0.5.9 measures slower than "
    "0.5.10.post1 at the same flags' class.")


# (model_path, precision, release, system, layout) of the READ rows, at ISL 1,024 and 8,192.
READ = (("Qwen/Qwen3.5-397B-A17B", "fp8", "0.5.9", "b200_sxm", (4, 1, 4, 1)),
        ("deepseek-ai/DeepSeek-V3", "fp8", "0.5.9", "b200_sxm", (8, 1, 8, 1)))
READ_ISL = ("1024", "8192")


def rows() -> list[dict[str, str]]:
    """aggfaith64's pool, SGLang on Blackwell, file order."""
    return [r for r in aggfaith64.pool()
            if r["backend"] == "sglang" and aggfaith64.FAMILY[r["system"]] == "Blackwell"]


def read_rows() -> list[dict[str, str]]:
    """The first row (file order) of each READ server at each READ_ISL."""
    out = []
    for model, prec, version, system, lay in READ:
        for isl in READ_ISL:
            out.append(next(r for r in rows() if (r["model_path"], r["precision"],
                                                  r["backend_version"], r["system"], r["isl"])
                            == (model, prec, version, system, isl) and agg.layout(r) == lay))
    return out


@contextmanager
def no_launch() -> Iterator[None]:
    """SGLang's eager prefill launch priced at 0 in the simulator's step cost (counterfactual):
    engine_setups' engine_efficiency wrapped to return prefill_launch_s = 0."""
    from kvplan.analysis.simulate import engine_setups

    real = engine_setups.engine_efficiency

    def zero(*args, **kwargs):  # type: ignore[no-untyped-def]
        return replace(real(*args, **kwargs), prefill_launch_s=0.0)

    engine_setups.engine_efficiency = zero  # type: ignore[assignment]
    agg._setup.cache_clear()
    try:
        yield
    finally:
        engine_setups.engine_efficiency = real
        agg._setup.cache_clear()


def replay(row: dict[str, str]) -> tuple[object, object]:
    """(the row's SimSetup, its client-workload run with the step timeline), at its release."""
    from kvplan.analysis.simulate.run import simulate

    version = agg.release(row)
    assert version is not None, row["id"]
    sim = agg.row_setup(row, version)
    return sim, simulate(sim, client.requests(row) or [], concurrency=stated_concurrency(row),
                         timeline=True)


def split(sim: object, result: object) -> dict[str, float]:
    """Mean ms a request spends, sent -> first token: waiting for the engine to see it (the
    server stage; 0 without --frontend), for the running step(s) to end, in the step(s) that
    hold its prompt (split: eager launch / the rest), and after its last prefill step ends (the
    output path). The launch share of a prefill step is MixedStepCost.launch_seconds of its
    tokens."""
    from kvplan.analysis.simulate.run import replica_step_cost

    cost = replica_step_cost(sim)  # type: ignore[arg-type]
    steps = [rec for _, rec in result.timeline]  # type: ignore[attr-defined]
    parts: dict[str, list[float]] = defaultdict(list)
    for req in result.finished:  # type: ignore[attr-defined]
        own = [s for s in steps if s.start_s + s.seconds <= req.first_token_s + 1e-9
               and s.start_s + 1e-9 >= req.seen_s and s.tokens > s.running]
        # Its prefill steps: the last step ending at its first token, and the prefill steps
        # before it that started after it was seen while it waited (chunks of its prompt or of
        # others': counted as prefill time the request sat through).
        last = max(own, key=lambda s: s.start_s)
        pre = sum(s.seconds for s in own)
        launch = sum(cost.launch_seconds(s.tokens) for s in own)
        parts["intake"].append(req.seen_s - req.sent_s)
        parts["prefill launch"].append(launch)
        parts["prefill GPU"].append(pre - launch)
        parts["output"].append(req.first_token_s - (last.start_s + last.seconds))
        parts["waiting for steps"].append(req.first_token_s - req.seen_s - pre
                                          - parts["output"][-1])
        parts["TTFT"].append(req.first_token_s - req.sent_s)
    return {k: statistics.fmean(v) * 1e3 for k, v in parts.items()}


def decompose() -> None:
    from kvplan.analysis.simulate.run import replica_step_cost
    from kvplan.perf.roofline import step_time

    agg.CLIENT_WORKLOAD = True
    for row in read_rows():
        sim, result = replay(row)
        parts = split(sim, result)
        print(f"\n{agg.label(row)}: measured mean TTFT {float(row['silicon_ttft_ms']):,.1f} ms")
        print("  kvplan mean ms a request: " + ", ".join(f"{k} {v:,.1f}"
                                                         for k, v in parts.items()))
        cost = replica_step_cost(sim)  # type: ignore[arg-type]
        n = int(int(row["isl"]) * 0.9)  # the client's mean prompt
        st = step_time(cost.spec, cost.gpu, tokens=n, context=n, requests=1, phase="prefill",
                       logits=1, **cost._common)
        print(f"  one {n:,}-token prefill step, by op ms: " + ", ".join(
            f"{k} {v * 1e3:.2f}" for k, v in sorted(st.by_op.items(), key=lambda kv: -kv[1])))


def script_flags(row: dict[str, str]) -> object | None:
    """The flags the row's InferenceX script passes (sgl8k64.SCRIPTS; DeepSeek:
    aiconfig_sglang_flags.script_flags), or None where no script is known."""
    from tests.benches import aiconfig_sglang_flags, sgl8k64

    if row["model_path"].startswith("deepseek-ai/"):
        got = aiconfig_sglang_flags.script_flags(row)
        return None if isinstance(got, str) else got
    script = sgl8k64.SCRIPTS.get((row["model_path"].split("/")[-1], row["precision"],
                                  row["system"], row["backend_version"]))
    return None if script is None else script.flags(stated_concurrency(row) or 0)


def one(arm: str, row: dict[str, str]) -> dict[str, object]:
    """The row's mean TTFT / TPOT in arm `arm` (module docstring); the script arms replay
    through sgl8k64.harness (InferenceX's workload at the script's flags, ignore-EOS admission
    on: the client's flag), None where no script is known or kvplan refuses."""
    from tests.benches import sgl8k64

    base = {"id": row["id"], "m_ttft": float(row["silicon_ttft_ms"]),
            "m_tpot": float(row["silicon_tpot_ms"])}
    if arm in ("base", "nolaunch"):
        r = agg.replay(row)
        return {**base, "ttft": r.ttft_ms, "tpot": r.tpot_ms, "why": r.why_not}
    flags = script_flags(row)
    got = None if flags is None else sgl8k64.harness(row, flags, True)  # type: ignore[arg-type]
    return {**base, "ttft": got and got[0], "tpot": got and got[1],
            "why": "" if got else "no script / refused"}


def run(arm: str, out: str) -> None:
    """Every row of `rows` in `arm` ('base', 'nolaunch', 'script', 'script_nolaunch') into
    `out`, a JSON line each."""
    agg.CLIENT_WORKLOAD = True
    with open(out, "w") as f:
        ctx = no_launch() if arm.endswith("nolaunch") else _nothing()
        with ctx:
            for row in rows():
                t = time.process_time()
                d = one(arm.removesuffix("_nolaunch") if arm != "nolaunch" else arm, row)
                f.write(json.dumps({**d, "cpu_s": time.process_time() - t}) + "\n")
                f.flush()


@contextmanager
def _nothing() -> Iterator[None]:
    yield


def load(path: str) -> dict[str, dict]:  # type: ignore[type-arg]
    by_id = {r["id"]: r for r in agg.rows()}
    out = {}
    for line in open(path):
        d = json.loads(line)
        if d["ttft"] is not None:
            out[d["id"]] = {**d, "row": by_id[d["id"]]}
    return out


ARMS = ("base", "nolaunch", "script", "script_nolaunch")
# The DeepSeek-V3 FP8 B300 SGLang 0.5.10.post1 rows: measured TTFT about 2 s at 4 users and a
# slow TPOT too (sgl8k64's FINDING: "slow at every step, not read"); the report also prints
# each class without them.
SLOW = ("deepseek-ai/DeepSeek-V3", "fp8", "0.5.10.post1", "b300_sxm")


def cells(arm: dict[str, dict], ids: list[str]) -> str:  # type: ignore[type-arg]
    """'median kvplan ms / median ratio / a / b' of one arm over `ids` (a, b: measured = a x
    kvplan + b by least squares, '-' under 4 rows)."""
    k = [arm[i]["ttft"] for i in ids]
    m = [arm[i]["m_ttft"] for i in ids]
    ratio = statistics.median(x / y for x, y in zip(k, m, strict=True))
    ab = "- / -"
    if len(ids) >= 4 and len(set(k)) > 1:
        a, b = fit(k, m)
        ab = f"{a:.2f} / {b:,.0f}"
    return f"{statistics.median(k):,.0f} / {ratio:.2f} / {ab}"


def report(paths: list[str]) -> None:
    """By model class (read / held out, by ISL) and checkpoint: the measured median, and per
    arm the median kvplan TTFT, median ratio and the line measured = a x kvplan + b, over the
    rows every arm replayed."""
    arms = [load(p) for p in paths]
    read = {r["id"] for r in read_rows()}
    common = set.intersection(*(set(a) for a in arms))
    groups: dict[str, list[str]] = defaultdict(list)
    for i in sorted(common):
        row = arms[0][i]["row"]
        _, _, cls = aggfaith64.group(row)
        held = "READ" if i in read else "held out"
        groups[f"{cls} {held}"].append(i)
        groups[f"{cls} {held}, ISL {row['isl']}"].append(i)
        if (row["model_path"], row["precision"], row["backend_version"], row["system"]) != SLOW:
            groups[f"{cls} {held} less SLOW"].append(i)
            groups[f"{cls} {held} less SLOW, ISL {row['isl']}"].append(i)
        groups[f"{cls} {row['model_path']} {row['precision']} {row['backend_version']}"].append(i)
    print("| rows | n | measured ms | " + " | ".join(
        f"{a}: kvplan ms / ratio / a / b" for a in ARMS[:len(paths)]) + " |")
    print("|---|---:|---:|" + "---:|" * len(paths))
    for g in sorted(groups):
        ids = groups[g]
        med = statistics.median(arms[0][i]["m_ttft"] for i in ids)
        print(f"| {g} | {len(ids)} | {med:,.0f} | " + " | ".join(cells(a, ids) for a in arms)
              + " |")


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "decompose":
        decompose()
    elif cmd == "run":
        run(sys.argv[2], sys.argv[3])
    elif cmd == "report":
        report(sys.argv[2:])
