"""Hostile class 1: a misbehaving Hub on 127.0.0.1 (HF_ENDPOINT). Each answer is one line and
an exit code of the policy, within --hub-timeout and a little start-up, never a hang, never a
false "cannot reach the Hub"."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests.hostile.fake_hub import fake_hub
from tests.hostile.harness import clean_env, kvplan, listing, refused

# (mode, fragment of the one line). A Hub that answers badly is a runtime failure: exit 1.
CASES = [
    ("silent", "gave no answer within 2 s (--hub-timeout)"),  # the silent-Hub case of issue 32
    ("slow", "gave no answer within 2 s (--hub-timeout)"),
    ("500", "answered HTTP 500"),
    ("truncated", "the connection broke off mid-answer"),
    ("oversized", "kvplan reads at most"),
    ("no-etag", "gave an answer huggingface_hub cannot use"),
]


def _case(tmp_path: Path, mode: str, fragment: str) -> str | None:
    """None when `mode` keeps the contract, else what went wrong."""
    cache = tmp_path / mode / "hf-cache"
    try:
        with fake_hub(mode) as url:
            env = clean_env(HF_ENDPOINT=url, HF_HUB_CACHE=str(cache),
                            HF_HOME=str(tmp_path / mode / "home"), HF_TOKEN="")
            run = kvplan("estimate", "org/model", "--hub-timeout", "2", env=env)
        line = refused(run, 1, fragment=fragment)
        assert "cannot reach" not in line, line
        assert run.seconds < 15, run.seconds  # 2 s of Hub time, the rest start-up on busy CI
        # Nothing half-downloaded is left in the cache as if it were config.json.
        assert not any(n.endswith("config.json") for n in listing(cache)), listing(cache)
    except AssertionError as exc:
        return f"{mode}: {exc}"
    return None


def test_a_misbehaving_hub_is_one_line(tmp_path: Path) -> None:
    """The six Hubs at once (each mostly waits out its 2 s): the suite's time stays short."""
    with ThreadPoolExecutor(len(CASES)) as pool:
        failures = [f for f in pool.map(lambda c: _case(tmp_path, *c), CASES) if f]
    assert not failures, failures
