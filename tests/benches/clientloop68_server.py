"""A loopback fake of vLLM's OpenAI-compatible streaming /v1/completions for clientloop68 (run
with ~/vllm-cpu/bin/python, which has aiohttp; kvplan is not imported): an "engine" that steps
every `--step-ms`, gives every running stream one token a step, and ends a stream after its
`max_tokens`. A request joins at the next step after it arrived, so requests that arrived within
one step start, and end, at the same step: the group of K streams that end at one instant.

Per request it records, on the server's clock (time.perf_counter: CLOCK_MONOTONIC, one clock for
every process of the host): `arrive_s` (the handler entered: headers parsed, before the body is
read), `tick_s` (the step that gave its last token) and `end_s` (its last chunk and `data:
[DONE]` written, the stream closed). GET /log returns them as JSON (?reset=1 clears it).

The chunks follow vLLM's completions stream (vllm/entrypoints/openai/serving_completion.py,
0.32): one `data: {...}` event a token with id / object / created / model / choices[{index,
text, logprobs, finish_reason, stop_reason}], the last with finish_reason "length", then the
usage chunk (choices [], stream_options.include_usage), then `data: [DONE]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time

from aiohttp import web


class Engine:
    def __init__(self, step_s: float) -> None:
        self.step_s = step_s
        self.joining: list[asyncio.Queue] = []
        self.running: list[list] = []  # [queue, tokens left]
        self.log: list[dict] = []
        self.wake = asyncio.Event()

    async def loop(self) -> None:
        while True:
            if not self.running and not self.joining:
                self.wake.clear()
                await self.wake.wait()
            await asyncio.sleep(self.step_s)
            tick_s = time.perf_counter()
            for q in self.joining:
                self.running.append(q)
            self.joining = []
            keep = []
            for item in self.running:
                q, left = item
                item[1] = left - 1
                q.put_nowait((item[1] == 0, tick_s))
                if item[1] > 0:
                    keep.append(item)
            self.running = keep


async def completions(request: web.Request) -> web.StreamResponse:
    eng: Engine = request.app["engine"]
    arrive_s = time.perf_counter()
    body = await request.json()
    n = int(body["max_tokens"])
    q: asyncio.Queue = asyncio.Queue()
    eng.joining.append([q, n])
    eng.wake.set()
    resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await resp.prepare(request)
    rid = f"cmpl-{len(eng.log)}"
    created = int(time.time())
    model = body.get("model", "fake")
    tick_s = float("nan")
    for _ in range(n):
        last, tick_s = await q.get()
        chunk = {"id": rid, "object": "text_completion", "created": created, "model": model,
                 "choices": [{"index": 0, "text": " tok", "logprobs": None,
                              "finish_reason": "length" if last else None,
                              "stop_reason": None}], "usage": None}
        await resp.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
    usage = {"id": rid, "object": "text_completion", "created": created, "model": model,
             "choices": [], "usage": {"prompt_tokens": len(body["prompt"].split()),
                                      "total_tokens": 0, "completion_tokens": n}}
    await resp.write(b"data: " + json.dumps(usage).encode() + b"\n\n")
    await resp.write(b"data: [DONE]\n\n")
    await resp.write_eof()
    end_s = time.perf_counter()
    eng.log.append({"arrive_s": arrive_s, "tick_s": tick_s, "end_s": end_s, "tokens": n})
    return resp


async def models(request: web.Request) -> web.Response:
    return web.json_response({"object": "list", "data": [{"id": "fake", "object": "model"}]})


async def get_log(request: web.Request) -> web.Response:
    eng: Engine = request.app["engine"]
    out = web.json_response(eng.log)
    if request.query.get("reset"):
        eng.log = []
    return out


async def main(port: int, step_ms: float) -> None:
    app = web.Application(client_max_size=64 << 20)
    eng = Engine(step_ms / 1e3)
    app["engine"] = eng
    app.router.add_post("/v1/completions", completions)
    app.router.add_get("/v1/models", models)
    app.router.add_get("/log", get_log)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    print("ready", flush=True)
    await eng.loop()


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--step-ms", type=float, required=True)
    a = p.parse_args()
    asyncio.run(main(a.port, a.step_ms))
