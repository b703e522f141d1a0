"""Issue 26's spirit: every command takes the same KV dtype by default, the engine's auto
(kvplan.engines.base.run_kv_dtype), so none disagrees with `kvplan estimate`.

nvidia/Kimi-K2.6-NVFP4 (tests/data/blind26/real, verbatim) declares an fp8 KV cache (ModelOpt
kv_cache_scheme {num_bits: 8, type: float}); vLLM 0.32's default --kv-cache-dtype auto takes it
(engine/arg_utils.py resolve_kv_cache_dtype_string -> utils/torch_utils.py
get_kv_cache_quant_algo_string -> 'fp8_e4m3'). Its text_config is DeepSeek-V3's MLA: 61 layers x
(kv_lora_rank 512 + qk_rope_head_dim 64) = 576 elements per token per layer, so at 1 B (fp8)
61 x 576 = 35,136 B per token, and at 2 B (bf16) 70,272. SGLang and TensorRT-LLM: whether they
take it by default is not modelled, so each command refuses in one line without --kv-dtype.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan.cli import app

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
