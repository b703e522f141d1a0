"""An engine version's own argument rules, as a parser: the flag names and arities in
tests/data/launch_flags/<engine>-<version>.json (extracted from that version's source by
tests/launch_flags_extract.py; each file names its source) built into an argparse parser
(abbreviations off, so a flag must be spelled as the engine declares it), and the GPUs a parsed
command asks for, by the engine's own rules."""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from kvplan._util.versions import version_key

DATA = Path(__file__).resolve().parent / "data" / "launch_flags"
# Each engine's positional arguments (vllm serve [model_tag]; trtllm-serve MODEL).
POSITIONAL = {"vllm": ["model_tag"], "sglang": [], "trtllm": ["model"]}
# Flags an engine builds at run time, which the extractor cannot read (tests/launch_flags_extract
# .py): vLLM's API server `--port` (FrontendArgs' `port: int = 8000`, vllm/entrypoints/launchers/
# cli_args.py:285 of 0.32.0, turned into flags by a dataclass loop), which plan --rate writes for
# several servers on one node.
RUNTIME = {"vllm": ["--port"], "sglang": [], "trtllm": []}


def versions(engine: str) -> list[str]:
    """The versions with a flag table, oldest first."""
    names = [p.stem.split("-", 1)[1] for p in DATA.glob(f"{engine}-*.json")]
    return sorted(names, key=version_key)


def table_version(engine: str, version: str | None) -> str:
    """The table for `version`: the newest at or below it (None: the newest)."""
    def padded(v: str | None) -> tuple[int, ...]:
        key = version_key(v)
        return key + (0,) * (4 - len(key))  # 0.10 is 0.10.0

    return [v for v in versions(engine) if padded(v) <= padded(version)][-1]


class _Refused(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None):  # noqa: ANN001
        raise argparse.ArgumentError(self, "refused by this version (deprecated)")


@cache
def parser(engine: str, version: str) -> argparse.ArgumentParser:
    data = json.loads((DATA / f"{engine}-{version}.json").read_text())
    p = argparse.ArgumentParser(prog=f"{engine} {version}", allow_abbrev=False, add_help=False,
                                exit_on_error=False)
    for name in POSITIONAL[engine]:
        p.add_argument(name)
    for flag in RUNTIME[engine]:
        p.add_argument(flag, dest=flag.lstrip("-").replace("-", "_"))
    by_dest: dict[str, tuple[list[str], int, bool]] = {}
    for flag, (nargs, dest, *refused) in data["flags"].items():
        names, _, _ = by_dest.setdefault(dest, ([], nargs, bool(refused)))
        names.append(flag)
    for dest, (names, nargs, refused) in by_dest.items():
        key = dest.lstrip("-").replace("-", "_")
        if refused:
            p.add_argument(*names, dest=key, nargs=0, action=_Refused)
        elif nargs == 0:
            p.add_argument(*names, dest=key, action="store_true")
        else:
            p.add_argument(*names, dest=key, nargs=None if nargs == 1 else "*")
    return p


def parse(engine: str, version: str | None, argv: list[str]) -> argparse.Namespace:
    """Parse `argv` (the engine's arguments, after its program) with `version`'s flags;
    AssertionError on any flag that version does not declare."""
    ns, extra = parser(engine, table_version(engine, version)).parse_known_args(argv)
    assert not extra, f"{engine} {version}: not its flags: {extra}"
    return ns


@dataclass(frozen=True)
class Asked:
    """What one command asks for: GPUs on its node, and the size of the job it joins."""

    gpus: int
    world: int


def _int(ns: argparse.Namespace, *names: str, default: int = 1) -> int:
    """The first of `names` the namespace has set (a version's dest: SGLang up to 0.5.13 keeps
    --tp-size in `tensor_parallel_size` and copies it to tp_size in from_cli_args)."""
    for name in names:
        value = getattr(ns, name, None)
        if value is not None:
            return int(value)
    return default


def vllm_asks(ns: argparse.Namespace) -> Asked:
    """vLLM: the world is DP x TP x PP (each data-parallel engine owns its TP x PP workers,
    vllm/config/parallel.py world_size_across_dp); a node runs its --data-parallel-size-local
    engines, or with --nnodes its share; with Ray, the head asks the whole cluster."""
    tp, pp = _int(ns, "tensor_parallel_size"), _int(ns, "pipeline_parallel_size")
    dp = _int(ns, "data_parallel_size")
    world = dp * tp * pp
    if getattr(ns, "data_parallel_size_local", None) is not None:
        return Asked(gpus=_int(ns, "data_parallel_size_local") * tp * pp, world=world)
    nnodes = _int(ns, "nnodes")
    return Asked(gpus=world // nnodes, world=world)


def sglang_asks(ns: argparse.Namespace) -> Asked:
    """SGLang: --tp-size x --pp-size per server, times --dp-size replicas unless attention DP
    runs inside the TP group; --nnodes share it."""
    tp = _int(ns, "tp_size", "tensor_parallel_size")
    pp = _int(ns, "pp_size", "pipeline_parallel_size")
    dp = 1 if getattr(ns, "enable_dp_attention", False) else _int(ns, "dp_size",
                                                                   "data_parallel_size")
    world = tp * pp * dp
    return Asked(gpus=world // _int(ns, "nnodes"), world=world)


def trtllm_asks(ns: argparse.Namespace) -> Asked:
    world = _int(ns, "tensor_parallel_size") * _int(ns, "pipeline_parallel_size")
    return Asked(gpus=world, world=world)
