"""Hostile class 3: huge and nested values, and the one exit-code policy. Every option that
scales work or memory is bounded before the work (exit 2 naming the bound and the way past it),
or computed in closed form; what kvplan cannot model is exit 2 in every command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.hostile.harness import kvplan, listing, no_temporary_file, refused


def test_giant_sweep_is_refused_before_the_work(tmp_path: Path) -> None:
    """The giant-sweep case of issue 32: 20 million points died at 7 GiB with 'internal error:
    MemoryError'. Held whole (a table) past the memory available: refused at once, naming the
    streamed outputs and --max-points; streamed past 20,000,000 points: refused too."""
    grid = ("sweep", "llama-3.1-8b", "--gpu", "H100", "-c", "1..100000:+1", "-b", "1..1000:+1")
    line = refused(kvplan(*grid))  # 100,000,000 points as a table
    assert "holds them all in memory" in line and "--max-points" in line and "-f csv" in line
    out = tmp_path / "big.csv"
    line = refused(kvplan(*grid[:-1], "1..10000:+1", "-o", str(out)))  # 10^9 points, streamed
    assert "at most 20,000,000 by default" in line and "--max-points" in line
    assert not out.exists()
    no_temporary_file(tmp_path)


def test_a_large_sweep_streams_within_the_cap(tmp_path: Path) -> None:
    """100,000 points to CSV under the 4 GiB address-space cap: streamed, every row written."""
    out = tmp_path / "s.csv"
    run = kvplan("sweep", "llama-3.1-8b", "--gpu", "H100", "-c", "1..10000:+1", "-b",
                 "1..10:+1", "-o", str(out))
    assert run.code == 0, run.stderr
    assert run.stderr.splitlines() == [f"kvplan: wrote 100,000 rows to {out}"]
    with out.open() as fh:
        assert sum(1 for _ in fh) == 100_001
    no_temporary_file(tmp_path)


@pytest.mark.parametrize("args", [
    # The giant-gpus-per-node case: 10^9 GPUs per node took 53 s (trial division).
    ("plan", "llama-3.1-405b", "-n", "1000", "--context", "128k", "--gpus-per-node",
     "1000000000"),
    ("plan", "llama-3.1-405b", "-n", "100", "--gpu", "A100-40GB", "--gpus-per-node",
     "999999937", "--nodes", "1000000"),
    # 2^40 MTP tokens looped over every token and never returned.
    ("compare", "deepseek-v3", "--gpu", "H100", "--mtp-tokens", "1099511627776"),
    # plan --rate listed every (tp, replicas) up to 10^12 GPUs before simulating one.
    ("plan", "llama-3.1-8b", "--rate", "5", "--slo-ttft-ms", "1", "--num-requests", "3",
     "--gpus-per-node", "1000000000", "--nodes", "1000"),
    # 10^12 nodes of a MoE model: the attention-DP forms of an engine of 8 x 2^39 GPUs counted
    # its divisors one by one (a hang before planrate64); now engines stop at the model's
    # routed experts (kvplan.analysis.rate_plan.engine_sizes).
    ("plan", "deepseek-v2-lite", "--rate", "5", "--slo-ttft-ms", "1", "--num-requests", "3",
     "--gpus-per-node", "8", "--nodes", "1000000000000"),
], ids=["gpus-per-node", "gpus-per-node-prime", "mtp-tokens", "rate-gpus", "rate-nodes-moe"])
def test_huge_counts_answer_in_closed_form(args: tuple[str, ...]) -> None:
    run = kvplan(*args, "-f", "json")
    assert run.code in (0, 3) and "Traceback" not in run.stderr, run.stderr[-500:]
    json.loads(run.stdout)
    assert run.seconds < 25, run.seconds


@pytest.mark.parametrize(("args", "fragment"), [
    (("compare", "llama-3.1-8b", "--groups", "3"), "--groups: 3 KV heads is not a GQA layout"),
    (("sweep", "llama-3.1-8b", "-c", "1..10000000:+1"), "more than 100,000 values"),
    (("estimate", "llama-3.1-8b", "--context", "99999999999999999999"), "--context"),
])
def test_flag_values_past_their_bounds(args: tuple[str, ...], fragment: str) -> None:
    refused(kvplan(*args), fragment=fragment)


@pytest.mark.parametrize(("text", "fragment"), [
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ('{"a":{"dtype":"BF16","shape":[' + "9" * 5000 + '],"data_offsets":[0,2]}}',
     "too many digits"),
])
def test_nested_and_huge_headers(tmp_path: Path, text: str, fragment: str) -> None:
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 64,
        "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
        "intermediate_size": 128, "vocab_size": 100, "max_position_embeddings": 4096,
        "torch_dtype": "bfloat16"}))
    raw = text.encode()
    (folder / "model.safetensors").write_bytes(len(raw).to_bytes(8, "little") + raw)
    refused(kvplan("estimate", str(folder), "--gpu", "H100"), fragment=fragment)


# --- one exit-code policy: what kvplan cannot model is exit 2 in every command ---------------

@pytest.mark.parametrize(("model", "extra", "fragment"), [
    ("llama-3.1-8b", ("--gpu", "GB10"), "unified-memory GPU"),
    ("qwen3-next-80b-a3b", ("--gpu", "H100", "--engine", "trtllm"), "recurrent-state layers"),
], ids=["gb10-vllm", "recurrent-trtllm"])
def test_plan_refuses_what_estimate_refuses(model: str, extra: tuple[str, ...],
                                            fragment: str) -> None:
    est = refused(kvplan("estimate", model, *extra), fragment=fragment)
    plan = refused(kvplan("plan", model, "-n", "4", *extra), fragment=fragment)
    assert plan == est  # the same refusal, word for word


def test_report_exits_3_when_the_plan_does_not_fit(tmp_path: Path) -> None:
    out = tmp_path / "r.md"
    run = kvplan("report", "gpt2", "-n", "100000000", "--context", "1k", "--gpus-per-node", "1",
                 "--kv-dtype", "bf16", "-o", str(out), "-f", "markdown")
    assert run.code == 3, run.stderr
    assert run.stderr.splitlines() == [f"kvplan: wrote {out} (DOES NOT FIT)"]
    assert set(listing(tmp_path)) == {"r.md"}
