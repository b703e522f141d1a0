"""What vLLM holds on the GPU beside the checkpoint's tensors, and what it builds differently from
them (sizefix58): transformers' rotary buffers where its Transformers modeling backend builds the
model (no cos/sin table), each attention layer's four float32 scale buffers, Granite's attention
sinks split by head, Seed-OSS's o_proj without bias. Each held against bytes worked out by hand
from a real config, and against vLLM 0.32's own bytes on the oracle shrinks
(tests/oracle/vllm_weight_bytes.py, tests/data/oracle/weight-bytes.json: `params` and `buffers`)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from kvplan._util.units import GiB
from kvplan.capacity.stages import stage_weights
from kvplan.capacity.weights import attention_scales_bytes, weights_breakdown
from kvplan.engines.base import Engine, plan_inputs
from kvplan.engines.vllm.architectures import transformers_backend_rotary, via_transformers_backend
from kvplan.sources.hf_config import load_config
from kvplan.sources.resolve import load_spec
from tests.test_checkpoint_weights import make_folder

DATA = Path(__file__).resolve().parent / "data"
ORACLE = DATA / "oracle"
MEASURED = json.loads((ORACLE / "weight-bytes.json").read_text())["cases"]


def _config(name: str):
    return load_config(DATA / "configs" / f"{name}.json")[0]


def _served(spec, version: str = "0.32", engine: str = "vllm", **kw):
    inputs = plan_inputs(context=4096, kv_budget_bytes=GiB, engine_version=version,
                         kv_dtype="bf16", engine=Engine(engine), **kw)
    return inputs.engine.rules.served_spec(spec, inputs), inputs


# --- 1. the Transformers backend's rotary buffers ------------------------------------------------

@pytest.mark.parametrize(("name", "version", "backend"), [
    # arrivals.json `renamed` (vLLM registry.py _TRANSFORMERS_SUPPORTED_MODELS, 0.32:709-729):
    # Starcoder2 from 0.25.1, OLMo-2 from 0.26, Seed-OSS and Phi and GPT-NeoX from 0.32;
    # SmolLM3 registered with the backend from its first release (0.10.1.1); Llama never.
    ("starcoder2-3b", "0.24", False), ("starcoder2-3b", "0.25", True),
    ("starcoder2-3b", "0.32", True), ("olmo-2-1124-7b", "0.23", False),
    ("olmo-2-1124-7b", "0.26", True), ("seed-oss-36b", "0.31", False),
    ("seed-oss-36b", "0.32", True), ("phi-2", "0.32", True), ("pythia-410m", "0.32", True),
    ("llama-3.1-8b", "0.32", False),
])
def test_which_releases_build_through_the_transformers_backend(name: str, version: str,
                                                                backend: bool) -> None:
    assert via_transformers_backend(_config(name), version) is backend


def test_transformers_backend_rotary_buffers_by_hand() -> None:
    # bigcode/starcoder2-3b: hidden 3,072 / 24 heads = head_dim 128, max_position_embeddings
    # 16,384. vLLM 0.24 (native starcoder2.py, get_rope): one cos/sin table of 16,384 x 128 x 2 B
    # = 4 MiB. vLLM 0.32 (Transformers backend): transformers' Starcoder2RotaryEmbedding, one
    # per model, inv_freq and original_inv_freq of 128 / 2 = 64 float32 each: 2 x 64 x 4 = 512 B.
    spec = _config("starcoder2-3b")
    assert weights_breakdown(_served(spec, "0.24")[0], tp=1).rope_cache == 16_384 * 128 * 2
    assert weights_breakdown(_served(spec, "0.32")[0], tp=1).rope_cache == 2 * 64 * 4 == 512
    # microsoft/phi-2: head_dim 2,560 / 32 = 80, partial_rotary_factor 0.4 -> rotary_dim 32:
    # 2 x 16 x 4 = 128 B (was 2,048 x 32 x 2 = 131,072). EleutherAI/pythia-410m: 64 x rotary_pct
    # 0.25 = 16 -> 2 x 8 x 4 = 64 B. Both whole on every TP rank (no head split).
    for name, rope in (("phi-2", 128), ("pythia-410m", 64)):
        for tp in (1, 2):
            assert weights_breakdown(_served(_config(name), tp=tp)[0], tp=tp).rope_cache == rope
    # allenai OLMo-3 (olmo3-190m-zh-continue: head_dim 768 / 12 = 64, sliding and full layers):
    # transformers 5.19 Olmo3RotaryEmbedding holds a pair per layer type: 2 x 2 x 32 x 4 = 512 B.
    olmo3 = transformers_backend_rotary(_config("olmo3-190m-zh-continue"), "0.32")
    assert olmo3.rotary_inv_freq_pairs == 2
    assert weights_breakdown(olmo3, tp=1).rope_cache == 2 * 2 * 32 * 4 == 512
    # SGLang builds its own classes: its weights keep the table (no vLLM served spec).
    sglang, _ = _served(spec, "0.5.6", engine="sglang")
    assert sglang.rotary_inv_freq_pairs == 0


def test_seed_oss_budget_gains_its_cos_sin_table_at_0_32() -> None:
    # ByteDance-Seed/Seed-OSS-36B-Instruct: max_position_embeddings 524,288, head_dim 128: its
    # native table at 0.31 was 524,288 x 128 x 2 B = 128 MiB; at 0.32 (Transformers backend)
    # 512 B. Its o_proj has no bias (attention_out_bias false): 64 layers x 5,120 x 2 B =
    # 655,360 B fewer than kvplan counted before sizefix58, at either release.
    spec = _config("seed-oss-36b")
    native, inputs = _served(spec, "0.31")
    served, _ = _served(spec, "0.32")
    old = stage_weights(native, inputs, range(64), pp_first=True, pp_last=True)
    new = stage_weights(served, inputs, range(64), pp_first=True, pp_last=True)
    assert old.rope_cache - new.rope_cache == 524_288 * 128 * 2 - 512 == 134_217_216
    assert not spec.attention.o_proj_bias and spec.attention.attention_bias


# --- 2. each attention layer's scale buffers -----------------------------------------------------

def test_attention_scale_buffers_by_hand() -> None:
    # vLLM 0.32 attention.py:133-139: _k_scale, _v_scale, _q_scale, _prob_scale, float32
    # scalars, on every Attention / MLAAttention layer, whole on every TP rank.
    # meta-llama/Llama-3.1-8B: 32 layers x 16 B = 512 B at TP 1 and TP 4; a PP 2 stage holds
    # its 16 layers' (256 B).
    llama = _config("llama-3.1-8b")
    _, inputs = _served(llama)
    assert inputs.engine.rules.attention_scale_bytes(llama) == 4 * 4
    for tp in (1, 4):
        w = weights_breakdown(llama, tp=tp, attention_scale_bytes=16)
        assert w.attention_scales == 32 * 16 == 512
        assert w.total - weights_breakdown(llama, tp=tp).total == 512
    assert attention_scales_bytes(llama, 16, layers=range(16)) == 256
    # nvidia/NVIDIA-Nemotron-Nano-9B-v2: hybrid_override_pattern has 4 '*' (attention) of 56
    # layers: 4 x 16 = 64 B; the Mamba and MLP layers build no Attention.
    assert attention_scales_bytes(_config("nemotron-nano-9b-v2"), 16) == 4 * 16
    # DeepSeek-V4's own attention class (vLLM 0.32 models/deepseek_v4/attention.py:131) is no
    # Attention / MLAAttention: vLLM registers none of these scalars for it.
    v4 = load_config(DATA / "configs" / "dsv4" / "deepseek-v4-flash.json")[0]
    assert inputs.engine.rules.attention_scale_bytes(v4) == 0
    # SGLang and TensorRT-LLM: not read, none counted.
    for engine, version in (("sglang", "0.5.6"), ("trtllm", "1.1")):
        rules = _served(llama, version, engine=engine)[1].engine.rules
        assert rules.attention_scale_bytes(llama) == 0


# --- 3. Granite's attention sinks ---------------------------------------------------------------

def test_granite_swa_sinks_by_hand(tmp_path: Path) -> None:
    # ibm-granite/granite-swash-2b (GraniteSWAForCausalLM, no attention_sinks key, layer_types
    # given): vLLM 0.32 granite.py:109 has_sink = layer_types is not None; :220 sinks of the
    # rank's num_heads in bf16: 24 layers x 20 heads x 2 B = 960 B at TP 1, 480 at TP 2, 240 at
    # TP 4 (5 heads a rank).
    spec = _config("granite-swash-2b")
    assert spec.attention_sinks
    no_sinks = replace(spec, attention_sinks=False)
    for tp, sink_bytes in ((1, 960), (2, 480), (4, 240)):
        assert (weights_breakdown(spec, tp=tp).attention
                - weights_breakdown(no_sinks, tp=tp).attention) == sink_bytes
    # `attention_sinks: false` in the file wins; a plain Granite config (no layer_types) has
    # none, nor Granite-4.0-H (granitemoehybrid.py builds no sinks).
    config = json.loads((DATA / "configs" / "granite-swash-2b.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps({**config, "attention_sinks": False}))
    assert not load_config(tmp_path / "config.json")[0].attention_sinks
    assert not _config("granite-3.0-2b").attention_sinks
    assert not _config("granite-4.0-h-micro").attention_sinks


def _granite_swa_tensors(config: dict) -> dict[str, tuple[str, list[int]]]:
    h, heads, kv = config["hidden_size"], config["num_attention_heads"], config[
        "num_key_value_heads"]
    d, f, v = h // heads, config["intermediate_size"], config["vocab_size"]
    out: dict[str, tuple[str, list[int]]] = {"model.embed_tokens.weight": ("BF16", [v, h])}
    for i in range(config["num_hidden_layers"]):
        p = f"model.layers.{i}"
        out |= {f"{p}.self_attn.q_proj.weight": ("BF16", [heads * d, h]),
                f"{p}.self_attn.k_proj.weight": ("BF16", [kv * d, h]),
                f"{p}.self_attn.v_proj.weight": ("BF16", [kv * d, h]),
                f"{p}.self_attn.o_proj.weight": ("BF16", [h, heads * d]),
                f"{p}.self_attn.sinks": ("BF16", [heads]),
                f"{p}.mlp.gate_proj.weight": ("BF16", [f, h]),
                f"{p}.mlp.up_proj.weight": ("BF16", [f, h]),
                f"{p}.mlp.down_proj.weight": ("BF16", [h, f]),
                f"{p}.input_layernorm.weight": ("BF16", [h]),
                f"{p}.post_attention_layernorm.weight": ("BF16", [h])}
    return out | {"model.norm.weight": ("BF16", [h])}


def test_granite_swa_sinks_split_by_head_on_the_checkpoint_path(tmp_path: Path) -> None:
    # The oracle shrink granite-swash-2b (8 layers, 20 heads, hidden 2,560) written as a
    # checkpoint with transformers' tensor names (modeling_granite_swa.py:152 self_attn.sinks of
    # num_attention_heads). vLLM 0.32 narrows the stored vector to the rank's heads
    # (granite.py:221 sharded_weight_loader(0)): by hand 8 x 20 / tp x 2 B = 320 B at TP 1, 160
    # at TP 2, 64 at TP 5 (4 heads a rank). Before sizefix58 the checkpoint path held them whole
    # on every rank (320 B) and the architecture path none. vLLM measured 320 B at TP 1 and
    # 160 B on each rank at TP 2 (weight-bytes.json granite-swash-2b, granite-swash-2b-tp2).
    config = json.loads((ORACLE / "granite-swash-2b" / "config.json").read_text())
    folder = make_folder(tmp_path / "granite-swash", {**config, "torch_dtype": "bfloat16"},
                         _granite_swa_tensors(config))
    ckpt = load_spec(str(folder))
    assert ckpt.checkpoint is not None and ckpt.attention_sinks
    no_sinks = replace(ckpt, checkpoint=replace(ckpt.checkpoint, tensors=tuple(
        t for t in ckpt.checkpoint.tensors if not t.name.endswith(".sinks"))))
    for tp, sink_bytes in ((1, 320), (2, 160), (5, 64)):
        assert (weights_breakdown(ckpt, tp=tp).attention
                - weights_breakdown(no_sinks, tp=tp).attention) == sink_bytes
    assert MEASURED["granite-swash-2b"]["sinks"] == 320
    assert [r["sinks"] for r in MEASURED["granite-swash-2b-tp2"]["ranks"]] == [160, 160]


# --- vLLM 0.32's own bytes on the oracle shrinks ------------------------------------------------

# The shrinks measured with their buffers at TP 1 (cos/sin tables, transformers' inv_freq, the
# attention scales); the multimodal and DeepSeek-V4 cases hold more buffers (towers, V4's
# compressor tables) and are not compared here.
BUFFER_CASES = sorted(case for case, row in MEASURED.items() if "buffers" in row
                      and "ranks" not in row and not case.startswith(("deepseek-v4", "blind26"))
                      and case not in ("qwen2.5-vl-7b", "olmocr-7b-0225-preview"))
# Buffers vLLM holds that kvplan does not count: Gemma-2's `normalizer`, a bf16 scalar
# (gemma2.py Gemma2Model register_buffer, 2 B).
BUFFER_GAPS = {"gemma-2-27b-it": -2}


@pytest.mark.parametrize("case", BUFFER_CASES)
def test_params_and_buffers_equal_vllm(case: str) -> None:
    row = MEASURED[case]
    spec = load_spec(str(ORACLE / row.get("config", case)))
    served, inputs = _served(spec, platform="cpu")
    w = stage_weights(served, inputs, range(spec.num_hidden_layers), pp_first=True,
                      pp_last=True)
    assert w.total - w.rope_cache - w.attention_scales == row["params"]
    assert w.rope_cache + w.attention_scales - row["buffers"] == BUFFER_GAPS.get(case, 0)


def test_granite_swa_tp2_ranks_equal_vllm() -> None:
    # granite-swash-2b at --tensor-parallel-size 2: each rank's params (its 10 heads' sinks
    # among them) and buffers (the rotary table and the attention scales, whole) as vLLM's.
    spec = load_spec(str(ORACLE / "granite-swash-2b"))
    served, inputs = _served(spec, platform="cpu", tp=2)
    w = stage_weights(served, inputs, range(spec.num_hidden_layers), pp_first=True,
                      pp_last=True)
    for rank in MEASURED["granite-swash-2b-tp2"]["ranks"]:
        assert w.total - w.rope_cache - w.attention_scales == rank["params"]
        assert w.rope_cache + w.attention_scales == rank["buffers"]


def test_buffer_cases_cover_the_rules() -> None:
    # The Transformers backend (Phi, GPT-NeoX, Starcoder2, OLMo-2, OLMo-3, Seed-OSS), Granite's
    # sinks (both SWA classes), native tables, a hybrid's attention-only scales.
    assert {"phi-2", "pythia-410m", "starcoder2-15b", "olmo-2-0325-32b", "olmo3-7b-sweep57",
            "seed-oss-36b", "granite-swash-2b", "granite-swash-3b-a600m", "codellama-70b",
            "nemotron-h-8b-base-8k"} <= set(BUFFER_CASES)
