"""Hostile class 4: odd environments. Variables left in a shell steer kvplan only as documented,
and a wait they start is bounded; verify's ranks are bounded before any starts."""

from __future__ import annotations

from pathlib import Path

from tests.hostile.harness import clean_env, kvplan, refused


def test_stray_rank_without_a_master_is_refused_at_once() -> None:
    """The stray-RANK case of issue 32: RANK=0 WORLD_SIZE=2 left in the environment made
    `verify --tp 2` wait 300 s for a rank that never came."""
    env = clean_env(RANK="0", WORLD_SIZE="2")
    line = refused(kvplan("verify", "gpt2", "--device", "cpu", "--tp", "2", env=env))
    assert "RANK=0 and WORLD_SIZE=2 are set" in line and "unset them" in line


def test_stray_rank_with_a_master_waits_the_rendezvous_timeout_only() -> None:
    env = clean_env(RANK="0", WORLD_SIZE="2", MASTER_ADDR="127.0.0.1", MASTER_PORT="29531")
    run = kvplan("verify", "gpt2", "--device", "cpu", "--tp", "2", "--budget-gib", "0.01",
                 "--rendezvous-timeout", "2", env=env)
    line = refused(run, run.code)
    assert run.code in (1, 2) and "RANK=0 and WORLD_SIZE=2" in line, line


def test_verify_ranks_follow_the_heads_rule() -> None:
    """The verify-ranks case of issue 32: gpt2 --tp 16 started 16 torch ranks (8.6 GiB) for 12
    heads; estimate's rule refuses it before any rank starts."""
    run = kvplan("verify", "gpt2", "--device", "cpu", "--tp", "16")
    refused(run, fragment="--tp: 16 does not divide num_attention_heads (12) of gpt2")


def test_hf_home_a_file(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.write_text("")
    env = clean_env(HF_HOME=str(home), HF_HUB_CACHE=None, HF_ENDPOINT="http://127.0.0.1:9")
    line = refused(kvplan("estimate", "org/model", env=env))
    assert "HF_HOME" in line and "is not a folder" in line and "cannot reach" not in line
