"""Writes tests/data/sim_to_real/inferencex_agg_row_configs.csv (mtprows67, issue 30): for every
replayable InferenceX row of the aggregated bench (aiconfig_agg_scripts.replayable_inferencex),
the InferenceX configs that could have produced it, read from the master config files
(.github/configs/*master*.yaml) at the last commit touching .github/configs before the row's
`measured=` time (aiconfig_agg_scripts.measured_at: a date alone, that day's end), from a local
clone of SemiAnalysisAI/InferenceX (the `fetch` tool's mirror; not in CI: the CSV is the
committed record). tests.benches.aiconfig_agg_configs reads it.

A config could have produced the row where (`matches`): single node (multinode false); its
model-prefix is the row's model's (aiconfig_agg_scripts._STEM_MODEL), its precision the row's,
its runner's GPU (the runner name before a '-') the row's system's, its framework the row's
backend (trt: trtllm); a seq-len-config of the row's ISL / OSL holds a search-space entry of
the row's TP as run (aiconfig_agg_dp.as_run: InferenceX's vLLM rows write its ep as attention
DP; under attention DP the config's tp is TP x DP, aiconfig_agg_scripts._env), EP
(absent: 1), attention DP (dp-attn, absent: false) and concurrency (conc-list, or conc-start
doubled up to conc-end, the last clamped: utils/matrix_logic/generate_sweep_configs.py:203-221
at 12ba0ae07, step_size 2). The config's image is written beside it: the row's own `image=`
(silicon_data_source) is what identifies a config among several (aiconfig_agg_configs).

Run: python -m tests.benches.aiconfig_agg_configs_extract CLONE
"""

from __future__ import annotations

import csv
import subprocess
import sys
from functools import cache
from typing import Any

import yaml

from tests.benches import aiconfig_agg_configs as configs
from tests.benches import aiconfig_agg_dp
from tests.benches import aiconfig_agg_runs as agg
from tests.benches import aiconfig_agg_scripts as scripts
from tests.benches.disagg_rows import stated_concurrency

_FRAMEWORK = {"sglang": "sglang", "vllm": "vllm", "trt": "trtllm"}


def _git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True,
                          check=False).stdout


@cache
def commit_at(repo: str, when: str) -> str:
    """The last commit touching .github/configs at or before `when`."""
    return _git(repo, "log", "-1", "--format=%h", f"--before={when}", "--",
                ".github/configs").strip()


@cache
def masters(repo: str, commit: str) -> tuple[tuple[str, dict[str, Any]], ...]:
    """(file, config) of every master config file at the commit."""
    out = []
    for path in _git(repo, "ls-tree", "-r", "--name-only", commit, ".github/configs").split():
        if "master" in path and path.endswith(".yaml"):
            text = _git(repo, "show", f"{commit}:{path}")
            for name, body in (yaml.safe_load(text) or {}).items():
                if isinstance(body, dict):
                    out.append((f"{path}:{name}", body))
    return tuple(out)


def concurrencies(entry: dict[str, Any]) -> list[int]:
    """generate_sweep_configs.py:203-221 at 12ba0ae07 (step_size 2)."""
    if entry.get("conc-list"):
        return [int(c) for c in entry["conc-list"]]
    conc, end, out = int(entry["conc-start"]), int(entry["conc-end"]), []
    while conc <= end:
        out.append(conc)
        if conc == end:
            break
        conc = min(conc * 2, end)
    return out


def matches(row: dict[str, str], config: dict[str, Any]) -> str | None:
    """The spec-decoding ("none" where absent) of the config's search-space entry that holds
    the row's point (module docstring); None where none does."""
    if config.get("multinode") or _FRAMEWORK.get(str(config.get("framework"))) != row["backend"]:
        return None
    if (config.get("model-prefix") != scripts._STEM_MODEL.get(row["model_path"])
            or str(config.get("precision")) != row["precision"]
            or str(config.get("runner", "")).split("-")[0] != row["system"].split("_")[0]):
        return None
    tp, dp, _, ep = aiconfig_agg_dp.as_run(row, agg.layout(row))
    want = (tp * dp if dp > 1 else tp, max(ep, 1), dp > 1)
    conc = stated_concurrency(row)
    for seq in config.get("seq-len-configs") or ():
        if (int(seq["isl"]), int(seq["osl"])) != (int(row["isl"]), int(row["osl"])):
            continue
        for e in seq.get("search-space") or ():
            got = (int(e["tp"]), int(e.get("ep", 1) or 1), bool(e.get("dp-attn", False)))
            if got == want and conc in concurrencies(e):
                return str(e.get("spec-decoding", "none"))
    return None


def main(repo: str) -> None:
    with configs.FILE.open("w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(configs.COLUMNS)
        for row in scripts.replayable_inferencex():
            commit = commit_at(repo, scripts.measured_at(row))
            for where, body in masters(repo, commit):
                spec = matches(row, body)
                if spec is not None:
                    file, name = where.split(":")
                    w.writerow([row["id"], commit, file, name, body.get("image", ""), spec])


if __name__ == "__main__":
    main(sys.argv[1])
