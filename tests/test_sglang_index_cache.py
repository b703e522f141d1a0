"""IndexCache (GLM-5.2/5.3's index_topk_freq > 1) on SGLang: the layers whose DSA pool keeps the
indexer's index-K cache, by release (kvplan.engines.sglang.index_cache), and `kvplan sweep`
sizing it as `kvplan estimate` does.

Golden numbers by hand from NVIDIA's GLM-5.3-NVFP4 config.json, verbatim
(tests/data/blind26/real/glm-5.3-nvfp4-nvidia.json: 78 layers, kv_lora_rank 512,
qk_rope_head_dim 64, index_head_dim 128, index_topk_freq 4, index_skip_topk_offset 3,
indexer_types 74 entries, 57 of them "shared", agreeing with the freq rule;
num_nextn_predict_layers 1), read in the SGLang wheels named (python/sglang/srt/...):

1. Per layer at --kv-dtype bf16: the latent (512 + 64) x 2 = 1,152 B (pool_configurator.py
   _compute_cell_size: calculate_mla_kv_cache_dim x kv_size); the index-K 128 + 128 // 128 x 4
   = 132 uint8 (_compute_dsa_indexer_cell_size; mem_cache/memory_pool.py DSATokenToKVPool).
2. 0.5.16-0.5.17: every layer keeps its index-K (0.5.17 pool_configurator.py:225-247):
   78 x (1,152 + 132) = 100,152 B/token.
3. 0.5.18-0.5.19: only the layers configs/model_config.py:200 dsa_layer_skips_topk keeps,
   max(i - 3 + 1, 0) % 4 == 0: 0, 1, 2 and 6, 10, ..., 74 ((74 - 6) / 4 + 1 = 18): 21 layers
   (0.5.18 pool_configurator.py:352-412): 78 x 1,152 + 21 x 132 = 89,856 + 2,772 = 92,628.
4. 0.5.20-0.5.23: dsa_layer_skips_topk reads indexer_types first (0.5.20
   configs/model_config.py:311-319); a layer past its 74 entries is not "shared": the 20 kept
   below 74 (0, 1, 2, 6, ..., 70) and 74, 75, 76, 77: 24 layers, 89,856 + 24 x 132 = 93,024.
   GLM-5.2-NVFP4 lists all 78 layers (tests/data/blind26/real/glm-5.2-nvfp4.json): 92,628 there.
5. MTP (one NextN layer, which keeps its index-K: is_draft_worker, 0.5.18
   kv_cache_configurator.py:94-101): from 0.5.18 the target sizes its pool with
   cell + int((cell - target index-K) x 1 / 78) + 132 (pool_configurator.py:186-209):
   92,628 + int(89,856 / 78) + 132 = 92,628 + 1,152 + 132 = 93,912 at 0.5.18 (the generic
   int(92,628 x 79 / 78) = 93,815 would be short); 0.5.17, every layer alike:
   int(100,152 x 79 / 78) = 101,436 = 100,152 + 1,284.
No SGLang run backs these (no GPU run of a GLM-5.x on SGLang was available).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from kvplan._util.errors import SpecError
from kvplan.cli import app
from kvplan.engines.sglang.index_cache import dsa_budget_cell, index_cache_served
from kvplan.sources.hf_config import load_config, spec_mapping_from_config
from kvplan.sources.spec_yaml import parse_spec

REAL = Path(__file__).parent / "data" / "blind26" / "real"
GLM53 = str(REAL / "glm-5.3-nvfp4-nvidia.json")
GLM52 = str(REAL / "glm-5.2-nvfp4.json")
LATENT, INDEX_K = (512 + 64) * 2, 128 + 4  # step 1
EVERY = 78 * (LATENT + INDEX_K)  # 100,152 (step 2)
FREQ_RULE = 78 * LATENT + 21 * INDEX_K  # 92,628 (step 3)
TYPES_RULE = 78 * LATENT + 24 * INDEX_K  # 93,024 (step 4)


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def estimate(model: str, *extra: str) -> dict[str, object]:
    code, out, err = run("estimate", model, "--engine", "sglang", "-c", "8192", "--kv-dtype",
                         "bf16", "-f", "json", *extra)
    assert code == 0, err
    return json.loads(out)


@pytest.mark.parametrize(("version", "expected"), [
    ("0.5.16", EVERY), ("0.5.17", EVERY), ("0.5.18", FREQ_RULE), ("0.5.19", FREQ_RULE),
    ("0.5.20", TYPES_RULE), ("0.5.22", TYPES_RULE), ("0.5.23", TYPES_RULE)])
def test_glm53_bytes_per_token_by_release(version: str, expected: int) -> None:
    assert estimate(GLM53, "--engine-version", version)["bytes_per_token"] == expected


def test_golden_arithmetic() -> None:
    assert (EVERY, FREQ_RULE, TYPES_RULE) == (100152, 92628, 93024)
    spec, _ = load_config(Path(GLM53))
    assert spec.indexer is not None and spec.indexer.indexer_types_length == 74
    kept = set(range(78)) - spec.indexer.skipped_layers
    assert len(kept) == 21 and len(kept | {75, 76, 77}) == 24  # steps 3 and 4


def test_newest_by_default_and_a_full_list() -> None:
    assert estimate(GLM53)["bytes_per_token"] == TYPES_RULE
    # GLM-5.2-NVFP4's indexer_types name all 78 layers: the freq rule's 21 in every release.
    for version in ("0.5.18", "0.5.23"):
        assert estimate(GLM52, "--engine-version", version)["bytes_per_token"] == FREQ_RULE


@pytest.mark.parametrize(("version", "cell", "sizing"), [
    ("0.5.17", EVERY, 101436), ("0.5.18", FREQ_RULE, 93912),
    ("0.5.23", TYPES_RULE, TYPES_RULE + LATENT + INDEX_K)])
def test_mtp_draft_budgeted_as_sglang(version: str, cell: int, sizing: int) -> None:
    plan = estimate(GLM53, "--engine-version", version, "--speculative-method", "mtp",
                    "--num-speculative-tokens", "3", "--gpu", "H200", "--tp", "8",
                    "--weights-gib", "60")
    pool = plan["sglang_pool"]
    assert pool["draft_cell_bytes"] == LATENT + INDEX_K and pool["draft_layers"] == 1
    assert pool["cell_bytes"] == cell and pool["sizing_cell_bytes"] == sizing  # step 5
    assert int(FREQ_RULE * 79 / 78) == 93815 != 93912


@given(st.integers(1, 9), st.integers(0, 200), st.integers(1, 64), st.integers(1, 3))
def test_dsa_budget_reduces_to_the_uniform_scaling(layers: int, latent: int, index_k: int,
                                                   draft: int) -> None:
    # Every layer with its index-K (no IndexCache): 0.5.18's DSA branch budgets what 0.5.14's
    # int(cell x (1 + draft / layers)) did: a draft layer costs one target layer.
    cell = layers * (latent + index_k)
    budget = dsa_budget_cell(cell, (layers * index_k, draft * index_k), draft, layers)
    assert budget == cell + draft * (latent + index_k)


@given(st.frozensets(st.integers(0, 40), min_size=1), st.none() | st.integers(0, 48),
       st.sampled_from(["0.5.9", "0.5.17", "0.5.18", "0.5.19", "0.5.20", "0.5.23", None]))
def test_served_layers_property(skipped: frozenset[int], length: int | None,
                                version: str | None) -> None:
    spec, _ = load_config(Path(GLM53))
    assert spec.indexer is not None
    spec = replace(spec, indexer=replace(spec.indexer, skipped_layers=skipped,
                                         indexer_types_length=length))
    served = index_cache_served(spec, version)
    assert served.indexer is not None
    out = served.indexer.skipped_layers
    assert out <= skipped  # a release never skips a layer the config keeps
    if version in ("0.5.9", "0.5.17"):
        assert out == frozenset()
    elif version in ("0.5.18", "0.5.19") or length is None:
        assert out == skipped
    else:
        assert out == {i for i in skipped if i < length}
    assert index_cache_served(served, version) == served


@pytest.mark.parametrize("extra", [(), ("--engine-version", "0.5.17"),
                                   ("--engine-version", "0.5.19"),
                                   ("--gpu", "H200", "--tp", "8")])
def test_sweep_equals_estimate(extra: tuple[str, ...]) -> None:
    printed = estimate(GLM53, *extra)
    code, out, err = run("sweep", GLM53, "--engine", "sglang", "-c", "8192", "--kv-dtype",
                         "bf16", "-f", "json", *extra)
    assert code == 0, err
    (row,) = json.loads(out)
    keys = ["bytes_per_token", "bytes_per_sequence"] + (
        ["token_capacity", "max_requests"] if "--gpu" in extra else [])
    assert {k: row[k] for k in keys} == {k: printed[k] for k in keys}


def test_spec_yaml_indexer_types_length() -> None:
    mapping, _ = spec_mapping_from_config(json.loads(Path(GLM53).read_text()), path="x.json")
    assert mapping["attention"]["indexer"]["indexer_types_length"] == 74
    spec = parse_spec(mapping, path="x.yaml", spec_id="x")
    assert spec.indexer is not None and spec.indexer.indexer_types_length == 74
    mapping["attention"]["indexer"]["indexer_types_length"] = 0
    with pytest.raises(SpecError, match="attention.indexer.indexer_types_length"):
        parse_spec(mapping, path="x.yaml", spec_id="x")


def _one_error(code: int, err: str) -> str:
    errors = [line for line in err.splitlines() if line.startswith("kvplan: error:")]
    assert code == 2 and len(errors) == 1 and "Traceback" not in err, err
    return errors[0]


def test_hicache_and_disagg_refused_where_layers_lack_index_k() -> None:
    # 0.5.18-0.5.21 keep every layer's index-K under HiCache / PD (kv_cache_configurator.py
    # _should_elide_dsa_index_k); 0.5.22+ leave the shared layers out of the host pool and the
    # transfer (pool_host/dsa.py): neither is read, so refused. 0.5.17 keeps them all anyway.
    hicache = ("--gpu", "H200", "--tp", "8", "--weights-gib", "60",
               "--enable-hierarchical-cache")
    assert estimate(GLM53, "--engine-version", "0.5.17", *hicache)["bytes_per_token"] == EVERY
    for version in ("0.5.18", "0.5.23"):
        code, _, err = run("estimate", GLM53, "--engine", "sglang", "--engine-version", version,
                           "-c", "8192", "--kv-dtype", "bf16", *hicache)
        assert "IndexCache" in _one_error(code, err)
    code, _, err = run("plan", GLM53, "--engine", "sglang", "--engine-version", "0.5.23",
                       "--gpu", "H200", "--kv-dtype", "bf16", "-c", "8192", "--disagg",
                       "--prefill-tp", "8", "--decode-tp", "8")
    assert "--disagg" in _one_error(code, err)
