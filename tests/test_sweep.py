"""`kvplan sweep`: the option parser, the grid's numbers against estimate / plan_capacity /
compare on sampled points, output formats, files (atomic), errors and the plot dependency."""

from __future__ import annotations

import csv
import io
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from kvplan._util.errors import InputError
from kvplan.analysis.compare import compare_schemes
from kvplan.analysis.sweep import (
    COLUMNS,
    SweepGrid,
    evaluate,
    parse_dtype_list,
    parse_fraction_list,
    parse_gpu_list,
    parse_int_list,
    parse_scheme_list,
    scheme_spec,
)
from kvplan.capacity.plan import plan_capacity
from kvplan.cli.common import KvplanCommand
from kvplan.cli.outputs import atomic_write
from kvplan.cli.sweep_cmd import sweep_cmd
from kvplan.engines.base import Engine, PlanInputs, default_max_num_batched_tokens, gpu_inputs
from kvplan.hardware.gpus import get_gpu
from kvplan.kv.cache import estimate
from kvplan.present.sweep_view import sparkline
from kvplan.sources.resolve import load_spec

runner = CliRunner()
app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
app.command("sweep", cls=KvplanCommand)(sweep_cmd)  # as kvplan's app registers it


@app.command("noop")
def _noop() -> None:  # a second command keeps "sweep" a subcommand, as in kvplan's app
    """Unused."""


def sweep(*args: str):
    return runner.invoke(app, ["sweep", *args])


def one_error_line(result) -> str:
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("kvplan: error: ")
    return lines[0]


# --- parser --------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("4096", (4096,)),
    ("1k,4k,32k,128k", (1024, 4096, 32768, 131072)),
    (" 1K , 2k ", (1024, 2048)),
    ("1m", (1 << 20,)),
    ("1.5k", (1536,)),
    ("1k..128k:x2", tuple(1024 << i for i in range(8))),
    ("1k..3k:x2", (1024, 2048)),
    ("1k..8k:+1k", tuple(1024 * i for i in range(1, 9))),
    ("1..10:+3", (1, 4, 7, 10)),
    ("5..5:+1", (5,)),
    ("1,2,1,1..4:x2", (1, 2, 4)),  # order kept, duplicates dropped
    ("512,1k..2k:*2", (512, 1024, 2048)),
])
def test_parse_int_list_good(text: str, expected: tuple[int, ...]) -> None:
    assert parse_int_list("--context", text) == expected


@pytest.mark.parametrize(("text", "fragment"), [
    ("", "empty value"),
    ("1k,,2k", "empty value"),
    ("abc", "bad value 'abc'"),
    ("4 k", "bad value"),
    ("0", ">= 1"),
    ("-1", "bad value '-1'"),
    ("1.3", "not a whole number"),
    ("8k..1k:x2", "is empty"),
    ("1k..8k:x1", "does not progress"),
    ("1k..8k:x0", "does not progress"),
    ("1k..8k:+0", "does not progress"),
    ("1k..8k:x1.5", "does not progress"),
    ("1k..8k", "needs a step"),
    ("1k..8k:", "needs a step"),
    ("1k..8k:y2", "must be xN"),
    ("a..8k:x2", "bad value 'a'"),
    ("1..1m:+1", "more than"),
])
def test_parse_int_list_bad(text: str, fragment: str) -> None:
    with pytest.raises(InputError) as exc:
        parse_int_list("--context", text)
    assert str(exc.value).startswith("--context: ")
    assert fragment in str(exc.value)


def test_parse_other_lists() -> None:
    assert parse_fraction_list("--mem-fraction", "0.8, 0.9,1") == (0.8, 0.9, 1.0)
    assert parse_dtype_list("--kv-dtype", "bf16,FP8,nvfp4") == ("bf16", "fp8", "nvfp4")
    assert parse_scheme_list("--scheme", "native,mha,gqa,mqa,mla") == (
        "native", "mha", "gqa", "mqa", "mla")
    assert parse_gpu_list("--gpu", "h100-80gb,H200,H200") == ("H100-80GB", "H200")
    for parse, option, text, fragment in [
        (parse_fraction_list, "--mem-fraction", "0", "(0, 1]"),
        (parse_fraction_list, "--mem-fraction", "1.5", "(0, 1]"),
        (parse_fraction_list, "--mem-fraction", "nan", "(0, 1]"),
        (parse_fraction_list, "--mem-fraction", "high", "bad value"),
        (parse_dtype_list, "--kv-dtype", "bf16,fp7", "unknown dtype 'fp7'"),
        (parse_scheme_list, "--scheme", "mha,gqa2", "unknown scheme 'gqa2'"),
        (parse_gpu_list, "--gpu", "H100-80GB,H900", "unknown GPU 'H900'"),
        (parse_gpu_list, "--gpu", "", "empty value"),
    ]:
        with pytest.raises(InputError) as exc:
            parse(option, text)
        assert str(exc.value).startswith(f"{option}: "), exc.value
        assert fragment in str(exc.value)


def test_sparkline() -> None:
    assert sparkline([1.0, 2.0, 4.0, 8.0]) == "▁▃▆█"  # log scale: equal steps
    assert sparkline([0.0, 1.0]) == "▁█"
    assert sparkline([3.0, 3.0]) == "██"


# --- numbers: equal to estimate / plan_capacity / compare ------------------------------------


def expected_row(spec, *, scheme: str, kv_dtype: str, context: int, batch: int, gpu: str | None,
                 tp: int, mem_fraction: float | None, engine: Engine, block_size: int | None,
                 groups: int = 8) -> dict:
    """What `kvplan estimate` computes for one point (its CLI's defaults included)."""
    _, sized = scheme_spec(spec, scheme, groups=groups)
    # The engine's block as `estimate` takes it (vLLM: raised for recurrent state, dense MLA's
    # by GPU and KV dtype, kvplan.engines.vllm.block_size): its own allocator's.
    on = gpu_inputs(get_gpu(gpu)) if gpu is not None else {}
    asked = PlanInputs(context=context, kv_dtype=kv_dtype, block_size=block_size, tp=tp,
                       engine=engine, **{k: on[k] for k in ("platform", "compute_capability")
                                         if k in on})
    config = engine.rules.estimate_config(sized, asked)
    bs = getattr(config, "block_size", None) or asked.resolved_block_size
    est = estimate(sized, context=context, batch=batch, kv_dtype=kv_dtype, block_size=bs, tp=tp)
    row = {"bytes_per_token": est.bytes_per_token, "bytes_per_sequence": est.bytes_per_sequence,
           "bytes_per_batch": est.bytes_per_batch, "block_size": bs}
    if gpu is not None:
        preset = get_gpu(gpu)
        mnbt = default_max_num_batched_tokens(preset.total_bytes, is_a100=preset.is_a100,
                                              engine=engine)
        plan = plan_capacity(sized, PlanInputs(
            context=context, kv_dtype=kv_dtype, block_size=block_size, tp=tp, engine=engine,
            mem_fraction=mem_fraction, max_num_batched_tokens=mnbt, **gpu_inputs(preset)))
        row |= {"mem_fraction": plan.mem_fraction, "weights_bytes": plan.weights_bytes,
                "reserve_bytes": plan.reserve_bytes, "kv_budget_bytes": plan.kv_budget_bytes,
                "num_blocks": plan.num_blocks, "token_capacity": plan.token_capacity,
                "blocks_per_request": plan.blocks_per_request,
                "max_concurrency": plan.max_concurrency, "max_requests": plan.max_requests,
                "fits_batch": plan.max_requests >= batch}
    return row


@pytest.mark.parametrize(("model", "engine", "gpus", "tps", "fractions", "block_size"), [
    ("llama-3.1-8b", Engine.vllm, ("H100-80GB", "A100-40GB", "L40S"), (1, 2, 8), (), None),
    ("gemma-2-9b", Engine.vllm, ("H200", "A100-80GB"), (1, 2), (0.5, 0.9), None),  # hybrid
    ("mistral-7b-v0.1", Engine.vllm, ("H100-80GB",), (1, 4), (), 32),  # all layers sliding
    ("deepseek-v2-lite", Engine.sglang, ("H200", "RTX-4090"), (1, 2, 16), (), 64),  # MLA
    ("qwen2.5-7b", Engine.trtllm, ("H20", "MI300X"), (1, 2), (0.8, 0.95), None),
])
def test_sampled_points_equal_estimate_and_plan_capacity(model, engine, gpus, tps, fractions,
                                                          block_size) -> None:
    spec = load_spec(model)
    grid = SweepGrid(contexts=parse_int_list("--context", "1..40k:x3,4k,5000,131072"),
                     batches=(1, 7, 300), kv_dtypes=("bf16", "fp8", "nvfp4"),
                     schemes=("native", "mha", "gqa", "mqa", "mla"), gpus=gpus, tps=tps,
                     mem_fractions=fractions, engine=engine, block_size=block_size,
                     groups=4 if model == "qwen2.5-7b" else 8)
    df = evaluate(spec, grid)
    assert len(df) == grid.num_points
    assert list(df.columns) == list(COLUMNS)
    rng = random.Random(model)
    for i in rng.sample(range(len(df)), 40) + [0, len(df) - 1]:
        got = df.iloc[i].to_dict()
        want = expected_row(spec, scheme={"gqa-4": "gqa", "gqa-8": "gqa"}.get(got["scheme"],
                                                                              got["scheme"]),
                            kv_dtype=got["kv_dtype"], context=int(got["context"]),
                            batch=int(got["batch"]), gpu=got["gpu"], tp=int(got["tp"]),
                            mem_fraction=None if not fractions else got["mem_fraction"],
                            engine=engine, block_size=block_size, groups=grid.groups)
        for key, value in want.items():
            assert got[key] == value, (i, key, got, want)
        assert got["model"] == model and got["engine"] == engine.value


def test_sizes_only_without_gpu() -> None:
    spec = load_spec("gemma-3-27b")
    df = evaluate(spec, SweepGrid(contexts=(1, 1000, 70000), batches=(1, 9),
                                  kv_dtypes=("fp16", "int4"), tps=(1, 2)))
    for name in ("kv_budget_bytes", "num_blocks", "token_capacity", "max_concurrency",
                 "max_requests", "fits_batch", "mem_fraction", "weights_bytes"):
        assert df[name].isna().all(), name
    assert df["gpu"].isna().all()
    for rec in df.to_dict("records"):
        want = expected_row(spec, scheme="native", kv_dtype=rec["kv_dtype"],
                            context=rec["context"], batch=rec["batch"], gpu=None, tp=rec["tp"],
                            mem_fraction=None, engine=Engine.vllm, block_size=None)
        assert {k: rec[k] for k in want} == want


def test_rows_equal_compare_schemes() -> None:
    for model, gpu, tp in [("llama-3.1-8b", "H100-80GB", 1), ("deepseek-v2", "H200", 8),
                           ("qwen2.5-72b", "H200", 4)]:
        spec = load_spec(model)
        df = evaluate(spec, SweepGrid(contexts=(4096, 32768), kv_dtypes=("bf16", "fp8"),
                                      schemes=("mha", "gqa", "mqa", "mla"), gpus=(gpu,),
                                      tps=(tp,)))
        labels = {"mha": "MHA", "gqa-8": "GQA-8", "mqa": "MQA", "mla": "MLA (absorbed)"}
        for rec in df.to_dict("records"):
            rows = {r.scheme: r for r in compare_schemes(
                spec, context=rec["context"], kv_dtype=rec["kv_dtype"], tp=tp,
                gpu=get_gpu(gpu)).rows}
            row = rows[labels[rec["scheme"]]]
            assert (rec["bytes_per_token"], rec["bytes_per_sequence"], rec["max_requests"]) == (
                row.bytes_per_token, row.bytes_per_request, row.max_requests), (model, rec)


def test_points_equal_kvplan_estimate_cli() -> None:
    from kvplan.cli import app as kvplan_app

    for args, point in [
        (["llama-3.1-8b", "--gpu", "H100-80GB", "-c", "8192", "-b", "4", "--kv-dtype", "fp8"],
         {"-c": "8192", "-b": "4", "--kv-dtype": "fp8", "--gpu": "H100-80GB"}),
        (["gemma-2-9b", "--gpu", "A100-40GB", "-c", "2048", "--engine", "sglang", "--tp", "2",
          "--mem-fraction", "0.8"],
         {"-c": "2048", "--gpu": "A100-40GB", "--engine": "sglang", "--tp": "2",
          "--mem-fraction": "0.8"}),
        (["deepseek-v3", "-c", "100000", "-b", "3", "--tp", "8"],
         {"-c": "100000", "-b": "3", "--tp": "8"}),
    ]:
        printed = json.loads(runner.invoke(kvplan_app, ["estimate", *args, "-f", "json"]).stdout)
        flags = [x for item in point.items() for x in item]
        result = sweep(args[0], *flags, "-f", "json")
        assert result.exit_code == 0, result.stderr
        (rec,) = json.loads(result.stdout)
        keys = ["bytes_per_token", "bytes_per_sequence", "bytes_per_batch", "block_size"]
        if "--gpu" in point:
            keys += ["kv_budget_bytes", "num_blocks", "token_capacity", "max_concurrency",
                     "max_requests", "mem_fraction", "weights_bytes", "reserve_bytes",
                     "blocks_per_request"]
        else:
            assert rec["max_requests"] is None and rec["gpu"] is None
        assert {k: rec[k] for k in keys} == {k: printed[k] for k in keys}


def test_fits_batch_and_zero_budget() -> None:
    # Llama-3-70B's bf16 weights (131 GiB) do not fit a 40 GB A100 at 0.9 (negative budget):
    # nothing fits. (gemma-2-9b once served here, counted in float32; engines load it in bf16.)
    df = evaluate(load_spec("llama-3-70b"), SweepGrid(contexts=(32768,), batches=(1, 2),
                                                      gpus=("A100-40GB", "H200")))
    a100 = df[df["gpu"] == "A100-40GB"]
    assert (a100["max_requests"] == 0).all() and (a100["max_concurrency"] == 0.0).all()
    assert not a100["fits_batch"].any()
    h200 = df[df["gpu"] == "H200"]
    assert (h200["fits_batch"] == (h200["max_requests"] >= h200["batch"])).all()


# --- CLI output --------------------------------------------------------------------------------

GRID = ["llama-3.1-8b", "-c", "1k..8k:x2", "-b", "1,64", "--kv-dtype", "bf16,fp8",
        "--gpu", "H100-80GB"]


def test_csv_output() -> None:
    result = sweep(*GRID, "-f", "csv")
    assert result.exit_code == 0, result.stderr
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert len(rows) == 4 * 2 * 2 and list(rows[0]) == list(COLUMNS)
    df = evaluate(load_spec("llama-3.1-8b"), SweepGrid(
        contexts=(1024, 2048, 4096, 8192), batches=(1, 64), kv_dtypes=("bf16", "fp8"),
        gpus=("H100-80GB",)))
    for row, rec in zip(rows, df.to_dict("records"), strict=True):
        assert int(row["max_requests"]) == rec["max_requests"]
        assert float(row["max_concurrency"]) == rec["max_concurrency"]  # round-trips exactly
        assert int(row["bytes_per_batch"]) == rec["bytes_per_batch"]
        assert row["fits_batch"] == str(rec["fits_batch"])


def test_json_and_markdown_output() -> None:
    # GPT-2's maximum is 1,024 tokens (n_positions): 2k is computed only when allowed.
    result = sweep("gpt2", "-c", "1k,2k", "-f", "json", "--allow-long-context")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert [d["context"] for d in data] == [1024, 2048]
    assert data[0]["bytes_per_sequence"] == 1024 * data[0]["bytes_per_token"]
    assert data[0]["num_blocks"] is None and data[0]["gpu"] is None
    md = sweep(*GRID, "-f", "markdown")
    assert md.exit_code == 0, md.stderr
    assert md.stdout.startswith("### KV sweep: llama-3.1-8b, 16 points")
    assert sum(line.startswith("| ") for line in md.stdout.splitlines()) == 1 + 16
    assert "▁" not in md.stdout  # the sparkline is for the terminal table only


def test_contexts_above_the_maximum_are_left_out() -> None:
    # GPT-2: n_positions 1024 (model_specs/gpt2.yaml max_position_embeddings); vLLM 0.32
    # refuses --max-model-len 2048 (config/model.py _get_and_verify_max_len).
    result = sweep("gpt2", "-c", "512,1k,2k,4k", "-f", "json")
    assert result.exit_code == 0, result.stderr
    assert [d["context"] for d in json.loads(result.stdout)] == [512, 1024]
    assert ("--context 2048,4096: above GPT-2's maximum of 1,024 tokens" in result.stderr
            and "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1" in result.stderr
            and "left out of the sweep" in result.stderr)


def test_table_output_and_large_grid_note() -> None:
    small = sweep(*GRID)
    assert small.exit_code == 0 and small.stderr == ""
    # The table's header spells max_concurrency over two lines ("max", "concurrency").
    assert "concurrency" in small.stdout and "vs context" in small.stdout
    assert "█" in small.stdout  # sparklines after the table
    big = sweep("llama-3.1-8b", "-c", "1k..64k:+1k", "-b", "1..4:+1", "--gpu", "H100-80GB,H200")
    assert big.exit_code == 0
    assert "512 rows; the table shows the first 10 and the last 10" in big.stderr
    assert "│ ..." in big.stdout and "65,536" in big.stdout


@pytest.mark.parametrize("ext", ["csv", "json", "md"])
def test_output_file_formats(tmp_path: Path, ext: str) -> None:
    path = tmp_path / f"out.{ext}"
    result = sweep(*GRID, "-o", str(path))
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "" and f"wrote 16 rows to {path}" in result.stderr
    fmt = {"csv": "csv", "json": "json", "md": "markdown"}[ext]
    assert path.read_text() == sweep(*GRID, "-f", fmt).stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]  # no temp file left


def test_output_file_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    line = one_error_line(sweep(*GRID, "-o", str(tmp_path / "out.txt")))
    assert "unknown extension '.txt'" in line
    line = one_error_line(sweep(*GRID, "-o", str(tmp_path / "nope" / "out.csv")))
    assert "does not exist" in line
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "pyarrow" else real(name, *a))
    line = one_error_line(sweep(*GRID, "-o", str(tmp_path / "out.parquet")))
    assert "needs pyarrow" in line
    assert list(tmp_path.iterdir()) == []


def test_output_file_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "out.csv"
    path.write_text("old\n")

    def half_then_fail(self: Path, text: str, *args, **kwargs) -> int:
        with open(self, "w") as f:
            f.write(text[: len(text) // 2])
        raise OSError(28, "No space left on device")

    # Markdown is written whole (write_text); CSV is streamed a chunk at a time (issue 32):
    # the disk fills after the first chunk.
    md = tmp_path / "out.md"
    md.write_text("old\n")
    monkeypatch.setattr(Path, "write_text", half_then_fail)
    line = one_error_line(sweep(*GRID, "-o", str(md), "--force"))
    assert "cannot write" in line and "No space left on device" in line
    assert md.read_text() == "old\n"
    monkeypatch.undo()
    import kvplan.present.sweep_view as sweep_view

    def first_chunk_then_full(frames):  # noqa: ANN001, ANN202
        yield "context,batch\n"
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(sweep_view, "csv_chunks", first_chunk_then_full)
    line = one_error_line(sweep(*GRID, "-o", str(path), "--force"))
    assert "cannot write" in line and "No space left on device" in line
    assert path.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv", "out.md"]

    def boom(tmp: Path) -> None:
        tmp.write_bytes(b"partial")
        raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError):
        atomic_write("-o", path, boom)
    assert path.read_text() == "old\n" and len(list(tmp_path.iterdir())) == 2


@pytest.mark.parametrize(("args", "fragment"), [
    (["-c", "8k..1k:x2"], "--context: range '8k..1k:x2' is empty"),
    (["-c", "4k", "-b", "x"], "--batch: bad value 'x'"),
    (["--gpu", "H900"], "--gpu: unknown GPU 'H900'"),
    (["--kv-dtype", "fp7"], "--kv-dtype: unknown dtype"),
    (["--scheme", "native,gqa3"], "--scheme: unknown scheme"),
    (["--mem-fraction", "0.9"], "--mem-fraction: needs --gpu"),
    (["--gpu", "H200", "--mem-fraction", "0.9,2"], "--mem-fraction: must be in (0, 1]"),
    (["--gpu", "H200", "--tp", "1,3"], "--tp: 3 does not divide"),
    (["--tp", "0"], "--tp: values must be >= 1"),
    (["--scheme", "gqa", "--groups", "5"], "--groups: 5 KV heads is not a GQA layout"),
    (["-c", "1024m", "-b", "1m", "--scheme", "mha", "--kv-dtype", "fp32",
      "--allow-long-context"], "overflows"),
    (["-c", "256k"], "--context 262144: above Llama-3.1-8B's maximum of 131,072 tokens"),
    (["--plot", "x.pdf"], "--plot: 'x.pdf': unknown extension"),
])
def test_bad_grid_is_one_line_exit_2(args: list[str], fragment: str) -> None:
    assert fragment in one_error_line(sweep("llama-3.1-8b", *args))


def test_unknown_model_is_one_line() -> None:
    one_error_line(sweep("no-such-model"))


def test_plot_without_matplotlib(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    monkeypatch.delitem(sys.modules, "matplotlib.figure", raising=False)
    line = one_error_line(sweep(*GRID, "--plot", str(tmp_path / "p.png")))
    assert "pip install 'kvplan[plot]'" in line
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("ext", ["png", "svg"])
def test_plot_file(tmp_path: Path, ext: str) -> None:
    pytest.importorskip("matplotlib")
    path = tmp_path / f"p.{ext}"
    result = sweep(*GRID, "--scheme", "native,mla", "--plot", str(path))
    assert result.exit_code == 0, result.stderr
    assert path.stat().st_size > 1000 and f"wrote plot to {path}" in result.stderr
    assert "█" not in result.stdout  # a plot file replaces the terminal sparklines
    nogpu = tmp_path / f"bytes.{ext}"
    assert sweep("gemma-2-9b", "-c", "1k..128k:x2", "--plot", str(nogpu)).exit_code == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([path.name, nogpu.name])


def test_module_imports_no_pandas() -> None:
    code = ("import sys, kvplan.cli.sweep_cmd, kvplan.analysis.sweep\n"
            "print(sorted(m for m in ('pandas', 'numpy', 'matplotlib', 'rich') "
            "if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_several_models_in_one_sweep(tmp_path) -> None:
    # MODEL may list models: one grid each, their rows together, the model named in every row.
    result = runner.invoke(app, ["sweep", "qwen3-8b,llama-3.1-8b,gemma-3-27b", "-c", "4k,32k",
                                 "--gpu", "H100,H200", "--format", "json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert {r["model"] for r in rows} == {"qwen3-8b", "llama-3.1-8b", "gemma-3-27b"}
    assert len(rows) == 3 * 2 * 2
    # Each model's rows are what a sweep of that model alone gives.
    alone = json.loads(runner.invoke(app, ["sweep", "gemma-3-27b", "-c", "4k,32k", "--gpu",
                                           "H100,H200", "--format", "json"]).stdout)
    assert [r for r in rows if r["model"] == "gemma-3-27b"] == alone
    pytest.importorskip("matplotlib")
    out = tmp_path / "models.png"
    result = runner.invoke(app, ["sweep", "qwen3-8b,gemma-3-27b", "-c", "1k..128k:x4", "--gpu",
                                 "H100,H200", "--tp", "1,2", "--plot", str(out)])
    assert result.exit_code == 0, result.output
    assert out.stat().st_size > 10_000


def test_groups_without_the_gqa_scheme_is_refused_not_ignored() -> None:
    # --groups only sets the gqa scheme's KV heads; with no gqa in --scheme it used to be
    # dropped silently. Now one line saying how to sweep it.
    line = one_error_line(sweep("llama-3.1-8b", "--groups", "4", "-c", "4096"))
    assert "--groups 4" in line and "--scheme native,gqa" in line
    ok = sweep("llama-3.1-8b", "--groups", "4", "--scheme", "native,gqa", "-c", "4096",
               "--format", "json")
    assert ok.exit_code == 0, ok.stderr
    assert {row["scheme"] for row in json.loads(ok.stdout)} == {"native", "gqa-4"}
