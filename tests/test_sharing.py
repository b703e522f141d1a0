"""Cross-layer KV sharing (CLA, gemma-3n's num_kv_shared_layers, explicit per-layer targets)."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from kvplan import estimate, load_spec, parse_spec, rank_caches
from kvplan._util.units import GiB
from kvplan.analysis.compare import compare_schemes
from kvplan.capacity.plan import plan_capacity
from kvplan.cli import app
from kvplan.engines.base import PlanInputs
from kvplan.model.spec import with_share_every
from kvplan.perf.flops import decode_cost

from .conftest import LLAMA_LIKE

runner = CliRunner()


def test_cla2_gqa_by_hand() -> None:
    # Llama-3-8B with CLA x2: 16 of 32 layers own a cache of 2 x 8 x 128 x 2 B = 4,096 B/token.
    spec = with_share_every(load_spec("llama-3-8b"), 2)
    assert spec.kv_sources[:4] == (None, 0, None, 2)
    assert rank_caches(spec).bytes_per_token == 16 * 4096  # 65,536
    est = estimate(spec, context=4096)
    assert est.num_kv_shared_layers == 16
    assert est.bytes_per_sequence == 16 * 256 * 16 * 4096


def test_mla_plus_cla2_by_hand() -> None:
    # DeepSeek-V2 MLA + CLA x2: 30 of 60 layers cache (512 + 64) x 2 B = 1,152 B/token.
    spec = with_share_every(load_spec("deepseek-v2"), 2)
    assert rank_caches(spec).bytes_per_token == 30 * 1152  # 34,560


@given(layers=st.integers(1, 128), k=st.integers(1, 16), kind=st.sampled_from(["gqa", "mqa"]))
def test_sharing_factor_divides_cache(layers, k, kind) -> None:
    data = copy.deepcopy(LLAMA_LIKE)
    data["num_hidden_layers"] = layers
    if kind == "mqa":
        data["attention"] |= {"kind": "mqa", "num_key_value_heads": 1}
    base = parse_spec(data, path="<t>", spec_id="t")
    shared = with_share_every(base, k)
    per_layer = estimate(base, context=1).bytes_per_token_per_layer
    owners = -(-layers // k)  # ceil: the last run may be shorter than k
    assert rank_caches(shared).bytes_per_token == owners * per_layer
    if layers % k == 0:
        assert rank_caches(shared).bytes_per_token * k == rank_caches(base).bytes_per_token


def test_capacity_honours_sharing() -> None:
    base = load_spec("llama-3.1-8b")
    inputs = PlanInputs(context=8192, kv_budget_bytes=20 * GiB)
    plain = plan_capacity(base, inputs)
    cla = plan_capacity(with_share_every(base, 2), inputs)
    # 16 layers per block slot instead of 32: floor(x / 16) is 2 floor(x / 32) or one more.
    assert cla.num_blocks in (2 * plain.num_blocks, 2 * plain.num_blocks + 1)
    assert cla.per_gpu_bytes_per_token * 2 == plain.per_gpu_bytes_per_token


def test_flops_skip_shared_kv_projection_but_not_kv_reads() -> None:
    base = load_spec("llama-3-8b")
    cla = with_share_every(base, 2)
    a = decode_cost(base, context=4096)
    b = decode_cost(cla, context=4096)
    # 16 layers skip K/V projections of 2 x 4096 x 8 x 256 FLOPs each.
    assert a.decode_flops_per_token - b.decode_flops_per_token == 16 * 2 * 4096 * 8 * 256
    # Each layer still reads the cache it attends over.
    assert a.kv_read_bytes_per_token == b.kv_read_bytes_per_token


def _sharing_spec(write_spec, sharing: dict, *, windows: dict | None = None):
    data = copy.deepcopy(LLAMA_LIKE)
    data["num_hidden_layers"] = 6
    if windows:
        data["attention"] |= windows
    data["kv_sharing"] = sharing
    return write_spec(data)


def test_yaml_forms(write_spec) -> None:
    from kvplan.sources.resolve import load_spec_file

    spec = load_spec_file(_sharing_spec(write_spec, {"share_every": 3}))
    assert spec.kv_sources == (None, 0, 0, None, 3, 3)
    spec = load_spec_file(_sharing_spec(write_spec, {
        "kv_shared_layer_targets": [None, None, 1, None, 3, 3]}))
    assert spec.num_kv_shared_layers == 3
    # gemma-3n style: the last 2 layers reuse the last owner of their own attention type.
    spec = load_spec_file(_sharing_spec(
        write_spec, {"num_kv_shared_layers": 2},
        windows={"sliding_window": 512, "sliding_window_pattern": 2}))
    # types: 0 S, 1 F, 2 S, 3 F, 4 S, 5 F -> 4 reuses 2, 5 reuses 3
    assert spec.kv_sources == (None, None, None, None, 2, 3)


@pytest.mark.parametrize(
    ("sharing", "windows", "message"),
    [
        ({"kv_shared_layer_targets": [None, 2, None, None, None, None]}, None,
         "layer 1 cannot share with layer 2: a layer can only reuse an EARLIER layer's"),
        ({"kv_shared_layer_targets": [None, 1, None, None, None, None]}, None,
         "layer 1 cannot share its KV cache with itself"),
        ({"kv_shared_layer_targets": [None, 0, 1, None, None, None]}, None,
         "layer 2 shares with layer 1, which itself reuses layer 0"),
        ({"share_every": 2}, {"sliding_window": 512, "sliding_window_pattern": 2},
         "layer 1 (full attention) cannot share with layer 0 (sliding window 512)"),
        ({"kv_shared_layer_targets": [None, 0]}, None, "expected a list of 6 entries"),
        ({"share_every": 2, "num_kv_shared_layers": 1}, None, "give exactly one of"),
        ({"num_kv_shared_layers": 6}, None, "must be < num_hidden_layers (6)"),
    ],
)
def test_bad_sharing_specs(write_spec, sharing, windows, message) -> None:
    path = _sharing_spec(write_spec, sharing, windows=windows)
    result = runner.invoke(app, ["estimate", str(path)])
    assert result.exit_code == 2, result.output
    assert f"{path}: kv_sharing" in result.stderr
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_compare_share_layers() -> None:
    result = runner.invoke(app, ["compare", "deepseek-v2", "--share-layers", "2",
                                 "--format", "json"])
    assert result.exit_code == 0, result.output
    rows = {r["scheme"]: r for r in json.loads(result.stdout)}
    assert rows["MLA (absorbed) + CLA x2"]["bytes_per_token"] == 34_560
    assert rows["MHA + CLA x2"]["bytes_per_token"] == 30 * 2 * 128 * 128 * 2
    plain = {r.scheme: r for r in compare_schemes(load_spec("deepseek-v2"), context=4096).rows}
    assert rows["GQA-8 + CLA x2"]["ratio_vs_mha"] == plain["GQA-8"].ratio_vs_mha


def test_compare_share_layers_rejects_mixed_kinds() -> None:
    result = runner.invoke(app, ["compare", "gemma-2-9b", "--share-layers", "2"])
    assert result.exit_code == 2
    assert "different kinds" in result.stderr
