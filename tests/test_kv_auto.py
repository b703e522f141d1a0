"""Issue 26's spirit: every command takes the same KV dtype by default, the engine's auto
(kvplan.engines.kv_dtype.run_kv_dtype), so none disagrees with `kvplan estimate`.

nvidia/Kimi-K2.6-NVFP4 (tests/data/blind26/real, verbatim) declares an fp8 KV cache (ModelOpt
kv_cache_scheme {num_bits: 8, type: float}); vLLM 0.32's default --kv-cache-dtype auto takes it
(engine/arg_utils.py resolve_kv_cache_dtype_string -> utils/torch_utils.py
get_kv_cache_quant_algo_string -> 'fp8_e4m3'). Its text_config is DeepSeek-V3's MLA: 61 layers x
(kv_lora_rank 512 + qk_rope_head_dim 64) = 576 elements per token per layer, so at 1 B (fp8)
61 x 576 = 35,136 B per token, and at 2 B (bf16) 70,272. SGLang (0.5.3+) and TensorRT-LLM
(declared in config.json): whether they take it by default is not settled by their code, so each
command refuses in one line without --kv-dtype; where it is settled, below.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan._util.errors import InputError
from kvplan.cli import app
from kvplan.engines.sglang.architectures import registered
from tests.test_sglang_arrivals import renamed

KIMI = str(Path(__file__).parent / "data" / "blind26" / "real" / "kimi-k2.6-nvfp4.json")
FP8_BYTES, BF16_BYTES = 61 * 576, 61 * 576 * 2  # 35,136 and 70,272 (above)


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def refused(*args: str) -> None:
    """SGLang's one-line refusal: the field that declares the dtype, and what to give."""
    code, _, err = run(*args)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "quantization_config.kv_cache_scheme" in err and "give --kv-dtype" in err


@pytest.fixture(scope="module")
def estimate() -> dict:
    code, out, _ = run("estimate", KIMI, "-c", "4096", "-f", "json")
    assert code == 0
    plan = json.loads(out)
    assert (plan["kv_dtype"], plan["bytes_per_token"]) == ("fp8", FP8_BYTES)
    return plan


def test_sweep_takes_estimates_kv_dtype(estimate: dict) -> None:
    for extra in ((), ("--kv-dtype", "auto"), ("--kv-cache-dtype", "AUTO")):
        code, out, err = run("sweep", KIMI, "-c", "4k", "-f", "json", *extra)
        assert code == 0, err
        (row,) = json.loads(out)
        assert (row["kv_dtype"], row["bytes_per_token"]) == (
            estimate["kv_dtype"], estimate["bytes_per_token"])
        assert "kv_cache_scheme declares it" in err  # the checkpoint chose it: said
    # auto is a member of the list like any dtype; one naming the same dtype gives one row.
    code, out, _ = run("sweep", KIMI, "-c", "4k", "-f", "csv", "--kv-dtype", "auto,bf16,fp8")
    assert code == 0
    rows = [line.split(",") for line in out.splitlines()[1:]]
    assert [(r[2], int(r[10])) for r in rows] == [("fp8", FP8_BYTES), ("bf16", BF16_BYTES)]
    code, _, err = run("sweep", KIMI, "--kv-dtype", "auto,bogus")
    assert code == 2 and "unknown dtype 'bogus'" in err and "auto" in err
    refused("sweep", KIMI, "-c", "4k", "-f", "json", "--engine", "sglang")
    code, out, _ = run("sweep", KIMI, "-c", "4k", "-f", "json", "--engine", "sglang",
                       "--kv-dtype", "fp8")
    assert code == 0 and json.loads(out)[0]["bytes_per_token"] == FP8_BYTES


def test_compare_as_published_row_is_estimates(estimate: dict) -> None:
    # compare has no --engine: its auto is the default engine's, estimate's (vLLM); every
    # variant is sized at that dtype, so the rows differ in attention only.
    def rows(*extra: str) -> tuple[dict[str, int], str]:
        code, out, err = run("compare", KIMI, "-c", "4096", "-f", "json", *extra)
        assert code == 0, err
        return {r["scheme"]: r["bytes_per_token"] for r in json.loads(out)}, err

    auto, err = rows()
    assert auto["MLA (absorbed)"] == estimate["bytes_per_token"]  # the native row
    assert "kv_cache_scheme declares it" in err
    assert rows("--kv-dtype", "auto")[0] == auto
    bf16, _ = rows("--kv-dtype", "bf16")
    assert bf16["MLA (absorbed)"] == BF16_BYTES
    assert all(bf16[scheme] == 2 * auto[scheme] for scheme in auto)
    code, out, _ = run("compare", KIMI, "-c", "4096")
    assert code == 0 and "fp8 KV" in out


def test_report_takes_estimates_kv_dtype(tmp_path: Path, estimate: dict) -> None:
    page = tmp_path / "r.md"
    for extra in ((), ("--kv-dtype", "auto")):
        code, _, err = run("report", KIMI, "-o", str(page), "-f", "markdown", "-c", "4k",
                           "--gpu", "B200", "--force", *extra)
        assert code == 0, err
        text = page.read_text()
        assert f"per token (all layers) | {estimate['bytes_per_token']:,} |" in text
        assert "context 4,096, fp8 KV" in text and "kv_cache_scheme declares it" in err
    code, _, _ = run("report", KIMI, "-o", str(page), "-f", "markdown", "-c", "4k",
                     "--gpu", "B200", "--force", "--kv-dtype", "bf16")
    assert code == 0 and f"per token (all layers) | {BF16_BYTES:,} |" in page.read_text()
    refused("report", KIMI, "-o", str(tmp_path / "s.md"), "-f", "markdown", "-c", "4k",
            "--engine", "sglang")
    assert not (tmp_path / "s.md").exists()


def test_plan_follows_auto(estimate: dict) -> None:
    def plan(*extra: str) -> dict:
        code, out, err = run("plan", KIMI, "--gpu", "B200", "-c", "4096", "-n", "1",
                             "-f", "json", *extra)
        assert code == 0, err
        answer = json.loads(out)
        return answer[0] if isinstance(answer, list) else answer

    # --kv-dtype auto (vLLM's spelling, pasted) pins the engine's own: estimate's fp8 (it was
    # read as bf16), and the launch line says so.
    auto = plan("--kv-dtype", "auto")
    assert auto["kv_dtype"] == estimate["kv_dtype"]
    assert "--kv-cache-dtype fp8 " in auto["command"]
    # Without --kv-dtype plan searches every dtype vLLM runs; whichever it picks, its launch line
    # names it, so vLLM's auto cannot run another (here bf16 fits on the fewest GPUs first).
    searched = plan()
    assert searched["kv_dtype"] == "bf16" and "--kv-cache-dtype bfloat16 " in searched["command"]
    refused("plan", KIMI, "--gpu", "B200", "-c", "4096", "-n", "1", "--engine", "sglang",
            "--kv-dtype", "auto")


def test_the_library_plan_takes_auto_as_the_command_does() -> None:
    import kvplan

    assert kvplan.plan(KIMI, concurrency=1, context=4096, gpu="B200",
                       kv_dtype="auto").chosen.kv_dtype == "fp8"


# SGLang and TensorRT-LLM (kvplan.engines.sglang.kv_dtype, kvplan.engines.trtllm.kv_dtype), read
# from their code. SGLang, python/sglang/srt/ of each release's wheel: model_executor/
# model_runner.py 0.4.5-0.5.2 (0.5.2 line 1231) `auto` -> self.dtype whatever the checkpoint
# declares; from 0.5.3 (0.5.14 configure_kv_cache_dtype, line 2337) fp8_e4m3 when
# model.quant_config.kv_cache_quant_algo is "FP8" (ModelOpt only; not every model class keeps
# quant_config: refused); server_args.py --kv-cache-dtype has "bf16"/"bfloat16" from 0.5.4.
# TensorRT-LLM, tensorrt_llm/_torch/: model_config.py load_modelopt_quant_config reads
# hf_quant_config.json's kv_cache_quant_algo, and pyexecutor validate_and_set_kv_cache_quant keeps
# it with dtype auto; its dtype values are auto, fp8 (later nvfp4): no 16-bit one.
LLAMA_FP8 = Path(__file__).parent / "data" / "hf_quant" / "llama-3.1-70b-instruct-fp8"
# nvidia/Llama-3.1-70B-Instruct-FP8: 80 layers x 2 (K, V) x 8 KV heads x 128 = 163,840 elements.
LLAMA_FP8_BYTES = 80 * 2 * 8 * 128


def first(out: str) -> dict:
    answer = json.loads(out)
    return answer[0] if isinstance(answer, list) else answer


def test_sglang_auto_by_version(tmp_path: Path) -> None:
    # Before 0.5.3 auto is the model dtype: bf16, 61 x 576 x 2 = 70,272 B per token, said once.
    # SGLang has KimiK25ForConditionalGeneration from 0.5.9 only (kvplan/engines/sglang/
    # arrivals.json): before it the rule is checked under Kimi-K2's DeepseekV3ForCausalLM.
    early = str(renamed(Path(KIMI), tmp_path, "DeepseekV3ForCausalLM"))
    code, out, err = run("estimate", early, "-c", "4096", "-f", "json", "--engine", "sglang",
                         "--engine-version", "0.5.2")
    assert code == 0, err
    assert (first(out)["kv_dtype"], first(out)["bytes_per_token"]) == ("bf16", BF16_BYTES)
    assert "declares fp8, but SGLang's default --kv-cache-dtype auto keeps the model dtype" in err
    # From 0.5.3 it takes a ModelOpt FP8 only where the model class keeps quant_config: refused.
    refused("estimate", early, "-c", "4096", "--engine", "sglang", "--engine-version", "0.5.3")
    refused("estimate", KIMI, "-c", "4096", "--engine", "sglang", "--engine-version", "0.5.14")


def test_sglang_auto_keeps_a_compressed_tensors_scheme_16_bit(tmp_path: Path) -> None:
    # Llama-3.1-8B with an llm-compressor fp8 kv_cache_scheme (laguna-xs.2-fp8's quantization
    # config, tests/data/blind26/real): CompressedTensorsConfig has no kv_cache_quant_algo, so
    # SGLang's auto keeps the model dtype in every version that loads it (its W8A8 FP8 block
    # weights from 0.5.6.post1, kvplan.engines.sglang.quant_methods: 0.5.3 refuses); vLLM's
    # takes fp8. 32 layers x 2 x 8 KV heads x 128 = 65,536 elements: 131,072 B at bf16, 65,536
    # at fp8.
    data = Path(__file__).parent / "data"
    config = json.loads((data / "configs" / "llama-3.1-8b.json").read_text())
    config["quantization_config"] = json.loads(
        (data / "blind26" / "real" / "laguna-xs.2-fp8.json").read_text())["quantization_config"]
    path = tmp_path / "llama-ct-fp8kv.json"
    path.write_text(json.dumps(config))
    for engine, version, want in (("sglang", "0.5.14", ("bf16", 131072)),
                                  ("sglang", "0.5.6.post1", ("bf16", 131072)),
                                  ("vllm", None, ("fp8", 65536))):
        extra = ("--engine-version", version) if version else ()
        code, out, err = run("estimate", str(path), "-c", "4096", "-f", "json",
                             "--engine", engine, *extra)
        assert code == 0, err
        assert (first(out)["kv_dtype"], first(out)["bytes_per_token"]) == want, engine
    code, _, err = run("estimate", str(path), "-c", "4096", "--engine", "sglang",
                       "--engine-version", "0.5.3")
    assert code == 2 and "SGLang 0.5.3 cannot load compressed-tensors W8A8 FP8 block" in err


def test_sglang_plan_runs_what_it_planned(tmp_path: Path) -> None:
    # Before 0.5.9 (KimiK25ForConditionalGeneration's first release) under DeepseekV3ForCausalLM.
    early = str(renamed(Path(KIMI), tmp_path, "DeepseekV3ForCausalLM"))

    def plan(*extra: str) -> dict:
        version = extra[extra.index("--engine-version") + 1] if "--engine-version" in extra \
            else None
        model = KIMI if registered("KimiK25ForConditionalGeneration", version) else early
        code, out, err = run("plan", model, "--gpu", "B200", "-c", "4096", "-n", "1", "-f",
                             "json", "--engine", "sglang", *extra)
        assert code == 0, err
        return first(out)

    # 0.5.4+: a bf16 plan names its dtype, so auto cannot take the declared fp8.
    searched = plan()
    assert searched["kv_dtype"] == "bf16" and "--kv-cache-dtype bfloat16 " in searched["command"]
    assert "--kv-cache-dtype fp8_e4m3 " in plan("--kv-dtype", "fp8")["command"]
    # 0.5.3 has no bf16 choice and its auto may take fp8: plan searches fp8 alone ...
    only = plan("--engine-version", "0.5.3")
    assert only["kv_dtype"] == "fp8" and "--kv-cache-dtype fp8_e4m3 " in only["command"]
    # ... and refuses bf16 in one line.
    code, _, err = run("plan", early, "--gpu", "B200", "-c", "4096", "-n", "1", "--engine",
                       "sglang", "--engine-version", "0.5.3", "--kv-dtype", "bf16")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "cannot name bf16" in err and "give --kv-dtype fp8" in err
    # Before 0.5.3 auto is the model dtype: no flag needed, none written.
    old = plan("--engine-version", "0.5.2")
    assert old["kv_dtype"] == "bf16" and "--kv-cache-dtype" not in old["command"]


def test_sglang_kv_dtype_flag_by_version() -> None:
    from kvplan.engines.sglang.kv_dtype import sglang_kv_dtype_flag as flag

    assert flag("fp8", None, "0.4.5") == flag("fp8", "fp8", None) == (
        "--kv-cache-dtype", "fp8_e4m3")
    assert flag("bf16", None, None) == flag("bf16", "nvfp4", None) == ()  # auto: model dtype
    assert flag("bf16", "fp8", "0.5.2") == ()
    assert flag("bf16", "fp8", "0.5.4") == flag("bf16", "fp8", None) == (
        "--kv-cache-dtype", "bfloat16")
    with pytest.raises(InputError, match="cannot name bf16"):
        flag("bf16", "fp8", "0.5.3.post3")
    with pytest.raises(InputError, match="cannot name fp16"):
        flag("fp16", "fp8", "0.5.14")


def test_trtllm_auto_takes_hf_quant_config_fp8() -> None:
    code, out, err = run("estimate", str(LLAMA_FP8), "-c", "8192", "--gpu", "H200", "-f",
                         "json", "--engine", "trtllm")
    assert code == 0, err
    assert (first(out)["kv_dtype"], first(out)["bytes_per_token"]) == ("fp8", LLAMA_FP8_BYTES)
    assert ("KV cache fp8: hf_quant_config.json quantization.kv_cache_quant_algo declares it, "
            "and TensorRT-LLM's default") in err
    # Declared in config.json: which inline formats it reads changed by release: refused.
    refused("estimate", KIMI, "-c", "4096", "--engine", "trtllm")


def test_trtllm_plan_runs_only_the_declared_dtype() -> None:
    code, out, err = run("plan", str(LLAMA_FP8), "--gpu", "H200", "-c", "8192", "-n", "4",
                         "-f", "json", "--engine", "trtllm")
    assert code == 0, err
    plan = first(out)
    assert plan["kv_dtype"] == "fp8"
    assert "  dtype: fp8\n" in plan["launch"]["files"]["kvplan-trtllm.yaml"]
    # Kimi's config.json declaration: plan searches fp8 alone and names it in the YAML.
    code, out, err = run("plan", KIMI, "--gpu", "B200", "-c", "4096", "-n", "1", "-f", "json",
                         "--engine", "trtllm")
    assert code == 0, err
    assert "  dtype: fp8\n" in first(out)["launch"]["files"]["kvplan-trtllm.yaml"]
    # kv_cache_config.dtype has no 16-bit value: a bf16 plan is refused in one line.
    code, _, err = run("plan", str(LLAMA_FP8), "--gpu", "H200", "-c", "8192", "-n", "4",
                       "--engine", "trtllm", "--kv-dtype", "bf16")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "cannot run a bf16 one: give --kv-dtype fp8" in err


def test_trtllm_estimate_refuses_what_plan_cannot_launch() -> None:
    # TensorRT-LLM's _torch/pyexecutor/model_loader.py validate_and_set_kv_cache_quant: "auto"
    # takes the checkpoint's kv_cache_quant_algo (hf_quant_config.json: FP8), and any other
    # kv_cache_config.dtype must be in _VALID_KV_CACHE_DTYPES ("fp8", "auto"; later "nvfp4"),
    # else "Overriding KV cache quantization with an invalid type": no 16-bit KV cache for this
    # checkpoint. estimate used to size bf16 here (80 x 2 x 8 x 128 x 2 = 327,680 B per token)
    # with exit 0; now it refuses in one line, naming the file and field, as plan does.
    for command in (("estimate", str(LLAMA_FP8), "-c", "8192"),
                    ("plan", str(LLAMA_FP8), "--gpu", "H200", "-c", "8192", "-n", "4")):
        code, out, err = run(*command, "--engine", "trtllm", "--kv-dtype", "bf16")
        assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
        assert (f"{LLAMA_FP8}/config.json: hf_quant_config.json quantization.kv_cache_quant_algo: "
                "declares an fp8 KV cache") in err
        assert "cannot run a bf16 one: give --kv-dtype fp8" in err
    # fp8, asked or by default: 80 x 2 x 8 x 128 x 1 B = 163,840 B per token.
    for kv in ((), ("--kv-dtype", "fp8")):
        code, out, err = run("estimate", str(LLAMA_FP8), "-c", "8192", "-f", "json",
                             "--engine", "trtllm", *kv)
        assert code == 0, err
        assert first(out)["bytes_per_token"] == LLAMA_FP8_BYTES == 163_840
    # Declared in config.json (Kimi-K2.6's kv_cache_scheme): the same one line for bf16.
    code, _, err = run("estimate", KIMI, "-c", "4096", "--engine", "trtllm", "--kv-dtype", "bf16")
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "kv_cache_scheme: declares an fp8 KV cache" in err
    # Nothing declared: bf16 is what auto runs (Llama-3.1-8B: 32 x 2 x 8 x 128 x 2 B = 131,072).
    code, out, err = run("estimate", "llama-3.1-8b", "-c", "8192", "-f", "json", "--engine",
                         "trtllm", "--kv-dtype", "bf16")
    assert code == 0 and first(out)["bytes_per_token"] == 131_072, err
