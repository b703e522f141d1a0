"""The committed examples are what their scripts print today (docs that cannot drift)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_mla_claims_md_is_current() -> None:
    out = subprocess.run([sys.executable, "-m", "tests.benches.mla_claims"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    assert out == (ROOT / "examples" / "mla-claims.md").read_text()


def test_cost_bench_md_is_current() -> None:
    out = subprocess.run([sys.executable, "-m", "tests.benches.cost_bench"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    assert out == (ROOT / "examples" / "cost-bench.md").read_text()


def test_disagg_md_is_current() -> None:
    out = subprocess.run([sys.executable, "-m", "tests.benches.disagg_guide"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    assert out == (ROOT / "examples" / "disagg.md").read_text()


def test_disagg_bench_md_is_current() -> None:
    out = subprocess.run([sys.executable, "-m", "tests.benches.disagg_bench"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    assert out == (ROOT / "examples" / "disagg-bench.md").read_text()


def test_simulate_bench_md_is_current() -> None:
    # About 3 CPU minutes (the study's runs with async scheduling and without, its
    # prospective runs, the cost bench's vLLM and SGLang runs); not a timed test.
    out = subprocess.run([sys.executable, "-m", "tests.benches.simulate_bench"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    assert out == (ROOT / "examples" / "simulate-bench.md").read_text()
