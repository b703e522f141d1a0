"""A plan's launch as shell text to paste: each command over lines ending in ` \\`, one option
group a line (a group wider than the terminal split before each flag), a `# node N` comment
before each node's commands when there are several, and the files the commands read as
here-documents. Never wrapped by the table renderer (kvplan.present.render.View.code)."""

from __future__ import annotations

import re
import shlex

from kvplan.engines.launch import Command, LaunchPlan

WIDTH = 80
INDENT = "    "
# An argument holding a placeholder ($HEAD_IP, $NODE1_IP:6379) stays unquoted so the shell
# expands it; nothing else in it needs quoting.
_PLACEHOLDER = re.compile(r"[\w.,:=/@-]*\$[A-Z][A-Z0-9_]*[\w.,:=/@$-]*")


def quote(arg: str) -> str:
    return arg if _PLACEHOLDER.fullmatch(arg) else shlex.quote(arg)


def join(args: tuple[str, ...]) -> str:
    return " ".join(quote(a) for a in args)


def _pieces(group: tuple[str, ...]) -> list[str]:
    """A group as printed pieces: whole when it fits, else one per flag with its value."""
    out: list[str] = []
    for arg in group:
        if out and not arg.startswith("-"):
            out[-1] += " " + quote(arg)  # a flag's value, a command's arguments
        else:
            out.append(quote(arg))
    return out


def command_lines(cmd: Command, width: int = WIDTH) -> list[str]:
    """`cmd` as continued shell lines within `width` columns where its words allow."""
    lines: list[str] = []
    for i, group in enumerate(cmd.groups):
        prefix = "" if i == 0 else INDENT
        whole = prefix + join(group)
        if len(whole) + 2 <= width or len(group) <= 2:
            lines.append(whole)
        else:
            pieces = _pieces(group)
            lines.append(prefix + pieces[0])
            lines += [INDENT + p for p in pieces[1:]]
    return [line + " \\" for line in lines[:-1]] + lines[-1:]


def launch_lines(plan: LaunchPlan, width: int = WIDTH) -> list[str]:
    """Every command of `plan` as shell text in the order to run them: the files, then each
    node's set-up (a cluster head's `ray start --head`), the other commands head first, and last
    the commands that wait for their cluster (those with a set-up)."""
    several = plan.nodes > 1
    out = ["# launch, node by node in this order:" if several else "# launch:"]
    for name, text in plan.files:
        out += [f"cat > {shlex.quote(name)} <<'EOF'", *text.rstrip("\n").split("\n"), "EOF"]
    # The engine's long-context override (on every node).
    out += [f"export {k}={shlex.quote(v)}" for k, v in plan.env]

    def node(cmd: Command, when: str = "") -> list[str]:
        if not several:
            return []
        role = "head, $HEAD_IP" if cmd.node == 0 else f"$NODE{cmd.node}_IP"
        return [f"# node {cmd.node} ({role}){when}"]

    waiting = [c for c in plan.commands if c.setup]
    for cmd in waiting:
        out += node(cmd) + [join(s) for s in cmd.setup]
    for cmd in plan.commands:
        if not cmd.setup:
            out += node(cmd) + command_lines(cmd, width)
    for cmd in waiting:
        out += node(cmd, ", once the other nodes have joined") + command_lines(cmd, width)
    return out
