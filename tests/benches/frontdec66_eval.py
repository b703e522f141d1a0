"""frontdec66 (issue 30): the evaluation of the detokenizer prime in `simulate --frontend`'s
output stage (kvplan.engines.vllm.frontend `vllm_detok_prime`, VLLM_DETOK_PRIME_S_PER_PROMPT_
TOKEN; rule frozen at commit e3b38c35 before any row was re-run). Every vLLM >= 0.17 run of the
frozen prospective sets that the page reports "with --frontend", replayed with prospective30's
machinery (tests.benches.prospective_runs.run_one), --frontend's mean TTFT and TPOT before (the
output stage without the prime: VLLM_API_OUTPUT_COST, as --frontend ran until frontdec66) and
after (the prime charged), against the measured figures. Splits: prospective30's own for the
stage's fit (`split_of`: its two fitted rows and their configuration); every other run held
out (the prime was read from vLLM's code and measured on this host: no row shaped it).

Also `blind2`: AccelMark's in-process runs (tests.benches.accelmark_runs, vLLM 0.19.1 / 0.20.1;
the page's "blind2 (AccelMark, p50s), --frontend" line: p50 TTFT and TPOT over every QPS level;
the set is "shaped since" on the page, none of it by this rule).

Run: python -m tests.benches.frontdec66_eval [SET ...] (default: 30 54 61 62; 58 is 33 slow
MiniMax runs; blind2). Prints one line a run and the medians per set and split.
"""

from __future__ import annotations

import statistics
import sys
from unittest import mock

from kvplan._util.versions import version_key
from kvplan.engines.vllm.frontend import VLLM_API_OUTPUT_COST
from tests.benches import prospective_runs as pr

SETS = ("30", "54", "61", "62")


def _path(name: str):  # type: ignore[no-untyped-def]
    return pr.DATA if name == "30" else pr.DATA.with_name(f"prospective{name}.json")


def _runs(name: str) -> list[dict]:  # type: ignore[type-arg]
    return [r for r in pr.load(_path(name))["runs"]
            if r.get("engine", "vllm") == "vllm" and version_key(r["vllm"]) >= (0, 17)]


def served(run: dict, *, prime: bool) -> dict[str, float] | None:  # type: ignore[type-arg]
    """--frontend's figures of `run`, with or without the prime (None: refused)."""
    if prime:
        result = pr.run_one(run)
    else:
        with mock.patch("kvplan.analysis.simulate.run.vllm_api_output_cost",
                        lambda version, frontend: VLLM_API_OUTPUT_COST):
            result = pr.run_one(run)
    return None if result.refused else result.served


def blind2() -> None:
    """The page's blind2 --frontend line, before -> after (module docstring)."""
    from tests.benches import accelmark_runs as am

    doc, runs = am.load()
    got = []
    for prime in (False, True):
        levels = []
        for run in runs:
            if prime:
                levels += am.simulate(run, doc, frontend=True)
                continue
            with mock.patch("kvplan.analysis.simulate.run.vllm_api_output_cost",
                            lambda version, frontend: VLLM_API_OUTPUT_COST):
                levels += am.simulate(run, doc, frontend=True)
        got.append((am._median(levels, "ttft_ms_p50", "ttft_p50"),
                    am._median(levels, "tpot_ms_p50", "tpot_p50"), len(levels)))
    versions = sorted({run["vllm"] for run in runs})
    print(f"blind2 (AccelMark, p50s), --frontend ({got[0][2]} levels, vLLM {versions}): median "
          f"|error| TTFT p50 {got[0][0]} -> {got[1][0]}, TPOT p50 {got[0][1]} -> {got[1][1]}")


def main(names: list[str]) -> None:
    for name in names:
        if name == "blind2":
            blind2()
            continue
        rows: dict[str, list[tuple[float, float, float, float]]] = {}
        for run in _runs(name):
            before, after = served(run, prime=False), served(run, prime=True)
            if before is None or after is None:
                print(f"prospective{name} | {run['id']} | refused")
                continue
            m = run["measured"]
            errs = tuple(fig[k] / m[key] - 1 for fig in (before, after)
                         for key, k in (("mean_ttft_ms", "ttft_ms.mean"),
                                        ("mean_tpot_ms", "tpot_ms.mean")))
            split = pr.split_of(run["id"]) if name == "30" else "held out"
            rows.setdefault(split, []).append(errs)  # type: ignore[arg-type]
            print(f"prospective{name} | {run['id']} | {split} | vLLM {run['vllm']} | TTFT "
                  f"{m['mean_ttft_ms']:,.1f} ms: {before['ttft_ms.mean']:,.1f} -> "
                  f"{after['ttft_ms.mean']:,.1f} ({errs[0]:+.1%} -> {errs[2]:+.1%}) | TPOT "
                  f"{errs[1]:+.1%} -> {errs[3]:+.1%}", flush=True)
        for split, part in rows.items():
            med = [statistics.median(abs(e[i]) for e in part) for i in range(4)]
            print(f"prospective{name}, {split}, --frontend ({len(part)} runs): median |error| "
                  f"TTFT mean {med[0]:.1%} -> {med[2]:.1%}, TPOT mean {med[1]:.1%} -> "
                  f"{med[3]:.1%}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:] or list(SETS))
