"""The simulator's settings that an engine's own flags set (`kvplan simulate --engine-arg`,
`plan --rate --engine-arg`): kvplan's options of the same names first, then each flag the
engine's table parsed (kvplan.engines.engine_args) sets the path it names.

A flag that sets what a kvplan option already set to another value, or two flags setting one
thing two ways (`--async-scheduling` and `--no-async-scheduling`), is one line: kvplan does not
pick between them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields, is_dataclass, replace
from typing import Any

from kvplan._util.errors import InputError
from kvplan.analysis.simulate.sglang_scheduler import SglangOptionsSim
from kvplan.analysis.simulate.trtllm_scheduler import TrtllmOptionsSim
from kvplan.engines.base import Engine
from kvplan.engines.engine_args import OPTION, EngineArg


@dataclass(frozen=True, kw_only=True)
class EngineSettings:
    """What the engine flags can set: the estimate inputs (`max_num_seqs`,
    `max_num_batched_tokens`, `prefix_caching`, SGLang's MoE all-to-all settings, vLLM's
    `reserve_full_isl`; None: the engine's default) and the
    simulator's set-up (kvplan.analysis.simulate.run.setup's `async_scheduling`, `sglang`,
    `trtllm`). Each field has the default of the kvplan option of the same name."""

    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    prefix_caching: bool | None = None
    async_scheduling: bool | None = None
    # vLLM's --[no-]scheduler-reserve-full-isl (VllmOptions.reserve_full_isl), an estimate
    # input; None: the release's admission (kvplan.engines.vllm.admission).
    reserve_full_isl: bool | None = None
    # SGLang's MoE all-to-all (kvplan.engines.sglang.deepep): estimate inputs, None: unset.
    moe_a2a_backend: str | None = None
    deepep_mode: str | None = None
    moe_dense_tp_size: int | None = None
    enable_dp_lm_head: bool | None = None
    sglang: SglangOptionsSim = field(default_factory=SglangOptionsSim)
    trtllm: TrtllmOptionsSim = field(default_factory=TrtllmOptionsSim)
    # The flags applied, in the order given (the JSON's `engine_args`).
    applied: tuple[EngineArg, ...] = ()

    def estimate_options(self) -> dict[str, Any]:
        """The estimate inputs set (estimate_inputs' keywords), without the Nones."""
        given = {"max_num_seqs": self.max_num_seqs,
                 "max_num_batched_tokens": self.max_num_batched_tokens,
                 "prefix_caching": self.prefix_caching,
                 "moe_a2a_backend": self.moe_a2a_backend, "deepep_mode": self.deepep_mode,
                 "moe_dense_tp_size": self.moe_dense_tp_size,
                 "enable_dp_lm_head": self.enable_dp_lm_head,
                 "reserve_full_isl": self.reserve_full_isl}
        return {k: v for k, v in given.items() if v is not None}

    def applied_dicts(self) -> list[dict[str, Any]]:
        return [a.to_dict() for a in self.applied]


_DEFAULT = EngineSettings()


def setting_paths() -> set[str]:
    """Every path an engine flag may set (a test holds each table to them)."""
    out: set[str] = set()
    for f in fields(EngineSettings):
        if f.name == "applied":
            continue
        value = getattr(_DEFAULT, f.name)
        if is_dataclass(value):  # an engine's own option group: each of its fields
            out |= {f"{f.name}.{g.name}" for g in fields(value)}
        else:
            out.add(f.name)
    return out


def _get(settings: EngineSettings, path: str) -> Any:
    value: Any = settings
    for part in path.split("."):
        value = getattr(value, part)
    return value


def _set(settings: EngineSettings, path: str, value: Any) -> EngineSettings:
    head, _, rest = path.partition(".")
    if not rest:
        return replace(settings, **{head: value})
    return replace(settings, **{head: replace(getattr(settings, head), **{rest: value})})


def with_engine_args(settings: EngineSettings, engine: Engine, texts: Sequence[str],
                     version: str | None = None) -> EngineSettings:
    """`settings` (kvplan's own options) with the engine's flags `texts` applied, as the
    engine's `version` (None: the newest kvplan models) takes them."""
    if not texts:
        return settings
    table = engine.engine_flags
    args = table.parse(texts, version=version)
    set_by: dict[str, EngineArg] = {}
    for arg, path, value in table.settings(args):
        if path not in setting_paths():  # a table naming a setting that is not there
            raise InputError(f"{OPTION} {arg.text!r}: {arg.flag.flag} sets {path}, "
                             "which the simulator does not have")
        earlier = set_by.get(path)
        current = _get(settings, path)
        if earlier is not None and current != value:
            raise InputError(f"{OPTION} {arg.text!r}: {earlier.flag.flag} "
                             f"({earlier.text!r}) sets the same setting otherwise; give one")
        if earlier is None and current != _get(_DEFAULT, path) and current != value:
            raise InputError(f"{OPTION} {arg.text!r}: {arg.flag.flag} sets {path}, which "
                             f"kvplan's own option already set to {current!r}; give one")
        set_by[path] = arg
        settings = _set(settings, path, value)
    return replace(settings, applied=settings.applied + args)
