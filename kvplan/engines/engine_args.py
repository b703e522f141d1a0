"""The engines' own launch flags that `kvplan simulate` (and `plan --rate`) take as they are
spelled in the engine: `--engine-arg=--scheduler-recv-interval=4` for SGLang,
`--engine-arg attention_dp_config.enable_balance=true` for TensorRT-LLM's llm_args YAML keys.

Each engine package declares the flags it understands in one table (``kvplan.engines.<name>.
engine_args.FLAGS``, reached through `Engine.engine_flags`): the flag as the engine spells it,
the engine source that defines it (file:line, version), the value it takes and the simulator
setting it sets (a path into kvplan.analysis.simulate.engine_args.EngineSettings:
``max_num_seqs`` or ``sglang.scheduler_recv_interval``). Parsing is here, once: a flag the
table lacks or a value it refuses is one line naming the --engine-arg, the flag and what was
expected (exit 2), never a guess.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from kvplan._util.errors import InputError
from kvplan._util.versions import version_key

OPTION = "--engine-arg"


class Kind(str, Enum):
    """The value a flag takes, as the engine parses it."""

    int = "int"  # argparse type=int / a pydantic int
    float = "float"
    bool = "bool"  # a YAML / JSON boolean: true or false
    switch = "switch"  # argparse store_true: the flag alone, no value
    choice = "choice"


_TRUE, _FALSE = ("true", "1", "yes", "on"), ("false", "0", "no", "off")


@dataclass(frozen=True, kw_only=True)
class EngineFlag:
    """One engine flag kvplan's simulator reads."""

    flag: str  # as the engine spells it: "--max-prefill-tokens", "max_batch_size"
    kind: Kind
    sets: str  # the EngineSettings path it sets: "sglang.max_prefill_tokens"
    source: str  # where the engine defines it: "python/sglang/srt/server_args.py:330 (0.5.9)"
    help: str
    minimum: float | None = None  # int / float: the least value the simulator takes
    choices: tuple[str, ...] = ()  # choice: the values simulated (the engine's spelling)
    value: Any = None  # switch: the value it sets; bool: None (as given) or "not" (negated)
    kvplan_option: str | None = None  # kvplan's own option for the same setting, if any
    # The releases that have the flag: from `since`, before `before` (None: no bound read).
    since: str | None = None
    before: str | None = None

    @property
    def releases(self) -> str:
        """The releases that have it, in words ("" where no bound was read)."""
        if self.since is None and self.before is None:
            return ""
        if self.before is None:
            return f"from {self.since}"
        return (f"before {self.before}" if self.since is None
                else f"{self.since} to before {self.before}")

    def missing_in(self, version: str | None) -> bool:
        """Whether `version` (None: the newest) has no such flag."""
        key = version_key(version)
        return ((self.since is not None and key < version_key(self.since))
                or (self.before is not None and key >= version_key(self.before)))

    @property
    def expected(self) -> str:
        """What the value must be, for messages and `kvplan help engines`."""
        if self.kind is Kind.switch:
            return "no value (a switch)"
        if self.kind is Kind.bool:
            return "true or false"
        if self.kind is Kind.choice:
            return "one of " + ", ".join(self.choices)
        what = "an integer" if self.kind is Kind.int else "a number"
        if self.minimum is None:
            return what
        low = int(self.minimum) if self.kind is Kind.int else self.minimum
        return f"{what} >= {low}"

    def parse(self, text: str | None) -> Any:
        """The value the flag sets from the text after it (None: the flag alone)."""
        if self.kind is Kind.switch:
            if text is not None:
                raise ValueError
            return self.value
        if text is None:
            raise ValueError
        raw = text.strip()
        if self.kind is Kind.bool:
            low = raw.lower()
            if low not in _TRUE + _FALSE:
                raise ValueError
            given = low in _TRUE
            return (not given) if self.value == "not" else given
        if self.kind is Kind.choice:
            # The engines' choice values are matched as spelled, or in either case where the
            # engine's enum is upper case (TensorRT-LLM's CapacitySchedulerPolicy).
            by_lower = {c.lower(): c for c in self.choices}
            if raw.lower() not in by_lower:
                raise ValueError
            return by_lower[raw.lower()].lower()
        number: float
        if self.kind is Kind.int:
            if not re.fullmatch(r"[+-]?\d+", raw):
                raise ValueError
            number = int(raw)
        else:
            number = float(raw)  # ValueError on a bad float
            if number != number:  # NaN
                raise ValueError
        if self.minimum is not None and number < self.minimum:
            raise ValueError
        return number


@dataclass(frozen=True, kw_only=True)
class EngineArg:
    """One --engine-arg as parsed: the flag, the value it sets and the text given."""

    flag: EngineFlag
    value: Any
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {"flag": self.flag.flag, "value": self.value, "sets": self.flag.sets,
                "given": self.text}


@dataclass(frozen=True)
class EngineFlags:
    """One engine's table of flags and their parsing (`Engine.engine_flags`)."""

    engine: str  # the engine's display name
    flags: tuple[EngineFlag, ...]

    def known(self) -> str:
        return ", ".join(f.flag for f in self.flags)

    def parse(self, texts: Iterable[str], option: str = OPTION, *, version: str | None = None
              ) -> tuple[EngineArg, ...]:
        """Each text (`--flag=value`, `--flag value`, `--flag`, `key=value`) parsed by the
        table for the engine's `version` (None: its newest); an unknown flag, one that release
        lacks, a bad value or a flag given twice is one line."""
        by_name = {f.flag: f for f in self.flags}
        out: list[EngineArg] = []
        for text in texts:
            name, value = _split(text)
            flag = by_name.get(name)
            if flag is None:
                raise InputError(f"{option} {text!r}: {name or '(empty)'} is not a "
                                 f"{self.engine} flag kvplan simulates (known: {self.known()})")
            if flag.missing_in(version):
                which = version or "(the newest; --engine-version picks another)"
                raise InputError(f"{option} {text!r}: {self.engine} {which} has no "
                                 f"{flag.flag} (releases {flag.releases}; {flag.source})")
            try:
                parsed = flag.parse(value)
            except ValueError:
                got = "no value" if value is None else repr(value)
                raise InputError(f"{option} {text!r}: {flag.flag} expects {flag.expected} "
                                 f"({flag.source}), got {got}") from None
            if any(a.flag.flag == flag.flag for a in out):
                raise InputError(f"{option} {text!r}: {flag.flag} given twice")
            out.append(EngineArg(flag=flag, value=parsed, text=text))
        return tuple(out)

    def settings(self, args: Sequence[EngineArg]) -> list[tuple[EngineArg, str, Any]]:
        """(arg, settings path, value) for each parsed arg: by default what its flag sets.
        An engine whose flags combine into one setting overrides this."""
        return [(a, a.flag.sets, a.value) for a in args]


def _split(text: str) -> tuple[str, str | None]:
    """`--flag=value`, `--flag value`, `key=value` or `key: value` -> (flag, value); `--flag`
    alone -> (flag, None)."""
    body = text.strip()
    match = re.match(r"([^=:\s]+)\s*(?:=|:|\s)\s*(.*)\Z", body, re.DOTALL)
    if match is None:
        return body, None
    return match.group(1), match.group(2)
