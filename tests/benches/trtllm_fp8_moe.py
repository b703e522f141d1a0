"""TensorRT-LLM's CUTLASS block-FP8 MoE at the fitted FP8 MoE fraction (trtfp8moe61,
kvplan.engines.trtllm.moe_kernel): the rows it can move, replayed with the switch
(`TRTLLM_MOE_KERNELS.cutlass_fp8_fitted`) off and on, each mode in its own process (the benches
cache their setups).

The rule moves TensorRT-LLM rows with block-FP8 routed experts on SM 9.x (H100 / H200) only
(B200 runs DeepGEMM there: not this kernel). Selected by that alone, before any was replayed:

- agg: aiconfigurator's aggregated TensorRT-LLM rows on h100_sxm / h200_sxm that the bench
  replays (aiconfig_agg_runs.why_not empty), keyed by its split (held out / shaped by earlier
  rules); none was read for this rule: HELD OUT for it.
- disagg: examples/disagg-bench.md's TensorRT-LLM rows on h100_sxm / h200_sxm (section 2's and
  the frozen prospective ones, 3a / 3b / 3j by cohort). 3j's H200 / H100 rows were read for
  this decision (trtttft61's forensic): SHAPED.

`python -m tests.benches.trtllm_fp8_moe [agg] [disagg]` prints both modes' summary per group:
rows, rows moved, median TTFT / TPOT ratio (kvplan / measured), median |error|, rows with TTFT /
TPOT / both inside disagg_rows.BAND (about 19 min of CPU on a shared 2-core host).

Evaluated at c410a464 (the rule frozen, switch off; evaluated with the switch, then left off):
- agg, HELD OUT for this rule (the bench's split calls all 312 "shaped" by earlier rules:
  trta2a56's 142 TP-attention EP rows among them): H100 Qwen3-235B-A22B-FP8 (124 rows, all move)
  TTFT median ratio 0.91 -> 1.19, median |error| 20.5 -> 31.9 %, inside 86 -> 57, both 71 -> 49
  (TPOT 17.8 -> 17.9 %); H200 DeepSeek-R1 (12, all move) 0.62 -> 0.79, 59.1 -> 51.0 %, inside
  0 -> 3 (TPOT 42.8 -> 42.9 %); H100 Qwen3-32B (176, dense) does not move. Held out, 136 moved
  rows: worse, led by the 124 Qwen3-235B rows.
- disagg 3j (trtdis54 prospective cohort, SHAPED: read by trtttft61): H200 DeepSeek-V3 / R1 (25,
  20 move) 0.54 -> 0.81, 57.2 -> 33.6 %, inside 3 -> 10; H100 (8) 0.81 -> 0.84, 22.8 -> 21.3 %,
  inside 6 -> 5. No section-2 / 3a / 3b TensorRT-LLM row on H100 / H200 replays.
- cost bench: its TensorRT-LLM runs (Qwen3-8B bf16, NIM Llama-3.3-70B fp8) are dense: none moves.
- B200 (3j's FP8 rows, aggregated DeepSeek FP8 rows) does not move: DeepGEMM there.
So the held-out rows get worse: the switch stays OFF (opt-in), per the project's policy.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys

HOPPER = ("h100_sxm", "h200_sxm")
Ratios = dict[str, tuple[float, float]]


def _switch(on: bool) -> None:
    from kvplan.engines.trtllm.moe_kernel import TRTLLM_MOE_KERNELS

    object.__setattr__(TRTLLM_MOE_KERNELS, "cutlass_fp8_fitted", on)


def agg() -> Ratios:
    from tests.benches import aiconfig_agg_runs as g

    out: Ratios = {}
    for row in g.rows():
        if row["backend"] != "trtllm" or row["system"] not in HOPPER or g.why_not(row):
            continue
        r = g.replay(row)
        if r.ratios is not None:
            split = "held" if g.split_of(r).startswith("held out") else "shaped"
            out[f"agg {split}|{row['system']}|{row['model_path']}|{r.id}"] = r.ratios
    return out


def disagg() -> Ratios:
    from tests.benches import disagg_rows as d

    out: Ratios = {}
    for prospective, rows in ((False, d.rows()), (True, d.prospective_rows())):
        for row in rows:
            if row["backend"] != "trtllm" or row["system"] not in HOPPER:
                continue
            r = d.replay(row, prospective=prospective)
            if r.ratios is not None:
                where = f"prospective {r.cohort}" if prospective else "section 2"
                out[f"disagg {where}|{row['system']}|{row['model_path']}|{r.id}"] = r.ratios
    return out


def _inside(x: float) -> bool:
    from tests.benches.disagg_rows import BAND

    return BAND[0] <= x <= BAND[1]


def line(name: str, off: Ratios, on: Ratios) -> str:
    ids = sorted(set(off) & set(on))
    if not ids:
        return f"| {name} | 0 | | | | | | |"
    moved = sum(1 for i in ids if off[i] != on[i])
    cells = []
    for k in (0, 1):
        a, b = [off[i][k] for i in ids], [on[i][k] for i in ids]
        cells.append(f"{statistics.median(a):.2f} -> {statistics.median(b):.2f}")
        cells.append(f"{statistics.median(abs(x - 1) for x in a):.1%} -> "
                     f"{statistics.median(abs(x - 1) for x in b):.1%}")
        cells.append(f"{sum(map(_inside, a))} -> {sum(map(_inside, b))}")
    both = [sum(1 for i in ids if _inside(side[i][0]) and _inside(side[i][1]))
            for side in (off, on)]
    return (f"| {name} | {len(ids)} | {moved} | " + " | ".join(cells)
            + f" | {both[0]} -> {both[1]} |")


def groups(keys: list[str]) -> list[tuple[str, list[str]]]:
    """Each set by split / section, then by GPU and checkpoint within it."""
    out: list[tuple[str, list[str]]] = []
    for head in sorted({k.split("|")[0] for k in keys}):
        mine = [k for k in keys if k.split("|")[0] == head]
        out.append((head, mine))
        for sub in sorted({"|".join(k.split("|")[1:3]) for k in mine}):
            out.append((f"  {sub.replace('|', ' ')}",
                        [k for k in mine if "|".join(k.split("|")[1:3]) == sub]))
    return out


def print_off_on(module: str, sets: list[str], what: str) -> None:
    """Runs `python -m module --mode off|on SETS` (each switch in a process of its own) and
    prints the off -> on table by group; vllm_fp8_moe shares it."""
    off, on = (json.loads(subprocess.run(
        [sys.executable, "-m", module, "--mode", mode, *sets],
        check=True, capture_output=True, text=True).stdout) for mode in ("off", "on"))
    print(f"switch off -> on ({what})")
    print("| group | rows | moved | TTFT ratio median | TTFT median abs error | TTFT inside "
          "| TPOT ratio median | TPOT median abs error | TPOT inside | both inside |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for s in sets:
        a = {k: tuple(v) for k, v in off[s].items()}
        b = {k: tuple(v) for k, v in on[s].items()}
        for name, keys in groups(sorted(a)):
            print(line(name, {k: a[k] for k in keys}, {k: b[k] for k in keys if k in b}))


def main(argv: list[str]) -> None:
    if argv[:1] == ["--mode"]:
        _switch(argv[1] == "on")
        sets = argv[2:] or ["agg", "disagg"]
        print(json.dumps({s: {"agg": agg, "disagg": disagg}[s]() for s in sets}))
        return
    print_off_on("tests.benches.trtllm_fp8_moe", argv or ["agg", "disagg"],
                 "TensorRT-LLM CUTLASS block-FP8 MoE at FP8_MOE_GEMM")


if __name__ == "__main__":
    main(sys.argv[1:])
