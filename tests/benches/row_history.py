"""Where each bench row came from: the commit that added it (a maintainer's tool, not a test).

Run: python -m tests.benches.row_history   (needs the repository's git history)

It walks the history of each bench's data (`git log --follow`, oldest first) and records, for each
row of today, the first commit whose version of the file holds it:
- the engine bench's JSON logs (tests/data/engine_logs/): a row is its `id` (vLLM's start-up logs
  get one here, from the log's file name or index file id) or, for vLLM rows written before ids,
  its (url, model, TP, PP, fraction, version, max_model_len); the commit goes into the row as
  `added_in`, written into the JSON text without reformatting it; rows that already carry one keep
  it, so rows appended later (and committed, without `added_in`, before anyone looked at kvplan's
  prediction for them) are stamped with the commit that added them on the next run;
- the cost bench's cases (tests/benches/cost_bench.py): a case is its label, or its measured
  figure and source together (so a relabelled row keeps its first commit), looked up in each
  committed examples/cost-bench.md; the commits go to tests/benches/row_commits.py (ADDED_IN),
  with the commit time of every row's commit (COMMIT_TIMES).
A row not found before today's commit gets the newest commit that touched its file.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
LOGS = ROOT / "tests" / "data" / "engine_logs"


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout


def history(path: Path) -> list[tuple[str, str]]:
    """(commit, path at that commit) for every commit touching `path`, oldest first."""
    out = _git("log", "--follow", "--format=%H", "--name-only", "--", str(path.relative_to(ROOT)))
    found, commit = [], None
    for line in out.splitlines():
        line = line.strip()
        if re.fullmatch(r"[0-9a-f]{40}", line):
            commit = line
        elif line and commit:
            found.append((commit, line))
            commit = None
    return found[::-1]


def first_commits(path: Path, keys: Callable[[str], Iterable[Any]]) -> dict[Any, str]:
    """The first commit (12 hex digits) whose version of `path` yields each key."""
    first: dict[Any, str] = {}
    for commit, old in history(path):
        for key in keys(_git("show", f"{commit}:{old}")):
            first.setdefault(key, commit[:12])
    return first


def vllm_row_id(log: dict[str, Any], seen: dict[str, int]) -> str:
    """A stable id from the log's file name (or its index file id), unique within the file."""
    m = re.match(r"https://github.com/([^/]+)/([^/]+)/blob/[^/]+/(.*)", log["url"])
    if m:
        stem = re.sub(r"\.(log|md|txt|json)$", "", m.group(3).rsplit("/", 1)[-1])
        if len(stem) < 12 or stem.lower() == "readme":
            stem = f"{m.group(2)}-{stem}"
    else:
        ids = re.findall(r"file ids? (\d+)", log["url"])
        stem = "index-" + (ids[0] if ids else "unnamed")
    slug = re.sub(r"[^a-z0-9._-]+", "-", stem.lower()).strip("-")
    seen[slug] = seen.get(slug, 0) + 1
    return slug if seen[slug] == 1 else f"{slug}-{seen[slug]}"


def _vllm_key(log: dict[str, Any]) -> tuple:
    return (log["url"], log["model"], log["tp"], log["pp"], log["gpu_memory_utilization"],
            log["vllm_version"], log.get("max_model_len"))


def _insert_after(text: str, anchor: str, rows: list[dict[str, Any]],
                  fields: Callable[[dict[str, Any]], dict[str, str]]) -> str:
    """Insert each row's `fields` after its object's `anchor` key line (two-space keys); a row
    whose `fields` are empty is left as it is."""
    lines = text.split("\n")
    starts = [i for i, line in enumerate(lines) if line.startswith(f'  "{anchor}": ')]
    if len(starts) != len(rows):
        raise RuntimeError(f"{anchor}: {len(starts)} lines for {len(rows)} rows")
    for i, row in reversed(list(zip(starts, rows, strict=True))):
        lines[i + 1:i + 1] = [f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)},"
                              for k, v in fields(row).items()]
    return "\n".join(lines)


def stamp_engine_logs() -> None:
    # vLLM start-up logs: an id (from the file name) and the commit that added the row.
    path = LOGS / "vllm_startup_logs.json"
    text = path.read_text()
    rows = json.loads(text)
    first = first_commits(path, lambda t: map(_vllm_key, json.loads(t)))
    if any("id" not in r for r in rows):
        seen = {r["id"]: 1 for r in rows if "id" in r}
        ids = [r.get("id") or vllm_row_id(r, seen) for r in rows]
        text = _insert_after(text, "url", rows,
                             lambda r: {} if "id" in r else {"id": ids[rows.index(r)]})
        rows = json.loads(text)
    text = _insert_after(text, "id", rows, lambda r: {} if "added_in" in r
                         else {"added_in": first[_vllm_key(r)]})
    path.write_text(text)
    for name in ("sglang_startup_logs", "trtllm_budget_logs", "trtllm_capacity_points",
                 "vllm_kv_token_runs"):
        path = LOGS / f"{name}.json"
        text = path.read_text()
        rows = json.loads(text)
        if all("added_in" in r for r in rows):
            continue
        first = first_commits(path, lambda t: (r.get("id") for r in json.loads(t)))
        path.write_text(_insert_after(text, "id", rows, lambda r, first=first: {}
                                      if "added_in" in r else {"added_in": first[r["id"]]}))


def _md_rows(text: str) -> set[str]:
    """Every table row of a committed cost-bench.md, as its cells joined by '|'."""
    return {line for line in text.splitlines() if line.startswith("| ")}


def stamp_cost_rows() -> dict[str, str]:
    """The commit that added each cost-bench case (its label: the commit)."""
    from tests.benches import cost_bench

    md = ROOT / "examples" / "cost-bench.md"
    versions = [(c[:12], _md_rows(_git("show", f"{c}:{old}"))) for c, old in history(md)]
    added: dict[str, str] = {}
    for case in cost_bench.all_cases():
        measured = cost_bench.measured_text(case)
        for commit, table in versions:
            if any(line.startswith(f"| {case.label} |") or line.startswith(f"| {case.label} (")
                   or (f" | {measured} | " in line and case.url in line) for line in table):
                added[case.label] = commit
                break
        else:
            added[case.label] = versions[-1][0]
    return added


def write_row_commits(cost_added: dict[str, str]) -> None:
    """tests/benches/row_commits.py: the cost bench's ADDED_IN and every row commit's time."""
    commits = set(cost_added.values())
    for path in LOGS.glob("*.json"):
        commits |= {r["added_in"] for r in json.loads(path.read_text()) if "added_in" in r}
    times = {c: _git("show", "-s", "--format=%cI", c).strip() for c in sorted(commits)}

    def body(d: dict[str, str]) -> str:
        return "".join(f"    {json.dumps(k, ensure_ascii=False)}: {json.dumps(v)},\n"
                       for k, v in d.items())

    (ROOT / "tests" / "benches" / "row_commits.py").write_text(
        '"""When each bench row was added (written by `python -m tests.benches.row_history`)."""'
        "\n# ruff: noqa: E501\n\n"
        "# The commit that added each cost-bench case (tests/benches/cost_bench.py), by label.\n"
        f"ADDED_IN: dict[str, str] = {{\n{body(cost_added)}}}\n\n"
        "# The commit time of every commit that added a bench row.\n"
        f"COMMIT_TIMES: dict[str, str] = {{\n{body(times)}}}\n")


if __name__ == "__main__":
    stamp_engine_logs()
    write_row_commits(stamp_cost_rows())
