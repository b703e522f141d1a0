"""Writes tests/data/sim_to_real/inferencex_agg_script_flags.csv (aggflags67, issue 30): every
server flag, extra_llm_api_options YAML key and exported environment variable of the InferenceX
launch script each replayable InferenceX row of the aggregated bench ran, as written, with its
file:line, from a local clone of SemiAnalysisAI/InferenceX (the `fetch` tool's mirror; not in
CI: the CSV is the committed record). tests.benches.aiconfig_agg_scripts reads it.

The script of a row: benchmarks/single_node/<model>_<precision>_<gpu>[_trt].sh, before
2026-02-19 benchmarks/<same>.sh or its _docker.sh / _slurm.sh variant (the launcher picked one
by the runner; both are recorded where both exist), at the last commit that touched it before
the row's `measured=` time (a date alone: the end of that day). Values are as the script writes
them ($VAR, $((...)) unresolved): aiconfig_agg_scripts resolves the ones it passes.

Run: python -m tests.benches.aiconfig_agg_scripts_extract CLONE (e.g. the fetch tool's
/work/.mirror/SemiAnalysisAI+InferenceX/repo).
"""

from __future__ import annotations

import csv
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

from tests.benches import aiconfig_agg_scripts as scripts

LAUNCH = re.compile(r"(vllm serve|sglang\.launch_server|trtllm-serve)")
FLAG = re.compile(r"(?<![\w-])(--[A-Za-z][\w.-]*)(?:=(\"[^\"]*\"|'[^']*'|\S+)"
                  r"|[ \t]+(?!--)(\"[^\"]*\"|'[^']*'|[^\s\\>&|]+))?")
EXPORT = re.compile(r"^\s*export\s+([A-Z][A-Z0-9_]*)=(\S*)")
YAML_KEY = re.compile(r"^(\s*)([A-Za-z_][\w-]*):\s*(.*?)\s*$")
IF = re.compile(r"^\s*(if|elif)\s+(.*?);\s*then\s*$")
VAR = re.compile(r"^\s*([A-Z][A-Z0-9_]*)=(\S.*?)\s*$")
HEREDOC = re.compile(r"<<\s*'?EOF'?")


def _git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True,
                          check=False).stdout


@cache
def script_at(repo: str, stem: str, when: str) -> tuple[tuple[str, str], ...]:
    """((path, commit), ...) of the row's script(s) at `when` (module docstring)."""
    found = []
    for path in (f"benchmarks/single_node/{stem}.sh", f"benchmarks/{stem}.sh",
                 f"benchmarks/{stem}_docker.sh", f"benchmarks/{stem}_slurm.sh"):
        line = _git(repo, "log", "-1", "--format=%h", f"--before={when}", "--", path).split()
        if line and _git(repo, "cat-file", "-t", f"{line[0]}:{path}").strip() == "blob":
            found.append((path, line[0]))
            if path.startswith("benchmarks/single_node/") or path == f"benchmarks/{stem}.sh":
                break
    return tuple(found)


def _branch(before: list[str], cond: str | None) -> str:
    """The condition of an elif (`cond`) or else (None) branch after the branches `before`:
    each earlier one negated (`! ( ... )`), and `cond`."""
    return " && ".join([f"! ( {c} )" for c in before] + ([f"( {cond} )"] if cond else []))


def flags_of(text: str) -> list[tuple[int, str, str, str, str]]:
    """(line, kind, name, value, when) of the script's exports (env), server flags (flag),
    YAML keys (yaml: a TensorRT-LLM extra_llm_api_options or `vllm serve --config` file written
    by a heredoc) and its variables' assignments (var); `when` the enclosing branches'
    conditions joined by ` && ` ("" at top level), `! ( ... )` around a branch an elif or else
    needs false."""
    out: list[tuple[int, str, str, str, str]] = []
    in_launch = in_yaml = False
    stack: list[tuple[int, str]] = []
    conds: list[str] = []  # the enclosing branches' conditions
    tried: list[list[str]] = []  # each enclosing if's conditions so far (if, elif, ...)
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split(" #")[0] if not raw.lstrip().startswith("#") else ""
        when = " && ".join(c if c.startswith("!") else f"( {c} )" for c in conds)
        if in_yaml:
            if line.strip() == "EOF":
                in_yaml = False
                continue
            m = YAML_KEY.match(line)
            if m:
                indent = len(m.group(1))
                while stack and stack[-1][0] >= indent:
                    stack.pop()
                key = ".".join([k for _, k in stack] + [m.group(2)])
                if m.group(3):
                    out.append((n, "yaml", key, m.group(3), when))
                else:
                    stack.append((indent, m.group(2)))
            continue
        if HEREDOC.search(line):
            in_yaml, stack = True, []
            continue
        if m := IF.match(line):
            if m.group(1) == "if":
                tried.append([m.group(2)])
                conds.append(m.group(2))
            elif conds:
                conds[-1] = _branch(tried[-1], m.group(2))
                tried[-1].append(m.group(2))
            continue
        if re.match(r"^\s*else\s*$", line) and conds:
            conds[-1] = _branch(tried[-1], None)
            continue
        if re.match(r"^\s*fi\s*$", line) and conds:
            conds.pop()
            tried.pop()
            continue
        launch = LAUNCH.search(line) and not line.lstrip().startswith(("echo", "#"))
        if (m := VAR.match(line)) and not in_launch and not launch:
            out.append((n, "var", m.group(1), m.group(2), when))
        if m := EXPORT.match(line):
            out.append((n, "env", m.group(1), m.group(2), when))
        if launch:
            in_launch = True
            line = line[LAUNCH.search(line).end():]
        if in_launch:
            for m in FLAG.finditer(line):
                out.append((n, "flag", m.group(1), m.group(2) or m.group(3) or "", when))
            if not raw.rstrip().endswith("\\"):
                in_launch = False
    return out


def main(repo: str) -> None:
    rows = []
    for (path, commit) in sorted({pc for key in scripts.row_scripts(repo, script_at).values()
                                  for pc in key}):
        text = _git(repo, "show", f"{commit}:{path}")
        for n, kind, name, value, when in flags_of(text):
            rows.append({"script": path, "commit": commit, "line": n, "kind": kind,
                         "name": name, "value": value, "when": when,
                         "kvplan": scripts.kvplan_reads(kind, name)})
    with Path(scripts.FLAGS_FILE).open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["script", "commit", "line", "kind", "name", "value",
                                          "when", "kvplan"], lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    with Path(scripts.ROWS_FILE).open("w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["id", "script", "commit"])
        for rid, pcs in sorted(scripts.row_scripts(repo, script_at).items()):
            for path, commit in pcs:
                w.writerow([rid, path, commit])
    print(f"{len(rows)} flags", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1])
