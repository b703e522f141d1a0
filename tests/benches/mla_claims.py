"""Check a popular MLA write-up's numbers against kvplan, for the real DeepSeek-V2 config.

Run:  python -m tests.benches.mla_claims > examples/mla-claims.md

Every "kvplan" figure below is computed here by kvplan's core from model_specs/deepseek-v2.yaml
(or the named spec); the claims are quoted from the article in shared/reference/ (Chinese).
"""

from __future__ import annotations

import json

from typer.testing import CliRunner

from kvplan import DEFAULT_BLOCK_SIZE, load_spec, rank_caches
from kvplan._util.units import GiB
from kvplan.analysis.compare import compare_schemes
from kvplan.cli.app import app
from kvplan.hardware.gpus import get_gpu
from kvplan.perf.flops import MLAForm, attention_flops


def estimate(*args: str) -> dict:
    """`kvplan estimate ... --format json`, run through the CLI itself (the same defaults as a
    user gets: the A100's max_num_batched_tokens of 2048, the engine's reserve, ...)."""
    result = CliRunner().invoke(app, ["estimate", *args, "--format", "json"])
    if result.exit_code != 0:
        raise SystemExit(f"kvplan estimate {' '.join(args)} failed: {result.output}")
    return json.loads(result.stdout)


def m(n: float) -> str:
    return f"{n / 1e6:,.2f}M"


def main() -> None:
    v2 = load_spec("deepseek-v2")
    att = v2.attention
    h, n_h = v2.hidden_size, att.num_attention_heads
    d_c, d_r = att.kv_lora_rank, att.qk_rope_head_dim
    d_n, d_v, layers = att.qk_nope_head_dim, att.v_head_dim, v2.num_hidden_layers

    absorbed = attention_flops(v2, context=1024, mla_form=MLAForm.absorbed)
    naive = attention_flops(v2, context=1024, mla_form=MLAForm.naive)
    up_k_one = 2 * d_c * n_h * d_n
    up_kv_one = 2 * d_c * n_h * (d_n + d_v)
    mha_qkv = 2 * 3 * h * n_h * d_n  # FLOPs of MHA's Q, K, V projections at the same dims
    mla_proj = absorbed.q_proj + absorbed.kv_proj + absorbed.absorb
    rows = {r.scheme: r for r in compare_schemes(v2, context=4096).rows}
    mha, gqa, mqa, mla = rows["MHA"], rows["GQA-8"], rows["MQA"], rows["MLA (absorbed)"]
    h100 = get_gpu("H100-80GB")
    lat = {r.scheme: r for r in compare_schemes(v2, context=4096, tp=8, gpu=h100).rows}
    lat32k = {r.scheme: r for r in compare_schemes(v2, context=32768, tp=8, gpu=h100).rows}

    l70 = load_spec("llama-3-70b")
    l70_4k = rank_caches(l70).sequence_bytes(4096, DEFAULT_BLOCK_SIZE)
    article_70b = 2 * 40 * 128 * 80 * 4096 * 2
    base = ["llama-3-70b", "--gpu", "A100-80GB", "--context", "4096"]
    l70_tp1 = estimate(*base)
    l70_tp2 = estimate(*base, "--tp", "2")
    l70_tp4 = estimate(*base, "--tp", "4")
    # vLLM 0.27.1: the last release with bitsandbytes (kvplan.engines.vllm.quant_methods).
    l70_4bit = estimate(*base, "--quantization", "bitsandbytes", "--engine-version", "0.27.1")

    speedup = lat["MHA"].tpot_ms / lat["MLA (absorbed)"].tpot_ms
    cache_ratio = mha.bytes_per_token / mla.bytes_per_token
    # The verdicts below rest on these computed facts; stop rather than print a wrong verdict.
    assert mla_proj < mha_qkv
    assert l70_4k < article_70b
    if l70_tp1["max_requests"] == 0:
        seventy_b = (
            "Wrong: the claim is about one A100, where bf16 Llama-3-70B does not fit at all "
            f"({l70_tp1['weights_bytes'] / GiB:.0f} GiB of weights: 0 requests, not \"fewer "
            "than 8\"); quantised to 4 bits (the only way it fits one A100) it serves "
            f"{l70_4bit['max_requests']} requests of 4,096 tokens"
            + (", more than 8" if l70_4bit["max_requests"] >= 8 else "")
            + f". A request needs {l70_4k / GiB:.2f} GiB, not 10 GB.")
    else:
        seventy_b = (f"{'Right' if l70_tp1['max_requests'] < 8 else 'Wrong'}: one A100 serves "
                     f"{l70_tp1['max_requests']} requests.")

    claims = [
        (
            "Up-projection costs 2·d_c·n_heads·head_dim = 2·512·128·128 ≈ 16.8M FLOPs "
            "(per layer per token)",
            f"K up-projection {m(up_k_one)}; K and V together {m(up_kv_one)} per cached token. "
            f"Naive decode at L = 1,024 up-projects every cached latent: "
            f"{naive.kv_up_proj / 1e9:,.1f} GFLOP per layer per step; the absorbed form pays "
            f"{m(absorbed.absorb)} per token instead.",
            "Right for K alone under 2 FLOPs per multiply-add, but V needs the same again, and "
            "without absorption the cost is per cached token per step, not per token.",
        ),
        (
            "Down-projection d_model·d_c = 5120·512 ≈ 2.6M FLOPs",
            f"2·{h}·({d_c} + {d_r}) = {m(absorbed.kv_proj)} FLOPs (latent plus the shared RoPE "
            f"key); the latent alone is {m(2 * h * d_c)}.",
            "Right under a different convention: 2.6M counts multiply-adds (1 per MAC), and it "
            "leaves out the 64-wide RoPE key projected alongside the latent.",
        ),
        (
            "MHA's QKV projections 3·d_model·n_heads·head_dim ≈ 251M FLOPs; MLA adds "
            "~19.4M ≈ +7.7%",
            f"MHA QKV at DeepSeek-V2's dims: {m(mha_qkv)} FLOPs ({m(mha_qkv / 2)} MACs). MLA's "
            f"own Q (through q_lora_rank {att.q_lora_rank}) + KV down + absorption: "
            f"{m(mla_proj)} FLOPs, {mla_proj / mha_qkv:.0%} of MHA's.",
            "Wrong: it adds a FLOP count (16.8M) to a MAC count (2.6M) and divides by a MAC "
            "count (251M), and treats MLA as MHA plus extras, whereas MLA replaces the per-head "
            "K/V projections, so its projections cost less than MHA's, not 7.7% more.",
        ),
        (
            "Cache per layer per token: MHA 2×128×16 = 4096, GQA(8) 2048, MQA 256, MLA 576 "
            "(\"DeepSeek-V2 configuration\", 80 layers)",
            f"DeepSeek-V2 has {n_h} heads and {layers} layers: MHA "
            f"{mha.elements_per_token_per_layer:,}, GQA-8 {gqa.elements_per_token_per_layer:,}, "
            f"MQA {mqa.elements_per_token_per_layer:,}, MLA {mla.elements_per_token_per_layer:,}"
            f" elements (= GQA with 2.25 groups).",
            f"Wrong: 16 heads and 80 layers are not DeepSeek-V2's ({n_h} and {layers}); GQA and "
            "MQA rows happen to be right because they do not depend on the head count. Note "
            f"MLA's cache is {mla.bytes_per_token / gqa.bytes_per_token:.2f}x GQA-8's.",
        ),
        (
            "MLA compresses the cache 7.1x vs MHA (and \"to about 1/10 of MHA\")",
            f"MHA {mha.bytes_per_token:,} B/token vs MLA {mla.bytes_per_token:,} B/token at bf16: "
            f"{mha.bytes_per_token / mla.bytes_per_token:.1f}x ({mla.ratio_vs_mha:.2%} of MHA).",
            "Wrong: a consequence of the 16-head MHA row. (The paper's \"93.3%\" compares with "
            "DeepSeek 67B and includes KV quantisation; at equal precision it is 82.2%.)",
        ),
        (
            "Decode latency, single request: MHA 42, GQA 38, MLA 31 ms/token",
            f"Predicted TPOT on 8x {h100.name} (TP 8), batch 1 (kvplan.perf.costmodel): at 4,096 "
            f"tokens MHA {lat['MHA'].tpot_ms:.2f}, GQA-8 {lat['GQA-8'].tpot_ms:.2f}, "
            f"MLA {lat['MLA (absorbed)'].tpot_ms:.2f} ms; at 32,768 tokens "
            f"{lat32k['MHA'].tpot_ms:.2f} / {lat32k['GQA-8'].tpot_ms:.2f} / "
            f"{lat32k['MLA (absorbed)'].tpot_ms:.2f} ms (roofline at 100 % of the datasheet, "
            f"4,096 tokens: {lat['MHA'].roofline_ms_per_step:.2f} / "
            f"{lat['GQA-8'].roofline_ms_per_step:.2f} / "
            f"{lat['MLA (absorbed)'].roofline_ms_per_step:.2f} ms).",
            "Unsupported: no GPU, parallel layout, batch or context is given, so the figures "
            "cannot be reproduced. At batch 1 and 4,096 tokens each GPU reads "
            f"{lat['MLA (absorbed)'].weight_read_bytes_per_step / GiB:.2f} GiB of weights per "
            f"step against {lat['MLA (absorbed)'].kv_read_bytes_per_token / GiB:.2f} GiB (MLA) "
            f"to {lat['MHA'].kv_read_bytes_per_token / GiB:.2f} GiB (MHA) of KV, so predicted "
            f"latency differs {speedup:.1f}x while the cache differs {cache_ratio:.0f}x.",
        ),
        (
            "A 70B model (d_model 5120, 40 heads × 128, 80 layers) needs 2·40·128·80·4096·2 = "
            "10,737,418,240 B ≈ 10 GB of KV per 4K request",
            f"That product is {article_70b:,} B ({article_70b / GiB:.2f} GiB). The real "
            f"Llama-3-70B (64 heads, 8 KV heads, 80 layers) needs {l70_4k:,} B "
            f"({l70_4k / GiB:.2f} GiB) per 4,096-token request.",
            "Wrong twice: the multiplication is off by 1.6x, and no 70B Llama uses 40-head MHA.",
        ),
        (
            "An 80 GB A100 serves fewer than 8 concurrent 4K requests of a 70B model",
            f"`kvplan estimate llama-3-70b --gpu A100-80GB`: bf16 weights "
            f"({l70_tp1['weights_bytes'] / GiB:.0f} GiB) do not fit one A100-80GB "
            f"({l70_tp1['max_requests']} requests); `--quantization bitsandbytes` (4-bit, "
            "`--engine-version 0.27.1`: vLLM 0.28 and later have no bitsandbytes): "
            f"{l70_4bit['max_requests']} requests; a TP-2 pair serves "
            f"{l70_tp2['max_requests']} and a TP-4 group {l70_tp4['max_requests']} requests of "
            f"4,096 tokens (vLLM accounting, utilisation {l70_tp1['mem_fraction']:g}, estimated "
            "reserve, "
            f"max_num_batched_tokens {l70_tp1['max_num_batched_tokens']:,}).",
            seventy_b,
        ),
        (
            "SGLang: launch with --enable-mla",
            "-",
            "Obsolete: the flag existed briefly in 2024; SGLang uses MLA for MLA models by "
            "default and no longer accepts it.",
        ),
    ]
    print("# The MLA write-up's numbers, checked with kvplan\n")
    print("Generated by `python -m tests.benches.mla_claims > examples/mla-claims.md` from "
          "kvplan's core and the real DeepSeek-V2 "
          "config.json (`model_specs/deepseek-v2.yaml`: 60 layers, 128 heads, hidden 5120, "
          "kv_lora_rank 512, qk_rope_head_dim 64, qk_nope_head_dim 128, v_head_dim 128, "
          "q_lora_rank 1536). FLOPs count 2 per multiply-add. Do not edit by hand.\n")
    print("| # | the article claims | kvplan computes | verdict |")
    print("|---|---|---|---|")
    for i, (claim, ours, verdict) in enumerate(claims, 1):
        print(f"| {i} | {claim} | {ours} | {verdict} |")


if __name__ == "__main__":
    main()
