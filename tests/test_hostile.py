"""Hostile and odd inputs, by class (issue 15): every one is one clear line on stderr and exit 2
(or the right answer), never a traceback, a hang or a changed file.

Classes: numbers in specs and config.json; input files that are not regular files; outputs
(overwrite, the input itself, unwritable targets, signals); flag values; TP layouts the engines
refuse; a folder shadowing a bundled id; stdout failures. Last, a hypothesis fuzz test over spec
and config.json mutations and flag values that asserts the whole contract at once.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kvplan._util.errors import InputError, SpecError
from kvplan._util.validate import MAX_SIZE
from kvplan.cli import app
from kvplan.cli.outputs import atomic_write
from kvplan.sources.files import MAX_INPUT_BYTES
from kvplan.sources.resolve import load_model
from kvplan.sources.spec_yaml import parse_spec
from tests.conftest import LLAMA_LIKE

runner = CliRunner()
CONFIGS = Path(__file__).resolve().parent / "data" / "configs"


def run(*args: str):
    return runner.invoke(app, list(args))


def one_line(result, code: int = 2) -> str:
    """The contract for a refusal: the exit code, nothing on stdout, one stderr line."""
    assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("kvplan: error: "), lines[0]
    assert "Traceback" not in result.stderr
    return lines[0]


def _set(data: dict, dotted: str, value: Any) -> dict:
    out = copy.deepcopy(data)
    *parents, last = dotted.split(".")
    node = out
    for key in parents:
        node = node[key]
    node[last] = value
    return out


# --- numbers in specs and config.json: one validation layer -----------------------------------

BAD_NUMBERS = [
    (float("nan"), "expected an integer, got nan"),
    (float("inf"), "expected an integer, got inf"),
    ("32", "expected an integer, got '32'"),
    (1.5, "expected an integer, got 1.5"),
    (2.0, "expected an integer, got 2.0"),
    (True, "expected an integer, got true"),
    (MAX_SIZE + 1, "must be <= 1,099,511,627,776, got 1099511627777"),
    (10**200, "must be <= 1,099,511,627,776, got an integer of 665 bits"),
    (-3, "must be >= 1, got -3"),
]


@pytest.mark.parametrize("field", ["hidden_size", "attention.head_dim", "mlp.intermediate_size",
                                   "vocab_size", "attention.num_attention_heads"])
@pytest.mark.parametrize(("value", "message"), BAD_NUMBERS)
def test_spec_numbers_are_validated(field: str, value: Any, message: str) -> None:
    with pytest.raises(SpecError) as info:
        parse_spec(_set(LLAMA_LIKE, field, value), path="x.yaml", spec_id="x")
    assert str(info.value) == f"x.yaml: {field}: {message}"


def test_layer_count_is_capped() -> None:
    with pytest.raises(SpecError, match="num_hidden_layers: must be <= 65,536"):
        parse_spec(_set(LLAMA_LIKE, "num_hidden_layers", 10**9), path="x.yaml", spec_id="x")


def test_yaml_nan_and_huge_integers_from_a_file(write_spec) -> None:
    text = yaml.safe_dump(LLAMA_LIKE).replace("hidden_size: 256", "hidden_size: .nan")
    line = one_line(run("estimate", str(write_spec(text))))
    assert line.endswith("hidden_size: expected an integer, got nan")
    huge = yaml.safe_dump(LLAMA_LIKE).replace("hidden_size: 256", "hidden_size: " + "9" * 5000)
    line = one_line(run("estimate", str(write_spec(huge))))
    assert "malformed YAML" in line and len(line) < 400


def _config(name: str = "llama-3-8b.json") -> dict:
    return json.loads((CONFIGS / name).read_text())


@pytest.mark.parametrize(("base", "key", "raw", "fragment"), [
    ("llama-3-8b.json", "hidden_size", "NaN", "NaN is not a JSON number"),
    ("llama-3-8b.json", "hidden_size", "Infinity", "Infinity is not a JSON number"),
    ("llama-3-8b.json", "hidden_size", "-Infinity", "-Infinity is not a JSON number"),
    ("llama-3-8b.json", "hidden_size", "9" * 5000, "malformed JSON: Exceeds the limit"),
    ("llama-3-8b.json", "num_key_value_heads", '"8"', "num_key_value_heads: expected an integer"),
    ("llama-3-8b.json", "num_hidden_layers", "32.0", "num_hidden_layers: expected an integer"),
    ("llama-3-8b.json", "head_dim", "1e300", "head_dim: expected an integer, got 1e+300"),
    ("deepseek-v3.json", "n_shared_experts", "1.7", "n_shared_experts: expected an integer"),
    ("deepseek-v3.json", "moe_layer_freq", "1.5", "moe_layer_freq: expected an integer"),
    ("deepseek-v3.json", "first_k_dense_replace", '"three"', "first_k_dense_replace: expected"),
    ("deepseek-v3.json", "kv_lora_rank", "true", "kv_lora_rank: expected an integer, got true"),
    ("qwen3-235b-a22b.json", "mlp_only_layers", "5", "mlp_only_layers: expected a list"),
    ("qwen3-235b-a22b.json", "mlp_only_layers", '[0, "x"]', "mlp_only_layers: entries must be"),
    ("qwen3-235b-a22b.json", "decoder_sparse_step", "NaN", "NaN is not a JSON number"),
    ("qwen2.5-7b.json", "max_window_layers", '"x"', "max_window_layers: expected an integer"),
    ("llama-4-scout.json", "no_rope_layer_interval", "0", "no_rope_layer_interval: must be >= 1"),
    ("jamba-mini.json", "attn_layer_offset", "1.5", "attn_layer_offset: expected an integer"),
])
def test_config_numbers_are_validated(tmp_path: Path, base: str, key: str, raw: str,
                                      fragment: str) -> None:
    if not (CONFIGS / base).exists():
        pytest.skip(f"{base} not in tests/data/configs")
    data = _config(base)
    target = data.get("text_config", data) if key not in data and "text_config" in data else data
    target[key] = "__RAW__"
    if key == "use_sliding_window":
        pass
    if key == "max_window_layers":
        target["use_sliding_window"] = True
        target.setdefault("sliding_window", 4096)
    if key == "no_rope_layer_interval":
        target.pop("no_rope_layers", None)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data).replace('"__RAW__"', raw))
    before = path.read_bytes()
    line = one_line(run("estimate", str(path)))
    assert fragment in line, line
    assert path.read_bytes() == before


def test_quantization_numbers_are_validated(tmp_path: Path) -> None:
    data = _config()
    data["quantization_config"] = {"quant_method": "gptq", "bits": 4.5, "group_size": 128}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data))
    line = one_line(run("estimate", str(path)))
    assert "quantization_config.bits: expected an integer, got 4.5" in line


def test_newline_in_a_name_is_refused_and_never_reaches_a_header(tmp_path: Path,
                                                                  write_spec) -> None:
    line = one_line(run("estimate", str(write_spec(_set(LLAMA_LIKE, "name", "a\n| b |")))))
    assert line.endswith("name: must be one line without control characters")
    data = _config()
    data["_name_or_path"] = "evil\n# injected: true"
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data))
    result = run("import", str(path))
    assert result.exit_code == 0, result.stderr
    assert "injected" not in result.stdout


# --- input files: regular files only, size cap, clear OS errors -------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("name", ["f.yaml", "config.json"])
def test_fifo_is_refused_without_hanging(tmp_path: Path, name: str) -> None:
    fifo = tmp_path / name
    os.mkfifo(fifo)
    line = one_line(run("estimate", str(fifo)))
    assert "not a regular file" in line
    folder = tmp_path / "snap"
    folder.mkdir()
    os.mkfifo(folder / "config.json")
    assert "not a regular file" in one_line(run("estimate", str(folder)))


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_device_is_refused_before_reading() -> None:
    assert "not a regular file" in one_line(run("estimate", "/dev/zero"))
    assert "not a regular file" in one_line(run("import", "/dev/zero"))


def test_symlink_loop_and_overlong_names(tmp_path: Path) -> None:
    loop = tmp_path / "loop.yaml"
    loop.symlink_to(loop)
    line = one_line(run("estimate", str(loop)))
    assert "symbolic links" in line
    long_name = "a" * 5000 + ".yaml"
    line = one_line(run("estimate", long_name))
    assert "path too long" in line and len(line) < 400
    line = one_line(run("estimate", str(tmp_path / ("b" * 300 + ".json"))))
    assert "File name too long" in line


def test_oversized_and_non_utf8_files(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    with open(big, "wb") as f:
        f.truncate(MAX_INPUT_BYTES + 1)  # sparse: no disk used
    assert "too large" in one_line(run("estimate", str(big)))
    latin = tmp_path / "latin.yaml"
    latin.write_bytes(b"name: caf\xe9\n")
    assert "not UTF-8" in one_line(run("estimate", str(latin)))
    deep = tmp_path / "config.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    assert "malformed JSON" in one_line(run("estimate", str(deep)))
    empty_dir = tmp_path / "empty"
    empty_dir.mkdir()
    assert "without a config.json" in one_line(run("estimate", str(empty_dir)))


def test_bundled_id_is_not_shadowed_by_a_folder(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "llama-3-8b"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(_config("gpt2.json")))
    monkeypatch.chdir(tmp_path)
    spec, _ = load_model("llama-3-8b")
    assert spec.id == "llama-3-8b" and spec.num_hidden_layers == 32
    spec, _ = load_model("./llama-3-8b")  # a path: the folder
    assert spec.model_type == "gpt2"


# --- outputs --------------------------------------------------------------------------------

GRID = ("llama-3-8b", "--context", "1k,2k")


def test_sweep_never_overwrites_without_force(tmp_path: Path) -> None:
    out = tmp_path / "grid.csv"
    out.write_text("mine\n")
    line = one_line(run("sweep", *GRID, "-o", str(out)))
    assert "exists (pass --force to overwrite)" in line
    assert out.read_text() == "mine\n"
    assert run("sweep", *GRID, "-o", str(out), "--force").exit_code == 0
    assert out.read_text().startswith("model,")


def test_outputs_never_replace_the_input(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps(_config()))
    before = config.read_bytes()
    for args in (("sweep", str(config), "-o", str(config), "--force"),
                 ("sweep", str(tmp_path), "-o", str(config), "--force"),
                 ("import", str(config), "-o", str(config), "--force"),
                 ("import", str(tmp_path), "-o", str(config), "--force")):
        line = one_line(run(*args))
        assert "is the input file" in line, line
        assert config.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.json"]


def test_unwritable_targets_are_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    line = one_line(run("sweep", *GRID, "-o", str(blocker / "x.csv")))
    assert line.startswith("kvplan: error: -o: "), line
    line = one_line(run("import", str(CONFIGS / "gpt2.json"), "-o", str(blocker / "a.yaml")))
    assert line.startswith("kvplan: error: --output: ")
    line = one_line(run("sweep", *GRID, "-o", str(tmp_path)  + "/"))
    assert "-o" in line
    os.mkdir(tmp_path / "dir.csv")
    assert "not a regular file" in one_line(run("sweep", *GRID, "-o", str(tmp_path / "dir.csv"),
                                                "--force"))
    assert blocker.read_text() == "x"
    pytest.importorskip("matplotlib")
    line = one_line(run("sweep", *GRID, "--plot", str(blocker / "x.svg")))
    assert line.startswith("kvplan: error: --plot: "), line


@pytest.mark.skipif(not hasattr(signal, "SIGTERM"), reason="needs SIGTERM")
def test_sigterm_during_a_write_removes_the_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "out.csv"

    def killed(tmp: Path) -> None:
        tmp.write_text("half")
        os.kill(os.getpid(), signal.SIGTERM)

    with pytest.raises(SystemExit) as info:
        atomic_write("-o", target, killed)
    assert info.value.code == 128 + signal.SIGTERM
    assert list(tmp_path.iterdir()) == []
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL or callable(
        signal.getsignal(signal.SIGTERM))


# --- flag values ----------------------------------------------------------------------------


@pytest.mark.parametrize(("args", "expected"), [
    (["estimate", "llama-3-8b", "--tp", "0"], "--tp: must be >= 1, got 0"),
    (["estimate", "llama-3-8b", "--tp", "x"], "--tp: expected an integer, got 'x'"),
    (["estimate", "llama-3-8b", "--kv-budget-gib", "inf"],
     "--kv-budget-gib: must be a finite number, got inf"),
    (["estimate", "llama-3-8b", "--kv-budget-gib", "nan"], "--kv-budget-gib: "),
    (["estimate", "llama-3-8b", "--gpu-mem-gib", "1e300"], "--gpu-mem-gib: must be <= "),
    (["estimate", "llama-3-8b", "--batch", str(2**63)], "--batch: must be <= 1,099,511,627,776"),
    (["estimate", "llama-3-8b", "--gpu", "H200", "--mem-fraction", "2"],
     "--mem-fraction: must be <= 1.0, got 2"),
    (["estimate", "llama-3-8b", "--format", "xml"], "--format: "),
    (["estimate", "llama-3-8b", "--no-such-flag"], "no such option: --no-such-flag"),
    (["estimate"], "MODEL: missing"),
    (["sweep", "llama-3-8b", "--context", "1k..128k:x²"], "--context: range step 'x²'"),
    (["sweep", "llama-3-8b", "--batch", str(2**63)], "--batch: "),
    (["sweep", "llama-3-8b", "--context", "1m", "--batch", "1000000000",
      "--allow-long-context"], "overflows 64-bit integers"),
    (["sweep", "llama-3-8b", "--groups", "0"], "--groups: must be >= 1, got 0"),
    (["compare", "llama-3-8b", "--tp", "0"], "--tp: must be >= 1, got 0"),
])
def test_bad_flag_values_are_one_line(args: list[str], expected: str) -> None:
    line = one_line(run(*args))
    assert expected in line, line


def test_help_stays_rich_and_no_args_shows_help() -> None:
    result = run("estimate", "--help")
    assert result.exit_code == 0 and "--context" in result.stdout and "╭" in result.stdout
    assert run().exit_code == 2


# --- TP layouts the engines refuse ----------------------------------------------------------


@pytest.mark.parametrize(("heads", "kv", "tp", "ok"), [
    (24, 6, 4, False),   # the case: 6 KV heads neither split nor replicate over 4 ranks
    (24, 6, 2, True), (24, 6, 6, True), (24, 6, 12, True), (24, 6, 24, True),
    (32, 8, 16, True),   # 8 KV heads replicated twice
    (32, 8, 3, False),   # 3 does not divide 32 query heads
    (64, 8, 64, True), (40, 8, 20, False),
])
def test_tp_follows_vllms_rules(write_spec, heads: int, kv: int, tp: int, ok: bool) -> None:
    data = _set(_set(LLAMA_LIKE, "attention.num_attention_heads", heads),
                "attention.num_key_value_heads", kv)
    result = run("estimate", str(write_spec(data)), "--tp", str(tp), "-f", "json")
    if ok:
        assert result.exit_code == 0, result.stderr
    else:
        line = one_line(result)
        assert line.startswith("kvplan: error: --tp: ") and "vLLM and SGLang refuse" in line


def test_api_tp_error_is_an_input_error() -> None:
    from kvplan import estimate

    data = _set(_set(LLAMA_LIKE, "attention.num_attention_heads", 24),
                "attention.num_key_value_heads", 6)
    with pytest.raises(InputError, match=r"num_key_value_heads \(6\)"):
        estimate(parse_spec(data, path="x.yaml", spec_id="x"), context=128, tp=4)


# --- stdout failures (real processes: the console script's main()) --------------------------


def _kvplan(*args: str, **kw: Any) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "120", **kw.pop("env", {})}
    return subprocess.run([sys.executable, "-m", "kvplan", *args], capture_output=True,
                          env=env, timeout=120, **kw)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_full_disk_on_stdout_is_one_line() -> None:
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "kvplan", "specs", "-f", "json"],
                              stdout=full, stderr=subprocess.PIPE, timeout=120)
    err = proc.stderr.decode()
    assert proc.returncode == 1, err
    assert err.count("\n") == 1 and "No space left on device" in err and "Traceback" not in err


def test_broken_pipe_and_ascii_terminal() -> None:
    with subprocess.Popen([sys.executable, "-m", "kvplan", "sweep", "llama-3-8b", "--context",
                           "1..100000:+1", "-f", "csv"], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.readline()
        proc.stdout.close()  # the reader goes away, as `| head -1` does
        err = proc.stderr.read().decode()
        proc.wait(timeout=120)
    assert "Traceback" not in err and "Exception" not in err, err
    ascii_run = _kvplan("sweep", "llama-3-8b", "--context", "1k..64k:x2",
                        env={"PYTHONIOENCODING": "ascii"})
    assert ascii_run.returncode == 0, ascii_run.stderr.decode()
    assert b"?" in ascii_run.stdout  # the sparkline's bars, replaced


def test_no_traceback_without_debug_and_traceback_with_it(tmp_path: Path) -> None:
    spec = tmp_path / "x.yaml"
    spec.write_text(yaml.safe_dump(_set(LLAMA_LIKE, "hidden_size", 1.5)))
    quiet = _kvplan("estimate", str(spec))
    assert quiet.returncode == 2 and quiet.stderr.decode().count("\n") == 1
    loud = _kvplan("estimate", str(spec), env={"KVPLAN_DEBUG": "1"})
    assert loud.returncode != 0 and b"Traceback" in loud.stderr


# --- the fuzz test: the whole contract over mutations and flag values -----------------------

HOSTILE = st.one_of(
    st.sampled_from([None, True, False, 0, -1, 1, 2, 3, 7, 1.5, 2.0, 1e300, float("nan"),
                     float("inf"), -float("inf"), "", "x", "32", "a\nb", [], [1], {}, {"a": 1},
                     MAX_SIZE, MAX_SIZE + 1, 2**63, 10**100]),
    st.integers(min_value=-5, max_value=200),
    st.text(max_size=8),
)
SPEC_FIELDS = ["num_hidden_layers", "hidden_size", "vocab_size", "name", "source", "torch_dtype",
               "attention.kind", "attention.num_attention_heads",
               "attention.num_key_value_heads", "attention.head_dim", "attention.v_head_dim",
               "attention.sliding_window", "attention.sliding_window_pattern",
               "mlp.intermediate_size", "mlp.gated", "max_position_embeddings",
               "position_embedding", "tie_word_embeddings", "layer_types", "kv_sharing",
               "moe", "recurrent", "num_nextn_predict_layers", "quantization_config", "extra"]
CONFIG_FIELDS = ["num_hidden_layers", "hidden_size", "num_attention_heads",
                 "num_key_value_heads", "head_dim", "intermediate_size", "vocab_size",
                 "max_position_embeddings", "sliding_window", "use_sliding_window",
                 "max_window_layers", "tie_word_embeddings", "torch_dtype", "model_type",
                 "num_local_experts", "num_experts_per_tok", "n_shared_experts",
                 "moe_layer_freq", "first_k_dense_replace", "mlp_only_layers",
                 "decoder_sparse_step", "kv_lora_rank", "qk_rope_head_dim", "layer_types",
                 "quantization_config", "text_config", "rope_scaling", "_name_or_path",
                 "num_nextn_predict_layers", "num_kv_shared_layers"]
FLAGS = st.lists(st.tuples(
    st.sampled_from(["--context", "--batch", "--tp", "--pp", "--block-size", "--kv-dtype",
                     "--gpu", "--gpu-mem-gib", "--kv-budget-gib", "--mem-fraction", "--engine",
                     "--shared-prefix", "--requests", "--weights-gib", "--reserve-gib"]),
    st.sampled_from(["0", "1", "-1", "2", "3", "8", "1k", "4096", "1.5", "nan", "inf", "-inf",
                     "1e309", "x", "", "H200", "fp8", "sglang", str(2**63), "9" * 50, "²"]),
), max_size=3)


def _digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir()}


def _assert_contract(result, folder: Path, before: dict[str, str]) -> None:
    assert result.exit_code in (0, 2), (result.exit_code, result.stderr, result.exception)
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    assert "Traceback" not in result.stderr
    if result.exit_code == 2:
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("kvplan: error: "), result.stderr
        assert result.stdout == ""
    assert _digest(folder) == before


# 60 examples each in CI (derandomised: the same ones every run, about 3 s in all);
# HYPOTHESIS_PROFILE=explore searches the profile's 1,000 afresh.
FUZZ = settings(max_examples=60 if os.environ.get("HYPOTHESIS_PROFILE", "ci") == "ci"
                else settings.default.max_examples,
                suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(field=st.sampled_from(SPEC_FIELDS), value=HOSTILE, flags=FLAGS)
def test_fuzz_spec_mutations_and_flags(field: str, value: Any, flags: list) -> None:
    data = LLAMA_LIKE if field == "extra" and value is None else _set(LLAMA_LIKE, field, value)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path = folder / "spec.yaml"
        path.write_text(yaml.safe_dump(data, allow_unicode=True))
        before = _digest(folder)
        args = ["estimate", str(path)] + [x for pair in flags for x in pair]
        _assert_contract(run(*args), folder, before)


@FUZZ
@given(base=st.sampled_from(["llama-3-8b.json", "deepseek-v3.json", "qwen3-235b-a22b.json",
                             "gemma-2-9b.json", "mixtral-8x7b.json", "gpt2.json"]),
       field=st.sampled_from(CONFIG_FIELDS), value=HOSTILE,
       command=st.sampled_from(["estimate", "import", "sweep"]))
def test_fuzz_config_mutations(base: str, field: str, value: Any, command: str) -> None:
    if not (CONFIGS / base).exists():
        return
    data = _config(base)
    data[field] = value
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path = folder / "config.json"
        path.write_text(json.dumps(data))  # NaN/Infinity written as JSON's extensions
        before = _digest(folder)
        extra = ["-o", str(path), "--force"] if command == "sweep" and value == 1 else []
        _assert_contract(run(command, str(path), *extra), folder, before)


@FUZZ
@given(flags=FLAGS, command=st.sampled_from(["estimate", "sweep", "verify"]),
       model=st.sampled_from(["llama-3-8b", "deepseek-v2-lite", "gemma-2-9b", "gpt2"]))
def test_fuzz_flags(flags: list, command: str, model: str) -> None:
    args = [x for pair in flags for x in pair]
    if command == "verify":  # only the refusals: a valid verify allocates memory
        args = ["--device", "nope", *args]
    if command == "sweep":
        args = [a for a in args if a not in ("--requests", "--weights-gib", "--reserve-gib",
                                             "--pp", "--shared-prefix", "--gpu-mem-gib",
                                             "--kv-budget-gib")]
        if len(args) % 2:
            args = args[:-1]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        before = _digest(folder)
        result = run(command, model, *args)
        if command == "verify" and result.exit_code == 2:
            assert len(result.stderr.splitlines()) == 1
            return
        _assert_contract(result, folder, before)


# --- issue 32: plainly bad checkpoint files and names are one line, exit 2 (they were "internal
# error ... please report it", exit 1) -------------------------------------------------------

def _header_file(path: Path, text: str) -> None:
    raw = text.encode("utf-8", "surrogatepass")
    path.write_bytes(len(raw).to_bytes(8, "little") + raw)


LLAMA_DIR_CONFIG = {"architectures": ["LlamaForCausalLM"], "model_type": "llama",
                    "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
                    "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 100,
                    "max_position_embeddings": 4096, "torch_dtype": "bfloat16"}


@pytest.mark.parametrize(("file", "text", "fragment"), [
    ("model.safetensors", "[" * 100_000 + "]" * 100_000,
     "safetensors header is nested too deeply"),
    ("model.safetensors", '{"a":' + '{"b":' * 100_000 + "1" + "}" * 100_001,
     "safetensors header is nested too deeply"),
    ("model.safetensors", '{"a":{"dtype":"BF16","shape":[' + "9" * 5000 + '],"data_offsets":'
                          "[0,2]}}", "not valid JSON (an integer of too many digits)"),
    ("model.safetensors", '{"a":{"dtype":"BF16","shape":[1],"data_offsets":[0,NaN]}}',
     "not valid JSON (NaN is not a JSON number)"),
    ("model.safetensors", '{"model.layers.0.\\ud800":{"dtype":"XX","shape":[1],'
                          '"data_offsets":[0,2]}}', "unknown dtype 'XX'"),
    ("model.safetensors.index.json", '{"weight_map":' + "[" * 100_000 + "]" * 100_000 + "}",
     "nested too deeply"),
    ("model.safetensors.index.json", '{"metadata":{"total_size":' + "9" * 5000 + "}}",
     "not valid JSON (an integer of too many digits)"),
    ("model.safetensors.index.json", '{"weight_map":{"a":"\\ud800.safetensors"}}',
     "\\ud800.safetensors: not a valid path"),
    ("model.safetensors.index.json", '{"weight_map":{"a":"' + "m" * 5000 + '.safetensors"}}',
     "path too long"),
])
def test_bad_checkpoint_json_is_one_line(tmp_path: Path, file: str, text: str,
                                         fragment: str) -> None:
    folder = tmp_path / "ckpt"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(LLAMA_DIR_CONFIG))
    if file.endswith(".safetensors"):
        _header_file(folder / file, text)
    else:
        (folder / file).write_bytes(text.encode("utf-8", "surrogatepass"))
    line = one_line(run("estimate", str(folder), "--gpu", "H100"))
    assert fragment in line, line


def test_numbered_shard_names_of_absurd_size_are_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "ckpt"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(LLAMA_DIR_CONFIG))
    (folder / f"model-{'9' * 200}-of-{'9' * 20}.safetensors").write_bytes(b"")
    assert "shorter than 8 bytes" in one_line(run("estimate", str(folder)))


def test_model_names_any_case_and_did_you_mean() -> None:
    """Bundled ids ignore case; a near miss is answered with the closest ids (issue 28)."""
    upper = run("estimate", "Qwen3-8B", "--format", "json")
    lower = run("estimate", "qwen3-8b", "--format", "json")
    assert upper.exit_code == 0 and upper.stdout == lower.stdout and upper.stderr == ""
    line = one_line(run("estimate", "qwen3-8bb"))
    assert line == ("kvplan: error: qwen3-8bb: no such file or bundled spec (did you mean "
                    "qwen3-8b, qwen3.5-9b, qwen3-next-80b-a3b?)")
    line = one_line(run("estimate", "no-such-model-at-all"))
    assert "(bundled: deepseek-v2, " in line  # nothing close: the list, as before


def test_a_name_with_a_lone_surrogate_is_one_line(write_spec, tmp_path: Path) -> None:
    """JSON's and YAML's "\\ud800" decode to half a character that no output can encode: it was
    an internal error in every table, CSV and Markdown output (issue 32)."""
    spec = write_spec(yaml.safe_dump(LLAMA_LIKE).replace("name: Tiny GQA", 'name: "Tiny \\ud800"'))
    for fmt in ("table", "csv", "markdown", "json"):
        line = one_line(run("estimate", str(spec), "-f", fmt))
        assert line.endswith("name: not valid Unicode text (a lone surrogate escape)"), line
    folder = tmp_path / "cfg"
    folder.mkdir()
    config = {**LLAMA_DIR_CONFIG, "_name_or_path": "SURROGATE"}
    (folder / "config.json").write_text(json.dumps(config).replace("SURROGATE", "\\ud800"))
    line = one_line(run("estimate", str(folder), "--gpu", "H100"))
    assert "not valid Unicode text" in line, line
