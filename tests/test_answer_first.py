"""Issue 28, "answer first": every command's table output starts with its one-line answer, the
derivation follows only with --explain, and no line runs past 80 columns at COLUMNS=80 (with or
without --explain), identifiers kept whole. The answers' numbers are the commands' own JSON
figures, so the first line cannot say other than the tables."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kvplan.cli.app import app
from kvplan.present.render import Column, OutputFormat, View, _min_table_width, emit
from tests.server_replay import replay

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[1]
QWEN3 = str(ROOT / "tests" / "data" / "oracle" / "qwen3-8b")
CHECK = ["--model", QWEN3, "--platform", "cpu", "--max-num-batched-tokens", "2048"]


def run(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args), env={"COLUMNS": "80"})
    assert result.exit_code in (0, 3, 4), result.stderr
    return result.exit_code, result.stdout


def as_json(*args: str) -> dict:
    result = runner.invoke(app, [*args, "--format", "json"], env={"COLUMNS": "80"})
    return json.loads(result.stdout)


def assert_fits(out: str, *whole: str) -> None:
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 80, max(lines, key=len)
    for word in whole:  # an identifier shown whole on one line, never folded inside a cell
        assert re.search(rf"(^|[\s(│]){re.escape(word)}($|[\s),;:│])", out), word


# (arguments, identifiers the table output must show whole at 80 columns, with --explain)
COMMANDS = [
    (["estimate", "llama-3.1-8b"], ["llama-3.1-8b", "cache-owning"]),
    (["estimate", "llama-3.1-8b", "--gpu", "H100"],
     ["gpu_memory_utilization", "NCCL/all-reduce/cuBLAS", "(v1/worker/gpu/sample/penalties.py)",
      "--enforce-eager", "llama-3.1-8b"]),
    (["estimate", "llama-3.1-8b", "--gpu", "H100", "--engine", "sglang"],
     ["mem_fraction_static"]),
    (["estimate", "gemma-3-27b", "--gpu", "H100"], ["gemma-3-27b"]),
    (["estimate", "qwen3-next-80b-a3b", "--gpu", "H200", "--tp", "2"], ["qwen3-next-80b-a3b"]),
    (["plan", "llama-3.1-70b", "--concurrency", "50", "--context", "32k", "--gpu", "H100",
      "--gpus-per-node", "4", "--nodes", "2"], ["meta-llama/Llama-3.1-70B",
                                               "gpu_memory_utilization"]),
    (["plan", "llama-3.1-8b", "--concurrency", "500", "--context", "128k", "--gpu", "H100",
      "--gpus-per-node", "1"], []),
    (["compare", "deepseek-v2", "--gpu", "H100-80GB", "--tp", "8"], ["MLA (decompressed)"]),
    (["compare", "llama-3-8b", "--context", "8192"], ["GQA-8"]),
    (["sweep", "llama-3.1-8b", "--context", "1k..128k:x2", "--kv-dtype", "bf16,fp8", "--scheme",
      "native,mha,mqa,mla", "--gpu", "H100-80GB,H200"], ["H100-80GB", "native"]),
    (["sweep", "qwen3-8b,llama-3.1-8b,gemma-3-27b", "--gpu", "H100,H200", "--context",
      "1k..128k:x2", "--tp", "1,2"], ["qwen3-8b", "llama-3.1-8b", "gemma-3-27b", "H100-80GB"]),
    (["simulate", "llama-3.1-8b", "--gpu", "H100-80GB", "--max-model-len", "8192", "--rate", "20",
      "--num-requests", "100", "--input-len-dist", "uniform:100:2000", "--output-len-dist",
      "uniform:10:500", "--slo-ttft-ms", "200", "--slo-tpot-ms", "25"], ["llama-3.1-8b"]),
    (["plan", "llama-3.1-8b", "--rate", "5", "--slo-ttft-ms", "500", "--gpu", "H100",
      "--num-requests", "40"], ["llama-3.1-8b"]),
]


@pytest.mark.parametrize(("args", "whole"), COMMANDS, ids=lambda a: " ".join(a)[:60])
def test_answer_first_within_80_columns(args: list[str], whole: list[str]) -> None:
    _, brief = run(*args)
    _, full = run(*args, "--explain")
    assert_fits(brief)
    assert_fits(full, *whole)
    first = brief.splitlines()[0]
    assert first == full.splitlines()[0] and not first.startswith(("┏", "│", " "))
    assert len(brief.splitlines()) <= len(full.splitlines())


def test_estimate_gpu_is_short_and_answers_on_its_first_line() -> None:
    # The "done when": at most 40 lines at 80 columns, the answer first, from the same
    # figures as the JSON (max_requests, context, max_concurrency).
    _, out = run("estimate", "llama-3.1-8b", "--gpu", "H100")
    lines = out.splitlines()
    assert len(lines) <= 40
    data = as_json("estimate", "llama-3.1-8b", "--gpu", "H100")
    assert lines[0].startswith(f"{data['max_requests']:,} requests of {data['context']:,} "
                               f"tokens fit ({data['max_concurrency']:,.2f}x)")
    assert "vLLM 0.32 rules" in out  # the provenance line
    assert "activation" not in out and "activation" in run(
        "estimate", "llama-3.1-8b", "--gpu", "H100", "--explain")[1]


def test_explain_is_the_whole_former_output_after_the_answer() -> None:
    # --explain adds the answer line before the derivation, which is otherwise as it was; the
    # answer line is only in the table format: JSON is unchanged by --explain.
    _, full = run("estimate", "llama-3.1-8b", "--explain")
    assert full.splitlines()[1].startswith("KV cache: Llama-3.1-8B, context 4,096")
    assert as_json("estimate", "llama-3.1-8b") == as_json("estimate", "llama-3.1-8b",
                                                          "--explain")


def test_estimate_without_gpu_answers_the_bytes() -> None:
    _, out = run("estimate", "llama-3.1-8b", "--context", "8k", "--batch", "4")
    # Llama-3.1-8B: 32 layers x 8 KV heads x (128 + 128) x 2 B = 131,072 B = 128 KiB a token;
    # 8,192 tokens = 1 GiB a request, 4 GiB for 4.
    assert out.splitlines()[0] == ("KV (bf16): 128.00 KiB/token, 1.00 GiB/request of 8,192 "
                                   "tokens, 4.00 GiB for 4")


def test_plan_answer_is_the_verdict() -> None:
    code, out = run("plan", "llama-3.1-8b", "--concurrency", "500", "--context", "128k",
                    "--gpu", "H100", "--gpus-per-node", "1")
    data = as_json("plan", "llama-3.1-8b", "--concurrency", "500", "--context", "128k",
                   "--gpu", "H100", "--gpus-per-node", "1")
    assert code == 3 and data["verdict"] == "DOES NOT FIT"
    assert out.splitlines()[0].startswith("DOES NOT FIT: 500 requests of 131,072 tokens; 1 x "
                                          "H100-80GB (tp 1) holds ")
    # --explain: the closest layout's capacity, derived as `estimate` derives it.
    assert "num_blocks" not in out and "num_blocks" in run(
        "plan", "llama-3.1-8b", "--concurrency", "500", "--context", "128k", "--gpu", "H100",
        "--gpus-per-node", "1", "--explain")[1]


def test_compare_answer_names_the_cheapest_scheme() -> None:
    _, out = run("compare", "llama-3-8b", "--context", "8192")
    rows = as_json("compare", "llama-3-8b", "--context", "8192")
    least = min(rows, key=lambda r: r["bytes_per_token"])
    # Llama-3-8B as MQA: 32 layers x 1 KV head x (128 + 128) x 2 B = 16,384 B a token, 1/32 of
    # MHA's 32 heads; the native GQA-8 is 8/32 = 0.25 of MHA.
    assert least["scheme"] == "MQA" and least["bytes_per_token"] == 16384
    assert out.splitlines()[0] == ("Cheapest KV: MQA, 16,384 B/token (0.0312x MHA); the native "
                                   "0.2500x")


def test_check_answer_and_width() -> None:
    with replay("vllm-0.32.0-cpu-qwen3") as url:
        code, out = run("check", url, *CHECK)
        _, full = run("check", url, *CHECK, "--explain")
        bad, wrong = run("check", url, *CHECK, "--kv-dtype", "fp8")
    assert code == 0
    assert out.splitlines()[0] == "AGREE: vLLM 0.32.0 matches the plan on 4 quantities"
    assert bad == 4 and wrong.splitlines()[0].startswith("DISAGREE: vLLM 0.32.0 differs")
    assert "Settings" not in out and "Settings" in full
    for text in (out, wrong):
        assert_fits(text)
    assert_fits(full, "kv_cache_memory_bytes", "gpu_memory_utilization")


def test_verify_device_name_folds_to_the_measured_columns_width() -> None:
    # A CPU reports its model name with clock and count (this CI host: 46 characters); cut in two
    # it widened the measured column past 80 columns. Folded at words to 16 columns, the width of
    # the column's figures ("186,654,720 B").
    from kvplan.present.verify_view import _folded

    name = "Intel(R) Xeon(R) Processor @ 2.80GHz (2 CPUs)"
    assert _folded(name).split("\n") == ["Intel(R) Xeon(R)", "Processor @", "2.80GHz (2 CPUs)"]
    assert _folded("NVIDIA H100 80GB HBM3") == "NVIDIA H100 80GB\nHBM3"
    assert _folded("cpu") == "cpu"


def test_verify_cpu_answer_and_width() -> None:
    pytest.importorskip("torch")
    args = ["verify", "llama-3-8b", "--device", "cpu", "--context", "8192", "--budget-gib",
            "0.2"]
    _, out = run(*args)
    _, full = run(*args, "--explain")
    assert re.match(r"\d+ blocks held", out.splitlines()[0])
    assert_fits(out)
    assert_fits(full, "(--budget-gib)")
    # Markdown keeps each figure on one line, as before.
    md = runner.invoke(app, [*args, "--format", "markdown"], env={"COLUMNS": "80"}).stdout
    assert re.search(r"\| KV budget \| [\d,]+ B \(\d+\.\d+ MiB\) \|", md)


def test_report_markdown_starts_with_the_answer(tmp_path: Path) -> None:
    target = tmp_path / "plan.md"
    result = runner.invoke(app, ["report", "llama-3.1-8b", "--concurrency", "10", "--context",
                                 "8k", "--gpu", "H100", "-o", str(target), "--format",
                                 "markdown"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.stderr
    lines = target.read_text().splitlines()
    assert lines[0].startswith("# kvplan report") and lines[2].startswith("**FITS: 10 requests")


# --- the width rule, on any table ------------------------------------------------------------

WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_./-", min_size=1, max_size=30)
CELL = st.lists(WORD, min_size=1, max_size=12).map(" ".join)
NUMBER = st.integers(min_value=0, max_value=10**12).map(lambda n: f"{n:,}")


@st.composite
def tables(draw: st.DrawFn) -> View:
    kinds = draw(st.lists(st.booleans(), min_size=1, max_size=5))  # True: numeric
    rows = draw(st.lists(st.tuples(*[NUMBER if k else CELL for k in kinds]), min_size=1,
                         max_size=6))
    return View(title="t", columns=[Column(header=f"c{i}", numeric=k)
                                    for i, k in enumerate(kinds)],
                rows=[list(r) for r in rows], records={})


@settings(max_examples=150, deadline=None)
@given(tables())
def test_a_table_that_can_fit_keeps_every_word_whole(view: View) -> None:
    # Whenever the table fits 80 columns with every word whole (render._min_table_width), the
    # printed table is within 80 columns and each cell's words and numbers appear unbroken.
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        emit(view, OutputFormat.table, width=80)
    text = out.getvalue()
    widest = max(len(line) for line in text.splitlines())
    if _min_table_width(view) > 80:
        return
    assert widest <= 80
    shown = set(re.split(r"[\s│┃]+", text))
    for row in view.rows:
        for cell in row:
            for word in cell.split():
                assert word in shown, (word, text)
