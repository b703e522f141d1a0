"""Sliding windows given one per layer, as a list (kvplan.sources.hf_layer_windows; issue 26):
ExaoneMoE's golden config against the KV bytes derived here by hand from vLLM 0.32's model
code, the list rule on both families (ExaoneMoE's sliding_windows, PLaMo-3's
interleaved_sliding_window), and PLaMo-3's oracle shape run, whose row stays refused (no
published config.json of the family was found).

Sources: tests/data/configs/SOURCES-layer-windows.md. `GOLDEN_WINDOWS` is merged into
tests/test_support.py's GOLDEN; the ExaoneMoE oracle cases (tests/data/oracle/k-exaone-236b-a23b,
-windows-list) are replayed by tests/test_vllm_oracle.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import kvplan.sources.hf_config as hf_config
from kvplan._util.errors import SpecError
from kvplan.capacity.plan import plan_capacity
from kvplan.kv.cache import rank_caches
from kvplan.sources.hf_config import load_config
from kvplan.sources.support import EXACT, REFUSED, support_table
from tests.oracle.vllm_oracle import oracle_inputs

DATA = Path(__file__).parent / "data"
CONFIGS = DATA / "configs"
ORACLE = DATA / "oracle"
SHAPES = DATA / "layer_windows"
HF = "https://huggingface.co/"

# id -> (file, KV bytes per token at bf16 over all layers at TP 1, the model's Hub page).
GOLDEN_WINDOWS: dict[str, tuple[Path, int, str]] = {
    # ExaoneMoeForCausalLM (K-EXAONE-236B-A23B): vLLM 0.32 models/exaone_moe.py
    # ExaoneMoeAttention (lines 164-272): num_key_value_heads 8, head_dim =
    # getattr(config, "head_dim", None) = 128; lines 233-246: layer_types[i] ==
    # "full_attention" gets no window (12 layers: 3, 7, ..., 47), every other layer
    # sliding_windows[i] when the config has that list (it has not) else config.sliding_window
    # 128 (36 layers); Attention(per_layer_sliding_window=...) registers a SlidingWindowSpec or
    # a FullAttentionSpec of the same page (v1/kv_cache_interface.py: 2 x 8 x 128 x 2 B per
    # token and layer). Per token: 48 x 2 x 8 x 128 x 2 B = 196,608 B (a sliding layer holds
    # at most its window plus the in-flight tokens).
    "k-exaone-236b-a23b": (CONFIGS / "k-exaone-236b-a23b.json", 48 * 2 * 8 * 128 * 2,
                           HF + "LGAI-EXAONE/K-EXAONE-236B-A23B"),
}

TABLE = support_table()


def _config(**fields) -> dict:
    base = json.loads((ORACLE / "k-exaone-236b-a23b" / "config.json").read_text())
    return {**base, **fields}


def _load(tmp_path: Path, config: dict):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    return load_config(path)


# Each golden's bytes and its exact read: tests/test_support.py
# (test_golden_configs_equal_the_hand_derived_bytes, over GOLDEN with these merged in).


def test_k_exaone_layers_and_rows() -> None:
    spec, _ = load_config(CONFIGS / "k-exaone-236b-a23b.json")
    assert [i for i, w in enumerate(spec.layer_windows) if w is None] == list(range(3, 48, 4))
    assert {w for w in spec.layer_windows if w is not None} == {128}
    # mlp_layer_types: layer 0 dense, 47 MoE layers of 128 experts.
    assert spec.moe is not None and spec.moe.first_k_dense_replace == 1
    row = TABLE["ExaoneMoEForCausalLM"]
    assert row.status == EXACT and row.golden == "k-exaone-236b-a23b"
    assert row.golden_config == "rebuilt" and row.oracle == "k-exaone-236b-a23b"
    # The later spelling builds the same vLLM class; no published config names it.
    assert TABLE["ExaoneMoeForCausalLM"].status == REFUSED


def test_oracle_shrink_by_hand() -> None:
    # vLLM 0.32 CPU (block 128): page 2 x 8 x 128 x 2 B x 128 = 524,288 B per layer. 6 sliding
    # and 2 full layers make 4 KV cache groups of 2 layers (its log: "kv cache group sizes (128,
    # 128, 128, 128)"), so 1 GiB / (2 x 524,288 B) = 1,024 blocks. A request of 8,192 tokens:
    # 8,192 / 128 = 64 blocks in the full group, and in each of the 3 sliding groups
    # SlidingWindowSpec.max_memory_usage: ceil((128 - 1 + 2,048) / 128) + 1 = 18 blocks;
    # 1,024 / (64 + 3 x 18) = 8.678x, int(8.678 x 8,192) = 71,089 tokens -- vLLM's log.
    run = json.loads((ORACLE / "k-exaone-236b-a23b" / "results.json").read_text())[0]
    spec, _ = load_config(ORACLE / "k-exaone-236b-a23b" / "config.json")
    plan = plan_capacity(spec, oracle_inputs(run["output"], run["argv"]))
    assert (plan.reported_kv_cache_tokens, f"{plan.max_concurrency:.2f}") == (71089, "8.68")
    assert run["output"]["kv_cache_tokens"] == 71089


def test_sliding_windows_list_wins_over_sliding_window(tmp_path: Path) -> None:
    # exaone_moe.py: sliding_windows[layer_idx] on the layers layer_types does not mark full;
    # the full layers' entries are never read (0 here). vLLM 0.32 ran this list
    # (tests/data/oracle/k-exaone-236b-a23b-windows-list): 69,327 tokens, 8.46x.
    spec, _ = load_config(ORACLE / "k-exaone-236b-a23b-windows-list" / "config.json")
    assert spec.layer_windows == (256, 256, 256, None, 256, 256, 256, None)


def test_windows_that_differ_are_refused(tmp_path: Path) -> None:
    windows = [128, 256, 128, 0, 128, 128, 128, 0]
    with pytest.raises(SpecError, match="sliding_windows.*128, 256"):
        _load(tmp_path, _config(sliding_windows=windows))


def test_short_list_and_bad_entries_are_refused(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="sliding_windows.*8 entries"):
        _load(tmp_path, _config(sliding_windows=[128] * 4))
    with pytest.raises(SpecError, match="sliding_windows.*positive"):
        _load(tmp_path, _config(sliding_windows=[128, -1, 128, 0, 128, 128, 128, 0]))


def test_layer_types_from_the_pattern(tmp_path: Path) -> None:
    # ExaoneMoeConfig.__post_init__ (transformers 5.19): sliding unless (i + 1) % pattern == 0.
    config = _config(sliding_window_pattern=2)
    del config["layer_types"]
    spec, warnings = _load(tmp_path, config)
    assert spec.layer_windows == (128, None) * 4
    assert any("ExaoneMoeConfig" in w for w in warnings)
    # A string pattern ("LLLG") cannot build them: the config class fails, kvplan refuses.
    config["sliding_window_pattern"] = "LLLG"
    with pytest.raises(SpecError, match="layer_types.*LLLG"):
        _load(tmp_path, config)


def test_a_null_window_is_full_attention(tmp_path: Path) -> None:
    # sliding_window null: every layer passes per_layer_sliding_window=None.
    spec, _ = _load(tmp_path, _config(sliding_window=None))
    assert spec.layer_windows == (None,) * 8


def _plamo3(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **fields):
    # The support row refuses Plamo3ForCausalLM (no published config.json found); the reader
    # below it is what these tests hold.
    monkeypatch.setattr(hf_config, "check_architecture", lambda config, path: None)
    config = json.loads((SHAPES / "plamo-3-shape" / "config.json").read_text())
    config.update(fields)
    for key in [k for k, v in fields.items() if v is None]:
        del config[key]
    return _load(tmp_path, config)


def test_plamo3_windows_from_the_pattern(tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # Plamo3Config.interleaved_sliding_window: None where (i + 1) % sliding_window_pattern == 0,
    # else window_size; models/plamo3.py line 205 passes it per layer.
    spec, _ = _plamo3(tmp_path, monkeypatch)
    assert spec.layer_windows == (2048, 2048, 2048, None) * 2
    # 8 x 2 x 4 x 128 x 2 B = 16,384 B a token.
    assert rank_caches(spec, kv_dtype="bf16").bytes_per_token == 8 * 2 * 4 * 128 * 2


def test_plamo3_shape_run_by_vllm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # vLLM 0.32 CPU with the stand-in config class (results.json): page 2 x 4 x 128 x 2 B x 128
    # = 262,144 B; 6 sliding + 2 full layers in 4 groups of 2: 1 GiB / 524,288 B = 2,048
    # blocks. A request: 64 full blocks + 3 x (ceil((2,048 - 1 + 2,048) / 128) + 1 = 33) = 163;
    # 2,048 / 163 = 12.564x, int(12.564 x 8,192) = 102,927 tokens, as vLLM logged.
    run = json.loads((SHAPES / "plamo-3-shape" / "results.json").read_text())[0]
    spec, _ = _plamo3(tmp_path, monkeypatch)
    plan = plan_capacity(spec, oracle_inputs(run["output"], run["argv"]))
    assert plan.reported_kv_cache_tokens == run["output"]["kv_cache_tokens"] == 102927
    assert f"{plan.max_concurrency:.2f}" == f"{run['output']['max_concurrency']:.2f}" == "12.56"


def test_plamo3_window_size_is_required(tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SpecError, match="window_size"):
        _plamo3(tmp_path, monkeypatch, window_size=None)
    # A list-valued sliding_window that disagrees: one remote-class version would take it.
    with pytest.raises(SpecError, match="sliding_window"):
        _plamo3(tmp_path, monkeypatch, sliding_window=[1024, 1024, 1024, None] * 2)
    spec, _ = _plamo3(tmp_path, monkeypatch, sliding_window=[2048, 2048, 2048, None] * 2)
    assert spec.layer_windows == (2048, 2048, 2048, None) * 2


def test_plamo3_row_stays_refused() -> None:
    row = TABLE["Plamo3ForCausalLM"]
    assert row.status == REFUSED and "no published config.json" in row.reason
