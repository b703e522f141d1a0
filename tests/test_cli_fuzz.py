"""Bad input never gives a traceback (fuzz58): hypothesis over every command's error paths.

The contract, asserted at once by `_contract`: the exit code is one the command documents
(examples/errors.md: 0 an answer, 2 bad input or a model kvplan cannot model, 3 a plan that does
not fit, 4 a server that disagrees), no exception escapes (an internal error), no "Traceback";
exit 2 is exactly one stderr line `kvplan: error: WHERE: PROBLEM` and nothing on stdout; no
file in the working folder is created, changed or lost unless the command was asked to write it.

What is generated, per command: hostile model inputs (config.json fields missing, of the wrong
type, negative, zero, huge, NaN; truncated JSON; YAML that is not a mapping; an empty file, a
folder, a missing path) for compare / plan / plan --disagg / simulate / report (estimate, import
and sweep: tests/test_hostile.py); bad option values for simulate, plan, plan --rate and plan
--disagg; damaged traces in each --trace-format, read as each format; generation_config.json
and --engine-arg values; numbers a server states (`kvplan check` against a recorded vLLM and
SGLang server, tests/server_replay.py). Last, every command that writes a file refuses to
overwrite it without --force.

In-process (typer's CliRunner); derandomized with no example database, so CI runs the same
examples every time (HYPOTHESIS_PROFILE=explore searches afresh, as tests/test_hostile.py).
The failures this file found, fixed where the value enters: a server's NaN / infinite label or
gauge (int(nan), exit 1), `simulate --plot x.csv` (matplotlib's ValueError after the run, exit
1), a generation_config.json out of vLLM's bounds refused without naming the file.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kvplan.cli import app
from tests.server_replay import SERVERS, replay

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "tests" / "data" / "configs"
TRACES = ROOT / "tests" / "data" / "traces"
runner = CliRunner()

EXPLORE = os.environ.get("HYPOTHESIS_PROFILE", "ci") != "ci"
FUZZ = settings(max_examples=1000 if EXPLORE else 30, derandomize=not EXPLORE, database=None,
                deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Every command's base: small enough that an accepted run takes milliseconds.
SIM = ["simulate", "llama-3.1-8b", "--gpu", "H100", "--num-requests", "3", "--input-len", "100",
       "--output-len", "5"]
PLAN = ["plan", "llama-3.1-8b", "-n", "4", "--gpu", "H100"]
PLAN_RATE = ["plan", "llama-3.1-8b", "--gpu", "H100", "--rate", "2", "--num-requests", "3",
             "--input-len", "100", "--output-len", "5", "-j", "1", "--slo-ttft-ms", "5000"]
PLAN_DISAGG = ["plan", "llama-3.1-8b", "--disagg", "--gpu", "H100", "--input-len", "100",
               "--output-len", "5", "-n", "4"]
BAD_VALUES = ["0", "-1", "1", "7", "1.5", "1k", "nan", "inf", "-inf", "1e309", "x", "",
              "99999999999999999999", "1..4:x2", "a=b", "{", "²"]


def _digest(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _contract(result: Any, *, codes: tuple[int, ...] = (0, 2, 3)) -> None:
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    assert result.exit_code in codes, (result.exit_code, result.stderr[-1000:])
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout
    assert "internal error" not in result.stderr, result.stderr
    if result.exit_code == 2:
        lines = result.stderr.splitlines()
        assert len(lines) == 1, result.stderr
        assert lines[0].startswith("kvplan: error: ") and len(lines[0]) > 20, lines[0]
        assert result.stdout == "", result.stdout[:300]


def _run(args: list[str], *, codes: tuple[int, ...] = (0, 2, 3), folder: Path | None = None):
    before = _digest(folder) if folder is not None else None
    result = runner.invoke(app, [str(a) for a in args])
    _contract(result, codes=codes)
    if folder is not None:
        assert _digest(folder) == before  # nothing written, changed or lost
    return result


# --- hostile model inputs, for the commands test_hostile.py does not fuzz ------------------

LLAMA = json.loads((CONFIGS / "llama-3-8b.json").read_text())
CONFIG_FIELDS = ["num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads",
                 "vocab_size", "intermediate_size", "max_position_embeddings", "torch_dtype",
                 "architectures", "model_type", "head_dim", "rope_scaling", "sliding_window"]
HOSTILE = st.sampled_from([None, True, 0, -1, 1.5, float("nan"), float("inf"), "", "x", "32",
                           [], [1], {}, 10**20, 2**63])
MODEL_COMMANDS = {
    "compare": ["compare", "{m}", "--gpu", "H100"],
    "plan": ["plan", "{m}", "-n", "4", "--gpu", "H100"],
    "plan-disagg": ["plan", "{m}", "--disagg", "--gpu", "H100", "--input-len", "100",
                    "--output-len", "5", "-n", "4"],
    "simulate": ["simulate", "{m}", "--gpu", "H100", "--num-requests", "3", "--input-len",
                 "100", "--output-len", "5", "--rate", "5"],
    "report": ["report", "{m}", "--gpu", "H100", "-f", "markdown", "-o", "{out}"],
}
BROKEN_FILES = {
    "empty.json": "", "truncated.json": json.dumps(LLAMA)[:60], "list.json": "[1, 2]",
    "nan.json": '{"hidden_size": NaN}', "empty.yaml": "", "list.yaml": "- 1\n- 2\n",
    "scalar.yaml": "hello\n", "broken.yaml": "a: [1,\n", "binary.json": "\x00\xff\xfe",
}


def _model_args(command: str, model: str, out: Path) -> list[str]:
    return [a.replace("{m}", model).replace("{out}", str(out)) for a in MODEL_COMMANDS[command]]


@FUZZ
@given(command=st.sampled_from(sorted(MODEL_COMMANDS)), field=st.sampled_from(CONFIG_FIELDS),
       value=HOSTILE, drop=st.booleans())
def test_fuzz_config_fields_in_every_command(command: str, field: str, value: Any,
                                             drop: bool) -> None:
    data = dict(LLAMA)
    if drop:
        data.pop(field, None)
    else:
        data[field] = value
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "config.json").write_text(json.dumps(data))
        out = folder / "out" / "r.md"  # a report that runs writes under out/ (not checked)
        out.parent.mkdir()
        before = _digest(folder)
        _run(_model_args(command, str(folder / "config.json"), out))
        after = {k: v for k, v in _digest(folder).items() if not k.startswith("out")}
        assert after == before


@pytest.mark.parametrize("command", sorted(MODEL_COMMANDS))
def test_broken_model_files_are_one_line(tmp_path: Path, command: str) -> None:
    for name, text in BROKEN_FILES.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "folder").mkdir()
    targets = [*(tmp_path / n for n in BROKEN_FILES), tmp_path / "folder", tmp_path / "nope.json"]
    for target in targets:
        result = _run(_model_args(command, str(target), tmp_path / "r.md"), folder=tmp_path)
        assert result.exit_code == 2, (target.name, result.stdout[:200])
        assert target.name in result.stderr or "folder" in result.stderr, result.stderr


# --- bad option values ------------------------------------------------------------------

def _value_options(command: str) -> list[str]:
    """`command`'s options that take a value (the longest spelling), output paths left out."""
    import typer.main

    click_command = typer.main.get_command(app).get_command(None, command)  # type: ignore[attr-defined]
    skip = {"--output", "--plot", "--timeline", "--tokenizer", "--executor", "--jobs", "--trace",
            "--generation-config", "--scenario", "--prices"}
    out = []
    for param in click_command.params:
        if param.opts and param.opts[0].startswith("-") and not getattr(param, "is_flag", False):
            name = max(param.opts, key=len)
            if name not in skip and name != "--help":
                out.append(name)
    return sorted(out)


SIM_OPTIONS = _value_options("simulate")
PLAN_OPTIONS = _value_options("plan")


@FUZZ
@given(option=st.sampled_from(SIM_OPTIONS), value=st.sampled_from(BAD_VALUES),
       engine=st.sampled_from(["vllm", "sglang", "trtllm"]),
       load=st.sampled_from([["--rate", "5"], ["--concurrency", "2"]]))
def test_fuzz_simulate_option_values(option: str, value: str, engine: str,
                                     load: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        _run([*SIM, *load, "--engine", engine, option, value], folder=Path(tmp))


@FUZZ
@given(base=st.sampled_from(["plan", "rate", "disagg"]), option=st.sampled_from(PLAN_OPTIONS),
       value=st.sampled_from(BAD_VALUES))
def test_fuzz_plan_option_values(base: str, option: str, value: str) -> None:
    args = {"plan": PLAN, "rate": PLAN_RATE, "disagg": PLAN_DISAGG}[base]
    with tempfile.TemporaryDirectory() as tmp:
        _run([*args, option, value], folder=Path(tmp))


@FUZZ
@given(option=st.sampled_from(["--input-len-dist", "--output-len-dist"]),
       kind=st.sampled_from(["fixed", "uniform", "normal", "lognormal", "x", ""]),
       params=st.lists(st.sampled_from(["0", "-1", "1", "5", "1e300", "nan", "inf", "x", ""]),
                       max_size=3))
def test_fuzz_length_distributions(option: str, kind: str, params: list[str]) -> None:
    _run([*SIM, "--rate", "5", option, ":".join([kind, *params])])


@FUZZ
@given(engine=st.sampled_from(["vllm", "sglang", "trtllm"]),
       flag=st.sampled_from(["--max-prefill-tokens", "--max-num-seqs", "--block-size",
                             "--enable-prefix-caching", "--gpu-memory-utilization",
                             "--chunked-prefill-size", "max_num_tokens", "--nope", "",
                             "attention_dp_config.enable_balance", "--schedule-policy"]),
       value=st.sampled_from([None, "", "0", "-1", "x", "nan", "1e300", "maybe", "2", "=1"]))
def test_fuzz_engine_args(engine: str, flag: str, value: str | None) -> None:
    arg = flag if value is None else f"{flag}={value}"
    _run([*SIM, "--rate", "5", "--engine", engine, "--engine-arg", arg])


GENERATION_KEYS = st.sampled_from(["temperature", "top_p", "top_k", "repetition_penalty"])
GENERATION_VALUES = st.sampled_from(["-1", "0", "0.5", "1", "2", "5.5", "1e300", "1e400", "NaN",
                                     "null", "true", '"x"', "[1]", "{}"])


@FUZZ
@given(pairs=st.lists(st.tuples(GENERATION_KEYS, GENERATION_VALUES), max_size=3),
       truncate=st.booleans())
def test_fuzz_generation_config(pairs: list[tuple[str, str]], truncate: bool) -> None:
    text = "{" + ", ".join(f'"{k}": {v}' for k, v in pairs) + "}"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "generation_config.json"
        path.write_text(text[:-1] if truncate else text)
        result = _run([*SIM, "--rate", "5", "--engine-version", "0.15",
                       "--generation-config", str(path)])
        # A file's own fault is said with the file's name (it was "sampling: top_p -1.0").
        if result.exit_code == 2 and "sampler cost" not in result.stderr:
            assert str(path) in result.stderr, result.stderr


def test_generation_config_out_of_bounds_names_the_file(tmp_path: Path) -> None:
    """vLLM refuses top_p outside (0, 1], temperature < 0 and top_k < -1
    (vllm/sampling_params.py:401-420, 0.15.1); the file and field are named."""
    path = tmp_path / "generation_config.json"
    for text, tail in [('{"top_p": -1}', "top_p: expected in (0, 1], got -1"),
                       ('{"temperature": -0.5}', "temperature: expected >= 0, got -0.5"),
                       ('{"top_k": -5}', "top_k: expected -1, 0 or a count, got -5"),
                       ('{"top_k": 5.5}', "top_k: expected -1, 0 or a count, got 5.5")]:
        path.write_text(text)
        result = _run([*SIM, "--rate", "5", "--engine-version", "0.15",
                       "--generation-config", str(path)])
        assert result.stderr == f"kvplan: error: {path}: {tail}\n"


# --- traces, in every format, read as every format ------------------------------------------

TRACE_FILES = {"mooncake": "mooncake_sample.jsonl", "burstgpt": "burstgpt_sample.csv",
               "azure": "azure_sample.csv", "sharegpt": "sharegpt_sample.json"}


def _damage(text: str, how: str, cut: int, number: str) -> str:
    lines = text.splitlines(keepends=True)
    if how == "truncate":
        return text[: cut % (len(text) + 1)]
    if how == "drop-header":
        return "".join(lines[1:])
    if how == "bad-row":
        at = 1 + cut % max(1, len(lines) - 1)
        return "".join([*lines[:at], "a,b,c,d,e,f\n", *lines[at:]])
    if how == "number":  # every number (token counts, times, ids) replaced by one value
        return re.sub(r"(?<![\w.-])\d+(?:\.\d+)?(?![\w.])", number, text)
    if how == "reverse":
        return "".join([lines[0], *reversed(lines[1:])])
    return ""  # empty


@FUZZ
@given(source=st.sampled_from(sorted(TRACE_FILES)), read_as=st.sampled_from(sorted(TRACE_FILES)),
       how=st.sampled_from(["truncate", "drop-header", "bad-row", "number", "reverse", "empty"]),
       cut=st.integers(0, 2000),
       number=st.sampled_from(["0", "-5", "1.5", "NaN", "nan", "1e400", "9" * 30, "x"]),
       load=st.sampled_from([[], ["--rate", "2"], ["--concurrency", "2"]]))
def test_fuzz_traces(source: str, read_as: str, how: str, cut: int, number: str,
                     load: list[str]) -> None:
    text = _damage((TRACES / TRACE_FILES[source]).read_text(), how, cut, number)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "trace"
        path.write_text(text)
        _run([*SIM, *load, "--trace", str(path), "--trace-format", read_as], folder=Path(tmp))


@pytest.mark.parametrize("fmt", sorted(TRACE_FILES))
def test_trace_paths_that_are_not_files(tmp_path: Path, fmt: str) -> None:
    for target in (tmp_path, tmp_path / "nope.csv"):
        result = _run([*SIM, "--trace", str(target), "--trace-format", fmt])
        assert result.exit_code == 2
        assert str(target) in result.stderr, result.stderr
    result = _run([*PLAN_RATE, "--trace", str(tmp_path / "nope"), "--trace-format", fmt])
    assert result.exit_code == 2


# --- numbers a server states (`kvplan check`) -------------------------------------------------

VLLM_SERVER = "vllm-0.32.0-cpu-qwen3"
VLLM_ARGS = ["--model", str(ROOT / "tests" / "data" / "oracle" / "qwen3-8b"), "--platform", "cpu",
             "--max-num-batched-tokens", "2048", "--timeout", "10"]
SGLANG_SERVER = "sglang-0.4.4-llama-3.1-8b-h100"
SERVER_NUMBERS = st.sampled_from(["nan", "NaN", "inf", "+Inf", "-Inf", "1e400", "x", "-1", "0",
                                  "None", "", "99999999999999999999", "1.5"])
VLLM_LABELS = ["block_size", "effective_attention_block_size", "num_gpu_blocks",
               "kv_cache_size_tokens", "kv_cache_max_concurrency", "kv_cache_memory_bytes",
               "gpu_memory_utilization", "cache_dtype", "enable_prefix_caching"]
VLLM_GAUGES = ["vllm:num_requests_running", "vllm:num_requests_waiting",
               "vllm:kv_cache_usage_perc"]


def _vllm_page(label: str | None, gauge: str | None, value: str) -> str:
    text = (SERVERS / VLLM_SERVER / "metrics.txt").read_text()
    if label is not None:
        text = re.sub(rf'(vllm:cache_config_info\{{.*?\b{label}=)"[^"]*"',
                      lambda m: f'{m.group(1)}"{value}"', text, count=1)
    if gauge is not None:
        text = re.sub(rf"^({re.escape(gauge)}\{{[^\n]*\}}) \S+$",
                      lambda m: f"{m.group(1)} {value}", text, flags=re.M)
    return text


@pytest.fixture(scope="module")
def vllm_server() -> Iterator[tuple[str, dict[str, str]]]:
    """One replay for every example (a replay's shutdown polls for 0.5 s): the test sets the
    bodies it serves in the dict, read at each request."""
    files: dict[str, str] = {}
    with replay(VLLM_SERVER, files=files) as url:
        yield url, files


@pytest.fixture(scope="module")
def sglang_server() -> Iterator[tuple[str, dict[str, str]]]:
    files: dict[str, str] = {}
    with replay(SGLANG_SERVER, files=files) as url:
        yield url, files


@FUZZ
@given(label=st.sampled_from([None, *VLLM_LABELS]), gauge=st.sampled_from([None, *VLLM_GAUGES]),
       value=SERVER_NUMBERS, once=st.booleans())
def test_fuzz_vllm_server_numbers(vllm_server: tuple[str, dict[str, str]], label: str | None,
                                  gauge: str | None, value: str, once: bool) -> None:
    url, files = vllm_server
    files["/metrics"] = _vllm_page(label, gauge, value)
    extra = ["--once", "--interval", "0.01", "-f", "json"] if once else []
    _run(["check", url, *VLLM_ARGS, *extra], codes=(0, 2, 4))


@FUZZ
@given(path=st.sampled_from(["max_total_num_tokens", "page_size", "tp_size", "context_length",
                             "mem_fraction_static", "max_running_requests", "weight", "kvcache",
                             "sglang:num_running_reqs", "sglang:num_queue_reqs",
                             "sglang:token_usage", "sglang:cache_hit_rate"]),
       value=st.sampled_from([float("nan"), float("inf"), -float("inf"), 1e308, -1, 0, 1.5,
                              10**30, "x", None, [], True]))
def test_fuzz_sglang_server_numbers(sglang_server: tuple[str, dict[str, str]], path: str,
                                    value: Any) -> None:
    url, files = sglang_server
    files.clear()
    info = json.loads((SERVERS / SGLANG_SERVER / "get_server_info.json").read_text())
    if path.startswith("sglang:"):
        metrics = (SERVERS / SGLANG_SERVER / "metrics.txt").read_text()
        number = value if isinstance(value, str) else json.dumps(value)
        files["/metrics"] = re.sub(rf"^({re.escape(path)}\{{[^\n]*\}}) \S+$",
                                   lambda m: f"{m.group(1)} {number}", metrics, flags=re.M)
    elif path in ("weight", "kvcache"):
        info["internal_states"][0]["memory_usage"][path] = value
    else:
        info[path] = value
    files["/get_server_info"] = json.dumps(info)  # NaN / Infinity as Python writes them
    _run(["check", url, "--gpu", "H100", "--timeout", "10"], codes=(0, 2, 4))


@pytest.mark.parametrize(("label", "gauge", "value", "named"), [
    ("num_gpu_blocks", None, "nan", "vllm:cache_config_info num_gpu_blocks: expected a finite "
                                    "number, got nan"),
    ("block_size", None, "1e400", "vllm:cache_config_info block_size: expected a finite number, "
                                  "got inf"),
    (None, "vllm:num_requests_running", "+Inf", "vllm:num_requests_running: expected a finite "
                                                "number, got inf"),
])
def test_a_servers_nan_is_one_line_naming_the_metric(
        vllm_server: tuple[str, dict[str, str]], label: str | None, gauge: str | None,
        value: str, named: str) -> None:
    """Was `internal error: ValueError: cannot convert float NaN to integer`, exit 1."""
    url, files = vllm_server
    files["/metrics"] = _vllm_page(label, gauge, value)
    result = _run(["check", url, *VLLM_ARGS], codes=(2,))
    assert result.stderr == f"kvplan: error: {url}/metrics: {named}\n"


# --- nothing overwritten without --force: one case per writer ---------------------------------

HAS_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None
WRITERS = [
    ("simulate --timeline", [*SIM, "--rate", "5", "--timeline"], "t.csv", "--timeline", False),
    ("simulate --plot", [*SIM, "--rate", "5", "--plot"], "t.png", "--plot", True),
    ("report markdown", ["report", "llama-3.1-8b", "--gpu", "H100", "-f", "markdown", "-o"],
     "r.md", "-o", False),
    ("report html", ["report", "llama-3.1-8b", "--gpu", "H100", "-o"], "r.html", "-o", True),
    ("import", ["import", str(CONFIGS / "llama-3-8b.json"), "-o"], "s.yaml", "--output", False),
    ("sweep -o", ["sweep", "llama-3.1-8b", "-c", "1k,2k", "-o"], "s.csv", "-o", False),
    ("sweep --plot", ["sweep", "llama-3.1-8b", "-c", "1k,2k", "--plot"], "s.png", "--plot", True),
    ("compare --plot", ["compare", "llama-3.1-8b", "--gpu", "H100", "--plot"], "c.png", "--plot",
     True),
    ("plan --plot", [*PLAN, "--plot"], "p.png", "--plot", True),
]


@pytest.mark.parametrize(("args", "name", "option", "plot"), [w[1:] for w in WRITERS],
                         ids=[w[0] for w in WRITERS])
def test_no_writer_overwrites_without_force(tmp_path: Path, args: list[str], name: str,
                                            option: str, plot: bool) -> None:
    if plot and not HAS_MATPLOTLIB:
        pytest.skip("needs matplotlib (kvplan[plot])")
    target = tmp_path / name
    target.write_text("ORIGINAL")
    refused = _run([*args, str(target)], folder=tmp_path)
    assert refused.exit_code == 2
    assert refused.stderr == (f"kvplan: error: {option}: {str(target)!r} exists (pass --force "
                              "to overwrite)\n")
    assert target.read_text() == "ORIGINAL"
    forced = _run([*args, str(target), "--force"])
    assert forced.exit_code == 0, forced.stderr
    assert target.read_bytes() != b"ORIGINAL" and target.stat().st_size > 0
    assert [p.name for p in tmp_path.iterdir()] == [name]  # no temporary file left


@pytest.mark.parametrize("suffix", [".csv", ".md", ".txt", ""])
def test_simulate_plot_extension_is_checked_before_the_run(tmp_path: Path, suffix: str) -> None:
    """Was matplotlib's `ValueError: Format 'csv' is not supported` after the simulation, exit 1;
    now refused first, as sweep / plan / compare --plot are."""
    target = tmp_path / f"t{suffix}"
    result = _run([*SIM, "--rate", "5", "--plot", str(target)], folder=tmp_path)
    assert result.stderr == (f"kvplan: error: --plot: {str(target)!r}: unknown extension "
                             f"{suffix or '(none)'!r} (use .png, .svg, .pdf)\n")


@pytest.mark.parametrize(("metric", "value", "named"), [
    ("sglang:num_running_reqs", "NaN", "sglang:num_running_reqs: expected a finite number, "
                                       "got nan"),
    ("sglang:num_queue_reqs", "+Inf", "sglang:num_queue_reqs: expected a finite number, got inf"),
    ("kvcache", 1e308, "internal_states[0].memory_usage.kvcache: expected a size in GiB, got "
                       "1e+308"),
])
def test_an_sglang_servers_nan_is_one_line(sglang_server: tuple[str, dict[str, str]],
                                           metric: str, value: Any, named: str) -> None:
    """Were int(nan) and round(inf) internal errors, exit 1."""
    url, files = sglang_server
    files.clear()
    info = json.loads((SERVERS / SGLANG_SERVER / "get_server_info.json").read_text())
    if metric == "kvcache":
        info["internal_states"][0]["memory_usage"]["kvcache"] = value
        where = f"{url}/get_server_info"
    else:
        metrics = (SERVERS / SGLANG_SERVER / "metrics.txt").read_text()
        files["/metrics"] = re.sub(rf"^({re.escape(metric)}\{{[^\n]*\}}) \S+$",
                                   lambda m: f"{m.group(1)} {value}", metrics, flags=re.M)
        where = f"{url}/metrics"
    files["/get_server_info"] = json.dumps(info)
    result = _run(["check", url, "--gpu", "H100", "--timeout", "10"], codes=(2,))
    assert result.stderr == f"kvplan: error: {where}: {named}\n"


@pytest.mark.parametrize(("fmt", "line", "arrives", "before"), [
    ("mooncake", 2, "40", "50"),   # 6 rows reversed: line 2 holds the 40 s row after 50 s
    ("burstgpt", 3, "-37", "0"),   # times since the first row (now 220 s): 183 s is -37 s
])
def test_a_trace_out_of_order_names_the_file_and_line(tmp_path: Path, fmt: str, line: int,
                                                       arrives: str, before: str) -> None:
    """Was "request 1: arrives at ... before the one before it", naming neither the file nor
    the line; with --rate the trace's own times are not used, and it runs."""
    lines = (TRACES / TRACE_FILES[fmt]).read_text().splitlines()
    head = [] if fmt == "mooncake" else lines[:1]
    body = lines if fmt == "mooncake" else lines[1:]
    path = tmp_path / "reversed"
    path.write_text("\n".join([*head, *reversed(body)]) + "\n")
    result = _run([*SIM, "--trace", str(path), "--trace-format", fmt], codes=(2,))
    assert result.stderr == (f"kvplan: error: {path}: line {line}: arrives at {arrives} s, "
                             f"before the row before it ({before} s): a trace's rows must be in "
                             "arrival order (or give --rate)\n")
    assert _run([*SIM, "--trace", str(path), "--trace-format", fmt, "--rate", "2"]).exit_code == 0


def test_a_request_too_long_names_its_row_or_options() -> None:
    """Was "request 1: 396 prompt + 109 output tokens exceed ..." for a trace row too; one rule
    for vLLM's scheduler and the data-parallel lockstep (workload.check_pulled)."""
    trace = TRACES / TRACE_FILES["azure"]  # line 3: 396 prompt + 109 output tokens
    result = _run([*SIM, "--trace", str(trace), "--trace-format", "azure", "-c", "500"],
                  codes=(2,))
    assert result.stderr == (f"kvplan: error: {trace}: line 3: 396 prompt + 109 output tokens "
                             "exceed the max model length (500)\n")
    for dp in ("1", "2"):
        result = _run([*SIM, "--concurrency", "2", "--input-len", "600", "-c", "500", "--dp", dp],
                      codes=(2,))
        assert result.stderr == ("kvplan: error: request 0: 600 prompt + 5 output tokens exceed "
                                 "the max model length (500) (--input-len / --output-len against "
                                 "-c/--context)\n")
