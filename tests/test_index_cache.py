"""IndexCache (GLM-5.2/5.3's index_topk_freq > 1): vLLM builds the DSA indexer, and its cache,
on some layers only (kvplan.sources.hf_index_cache, kvplan.engines.vllm.index_cache).

Golden numbers by hand from NVIDIA's GLM-5.3-NVFP4 config.json, verbatim
(tests/data/blind26/real/glm-5.3-nvfp4-nvidia.json: 78 layers, kv_lora_rank 512,
qk_rope_head_dim 64, index_head_dim 128, index_topk_freq 4, index_skip_topk_offset 3,
index_topk_pattern null, num_nextn_predict_layers 1; its kv_cache_scheme makes vLLM's auto fp8):

1. Which layers keep an indexer (vLLM 0.32 models/deepseek_v32/attention.py:166-190): layer i
   skips when max(i - 3 + 1, 0) % 4 != 0. i = 0, 1, 2 give max(.., 0) = 0: kept; then
   i - 2 = 4k: 6, 10, ..., 74. Kept: 0, 1 and 2, 6, ..., 74 ((74 - 2) / 4 + 1 = 19), 21 layers;
   skipped 78 - 21 = 57. The MTP layer (index 78 >= num_hidden_layers) keeps its own
   (attention.py:180-190).
2. Bytes per token (fp8_ds_mla, no GPU given: FlashMLA-sparse's row; mla_attention.py:1350-1379
   state_content_bytes 656 = 512 fp8 + 4 x 4 B scales + 64 x 2 B RoPE; attention.py:95-100 the
   indexer's 128 + 128 // 128 x 4 = 132 uint8): MLA 78 x 656 = 51,168; indexer 21 x 132 =
   2,772; total 53,940 (every layer an indexer, as before 0.24: 78 x 788 = 61,464).
3. The pool per 64-token block (v1/core/kv_cache_utils.py:2186-2190: all MLAAttentionSpec, so
   one UniformTypeKVCacheSpecs group whose page is the sum of its layers' pages,
   kv_cache_interface.py:1253-1254): MLA 64 x 656 = 41,984 x 78 = 3,274,752; indexer
   64 x 132 = 8,448 x 21 = 177,408; 3,452,160 B. With the MTP draft: + 41,984 + 8,448 =
   3,502,592. vLLM's own grouping code on hand-built specs printed the same
   (tests/oracle/vllm_index_cache_groups.py, opt-in: 3452160 / 3502592, and 311 blocks in 1 GiB:
   1,073,741,824 // 3,452,160 = 311). The CPU oracle runs no sparse attention, so no engine run
   of the model itself backs these numbers.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan._util.errors import SpecError
from kvplan.cli import app
from kvplan.sources.hf_config import load_config, spec_mapping_from_config
from kvplan.sources.spec_yaml import parse_spec

GLM53 = str(Path(__file__).parent / "data" / "blind26" / "real" / "glm-5.3-nvfp4-nvidia.json")
KEPT = {0, 1, *range(2, 75, 4)}  # step 1
PER_TOKEN = 78 * 656 + 21 * 132  # 53,940 (step 2)
PER_BLOCK = 78 * 64 * 656 + 21 * 64 * 132  # 3,452,160 (step 3)
MTP_BLOCK = PER_BLOCK + 64 * 656 + 64 * 132  # 3,502,592 (step 3)


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def estimate(model: str, *extra: str) -> dict[str, object]:
    code, out, err = run("estimate", model, "--engine", "vllm", "-c", "8192", "-f", "json",
                         *extra)
    assert code == 0, err
    return json.loads(out)


def refused(model: str, *extra: str) -> str:
    code, _, err = run("estimate", model, "--engine", "vllm", "-c", "8192", *extra)
    errors = [line for line in err.splitlines() if line.startswith("kvplan: error:")]
    assert code == 2 and len(errors) == 1 and "Traceback" not in err, err
    return errors[0]


def test_glm53_kept_layers() -> None:
    spec, _ = load_config(Path(GLM53))
    assert spec.indexer is not None
    assert len(KEPT) == 21 and len(spec.indexer.skipped_layers) == 57
    assert set(range(78)) - spec.indexer.skipped_layers == KEPT
    # NVIDIA's indexer_types (74 entries) say the same on its entries: "full" on the kept.
    types = json.loads(Path(GLM53).read_text())["indexer_types"]
    assert {i for i, t in enumerate(types) if t == "full"} == {i for i in KEPT if i < 74}


def test_glm53_golden_bytes() -> None:
    plan = estimate(GLM53)
    assert plan["kv_dtype"] == "fp8" and plan["block_size"] == 64
    assert plan["bytes_per_token"] == PER_TOKEN == 53940
    assert plan["bytes_per_block"] == PER_BLOCK == 3452160
    (group,) = plan["kv_cache_groups"]
    assert group["kind"] == "mla+indexer" and group["layers"] == 78
    assert plan["bytes_per_sequence"] == 128 * PER_BLOCK  # 8,192 / 64 = 128 blocks
    assert (1 << 30) // PER_BLOCK == 311  # the oracle's num_blocks for 1 GiB


def test_glm53_mtp_draft_keeps_its_indexer() -> None:
    plan = estimate(GLM53, "--speculative-method", "mtp", "--num-speculative-tokens", "1")
    assert plan["bytes_per_block"] == MTP_BLOCK == 3502592


def test_before_024_every_layer_builds_its_indexer() -> None:
    # 0.21-0.23 build the Indexer, then read index_topk_freq only to skip the top-k compute
    # (0.23.0 model_executor/models/deepseek_v2.py:1015-1034); older releases never read it.
    assert estimate(GLM53, "--engine-version", "0.23")["bytes_per_token"] == 78 * 788 == 61464
    assert estimate(GLM53, "--engine-version", "0.24")["bytes_per_token"] == PER_TOKEN


def test_034_refused() -> None:
    # 0.34 reads indexer_types first and raises on this file's 74 entries for 78 layers
    # (model_executor/models/utils.py:1019-1032).
    line = refused(GLM53, "--engine-version", "0.34")
    assert "indexer_types" in line and "0.33" in line


def _variant(tmp_path: Path, **changes: object) -> str:
    data = json.loads(Path(GLM53).read_text())
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data))
    return str(path)


def test_default_offset_is_two(tmp_path: Path) -> None:
    # index_skip_topk_offset absent: vLLM's getattr default 2 (attention.py:169), so layer i
    # keeps when max(i - 1, 0) % 4 == 0: 0, 1, 5, 9, ..., 77 (2 + 19 = 21 layers).
    spec, _ = load_config(Path(_variant(tmp_path, index_skip_topk_offset=None,
                                        indexer_types=None)))
    assert spec.indexer is not None
    assert set(range(78)) - spec.indexer.skipped_layers == {0, *range(1, 78, 4)}


def test_pattern_wins_over_freq(tmp_path: Path) -> None:
    # index_topk_pattern given: "S" skips; layers past its end keep (attention.py:174-177).
    spec, _ = load_config(Path(_variant(tmp_path, index_topk_pattern="FSSF", indexer_types=None)))
    assert spec.indexer is not None and spec.indexer.skipped_layers == {1, 2}
    assert estimate(_variant(tmp_path, index_topk_pattern="FSSF", indexer_types=None)
                    )["bytes_per_token"] == 78 * 656 + 76 * 132


@pytest.mark.parametrize(("changes", "words"), [
    ({"indexer_types": ["full"] * 78}, "layer 3 is 'full'"),
    ({"index_topk_freq": 0}, "index_topk_freq"),
    ({"index_topk_pattern": 7, "indexer_types": None}, "index_topk_pattern")])
def test_refusals(tmp_path: Path, changes: dict[str, object], words: str) -> None:
    assert words in refused(_variant(tmp_path, **changes))


def test_spec_yaml_skipped_layers_validated() -> None:
    mapping, _ = spec_mapping_from_config(json.loads(Path(GLM53).read_text()), path="x.json")
    spec = parse_spec(mapping, path="x.yaml", spec_id="x")
    assert spec.indexer is not None and spec.indexer.skipped_layers == set(range(78)) - KEPT
    mapping["attention"]["indexer"]["skipped_layers"] = ["3"]
    with pytest.raises(SpecError, match="attention.indexer.skipped_layers"):
        parse_spec(mapping, path="x.yaml", spec_id="x")
