"""SGLang turns --kv-cache-dtype auto to fp8 by itself for DeepSeek's sparse attention (DSA) on
Blackwell, with nothing in the checkpoint declaring it (kvplan.engines.sglang.kv_dtype, read from
each release's wheel, python/sglang/srt/):

- 0.5.3-0.5.4, server_args.py _handle_model_specific_adjustments (0.5.3 line 829, 0.5.4 line
  1029): ``if major >= 10: self.kv_cache_dtype = "fp8_e4m3"`` -- whatever was asked;
- 0.5.5-0.5.14, server_args.py (0.5.9+ _set_default_nsa_kv_cache_dtype, 0.5.13+
  _set_default_dsa_kv_cache_dtype; 0.5.14 line 3416) and 0.5.15-0.5.23,
  arg_groups/overrides.py _dsa_kv_cache_dtype_default (0.5.23 line 532): auto only, to
  ``"fp8_e4m3" if major >= 10 else "bfloat16"``;

``major`` being torch.cuda.get_device_capability()[0] (GPU.compute_capability: H100 9, B200 10,
RTX 5090 12, MI300X 9). The bytes, by hand, from the real configs under tests/data (the SGLang
cell: pools.py / kvplan.kv.cache; the fp8 latent is calculate_mla_kv_cache_dim's fp8_ds_mla row,
512 fp8 + 512 / 128 x 4 B scales + 64 x 2 B rope = 656 B; the indexer keys index_head_dim 128
fp8 + 128 / 128 x 4 B scale = 132 B, uint8 whatever the KV dtype):

- DeepSeek-V3.2 (tests/data/configs/deepseek-v3.2.json, verbatim): 61 layers; bf16
  61 x ((512 + 64) x 2 + 132) = 61 x 1,284 = 78,324 B/token; fp8 61 x (656 + 132) = 61 x 788
  = 48,068 B/token.
- GLM-5.1 (tests/data/configs/glm-5.1.json, verbatim; GlmMoeDsaForCausalLM): 78 layers;
  bf16 78 x 1,284 = 100,152 B/token; fp8 78 x 788 = 61,464 B/token. (vLLM's own rule for it:
  tests/test_kv_auto_vllm_dsa.py.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan._util.errors import InputError
from kvplan.cli import app
from kvplan.engines.base import Engine
from kvplan.engines.kv_dtype import run_kv_dtype
from kvplan.engines.sglang.kv_dtype import sglang_kv_dtype_flag
from kvplan.hardware.gpus import get_gpu
from kvplan.sources.hf_config import load_config

DATA = Path(__file__).parent / "data"
V32 = str(DATA / "configs" / "deepseek-v3.2.json")
V32_BF16, V32_FP8 = 61 * 1284, 61 * 788  # 78,324 and 48,068 (above)
GLM_BF16, GLM_FP8 = 78 * 1284, 78 * 788  # 100,152 and 61,464 (above)


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def estimate(model: str, *extra: str, engine: str = "sglang") -> tuple[str, int]:
    """The KV dtype and bytes per token `kvplan estimate` gives at 4,096 tokens (exit 0);
    tests/test_kv_auto_vllm_dsa.py asks it with engine vllm."""
    code, out, err = run("estimate", model, "--engine", engine, "-c", "4096", "-f", "json",
                         *extra)
    assert code == 0, err
    plan = json.loads(out)
    return plan["kv_dtype"], plan["bytes_per_token"]


@pytest.fixture(scope="module")
def glm() -> str:
    return str(DATA / "configs" / "glm-5.1.json")


@pytest.mark.parametrize(("gpu", "expected"), [
    ("H100", ("bf16", V32_BF16)), ("H200", ("bf16", V32_BF16)), ("MI300X", ("bf16", V32_BF16)),
    ("B200", ("fp8", V32_FP8)), ("GB300", ("fp8", V32_FP8)), ("RTX-5090", ("fp8", V32_FP8))])
def test_deepseek_v32_auto_by_gpu(gpu: str, expected: tuple[str, int]) -> None:
    # On ROCm SGLang's DSA page (1 or 64) depends on the aiter kernel found at start-up
    # (kvplan.engines.sglang.dsa_page): kvplan asks for --block-size there.
    extra = ("--block-size", "64") if gpu == "MI300X" else ()
    assert estimate(V32, "--gpu", gpu, *extra) == expected


def test_glm5_auto_by_gpu(glm: str) -> None:
    assert estimate(glm, "--gpu", "H200") == ("bf16", GLM_BF16)
    assert estimate(glm, "--gpu", "B200") == ("fp8", GLM_FP8)
    # GlmMoeDsaForCausalLM is in SGLang from 0.5.9 (models/glm4_moe.py).
    code, _, err = run("estimate", glm, "--engine", "sglang", "--engine-version", "0.5.8",
                       "--gpu", "B200", "-c", "4096")
    assert code == 2 and "from 0.5.9" in err and len(err.strip().splitlines()) == 1


def test_without_a_gpu_auto_is_refused_in_one_line() -> None:
    code, _, err = run("estimate", V32, "--engine", "sglang", "-c", "4096")
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "give --gpu or --kv-dtype" in err
    # A dtype given needs no GPU; the other engines need none either.
    assert estimate(V32, "--kv-dtype", "fp8") == ("fp8", V32_FP8)
    code, out, _ = run("estimate", V32, "-c", "4096", "-f", "json")
    assert code == 0 and json.loads(out)["bytes_per_token"] == V32_BF16


def test_auto_by_version() -> None:
    spec, _ = load_config(Path(V32))
    b200, h100 = get_gpu("B200"), get_gpu("H100")
    auto = {v: (run_kv_dtype(Engine.sglang, spec, "auto", v, b200)[0],
                run_kv_dtype(Engine.sglang, spec, "auto", v, h100)[0])
            for v in ("0.5.2", "0.5.3", "0.5.4", "0.5.5", "0.5.14", "0.5.23", None)}
    # Before 0.5.3 no rule (model_runner.py: the model dtype); from 0.5.3 fp8 on SM10+.
    assert auto == {"0.5.2": ("bf16", "bf16"), "0.5.3": ("fp8", "bf16"),
                    "0.5.4": ("fp8", "bf16"), "0.5.5": ("fp8", "bf16"),
                    "0.5.14": ("fp8", "bf16"), "0.5.23": ("fp8", "bf16"), None: ("fp8", "bf16")}
    rules = Engine.sglang.rules
    # 0.5.3-0.5.4 set fp8 on SM10+ whatever was asked: only fp8 can be planned there.
    assert rules.runnable_kv_dtypes(spec, "0.5.4", b200) == ("fp8",)
    assert rules.runnable_kv_dtypes(spec, "0.5.5", b200) is None
    assert rules.runnable_kv_dtypes(spec, "0.5.4", h100) is None


def test_launch_names_bfloat16_where_auto_is_fp8() -> None:
    assert sglang_kv_dtype_flag("bf16", None, None, "fp8") == ("--kv-cache-dtype", "bfloat16")
    assert sglang_kv_dtype_flag("bf16", None, None, "bf16") == ()
    assert sglang_kv_dtype_flag("fp8", None, None, "fp8") == ("--kv-cache-dtype", "fp8_e4m3")
    with pytest.raises(InputError, match="whatever --kv-cache-dtype says"):
        sglang_kv_dtype_flag("bf16", None, "0.5.4", "fp8")
    common = ("plan", V32, "--engine", "sglang", "--context", "8192", "--concurrency", "4",
              "--kv-dtype", "bf16")
    code, out, err = run(*common, "--gpu", "B200")
    assert code == 0, err
    assert "--kv-cache-dtype bfloat16" in out
    code, out, err = run(*common, "--gpu", "H200")
    assert code == 0, err
    assert "--kv-cache-dtype" not in out  # auto is bfloat16 there
    # 0.5.3-0.5.4 set fp8 on SM10+ whatever was asked: told bf16, it runs (and kvplan sizes) fp8.
    code, out, err = run(*common, "--gpu", "B200", "--engine-version", "0.5.4")
    assert code == 0, err
    assert "--kv-cache-dtype fp8_e4m3" in out
    assert estimate(V32, "--gpu", "B200", "--engine-version", "0.5.4", "--kv-dtype", "bf16") == (
        "fp8", V32_FP8)
    assert estimate(V32, "--gpu", "B200", "--engine-version", "0.5.5", "--kv-dtype", "bf16") == (
        "bf16", V32_BF16)


def test_sweep_takes_auto_per_gpu_type() -> None:
    def rows(gpus: str) -> list[tuple[str, int]]:
        code, out, err = run("sweep", V32, "--engine", "sglang", "--gpu", gpus, "-c", "4k",
                             "-f", "json")
        assert code == 0, err
        return [(r["kv_dtype"], r["bytes_per_token"]) for r in json.loads(out)]

    assert rows("B200") == [("fp8", V32_FP8)]
    assert rows("H100,H200") == [("bf16", V32_BF16)] * 2
    # Auto differs between the GPU types asked: one line, not two dtypes in one grid.
    code, _, err = run("sweep", V32, "--engine", "sglang", "--gpu", "H100,B200", "-c", "4k")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "give --kv-dtype" in err


def test_every_gpu_preset_knows_its_compute_capability() -> None:
    from kvplan.hardware.gpus import GPUS

    assert all(g.compute_capability is not None for g in GPUS.values())
    by_name = {name: GPUS[name].compute_capability for name in (
        "A100-80GB", "L40S", "H100-80GB", "H200", "B200", "B300", "RTX-5090", "GB10", "MI300X",
        "MI355X")}
    assert by_name == {"A100-80GB": (8, 0), "L40S": (8, 9), "H100-80GB": (9, 0), "H200": (9, 0),
                       "B200": (10, 0), "B300": (10, 3), "RTX-5090": (12, 0), "GB10": (12, 1),
                       "MI300X": (9, 4), "MI355X": (9, 5)}
