"""The environment a disaggregated role's launch line needs (KvConnector.launch_env): vLLM's
NixlConnector asserts VLLM_SSM_CONV_STATE_LAYOUT=DS for a model with recurrent layers from
0.22.0 (nixl/worker.py 0.22.0:250-259 `assert is_conv_state_dim_first()`, "Set
VLLM_SSM_CONV_STATE_LAYOUT=DS"; base_worker.py 0.32.0:600-609 the same; the default layout is
"SD", mamba_utils.py 0.32.0:29-50), so `plan --disagg`'s commands carry it; MooncakeConnector
asserts no layout (0.25.0 - 0.32.0), and a model without recurrent layers needs nothing."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from kvplan.cli.app import app

runner = CliRunner()


def _roles(model: str, *extra: str) -> dict[str, dict]:
    result = runner.invoke(app, [
        "plan", model, "--disagg", "--gpu", "H100", "--prefill-tp", "4", "--decode-tp", "4",
        "--input-len", "8000", "--output-len", "500", "--format", "json", *extra])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    return {role: data[role] for role in ("prefill", "decode")}


def test_nixl_recurrent_roles_set_the_conv_state_layout() -> None:
    for version in ("0.22", "0.32"):
        for role, r in _roles("qwen3-next-80b-a3b", "--engine-version", version).items():
            assert r["command"].startswith("VLLM_SSM_CONV_STATE_LAYOUT=DS vllm serve "), (
                version, role, r["command"])


def test_no_layout_without_recurrent_layers_or_with_mooncake() -> None:
    for r in _roles("llama-3.1-8b", "--engine-version", "0.32").values():
        assert "VLLM_SSM_CONV_STATE_LAYOUT" not in r["command"]
    for r in _roles("qwen3-next-80b-a3b", "--engine-version", "0.25",
                    "--connector", "mooncake").values():
        assert "VLLM_SSM_CONV_STATE_LAYOUT" not in r["command"]
        assert "MooncakeConnector" in r["command"]
