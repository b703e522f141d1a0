"""The support table at vLLM 0.34's registry (issue 26): the registry file read statically from
0.34's registry.py over vLLM 0.32's dump (tests/benches/vllm_registry_static.py), a row for each
architecture 0.33 and 0.34 add, the rows of those they dropped, and no arrival planned at a
release before it (kvplan/engines/vllm/architectures.py)."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from kvplan._util.errors import UnmodelledError
from kvplan.engines.vllm.architectures import unregistered, vllm_served_architecture
from kvplan.sources.hf_config import load_config
from kvplan.sources.support import NOT_A_DECODER, REFUSED, support_table, vllm_registry

ROOT = Path(__file__).resolve().parent.parent
VLLM_SRC = Path("/tmp/vllm-src")  # each release's .py files, unpacked from its PyPI wheel
REGISTRY = vllm_registry()
TABLE = support_table()


def test_registry_is_vllm_0_34s_with_each_entry_read_one_way() -> None:
    assert REGISTRY["vllm_version"] == "0.34.0"
    reads = {e["read"] for e in REGISTRY["architectures"].values()}
    assert reads == {"inspected 0.32.0", "static 0.34.0"}
    arrivals = {n: e["registered_from"] for n, e in REGISTRY["architectures"].items()
                if e["read"] == "static 0.34.0"}
    # 0.34's _VLLM_MODELS: 426 names, 391 - 6 + 41 over 0.32's.
    assert len(REGISTRY["architectures"]) == 426 and len(arrivals) == 41
    # 0.33.0 registry.py:211 and 0.34.0 :215 `"Step5ForCausalLM": ("vllm.models.step5",
    # "Step5ForCausalLM")` (absent from 0.32.0); 0.34.0 :222 `"ZayaForCausalLM": ("zaya",
    # "ZayaForCausalLM")` (absent from 0.33.0); 0.33.0 :100 "DomynEdgeForCausalLM".
    assert arrivals["Step5ForCausalLM"] == "0.33.0"
    assert arrivals["ZayaForCausalLM"] == "0.34.0"
    assert arrivals["DomynEdgeForCausalLM"] == "0.33.0"
    # 0.34.0 registry.py:937 `"KeyeForConditionalGeneration": "0.33.0"` in
    # _PREVIOUSLY_SUPPORTED_MODELS; MedusaModel and the PEagle drafts are in no table.
    assert REGISTRY["previously_supported"]["KeyeForConditionalGeneration"] == "0.33.0"
    assert "MedusaModel" not in REGISTRY["previously_supported"]
    # 0.34 serves OlmoeForCausalLM through the Transformers backend
    # (_TRANSFORMERS_SUPPORTED_MODELS: TransformersMoEForCausalLM); 0.32's own olmoe.py is
    # recorded as what it was.
    olmoe = REGISTRY["architectures"]["OlmoeForCausalLM"]
    assert olmoe["category"] == "transformers-backend-supported"
    assert olmoe["was"]["module"] == "olmoe"


def test_each_arrival_and_removal_has_a_row_with_its_release() -> None:
    for name, entry in REGISTRY["architectures"].items():
        assert TABLE[name].registered_from == entry.get("registered_from"), name
    for name in ("KeyeForConditionalGeneration", "MedusaModel", "PEagleDraftModel"):
        assert name not in REGISTRY["architectures"] and TABLE[name].removed_after, name
    assert TABLE["MedusaModel"].removed_after == "0.32.0"  # not in 0.33.0's registry.py
    assert TABLE["PEagleDraftModel"].removed_after == "0.33.0"  # 0.33.0 registry.py:698
    # No public config.json of a 0.33 / 0.34 arrival was checked: none is exact; the pooling
    # ones are not decoders.
    for row in TABLE.values():
        if row.registered_from:
            assert row.status in (REFUSED, NOT_A_DECODER), row
            if row.category in ("embedding", "late-interaction", "token-classification",
                                "cross-encoder"):
                assert row.status == NOT_A_DECODER, row


def _as(architecture: str):
    # Llama-3.1-8B's config.json (tests/data/configs) under a 0.33 / 0.34 arrival's name: what
    # the engine's rule sees once a row of that name is exact.
    spec, _ = load_config(ROOT / "tests" / "data" / "configs" / "llama-3.1-8b.json")
    return replace(spec, architectures=(architecture,), remote_code=False)


def test_an_arrival_is_not_served_before_its_release() -> None:
    step5, zaya = _as("Step5ForCausalLM"), _as("ZayaForCausalLM")
    assert unregistered(step5, "0.32") and unregistered(step5, None)  # default: 0.32
    assert not unregistered(step5, "0.33") and not unregistered(step5, "0.34.0")
    assert unregistered(zaya, "0.33.0") and not unregistered(zaya, "0.34")
    # 0.32 has no class of that name and transformers none to wrap: vLLM refuses it.
    with pytest.raises(UnmodelledError, match=r"--engine-version 0\.33 or newer"):
        vllm_served_architecture(step5, "0.32", "0.32")
    assert vllm_served_architecture(step5, "0.33", "0.32") is step5


@pytest.mark.skipif(not (VLLM_SRC / "0.32.0").is_dir(), reason="vLLM 0.32's source not here")
def test_static_reader_agrees_with_vllms_inspection_of_0_32() -> None:
    # The static flags of every class vLLM 0.32's CPU build inspected (vllm_registry.json
    # "inspected 0.32.0"), read from 0.32's source: measured 370 of 385 agree on every flag;
    # is_hybrid, is_attention_free, attn_type and the transcription flags on all 385. The rest
    # differ on is_text_generation_model (15: a base aliased under `if TYPE_CHECKING` or picked
    # by platform, nvidia/ read where the CPU build took amd/ or xpu/), is_pooling_model (2) and
    # supports_multimodal (1).
    sys.path.insert(0, str(ROOT / "tests" / "benches"))
    try:
        from vllm_registry_static import Source, module_name
    finally:
        sys.path.pop(0)
    source = Source(VLLM_SRC / "0.32.0" / "vllm")
    inspected = {n: e for n, e in REGISTRY["architectures"].items()
                 if e["read"] == "inspected 0.32.0" and "inspect_error" not in e
                 and "was" not in e}
    agree, exact_flags = 0, ("is_hybrid", "is_attention_free", "attn_type",
                             "supports_transcription", "supports_transcription_only")
    for name, entry in inspected.items():
        flags = source.flags(module_name(entry["module"]), entry["class"])
        assert flags is not None, name
        assert {k: flags[k] for k in exact_flags} == {k: entry[k] for k in exact_flags}, name
        agree += all(flags[k] == entry[k] for k in flags)
    assert agree >= len(inspected) - 18, (agree, len(inspected))


def test_support_rows_name_their_release_in_the_json() -> None:
    from typer.testing import CliRunner

    from kvplan.cli import app

    out = CliRunner().invoke(app, ["models", "Step5", "--format", "json"])
    assert out.exit_code == 0, out.output
    rows = {r["architecture"]: r for r in json.loads(out.stdout)}
    assert rows["Step5ForCausalLM"]["registered_from"] == "0.33.0"
