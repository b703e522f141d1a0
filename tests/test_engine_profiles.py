"""Engine profiles: each engine's budget rules by version, derived by hand from the engines' source
(the version ranges are those of the wheels' server_args.py / arg_utils.py), and checked on the
parts of real start-up logs that they predict."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from kvplan._util.units import GiB, MiB
from kvplan.capacity.plan import plan_capacity
from kvplan.capacity.reverse import fraction_needed
from kvplan.engines.base import Engine, gpu_inputs, plan_inputs
from kvplan.engines.sglang.budget import sglang_default_fraction
from kvplan.engines.trtllm.options import TrtllmOptions
from kvplan.engines.vllm.alloc import vllm_batch_defaults
from kvplan.engines.vllm.budget import vllm_sampler_bytes_per_logit, vllm_sampler_rule
from kvplan.engines.vllm.options import VllmOptions
from kvplan.hardware.gpus import get_gpu
from kvplan.sources.resolve import load_spec

CONFIGS = Path(__file__).parent / "data" / "configs"

H100_SMI = 81_559 * MiB  # nvidia-smi's memory.total of an H100 SXM (modal-labs/modal-client#2797)


def test_sglang_default_fraction_by_version() -> None:
    # <= 0.4.5: the TP table.
    assert sglang_default_fraction(version="0.4.5", gpu_mem_bytes=H100_SMI, tp=8)[0] == 0.81
    # 0.4.8-0.5.2, H100 (< 90 GiB), TP 1: reserved = (9.5 + 1/2) x 1024 = 10,240 MiB;
    # (81,559 - 10,240) / 81,559 = 0.874.
    assert sglang_default_fraction(version="0.5.0", gpu_mem_bytes=H100_SMI, tp=1)[0] == 0.874
    # 0.5.3-0.5.9, TP 1: chunked prefill 8192, CUDA-graph batch 256 (< 160 GiB, TP < 4):
    # reserved = 512 + 1.5 x 8192 + 2 x 256 + 128 = 13,440 MiB -> (81,559 - 13,440) / 81,559
    # = 0.835.
    assert sglang_default_fraction(version="0.5.5", gpu_mem_bytes=H100_SMI, tp=1)[0] == 0.835
    # 0.5.10+: prefill CUDA graphs add 58 x 8 MiB (1,536 MiB for MLA): 13,904 -> 0.830;
    # MLA 14,976 -> 0.816.
    assert sglang_default_fraction(version="0.5.23", gpu_mem_bytes=H100_SMI, tp=1)[0] == 0.830
    assert sglang_default_fraction(version="0.5.23", gpu_mem_bytes=H100_SMI, tp=1,
                                   is_mla=True)[0] == 0.816


def test_vllm_batch_defaults_by_gpu_and_version() -> None:
    h100, a100 = get_gpu("H100-80GB"), get_gpu("A100-80GB")
    mi300x = get_gpu("MI300X")
    assert vllm_batch_defaults(h100.total_bytes, is_a100=False, version="0.32") == (1024, 8192)
    assert vllm_batch_defaults(a100.total_bytes, is_a100=True, version="0.32") == (256, 2048)
    # The >= 160 GiB tier appears in 0.28 (PR #51726): MI300X (191.98 GiB) gets 16,384 tokens.
    assert vllm_batch_defaults(mi300x.total_bytes, is_a100=False, version="0.27") == (1024, 8192)
    assert vllm_batch_defaults(mi300x.total_bytes, is_a100=False, version="0.28") == (1024,
                                                                                        16384)


def test_vllm_reserve_parts_follow_the_version() -> None:
    spec = load_spec("llama-3.1-8b")
    h100 = get_gpu("H100-80GB")
    base = plan_inputs(context=8192, total_bytes=h100.total_bytes)

    def parts(**kw: object) -> dict:
        return plan_capacity(spec, replace(base, **kw)).reserve_breakdown

    # CUDA graphs come out of the budget from 0.20, not before, and never with --enforce-eager.
    assert "cuda_graphs" in parts(engine_version="0.32")
    assert "cuda_graphs" not in parts(engine_version="0.19")
    assert "cuda_graphs" not in parts(engine_version="0.32", enforce_eager=True)
    # Llama-3.1-8B on an H100 with vLLM 0.19.0 (llm-d-planner PR #205's log): "PyTorch
    # activation peak memory takes 1.89GiB", "non-torch memory takes 0.25GiB". By hand: the
    # sampler warm-up of 1,024 rows (H100 default max_num_seqs) x 128,256 logits x 14.37 B
    # + 0.13 GiB = 1,887,213,036 + 139,586,437 B = 1.889 GiB; the forward pass over 8,192 tokens
    # is 8,192 x (3 x 4,096 + 3 x 14,336) x 2 B = 905,969,664 B (0.84 GiB), smaller, so the
    # sampler sets the peak.
    old = parts(engine_version="0.19")
    forward = old["activation"]["bytes"]
    assert forward == 8192 * (3 * 4096 + 3 * 14336) * 2
    peak = forward + old["sampler"]["bytes"]
    assert peak == int(0.13 * GiB + 1024 * 128_256 * 14.37)
    assert abs(peak / GiB - 1.89) < 0.01
    assert old["non_torch"]["bytes"] == int(0.25 * GiB)
    # Model runner V1's light top-k/top-p paths, Triton (0.17-0.21) and FlashInfer (the default
    # from 0.22), hold the same four rows x vocab tensors: one rule.
    assert vllm_sampler_bytes_per_logit("0.32") == vllm_sampler_bytes_per_logit("0.19") == 14.37
    # Non-torch memory by TP and version: before 0.19, 1.84 GiB at TP 4 (vllm issue #24881,
    # 0.10.2); from 0.19, 2.17 GiB (the PR #205 TP4 runs); pipeline stages alone 0.07 GiB.
    assert parts(tp=4, engine_version="0.10")["non_torch"]["bytes"] == int(1.84 * GiB)
    assert parts(tp=4, engine_version="0.19")["non_torch"]["bytes"] == int(2.17 * GiB)
    assert parts(pp=2, engine_version="0.19")["non_torch"]["bytes"] == int(0.07 * GiB)


def test_model_runner_v2_reserve_by_version() -> None:
    # Model runner V2 (config/vllm.py use_v2_model_runner): dense text models from 0.25, every
    # model from 0.29; MoE and hybrids stay on V1 before 0.29.
    from kvplan.engines.vllm.budget import VLLM_RUNNER_V1, VLLM_RUNNER_V2, vllm_model_runner

    dense, moe = load_spec("llama-3.1-8b"), load_spec(str(CONFIGS / "qwen3-30b-a3b.json"))
    hybrid = load_spec("qwen3-next-80b-a3b")
    # Listed architectures first (DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES): Qwen3 from 0.22,
    # Llama and Mistral from 0.23, Qwen2-MoE / DeepSeek-V2 from 0.24; Qwen2 only from 0.25.
    qwen3, qwen2 = load_spec(str(CONFIGS / "qwen3-8b.json")), load_spec("qwen2.5-7b")
    qwen2_moe = load_spec(str(CONFIGS / "qwen1.5-moe-a2.7b.json"))
    assert vllm_model_runner("0.21", qwen3) is VLLM_RUNNER_V1
    assert vllm_model_runner("0.22", qwen3) is VLLM_RUNNER_V2
    assert vllm_model_runner("0.22", dense) is VLLM_RUNNER_V1
    assert vllm_model_runner("0.23", dense) is VLLM_RUNNER_V2
    assert vllm_model_runner("0.23", qwen2_moe) is VLLM_RUNNER_V1
    assert vllm_model_runner("0.24", qwen2_moe) is VLLM_RUNNER_V2
    assert vllm_model_runner("0.24", qwen2) is VLLM_RUNNER_V1
    assert vllm_model_runner("0.25", qwen2) is VLLM_RUNNER_V2
    assert vllm_model_runner("0.28", moe) is VLLM_RUNNER_V1
    assert vllm_model_runner("0.28", hybrid) is VLLM_RUNNER_V1
    assert vllm_model_runner("0.29", moe) is vllm_model_runner(None, hybrid) is VLLM_RUNNER_V2
    # Qwen2.5-0.5B, vLLM 0.27.1 serve on a 23.99 GiB device at 0.85 (index file id
    # 61918553602): "Desired GPU memory utilization is (0.85, 20.39 GiB). Actual usage is 1.49
    # GiB for consumed memory (weights + non-torch), 0.25 GiB for peak activation", "Available
    # KV cache memory: 18.65 GiB" = 20.39 - 1.49 - 0.25: nothing for CUDA graphs (V2's
    # profile_cudagraph_memory returns 0 before 0.29). By hand, on V2: 256 rows (max_num_seqs
    # under 70 GiB) x 151,936 logits x 2 B = 77,791,232 B of logits, above the forward over
    # 2,048 tokens, 2,048 x (3 x 896 + 3 x 4,864) x 2 B = 70,778,880 B; the penalty state
    # 256 x (151,936 x 4 + 4,748 x 4) = 160,444,416 B; non-torch 0.25 GiB.
    spec = load_spec(str(CONFIGS / "qwen2.5-0.5b.json"))
    inputs = plan_inputs(context=2048, total_bytes=int(23.99 * GiB), mem_fraction=0.85,
                        max_num_batched_tokens=2048, weights_bytes=int(0.93 * GiB),
                        engine_version="0.27.1")
    parts = plan_capacity(spec, inputs).reserve_breakdown
    assert parts["activation"]["bytes"] == 70_778_880
    assert parts["activation"]["bytes"] + parts["sampler"]["bytes"] == 77_791_232
    assert parts["sampler_state"]["bytes"] == 160_444_416
    assert "cuda_graphs" not in parts
    # The same model on V1 (0.24: Qwen2 is not on the list) would hold 0.13 GiB + 256 x 151,936
    # x 14.37 B and the CUDA-graph estimate; from 0.29 V2 subtracts the estimate too.
    # 0.25-0.26 do not count the penalty state (allocated before the profile, not part of the
    # weights; utils/mem_utils.py adds the free-memory delta only from 0.27): Qwen2.5-0.5B on
    # 0.26.0 (index file id 69421856836) logs 13.99 - 0.93 weights - 1.06 peak - 0.07
    # non-torch = 11.94 GiB.
    assert "sampler_state" not in plan_capacity(spec, replace(inputs, engine_version="0.26")
                                                ).reserve_breakdown
    v1 = plan_capacity(spec, replace(inputs, engine_version="0.24")).reserve_breakdown
    assert "sampler_state" not in v1 and "cuda_graphs" in v1
    assert "cuda_graphs" in plan_capacity(spec, replace(inputs, engine_version="0.29")
                                          ).reserve_breakdown


def test_cuda_graph_estimate_by_graph_count() -> None:
    # config/vllm.py _set_cudagraph_sizes + v1/cudagraph_dispatcher.py, by hand: 256 requests
    # (GPUs under 70 GiB), 2,048 tokens: sizes 1, 2, 4, 8..248 (31), 256..512 (17) = 51
    # PIECEWISE graphs, of which 35 are <= 256 for FULL decode: the "PIECEWISE=51
    # (largest=512), FULL=35 (largest=256)" of the 0.22 logs. 1,024 requests (H100): 51 + 51.
    # 8 requests: sizes up to 16, 5 PIECEWISE, 4 FULL.
    from kvplan.engines.vllm.budget import (
        vllm_cuda_graph_bytes,
        vllm_cuda_graph_count,
        vllm_cuda_graph_estimate_bytes,
        vllm_layers_per_stage,
    )

    assert vllm_cuda_graph_count(max_num_seqs=256, max_num_batched_tokens=2048) == (51, 35)
    assert vllm_cuda_graph_count(max_num_seqs=1024, max_num_batched_tokens=8192) == (51, 51)
    assert vllm_cuda_graph_count(max_num_seqs=8, max_num_batched_tokens=2048) == (5, 4)
    # Llama-3.1-8B (32 layers, config.json num_hidden_layers) on an H100: profile_cudagraph_memory
    # = first capture + (51 - 1 + 51 - 1) further graphs x 32 layers x 0.157 MiB
    # = 375,809,638.4 + 526,804,582.4 B = 902,614,220 B = 0.84 GiB, as the 0.19.0 logs print.
    assert vllm_cuda_graph_bytes(max_num_seqs=1024, max_num_batched_tokens=8192,
                                 layers_per_stage=32) == 902_614_220
    # Llama-3.1-70B (80 layers): 0.35 GiB + 100 x 80 x 0.157 MiB = 1.58 GiB (logged 1.63-1.92
    # for the 80-layer models at TP 2, 1.51-1.70 at TP 4).
    assert round(vllm_cuda_graph_bytes(max_num_seqs=1024, max_num_batched_tokens=8192,
                                       layers_per_stage=80) / GiB, 2) == 1.58
    # One graph per mode ("PIECEWISE=1 (largest=1), FULL=1 (largest=1)"): the first capture
    # alone, whatever the model; PIECEWISE only (FULL=0) adds nothing for the missing mode.
    assert vllm_cuda_graph_estimate_bytes(piecewise=1, full=1, layers_per_stage=64) == int(
        0.35 * GiB)
    assert vllm_cuda_graph_estimate_bytes(piecewise=2, full=0, layers_per_stage=64) == int(
        0.35 * GiB + 64 * 0.157 * MiB)
    # PP 4 over 32 layers: 8 per stage (distributed/utils.py get_pp_indices); 61 over 4: 16.
    assert vllm_layers_per_stage(32, 4) == 8 and vllm_layers_per_stage(61, 4) == 16


def _cuda_graph_logs() -> tuple[list[tuple[float, float, float]], list[tuple[float, float, float]]]:
    """(fitted, held out) configurations of vllm_startup_logs.json that print "Estimated CUDA
    graph memory", one per model/version/GPU/TP/PP/quantization/dtype: (logged GiB, further
    graphs x layers on the stage, the former 8.43 MiB-per-graph rule's GiB)."""
    import json
    import re

    from kvplan.engines.vllm.budget import vllm_cuda_graph_count, vllm_layers_per_stage
    from kvplan.engines.vllm.graph_sizes import vllm_model_max_capture_size
    from kvplan.sources.resolve import load_model

    logs = json.loads((CONFIGS.parent / "engine_logs" / "vllm_startup_logs.json").read_text())
    seen: dict[tuple, tuple[bool, tuple[float, float, float]]] = {}
    for e in logs:
        m = re.search(r"Estimated CUDA graph memory: ([\d.]+) GiB", e["quote"])
        if not m:
            continue
        spec = e["spec"] if not e["spec"].endswith(".json") else str(CONFIGS.parent.parent.parent
                                                                      / e["spec"])
        model = load_model(spec)[0]
        printed = re.search(r"PIECEWISE=(\d+)[^\n]*FULL=(\d+)", e["quote"])
        if printed:
            piecewise, full = int(printed[1]), int(printed[2])
        else:  # vLLM's defaults: 1,024 requests on the H100s (logged), else 256; gpt-oss's
            # ceiling of 1,024 (kvplan.engines.vllm.graph_sizes, task gptossgraph62)
            piecewise, full = vllm_cuda_graph_count(
                max_num_seqs=e["max_num_seqs"] or 256,
                max_num_batched_tokens=e["max_num_batched_tokens"] or 2048,
                model_max_capture=vllm_model_max_capture_size(model.architectures,
                                                              e["vllm_version"]))
        layers = vllm_layers_per_stage(model.num_hidden_layers, e["pp"])
        key = (e["spec"], e["vllm_version"], e["gpu"], e["tp"], e["pp"], e["quantization"],
               e["dtype"], e["kv_cache_dtype"])
        former = max(0.36, (piecewise + full) * 8.43 / 1024)
        seen.setdefault(key, (e["fitted"], (float(m[1]), (piecewise - 1 + full - 1) * layers,
                                           former)))
    fitted = [row for is_fit, row in seen.values() if is_fit]
    held = [row for is_fit, row in seen.values() if not is_fit]
    return fitted, held


def test_cuda_graph_constants_are_the_fit_of_the_fitted_logs() -> None:
    # Least squares of logged GiB on (further graphs x layers) over the 12 fitted configurations
    # (0.19.0 H100, llm-d-planner PR #205: Llama-3.1-8B at TP 1/2/4, PP 2/4, fp8; Qwen2.5-7B at
    # TP 1/2/4; Qwen3-8B; Gemma-7B; Gemma-2-9B): 0.346 GiB + 0.157 MiB per graph and layer.
    from kvplan.engines.vllm.budget import (
        VLLM_CUDA_GRAPH_FIRST_CAPTURE_GIB,
        VLLM_CUDA_GRAPH_PER_GRAPH_LAYER_MIB,
    )

    fitted, _ = _cuda_graph_logs()
    assert len(fitted) == 12
    ys, xs = [r[0] for r in fitted], [r[1] for r in fitted]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mx) ** 2 for x in xs)
    intercept = my - slope * mx
    assert abs(intercept - VLLM_CUDA_GRAPH_FIRST_CAPTURE_GIB) < 0.005
    assert abs(slope * 1024 - VLLM_CUDA_GRAPH_PER_GRAPH_LAYER_MIB) < 0.0005


def test_cuda_graph_rule_on_held_out_logs() -> None:
    # Not held out in the honest sense (tests/benches/honest.py): 20 of these 25 configurations
    # are 0.19.0 H100 logs that set the non-torch medians (VLLM_NON_TORCH_GIB_0_19_FIT); only 5
    # (an A100-40GB, three L40S, an RTX 5090) are in no fit. The figures below are as measured.
    # "Held out 1": the 24 configurations of vllm_startup_logs.json not marked fitted (0.19-0.24:
    # dense 7B-80-layer, MoE, multimodal Gemma-3, H100/A100/L40S/RTX 5090/a 48-GB card): median
    # |error| 0.075 GiB (mean 0.18), 20 of 24 within 0.25 GiB; the former 8.43 MiB per graph
    # (read off most of these same logs) 0.16 GiB (mean 0.32) and 15. (21 configurations, 0.07 /
    # 17 and 0.21 / 12, before the vllm-heldout session added Qwen2.5-7B at 0.22.0 (0.37 GiB
    # logged, 0.57 by the rule) and gemma-3-12b / gemma-3-4b at 0.19.0 (1.02 / 0.70 logged).)
    # The misses: Qwen3-8B on an A100-40GB (2.35 GiB logged, 0.81
    # predicted), DeepSeek-V2-Lite and gpt-oss-20b (MoE, 0.63 and 0.37 GiB low; gpt-oss 0.14
    # since gptossgraph62), Gemma-3-27B
    # (62 layers, 0.25 high). The vllm-mm session replays the 0.18.0 Qwen3.5-9B L40S log (index
    # file id 57489989625: 1.58 GiB logged with FlashInfer and fp8 KV, 0.76 by the rule, 0.71
    # by the former one), so it moved here from held out 2: 25 configurations, median 0.081 GiB
    # (mean 0.21), 20 of 25 within; the former rule 0.18 (0.34) and 15.
    # Held out 2: the logs of vllm_cudagraph_estimates.json (0.20-0.27) whose model is known,
    # less those replayed above: 6 logs, median |error| 0.18 GiB (mean 0.19) against 0.21
    # (0.29); (7 logs, 0.18 (0.28) against 0.25 (0.38) with the Qwen3.5-9B one); the 27B hybrid
    # (64 layers) 1.17 predicted vs 1.56 logged (the former rule 0.71); the two Qwen3.6-35B-A3B
    # logs with drafters 0.17-0.19 low (drafter graphs not modelled).
    import json
    import statistics

    from kvplan.engines.vllm.budget import (
        VLLM_CUDA_GRAPH_FIRST_CAPTURE_GIB,
        VLLM_CUDA_GRAPH_PER_GRAPH_LAYER_MIB,
        vllm_cuda_graph_estimate_bytes,
    )

    _, held = _cuda_graph_logs()
    assert len(held) == 25
    new = [abs(r[0] - (VLLM_CUDA_GRAPH_FIRST_CAPTURE_GIB
                       + r[1] * VLLM_CUDA_GRAPH_PER_GRAPH_LAYER_MIB / 1024)) for r in held]
    former = [abs(r[0] - r[2]) for r in held]
    assert statistics.median(new) <= 0.085 < 0.15 <= statistics.median(former)
    # gptossgraph62: gpt-oss-20b's 0.19.0 H100 log (1,024 requests, no graph count printed) at
    # gpt-oss's 1,024 ceiling, 83 + 83 graphs (was 51 + 51): 0.95 GiB predicted against 1.09
    # logged (0.72 before, 0.37 low); 21 of 25 within (20 before), mean 0.198 (0.208), median
    # unchanged. The log was read (a listed miss) before the rule, which follows vLLM's code.
    assert sum(e <= 0.25 for e in new) == 21 and sum(e <= 0.25 for e in former) == 15

    logs = json.loads((CONFIGS.parent / "engine_logs" / "vllm_cudagraph_estimates.json")
                      .read_text())
    for e in logs:
        assert f"{e['estimate_gib']:.2f} GiB total" in e["quote"], e["source"]
    replayed = " ".join(e["url"] for e in json.loads(
        (CONFIGS.parent / "engine_logs" / "vllm_startup_logs.json").read_text()))
    known = [e for e in logs if e["num_hidden_layers"] and not e["fitted"]
             and e["source"].split()[-1] not in replayed]
    assert len(known) == 6
    errors = [abs(vllm_cuda_graph_estimate_bytes(
        piecewise=e["piecewise"], full=e["full"], layers_per_stage=e["num_hidden_layers"]) / GiB
        - e["estimate_gib"]) for e in known]
    before = [abs(max(0.36, (e["piecewise"] + e["full"]) * 8.43 / 1024) - e["estimate_gib"])
              for e in known]
    assert statistics.median(errors) <= 0.18 < 0.21 <= statistics.median(before)
    assert statistics.mean(errors) <= 0.19 < 0.29 <= statistics.mean(before)


def test_vllm_v1_sampler_path_by_release() -> None:
    # v1/sample/ops/topk_topp_sampler.py in the wheels: PyTorch's sort without FlashInfer to
    # 0.16 (0.10-0.11.0 run FlashInfer only if installed, an extra of the wheel; 0.11.1-0.16 only
    # with VLLM_USE_FLASHINFER_SAMPLER=1), the Triton kernel 0.17-0.21, FlashInfer from 0.22.
    for version in ("0.10", "0.10.2", "0.11.0", "0.11.1", "0.15.1", "0.16.0"):
        assert vllm_sampler_bytes_per_logit(version) == 34.64, version
        assert vllm_sampler_bytes_per_logit(version, True) == 14.37, version
    for version in ("0.17.1", "0.19", "0.21"):
        assert vllm_sampler_bytes_per_logit(version) == 14.37, version
        assert vllm_sampler_bytes_per_logit(version, False) == 14.37, version
    assert "FlashInfer" in vllm_sampler_rule("0.22").source
    assert "Triton" in vllm_sampler_rule("0.22", False).source
    assert "sort" in vllm_sampler_rule("0.10.2").source
    assert "FlashInfer" in vllm_sampler_rule("0.10.2", True).source


def test_vllm_sort_sampler_peak_of_qwen3_next_at_0_10_2() -> None:
    # Qwen3-Next-80B-A3B on two H200s, vLLM 0.10.2, the log the sort rule is fitted on
    # (tests/data/engine_logs/vllm_startup_logs.json, search-index file id 7292846353): "FlashInfer
    # is not available. Falling back to the PyTorch-native implementation", "5.58 GiB for peak
    # activation". By hand (config.json: hidden 2,048, 10 of 512 experts of 512, vocab 151,936):
    # 0.10.2's fused_experts_impl frees its caches (8,192 x 10 x (max(512, 2,048) + 256) x 2 B =
    # 377,487,360 B) before the sampler warm-up (issue #26, kvplan.engines.vllm.moe), so the peak
    # is the warm-up's: 0.13 GiB + 1,024 rows (H200: max_num_seqs 1,024) x 151,936 x 34.64 B =
    # 139,586,437 + 5,389,362,954 B, 5.15 GiB. The fit read the other 0.43 GiB as fused-MoE
    # buffers; the code does not keep them, so they are unexplained. The light rule: 2.21 GiB.
    spec = load_spec("qwen3-next-80b-a3b")
    plan = plan_capacity(spec, plan_inputs(context=8192, total_bytes=get_gpu("H200").total_bytes,
                                          tp=2, engine_version="0.10.2"))
    parts = plan.reserve_breakdown
    peak = parts["activation"]["bytes"] + parts["sampler"]["bytes"]
    assert peak == int(0.13 * GiB + 1024 * 151_936 * 34.64)
    assert abs(peak / GiB - 5.15) < 0.01
    assert "PyTorch sort" in parts["sampler"]["rule"]
    assert "freed before the sampler" in parts["activation"]["rule"]
    # The same run with FlashInfer's sampler (vllm[flashinfer] or the vllm-openai image).
    light = plan_capacity(spec, plan_inputs(context=8192, tp=2, engine_version="0.10.2",
                                           total_bytes=get_gpu("H200").total_bytes,
                                           flashinfer_sampler=True)).reserve_breakdown
    assert light["activation"]["bytes"] + light["sampler"]["bytes"] == (
        int(0.13 * GiB + 1024 * 151_936 * 14.37))


def test_moe_buffers_add_to_the_sampler_peak() -> None:
    # Qwen3-30B-A3B on an H100, vLLM 0.19.0 (llm-d-planner PR #205): "PyTorch activation peak
    # memory takes 2.68GiB". By hand (hidden 2,048, 8 of 128 experts of 768, vocab 151,936):
    # from 0.14 TritonExperts keeps its workspaces on the workspace manager (issue #26,
    # kvplan.engines.vllm.moe): 8,192 x 8 x (max(768, 2,048) + max(1,536, 2,048)) x 2 B =
    # 536,870,912 B (0.50 GiB), held through the sampler warm-up of 0.13 GiB + 1,024 x 151,936 x
    # 14.37 B (2.21 GiB): 2.71 GiB, 0.03 GiB above the log (the former 3N/2 + K rule: 0.53 GiB,
    # 2.74; without the buffers: 0.47 GiB below).
    spec = load_spec(str(CONFIGS / "qwen3-30b-a3b.json"))
    plan = plan_capacity(spec, plan_inputs(context=8192, total_bytes=get_gpu("H100").total_bytes,
                                          engine_version="0.19"))
    parts = plan.reserve_breakdown
    assert "fused-MoE workspaces 0.50 GiB" in parts["activation"]["rule"]
    peak = parts["activation"]["bytes"] + parts["sampler"]["bytes"]
    assert peak == 536_870_912 + int(0.13 * GiB + 1024 * 151_936 * 14.37)
    assert abs(peak / GiB - 2.68) < 0.04


@pytest.mark.parametrize("engine", list(Engine))
def test_each_engine_budget_and_its_inverse_agree(engine: Engine) -> None:
    # fraction_needed is the budget formula solved for the fraction: planning at that fraction
    # holds the requests.
    spec = load_spec("llama-3.1-8b")
    inputs = plan_inputs(context=8192, engine=engine, total_bytes=get_gpu("H100").total_bytes)
    f = fraction_needed(spec, inputs, 40)
    assert 0 < f < 1
    assert plan_capacity(spec, replace(inputs, mem_fraction=min(1.0, f + 1e-6))).max_requests >= 40
    assert plan_capacity(spec, replace(inputs, mem_fraction=f - 1e-3)).max_requests < 40


@given(total_gib=st.integers(8, 300), f=st.floats(0.3, 1.0), weights_gib=st.integers(0, 100),
       reserve_mib=st.integers(0, 8000))
def test_budgets_are_monotone_in_the_fraction(total_gib, f, weights_gib, reserve_mib) -> None:
    # Where the weights and reserve leave room at all (else every engine refuses to start).
    assume(total_gib * GiB * 0.27 > weights_gib * GiB + reserve_mib * MiB)
    for rule in (engine.budget for engine in Engine):
        lo = rule.kv_bytes(total_gib * GiB, f * 0.9, weights_gib * GiB, reserve_mib * MiB)
        hi = rule.kv_bytes(total_gib * GiB, f, weights_gib * GiB, reserve_mib * MiB)
        assert lo <= hi


def test_trtllm_engine_path_rounds_blocks_up() -> None:
    # TRT-LLM first turns the budget into max_tokens (budget // 131,072 B per token for
    # Llama-3.1-8B bf16: 10 GiB + 5 tokens -> 81,925 tokens), then into blocks of 32: from 1.2
    # the Python manager floors (2,560), the C++ manager (to 1.1) and the engine path round up
    # (2,561), as the 0.20.0 log rounds 860,308 tokens to 860,320.
    spec = load_spec("llama-3.1-8b")
    base = plan_inputs(context=4096, engine=Engine.trtllm, kv_budget_bytes=10 * GiB + 5 * 131_072)
    down = plan_capacity(spec, base)
    up = plan_capacity(spec, replace(base, options=TrtllmOptions(trtllm_backend="engine")))
    assert (down.num_blocks, up.num_blocks) == (2560, 2561)
    assert plan_capacity(spec, replace(base, engine_version="1.1.0rc3")).num_blocks == 2561
    assert plan_capacity(spec, replace(base, engine_version="1.2.0rc6.post2")).num_blocks == 2560
    capped = plan_capacity(spec, replace(base, options=TrtllmOptions(max_total_tokens=32 * 100)))
    assert capped.num_blocks == 100


def test_non_torch_growth_with_tp_over_nvlink_only() -> None:
    # vLLM's growth of non-torch memory with TP, 2.07 GiB per rank at TP 2 on NVLink H100s
    # (llm-d-planner PR #205, 0.19.0), is not the custom all-reduce's IPC buffers (8 MiB,
    # custom_all_reduce.py max_size=8192 * 1024): Qwen3-32B at TP 2 on two RTX PRO 6000 over
    # PCIe with P2P (custom all-reduce running, vLLM 0.27.1, index id 57905766703) leaves
    # 0.426 x 95.01 - 30.59 - 8.22 = 1.66 GiB of reserve for activation (8,192 tokens x
    # (3 x 5,120 + 3 x 25,600 / 2) x 2 B = 0.82 GiB), V2's penalty state (1,024 x (151,936 x 4
    # + 4,748 x 4) B = 0.60 GiB) and non-torch: 0.24 GiB, the TP 1 figure (0.25), not 2.07.
    # PCIe GPUs and --disable-custom-all-reduce therefore hold the TP 1 figure; TP 4 over NVLink
    # at 0.19: 2.17 GiB.
    spec = load_spec("llama-3.1-8b")

    def non_torch(gpu: str, tp: int = 2, **kw: object) -> int:
        g = get_gpu(gpu)
        inputs = plan_inputs(context=8192, tp=tp, engine_version="0.19", **gpu_inputs(g))
        inputs = replace(inputs, options=VllmOptions(**kw))
        return plan_capacity(spec, inputs).reserve_breakdown["non_torch"]["bytes"]

    assert non_torch("H100") == int(2.07 * GiB)
    assert non_torch("L40S") == int(0.25 * GiB)  # two PCIe GPUs, custom all-reduce or not
    assert non_torch("RTX-PRO-6000") == int(0.25 * GiB)
    assert non_torch("L40S", tp=4) == int(0.25 * GiB)
    assert non_torch("H100", tp=4) == int(2.17 * GiB)
    assert non_torch("H100", disable_custom_all_reduce=True) == int(0.25 * GiB)
    assert non_torch("L40S", disable_custom_all_reduce=True) == int(0.25 * GiB)


def test_vllm_default_utilization_by_version() -> None:
    # vLLM's gpu_memory_utilization default (config/cache.py CacheConfig, entrypoints/llm.py
    # LLM.__init__): 0.9 in the 0.19.0 wheel, 0.92 from 0.20.0 (the 0.20.0, 0.26.0 and 0.32.0
    # wheels); an unversioned plan follows the newest. On an H100 (79.19 GiB) that is
    # 0.02 x 79.19 = 1.58 GiB more for the KV cache at the default.
    for version, fraction in (("0.19.0", 0.9), ("0.20.0", 0.92), ("0.32.0", 0.92), (None, 0.92)):
        inputs = plan_inputs(context=4096, engine=Engine.vllm, engine_version=version)
        assert inputs.resolved_mem_fraction == fraction, version
    assert plan_inputs(context=4096, engine=Engine.vllm, engine_version="0.20",
                      mem_fraction=0.9).resolved_mem_fraction == 0.9
