"""The prospdis65 set (issue 29): public disaggregated (prefill / decode) serving runs that no
earlier disagg data file has, FROZEN (tests/data/disagg/public_disagg_runs65.json, this runner
and tests/test_prospdis65.py committed before kvplan was run on any of them), then replayed once
and that first evaluation recorded here (FIRST_EVALUATION, FIRST_ROWS).

The runs: Anyscale's Ray Serve LLM PD study (anyscale/ray-serve-llm-perf-examples at 04ba8ab4):
openai/gpt-oss-120b (MXFP4) on vLLM 0.11.0 with NixlConnector over UCX, 5,000 / 250 tokens at
concurrency 4-64 (5 x C prompts each), on AWS p5.48xlarge (8 x H100) with prefill and decode on
one node (P:D = 1x2:1x2, 1x2:2x2, 1x2:3x2, 1x4:1x4, 2x2:1x2, 2x2:1x4, 3x2:1x2, workers x TP) or
across nodes over EFA (1x4:1x4), on 8 x H200 nodes with InfiniBand (1x4:1x4 packed and spread),
and one 1P1D TP4 run over EFA at 8,000 / 1,000, concurrency 64. The data file says what each
source states, how it is read and what was found and left out.

Replayed by the machinery of the disagg bench's section 4 (tests.benches.disagg_public.
replay_run: disagg_rows.predict, `evaluate_xy`'s closed-loop simulation of both roles at the
point's concurrency), each point compared on the saved result's mean TTFT and mean TPOT against
section 3's band (disagg_rows.BAND). No rule is added here.

First evaluation (FIRST_EVALUATION): every run refused, none timed: gpt-oss-120b has
sliding-window layers and kvplan reads NIXL's sliding-window rules from vLLM 0.32 only. No rule
was written after it, so the set is still BLIND for whatever rule makes it replayable. What
vLLM 0.11.0 (the runs' release; the wheel vllm-0.11.0-cp38-abi3-manylinux1_x86_64.whl from
PyPI, read 2026-12-07, prospdis65) does for them, for the session that writes that rule:

- vllm/config/__init__.py:498-508 (the comment at :507): a kv_transfer_config turns the
  hybrid KV-cache manager off ("Hybrid KV cache manager is not compatible with KV transfer");
  0.11.0 has no SupportsHMA.
- vllm/v1/core/kv_cache_utils.py:1096-1134 `unify_hybrid_kv_cache_specs`: with full and
  sliding layers both present, every SlidingWindowSpec becomes a FullAttentionSpec (the window
  kept for compute only): both roles allocate every layer's blocks for every token.
- vllm/distributed/kv_transfer/kv_connector/v1/nixl_connector.py:1284-1290 `_read_blocks`:
  with no per-layer block windows ("Default case: assume global attention") the decode side
  reads every block of the request on every layer; the windows (:871-887, :1291-1306) are set
  for model_type "llama4" only (its chunked local layers: the last cdiv(chunk, block) blocks).
  So at 0.11.0 a gpt-oss handover moves cdiv(I, block) blocks on all 36 layers, and the Llama 4
  special case clips chunked layers, where kvplan.engines.vllm.connectors `_units` moves every
  block of a chunked local layer to 0.13 (not checked here beyond 0.11.0).

Second record, the first timed evaluation (RULE_EVALUATION, RULE_ROWS; nixl011_65): the rule
above written for every release it holds in (kvplan.engines.vllm.kv_transfer: a connector
turns the manager off to 0.21, from 0.22 only for a connector that is not SupportsHMA; NIXL
reads every block of a sliding layer run as full attention from 0.11), committed before the
one replay. The Llama 4 note was checked and fixed: NIXL clips Llama 4's chunked layers to
their last cdiv(chunk, block) blocks in 0.10.0 - 0.17.1 (gone in 0.18.0), which kvplan now
does (connectors `nixl_llama4_window`); that touches no run here.

Third record, SHAPED (CLIENT_EVALUATION, CLIENT_ROWS; raypd65, after reading the second): the
replay measured these points as the disaggregated simulation's default (four requests a user,
the first and the last not averaged), not as their client did. run_bm.sh at 04ba8ab4 runs
`vllm bench serve --num-prompts 5 x C --max-concurrency C --request-rate 1e9`, and vLLM
0.11.0's benchmark (vllm/benchmarks/serve.py :593-662, :301-324) averages every request of the
run, the C users' first burst included (kvplan.analysis.simulate.bench_client.
vllm_bench_serve), as prospective57's replay of the same repository's collocated runs already
measures them (`kvplan simulate`'s closed loop over --num-prompts). The replay now takes that
client (disagg_public.client_fields; disagg_client.client), committed (CLIENT_COMMIT) before
one rerun. It was written after the second record was read, so it SHAPES every row here: no
held-out row measures it. What it leaves (raypd65's decomposition, kvplan's own phases):
- One prefill worker at concurrency >= 32: kvplan's request rate matches the measured one
  (8.6 vs 8.8 requests/s at 1x2:1x2, 32; 9.2 vs 8.1 at 64): the prefill worker's capacity is
  right, but kvplan holds the cycle in the prefill queue (934 of 1,246 ms at 32) where the
  run holds it in decode: by Little's law the measured decode batch is ~44 at 64 (TPOT 21.85
  ms) where kvplan's is ~23 (10.2 ms). The measured TP 2 decode step goes 10.1-12.6 ms at a
  batch of ~27 (2x2:1x2 at 32, 1x2:1x2 at 32) to ~22 ms at ~44-52 (1x2:1x2 and 3x2:1x2 at 64);
  kvplan's 11.1-11.3 -> 13.7-14.6 ms. That steep rise is not in kvplan's step and is not
  explained here (not the engine core: 0.4-0.7 ms at those batches).
- At concurrency 4 the measured TTFT is ~110 ms above kvplan's (1x2:1x2: 313 vs 207 ms, of
  kvplan's 171 ms prefill, 27 ms queue, 9 ms decode side), about prospective57's collocated
  TP 8 gap at 4 (218 vs 95 ms): the Ray Serve path (ingress, the PD proxy's non-streamed
  prefill request with max_tokens 1, then the decode request: ray.llm's PDProxyServer
  `_handle_request` as a version in GitHub's code index has it; Ray 2.51's own not read) is
  not charged in either replay, and nothing measured here prices it. prospective57's
  collocated TP 2 run of 1-token prompts (pure decode, concurrency 32) bounds one Ray Serve
  request's unmodelled cost: TTFT 68.6 ms measured, 11.5 kvplan; the PD path sends two
  requests per prompt (the prefill's, then the decode's), which would fit a ~110 ms gap, but
  that is a reading, not a measurement. The same run's TPOT (13.41 ms measured, 11.52 kvplan
  at 32 requests) is slower than the PD decode worker's at ~27 (10.06 ms, 2x2:1x2 at 32).
- With 2-3 prefill workers the mean TTFT at low load sits far above the median (3x2:1x2 at 4:
  686 vs 252 ms), a tail kvplan's mean does not have (each request alike); not read further.
- TPOT at low load is ~0.7 as in prospective57's collocated TP 2 / TP 8 runs (an almost
  constant 1.7-2.4 ms a step short there): the decode step is priced as the collocated rows'
  but without vLLM's engine-core host stage (kvplan simulate's default; the disaggregated role
  times did not charge it: 0.11 ms a step at 4 requests, 0.6 ms at 44), left for a later rule.

Fourth record, SHAPED (HOST_EVALUATION, HOST_ROWS; pdhost65): the role steps charge that
stage as `kvplan simulate` does (kvplan.analysis.simulate.engine_core role_host), committed
(HOST_COMMIT) before one rerun: TPOT inside 16 -> 22 of 61, median ratio TPOT 0.69 -> 0.72,
TTFT 0.77 -> 0.78; both inside unchanged (6).

Fifth record, SHAPED (STOP64_EVALUATION, STOP64_ROWS): the same replay on stop 64's merged
rules (hopperops65's norm and FP8-quantization bytes in every prefill step, the eager launch
refitted with it): both inside 6 -> 7, TTFT inside 10 -> 11, TPOT 22 -> 21 of 61; median ratio
TTFT 0.78 -> 0.79, TPOT 0.72.

Sixth record, SHAPED (PAD_EVALUATION, PAD_ROWS; raypd66): vLLM's disaggregated decode steps
replayed from its CUDA graphs, the batch padded to the next captured size (vLLM 0.11.0
v1/worker/gpu_model_runner.py:1927-1935; kvplan.perf.graph_padding), as `kvplan simulate`
already stepped vLLM; committed (PAD_COMMIT) before one rerun: both inside 7 -> 9, TTFT 11 ->
12, TPOT 21 -> 23 of 61; median ratio TTFT 0.79 -> 0.80, TPOT 0.72 -> 0.74. The rule follows
vLLM's code (the brief named it after raypd65's decomposition); it does not touch what is
left below.

Seventh record (MARLIN_EVALUATION, MARLIN_ROWS; stop 65): tpslope66's Marlin MXFP4 MoE at its
padded shapes (per-rank intermediate to 128, hidden to 256: vLLM 0.18.0 mxfp4.py:321-342), which
kvplan prices for these points (Hopper, vLLM 0.11.0: Marlin before 0.11.1); a rule read in the
code and decided on prospective57's held-out runs, none of these points read for it. Both inside
9 -> 18, TTFT 12 -> 22, TPOT 23 -> 31 of 61; median ratio TTFT 0.80 -> 0.91, TPOT 0.74 -> 0.75.
The set itself stays shaped (records 3-6).

What raypd66 read and measured for the two misses raypd65 left (no rule came of them; the
numbers: python -m tests.benches.prospdis65_forensic, whose docstring cites the code):
- Ray Serve LLM's PD path (ray 2.51.0 wheel) sends each prompt twice: to prefill with
  max_tokens 1, stream False and kv_transfer_params do_remote_decode, then, after that whole
  response, the original request with the prefill's kv_transfer_params to decode; no timer,
  sleep or batching interval on the way (stream_batching_interval_ms 0), the engines on Ray's
  executor. Nothing in that code prices a hop.
- The ~110 ms at concurrency 4 is mostly a tail, not a per-request cost: concurrency 4 is the
  first point after each launch (pd-ratio-sweep.sh, run_bm.sh), and the first request from a
  prefill engine a decode rank has not met waits for vLLM 0.11.0 NIXL's handshake
  (nixl_connector.py:1198-1212, :707-730), which registers every remote block of every layer
  (:1026-1051). The mean TTFT's excess over the median, x the 20 prompts, is 0.2-1.2 s with one
  prefill-decode pair (warmed by vllm bench serve's initial test prompt) and 5.9-9.6 s with 2-3
  (p2xtp2-d1xtp4: 2.4 s, its median itself 567 ms); at concurrency 8 it is 0.2-2.2 s. At
  concurrency 4 kvplan's TTFT is 0.21-0.32 of the mean on the multi-pair runs but 0.58-0.77 of
  their median (p2xtp2-d1xtp4 0.28), 0.54-0.84 on the one-pair runs. kvplan does not charge
  the handshake (no time for it in the code; the runner compares means, as frozen).
- The TP 2 decode step is bimodal at one batch: by Little's law 1x TP 2 decode runs ~41
  requests at 48 users in p1xtp2-d1xtp2 (TPOT 22.26 ms), p2xtp2-d1xtp2 (11.55 ms) and
  p3xtp2-d1xtp2 (22.53 ms), the decode side receiving 0.17 requests a step in the first two.
  No rule keyed on the batch or the arrivals (padding, expert coverage, the 1-token recompute)
  can give both; kvplan's step (14.5 ms at 41, padded) sits between them. Not explained.
- Where kvplan queues at prefill the real prefill worker is faster: with one prefill worker
  the runs sustained 10.56-11.56 requests/s at TP 2 (p1xtp2-d2xtp2, -d3xtp2 at 48, their
  decode workers not binding) and 17.45-18.72 at TP 4 (at 64, TTFT still 0.46-0.53 s), where
  kvplan's replay tops out at 9.26-9.33 and 15.16-15.85: the real prefill's capacity is at
  least 1.14-1.24x kvplan's (TP 2) and 1.15-1.18x (TP 4); kvplan's 8,192-token prefill step
  is 186.4 ms at TP 2 and 107.7 ms at TP 4 on an H100. A prefill-time miss (not read further
  here), which puts kvplan's closed loop in the prefill queue at >= 32 users.

Run: python -m tests.benches.prospdis65_runs
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from kvplan._util.errors import KvplanError
from tests.benches.disagg_public import Point, replay_run
from tests.benches.disagg_rows import BAND

DATA = (Path(__file__).resolve().parents[2] / "tests" / "data" / "disagg"
        / "public_disagg_runs65.json")
# The commit that adds the data file, this runner and its test: the freeze (set with the record
# of the first evaluation, which was run on that commit's tree).
FREEZE: str | None = "5647c373"
# The record of the first evaluation (run on the FREEZE tree, unchanged): kvplan refused every
# run, at the first point of each, in the handover (kvplan.engines.vllm.connectors
# `_check_layer_kinds`): gpt-oss-120b has sliding-window layers and kvplan reads NIXL's
# sliding-window rules from vLLM 0.32 only; the runs ran 0.11.0. The runner then stopped at
# the first refusal (disagg_public.replay_run raises); the per-run outcome below was taken on
# the same tree with the refusal caught, as `replay` now does. No time was predicted.
FIRST_EVALUATION: str | None = (
    "5647c373, 2026-12-07: 11 of 11 runs (61 of 61 points) refused: '--engine-version 0.11.0: "
    "kvplan reads NIXL's sliding-window, recurrent and indexer rules from vLLM 0.32 only'; "
    "both inside the band 0 of 61 (none replayed)")
# "run id @ concurrency" -> (TTFT ratio, TPOT ratio), kvplan / measured, as first printed
# (None: kvplan's prefill saturated at that load, no TTFT). Empty: nothing was replayed.
FIRST_ROWS: dict[str, tuple[float | None, float | None]] = {}
# Run id -> the refusal's first line, as first printed.
_NIXL_SWA = ("--engine-version 0.11.0: kvplan reads NIXL's sliding-window, recurrent and "
             "indexer rules from vLLM 0.32 only; give 0.32 or newer")
FIRST_REFUSED: dict[str, str] = {
    f"anyscale-gptoss120b-{rid}": _NIXL_SWA for rid in (
        *(f"h100-pack-{t}-5000x250" for t in ("p1xtp2-d1xtp2", "p1xtp2-d2xtp2",
                                               "p1xtp2-d3xtp2", "p1xtp4-d1xtp4",
                                               "p2xtp2-d1xtp2", "p2xtp2-d1xtp4",
                                               "p3xtp2-d1xtp2")),
        "h100-spread-srd-p1xtp4-d1xtp4-5000x250", "h200-pack-p1xtp4-d1xtp4-5000x250",
        "h200-spread-p1xtp4-d1xtp4-5000x250", "h100-1p1d-nixl-tp4-8000x1000")}

# The second record: the set's first TIMED evaluation, for the rule that makes it replayable
# (nixl011_65, issue 29): a KV connector turns vLLM's hybrid KV-cache manager off before 0.22,
# so gpt-oss-120b's sliding layers are full attention on both roles and NIXL reads every block
# of every layer (kvplan.engines.vllm.kv_transfer, .alloc hybrid_manager_on, .connectors). The
# rule was committed (RULE_COMMIT) before this replay, which ran once on that tree; no row of
# the set was read for it, so the set is blind to it (held out). Nothing was tuned after it.
# (One point, the first row below, was printed once before that commit, by the then-failing
# refusal test of tests/test_prospdis65.py, after the rule was written; nothing changed after.)
RULE_COMMIT: str | None = "38171ade"
RULE_EVALUATION: str | None = (
    "38171ade, 2026-12-07: 11 of 11 runs (61 of 61 points) replayed, none refused; both "
    "inside the band 2 of 61 (3%), TTFT 4 of 61 (7%), TPOT 17 of 61 (28%); median ratio "
    "TTFT 0.59, TPOT 0.70")


def _k(run: str, concurrency: int) -> str:
    return f"anyscale-gptoss120b-{run} @ {concurrency}"


# "run id @ concurrency" -> (TTFT ratio, TPOT ratio), kvplan / measured, as first printed.
RULE_ROWS: dict[str, tuple[float | None, float | None]] = {
    _k("h100-pack-p1xtp2-d1xtp2-5000x250", 4): (0.65, 0.75),
    _k("h100-pack-p1xtp2-d1xtp2-5000x250", 8): (0.78, 0.78),
    _k("h100-pack-p1xtp2-d1xtp2-5000x250", 16): (0.50, 0.85),
    _k("h100-pack-p1xtp2-d1xtp2-5000x250", 32): (2.35, 0.82),
    _k("h100-pack-p1xtp2-d1xtp2-5000x250", 48): (3.20, 0.47),
    _k("h100-pack-p1xtp2-d1xtp2-5000x250", 64): (1.89, 0.48),
    _k("h100-pack-p1xtp2-d2xtp2-5000x250", 4): (0.29, 0.69),
    _k("h100-pack-p1xtp2-d2xtp2-5000x250", 8): (0.61, 0.71),
    _k("h100-pack-p1xtp2-d2xtp2-5000x250", 16): (0.88, 0.75),
    _k("h100-pack-p1xtp2-d2xtp2-5000x250", 32): (3.45, 0.60),
    _k("h100-pack-p1xtp2-d2xtp2-5000x250", 48): (2.98, 0.46),
    _k("h100-pack-p1xtp2-d2xtp2-5000x250", 64): (1.77, 0.42),
    _k("h100-pack-p1xtp2-d3xtp2-5000x250", 4): (0.26, 0.72),
    _k("h100-pack-p1xtp2-d3xtp2-5000x250", 8): (0.52, 0.69),
    _k("h100-pack-p1xtp2-d3xtp2-5000x250", 16): (1.56, 0.68),
    _k("h100-pack-p1xtp2-d3xtp2-5000x250", 32): (4.23, 0.56),
    _k("h100-pack-p1xtp2-d3xtp2-5000x250", 48): (2.73, 0.47),
    _k("h100-pack-p1xtp2-d3xtp2-5000x250", 64): (1.53, 0.51),
    _k("h100-pack-p1xtp4-d1xtp4-5000x250", 4): (0.55, 0.73),
    _k("h100-pack-p1xtp4-d1xtp4-5000x250", 8): (0.59, 0.74),
    _k("h100-pack-p1xtp4-d1xtp4-5000x250", 16): (0.39, 0.78),
    _k("h100-pack-p1xtp4-d1xtp4-5000x250", 32): (0.62, 0.80),
    _k("h100-pack-p1xtp4-d1xtp4-5000x250", 48): (2.81, 0.69),
    _k("h100-pack-p1xtp4-d1xtp4-5000x250", 64): (4.52, 0.61),
    _k("h100-pack-p2xtp2-d1xtp2-5000x250", 4): (0.22, 0.79),
    _k("h100-pack-p2xtp2-d1xtp2-5000x250", 8): (0.85, 0.91),
    _k("h100-pack-p2xtp2-d1xtp2-5000x250", 16): (0.58, 1.05),
    _k("h100-pack-p2xtp2-d1xtp2-5000x250", 32): (0.43, 1.16),
    _k("h100-pack-p2xtp2-d1xtp2-5000x250", 48): (0.45, 1.21),
    _k("h100-pack-p2xtp2-d1xtp2-5000x250", 64): (0.36, 0.92),
    _k("h100-pack-p2xtp2-d1xtp4-5000x250", 4): (0.22, 0.64),
    _k("h100-pack-p2xtp2-d1xtp4-5000x250", 8): (0.48, 0.67),
    _k("h100-pack-p2xtp2-d1xtp4-5000x250", 16): (0.34, 0.66),
    _k("h100-pack-p2xtp2-d1xtp4-5000x250", 32): (0.26, 0.62),
    _k("h100-pack-p2xtp2-d1xtp4-5000x250", 48): (0.84, 0.57),
    _k("h100-pack-p2xtp2-d1xtp4-5000x250", 64): (1.60, 0.53),
    _k("h100-pack-p3xtp2-d1xtp2-5000x250", 4): (0.20, 0.66),
    _k("h100-pack-p3xtp2-d1xtp2-5000x250", 8): (0.54, 0.79),
    _k("h100-pack-p3xtp2-d1xtp2-5000x250", 16): (0.58, 0.86),
    _k("h100-pack-p3xtp2-d1xtp2-5000x250", 32): (0.47, 0.93),
    _k("h100-pack-p3xtp2-d1xtp2-5000x250", 48): (0.27, 0.62),
    _k("h100-pack-p3xtp2-d1xtp2-5000x250", 64): (0.17, 0.71),
    _k("h100-spread-srd-p1xtp4-d1xtp4-5000x250", 4): (0.47, 0.73),
    _k("h100-spread-srd-p1xtp4-d1xtp4-5000x250", 8): (0.50, 0.73),
    _k("h100-spread-srd-p1xtp4-d1xtp4-5000x250", 16): (0.39, 0.76),
    _k("h100-spread-srd-p1xtp4-d1xtp4-5000x250", 32): (0.64, 0.78),
    _k("h100-spread-srd-p1xtp4-d1xtp4-5000x250", 48): (2.50, 0.68),
    _k("h100-spread-srd-p1xtp4-d1xtp4-5000x250", 64): (4.47, 0.60),
    _k("h200-pack-p1xtp4-d1xtp4-5000x250", 4): (0.58, 0.71),
    _k("h200-pack-p1xtp4-d1xtp4-5000x250", 8): (0.55, 0.70),
    _k("h200-pack-p1xtp4-d1xtp4-5000x250", 16): (0.40, 0.69),
    _k("h200-pack-p1xtp4-d1xtp4-5000x250", 32): (1.54, 0.64),
    _k("h200-pack-p1xtp4-d1xtp4-5000x250", 48): (3.46, 0.55),
    _k("h200-pack-p1xtp4-d1xtp4-5000x250", 64): (5.49, 0.49),
    _k("h200-spread-p1xtp4-d1xtp4-5000x250", 4): (0.52, 0.72),
    _k("h200-spread-p1xtp4-d1xtp4-5000x250", 8): (0.59, 0.70),
    _k("h200-spread-p1xtp4-d1xtp4-5000x250", 16): (0.41, 0.70),
    _k("h200-spread-p1xtp4-d1xtp4-5000x250", 32): (1.54, 0.65),
    _k("h200-spread-p1xtp4-d1xtp4-5000x250", 48): (3.90, 0.56),
    _k("h200-spread-p1xtp4-d1xtp4-5000x250", 64): (4.81, 0.51),
    _k("h100-1p1d-nixl-tp4-8000x1000", 64): (0.11, 0.81),
}


# The third record (raypd65, SHAPED: written after the second was read): the replay with the
# points' own client (`vllm bench serve`, every request averaged, the first burst included),
# committed at CLIENT_COMMIT before this one rerun; nothing tuned after it.
CLIENT_COMMIT: str | None = "02527b29"
CLIENT_EVALUATION: str | None = (
    "02527b29, 2026-12-07 (shaped): 61 of 61 points replayed; both inside the band 6 of 61 "
    "(10%), TTFT 10 of 61 (16%), TPOT 16 of 61 (26%); median ratio TTFT 0.77, TPOT 0.69")
CLIENT_ROWS: dict[str, tuple[float | None, float | None]] = {
    _k("h100-pack-p1xtp2-d1xtp2-5000x250", 4): (0.66, 0.74),
    _k("h100-pack-p1xtp2-d1xtp2-5000x250", 8): (0.97, 0.77),
    _k("h100-pack-p1xtp2-d1xtp2-5000x250", 16): (0.87, 0.82),
    _k("h100-pack-p1xtp2-d1xtp2-5000x250", 32): (2.47, 0.79),
    _k("h100-pack-p1xtp2-d1xtp2-5000x250", 48): (3.11, 0.45),
    _k("h100-pack-p1xtp2-d1xtp2-5000x250", 64): (1.80, 0.47),
    _k("h100-pack-p1xtp2-d2xtp2-5000x250", 4): (0.31, 0.69),
    _k("h100-pack-p1xtp2-d2xtp2-5000x250", 8): (0.85, 0.71),
    _k("h100-pack-p1xtp2-d2xtp2-5000x250", 16): (1.17, 0.73),
    _k("h100-pack-p1xtp2-d2xtp2-5000x250", 32): (3.38, 0.59),
    _k("h100-pack-p1xtp2-d2xtp2-5000x250", 48): (2.82, 0.46),
    _k("h100-pack-p1xtp2-d2xtp2-5000x250", 64): (1.65, 0.42),
    _k("h100-pack-p1xtp2-d3xtp2-5000x250", 4): (0.27, 0.72),
    _k("h100-pack-p1xtp2-d3xtp2-5000x250", 8): (0.77, 0.69),
    _k("h100-pack-p1xtp2-d3xtp2-5000x250", 16): (1.78, 0.67),
    _k("h100-pack-p1xtp2-d3xtp2-5000x250", 32): (4.07, 0.56),
    _k("h100-pack-p1xtp2-d3xtp2-5000x250", 48): (2.55, 0.47),
    _k("h100-pack-p1xtp2-d3xtp2-5000x250", 64): (1.42, 0.51),
    _k("h100-pack-p1xtp4-d1xtp4-5000x250", 4): (0.56, 0.73),
    _k("h100-pack-p1xtp4-d1xtp4-5000x250", 8): (0.73, 0.73),
    _k("h100-pack-p1xtp4-d1xtp4-5000x250", 16): (0.67, 0.76),
    _k("h100-pack-p1xtp4-d1xtp4-5000x250", 32): (0.93, 0.77),
    _k("h100-pack-p1xtp4-d1xtp4-5000x250", 48): (2.90, 0.67),
    _k("h100-pack-p1xtp4-d1xtp4-5000x250", 64): (4.43, 0.60),
    _k("h100-pack-p2xtp2-d1xtp2-5000x250", 4): (0.23, 0.79),
    _k("h100-pack-p2xtp2-d1xtp2-5000x250", 8): (0.86, 0.91),
    _k("h100-pack-p2xtp2-d1xtp2-5000x250", 16): (0.72, 1.03),
    _k("h100-pack-p2xtp2-d1xtp2-5000x250", 32): (0.73, 1.13),
    _k("h100-pack-p2xtp2-d1xtp2-5000x250", 48): (0.91, 1.17),
    _k("h100-pack-p2xtp2-d1xtp2-5000x250", 64): (0.69, 0.89),
    _k("h100-pack-p2xtp2-d1xtp4-5000x250", 4): (0.23, 0.64),
    _k("h100-pack-p2xtp2-d1xtp4-5000x250", 8): (0.49, 0.67),
    _k("h100-pack-p2xtp2-d1xtp4-5000x250", 16): (0.42, 0.66),
    _k("h100-pack-p2xtp2-d1xtp4-5000x250", 32): (0.42, 0.60),
    _k("h100-pack-p2xtp2-d1xtp4-5000x250", 48): (0.96, 0.56),
    _k("h100-pack-p2xtp2-d1xtp4-5000x250", 64): (1.64, 0.52),
    _k("h100-pack-p3xtp2-d1xtp2-5000x250", 4): (0.21, 0.66),
    _k("h100-pack-p3xtp2-d1xtp2-5000x250", 8): (0.59, 0.79),
    _k("h100-pack-p3xtp2-d1xtp2-5000x250", 16): (0.66, 0.85),
    _k("h100-pack-p3xtp2-d1xtp2-5000x250", 32): (0.68, 0.92),
    _k("h100-pack-p3xtp2-d1xtp2-5000x250", 48): (0.45, 0.61),
    _k("h100-pack-p3xtp2-d1xtp2-5000x250", 64): (0.34, 0.69),
    _k("h100-spread-srd-p1xtp4-d1xtp4-5000x250", 4): (0.48, 0.73),
    _k("h100-spread-srd-p1xtp4-d1xtp4-5000x250", 8): (0.61, 0.73),
    _k("h100-spread-srd-p1xtp4-d1xtp4-5000x250", 16): (0.65, 0.75),
    _k("h100-spread-srd-p1xtp4-d1xtp4-5000x250", 32): (0.96, 0.75),
    _k("h100-spread-srd-p1xtp4-d1xtp4-5000x250", 48): (2.59, 0.66),
    _k("h100-spread-srd-p1xtp4-d1xtp4-5000x250", 64): (4.38, 0.59),
    _k("h200-pack-p1xtp4-d1xtp4-5000x250", 4): (0.59, 0.71),
    _k("h200-pack-p1xtp4-d1xtp4-5000x250", 8): (0.67, 0.69),
    _k("h200-pack-p1xtp4-d1xtp4-5000x250", 16): (0.68, 0.68),
    _k("h200-pack-p1xtp4-d1xtp4-5000x250", 32): (1.76, 0.63),
    _k("h200-pack-p1xtp4-d1xtp4-5000x250", 48): (3.44, 0.54),
    _k("h200-pack-p1xtp4-d1xtp4-5000x250", 64): (5.27, 0.49),
    _k("h200-spread-p1xtp4-d1xtp4-5000x250", 4): (0.53, 0.72),
    _k("h200-spread-p1xtp4-d1xtp4-5000x250", 8): (0.73, 0.70),
    _k("h200-spread-p1xtp4-d1xtp4-5000x250", 16): (0.68, 0.69),
    _k("h200-spread-p1xtp4-d1xtp4-5000x250", 32): (1.76, 0.64),
    _k("h200-spread-p1xtp4-d1xtp4-5000x250", 48): (3.88, 0.55),
    _k("h200-spread-p1xtp4-d1xtp4-5000x250", 64): (4.62, 0.50),
    _k("h100-1p1d-nixl-tp4-8000x1000", 64): (0.64, 0.79),
}


# The fourth record (pdhost65, SHAPED as the third: the same rows, read before): vLLM's
# engine-core host work charged in the disaggregated role steps as `kvplan simulate` charges
# it in a collocated step (kvplan.analysis.disagg role_host; 0.11.0: synchronous scheduling,
# 71.1 us + 11.98 us a scheduled request added to each prefill and decode step), committed at
# HOST_COMMIT before this one rerun; nothing tuned after it. The rule follows vLLM's code and
# simulate's default; it was not written for this set (raypd65 named the gap).
HOST_COMMIT: str | None = "613a6c16"
HOST_EVALUATION: str | None = (
    "613a6c16, 2026-12-07 (shaped): 61 of 61 points replayed; both inside the band 6 of 61 "
    "(10%), TTFT 10 of 61 (16%), TPOT 22 of 61 (36%); median ratio TTFT 0.78, TPOT 0.72")
HOST_ROWS: dict[str, tuple[float | None, float | None]] = {
    _k("h100-pack-p1xtp2-d1xtp2-5000x250", 4): (0.67, 0.76),
    _k("h100-pack-p1xtp2-d1xtp2-5000x250", 8): (0.97, 0.79),
    _k("h100-pack-p1xtp2-d1xtp2-5000x250", 16): (0.86, 0.85),
    _k("h100-pack-p1xtp2-d1xtp2-5000x250", 32): (2.24, 0.84),
    _k("h100-pack-p1xtp2-d1xtp2-5000x250", 48): (2.98, 0.48),
    _k("h100-pack-p1xtp2-d1xtp2-5000x250", 64): (1.75, 0.50),
    _k("h100-pack-p1xtp2-d2xtp2-5000x250", 4): (0.31, 0.71),
    _k("h100-pack-p1xtp2-d2xtp2-5000x250", 8): (0.85, 0.72),
    _k("h100-pack-p1xtp2-d2xtp2-5000x250", 16): (1.11, 0.75),
    _k("h100-pack-p1xtp2-d2xtp2-5000x250", 32): (3.30, 0.62),
    _k("h100-pack-p1xtp2-d2xtp2-5000x250", 48): (2.78, 0.48),
    _k("h100-pack-p1xtp2-d2xtp2-5000x250", 64): (1.64, 0.43),
    _k("h100-pack-p1xtp2-d3xtp2-5000x250", 4): (0.27, 0.74),
    _k("h100-pack-p1xtp2-d3xtp2-5000x250", 8): (0.78, 0.70),
    _k("h100-pack-p1xtp2-d3xtp2-5000x250", 16): (1.69, 0.70),
    _k("h100-pack-p1xtp2-d3xtp2-5000x250", 32): (4.01, 0.58),
    _k("h100-pack-p1xtp2-d3xtp2-5000x250", 48): (2.53, 0.49),
    _k("h100-pack-p1xtp2-d3xtp2-5000x250", 64): (1.41, 0.53),
    _k("h100-pack-p1xtp4-d1xtp4-5000x250", 4): (0.56, 0.75),
    _k("h100-pack-p1xtp4-d1xtp4-5000x250", 8): (0.73, 0.76),
    _k("h100-pack-p1xtp4-d1xtp4-5000x250", 16): (0.68, 0.80),
    _k("h100-pack-p1xtp4-d1xtp4-5000x250", 32): (0.85, 0.82),
    _k("h100-pack-p1xtp4-d1xtp4-5000x250", 48): (2.61, 0.73),
    _k("h100-pack-p1xtp4-d1xtp4-5000x250", 64): (4.16, 0.65),
    _k("h100-pack-p2xtp2-d1xtp2-5000x250", 4): (0.23, 0.81),
    _k("h100-pack-p2xtp2-d1xtp2-5000x250", 8): (0.86, 0.93),
    _k("h100-pack-p2xtp2-d1xtp2-5000x250", 16): (0.73, 1.06),
    _k("h100-pack-p2xtp2-d1xtp2-5000x250", 32): (0.74, 1.17),
    _k("h100-pack-p2xtp2-d1xtp2-5000x250", 48): (0.91, 1.22),
    _k("h100-pack-p2xtp2-d1xtp2-5000x250", 64): (0.68, 0.93),
    _k("h100-pack-p2xtp2-d1xtp4-5000x250", 4): (0.23, 0.66),
    _k("h100-pack-p2xtp2-d1xtp4-5000x250", 8): (0.49, 0.70),
    _k("h100-pack-p2xtp2-d1xtp4-5000x250", 16): (0.42, 0.68),
    _k("h100-pack-p2xtp2-d1xtp4-5000x250", 32): (0.42, 0.64),
    _k("h100-pack-p2xtp2-d1xtp4-5000x250", 48): (0.79, 0.61),
    _k("h100-pack-p2xtp2-d1xtp4-5000x250", 64): (1.49, 0.57),
    _k("h100-pack-p3xtp2-d1xtp2-5000x250", 4): (0.21, 0.68),
    _k("h100-pack-p3xtp2-d1xtp2-5000x250", 8): (0.58, 0.81),
    _k("h100-pack-p3xtp2-d1xtp2-5000x250", 16): (0.66, 0.88),
    _k("h100-pack-p3xtp2-d1xtp2-5000x250", 32): (0.72, 0.95),
    _k("h100-pack-p3xtp2-d1xtp2-5000x250", 48): (0.46, 0.63),
    _k("h100-pack-p3xtp2-d1xtp2-5000x250", 64): (0.34, 0.72),
    _k("h100-spread-srd-p1xtp4-d1xtp4-5000x250", 4): (0.48, 0.75),
    _k("h100-spread-srd-p1xtp4-d1xtp4-5000x250", 8): (0.61, 0.75),
    _k("h100-spread-srd-p1xtp4-d1xtp4-5000x250", 16): (0.66, 0.78),
    _k("h100-spread-srd-p1xtp4-d1xtp4-5000x250", 32): (0.88, 0.80),
    _k("h100-spread-srd-p1xtp4-d1xtp4-5000x250", 48): (2.32, 0.72),
    _k("h100-spread-srd-p1xtp4-d1xtp4-5000x250", 64): (4.11, 0.64),
    _k("h200-pack-p1xtp4-d1xtp4-5000x250", 4): (0.60, 0.73),
    _k("h200-pack-p1xtp4-d1xtp4-5000x250", 8): (0.67, 0.72),
    _k("h200-pack-p1xtp4-d1xtp4-5000x250", 16): (0.68, 0.72),
    _k("h200-pack-p1xtp4-d1xtp4-5000x250", 32): (1.49, 0.68),
    _k("h200-pack-p1xtp4-d1xtp4-5000x250", 48): (3.22, 0.59),
    _k("h200-pack-p1xtp4-d1xtp4-5000x250", 64): (5.06, 0.53),
    _k("h200-spread-p1xtp4-d1xtp4-5000x250", 4): (0.53, 0.74),
    _k("h200-spread-p1xtp4-d1xtp4-5000x250", 8): (0.72, 0.73),
    _k("h200-spread-p1xtp4-d1xtp4-5000x250", 16): (0.69, 0.72),
    _k("h200-spread-p1xtp4-d1xtp4-5000x250", 32): (1.50, 0.69),
    _k("h200-spread-p1xtp4-d1xtp4-5000x250", 48): (3.63, 0.60),
    _k("h200-spread-p1xtp4-d1xtp4-5000x250", 64): (4.43, 0.55),
    _k("h100-1p1d-nixl-tp4-8000x1000", 64): (0.64, 0.85),
}

# Fifth record, SHAPED (STOP64_EVALUATION, STOP64_ROWS): the replay at STOP64_COMMIT, stop 64's
# merged rules: hopperops65's norm and FP8-quantization bytes in every prefill step
# (kvplan.perf.norm_traffic; vLLM's gpt-oss norms run whole on every TP rank) and the eager
# prefill launch refitted with it (67.04 -> 63.2 us; not charged to vLLM), merged with
# nixl011_65's, raypd65's and pdhost65's changes. No rule written for this set; nothing tuned.
STOP64_COMMIT: str | None = "0922b48b"
STOP64_EVALUATION: str | None = (
    "0922b48b, 2026-12-07 (shaped): 61 of 61 points replayed; both inside the band 7 of 61 "
    "(11%), TTFT 11 of 61 (18%), TPOT 21 of 61 (34%); median ratio TTFT 0.79, "
    "TPOT 0.72")
STOP64_ROWS: dict[str, tuple[float | None, float | None]] = {
    _k("h100-pack-p1xtp2-d1xtp2-5000x250", 4): (0.68, 0.76),
    _k("h100-pack-p1xtp2-d1xtp2-5000x250", 8): (0.99, 0.79),
    _k("h100-pack-p1xtp2-d1xtp2-5000x250", 16): (0.89, 0.84),
    _k("h100-pack-p1xtp2-d1xtp2-5000x250", 32): (2.46, 0.82),
    _k("h100-pack-p1xtp2-d1xtp2-5000x250", 48): (3.14, 0.47),
    _k("h100-pack-p1xtp2-d1xtp2-5000x250", 64): (1.83, 0.49),
    _k("h100-pack-p1xtp2-d2xtp2-5000x250", 4): (0.32, 0.71),
    _k("h100-pack-p1xtp2-d2xtp2-5000x250", 8): (0.86, 0.72),
    _k("h100-pack-p1xtp2-d2xtp2-5000x250", 16): (1.2, 0.74),
    _k("h100-pack-p1xtp2-d2xtp2-5000x250", 32): (3.45, 0.61),
    _k("h100-pack-p1xtp2-d2xtp2-5000x250", 48): (2.88, 0.47),
    _k("h100-pack-p1xtp2-d2xtp2-5000x250", 64): (1.69, 0.43),
    _k("h100-pack-p1xtp2-d3xtp2-5000x250", 4): (0.27, 0.74),
    _k("h100-pack-p1xtp2-d3xtp2-5000x250", 8): (0.79, 0.7),
    _k("h100-pack-p1xtp2-d3xtp2-5000x250", 16): (1.82, 0.69),
    _k("h100-pack-p1xtp2-d3xtp2-5000x250", 32): (4.17, 0.57),
    _k("h100-pack-p1xtp2-d3xtp2-5000x250", 48): (2.61, 0.48),
    _k("h100-pack-p1xtp2-d3xtp2-5000x250", 64): (1.45, 0.52),
    _k("h100-pack-p1xtp4-d1xtp4-5000x250", 4): (0.58, 0.75),
    _k("h100-pack-p1xtp4-d1xtp4-5000x250", 8): (0.75, 0.76),
    _k("h100-pack-p1xtp4-d1xtp4-5000x250", 16): (0.7, 0.8),
    _k("h100-pack-p1xtp4-d1xtp4-5000x250", 32): (0.95, 0.81),
    _k("h100-pack-p1xtp4-d1xtp4-5000x250", 48): (2.95, 0.71),
    _k("h100-pack-p1xtp4-d1xtp4-5000x250", 64): (4.54, 0.64),
    _k("h100-pack-p2xtp2-d1xtp2-5000x250", 4): (0.23, 0.81),
    _k("h100-pack-p2xtp2-d1xtp2-5000x250", 8): (0.87, 0.93),
    _k("h100-pack-p2xtp2-d1xtp2-5000x250", 16): (0.74, 1.06),
    _k("h100-pack-p2xtp2-d1xtp2-5000x250", 32): (0.74, 1.17),
    _k("h100-pack-p2xtp2-d1xtp2-5000x250", 48): (0.94, 1.22),
    _k("h100-pack-p2xtp2-d1xtp2-5000x250", 64): (0.7, 0.93),
    _k("h100-pack-p2xtp2-d1xtp4-5000x250", 4): (0.23, 0.66),
    _k("h100-pack-p2xtp2-d1xtp4-5000x250", 8): (0.5, 0.7),
    _k("h100-pack-p2xtp2-d1xtp4-5000x250", 16): (0.43, 0.68),
    _k("h100-pack-p2xtp2-d1xtp4-5000x250", 32): (0.42, 0.64),
    _k("h100-pack-p2xtp2-d1xtp4-5000x250", 48): (0.88, 0.6),
    _k("h100-pack-p2xtp2-d1xtp4-5000x250", 64): (1.58, 0.56),
    _k("h100-pack-p3xtp2-d1xtp2-5000x250", 4): (0.21, 0.68),
    _k("h100-pack-p3xtp2-d1xtp2-5000x250", 8): (0.6, 0.81),
    _k("h100-pack-p3xtp2-d1xtp2-5000x250", 16): (0.68, 0.88),
    _k("h100-pack-p3xtp2-d1xtp2-5000x250", 32): (0.73, 0.95),
    _k("h100-pack-p3xtp2-d1xtp2-5000x250", 48): (0.47, 0.63),
    _k("h100-pack-p3xtp2-d1xtp2-5000x250", 64): (0.35, 0.72),
    _k("h100-spread-srd-p1xtp4-d1xtp4-5000x250", 4): (0.5, 0.75),
    _k("h100-spread-srd-p1xtp4-d1xtp4-5000x250", 8): (0.64, 0.75),
    _k("h100-spread-srd-p1xtp4-d1xtp4-5000x250", 16): (0.67, 0.78),
    _k("h100-spread-srd-p1xtp4-d1xtp4-5000x250", 32): (0.99, 0.79),
    _k("h100-spread-srd-p1xtp4-d1xtp4-5000x250", 48): (2.63, 0.71),
    _k("h100-spread-srd-p1xtp4-d1xtp4-5000x250", 64): (4.49, 0.62),
    _k("h200-pack-p1xtp4-d1xtp4-5000x250", 4): (0.61, 0.73),
    _k("h200-pack-p1xtp4-d1xtp4-5000x250", 8): (0.69, 0.72),
    _k("h200-pack-p1xtp4-d1xtp4-5000x250", 16): (0.68, 0.72),
    _k("h200-pack-p1xtp4-d1xtp4-5000x250", 32): (1.67, 0.67),
    _k("h200-pack-p1xtp4-d1xtp4-5000x250", 48): (3.42, 0.58),
    _k("h200-pack-p1xtp4-d1xtp4-5000x250", 64): (5.31, 0.52),
    _k("h200-spread-p1xtp4-d1xtp4-5000x250", 4): (0.54, 0.74),
    _k("h200-spread-p1xtp4-d1xtp4-5000x250", 8): (0.74, 0.73),
    _k("h200-spread-p1xtp4-d1xtp4-5000x250", 16): (0.7, 0.72),
    _k("h200-spread-p1xtp4-d1xtp4-5000x250", 32): (1.68, 0.68),
    _k("h200-spread-p1xtp4-d1xtp4-5000x250", 48): (3.86, 0.59),
    _k("h200-spread-p1xtp4-d1xtp4-5000x250", 64): (4.65, 0.54),
    _k("h100-1p1d-nixl-tp4-8000x1000", 64): (0.67, 0.85),
}

# Sixth record, SHAPED (PAD_EVALUATION, PAD_ROWS; raypd66): the replay with vLLM's disaggregated
# decode steps padded to the next CUDA-graph capture size (kvplan.perf.graph_padding), committed
# at PAD_COMMIT before this one rerun; nothing tuned after it.
PAD_COMMIT: str | None = "33577e7f"
PAD_EVALUATION: str | None = (
    "33577e7f, 2026-12-07 (shaped): 61 of 61 points replayed; both inside the band 9 of 61 "
    "(15%), TTFT 12 of 61 (20%), TPOT 23 of 61 (38%); median ratio TTFT 0.80, TPOT 0.74")
PAD_ROWS: dict[str, tuple[float | None, float | None]] = {
    _k("h100-pack-p1xtp2-d1xtp2-5000x250", 4): (0.68, 0.77),
    _k("h100-pack-p1xtp2-d1xtp2-5000x250", 8): (0.99, 0.82),
    _k("h100-pack-p1xtp2-d1xtp2-5000x250", 16): (0.91, 0.88),
    _k("h100-pack-p1xtp2-d1xtp2-5000x250", 32): (2.0, 0.92),
    _k("h100-pack-p1xtp2-d1xtp2-5000x250", 48): (2.87, 0.53),
    _k("h100-pack-p1xtp2-d1xtp2-5000x250", 64): (1.72, 0.54),
    _k("h100-pack-p1xtp2-d2xtp2-5000x250", 4): (0.32, 0.71),
    _k("h100-pack-p1xtp2-d2xtp2-5000x250", 8): (0.87, 0.74),
    _k("h100-pack-p1xtp2-d2xtp2-5000x250", 16): (1.1, 0.79),
    _k("h100-pack-p1xtp2-d2xtp2-5000x250", 32): (3.33, 0.64),
    _k("h100-pack-p1xtp2-d2xtp2-5000x250", 48): (2.83, 0.5),
    _k("h100-pack-p1xtp2-d2xtp2-5000x250", 64): (1.67, 0.45),
    _k("h100-pack-p1xtp2-d3xtp2-5000x250", 4): (0.27, 0.74),
    _k("h100-pack-p1xtp2-d3xtp2-5000x250", 8): (0.8, 0.73),
    _k("h100-pack-p1xtp2-d3xtp2-5000x250", 16): (1.71, 0.72),
    _k("h100-pack-p1xtp2-d3xtp2-5000x250", 32): (4.06, 0.6),
    _k("h100-pack-p1xtp2-d3xtp2-5000x250", 48): (2.58, 0.51),
    _k("h100-pack-p1xtp2-d3xtp2-5000x250", 64): (1.44, 0.56),
    _k("h100-pack-p1xtp4-d1xtp4-5000x250", 4): (0.58, 0.75),
    _k("h100-pack-p1xtp4-d1xtp4-5000x250", 8): (0.76, 0.77),
    _k("h100-pack-p1xtp4-d1xtp4-5000x250", 16): (0.72, 0.81),
    _k("h100-pack-p1xtp4-d1xtp4-5000x250", 32): (0.91, 0.84),
    _k("h100-pack-p1xtp4-d1xtp4-5000x250", 48): (2.79, 0.75),
    _k("h100-pack-p1xtp4-d1xtp4-5000x250", 64): (4.38, 0.67),
    _k("h100-pack-p2xtp2-d1xtp2-5000x250", 4): (0.23, 0.81),
    _k("h100-pack-p2xtp2-d1xtp2-5000x250", 8): (0.88, 0.95),
    _k("h100-pack-p2xtp2-d1xtp2-5000x250", 16): (0.74, 1.1),
    _k("h100-pack-p2xtp2-d1xtp2-5000x250", 32): (0.76, 1.2),
    _k("h100-pack-p2xtp2-d1xtp2-5000x250", 48): (0.92, 1.24),
    _k("h100-pack-p2xtp2-d1xtp2-5000x250", 64): (0.69, 0.94),
    _k("h100-pack-p2xtp2-d1xtp4-5000x250", 4): (0.23, 0.66),
    _k("h100-pack-p2xtp2-d1xtp4-5000x250", 8): (0.5, 0.7),
    _k("h100-pack-p2xtp2-d1xtp4-5000x250", 16): (0.43, 0.71),
    _k("h100-pack-p2xtp2-d1xtp4-5000x250", 32): (0.42, 0.65),
    _k("h100-pack-p2xtp2-d1xtp4-5000x250", 48): (0.84, 0.61),
    _k("h100-pack-p2xtp2-d1xtp4-5000x250", 64): (1.55, 0.57),
    _k("h100-pack-p3xtp2-d1xtp2-5000x250", 4): (0.21, 0.68),
    _k("h100-pack-p3xtp2-d1xtp2-5000x250", 8): (0.6, 0.83),
    _k("h100-pack-p3xtp2-d1xtp2-5000x250", 16): (0.69, 0.9),
    _k("h100-pack-p3xtp2-d1xtp2-5000x250", 32): (0.71, 0.97),
    _k("h100-pack-p3xtp2-d1xtp2-5000x250", 48): (0.47, 0.64),
    _k("h100-pack-p3xtp2-d1xtp2-5000x250", 64): (0.35, 0.73),
    _k("h100-spread-srd-p1xtp4-d1xtp4-5000x250", 4): (0.5, 0.75),
    _k("h100-spread-srd-p1xtp4-d1xtp4-5000x250", 8): (0.63, 0.77),
    _k("h100-spread-srd-p1xtp4-d1xtp4-5000x250", 16): (0.68, 0.8),
    _k("h100-spread-srd-p1xtp4-d1xtp4-5000x250", 32): (0.93, 0.82),
    _k("h100-spread-srd-p1xtp4-d1xtp4-5000x250", 48): (2.48, 0.74),
    _k("h100-spread-srd-p1xtp4-d1xtp4-5000x250", 64): (4.33, 0.66),
    _k("h200-pack-p1xtp4-d1xtp4-5000x250", 4): (0.61, 0.74),
    _k("h200-pack-p1xtp4-d1xtp4-5000x250", 8): (0.69, 0.73),
    _k("h200-pack-p1xtp4-d1xtp4-5000x250", 16): (0.71, 0.73),
    _k("h200-pack-p1xtp4-d1xtp4-5000x250", 32): (1.47, 0.72),
    _k("h200-pack-p1xtp4-d1xtp4-5000x250", 48): (3.24, 0.62),
    _k("h200-pack-p1xtp4-d1xtp4-5000x250", 64): (5.14, 0.56),
    _k("h200-spread-p1xtp4-d1xtp4-5000x250", 4): (0.54, 0.74),
    _k("h200-spread-p1xtp4-d1xtp4-5000x250", 8): (0.74, 0.74),
    _k("h200-spread-p1xtp4-d1xtp4-5000x250", 16): (0.73, 0.74),
    _k("h200-spread-p1xtp4-d1xtp4-5000x250", 32): (1.48, 0.73),
    _k("h200-spread-p1xtp4-d1xtp4-5000x250", 48): (3.66, 0.63),
    _k("h200-spread-p1xtp4-d1xtp4-5000x250", 64): (4.49, 0.58),
    _k("h100-1p1d-nixl-tp4-8000x1000", 64): (0.67, 0.86),
}

# Seventh record, SHAPED SET, RULE NOT WRITTEN ON IT (MARLIN_EVALUATION, MARLIN_ROWS; stop 65's
# merge): tpslope66's Marlin MXFP4 MoE at its padded shapes (vLLM 0.18.0 mxfp4.py:321-342; the
# Marlin path kvplan prices for Hopper before vLLM 0.11.1, these points' 0.11.0), a rule read in
# vLLM's code and decided on prospective57's held-out Marlin runs, none of these points read for
# it; the replay at MARLIN_COMMIT (tpslope66 merged on raypd66's) then at the stop's final merge,
# equal.
MARLIN_COMMIT: str | None = "dc674dc0"
MARLIN_EVALUATION: str | None = (
    "dc674dc0, 2026-12-07 (the set shaped; this rule not written on it): 61 of 61 points "
    "replayed; both inside the band 18 of 61 (30%), TTFT 22 of 61 (36%), TPOT 31 of 61 (51%); "
    "median ratio TTFT 0.91, TPOT 0.75")
MARLIN_ROWS: dict[str, tuple[float | None, float | None]] = {
    _k("h100-pack-p1xtp2-d1xtp2-5000x250", 4): (0.75, 0.8),
    _k("h100-pack-p1xtp2-d1xtp2-5000x250", 8): (1.1, 0.86),
    _k("h100-pack-p1xtp2-d1xtp2-5000x250", 16): (0.98, 0.94),
    _k("h100-pack-p1xtp2-d1xtp2-5000x250", 32): (2.58, 0.95),
    _k("h100-pack-p1xtp2-d1xtp2-5000x250", 48): (3.37, 0.55),
    _k("h100-pack-p1xtp2-d1xtp2-5000x250", 64): (1.97, 0.58),
    _k("h100-pack-p1xtp2-d2xtp2-5000x250", 4): (0.35, 0.72),
    _k("h100-pack-p1xtp2-d2xtp2-5000x250", 8): (0.95, 0.76),
    _k("h100-pack-p1xtp2-d2xtp2-5000x250", 16): (1.31, 0.83),
    _k("h100-pack-p1xtp2-d2xtp2-5000x250", 32): (3.83, 0.68),
    _k("h100-pack-p1xtp2-d2xtp2-5000x250", 48): (3.2, 0.52),
    _k("h100-pack-p1xtp2-d2xtp2-5000x250", 64): (1.88, 0.48),
    _k("h100-pack-p1xtp2-d3xtp2-5000x250", 4): (0.3, 0.75),
    _k("h100-pack-p1xtp2-d3xtp2-5000x250", 8): (0.91, 0.74),
    _k("h100-pack-p1xtp2-d3xtp2-5000x250", 16): (2.2, 0.72),
    _k("h100-pack-p1xtp2-d3xtp2-5000x250", 32): (4.75, 0.59),
    _k("h100-pack-p1xtp2-d3xtp2-5000x250", 48): (2.95, 0.5),
    _k("h100-pack-p1xtp2-d3xtp2-5000x250", 64): (1.63, 0.55),
    _k("h100-pack-p1xtp4-d1xtp4-5000x250", 4): (0.63, 0.77),
    _k("h100-pack-p1xtp4-d1xtp4-5000x250", 8): (0.83, 0.8),
    _k("h100-pack-p1xtp4-d1xtp4-5000x250", 16): (0.76, 0.85),
    _k("h100-pack-p1xtp4-d1xtp4-5000x250", 32): (1.04, 0.89),
    _k("h100-pack-p1xtp4-d1xtp4-5000x250", 48): (3.31, 0.77),
    _k("h100-pack-p1xtp4-d1xtp4-5000x250", 64): (5.05, 0.68),
    _k("h100-pack-p2xtp2-d1xtp2-5000x250", 4): (0.26, 0.83),
    _k("h100-pack-p2xtp2-d1xtp2-5000x250", 8): (0.97, 0.99),
    _k("h100-pack-p2xtp2-d1xtp2-5000x250", 16): (0.82, 1.17),
    _k("h100-pack-p2xtp2-d1xtp2-5000x250", 32): (0.84, 1.3),
    _k("h100-pack-p2xtp2-d1xtp2-5000x250", 48): (1.03, 1.34),
    _k("h100-pack-p2xtp2-d1xtp2-5000x250", 64): (0.78, 1.02),
    _k("h100-pack-p2xtp2-d1xtp4-5000x250", 4): (0.25, 0.67),
    _k("h100-pack-p2xtp2-d1xtp4-5000x250", 8): (0.55, 0.73),
    _k("h100-pack-p2xtp2-d1xtp4-5000x250", 16): (0.47, 0.74),
    _k("h100-pack-p2xtp2-d1xtp4-5000x250", 32): (0.47, 0.69),
    _k("h100-pack-p2xtp2-d1xtp4-5000x250", 48): (1.05, 0.64),
    _k("h100-pack-p2xtp2-d1xtp4-5000x250", 64): (1.83, 0.6),
    _k("h100-pack-p3xtp2-d1xtp2-5000x250", 4): (0.24, 0.7),
    _k("h100-pack-p3xtp2-d1xtp2-5000x250", 8): (0.66, 0.87),
    _k("h100-pack-p3xtp2-d1xtp2-5000x250", 16): (0.84, 0.96),
    _k("h100-pack-p3xtp2-d1xtp2-5000x250", 32): (0.78, 1.05),
    _k("h100-pack-p3xtp2-d1xtp2-5000x250", 48): (0.53, 0.7),
    _k("h100-pack-p3xtp2-d1xtp2-5000x250", 64): (0.39, 0.79),
    _k("h100-spread-srd-p1xtp4-d1xtp4-5000x250", 4): (0.55, 0.77),
    _k("h100-spread-srd-p1xtp4-d1xtp4-5000x250", 8): (0.69, 0.79),
    _k("h100-spread-srd-p1xtp4-d1xtp4-5000x250", 16): (0.74, 0.84),
    _k("h100-spread-srd-p1xtp4-d1xtp4-5000x250", 32): (1.08, 0.87),
    _k("h100-spread-srd-p1xtp4-d1xtp4-5000x250", 48): (2.94, 0.76),
    _k("h100-spread-srd-p1xtp4-d1xtp4-5000x250", 64): (4.99, 0.67),
    _k("h200-pack-p1xtp4-d1xtp4-5000x250", 4): (0.66, 0.75),
    _k("h200-pack-p1xtp4-d1xtp4-5000x250", 8): (0.75, 0.75),
    _k("h200-pack-p1xtp4-d1xtp4-5000x250", 16): (0.78, 0.76),
    _k("h200-pack-p1xtp4-d1xtp4-5000x250", 32): (1.93, 0.72),
    _k("h200-pack-p1xtp4-d1xtp4-5000x250", 48): (3.82, 0.63),
    _k("h200-pack-p1xtp4-d1xtp4-5000x250", 64): (5.89, 0.56),
    _k("h200-spread-p1xtp4-d1xtp4-5000x250", 4): (0.59, 0.75),
    _k("h200-spread-p1xtp4-d1xtp4-5000x250", 8): (0.81, 0.76),
    _k("h200-spread-p1xtp4-d1xtp4-5000x250", 16): (0.77, 0.77),
    _k("h200-spread-p1xtp4-d1xtp4-5000x250", 32): (1.93, 0.73),
    _k("h200-spread-p1xtp4-d1xtp4-5000x250", 48): (4.32, 0.63),
    _k("h200-spread-p1xtp4-d1xtp4-5000x250", 64): (5.16, 0.58),
    _k("h100-1p1d-nixl-tp4-8000x1000", 64): (0.73, 0.91),
}


def load() -> dict:  # type: ignore[type-arg]
    return json.loads(DATA.read_text())


def key(p: Point) -> str:
    return f"{p.run} @ {p.concurrency}"


def inside(ratio: float | None) -> bool:
    return ratio is not None and BAND[0] <= ratio <= BAND[1]


def replay(run: dict) -> tuple[list[Point], str]:  # type: ignore[type-arg]
    """The run's points replayed, and "" ; or no points and the refusal's first line."""
    try:
        return replay_run(run), ""
    except KvplanError as e:
        return [], str(e).splitlines()[0]


def replay_all() -> tuple[list[Point], dict[str, str]]:
    """Every point of every run replayed, and the runs kvplan refused (id -> why)."""
    points, refused = [], {}
    for run in load()["runs"]:
        got, why = replay(run)
        points += got
        if why:
            refused[run["id"]] = why
    return points, refused


def counts(ratios: list[tuple[float | None, float | None]]) -> str:
    """Both inside the band, TTFT alone, TPOT alone, over `ratios` (TTFT, TPOT) pairs."""
    n = len(ratios)

    def share(k: int) -> str:
        return f"{k} of {n} ({k / n:.0%})" if n else "0 of 0"
    both = sum(inside(t) and inside(o) for t, o in ratios)
    return (f"both {share(both)}; TTFT {share(sum(inside(t) for t, _ in ratios))}; "
            f"TPOT {share(sum(inside(o) for _, o in ratios))}")


def _median(xs: list[float | None]) -> str:
    got = [x for x in xs if x is not None]
    return f"{statistics.median(got):.2f}" if got else "-"


def _fmt(x: float | None, nd: int = 1) -> str:
    return "-" if x is None else f"{x:,.{nd}f}"


def section(points: list[Point], refused: dict[str, str]) -> list[str]:
    """The set as a Markdown section: every point, the counts against the band, per run, and
    the runs kvplan refused."""
    record = (f"the record of their first evaluation: {FIRST_EVALUATION}" if FIRST_EVALUATION
              else "not yet evaluated: this is the first replay (no record yet)")
    if RULE_EVALUATION:
        record += (f"; their first timed evaluation, on the rule that makes them replayable "
                   f"(vLLM's hybrid manager off with a connector before 0.22): "
                   f"{RULE_EVALUATION}")
    if CLIENT_EVALUATION:
        record += (f"; then, shaped (written after that record was read), with the points' own "
                   f"client (vllm bench serve, every request averaged): {CLIENT_EVALUATION}")
    if HOST_EVALUATION:
        record += (f"; then, shaped, with vLLM's engine-core host work in the role steps: "
                   f"{HOST_EVALUATION}")
    if STOP64_EVALUATION:
        record += (f"; then, shaped, at stop 64's merged rules (hopperops65's norm bytes in "
                   f"every prefill step): {STOP64_EVALUATION}")
    if PAD_EVALUATION:
        record += (f"; then, shaped, with vLLM's disaggregated decode steps padded to the next "
                   f"CUDA-graph size: {PAD_EVALUATION}")
    if MARLIN_EVALUATION:
        record += (f"; then with vLLM's Marlin MXFP4 MoE at its padded shapes (a rule not "
                   f"written on these points): {MARLIN_EVALUATION}")
    runs = load()["runs"]
    out = [f"{len(runs)} runs, {len(points)} points (tests/data/disagg/public_disagg_runs65.json, "
           f"frozen at {FREEZE or 'the commit adding it'}); {record}. Ratios are kvplan / "
           f"measured (mean TTFT, mean TPOT); the band is [{BAND[0]}, {BAND[1]}].", "",
           "| run | conc. | measured TTFT / TPOT ms | kvplan TTFT / TPOT ms | ratio TTFT | "
           "ratio TPOT |", "|---|---|---|---|---|---|"]
    return out + points_lines(points, runs, refused)


def points_lines(points: list[Point], runs: list[dict], refused: dict[str, str]  # type: ignore[type-arg]
                 ) -> list[str]:
    """A P/D set's table rows (one a point), its counts against the band (a refused point
    counted outside) and one line a run (prospdis65's and prospdis66's sections)."""
    out: list[str] = []
    for p in points:
        ttft = "prefill saturated" if p.ttft_ms is None else _fmt(p.ttft_ms)
        out.append(f"| {p.run} | {p.concurrency} | {_fmt(p.measured_ttft_ms)} / "
                   f"{_fmt(p.measured_tpot_ms, 2)} | {ttft} / {_fmt(p.tpot_ms, 2)} | "
                   f"{_fmt(p.ttft_ratio, 2)} | {_fmt(p.tpot_ratio, 2)} |")
    pairs = [(p.ttft_ratio, p.tpot_ratio) for p in points]
    n_refused = sum(len(r["points"]) for r in runs if r["id"] in refused)
    pairs += [(None, None)] * n_refused  # a refused point is not inside the band
    out += ["", f"Inside the band (refused points counted outside): {counts(pairs)}; median "
            f"ratio TTFT {_median([t for t, _ in pairs])}, TPOT "
            f"{_median([o for _, o in pairs])}.", ""]
    for run in runs:
        if run["id"] in refused:
            out.append(f"- {run['id']}: refused ({len(run['points'])} points): "
                       f"{refused[run['id']]}")
            continue
        mine = [(p.ttft_ratio, p.tpot_ratio) for p in points if p.run == run["id"]]
        out.append(f"- {run['id']}: {counts(mine)}; median ratio TTFT "
                   f"{_median([t for t, _ in mine])}, TPOT {_median([o for _, o in mine])}")
    return out


if __name__ == "__main__":
    print("\n".join(section(*replay_all())))
