"""A spec's `position_fields`: config.json's position keys and rope_scaling as stated, from which
each engine derives its own maximum context (kvplan.model.context_limit.PositionFields; the
engines' rules: kvplan.engines.<name>.context). Engine-neutral data:

    position_fields:
      max_position_embeddings: 131072
      seq_length: 8192
      rope_scaling: {rope_type: linear, factor: 8}

`kvplan import` writes it where it says more than max_position_embeddings alone; a spec without
it has every engine use its `max_model_len`, else `max_position_embeddings`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvplan._util.errors import SpecError
from kvplan._util.validate import checked_text
from kvplan.model.context_limit import POSITION_KEYS, PositionFields, RopeScaling

FIELD = "position_fields"
_ROPE = "rope_scaling"
_ROPE_NUMBERS = ("factor", "original_max_position_embeddings")
_ROPE_NAMES = ("rope_type", "type")


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _rope_from_config(value: Any) -> RopeScaling | None:
    if not isinstance(value, Mapping):
        return None
    rope = RopeScaling(**{k: value[k] for k in _ROPE_NUMBERS if _number(value.get(k))},
                       **{k: value[k] for k in _ROPE_NAMES if isinstance(value.get(k), str)})
    return None if rope == RopeScaling() else rope


def position_fields_from_config(config: Mapping[str, Any],
                                max_position: int | None) -> PositionFields | None:
    """The (text) config's position keys and rope_scaling as stated; `max_position` is the
    max_position_embeddings kvplan read: where the config states none, its config class's
    default (Falcon's 2048, Gemma-3's 131,072) stands for it, as in the config object the
    engines read, unless an n_positions alias or a seq_length gave it. None when that says
    nothing beyond max_position_embeddings (`max_position`) itself."""
    keys = {k: config[k] for k in POSITION_KEYS if _number(config.get(k))}
    if ("max_position_embeddings" not in keys and max_position is not None
            and "n_positions" not in keys and "seq_length" not in keys):
        keys["max_position_embeddings"] = max_position
    fields = PositionFields(keys=tuple(keys.items()), rope_scaling=_rope_from_config(
        config.get(_ROPE)))
    plain = PositionFields(keys=() if max_position is None else (
        ("max_position_embeddings", max_position),))
    return None if fields == plain else fields


def position_fields_mapping(fields: PositionFields | None) -> dict[str, Any] | None:
    """The spec mapping's `position_fields` (what `kvplan import` writes)."""
    if fields is None:
        return None
    out: dict[str, Any] = dict(fields.keys)
    rope = fields.rope_scaling
    if rope is not None:
        out[_ROPE] = {k: getattr(rope, k) for k in ("rope_type", "type", *_ROPE_NUMBERS)
                      if getattr(rope, k) is not None}
    return out


def parse_position_fields(value: Any, path: str) -> PositionFields | None:
    """A spec's `position_fields` (None when absent)."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise SpecError(path, FIELD, "expected a mapping of config.json position keys "
                                     f"({', '.join(POSITION_KEYS)}) and rope_scaling")
    keys = []
    for key, number in value.items():
        if key == _ROPE:
            continue
        if key not in POSITION_KEYS:
            raise SpecError(path, f"{FIELD}.{key}",
                            f"expected one of {', '.join(POSITION_KEYS)} or {_ROPE}")
        if not _number(number):
            raise SpecError(path, f"{FIELD}.{key}", "expected a number (as config.json states it)")
        keys.append((str(key), number))
    rope = value.get(_ROPE)
    if rope is not None:
        where = f"{FIELD}.{_ROPE}"
        if not isinstance(rope, Mapping) or set(rope) - {*_ROPE_NUMBERS, *_ROPE_NAMES}:
            raise SpecError(path, where, "expected a mapping of factor, rope_type, type, "
                                         "original_max_position_embeddings")
        for k in _ROPE_NUMBERS:
            if k in rope and not _number(rope[k]):
                raise SpecError(path, f"{where}.{k}", "expected a number")
        for k in _ROPE_NAMES:
            if k in rope:
                checked_text(rope[k], path=path, field=f"{where}.{k}")
        rope = RopeScaling(**rope)
    return PositionFields(keys=tuple(keys), rope_scaling=rope)
