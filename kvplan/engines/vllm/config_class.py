"""Whether vLLM needs --trust-remote-code to build a checkpoint's *config* class.

vLLM 0.32's get_config (vllm/transformers_utils/config.py HFConfigParser.parse) builds the
config class from config.json's model_type, in turn:
1. no model_type stated: `_ARCHITECTURE_TO_MODEL_TYPE[architectures[0]]` (Longcat-Flash) and
   transformers' CONFIG_MAPPING class of it;
2. a model_type in `_CONFIG_REGISTRY` (vLLM's own classes, vllm/transformers_utils/configs/):
   that class, registered into AutoConfig, and `trust_remote_code = False`;
3. else `AutoConfig.from_pretrained(model, trust_remote_code=...)`: transformers' rule
   (kvplan.engines.config_class), which without the flag refuses a config whose auto_map names
   an AutoConfig and whose model_type has no class. transformers 5.19 words it "The repository
   ... contains custom code which must be executed to correctly load the model ... Please pass
   the argument `trust_remote_code=True`"; vLLM's own "consider setting `trust_remote_code=True`
   ... or using the `--trust-remote-code` flag" wraps only the older "requires you to execute the
   configuration file", so 5.19's message passes through as it is.
The tables are config_types.json, dumped by tests/benches/vllm_config_types_dump.py from vLLM
0.32.0's CPU build with transformers 5.19.0 (vLLM 0.32 pins transformers >= 5.16.1, < 5.20.0: a
model_type added after 5.16.1 would need the flag under the oldest pin). For older vLLM versions
the same tables are taken.
Run on vLLM 0.32.0's CPU build (dummy weights): tests/data/oracle/exaone-3.0-7.8b's shrink with
EXAONE-3.0's auto_map.AutoConfig put back, without trust_remote_code: ValueError "... Please pass
the argument `trust_remote_code=True` to allow custom code to be run." (ModelConfig validation
fails); with it and a local stand-in configuration_exaone.py (the venv has no remote code):
"Resolved architecture: ExaoneForCausalLM", 65,536 KV tokens at 1 GiB, as recorded without it.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from kvplan.engines.config_class import remote_config_reason

_HERE = Path(__file__).parent


@cache
def config_types() -> dict[str, Any]:
    """config_types.json: {"vllm_version", "transformers_version", "source",
    "architecture_model_types", "vllm_config_types", "transformers_config_types"}."""
    return json.loads((_HERE / "config_types.json").read_text(encoding="utf-8"))


@cache
def _known() -> frozenset[str]:
    data = config_types()
    return frozenset(data["vllm_config_types"]) | frozenset(data["transformers_config_types"])


def vllm_remote_config_reason(remote_config: str | None, model_type: str | None,
                              architectures: tuple[str, ...]) -> str | None:
    """Why `vllm serve` needs --trust-remote-code for the config class (auto_map's AutoConfig
    `remote_config`; `model_type` as config.json states it, None: none); None where not."""
    data = config_types()
    if model_type is None and architectures and architectures[0] in data[
            "architecture_model_types"]:
        return None  # step 1: transformers' class of the model_type vLLM maps it to
    reason = remote_config_reason(
        remote_config, model_type, _known(),
        f"transformers {data['transformers_version']}'s CONFIG_MAPPING nor vLLM "
        f"{data['vllm_version']}'s _CONFIG_REGISTRY")
    return reason and reason + " (vllm/transformers_utils/config.py HFConfigParser.parse)"
