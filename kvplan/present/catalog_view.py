"""The listings: bundled model specs (`kvplan specs`), GPU presets (`kvplan gpus`) and engine
profiles (`kvplan engines`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING

from kvplan.kv.cache import kv_layout, layer_caches
from kvplan.model.spec import ModelSpec
from kvplan.present.estimate_view import layer_mix
from kvplan.present.render import Column, View
from kvplan.present.text import BYTES_NOTE, commas, gib_text

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.hardware.gpus import GPU


def specs_view(specs: Sequence[ModelSpec], *, kv_dtype: str = "bf16") -> View:
    rows = []
    records = []
    for spec in specs:
        caches = layer_caches(spec, kv_dtype=kv_dtype)
        token_bytes = sum(c.bytes_per_token for lc in caches for c in lc.caches)
        state_bytes = sum(c.state_bytes for lc in caches for c in lc.caches)
        layout = kv_layout(spec, kv_dtype=kv_dtype)
        mix = layer_mix(spec)
        rows.append([
            spec.id, spec.name, spec.kind.value, str(spec.num_hidden_layers),
            spec.attention.short(), mix, commas(token_bytes),
        ])
        records.append({
            "id": spec.id,
            "name": spec.name,
            "attention_kind": spec.kind.value,
            "num_layers": spec.num_hidden_layers,
            "elements_per_token_per_layer": layout.elements_per_token_per_layer,
            "sliding_layers": sum(w is not None for w in spec.layer_windows),
            "sliding_window": spec.sliding_window,
            "kv_dtype": kv_dtype,
            "bytes_per_token": token_bytes,
            "state_bytes_per_request": state_bytes,
            "layer_mix": mix,
            "source": spec.source,
        })
    return View(
        title=f"Bundled model specs (KV bytes per token at {kv_dtype}, all layers)",
        columns=[Column(header="id", no_wrap=True), Column(header="name", optional=True),
                 Column(header="kind"), Column(header="layers", numeric=True),
                 Column(header="KV elements/token/layer", optional=True),
                 Column(header="layers by cache kind"),
                 Column(header="KV B/token", numeric=True)],
        rows=rows,
        records=records,
        notes=[BYTES_NOTE],
    )


def gpus_view(gpus: Sequence[GPU]) -> View:
    rows, records = [], []
    for g in gpus:
        rows.append([
            g.name, g.full_name, gib_text(g.memory_bytes),
            gib_text(g.reported_total_bytes) if g.reported_total_bytes else "(unknown)",
            f"{g.hbm_bytes_per_s / 1e12:,.2f} TB/s",
            f"{g.peak_bf16_flops_per_s / 1e12:,.0f}",
            f"{g.peak_fp8_flops_per_s / 1e12:,.0f}" if g.peak_fp8_flops_per_s else "-",
        ])
        records.append(asdict(g) | {"total_bytes": g.total_bytes})
    return View(
        title="GPU presets (--gpu)",
        columns=[Column(header="name", no_wrap=True), Column(header="product", optional=True),
                 Column(header="memory", numeric=True),
                 Column(header="reported total", numeric=True, optional=True),
                 Column(header="bandwidth", numeric=True),
                 Column(header="bf16 TFLOP/s", numeric=True),
                 Column(header="fp8 TFLOP/s", numeric=True)],
        rows=rows,
        records=records,
        notes=["Capacity planning uses the reported total (what torch.cuda.mem_get_info and "
               "vLLM's total_gpu_memory show) where a public log gives it, else the nominal "
               "memory. FLOP/s are dense peaks (no 2:4 sparsity); TB/s is 10^12 B/s.",
               BYTES_NOTE],
    )


def engines_view() -> View:
    """The engine profiles kvplan models and the rules that change between versions."""
    from kvplan.engines.budgets import (
        TRTLLM_DEFAULT_FRACTION,
        TRTLLM_MAX_NUM_TOKENS,
        TRTLLM_PROFILES,
    )
    from kvplan.engines.vllm.alloc import PLATFORMS, VLLM_PROFILES

    rows, records = [], []
    for p in VLLM_PROFILES:
        ratio = "smaller count" if p.group_size_ratio is None else (
            f"larger if < {p.group_size_ratio:g}x smaller")
        rows.append([f"vllm {p.version}", ratio,
                     "blocks//groups x bs" if p.reported_tokens == "blocks" else
                     "int(conc. x len)",
                     f"{p.in_flight_batches_async} batch" + ("es" if
                                                            p.in_flight_batches_async > 1 else ""),
                     "on" if p.chunked_local_hybrid else "off",
                     ("align" if p.hybrid_prefix_caching else
                      "none; align with prefix caching") if p.mamba_align_mode else "none"])
        records.append({"engine": "vllm", **dict(p.__dict__.items())})
    sglang = [("sglang 0.4.5", "TP table 0.88 / 0.87 / 0.85 / 0.81 / 0.79"),
              ("sglang 0.4.6", "TP x PP table; raised above 96 GiB of GPU memory"),
              ("sglang 0.4.8", "(gpu_mem - reserved) / gpu_mem, reserved by memory tier + TP x PP"),
              ("sglang 0.5.3", "reserved = 512 + 1.5 chunked prefill + 2 graph bs + 128 TP x PP "
                               "(>= 10 GiB above 60 GiB)"),
              ("sglang 0.5.10", "+ prefill CUDA graphs (8 MiB x 58, MLA 1.5 GiB)")]
    for name, rule in sglang:
        rows.append([name, "-", "tokens = rest // cell", "-", "-", "-"])
        records.append({"engine": "sglang", "version": name.split()[1], "default_fraction": rule,
                        "source": "python/sglang/srt/server_args.py"})
    for tp in TRTLLM_PROFILES:
        rows.append([f"trtllm {tp.version}", "-", f"max_tokens, blocks {tp.blocks_rounding}",
                     "-", "-", "-"])
        records.append({"engine": "trtllm", "version": tp.version,
                        "blocks_rounding": tp.blocks_rounding,
                        "rounding_source": tp.rounding_source,
                        "default_fraction": TRTLLM_DEFAULT_FRACTION,
                        "max_num_tokens": TRTLLM_MAX_NUM_TOKENS,
                        "source": "tensorrt_llm/_torch/pyexecutor/_util.py (KvCacheCreator), "
                                  "resource_manager.py (KVCacheManager)"})
    notes = [
        "Rules read from vLLM's source (0.32: v1/kv_cache_interface.py, v1/core/kv_cache_utils.py,"
        " platforms/interface.py, config/vllm.py, engine/arg_utils.py, v1/worker/gpu_worker.py) "
        "and checked on start-up logs of older versions; --engine-version X.Y picks the newest "
        "profile at or below X.Y.",
        "Platforms: " + "; ".join(
            f"{p.name}: block {p.default_block}, MLA {p.mla_block}, kernel alignment "
            f"{p.kernel_block}, async scheduling {'on' if p.async_scheduling else 'off'}"
            for p in PLATFORMS.values()) + ".",
        "vLLM reserve: the profile peak (max of the forward over max_num_batched_tokens and the "
        "sampler warm-up: model runner V1 0.13 GiB + 14.37 B per logit on FlashInfer's or the "
        "Triton top-k/top-p, + 34.64 B on PyTorch's sort (0.10-0.16 without FlashInfer; "
        "--flashinfer-sampler); model runner V2, the "
        "default for listed architectures from 0.22, dense text models from 0.25 and all from "
        "0.29, the 16-bit logits alone "
        "plus its penalty state), non-torch memory by TP, CUDA graphs by the number vLLM "
        "captures (V1 from 0.20, V2 from 0.29; not with --enforce-eager); batch defaults by GPU "
        "memory (>= 160 GiB tier from 0.28). Unified-memory GPUs (GB10) need --reserve-gib: "
        "vLLM reads free memory there as the host's available RAM (utils/mem_utils.py).",
        *[f"{name}: {rule} (server_args.py)." for name, rule in sglang],
        "SGLang: rest = (total - pre-loaded) x mem_fraction_static - weights; pre-loaded memory "
        "by TP from logs. A multimodal checkpoint's default fraction x 0.90 (0.4.9) or "
        "adjust_mem_fraction_for_vlm's factor over its vision tower (0.4.10+).",
        "SGLang's pools (kvplan/engines/sglang_pools.py): the token pool, hybrid_swa (gpt-oss, "
        "Llama-4), mamba (0.5.2+), the sparse indexer keys; speculative decoding's draft worker "
        "(0.4.2+) keeps a pool of the target's tokens over its layers, and the target's pool "
        "takes the draft + verify headroom in 0.4.4-0.5.6 (max_running_requests 48 unless set) "
        "and the draft's layers in its cell from 0.5.14.",
        "TensorRT-LLM, PyTorch backend (0.20+; _torch/pyexecutor/_util.py KvCacheCreator): "
        "(total - peak of a max_num_tokens dummy run + its temporary KV pool) x "
        f"free_gpu_memory_fraction ({TRTLLM_DEFAULT_FRACTION}) = (total - weights - activation - "
        "non-torch) x fraction; max_tokens = that // bytes per token, capped by max_tokens; "
        "blocks of tokens_per_block 32 rounded up to 1.1 (C++ KVCacheManager, ceilDiv), down "
        "from 1.2 (resource_manager.py calculate_max_num_blocks). Non-torch memory from public "
        "logs by TP. The engine path (TensorRT engines) rounds up and, like unified-memory "
        "devices (GB10), needs --reserve-gib.",
        "TensorRT-LLM: full attention, sliding windows (sized as full) and MLA only; "
        "recurrent state, chunked attention, the sparse indexer and draft layers are refused.",
    ]
    return View(
        title="Engine profiles (--engine-version)",
        columns=[Column(header="profile"), Column(header="group size"),
                 Column(header="KV cache size: N tokens"), Column(header="in flight (async)"),
                 Column(header="chunked hybrid"), Column(header="mamba mode")],
        rows=rows, records=records,
        notes=[f"vllm {p.version}: {p.notes}." for p in VLLM_PROFILES] + notes)
