"""trtsim67: TensorRT-LLM's context-step kernels (kvplan.perf.trtllm_bytes) in a simulated mixed
step (kvplan.perf.mixed_step.MixedStepCost), worked by hand for DeepSeek-V3 (MLA, 128 heads, 16
a TP 8 rank, qk_nope 128, qk_rope 64, v 128, kv_lora 512; 61 attention layers) on H200, TP 8
EP 8, FP8 KV cache, TensorRT-LLM 1.2.0rc6.post1 (FP8 context MLA on SM 90)."""

from __future__ import annotations

import pytest

from kvplan import load_spec
from kvplan.hardware.gpus import get_gpu
from kvplan.perf.engine_traits import engine_efficiency
from kvplan.perf.graph_padding import ATTENTION_CORE_OPS
from kvplan.perf.layout import Layout
from kvplan.perf.mixed_step import MixedStepCost
from kvplan.perf.roofline import step_time

VERSION = "1.2.0rc6.post1"
LAYOUT = Layout(tp=8, ep=8)
# The kernels MLA's context path runs on the context tokens alone (trtllm_bytes docstring, mixed
# steps: MLA.forward_impl hands q[:num_ctx_tokens] to forward_context; thop/attentionOp.cpp runs
# the context pass over num_ctx_tokens), bytes a token on a TP 8 rank:
#   kv_b_proj's input quantization (fp8_quantize_1x128): (2 + 1 + 4 / 128) x 512 = 1,552;
#   the k_nope copy: 4 x 16 x 128 = 8,192; `_maybe_concat_qkv`: 4 x 16 x (2 x 192 + 128) =
#   32,768; the RoPE kernel (applyMLARopeAndAssignQKVKernelOptContext): 2 x (3 x 16 x 64 + 64 +
#   512) = 7,296; the FP8 copies (quantizeCopyInputToFp8Kernel): 3 x 16 x (2 x 192 + 128) =
#   24,576.
CONTEXT_ONLY = (1552, 8192, 32768, 7296, 24576)  # 74,384 in all


def _cost(engine: str = "trtllm", **kw: object) -> MixedStepCost:
    spec = load_spec("deepseek-v3")
    gpu = get_gpu("H200")
    return MixedStepCost(spec, gpu, kv_dtype="fp8", layout=LAYOUT,
                         eff=engine_efficiency(engine, version=VERSION if engine == "trtllm"
                                               else None), eager_prefill=True, **kw)


def test_context_only_kernels() -> None:
    cost = _cost()
    assert cost.context_only.byte_rows == CONTEXT_ONLY
    assert cost.context_only.att_layers == 61


def test_generation_tokens_skip_mlas_context_path() -> None:
    # One step of 16,384 tokens (a grid point: no interpolation), all of one prompt, against
    # the same tokens as a 16,320-token chunk and 64 decodes. Everything but MLA's context path
    # runs over all 16,384 tokens in both, so the dense parts (less the lm_head's rows) differ
    # by the context path's 64 tokens: each of its five kernels is above its floor at both
    # (1,552 x 16,320 = 25.3 MB > 4 us x 4.32 TB/s = 17.3 MB), so the difference is its bytes'
    # time alone: 61 layers x 64 tokens x 74,384 B / (HBM x hbm efficiency).
    cost = _cost()
    gpu, eff = cost.gpu, cost.eff
    bw = gpu.hbm_bytes_per_s * eff.hbm
    assert 1552 * 16320 / bw > eff.kernel_floor_s
    whole = cost.dense_seconds(16384, 1, context_tokens=16384) - cost.head_seconds(1)
    mixed = cost.dense_seconds(16384, 65, context_tokens=16320) - cost.head_seconds(65)
    by_hand = 61 * 64 * sum(CONTEXT_ONLY) / bw
    assert whole - mixed == pytest.approx(by_hand, rel=1e-9)
    assert 6.6e-5 < by_hand < 6.8e-5  # 61 x 64 x 74,384 B = 290.4 MB at 4.32 TB/s: 67.2 us
    # Below the floor the context path costs its floors alone (already in the op count).
    assert cost.context_only_seconds(300) == 0.0


def test_mixed_step_prices_the_static_context_step() -> None:
    # The rule is step_time's: a simulated step of one 512-token chunk charges the dense part of
    # step_time(context_tokens=512) (its attention core, lm_head and gathers taken out), and a
    # step without a chunk the decode step's, as before.
    cost = _cost()
    st = step_time(cost.spec, cost.gpu, tokens=512, context=1, requests=1, logits=1,
                   layout=LAYOUT, eff=cost.eff, kv_dtype="fp8", context_tokens=512)
    dense = st.seconds - sum(st.by_op.get(k, 0.0) for k in ATTENTION_CORE_OPS)
    assert cost.dense_seconds(512, 1, context_tokens=512) - cost.head_seconds(1) == pytest.approx(
        dense, rel=1e-12)
    dec = step_time(cost.spec, cost.gpu, tokens=512, context=1, requests=1, logits=1,
                    layout=LAYOUT, eff=cost.eff, kv_dtype="fp8")
    decode = dec.seconds - sum(dec.by_op.get(k, 0.0) for k in ATTENTION_CORE_OPS)
    assert cost.dense_seconds(512, 512, context_tokens=0) - cost.head_seconds(512) == decode
    # The context step moves more: trtllm_bytes' kernels replace the decode step's norm rows.
    assert dense > decode
    # step_time's default is the phase's: a prefill step's context tokens are all its tokens.
    pre = step_time(cost.spec, cost.gpu, tokens=2048, context=2048, requests=1, phase="prefill",
                    layout=LAYOUT, eff=cost.eff, kv_dtype="fp8")
    assert pre.seconds == step_time(cost.spec, cost.gpu, tokens=2048, context=2048, requests=1,
                                    phase="prefill", layout=LAYOUT, eff=cost.eff,
                                    kv_dtype="fp8", context_tokens=2048).seconds


def test_other_engines_unchanged() -> None:
    # vLLM's and SGLang's steps charge no context-step kernels: a chunk changes nothing.
    for engine in ("vllm", "sglang"):
        cost = _cost(engine)
        assert cost.context_only.byte_rows is None
        assert (cost.dense_seconds(4096, 5, context_tokens=4000)
                == cost.dense_seconds(4096, 5, context_tokens=0))
