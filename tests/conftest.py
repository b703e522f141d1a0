from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import settings

# No per-example deadline: a slow CI machine must not turn timing into failures. Derandomised so
# that CI runs the same examples every time (set HYPOTHESIS_PROFILE=explore to search afresh).
settings.register_profile("ci", deadline=None, derandomize=True)
settings.register_profile("explore", deadline=None, max_examples=1000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# The two heavy pages' regeneration tests (about 30 CPU minutes each) must start on different
# pytest-xdist workers. `--dist worksteal` first hands each worker a contiguous slice of the
# collection and a worker that runs dry steals only the *tail* of another's queue, so the two,
# adjacent in tests/test_examples.py, ran one after the other on one worker (CI 4,440 s at stop
# 65). The slowest goes first (worker 0's slice) and the other at the middle of the collection
# (the first test of worker n/2's slice, worker 1 of CI's 2); a run without xdist only reorders.
HEAVY_PAGE_TESTS = ("tests/test_examples.py::test_disagg_bench_md_is_current",
                    "tests/test_examples.py::test_simulate_bench_md_is_current")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    heavy = [item for name in HEAVY_PAGE_TESTS for item in items if item.nodeid == name]
    if len(heavy) < 2:
        return
    rest = [item for item in items if item not in heavy]
    middle = (len(rest) + 2) // 2
    items[:] = [heavy[0], *rest[:middle - 1], heavy[1], *rest[middle - 1:]]

LLAMA_LIKE = {
    "name": "Tiny GQA",
    "source": "test",
    "num_hidden_layers": 4,
    "hidden_size": 256,
    "vocab_size": 1000,
    "attention": {"kind": "gqa", "num_attention_heads": 8, "num_key_value_heads": 2,
                  "head_dim": 32},
    "mlp": {"intermediate_size": 512},
}


@pytest.fixture
def write_spec(tmp_path: Path):
    """Write a spec mapping (or raw text) to a YAML file and return its path."""

    def _write(data: object, name: str = "spec.yaml") -> Path:
        path = tmp_path / name
        path.write_text(data if isinstance(data, str) else yaml.safe_dump(data))
        return path

    return _write


@pytest.fixture
def presets_read():
    """How many times gpus.json was read (0 or 1: kvplan.hardware.gpus reads it once, on first
    use) after each of `steps`, Python run one after the other in a fresh interpreter."""

    def _run(*steps: str) -> list[int]:
        probe = ("import kvplan.hardware.gpus as g\n"
                 "print(g._table.cache_info().currsize, file=sys.stderr)\n")
        code = "import sys\n" + "".join(step + "\n" + probe for step in steps)
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              check=True, timeout=60)
        return [int(line) for line in proc.stderr.split()]

    return _run
