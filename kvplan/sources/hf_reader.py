"""Reading a config.json mapping's values: `ConfigReader` holds the mapping, the path (for
errors) and the warnings gathered so far, and reads each field by its transformers name with
kvplan._util.validate's rules (one-line errors naming the key). Used by every config.json reader
of kvplan.sources (hf_config, hf_families, hf_hybrid, hf_vision)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvplan._util.errors import SpecError
from kvplan._util.validate import MAX_SIZE, checked_int, checked_int_list
from kvplan.model.spec import Assumption

MISSING = "missing: needed for KV sizing"


class ConfigReader:
    """A config.json mapping plus the path (for errors) and the warnings gathered so far."""

    def __init__(self, data: Mapping[str, Any], path: str, model_type: str) -> None:
        self.data = data
        self.path = path
        self.model_type = model_type
        self.warnings: list[str] = []
        self.assumed: list[Assumption] = []  # assumptions for an unknown model_type

    def has(self, key: str) -> bool:
        return self.data.get(key) is not None

    def first(self, *keys: str) -> tuple[str | None, Any]:
        for key in keys:
            if self.data.get(key) is not None:
                return key, self.data[key]
        return None, None

    def int(self, *keys: str, required: str | None = None, what: str = MISSING,
            minimum: int = 1, maximum: int = MAX_SIZE) -> int | None:
        """The first of `keys` present, as an integer in [minimum, maximum] (kvplan._util.validate:
        NaN, infinities, strings, floats, booleans and absurd sizes are refused, naming the
        key); `required` names the error field when none is present."""
        key, value = self.first(*keys)
        if key is None:
            if required is not None:
                raise SpecError(self.path, required, what)
            return None
        return checked_int(value, path=self.path, field=key, minimum=minimum, maximum=maximum)

    def int_or(self, key: str, default: int, *, minimum: int = 0) -> int:
        """`key` as an integer >= minimum, or `default` when absent (null, or a falsy 0 where
        the config classes treat 0 as unset is the caller's business)."""
        value = self.int(key, minimum=minimum)
        return default if value is None else value

    def int_list(self, key: str, *, minimum: int = 0) -> list[int]:
        """`key` as a list of integers (empty when absent)."""
        value = self.data.get(key)
        if value is None:
            return []
        return checked_int_list(value, path=self.path, field=key, minimum=minimum)

    def bool(self, key: str, default: bool) -> bool:
        value = self.data.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise SpecError(self.path, key, f"expected true or false, got {value!r}")
        return value

    def assume(self, field: str, value: object, why: str, affects: str = "kv") -> None:
        """Record a value taken without the config stating it (an unknown model_type, an
        unpriced tower); `affects`: "kv" or "weights" (`Assumption`)."""
        self.assumed.append(Assumption(field=field, value=str(value), why=why, affects=affects))

    def warn(self, message: str) -> None:
        self.warnings.append(message)


# Checkpoints whose config.json states no model_type, only remote code in auto_map: the
# model_type their config class sets, by architecture (vLLM's transformers_utils/config.py
# get_config: _ARCHITECTURE_TO_MODEL_TYPE, else AutoConfig's trust_remote_code class, whose
# model_type attribute it is). MiniCPM-2B's published config.json names no model_type; its
# configuration_minicpm.MiniCPMConfig sets "minicpm" (vLLM then builds models/minicpm.py by the
# architecture). MiniCPM3-4B's names none either (its Hub commit 8fa0de6 renamed auto_map to
# configuration_minicpm.MiniCPM3Config, model_type "minicpm3", as transformers' re-saves of it
# write; vLLM builds models/minicpm3.py by the architecture).
_ARCHITECTURE_MODEL_TYPE = {"MiniCPMForCausalLM": "minicpm",
                            "MiniCPM3ForCausalLM": "minicpm3",
                            "LongcatFlashForCausalLM": "longcat_flash",
                            "LongcatFlashNgramForCausalLM": "longcat_flash"}


def config_model_type(config: Mapping[str, Any]) -> str:
    value = config.get("model_type")
    if isinstance(value, str) and value.strip():
        return value.strip()
    architectures = config.get("architectures")
    if isinstance(architectures, list) and architectures and isinstance(architectures[0], str):
        return _ARCHITECTURE_MODEL_TYPE.get(architectures[0], "unknown")
    return "unknown"
