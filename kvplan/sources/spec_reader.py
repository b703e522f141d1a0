"""One mapping section of a model spec (YAML, or the mapping config.json import builds), read
field by field: each value validated where it is read, errors naming the file and the dotted
field, unknown keys refused at `finish` (kvplan.sources.spec_yaml and its section parsers)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvplan._util.errors import SpecError
from kvplan._util.validate import MAX_SIZE, checked_int, checked_text


class SectionReader:
    """Reads one mapping section, remembering which keys were consumed."""

    def __init__(self, data: Any, path: str, prefix: str) -> None:
        if not isinstance(data, Mapping):
            raise SpecError(path, prefix.rstrip(".") or None, "expected a mapping of fields")
        self.data = data
        self.path = path
        self.prefix = prefix
        self.seen: set[str] = set()

    def field(self, key: str) -> str:
        return f"{self.prefix}{key}"

    def error(self, key: str, message: str) -> SpecError:
        return SpecError(self.path, self.field(key), message)

    def _get(self, key: str, required: bool) -> Any:
        self.seen.add(key)
        if key not in self.data or self.data[key] is None:
            if required:
                raise self.error(key, "missing required field")
            return None
        return self.data[key]

    def int(self, key: str, *, required: bool = True, default: int | None = None,
            minimum: int = 1, maximum: int = MAX_SIZE) -> int | None:
        value = self._get(key, required)
        if value is None:
            return default
        return checked_int(value, path=self.path, field=self.field(key), minimum=minimum,
                           maximum=maximum)

    def str(self, key: str, *, required: bool = True, default: str | None = None,
            choices: tuple[str, ...] | None = None) -> str | None:
        value = self._get(key, required)
        if value is None:
            return default
        checked_text(value, path=self.path, field=self.field(key))
        if choices is not None and value not in choices:
            raise self.error(key, f"expected one of {', '.join(choices)}, got {value!r}")
        return value

    def bool(self, key: str, *, default: bool = False) -> bool:
        value = self._get(key, False)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self.error(key, f"expected true or false, got {value!r}")
        return value

    def section(self, key: str, *, required: bool = True) -> SectionReader | None:
        value = self._get(key, required)
        if value is None:
            return None
        return SectionReader(value, self.path, self.field(key) + ".")

    def forbid(self, keys: tuple[str, ...], why: str) -> None:
        for key in keys:
            if key in self.data:
                raise self.error(key, why)

    def finish(self) -> None:
        unknown = sorted(str(k) for k in self.data if k not in self.seen)
        if unknown:
            raise self.error(unknown[0], "unknown field (see model_specs/README.md for the schema)")
