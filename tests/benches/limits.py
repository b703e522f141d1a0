"""The bounds table of examples/errors.md, read from the constants that enforce them.

Run: python -m tests.benches.limits   (rewrites the block between the markers in errors.md)

tests/test_readme.py checks that the block equals what this computes, so the guide never states
a bound the code does not hold (change a constant, rerun this).
"""

from __future__ import annotations

import inspect
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "examples" / "errors.md"
BEGIN = "<!-- limits:begin (python -m tests.benches.limits) -->"
END = "<!-- limits:end -->"


def _default(command: object, name: str) -> object:
    return inspect.signature(command).parameters[name].default


def rows() -> list[tuple[str, str, str]]:
    """(what is bounded, the bound, what happens past it), one per bound."""
    from kvplan._util.units import GiB, MiB
    from kvplan._util.validate import MAX_LAYERS, MAX_SIZE
    from kvplan.analysis.device import probe, ranks
    from kvplan.analysis.plan_search import MAX_NODES, MAX_TP
    from kvplan.analysis.simulate.workload import MAX_REQUESTS
    from kvplan.analysis.sweep import MAX_POINTS, MAX_RANGE_VALUES
    from kvplan.cli.common import MAX_FLAG_FLOAT, MAX_FLAG_INT, MAX_HUB_TIMEOUT_S
    from kvplan.sources import hub_http, server
    from kvplan.sources.checkpoint import MAX_HEADER_BYTES
    from kvplan.sources.files import MAX_INPUT_BYTES, MAX_PATH_CHARS

    def exp2(n: int) -> str:
        return f"2^{n.bit_length() - 1}" if n & (n - 1) == 0 else f"{n:,}"

    return [
        ("a spec, config.json or index file", f"{MAX_INPUT_BYTES // MiB} MiB", "exit 2"),
        ("a path", f"{MAX_PATH_CHARS:,} characters", "exit 2"),
        ("a size in a spec or config.json", exp2(MAX_SIZE), "exit 2, naming the field"),
        ("layers in a spec or config.json", f"{MAX_LAYERS:,}", "exit 2, naming the field"),
        ("a safetensors header", f"{MAX_HEADER_BYTES // MiB} MiB", "exit 2"),
        ("an integer flag", exp2(MAX_FLAG_INT), "exit 2, naming the flag"),
        ("a decimal flag", f"{MAX_FLAG_FLOAT:.0e}", "exit 2, naming the flag"),
        ("values one sweep range expands to", f"{MAX_RANGE_VALUES:,}", "exit 2"),
        ("points in one sweep grid", f"{MAX_POINTS:,}", "exit 2"),
        ("simulate: synthetic requests", f"{MAX_REQUESTS:,} (--max-sim-requests)", "exit 2"),
        ("plan: nodes searched when nothing fits", f"{MAX_NODES}", "alternatives stop there"),
        ("plan: GPUs in one TP group", f"{MAX_TP}", "larger TP not tried"),
        ("Hub requests of one command, in all", f"{hub_http.HUB_TIMEOUT_S:g} s "
         f"(--hub-timeout, up to {MAX_HUB_TIMEOUT_S:g})", "exit 1, one line"),
        ("Hub connection", f"{hub_http.CONNECT_TIMEOUT_S:g} s, one retry at most",
         "exit 1, one line"),
        ("check: reading the server", f"{server.DEFAULT_TIMEOUT_S:g} s (--timeout)",
         "exit 2, one line"),
        ("check: one server answer", f"{server.MAX_BODY_BYTES // MiB} MiB", "exit 2, one line"),
        ("verify on CPU: the budget (default)",
         f"min({probe.CPU_DEFAULT_CAP_BYTES // GiB} GiB, "
         f"{probe.CPU_DEFAULT_AVAILABLE_SHARE:.0%} of available)", "shared by the ranks"),
        ("verify on CPU: all ranks' budgets",
         f"{probe.CPU_MAX_AVAILABLE_SHARE:.0%} of available memory", "exit 2"),
        ("verify under torchrun: ranks joining",
         f"{ranks.RENDEZVOUS_TIMEOUT_S:g} s (--rendezvous-timeout)",
         "exit 2, naming RANK / WORLD_SIZE"),
    ]


def block() -> str:
    lines = [BEGIN, "| bounded | bound | past it |", "|---|---|---|"]
    lines += [f"| {what} | {bound} | {past} |" for what, bound, past in rows()]
    return "\n".join(lines + [END])


def guide_block(text: str) -> str:
    """The block as the guide holds it, markers included."""
    return text[text.index(BEGIN):text.index(END) + len(END)]


if __name__ == "__main__":
    text = GUIDE.read_text()
    GUIDE.write_text(text.replace(guide_block(text), block()))
