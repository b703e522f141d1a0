"""Jamba-v0.1's remote-code fields (`mamba_inner_layernorms`, `n_ctx`): read as vLLM 0.32 reads
them, on a published Jamba-v0.1 file (jondurbin/airoboros-jamba-3-3, a fine-tune of
ai21labs/Jamba-v0.1: https://huggingface.co/jondurbin/airoboros-jamba-3-3/blame/
4dba3bd7a347249f48ff44c093f976892929716f/config.json, 1,338 bytes as that page states; the
text restored with transformers' 2-space indentation and a final newline, exactly 1,338 bytes).
AI21's own ai21labs/Jamba-v0.1 file carries the same two fields (tests/data/configs/
SOURCES-hybrids.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvplan._util.errors import SpecError
from kvplan.sources.hf_config import load_config

DATA = Path(__file__).parent / "data"
FILE = DATA / "configs" / "airoboros-jamba-3-3.json"


def test_the_published_file_is_whole() -> None:
    assert len(FILE.read_bytes()) == 1338


def test_jamba_v01_answered_as_vllm_builds_it() -> None:
    spec, _ = load_config(FILE)
    # models/jamba.py: attention where i % attn_layer_period 8 == attn_layer_offset 4: layers 4,
    # 12, 20, 28 of 32; 8 KV heads of 4096 / 32 = 128, bf16: 4 x 2 x 8 x 128 x 2 = 16,384 B a
    # token. The 28 Mamba layers (MambaMixer, d_inner = mamba_expand 2 x 4096 = 8192): conv
    # state (d_conv 4 - 1) x 8192 x 2 B = 49,152 and SSM state 8192 x d_state 16 x 2 B (bf16,
    # vLLM 0.32's mamba_ssm_cache_dtype auto) = 262,144: 28 x 311,296 = 8,716,288 B a request.
    from kvplan import estimate

    est = estimate(spec, context=4096, batch=1)
    assert est.bytes_per_token == 4 * 2 * 8 * 128 * 2
    assert est.state_bytes_per_request == 28 * ((4 - 1) * 8192 * 2 + 8192 * 16 * 2)


def test_inner_layernorms_off_is_refused(tmp_path: Path) -> None:
    # vLLM's MambaMixer for Jamba always builds the inner RMS norms (use_rms_norm=True): a
    # checkpoint without them is not what vLLM loads.
    config = json.loads(FILE.read_text())
    config["mamba_inner_layernorms"] = False
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    with pytest.raises(SpecError, match="mamba_inner_layernorms"):
        load_config(path)
