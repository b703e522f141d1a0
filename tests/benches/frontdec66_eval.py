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

Also `aiconfig`: aiconfigurator's aggregated vLLM >= 0.17 rows of tests.benches.aiconfig_agg_ttft's
subset (analysis only there: its --frontend TTFT is a counterfactual, on no page), --frontend's
steady-state TTFT before -> after against the measured one; the gpt-oss-120b rows "shaped the
reading" (fixedtok66 read the prime because of their excess), the others held out.

RESULTS (12:54-13:11 UTC, rule frozen at e3b38c35; --frontend median |error| before -> after;
every "before" equals the page's --frontend line for the same rows):
- prospective30, kvcached vLLM 0.19.0: the stage's 2 fitted rows TTFT mean 38.3 -> 36.9 %, TPOT
  47.5 -> 39.0 %; its 4 same-configuration rows TTFT 39.5 -> 38.1 %, TPOT 45.3 -> 37.0 % (the
  rate-16 rows +1.4 pp TTFT each, e.g. the fit row 39.14 measured: 39.1 -> 39.7 ms; the rate-inf
  bursts 704 -> 826 ms of ~2,900 measured).
- prospective54: its one >= 0.17 vLLM run is refused (as on the page): nothing to compare.
- prospective58, 33 held out (MiniMax-M2.5 0.20.0): TTFT mean 15.9 -> 13.2 %, TPOT 5.2 -> 5.3 %.
- prospective61, 10 held out (same host, lengths): TTFT mean 18.4 -> 18.9 %, TPOT 19.4 -> 19.4 %.
- prospective62, wentao274 conc 32, 5 held out: TTFT mean 18.9 -> 17.0 %, TPOT 19.3 -> 19.3 %.
- blind2 (24 levels, 0.19.1 / 0.20.1; "shaped since" on the page, not by this rule): TTFT p50
  37.8 -> 38.2 %, TPOT p50 20.2 -> 20.1 %.
- aiconfig >= 0.17 (a counterfactual on no page): gpt-oss-120b, shaped the reading, 56 rows
  median TTFT ratio 1.871 -> 1.910 (|error| 87.1 -> 91.0 %); held out 162 rows 1.540 -> 1.568
  (54.0 -> 56.8 %): --frontend already overshoots these rows, and the prime adds to it.
Held out in all: 48 prospective runs better on TTFT in 2 sets of 3 (58, 62), worse in 61; the
aiconfig counterfactual worse. The rule follows vLLM's code and stays (--frontend is opt-in).

Run: python -m tests.benches.frontdec66_eval [SET ...] (default: 30 54 61 62; 58 is 33 slow
MiniMax runs; blind2). Prints one line a run and the medians per set and split.
"""

from __future__ import annotations

import statistics
import sys
from unittest import mock

from kvplan._util.errors import KvplanError
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


def aiconfig() -> None:
    """aiconfigurator's >= 0.17 rows, --frontend TTFT before -> after (module docstring)."""
    from tests.benches import aiconfig_agg_runs as agg
    from tests.benches import aiconfig_agg_ttft as t
    from tests.benches.aiconfig_agg_loop import row_run, steady
    from tests.benches.disagg_rows import stated_concurrency

    def ttft(row: dict[str, str], version: str) -> float:
        agg._setup.cache_clear()  # cached setups: built afresh with or without the prime
        result = row_run(row, agg.row_setup(row, version, frontend=True))
        return steady(list(result.finished), stated_concurrency(row))[0]  # type: ignore[arg-type]

    parts: dict[str, list[tuple[float, float]]] = {}
    for row in t.studied():
        version = agg.release(row)
        if version is None or version_key(version) < (0, 17):
            continue
        try:
            with mock.patch("kvplan.analysis.simulate.run.vllm_api_output_cost",
                            lambda version, frontend: VLLM_API_OUTPUT_COST):
                before = ttft(row, version)
            after = ttft(row, version)
        except KvplanError:
            continue
        measured = float(row["silicon_ttft_ms"])
        split = ("shaped the reading" if "gpt-oss" in row["model_path"] else "held out")
        parts.setdefault(split, []).append((before / measured, after / measured))
    for split, part in parts.items():
        print(f"aiconfig >= 0.17, {split}, --frontend ({len(part)} rows): median TTFT ratio "
              f"{statistics.median(b for b, _ in part):.3f} -> "
              f"{statistics.median(a for _, a in part):.3f}, median |error| "
              f"{statistics.median(abs(b - 1) for b, _ in part):.1%} -> "
              f"{statistics.median(abs(a - 1) for _, a in part):.1%}", flush=True)


def main(names: list[str]) -> None:
    for name in names:
        if name == "aiconfig":
            aiconfig()
            continue
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
