"""The prospdis66 set (issue 29): public disaggregated (prefill / decode) serving runs from a
publisher no earlier data file used, FROZEN (tests/data/disagg/public_disagg_runs66.json, its
model config llama-3.1-70b-fp8-static.json and MODELS entry, this runner and
tests/test_prospdis66.py committed before kvplan was run on any of them), then replayed once and
that first evaluation recorded here (FIRST_EVALUATION, FIRST_ROWS, FIRST_REFUSED).

The runs: ankdeshm/dynamo_disaag_serving_gke, NVIDIA Dynamo on GKE B200 nodes through the
nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.2.1 image (vLLM 0.20.1, NIXL 0.10.1), NixlConnector,
genai-perf closed loops at concurrency 16 and 32 (150 output tokens forced; 500-1,000 on the
two-node runs, whose measured mean is taken): neuralmagic/Meta-Llama-3.1-70B-Instruct-FP8 with
FP8 KV on one node (4 prefill workers of TP 1 : 1 decode worker of TP 4 at 3,000 and 8,000 / 150;
3 x TP 1 : 1 x TP 1 at 3,000 / 150) and on two nodes (3 x TP 4 : 1 x TP 4 at 26,000 / ~984), and
deepseek-ai/DeepSeek-R1 on two nodes (1 x TP 8 EP 8 : 1 x TP 8 EP 8 at 3,000, 8,000 and 16,000
/ ~999). The search that found them and what it left out: tests/data/disagg/
prospdis66_search.json; what each run states, how it is read and what was assumed: the data
file.

Held out, with one qualification: the runs share GPU (B200) and engine (vLLM) with collocated
sets that shaped kvplan's vLLM B200 step (tests/benches/fitted_rows.py); their layouts, the
disaggregated flow, the models on B200 disaggregated and the publisher are new.

Replayed by the machinery of the disagg bench's sections 4 / 4b (tests.benches.disagg_public.
replay_run: disagg_rows.predict, `evaluate_xy`'s closed-loop simulation of both roles at the
point's concurrency, the simulation's default measurement: kvplan has no genai-perf client),
each point compared on the doc's mean TTFT and mean inter-token latency against disagg_rows.BAND.
No rule is added here.

First evaluation (FIRST_EVALUATION, FIRST_ROWS; 41e39618, once, nothing changed before or
after): 15 of 15 points replayed, none refused; both inside the band 0 of 15, TTFT 0 of 15, TPOT
8 of 15; median ratio TTFT 0.09, TPOT 0.80. What it shows, not explained here (no rule was
written for it):
- TTFT far below the measured everywhere (0.00-0.39): the measured TTFT grows with the load far
  faster than kvplan's prefill queue (DeepSeek-R1 1 x TP 8 prefill at 16,000 / C 16: 65.2 s
  measured, 0.38 s kvplan; Llama 4 x TP 1 prefill at 8,000 / C 16: 16.3 s measured with a p90 of
  4.1 s, 0.56 s kvplan). The docs put it on prefill queueing; doc 13 says NIXL falls back to
  TCP / PCIe without UCX_TLS=all (docs 09 and 11 ran without it, doc 13 with it: its 3,000-token
  points are no better, 0.38-0.39). Unread: Dynamo 1.2.1's prefill routing and queue, the
  genai-perf warm-up and chat template, NIXL 0.10.1 over GKE's RDMA. A cross-check from doc 15's
  own table (a reading, not a rule): at 16,000 / C 16, 0.18 requests/s x 84.24 s mean latency
  = 15.2 requests in flight (the closed loop holds), so the one TP 8 prefill worker finished a
  prompt about every 5.5 s; kvplan's TTFT at that point is 0.38 s.
- TPOT: DeepSeek-R1 inside at every point (0.93-1.11); Llama-3.1-70B FP8 below (0.34-0.91,
  median 0.63), lowest where the TTFT is worst (8,000-token points, a TP 1 decode at C 32).

Read since (prospdis67, tests/benches/prospdis67_forensic.py; no rule written, this section
unchanged): Dynamo 1.2.1's decode workers run without a KV connector (the YAMLs pass no
--kv-transfer-config and Dynamo sets none for a decode worker), so no decode reads a prefill
worker's blocks and vLLM 0.20.1 keeps them 480 s (VLLM_NIXL_ABORT_REQUEST_TIMEOUT); a closed
loop with that hold and kvplan's pools and times comes within 5 % of the four longest-prompt
points' TTFT (Llama 8,000 at C 16 / 32, DeepSeek-R1 16,000 at C 16 / 32). The "assumed" line
of the data file that the decode worker gets the NIXL connector is wrong.

Replayed with that flow since dynnocon67 (3c96e0c4; every point SHAPED_BY it: written after
the first evaluation and the forensic): each run's row states decode_kv_connector "none" (the
data file's corrected reading, the original kept), so the replay runs
kvplan.analysis.simulate.disagg_local (the decode worker prefills every prompt itself, its
steps priced as `kvplan simulate`'s mixed step; vLLM 0.20 NIXL's prefill pool holds each
finished prompt's blocks 480 s, KvConnector.no_decode_connector; TTFT at the prefill's return)
behind genai-perf's warm-up and measured requests as one closed loop (disagg_public.
client_fields). First evaluation -> dynnocon67: both inside 0 -> 2 of 15, TTFT 0 -> 3, TPOT
8 -> 9; median ratio TTFT 0.09 -> 0.35, TPOT 0.80 -> 1.25. DeepSeek-R1 16,000 inside (0.75,
0.87); Llama 8,000 over (1.26, 1.46: the forensic's sensitivity to the pool, kvplan's pool here
at the replay's defaults, not the YAMLs' 0.95 / block 128); doc 11 far over (2.49, 3.57); the
3,000-token points, doc 14 and DeepSeek-R1 8,000 still under (0.22-0.36); the Llama TPOT now over
(1.31-1.59: every local prefill joins the decode steps). The genai-perf client alone moves no
TTFT ratio into the band.

Replayed at the deployment's own flags since dynpool67 (cd63c330; every point SHAPED_BY it:
written after the evaluations above): each run's row states each role's --gpu-memory-
utilization, --block-size, --max-num-batched-tokens and --no-enable-prefix-caching from its YAML
(tests/benches/deploy_flags.py; the data file's `engine_flags` records what each YAML states
and what the replay does not take: --max-model-len 32768, the environment), in place of kvplan's
defaults (0.92, block 16 or 32, 8,192): prefill 0.95 / block 128 / 8,192-32,768 tokens, decode
0.90 (Llama) or 0.95 (DeepSeek-R1) / block 128. The prefill pools are then the forensic's
(4,942 blocks a Llama TP 1 rank at 16,384, 5,018 at 8,192; 9,619 a DeepSeek-R1 TP 8 worker).
dynnocon67 -> dynpool67: both inside 2 -> 2 of 15, TTFT 3 -> 4, TPOT 9 -> 8; median ratio TTFT
0.35 -> 0.52, TPOT 1.25 -> 1.27. Llama 8,000 inside on TTFT (1.26 -> 1.24, 1.46 -> 1.09; TPOT
1.36 -> 1.39, 1.31 -> 1.39: the C 32 TPOT leaves the band); DeepSeek-R1 16,000 still inside
(0.75, 0.87 -> 0.75, 0.77); doc 11 still far over (2.49 -> 2.44, 3.57 -> 3.35); the 3,000-token
points nearer but under (doc 13 C 32 0.28 -> 0.60, doc 15 0.23 / 0.22 -> 0.39 / 0.40: the
prefill budget of 16,384 / 32,768 batches prompts into longer steps); doc 09 unchanged and doc 13
C 16 within 1 % (0.30: their pools never fill from empty, 630 prompts of 24 blocks against
4 x 205); DeepSeek-R1 8,000 C 32 0.35 -> 0.23. The counterfactual: predict(engine_flags=False).

Run: python -m tests.benches.prospdis66_runs
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.benches.disagg_public import Point
from tests.benches.disagg_rows import BAND
from tests.benches.prospdis65_runs import key, points_lines, replay

DATA = (Path(__file__).resolve().parents[2] / "tests" / "data" / "disagg"
        / "public_disagg_runs66.json")


def load() -> dict:  # type: ignore[type-arg]
    return json.loads(DATA.read_text())


# The record of the first evaluation, kept in the data file (`first_evaluation`): run once on
# the FREEZE commit's tree (the commit adding the data file, its config, this runner and its
# test), unchanged. No rule was written or changed before or after it, so every point is still
# held out for the next rule.
_FIRST = load().get("first_evaluation") or {}
FREEZE: str | None = _FIRST.get("commit")
FIRST_EVALUATION: str | None = (f"{_FIRST['commit']}, {_FIRST['date']}: {_FIRST['summary']}"
                                if _FIRST else None)
# "run id @ concurrency" -> (TTFT ratio, TPOT ratio), kvplan / measured, as first printed
# (None: kvplan's prefill saturated at that load, no TTFT).
FIRST_ROWS: dict[str, tuple[float | None, float | None]] = {
    k: (t, o) for k, (t, o) in _FIRST.get("rows", {}).items()}
# Run id -> the refusal's first line, as first printed.
FIRST_REFUSED: dict[str, str] = dict(_FIRST.get("refused", {}))

__all__ = ["DATA", "FIRST_EVALUATION", "FIRST_REFUSED", "FIRST_ROWS", "FREEZE", "key", "load",
           "replay_all", "section"]


def replay_all(runs: list[dict] | None = None  # type: ignore[type-arg]
               ) -> tuple[list[Point], dict[str, str]]:
    """Every point of every run (or of `runs`) replayed, and the runs kvplan refused (id ->
    why)."""
    points, refused = [], {}
    for run in load()["runs"] if runs is None else runs:
        got, why = replay(run)
        points += got
        if why:
            refused[run["id"]] = why
    return points, refused


def section(points: list[Point], refused: dict[str, str],
            runs: list[dict] | None = None) -> list[str]:  # type: ignore[type-arg]
    """The set as a Markdown section: every point, the counts against the band (a refused
    point counted outside), per run, and the runs kvplan refused."""
    runs = load()["runs"] if runs is None else runs
    record = (f"the record of their first evaluation: {FIRST_EVALUATION}" if FIRST_EVALUATION
              else "not yet evaluated: this is the first replay (no record yet)")
    out = [f"{len(runs)} runs, {sum(len(r['points']) for r in runs)} points "
           f"(tests/data/disagg/public_disagg_runs66.json, frozen at "
           f"{FREEZE or 'the commit adding it'}); {record}. Ratios are kvplan / measured "
           f"(mean TTFT, mean TPOT against genai-perf's mean inter-token latency); the band is "
           f"[{BAND[0]}, {BAND[1]}].", "",
           "| run | conc. | measured TTFT / ITL ms | kvplan TTFT / TPOT ms | ratio TTFT | "
           "ratio TPOT |", "|---|---|---|---|---|---|"]
    return out + points_lines(points, runs, refused)


if __name__ == "__main__":
    print("\n".join(section(*replay_all())))
