"""prospdis65's two open misses (raypd66, issue 29), read from the frozen points and the code the
runs ran; no rule is written here and nothing is fitted.

What the serving stack does (read in the ray 2.51.0 wheel, the release the study names,
prefill_decode/docs/SETUP.md 'ray==2.51.0 (nightly at time of testing)'; the nightly's own
commit is not stated, so a difference from the release is possible):
- ray/llm/_internal/serve/serving_patterns/prefill_decode/pd_server.py: the PD proxy copies
  each request for prefill with kv_transfer_params {do_remote_decode: True, ...},
  max_tokens = 1 and stream = False (:90-106), awaits that request's one response (:143-146),
  then sends the original request with the prefill's kv_transfer_params to decode (:108-116,
  :153-157) and relays its stream. Two engine requests per prompt, the decode one carrying the
  whole prompt again (tokenized again on the decode server); no timer on the way.
- core/server/llm_server.py:242-249, utils/batcher.py:39 and :53-57: with the study's
  stream_batching_interval_ms 0 each token chunk is passed on as it comes (no batching wait).
- constants.py:42-47: the proxy's and servers' max_ongoing_requests default to 1e9 (no queue
  in Ray Serve's router at these loads).
- engines/vllm/vllm_models.py:129-136: the engine runs on Ray's executor
  (distributed_executor_backend "ray"); engines/vllm/vllm_engine.py:74-78: with the OpenAI
  server's batch defaults (UsageContext.OPENAI_API_SERVER: 8,192 tokens, 1,024 sequences on an
  H100, vLLM 0.11.0 engine/arg_utils.py:1607-1614), as kvplan replays them.
- vLLM 0.11.0 v1/executor/ray_distributed_executor.py:94-98: with a KV connector the engine
  core waits for every worker's output each step (not only rank 0's), then aggregates.
None of these gives a time: the Ray Serve hops (ingress, proxy, two engine requests, the
stream back) are not priced by anything in the code, and nothing is charged for them.

The decode side in vLLM 0.11.0 (distributed/kv_transfer/kv_connector/v1/nixl_connector.py) is
what kvplan models (kvplan.engines.vllm.connectors: 1.5 steps beside the transfer), except the
first contact: a decode rank that has not met a prefill engine starts a handshake in a
background thread (`start_load_kv` :1198-1212, `_background_nixl_handshake` :707-730) and the
request's read waits for it; the handshake fetches the remote metadata over ZMQ and
`add_remote_agent` registers a descriptor for every block of every KV region of the remote
engine (:1026-1051; prep_xfer_dlist). Its time is not in the code. Every concurrency of a run
shares one launch and runs in order 4, 8, ..., 64 (prefill_decode/experiments/
pd-ratio-sweep.sh, run_bm.sh), after vllm bench serve's one initial test prompt (vLLM 0.11.0
vllm/benchmarks/serve.py:508-547), so concurrency 4 meets every prefill-decode pair but the
one that prompt warmed. `first_contact_rows` sets that beside the mean TTFT's excess over the
median.

The prefill's capacity (`prefill_rows`): the most requests a second a run with one prefill
worker sustained is a lower bound on that worker's capacity; kvplan's replay at its own most
(where its prefill queue holds the loop) against it, with kvplan's prefill steps (the
simulation's, kvplan.analysis.disagg.prefill_batching).

The TP 2 decode step (`decode_rows`): by Little's law over the measured means, the decode
requests in flight per decode worker, the requests a decode step receives, and kvplan's TPOT
at that batch with its two largest ops (kvplan.analysis.disagg.role_times, the CUDA-graph
padding included).

Run: python -m tests.benches.prospdis65_forensic
"""

from __future__ import annotations

from dataclasses import replace

from kvplan.analysis.disagg import _role_request
from kvplan.analysis.plan_search import predict
from kvplan.sources.resolve import load_model
from tests.benches import disagg_rows
from tests.benches.disagg_public import Point
from tests.benches.prospdis65_runs import load


def little(ttft_ms: float, tpot_ms: float, concurrency: int, output_len: int,
           decode_workers: int = 1) -> tuple[float, float]:
    """(requests / s, decode requests in flight per decode worker) of a closed loop whose
    requests take `ttft_ms` to the first token and `tpot_ms` for each of the other
    output_len - 1: rate = C / (TTFT + (O - 1) x TPOT), in flight = rate x (O - 1) x TPOT."""
    decode_s = (output_len - 1) * tpot_ms / 1e3
    rate = concurrency / (ttft_ms / 1e3 + decode_s)
    return rate, rate * decode_s / decode_workers


def tail_excess_s(point: dict) -> float:  # type: ignore[type-arg]
    """Seconds of TTFT above the median summed over the point's prompts: (mean - median) x
    prompts (the mean's excess a few slow requests make)."""
    return (point["measured_ttft_ms"] - point["median_ttft_ms"]) * point["num_prompts"] / 1e3


def pairs(run: dict) -> int:  # type: ignore[type-arg]
    """The prefill-decode worker pairs of a run (each decode rank handshakes with each prefill
    engine it reads from once)."""
    row = run["row"]
    return int(row["prefill_num_workers"]) * int(row["decode_num_workers"])


def _setup(run: dict):  # type: ignore[no-untyped-def,type-arg]
    row = {**run["row"], "silicon_data_source": ""}
    return disagg_rows.replay_setup(row)


def kvplan_decode(run: dict, batch: int) -> tuple[float, list[tuple[str, float]]]:  # type: ignore[type-arg]
    """kvplan's TPOT (ms) of a decode worker at `batch` requests, and its two largest ops."""
    setup = _setup(run)
    row = run["row"]
    spec, _ = load_model(str(disagg_rows.ROOT / disagg_rows.MODELS[(row["model_path"],
                                                                      row["precision"])][0]))
    req, dec = setup.req, setup.decode
    pred = predict(spec, _role_request(req, batch * dec.layout.replicas),
                   replace(dec, context=req.input_len + req.output_len // 2))
    ops = sorted(pred.decode_ms_by_op.items(), key=lambda kv: -kv[1])[:2]
    return setup.tpot_ms(batch), ops


def first_contact_rows(kvplan_ttft: dict[str, float] | None = None) -> list[str]:
    """Concurrency 4 of every run: pairs, pairs the test prompt left cold, the mean's excess
    over the median, and (given) kvplan's TTFT against the mean and the median."""
    out = ["| run | pairs | cold | mean / median TTFT ms | excess s | kvplan / mean | "
           "kvplan / median |", "|---|---|---|---|---|---|---|"]
    for run in load()["runs"]:
        p = next((p for p in run["points"] if p["concurrency"] == 4), None)
        if p is None:
            continue
        k = (kvplan_ttft or {}).get(run["id"])
        ratio = (f"{k / p['measured_ttft_ms']:.2f} | {k / p['median_ttft_ms']:.2f}"
                 if k else "- | -")
        out.append(f"| {run['id']} | {pairs(run)} | {pairs(run) - 1} | "
                   f"{p['measured_ttft_ms']:,.1f} / {p['median_ttft_ms']:,.1f} | "
                   f"{tail_excess_s(p):.2f} | {ratio} |")
    return out


def decode_rows(min_concurrency: int = 32) -> list[str]:
    """The runs with one TP 2 decode worker at `min_concurrency` users or more: the measured
    TPOT, Little's in-flight decode batch and arrivals a step, kvplan's TPOT there."""
    out = ["| run | conc. | measured TPOT ms | decode batch | arrivals / step | kvplan TPOT ms "
           "| kvplan's largest ops ms |", "|---|---|---|---|---|---|---|"]
    for run in load()["runs"]:
        row = run["row"]
        if row["decode_num_workers"] != "1" or row["decode_tp_size"] != "2":
            continue
        for p in run["points"]:
            if p["concurrency"] < min_concurrency:
                continue
            rate, batch = little(p["measured_ttft_ms"], p["measured_tpot_ms"],
                                 p["concurrency"], int(row["osl"]))
            tpot, ops = kvplan_decode(run, round(batch))
            arrivals = rate * p["measured_tpot_ms"] / 1e3
            out.append(f"| {run['id']} | {p['concurrency']} | {p['measured_tpot_ms']:.2f} | "
                       f"{batch:.1f} | {arrivals:.3f} | {tpot:.2f} | "
                       + ", ".join(f"{k} {v:.2f}" for k, v in ops) + " |")
    return out


def prefill_rows(points: list[Point]) -> list[str]:
    """The runs with one prefill worker: the most requests a second any point ran (Little's
    law over the measured means; a lower bound on the prefill worker's capacity, each request
    prefilled once) against the most kvplan's replay (`points`) ran, with kvplan's prefill
    step of one prompt and of the full token budget."""
    out = ["| run | measured requests/s, most (conc.) | kvplan's, most (conc.) | measured / "
           "kvplan | kvplan's prefill ms: one prompt, the budget |",
           "|---|---|---|---|---|"]
    for run in load()["runs"]:
        row = run["row"]
        if row["prefill_num_workers"] != "1":
            continue
        osl = int(row["osl"])
        rate, conc = max((little(p["measured_ttft_ms"], p["measured_tpot_ms"],
                                 p["concurrency"], osl)[0], p["concurrency"])
                         for p in run["points"])
        mine = [(little(p.ttft_ms, p.tpot_ms, p.concurrency, osl)[0], p.concurrency)
                for p in points if p.run == run["id"] and p.ttft_ms is not None
                and p.tpot_ms is not None]
        k_rate, k_conc = max(mine)
        batching = _setup(run).batching
        budget, isl = batching.token_budget, int(row["isl"])
        out.append(f"| {run['id']} | {rate:.2f} ({conc}) | {k_rate:.2f} ({k_conc}) | "
                   f"{rate / k_rate:.2f} | {batching.step_ms(isl, 1):.1f}, "
                   f"{batching.step_ms(budget, 1):.1f} ({budget:,} tokens) |")
    return out


def section() -> list[str]:
    from tests.benches.prospdis65_runs import replay_all

    points, _ = replay_all()
    at4 = {p.run: p.ttft_ms for p in points if p.concurrency == 4 and p.ttft_ms is not None}
    return ["First contact (concurrency 4, the first point after each launch):", "",
            *first_contact_rows(at4), "",
            "The TP 2 decode step at the measured batch (one decode worker, >= 32 users):", "",
            *decode_rows(), "",
            "The prefill worker's capacity (one prefill worker):", "", *prefill_rows(points)]


if __name__ == "__main__":
    print("\n".join(section()))
