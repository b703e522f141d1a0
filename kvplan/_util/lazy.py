"""A read-only mapping filled on first use: preset tables read from a data file only when a
command needs them (kvplan.hardware's GPU and interconnect presets)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TypeVar

V = TypeVar("V")


class LazyMapping(Mapping[str, V]):
    """``load()`` (cache it: it is called on every access) gives the mapping."""

    def __init__(self, load: Callable[[], Mapping[str, V]], name: str) -> None:
        self._load = load
        self._name = name

    def __getitem__(self, key: str) -> V:
        return self._load()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._load())

    def __len__(self) -> int:
        return len(self._load())

    def __repr__(self) -> str:
        return f"{self._name}({', '.join(self)})"
