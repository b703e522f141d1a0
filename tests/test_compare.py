"""`kvplan compare`: the DeepSeek-V2 paper's Table 1, the JSON contract, and the table."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from kvplan import load_spec
from kvplan.analysis.compare import compare_schemes
from kvplan.cli import app
from kvplan.hardware.gpus import get_gpu

runner = CliRunner()


def _rows(model: str, **kw):
    return {r.scheme: r for r in compare_schemes(load_spec(model), context=4096, **kw).rows}


def test_deepseek_v2_reproduces_paper_table_1() -> None:
    # n_h = 128, d_h = 128, l = 60, n_g = 8, d_c = 4 d_h = 512, d_h^R = d_h / 2 = 64.
    rows = _rows("deepseek-v2")
    assert rows["MHA"].elements_per_token_per_layer == 2 * 128 * 128  # 2 n_h d_h
    assert rows["GQA-8"].elements_per_token_per_layer == 2 * 8 * 128  # 2 n_g d_h
    assert rows["MQA"].elements_per_token_per_layer == 2 * 128  # 2 d_h
    assert rows["MLA (absorbed)"].elements_per_token_per_layer == int(4.5 * 128)  # d_c + d_h^R
    assert rows["MLA (absorbed)"].bytes_per_token == 576 * 60 * 2
    assert rows["MLA (absorbed)"].native
    assert sum(r.native for r in rows.values()) == 1
    comparison = compare_schemes(load_spec("deepseek-v2"), context=4096)
    assert comparison.mla_equivalent_gqa_groups == 2.25
    assert rows["MLA (absorbed)"].ratio_vs_mha == pytest.approx(576 / 32768)


def test_gqa_model_gets_default_mla_and_own_groups() -> None:
    rows = _rows("qwen2.5-7b", groups=2)  # 28 heads, 4 KV heads, head_dim 128
    assert {"GQA-4", "GQA-2"} <= rows.keys()
    assert rows["GQA-4"].native and not rows["GQA-2"].native
    # MLA defaults: d_c = 4 x 128 = 512, rope = 64.
    assert rows["MLA (absorbed)"].elements_per_token_per_layer == 576
    rows = _rows("qwen2.5-7b", kv_lora_rank=256, rope_dim=32)
    assert rows["MLA (absorbed)"].elements_per_token_per_layer == 288


def test_falcon_skips_gqa_groups_that_do_not_divide_heads() -> None:
    rows = _rows("falcon-7b")  # 71 heads
    assert not any(name.startswith("GQA") for name in rows)
    assert rows["MQA"].native


def test_max_requests_with_gpu() -> None:
    rows = _rows("llama-3.1-8b", gpu=get_gpu("H100-80GB"))
    assert rows["MQA"].max_requests > rows["GQA-8"].max_requests > rows["MHA"].max_requests
    assert rows["GQA-8"].roofline_ms_per_token > 0


@given(model=st.sampled_from(["llama-3-70b", "deepseek-v2-lite", "gemma-2-9b", "qwen3-8b"]),
       ctx=st.integers(1, 1 << 17))
def test_mqa_le_gqa_le_mha_in_compare(model, ctx) -> None:
    rows = {r.scheme: r for r in compare_schemes(load_spec(model), context=ctx).rows}
    gqa = [r for name, r in rows.items() if name.startswith("GQA")]
    for g in gqa:
        assert rows["MQA"].bytes_per_token <= g.bytes_per_token <= rows["MHA"].bytes_per_token
        assert rows["MQA"].kv_read_bytes_per_token <= g.kv_read_bytes_per_token


def test_compare_json_contract() -> None:
    result = runner.invoke(app, ["compare", "deepseek-v2", "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert isinstance(data, list)
    for row in data:
        for key in ("scheme", "native", "elements_per_token_per_layer", "bytes_per_token",
                    "ratio_vs_mha", "decode_flops_per_token", "kv_read_bytes_per_token"):
            assert key in row
    assert [r["scheme"] for r in data][:3] == ["MHA", "GQA-8", "MQA"]


def test_compare_table_says_how_flops_are_counted() -> None:
    result = runner.invoke(app, ["compare", "llama-3-70b", "--gpu", "H100-80GB", "--explain"],
                           env={"COLUMNS": "120"})
    assert result.exit_code == 0
    assert "2 per multiply-add" in result.stdout
    assert "GQA-8 *" in result.stdout
    assert "Absorbed MLA costs fewer decode FLOPs than naive MLA from a context of" in (
        result.stdout.replace("\n", " "))


@pytest.mark.parametrize("args", [["--groups", "0"], ["--gpu", "nope"], ["--context", "0"]])
def test_compare_bad_input(args) -> None:
    result = runner.invoke(app, ["compare", "gpt2", *args])
    assert result.exit_code == 2


def test_breakdown_adds_up_to_attention_flops() -> None:
    for row in compare_schemes(load_spec("deepseek-v2"), context=2048).rows:
        assert sum(row.attention_flops_per_layer.values()) * 60 == row.attention_flops_per_token
        assert row.prefill_flops_per_token > 0
    result = runner.invoke(app, ["compare", "deepseek-v2", "-f", "markdown"])
    assert "### Attention FLOPs per layer per decoded token at context 4,096, by term" in (
        result.stdout)
