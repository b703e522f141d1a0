"""Hugging Face ids as MODEL (kvplan.sources.hub), with the real huggingface_hub client and never
the network: a pre-filled cache folder (HF_HUB_CACHE in tmp_path, the snapshot layout), and a local
HTTP server on 127.0.0.1 standing in for the Hub (HF_ENDPOINT) that serves the few endpoints the
client calls: HEAD/GET /{repo}/resolve/{revision}/{file}, with Range requests."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan._util.errors import SpecError
from kvplan.capacity.weights import weights_breakdown
from kvplan.cli import app
from kvplan.sources.hub import is_hub_id
from kvplan.sources.resolve import load_model
from tests.test_checkpoint_weights import LLAMA_CONFIG, ROPE, llama_tensors, make_folder

COMMIT = "0123456789abcdef0123456789abcdef01234567"
# The llama of test_checkpoint_weights at TP=1 (derived there): 180,864 bytes stored, plus the
# rotary table vLLM builds at start-up (131,072 bytes).
LLAMA_BYTES = 16384 * 2 + 49152 + 98304 + 640 + ROPE


class FakeHub:
    """Repos as {repo_id: {file name: bytes}}; ``gated`` repos answer 403 GatedRepo."""

    def __init__(self) -> None:
        self.repos: dict[str, dict[str, bytes]] = {}
        self.gated: set[str] = set()
        self.requests: list[tuple[str, str, str | None]] = []  # (method, path, range)
        self.served: dict[str, int] = {}  # file -> bytes sent in bodies
        self.fail_with: int | None = None  # answer every request with this HTTP status

    def add(self, repo: str, folder: Path) -> None:
        self.repos[repo] = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


def _handler(hub: FakeHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:  # keep pytest's output clean
            pass

        def _answer(self, body: bool) -> None:
            hub.requests.append((self.command, self.path, self.headers.get("Range")))
            if hub.fail_with is not None:
                return self._error(hub.fail_with, "ServerError")
            parts = self.path.split("?")[0].strip("/").split("/")
            if len(parts) < 5 or parts[2] != "resolve":
                return self._error(404, "RepoNotFound")
            repo, file = "/".join(parts[:2]), "/".join(parts[4:])
            if repo in hub.gated:
                return self._error(403, "GatedRepo")
            if repo not in hub.repos:
                return self._error(404, "RepoNotFound")
            data = hub.repos[repo].get(file)
            if data is None:
                return self._error(404, "EntryNotFound")
            status, chunk = 200, data
            ask = self.headers.get("Range")
            if ask and ask.startswith("bytes="):
                start_s, _, end_s = ask[6:].partition("-")
                start, end = int(start_s), min(int(end_s or len(data) - 1), len(data) - 1)
                status, chunk = 206, data[start:end + 1]
            self.send_response(status)
            self.send_header("X-Repo-Commit", COMMIT)
            self.send_header("ETag", f'"{abs(hash(data)):x}"')
            self.send_header("Content-Length", str(len(chunk)))
            if status == 206:
                self.send_header("Content-Range", f"bytes {start}-{end}/{len(data)}")
            self.end_headers()
            if body:
                hub.served[file] = hub.served.get(file, 0) + len(chunk)
                self.wfile.write(chunk)

        def _error(self, status: int, code: str) -> None:
            payload = json.dumps({"error": code}).encode()
            self.send_response(status)
            self.send_header("X-Error-Code", code)
            if code == "EntryNotFound":  # the Hub names the commit it looked in
                self.send_header("X-Repo-Commit", COMMIT)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)

        def do_HEAD(self) -> None:  # noqa: N802 - http.server's naming
            self._answer(body=False)

        def do_GET(self) -> None:  # noqa: N802
            self._answer(body=True)

    return Handler


@pytest.fixture
def hub_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    hub = FakeHub()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(hub))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02},
                              daemon=True)
    thread.start()
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{server.server_address[1]}")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_TOKEN", "")
    monkeypatch.setenv("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    try:
        yield hub
    finally:
        server.shutdown()
        server.server_close()


def _safetensors_gets(hub: FakeHub) -> list[tuple[str, str, str | None]]:
    return [r for r in hub.requests if r[0] == "GET" and r[1].endswith(".safetensors")]


def test_hub_ids() -> None:
    assert is_hub_id("Qwen/Qwen3-8B")
    assert is_hub_id("meta-llama/Llama-3.1-8B-Instruct")
    for not_id in ("llama-3-8b", "a/b/c", "./x/y", "x/config.json", "spec/model.yaml",
                   "a--b/c", "/abs/path", "org/"):
        assert not is_hub_id(not_id), not_id


def test_single_file_repo_reads_headers_only(hub_env: FakeHub, tmp_path: Path) -> None:
    folder = make_folder(tmp_path / "src", LLAMA_CONFIG, llama_tensors())
    hub_env.add("org/tiny-llama", folder)
    spec, _ = load_model("org/tiny-llama")
    assert spec.id == "tiny-llama" and spec.source == "hf://org/tiny-llama"
    assert spec.checkpoint is not None and len(spec.checkpoint.tensors) == 21
    b = weights_breakdown(spec, tp=1)
    assert (b.source, b.total) == ("checkpoint", LLAMA_BYTES)
    # Every GET of the weight file was a range request, and far less than the file was sent.
    gets = _safetensors_gets(hub_env)
    assert gets and all(r[2] is not None for r in gets)
    size = len(hub_env.repos["org/tiny-llama"]["model.safetensors"])
    assert hub_env.served["model.safetensors"] < size
    # config.json landed in the cache, in the snapshot layout.
    cached = tmp_path / "hf-cache" / "models--org--tiny-llama" / "snapshots" / COMMIT
    assert (cached / "config.json").is_file()
    assert not (cached / "model.safetensors").exists()


def test_sharded_repo(hub_env: FakeHub, tmp_path: Path) -> None:
    folder = make_folder(tmp_path / "src", LLAMA_CONFIG, llama_tensors(), shards=2)
    hub_env.add("org/sharded", folder)
    spec, _ = load_model("org/sharded")
    assert spec.checkpoint is not None and len(spec.checkpoint.files) == 2
    assert weights_breakdown(spec, tp=2).total == (
        8192 * 2 + 2 * (6144 + 12288) * 2 + 640 + ROPE)  # test_checkpoint_weights' TP=2
    gets = _safetensors_gets(hub_env)
    assert {r[1].rsplit("/", 1)[1] for r in gets} == {
        "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"}
    assert all(r[2] is not None for r in gets)


def _fill_cache(cache: Path, repo: str, folder: Path, files: tuple[str, ...], *,
                quant_file_known: bool = True) -> Path:
    """A snapshot holding `files`. `quant_file_known`: when hf_quant_config.json is not among
    them, the cache records that the repo has none (huggingface_hub's .no_exist, written when
    the Hub answered 404 for it: what kvplan's first online look leaves)."""
    root = cache / f"models--{repo.replace('/', '--')}"
    snapshot = root / "snapshots" / COMMIT
    snapshot.mkdir(parents=True)
    (root / "refs").mkdir()
    (root / "refs" / "main").write_text(COMMIT)
    for name in files:
        (snapshot / name).write_bytes((folder / name).read_bytes())
    if quant_file_known and "hf_quant_config.json" not in files:
        (root / ".no_exist" / COMMIT).mkdir(parents=True)
        (root / ".no_exist" / COMMIT / "hf_quant_config.json").touch()
    return snapshot


def test_cache_first_no_request(hub_env: FakeHub, tmp_path: Path) -> None:
    folder = make_folder(tmp_path / "src", LLAMA_CONFIG, llama_tensors())
    _fill_cache(tmp_path / "hf-cache", "org/cached", folder,
                ("config.json", "model.safetensors"))
    spec, _ = load_model("org/cached")
    assert spec.checkpoint is not None
    assert weights_breakdown(spec, tp=1).total == LLAMA_BYTES
    assert hub_env.requests == []


def test_offline_uses_cache_and_falls_back(hub_env: FakeHub, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    folder = make_folder(tmp_path / "src", LLAMA_CONFIG, llama_tensors())
    hub_env.add("org/config-only", folder)
    _fill_cache(tmp_path / "hf-cache", "org/config-only", folder, ("config.json",))
    spec, warnings = load_model("org/config-only")
    assert spec.checkpoint is None
    assert any("HF_HUB_OFFLINE" in w for w in warnings)
    assert weights_breakdown(spec, tp=1).source == "architecture"
    with pytest.raises(SpecError, match="org/absent.*HF_HUB_OFFLINE"):
        load_model("org/absent")
    assert hub_env.requests == []


def _estimate(model: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["estimate", model, "--context", "4096"])
    return result.exit_code, result.stdout, result.stderr


def test_missing_repo_is_one_line_exit_2(hub_env: FakeHub) -> None:
    code, out, err = _estimate("org/no-such-model")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert "org/no-such-model" in err and "no such model" in err


def test_gated_repo_is_one_line_exit_2(hub_env: FakeHub, tmp_path: Path) -> None:
    hub_env.add("org/gated", make_folder(tmp_path / "src", LLAMA_CONFIG, llama_tensors()))
    hub_env.gated.add("org/gated")
    code, out, err = _estimate("org/gated")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert "org/gated" in err and "gated" in err


def test_local_paths_win(hub_env: FakeHub, tmp_path: Path,
                         monkeypatch: pytest.MonkeyPatch) -> None:
    make_folder(tmp_path / "org" / "tiny", LLAMA_CONFIG, llama_tensors())
    monkeypatch.chdir(tmp_path)
    spec, _ = load_model("org/tiny")
    assert spec.checkpoint is not None and spec.source != "hf://org/tiny"
    load_model("llama-3-8b")
    assert hub_env.requests == []


def test_bundled_ids_do_not_import_huggingface_hub() -> None:
    code = ("import sys; from kvplan.sources.resolve import load_model; load_model('llama-3-8b'); "
            "assert 'huggingface_hub' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


# --- names, bounds and one-line answers (issues 28 and 32) -----------------------------------

def test_a_hub_id_of_a_bundled_source_is_the_bundled_spec(hub_env: FakeHub) -> None:
    """model_specs/qwen3-8b.yaml was written from Qwen/Qwen3-8B's config.json: that id reads
    the bundled spec, offline, and says so (any case, as the Hub itself matches ids)."""
    result = CliRunner().invoke(app, ["estimate", "qwen/QWEN3-8b", "--context", "4096"])
    assert result.exit_code == 0, result.stderr
    assert result.stderr.splitlines() == [
        "kvplan: note: qwen/QWEN3-8b is the bundled spec qwen3-8b (read offline; weights from "
        "its architecture)"]
    spec, _ = load_model("Qwen/Qwen3-8B")
    assert spec.id == "qwen3-8b" and spec.checkpoint is None
    assert hub_env.requests == []


def _timed(*args: str) -> tuple[int, str, str, float]:
    t0 = time.monotonic()
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr, time.monotonic() - t0


def test_an_unreachable_hub_fails_fast_with_one_line(hub_env: FakeHub,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Offline (here a refused connection; a name that does not resolve is the same path, and
    took 0.5 s on a machine without DNS, not tested here: a resolver's own wait is outside
    kvplan): exit 2 within 3 s, one line suggesting a bundled id or a folder (huggingface_hub
    alone retried for 24 s, printing each retry)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused
        monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{s.getsockname()[1]}")
        code, out, err, seconds = _timed("estimate", "Qwen/Qwen3-32B", "--context", "4096")
    assert code == 2 and out == "" and seconds <= 3.0, (code, err, seconds)
    assert len(err.splitlines()) == 1, err
    assert "Qwen/Qwen3-32B: not bundled, not a local path, and the Hub" in err
    assert "out of reach" in err and "did you mean qwen3-8b" in err and "folder" in err


@pytest.fixture
def silent_hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """A Hub that accepts every connection and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{server.getsockname()[1]}")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    try:
        yield
    finally:
        server.close()


def test_a_silent_hub_ends_at_the_deadline(silent_hub: None) -> None:
    code, out, err, seconds = _timed("estimate", "org/model", "--hub-timeout", "1.5")
    assert code == 1 and out == "" and seconds < 6, (code, err, seconds)
    assert err.splitlines() == [
        f"kvplan: error: org/model: the Hugging Face Hub ({os.environ['HF_ENDPOINT']}) gave no "
        "answer within 1.5 s (--hub-timeout)"]


def test_an_http_500_is_said_as_such_after_one_retry_at_most(hub_env: FakeHub) -> None:
    hub_env.fail_with = 500
    code, out, err, seconds = _timed("estimate", "org/model")
    assert code == 1 and out == "" and seconds < 5, (code, err, seconds)
    assert len(err.splitlines()) == 1 and "answered HTTP 500" in err, err
    assert "cannot reach" not in err
    per_url: dict[tuple[str, str], int] = {}
    for method, path, _ in hub_env.requests:
        per_url[(method, path)] = per_url.get((method, path), 0) + 1
    assert per_url and max(per_url.values()) <= 2, per_url
    # The bounds last as long as the lookup: huggingface_hub's own client factory is back.
    from huggingface_hub.utils import _http

    assert _http._GLOBAL_CLIENT_FACTORY is _http.default_client_factory


def test_hub_timeout_values_are_checked() -> None:
    for value, fragment in [("0", "must be > 0"), ("nan", "must be > 0"), ("x", "a number"),
                            ("1e9", "<= 3600")]:
        code, out, err, _ = _timed("estimate", "llama-3-8b", "--hub-timeout", value)
        assert code == 2 and out == "" and err.splitlines() == [
            f"kvplan: error: --hub-timeout: {err.split('--hub-timeout: ', 1)[1].rstrip()}"]
        assert fragment in err


def test_hf_home_a_file_and_a_damaged_cache_entry(hub_env: FakeHub, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Said as what they are, never as a Hub that cannot be reached."""
    home = tmp_path / "home-is-a-file"
    home.write_text("")
    monkeypatch.delenv("HF_HUB_CACHE")
    monkeypatch.setenv("HF_HOME", str(home))
    code, _, err, _ = _timed("estimate", "org/model")
    assert code == 2 and err.splitlines() == [
        f"kvplan: error: HF_HOME: {home} is not a folder (the Hugging Face cache must be one)"]
    cache = tmp_path / "cache"
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    refs = cache / "models--org--damaged" / "refs"
    refs.mkdir(parents=True)
    (refs / "main").write_bytes(b"\xff\xfe not a commit")
    code, _, err, _ = _timed("estimate", "org/damaged")
    assert code == 2 and len(err.splitlines()) == 1, err
    assert "its entry in the Hugging Face cache is damaged" in err
    assert "cannot reach" not in err and hub_env.requests == []


def test_a_cached_snapshot_with_an_empty_checkpoint_is_refused(hub_env: FakeHub,
                                                              tmp_path: Path) -> None:
    folder = make_folder(tmp_path / "src", LLAMA_CONFIG, {})
    _fill_cache(tmp_path / "hf-cache", "org/empty", folder, ("config.json", "model.safetensors"))
    code, out, err, _ = _timed("estimate", "org/empty", "--gpu", "H100")
    assert code == 2 and out == "" and len(err.splitlines()) == 1, err
    assert "the checkpoint holds no tensor" in err
    code, _, err, _ = _timed("estimate", "org/empty", "--gpu", "H100", "--weights-from", "config")
    assert code == 0 and "--weights-from config" in err


@pytest.mark.parametrize(("raw", "fragment"), [
    ((1 << 40).to_bytes(8, "little") + b"{}", "safetensors header"),  # a 1 TB header claimed
    ((5000).to_bytes(8, "little") + b'{"a": {"dtype"', "safetensors header"),  # truncated
    ((6).to_bytes(8, "little") + b"[1, 2]", "safetensors header"),  # not an object
    ((10).to_bytes(8, "little") + b'{"a": NaN}', "safetensors header"),
])
def test_bad_remote_headers_are_one_line(hub_env: FakeHub, tmp_path: Path, raw: bytes,
                                        fragment: str) -> None:
    folder = make_folder(tmp_path / "src", LLAMA_CONFIG, llama_tensors())
    (folder / "model.safetensors").write_bytes(raw)
    hub_env.add("org/bad-header", folder)
    code, out, err, seconds = _timed("estimate", "org/bad-header", "--gpu", "H100")
    assert code == 2 and out == "" and len(err.splitlines()) == 1, (code, err)
    assert fragment in err and seconds < 10


def test_cached_config_with_headers_out_of_reach(hub_env: FakeHub, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A snapshot holding config.json and the first of two shards (an interrupted download), the
    Hub out of reach: one line saying so and how to go on, never a plan from one shard."""
    folder = make_folder(tmp_path / "src", LLAMA_CONFIG, llama_tensors(), shards=2)
    _fill_cache(tmp_path / "hf-cache", "org/partial", folder,
                ("config.json", "model-00001-of-00002.safetensors"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{s.getsockname()[1]}")
        code, out, err, seconds = _timed("estimate", "org/partial", "--gpu", "H100")
    assert code == 2 and out == "" and seconds <= 3.0 and len(err.splitlines()) == 1, err
    assert "config.json is in the local cache, its weight files' headers are not" in err
    assert "--weights-from config" in err


# hf_quant_config.json (ModelOpt 0.29 and older): vLLM 0.32 reads it beside a config.json without
# quantization_config (transformers_utils/config.py get_config; repo_utils.py file_or_path_exists:
# the cache first, then the Hub). A ModelOpt FP8 checkpoint's file: FP8 weights, FP8 KV cache.
HF_QUANT = {"producer": {"name": "modelopt", "version": "0.23.0"},
            "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8",
                             "exclude_modules": ["lm_head"]}}


def _quant_requests(hub: FakeHub) -> list[tuple[str, str, str | None]]:
    return [r for r in hub.requests if r[1].endswith("/hf_quant_config.json")]


def test_hf_quant_config_json_is_read_from_the_hub(hub_env: FakeHub, tmp_path: Path) -> None:
    folder = make_folder(tmp_path / "src", LLAMA_CONFIG, llama_tensors())
    (folder / "hf_quant_config.json").write_text(json.dumps(HF_QUANT))
    hub_env.add("org/fp8", folder)
    spec, warnings = load_model("org/fp8")
    assert spec.quantization_config == HF_QUANT
    assert spec.quantization_file == "hf_quant_config.json"
    assert any(w.startswith("hf_quant_config.json: modelopt fp8") for w in warnings)
    snapshot = tmp_path / "hf-cache" / "models--org--fp8" / "snapshots" / COMMIT
    assert (snapshot / "hf_quant_config.json").is_file()
    # Read once: the next run takes it from the cache, and the weights' headers too.
    (snapshot / "model.safetensors").write_bytes((folder / "model.safetensors").read_bytes())
    hub_env.requests.clear()
    code, out, err = _estimate("org/fp8")
    assert code == 0 and hub_env.requests == [], err
    assert "KV (fp8)" in out and "hf_quant_config.json quantization.kv_cache_quant_algo" in err


def test_a_repo_without_it_is_asked_once(hub_env: FakeHub, tmp_path: Path) -> None:
    folder = make_folder(tmp_path / "src", LLAMA_CONFIG, llama_tensors())
    hub_env.add("org/plain", folder)
    _fill_cache(tmp_path / "hf-cache", "org/plain", folder, ("config.json", "model.safetensors"),
                quant_file_known=False)
    spec, warnings = load_model("org/plain")
    assert spec.quantization_config is None and spec.quantization_file is None
    assert not any("hf_quant_config" in w for w in warnings)
    assert [r[0] for r in _quant_requests(hub_env)] == ["HEAD"]  # 404: no error
    hub_env.requests.clear()
    load_model("org/plain")  # huggingface_hub recorded the 404 (.no_exist): nothing asked
    assert hub_env.requests == []


def test_offline_reads_the_cached_snapshot_alone(hub_env: FakeHub, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    # vLLM offline (repo_utils.py get_model_path): the cached snapshot's folder is the model.
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    folder = make_folder(tmp_path / "src", LLAMA_CONFIG, llama_tensors())
    (folder / "hf_quant_config.json").write_text(json.dumps(HF_QUANT))
    _fill_cache(tmp_path / "hf-cache", "org/cached-fp8", folder,
                ("config.json", "hf_quant_config.json", "model.safetensors"))
    _fill_cache(tmp_path / "hf-cache", "org/cached-plain", folder,
                ("config.json", "model.safetensors"), quant_file_known=False)
    assert load_model("org/cached-fp8")[0].quantization_file == "hf_quant_config.json"
    assert load_model("org/cached-plain")[0].quantization_config is None
    assert hub_env.requests == []


def test_not_knowing_it_with_the_hub_out_of_reach_is_one_line(
        hub_env: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = make_folder(tmp_path / "src", LLAMA_CONFIG, llama_tensors())
    _fill_cache(tmp_path / "hf-cache", "org/unknown", folder, ("config.json", "model.safetensors"),
                quant_file_known=False)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{s.getsockname()[1]}")
        code, out, err, seconds = _timed("estimate", "org/unknown", "--gpu", "H100")
    assert code == 2 and out == "" and seconds <= 3.0 and len(err.splitlines()) == 1, err
    assert "hf_quant_config.json is not (nor a record that the repo has none)" in err
    assert "HF_HUB_OFFLINE=1" in err


def test_a_bad_remote_file_is_one_line(hub_env: FakeHub, tmp_path: Path) -> None:
    folder = make_folder(tmp_path / "src", LLAMA_CONFIG, llama_tensors())
    (folder / "hf_quant_config.json").write_text('{"quantization": {')
    hub_env.add("org/bad-quant", folder)
    code, out, err = _estimate("org/bad-quant")
    assert code == 2 and out == "" and len(err.splitlines()) == 1, err
    assert "hf_quant_config.json: not valid JSON" in err
