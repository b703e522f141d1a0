"""Hostile class 1: a misbehaving Hub on 127.0.0.1 (HF_ENDPOINT). Each answer is one line and
an exit code of the policy, within --hub-timeout and a little start-up, never a hang, never a
false "cannot reach the Hub"."""

from __future__ import annotations

from pathlib import Path

import pytest

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


@pytest.mark.parametrize(("mode", "fragment"), CASES, ids=[c[0] for c in CASES])
def test_a_misbehaving_hub_is_one_line(tmp_path: Path, mode: str, fragment: str) -> None:
    cache = tmp_path / "hf-cache"
    with fake_hub(mode) as url:
        env = clean_env(HF_ENDPOINT=url, HF_HUB_CACHE=str(cache), HF_HOME=str(tmp_path / "home"),
                        HF_TOKEN="")
        run = kvplan("estimate", "org/model", "--hub-timeout", "2", env=env)
    line = refused(run, 1, fragment=fragment)
    assert "cannot reach" not in line
    assert run.seconds < 15, run.seconds  # 2 s of Hub time, the rest start-up on a busy CI
    # Nothing half-downloaded is left in the cache as if it were config.json.
    assert not any(name.endswith("config.json") for name in listing(cache)), listing(cache)
