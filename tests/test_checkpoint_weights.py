"""Weights per GPU from a local checkpoint's safetensors headers (kvplan.weights.checkpoint.
checkpoint_breakdown), through `load_model(folder)` and `kvplan estimate FOLDER`.

Every checkpoint here is written into tmp_path: real safetensors headers, zero-filled data. The
expected numbers are derived by hand in the comments, from the shapes written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kvplan._util.errors import SpecError
from kvplan.capacity.weights import weights_breakdown
from kvplan.cli import app
from kvplan.model.quant_config import parse_quantization_config
from kvplan.sources.checkpoint import from_headers
from kvplan.sources.resolve import load_model, load_spec
from kvplan.weights.checkpoint import checkpoint_breakdown
from tests.test_weights import _write_safetensors


def write_safetensors(path: Path, tensors: dict[str, tuple[str, list[int]]]) -> None:
    _write_safetensors(path, tensors)  # the weights tests' writer: header + zero-filled data


# A two-layer Llama: hidden 64, 4 query heads and 2 KV heads of 16, MLP 128, vocabulary 100.
LLAMA_CONFIG = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 64,
    "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
    "intermediate_size": 128, "vocab_size": 100, "torch_dtype": "bfloat16",
    "max_position_embeddings": 4096, "tie_word_embeddings": False,
}
# vLLM's rotary cos/sin table, computed at start-up (not in the checkpoint) and held on every
# rank and stage with attention: max_position_embeddings 4,096 x head_dim 16 x 2 bytes (bf16).
ROPE = 4096 * 16 * 2


def llama_tensors(dtype: str = "BF16") -> dict[str, tuple[str, list[int]]]:
    out: dict[str, tuple[str, list[int]]] = {"model.embed_tokens.weight": (dtype, [100, 64])}
    for i in range(2):
        p = f"model.layers.{i}"
        out |= {
            f"{p}.self_attn.q_proj.weight": (dtype, [64, 64]),
            f"{p}.self_attn.k_proj.weight": (dtype, [32, 64]),
            f"{p}.self_attn.v_proj.weight": (dtype, [32, 64]),
            f"{p}.self_attn.o_proj.weight": (dtype, [64, 64]),
            f"{p}.mlp.gate_proj.weight": (dtype, [128, 64]),
            f"{p}.mlp.up_proj.weight": (dtype, [128, 64]),
            f"{p}.mlp.down_proj.weight": (dtype, [64, 128]),
            f"{p}.input_layernorm.weight": (dtype, [64]),
            f"{p}.post_attention_layernorm.weight": (dtype, [64]),
        }
    out |= {"model.norm.weight": (dtype, [64]), "lm_head.weight": (dtype, [100, 64])}
    return out


def make_folder(root: Path, config: dict[str, Any],
                tensors: dict[str, tuple[str, list[int]]], *, shards: int = 1) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "config.json").write_text(json.dumps(config))
    if shards == 1:
        write_safetensors(root / "model.safetensors", tensors)
        return root
    names = list(tensors)
    weight_map = {}
    for k in range(shards):
        file = f"model-{k + 1:05d}-of-{shards:05d}.safetensors"
        part = {n: tensors[n] for n in names[k::shards]}
        write_safetensors(root / file, part)
        weight_map |= dict.fromkeys(part, file)
    (root / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
    return root


@pytest.fixture
def llama(tmp_path: Path) -> Path:
    return make_folder(tmp_path / "tiny-llama", LLAMA_CONFIG, llama_tensors(), shards=2)


def test_folder_carries_its_checkpoint(llama: Path) -> None:
    spec, _ = load_model(str(llama))
    assert spec.checkpoint is not None
    assert len(spec.checkpoint.tensors) == 21
    assert len(spec.checkpoint.files) == 2


def test_tp1(llama: Path) -> None:
    spec, _ = load_model(str(llama))
    b = weights_breakdown(spec, tp=1)
    assert b.source == "checkpoint"
    # Embeddings and lm_head: the vocabulary padded to 128 rows x 64 x 2 bytes (not 100 rows).
    assert b.embeddings == b.lm_head == 128 * 64 * 2 == 16384
    # Attention per layer: q 64x64 + k 32x64 + v 32x64 + o 64x64 = 12,288 elements x 2 bytes.
    assert b.attention == 2 * 12288 * 2
    # MLP per layer: gate, up 128x64 and down 64x128 = 24,576 elements x 2 bytes.
    assert b.dense_mlp == 2 * 24576 * 2
    # Norms: two per layer and the final one, 64 elements each.
    assert b.norms == 5 * 64 * 2
    assert b.rope_cache == ROPE
    assert b.total == 16384 * 2 + 49152 + 98304 + 640 + ROPE
    assert b.quantization_scales == b.vision == b.mtp == b.engine_added == 0


def test_tp2_splits_rows_and_columns(llama: Path) -> None:
    spec, _ = load_model(str(llama))
    b = weights_breakdown(spec, tp=2)
    assert b.embeddings == b.lm_head == 64 * 64 * 2  # 128 padded rows / 2
    # q 32x64, k 16x64 (one KV head), v 16x64, o 64x32 per rank.
    assert b.attention == 2 * (32 * 64 + 16 * 64 + 16 * 64 + 64 * 32) * 2
    # gate, up 64x64 (dim 0 halved), down 64x64 (dim 1 halved).
    assert b.dense_mlp == 2 * 3 * 64 * 64 * 2
    assert b.norms == 5 * 64 * 2  # replicated


def test_tp4_replicates_kv_heads(llama: Path) -> None:
    spec, _ = load_model(str(llama))
    b = weights_breakdown(spec, tp=4)
    # 2 KV heads over 4 ranks: each rank holds one whole KV head (16 rows), not 8 rows;
    # q 16 rows, o 16 columns.
    assert b.attention == 2 * (16 * 64 + 16 * 64 + 16 * 64 + 64 * 16) * 2
    assert b.embeddings == 32 * 64 * 2


def test_pp2_stages(llama: Path) -> None:
    spec, _ = load_model(str(llama))
    first = weights_breakdown(spec, tp=1, layers=range(0, 1), first=True, last=False)
    last = weights_breakdown(spec, tp=1, layers=range(1, 2), first=False, last=True)
    # Stage 0: embeddings and layer 0; stage 1: layer 1, the final norm and lm_head.
    assert (first.embeddings, first.lm_head) == (16384, 0)
    assert (last.embeddings, last.lm_head) == (0, 16384)
    assert first.attention == last.attention == 12288 * 2
    assert first.norms == 2 * 64 * 2 and last.norms == 3 * 64 * 2
    whole = weights_breakdown(spec, tp=1)
    assert first.total + last.total == whole.total + ROPE  # each stage holds the table


def test_pp2_tp2(llama: Path) -> None:
    spec, _ = load_model(str(llama))
    last = weights_breakdown(spec, tp=2, layers=range(1, 2), first=False, last=True)
    # One layer at TP=2 (6,144 + 12,288 elements), lm_head 64 rows, 3 norms.
    assert last.total == (6144 + 12288) * 2 + 64 * 64 * 2 + 3 * 64 * 2 + ROPE


def test_tied_lm_head_on_a_later_stage(tmp_path: Path) -> None:
    tensors = llama_tensors()
    del tensors["lm_head.weight"]
    folder = make_folder(tmp_path / "tied", LLAMA_CONFIG | {"tie_word_embeddings": True},
                         tensors)
    spec, _ = load_model(str(folder))
    last = weights_breakdown(spec, tp=1, layers=range(1, 2), first=False, last=True)
    assert last.lm_head == 128 * 64 * 2  # the last stage keeps its own embedding copy
    assert weights_breakdown(spec, tp=1).lm_head == 0


def test_float32_checkpoint_held_in_bf16(tmp_path: Path) -> None:
    folder = make_folder(tmp_path / "f32", LLAMA_CONFIG | {"torch_dtype": "float32"},
                         llama_tensors("F32"))
    spec, _ = load_model(str(folder))
    b = weights_breakdown(spec, tp=1)
    assert spec.checkpoint is not None
    # stored fp32 (unpadded vocab) is twice the bf16 held, less the start-up rotary table
    assert spec.checkpoint.total_bytes == 2 * (b.total - ROPE - 2 * (128 - 100) * 64 * 2)
    assert b.dtype == "bf16"
    assert any("bf16" in n for n in b.notes)
    assert weights_breakdown(spec, tp=1, dtype="fp32").total == 2 * b.total


def test_fp8_block_scales_split_with_their_weight(tmp_path: Path) -> None:
    config = LLAMA_CONFIG | {"quantization_config": {
        "quant_method": "fp8", "weight_block_size": [16, 16], "activation_scheme": "dynamic"}}
    tensors = llama_tensors()
    for name, (_, shape) in list(tensors.items()):
        if name.endswith("_proj.weight"):
            tensors[name] = ("F8_E4M3", shape)
            tensors[name + "_scale_inv"] = ("F32", [shape[0] // 16, shape[1] // 16])
    spec, _ = load_model(str(make_folder(tmp_path / "fp8", config, tensors)))
    one = weights_breakdown(spec, tp=1)
    two = weights_breakdown(spec, tp=2)
    # Scales per layer at TP=1: q 4x4, k 2x4, v 2x4, o 4x4, gate 8x4, up 8x4, down 4x8 tiles.
    assert one.quantization_scales == 2 * (16 + 8 + 8 + 16 + 32 + 32 + 32) * 4
    # TP=2: column layers halve their tile rows, row layers (o, down) their tile columns.
    assert two.quantization_scales == 2 * (8 + 4 + 4 + 8 + 16 + 16 + 16) * 4
    assert one.attention == 2 * 12288  # one byte per fp8 element
    assert two.attention == 2 * 6144
    assert one.method.startswith("fp8")


def test_gptq_packed_layout_splits_the_other_axis(tmp_path: Path) -> None:
    config = LLAMA_CONFIG | {"quantization_config": {
        "quant_method": "gptq", "bits": 4, "group_size": 32, "desc_act": True, "sym": True}}
    tensors = {k: v for k, v in llama_tensors().items() if "layers.1" not in k}
    config["num_hidden_layers"] = 1
    for proj, (out, inp) in {"self_attn.q_proj": (64, 64), "self_attn.o_proj": (64, 64)}.items():
        p = f"model.layers.0.{proj}"
        del tensors[f"{p}.weight"]
        tensors |= {f"{p}.qweight": ("I32", [inp // 8, out]),  # (in/8, out)
                    f"{p}.qzeros": ("I32", [inp // 32, out // 8]),
                    f"{p}.scales": ("F16", [inp // 32, out]),
                    f"{p}.g_idx": ("I32", [inp])}
    spec, _ = load_model(str(make_folder(tmp_path / "gptq", config, tensors)))
    one = weights_breakdown(spec, tp=1, dtype="bf16")
    two = weights_breakdown(spec, tp=2, dtype="bf16")
    # qweight 8x64 int32 = 2,048 bytes each; halved at TP=2 (q along dim 1, o along dim 0);
    # k, v stay bf16 (32x64x2 each, halved).
    assert one.attention == 2 * 2048 + 2 * 4096
    assert two.attention == 2 * 1024 + 2 * 2048
    # Per projection: qzeros 2x8 int32 (64 B), scales 2x64 fp16 (256 B), g_idx 64 int32 (256 B).
    assert one.quantization_scales == 2 * (64 + 256 + 256)
    # TP=2: q (column) halves qzeros/scales along dim 1, keeps g_idx whole; o (row) halves
    # qzeros and scales along dim 0 (1 group of 2) and g_idx.
    assert two.quantization_scales == (32 + 128 + 256) + (32 + 128 + 128)


MOE_CONFIG = {
    "architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": 64,
    "num_hidden_layers": 1, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
    "intermediate_size": 128, "moe_intermediate_size": 32, "num_experts": 3,
    "num_experts_per_tok": 2, "decoder_sparse_step": 1, "mlp_only_layers": [],
    "vocab_size": 128, "torch_dtype": "bfloat16", "max_position_embeddings": 4096,
}


def moe_tensors() -> dict[str, tuple[str, list[int]]]:
    out = {k: v for k, v in llama_tensors().items()
           if "layers.1" not in k and ".mlp." not in k}
    out["model.embed_tokens.weight"] = ("BF16", [128, 64])
    out["lm_head.weight"] = ("BF16", [128, 64])
    p = "model.layers.0.mlp"
    out[f"{p}.gate.weight"] = ("BF16", [3, 64])
    for e in range(3):
        out |= {f"{p}.experts.{e}.gate_proj.weight": ("BF16", [32, 64]),
                f"{p}.experts.{e}.up_proj.weight": ("BF16", [32, 64]),
                f"{p}.experts.{e}.down_proj.weight": ("BF16", [64, 32])}
    return out


def test_experts_tp_ep_and_dp_attention(tmp_path: Path) -> None:
    spec, _ = load_model(str(make_folder(tmp_path / "moe", MOE_CONFIG, moe_tensors())))
    assert spec.checkpoint is not None
    expert = 3 * 32 * 64 * 2  # gate, up, down of one expert: 12,288 bytes
    router = 3 * 64 * 2
    assert weights_breakdown(spec, tp=1).experts == 3 * expert + router
    # TP=2: every expert halved along its intermediate size; the router replicated.
    assert weights_breakdown(spec, tp=2).experts == 3 * expert // 2 + router
    # EP=2: whole experts, ceil(3 / 2) = 2 on the first rank.
    ep = weights_breakdown(spec, tp=2, ep=2)
    assert ep.experts == 2 * expert + router
    assert ep.attention == weights_breakdown(spec, tp=2).attention  # still TP-split
    # DP attention: attention, embeddings, lm_head whole on every rank; experts still split.
    dp = weights_breakdown(spec, tp=2, dp_attention=True)
    assert dp.attention == weights_breakdown(spec, tp=1).attention
    assert dp.embeddings == 128 * 64 * 2
    assert dp.experts == 3 * expert // 2 + router


def test_vision_and_mtp_only_when_loaded(tmp_path: Path) -> None:
    tensors = llama_tensors() | {
        "visual.blocks.0.attn.qkv.weight": ("BF16", [48, 16]),
        "visual.blocks.0.attn.proj.weight": ("BF16", [16, 16]),
        "model.layers.2.eh_proj.weight": ("BF16", [64, 128]),  # layer 2 >= 2 layers: MTP
        "model.layers.2.self_attn.q_proj.weight": ("BF16", [64, 64]),
    }
    spec, _ = load_model(str(make_folder(tmp_path / "mm", LLAMA_CONFIG, tensors)))
    base = weights_breakdown(spec, tp=1, vision=False)
    with_vision = weights_breakdown(spec, tp=1)
    assert base.vision == 0 and with_vision.vision == (48 * 16 + 16 * 16) * 2
    assert any("limit-mm-per-prompt" in n for n in with_vision.notes)
    # TP=2: qkv halved along dim 0, proj along dim 1.
    assert weights_breakdown(spec, tp=2).vision == (24 * 16 + 16 * 8) * 2
    assert with_vision.mtp == 0
    mtp = weights_breakdown(spec, tp=1, mtp=True)
    assert mtp.mtp == (64 * 128 + 64 * 64) * 2  # eh_proj replicated, q_proj
    assert weights_breakdown(spec, tp=1, mtp=True, last=False,
                             layers=range(0, 1)).mtp == 0  # MTP sits on the last stage


def test_mxfp4_marlin_padding_added() -> None:
    spec = load_spec("gpt-oss-20b")
    quant = parse_quantization_config({"quant_method": "mxfp4"}, "c.json")
    empty = from_headers("x", {}, None, num_hidden_layers=spec.num_hidden_layers)
    b = checkpoint_breakdown(empty, spec, quant, dtype="bf16", layers=range(0, 1))
    # H = I = 2880; Marlin pads I to 2,944 (x128) and H to 3,072 (x256). Per expert:
    # padded   w13 5888x3072/2 + 5888x96 scales, w2 3072x2944/2 + 3072x92, bias 2x(5888+3072)
    #          = 9,043,968 + 565,248 + 4,521,984 + 282,624 + 17,920 = 14,431,744
    # stored   5760x2880/2 + 5760x90 + 2880x2880/2 + 2880x90 + 2x(5760+2880) = 13,236,480
    # 32 experts x 1,195,264 = 38,248,448 bytes for the one layer.
    assert b.experts == b.engine_added == 38_248_448
    assert any("marlin" in n for n in b.notes)


def test_mla_dequantized_copies_added() -> None:
    spec = load_spec("deepseek-v2-lite")
    quant = parse_quantization_config({"quant_method": "fp8", "weight_block_size": [128, 128]},
                                      "c.json")
    kv_b = "model.layers.0.self_attn.kv_b_proj.weight"
    entry = {"dtype": "F8_E4M3", "shape": [4096, 512], "data_offsets": [0, 4096 * 512]}
    ckpt = from_headers("x", {"a.safetensors": {kv_b: entry}}, None,
                        num_hidden_layers=spec.num_hidden_layers)
    b = checkpoint_breakdown(ckpt, spec, quant, dtype="bf16", layers=range(0, 1))
    # kv_b_proj: 16 heads x (128 + 128) = 4,096 rows x 512, fp8 stored (2,097,152 bytes), plus
    # W_UK/W_UV in bf16: 4,096 x 512 x 2 = 4,194,304 bytes.
    assert b.engine_added == 4_194_304
    assert b.attention == 2_097_152 + 4_194_304
    tp2 = checkpoint_breakdown(ckpt, spec, quant, dtype="bf16", tp=2, layers=range(0, 1))
    assert tp2.attention == (2_097_152 + 4_194_304) // 2


def test_estimate_json_uses_the_checkpoint(llama: Path) -> None:
    result = CliRunner().invoke(app, ["estimate", str(llama), "--gpu", "H100-80GB",
                                      "--context", "4096", "--format", "json"])
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    payload = data.get("result", data)
    # vLLM (estimate's default engine) also holds each attention layer's four float32 scale
    # buffers (attention.py:133-139): 2 layers x 16 B.
    assert payload["weights_bytes"] == 16384 * 2 + 49152 + 98304 + 640 + ROPE + 2 * 16
    assert payload["weights_breakdown"]["total"] == payload["weights_bytes"]


def test_bad_shard_is_one_line(tmp_path: Path) -> None:
    folder = make_folder(tmp_path / "bad", LLAMA_CONFIG, llama_tensors())
    (folder / "model.safetensors").write_bytes(b"\x05\x00\x00\x00\x00\x00\x00\x00{oops")
    with pytest.raises(SpecError, match="model.safetensors"):
        load_model(str(folder))


# --- a checkpoint is checked against its config.json (issue 32) ------------------------------

# Meta-Llama-3-70B's config.json (https://huggingface.co/meta-llama/Meta-Llama-3-70B/blob/main/
# config.json; the fields kvplan reads), whose checkpoint is model-00001..00030-of-00030.
LLAMA3_70B_CONFIG = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 8192,
    "num_hidden_layers": 80, "num_attention_heads": 64, "num_key_value_heads": 8,
    "intermediate_size": 28672, "vocab_size": 128256, "torch_dtype": "bfloat16",
    "max_position_embeddings": 8192, "rope_theta": 500000.0, "rms_norm_eps": 1e-05,
    "tie_word_embeddings": False,
}


def _sparse_safetensors(path: Path, tensors: dict[str, tuple[str, list[int]]]) -> None:
    """A real-sized safetensors file without writing its data: header, then a hole (a 70B
    model's first shard is 4.6 GB on paper and a few kB on disk)."""
    header, offset = {}, 0
    for name, (dtype, shape) in tensors.items():
        size = 2
        for d in shape:
            size *= d
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    raw = json.dumps(header).encode()
    with path.open("wb") as f:
        f.write(len(raw).to_bytes(8, "little") + raw)
        f.truncate(8 + len(raw) + offset)


def _interrupted_llama3_70b(root: Path) -> Path:
    """What an interrupted download leaves: config.json and the first of 30 shards (the
    embeddings and layers 0-1 here), no index."""
    root.mkdir()
    (root / "config.json").write_text(json.dumps(LLAMA3_70B_CONFIG))
    t: dict[str, tuple[str, list[int]]] = {"model.embed_tokens.weight": ("BF16", [128256, 8192])}
    for i in range(2):
        p = f"model.layers.{i}"
        t |= {f"{p}.self_attn.q_proj.weight": ("BF16", [8192, 8192]),
              f"{p}.self_attn.k_proj.weight": ("BF16", [1024, 8192]),
              f"{p}.self_attn.v_proj.weight": ("BF16", [1024, 8192]),
              f"{p}.self_attn.o_proj.weight": ("BF16", [8192, 8192]),
              f"{p}.mlp.gate_proj.weight": ("BF16", [28672, 8192]),
              f"{p}.mlp.up_proj.weight": ("BF16", [28672, 8192]),
              f"{p}.mlp.down_proj.weight": ("BF16", [8192, 28672]),
              f"{p}.input_layernorm.weight": ("BF16", [8192]),
              f"{p}.post_attention_layernorm.weight": ("BF16", [8192])}
    _sparse_safetensors(root / "model-00001-of-00030.safetensors", t)
    return root


def _one_error_line(result) -> str:
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("kvplan: error: "), result.stderr
    return lines[0]


def test_first_shard_of_thirty_without_index_is_refused(tmp_path: Path) -> None:
    """The issue's case: plan said FITS on one H100 with 0.44 GiB of weights; the 29 missing
    shards are named instead."""
    folder = _interrupted_llama3_70b(tmp_path / "llama3-70b")
    line = _one_error_line(CliRunner().invoke(
        app, ["plan", str(folder), "-n", "50", "--context", "8k", "--gpu", "H100"]))
    assert "29 of the 30 shards model-*-of-00030 are missing" in line
    assert "model-00002-of-00030.safetensors" in line and "--weights-from config" in line


def test_weights_from_config_falls_back_to_the_architecture(tmp_path: Path) -> None:
    folder = _interrupted_llama3_70b(tmp_path / "llama3-70b")
    result = CliRunner().invoke(app, ["estimate", str(folder), "--gpu", "H100", "--context",
                                      "8k", "-f", "json", "--weights-from", "config"])
    assert result.exit_code == 0, result.stderr
    assert "weights from config.json's architecture (--weights-from config)" in result.stderr
    payload = json.loads(result.stdout)
    payload = payload.get("result", payload)
    assert payload["weights_source"] == "architecture"
    # The architecture: 70.55 B parameters in bf16 (count_params), far beyond one H100.
    assert payload["weights_bytes"] > 130 * 2**30
    plan = CliRunner().invoke(app, ["plan", str(folder), "-n", "50", "--context", "8k",
                                    "--gpu", "H100", "--weights-from=config"])
    assert plan.exit_code in (0, 3), plan.stderr


def test_a_shard_named_by_the_index_missing_is_refused(tmp_path: Path) -> None:
    folder = make_folder(tmp_path / "sharded", LLAMA_CONFIG, llama_tensors(), shards=2)
    (folder / "model-00002-of-00002.safetensors").unlink()
    with pytest.raises(SpecError, match=r"1 of the 2 shards named by model.safetensors.index."
                                        r"json are missing \(model-00002-of-00002.safetensors\)"):
        load_model(str(folder))


def test_a_safetensors_file_with_no_tensor_is_refused(tmp_path: Path) -> None:
    folder = make_folder(tmp_path / "empty", LLAMA_CONFIG, {})
    line = _one_error_line(CliRunner().invoke(app, ["estimate", str(folder), "--gpu", "H100"]))
    assert "the checkpoint holds no tensor" in line


def test_a_layer_without_tensors_is_refused(tmp_path: Path) -> None:
    tensors = {k: v for k, v in llama_tensors().items() if not k.startswith("model.layers.1.")}
    folder = make_folder(tmp_path / "no-layer-1", LLAMA_CONFIG, tensors)
    with pytest.raises(SpecError, match=r"no tensor of layer\(s\) 1 of the 2 that config.json"):
        load_model(str(folder))


def test_a_float_checkpoint_far_below_the_parameter_count_is_refused(tmp_path: Path) -> None:
    # The two-layer llama's parameters (count_params): embeddings 100 x 64 = 6,400, lm_head
    # 6,400, final norm 64, per layer q 4,096 + k 2,048 + v 2,048 + o 4,096 + gate/up/down
    # 3 x 8,192 + two norms 128 = 36,992: 86,848 in all, which the whole checkpoint stores.
    # Without the MLP tensors (2 x 24,576) it holds 37,696 = 43.4 % of them.
    tensors = {k: v for k, v in llama_tensors().items() if ".mlp." not in k}
    folder = make_folder(tmp_path / "no-mlp", LLAMA_CONFIG, tensors)
    spec, _ = load_model(str(folder))  # every layer has tensors: the layer rule passes
    with pytest.raises(SpecError, match=r"holds 37,696 parameters, 43.4% of the 86,848"):
        weights_breakdown(spec, tp=1)
    whole, _ = load_model(str(make_folder(tmp_path / "whole", LLAMA_CONFIG, llama_tensors())))
    assert weights_breakdown(whole, tp=1).source == "checkpoint"
