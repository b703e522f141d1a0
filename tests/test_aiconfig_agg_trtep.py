"""TensorRT-LLM's aggregated rows with EP = TP under TP attention (issue 30, trta2a56 / trtmoe56,
tests.benches.aiconfig_agg_trtep): the rows the all-to-all rule shaped, the prefill split the page
prints, and the measured fact its finding rests on."""

from __future__ import annotations

import collections
import statistics
from pathlib import Path

import pytest

from tests.benches import aiconfig_agg_runs, aiconfig_agg_trtep
from tests.benches.disagg_rows import PREFIX, stated_concurrency
from tests.benches.fitted_rows import SHAPED_BY

LISTED = (Path(__file__).resolve().parent / "data" / "sim_to_real"
          / "aiconfig_agg_trta2a56_rows.txt")


def _selection() -> list[dict[str, str]]:
    return [r for r in aiconfig_agg_runs.rows()
            if aiconfig_agg_trtep.is_tp_attention_ep(r) and not aiconfig_agg_runs.why_not(r)]


def test_the_shaped_rows_are_the_selection() -> None:
    # The data file lists exactly the replayed TensorRT-LLM rows with EP = TP > 1 and no
    # attention DP: 124 Qwen3-235B-A22B-FP8 on H100 (1.0.0rc3), 12 DeepSeek-R1 FP8 on H200
    # (1.1.0rc2.post2), 6 DeepSeek-R1 NVFP4 on B200 (1.1 / 1.2); 156 rows state the layout,
    # the other 14 not replayed (the CPU bound 7, a checkpoint not sized 6, a dev image 1).
    listed = [line for line in LISTED.read_text().splitlines()
              if line and not line.startswith("#")]
    chosen = _selection()
    assert listed == sorted(r["id"] for r in chosen) and len(listed) == 142
    assert collections.Counter((r["model_path"], r["system"]) for r in chosen) == {
        ("Qwen/Qwen3-235B-A22B-FP8", "h100_sxm"): 124,
        ("deepseek-ai/DeepSeek-R1", "h200_sxm"): 12, ("deepseek-ai/DeepSeek-R1", "b200_sxm"): 6}
    stated = [r for r in aiconfig_agg_runs.rows() if aiconfig_agg_trtep.is_tp_attention_ep(r)]
    assert len(stated) == 156
    whys = collections.Counter(aiconfig_agg_runs.why_not(r).split(" (")[0].split(":")[0]
                               for r in stated if r not in chosen)
    assert sum(whys.values()) == 14
    assert whys["3 x concurrency x OSL over the bench's CPU bound"] == 7
    rule = next(s for s in SHAPED_BY if s.commit == aiconfig_agg_trtep.SHAPED_COMMIT)
    assert rule.rows == tuple(PREFIX + i for i in listed)


def test_is_tp_attention_ep_reads_the_layout_fields() -> None:
    base = {"backend": "trtllm", "tp_size": "8", "attention_dp_size": "", "moe_ep_size": "8"}
    assert aiconfig_agg_trtep.is_tp_attention_ep(base)
    assert not aiconfig_agg_trtep.is_tp_attention_ep({**base, "attention_dp_size": "8"})
    assert not aiconfig_agg_trtep.is_tp_attention_ep({**base, "moe_ep_size": "4"})
    assert not aiconfig_agg_trtep.is_tp_attention_ep({**base, "backend": "vllm"})
    assert not aiconfig_agg_trtep.is_tp_attention_ep({**base, "tp_size": "1",
                                                      "moe_ep_size": "0"})


def test_split_column_names_the_rule_the_rows_shaped() -> None:
    shaped = {i: c for i, c in aiconfig_agg_runs.shaped_rows().items() if "bcea93d" in c}
    assert set(shaped) == {PREFIX + r["id"] for r in _selection()}
    # trtprefill57's eager-prefill rule (08aee189) was shaped by every TensorRT-LLM row.
    assert set(shaped.values()) == {("bcea93d", "08aee189")}
    row = _selection()[0]
    rep = aiconfig_agg_runs.Replay(id=PREFIX + row["id"], label="", measured_ttft_ms=1.0,
                                   measured_tpot_ms=1.0, concurrency=1, input_len=1,
                                   output_len=2)
    assert aiconfig_agg_runs.split_of(rep) == "shaped by bcea93d, 08aee189"


def test_prefill_split_drops_the_all_to_all_and_nothing_else() -> None:
    # Qwen3-235B-A22B-FP8 (94 layers, hidden 4,096, 128 experts of moe_intermediate 1,536,
    # top-8) on H100 TP 8 EP 8, one 1,024-token prompt. The all-to-all charged before bcea93d:
    # per layer 2 x 10 us (NVLink 4's latency) + 1,024 x 8 x 4,096 x (1 B FP8 dispatch + 2 B
    # bf16 combine) x 7/8 / 360e9 B/s = 20 + 244.668 us; x 94 = 24.879 ms.
    sim = aiconfig_agg_runs._representative()
    before = aiconfig_agg_trtep.prefill_split(sim, all_to_all=True)
    now = aiconfig_agg_trtep.prefill_split(sim, all_to_all=False, launch=False)
    a2a = 94 * (2 * 10e-6 + 1024 * 8 * 4096 * 3 * 7 / 8 / 360e9) * 1e3
    assert a2a == pytest.approx(24.879, abs=1e-3)
    assert before.ms["EP all-to-all"] == pytest.approx(a2a) and now.ms["EP all-to-all"] == 0
    assert before.total_ms - now.total_ms == pytest.approx(a2a)
    assert {k: v for k, v in before.ms.items() if k != "EP all-to-all"} == pytest.approx(
        {k: v for k, v in now.ms.items() if k != "EP all-to-all"})
    # The experts read every one of the rank's 16 experts (1,024 x 8 routed tokens touch all
    # 128): memory-bound, 94 x (16 x 3 x 4,096 x 1,536 B FP8 + the bf16 router 4,096 x 128 x
    # 2 B) / (3.35e12 B/s x 0.69, Hopper's FP8 GEMM fraction of HBM) = 12.32 ms (the block
    # scales, 0.02 %, left out by hand).
    experts = 94 * (16 * 3 * 4096 * 1536 + 4096 * 128 * 2) / (3.35e12 * 0.69) * 1e3
    assert experts == pytest.approx(12.32, abs=0.01)
    # Since trtsim67 the simulated prompt step charges TensorRT-LLM's context-step kernels
    # (kvplan.perf.trtllm_bytes), among them the CUTLASS block-FP8 MoE's (moe_kernel.
    # cutlass_traffic, P_l = 1,024 x 8 / 8 = 1,024 pairs on the rank): its GEMMs' activations
    # join the experts' bytes, 1,024 x (4,096 + 32 x 4 FP8 input + 2 x 2 x 1,536 GEMM1 out +
    # 1,536 + 12 x 4 FP8 + 2 x 4,096 GEMM2 out) = 20,627,456 B at 2.3115e12 B/s = 8.9239 us,
    # and its first quantize kernel 1,024 x (2 x 4,096 + 4,096 + 32 x 4) = 12,713,984 B is
    # 0.21691 us over its floor at 3.015e12 B/s (the second, 4,767,744 B, under it): x 94 =
    # 0.83884 + 0.02039 ms.
    moe_gemm, moe_quant = 0.83884, 0.02039
    assert now.ms["experts"] == pytest.approx(experts + moe_gemm + moe_quant, rel=1e-3)
    # 31.06 ms until logitsgather63, which charges the one row's logits all-gather over TP 8
    # (TensorRT-LLM's LMHead gather_output): 10 us + 7/8 x 151,936 x 2 B / 360e9 B/s = 10.739
    # us, and its reshape copy at the 4 us kernel floor: 14.739 us -> 31.08 ms. 32.43 since
    # hopperops65 charges the norms' and the qkv input quantization's bytes on every rank
    # (kvplan.perf.norm_traffic) beyond their 4 us floors, at 3.35e12 x 0.9 = 3.015e12 B/s: a
    # layer's two norms 1,024 x 4,096 x 2 B x 4 = 33,554,432 B, 11.1291 - 4 = 7.1291 us each;
    # the quantization 1,024 x (4,096 x 2 + 4,096 + 32 x 4) = 12,713,984 B, 0.21691 us over;
    # 94 x 14.4751 us, less layer 0's input norm without residual (16,777,216 B, 1.56458 us
    # over: 5.5645 us less) = 1.3551 ms.
    # Since trtsim67 TensorRT-LLM's own context kernels replace those rows (trtllm_bytes): the
    # all-reduce's message 1,024 x 4,096 x 2 B = 8,388,608 B passes the 8,000,000 B workspace
    # (NCCL), so both norms are kernels of their own in every layer, 94 x 2 x 7.1291 us =
    # 1.34028 ms; qkv_proj's input quantization the same 94 x 0.21691 us = 0.02039 ms (o_proj's,
    # 1,024 x 3.03125 x 1,024 B, under its floor); the CUTLASS MoE's permute and finalize,
    # 2 x 1,024 x 2 x 4,096 and 2 x (1,024 + 1,024) x 4,096 = 16,777,216 B each, 5.5646 us,
    # 94 x 2 x 1.5646 us = 0.29414 ms (its activation, 9,437,184 B, under its floor): 1.65481
    # ms where 1.3551 was, and the experts' 0.85923 above.
    assert now.total_ms == pytest.approx(31.08 + 1.65481 + moe_gemm + moe_quant, abs=0.01)
    # Since 08aee189 the eager step's launch: 1,040 ops (tests/test_trtllm_prefill_ops.py) x
    # 63.2 us = 65.728 ms (72.8 at 70 us before mlaproj62's refit, 69.68 at 67 us before
    # hopperops65's), on top of the GPU work (asserts the simulator's sum).
    simulated = aiconfig_agg_trtep.prefill_split(sim, all_to_all=False)
    assert simulated.ms["prefill launch"] == pytest.approx(65.728)
    assert simulated.total_ms == pytest.approx(
        31.08 + 1.65481 + moe_gemm + moe_quant + 65.728, abs=0.01)
    assert before.ms["prefill launch"] == now.ms["prefill launch"] == 0


def test_low_load_ttft_is_flat_in_prompt_and_tp() -> None:
    # The finding's measured fact: at concurrency 4, the Qwen3-235B-A22B-FP8 H100 rows'
    # measured TTFT (mean of the three output lengths) is 171.5-174.2 ms whether the prompt is
    # 512 or 1,024 tokens and the TP 4 or 8, where kvplan's prefill work differs by up to 1.6x
    # (TP 8: 27.2 / 31.1 ms a step; TP 4 at 1,024: 43.6 ms).
    means = {}
    for tp in (4, 8):
        for isl in (512, 1024):
            part = [float(r["silicon_ttft_ms"]) for r in _selection()
                    if r["model_path"] == "Qwen/Qwen3-235B-A22B-FP8"
                    and stated_concurrency(r) == 4 and r["isl"] == str(isl)
                    and r["tp_size"] == str(tp)]
            assert len(part) == 3
            means[tp, isl] = statistics.fmean(part)
    assert min(means.values()) == pytest.approx(171.5, abs=0.1)
    assert max(means.values()) == pytest.approx(174.2, abs=0.1)
