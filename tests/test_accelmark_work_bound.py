"""The blind2 bench's work bound (tests/benches/accelmark_runs.py `work_bound_s`): the replayed
prompts' prefill at the datasheet peaks, which falsifies the suite D replays (issue 30)."""

from __future__ import annotations

import pytest

from kvplan import load_spec
from kvplan.hardware.gpus import get_gpu
from kvplan.perf.mixed_step import MixedStepCost
from tests.benches import accelmark_runs

LLAMA_31_8B = "tests/data/configs/llama-3.1-8b.json"


def test_peak_chunk_is_the_hand_flop_count() -> None:
    # Llama-3.1-8B (config.json: hidden 4096, intermediate 14336, 32 layers, 32 query heads,
    # 8 KV heads, head_dim 128, vocab 128256) on an RTX 5090 (209.5 dense bf16 TFLOPS, the RTX
    # Blackwell whitepaper's FP32-accumulate rate), one 2,048-token chunk at positions 0-2047:
    # - GEMMs: per layer q 4096 x 4096 + k, v 2 x 4096 x 1024 + o 4096 x 4096 + MLP
    #   3 x 4096 x 14336 = 218,103,808 weights; x 32 layers x 2 FLOPs x 2,048 tokens
    #   = 2.8587e13;
    # - attention: q.K and p.V, 2 x 2 x 128 FLOPs per head per (query, key) pair, 32 heads:
    #   16,384 per pair per layer; causal pairs 2048 x 2049 / 2 = 2,098,176; x 32 layers
    #   = 1.1000e12;
    # - lm_head on the chunk's last row only (vLLM's logits indices): 2 x 4096 x 128256
    #   = 1.05e9.
    # Sum 2.9688e13 FLOPs / 209.5e12 = 0.14171 s. The cost model at PEAK (every efficiency 1,
    # no overhead) adds the memory-bound ops: the two norms a layer, whole rows
    # (kvplan.perf.norm_traffic, hopperops65): 2,048 x 4,096 x 2 B x 4 = 67,108,864 B each,
    # layer 0's input norm half (no residual): 63.5 x 67,108,864 B / 1.792e12 B/s = 2.378 ms
    # (+1.7 %), and the rest (activation; 0.4 % before the norms' bytes): within 1 %.
    hand = (218_103_808 * 32 * 2 * 2048 + 16_384 * 2_098_176 * 32 + 2 * 4096 * 128_256) / 209.5e12
    norms = 63.5 * 67_108_864 / 1.792e12
    assert norms == pytest.approx(2.378e-3, rel=1e-3)
    cost = MixedStepCost(load_spec(LLAMA_31_8B), get_gpu("RTX-5090"), eff=accelmark_runs.PEAK)
    assert cost.seconds(decode_contexts=[], chunks=[(0, 2048)]) == pytest.approx(hand + norms,
                                                                                 rel=0.01)
    # The same chunk at positions 26,624-28,671: pairs 2048 x 26624 + 2,098,176 = 56,624,128,
    # attention 56,624,128 x 16,384 x 32 = 2.9688e13; with the GEMMs and lm_head 5.8276e13
    # FLOPs / 209.5e12 = 0.27817 s.
    late = (218_103_808 * 32 * 2 * 2048 + 16_384 * 56_624_128 * 32 + 2 * 4096 * 128_256) / 209.5e12
    assert cost.seconds(decode_contexts=[], chunks=[(26_624, 2048)]) == pytest.approx(
        late + norms, rel=0.01)


def test_suite_d_replays_are_falsified() -> None:
    # Suite D's replayed prompts (200 of about 28.7 K tokens) need 588 s on the RTX 5090 and
    # 395 s on the A100 at the datasheet peaks, against runs measured at 499-517 s and 459-462 s
    # (result.json elapsed_seconds_median): beyond the peak on the 5090, 0.86 of it on the A100.
    # Every other run's prompts need under a quarter of its shortest run.
    doc, runs = accelmark_runs.load()
    assert accelmark_runs.falsified() == {"a100-80gb-vllm0.20.1-suite_D",
                                          "rtx-5090-vllm0.19.1-suite_D"}
    by_id = {r["id"]: r for r in runs}
    assert accelmark_runs.work_bound_s(by_id["rtx-5090-vllm0.19.1-suite_D"], doc) > 498.7
    for run in runs:
        if run["id"] not in accelmark_runs.falsified():
            shortest = min(m["elapsed_seconds_median"] for m in run["measured"])
            assert accelmark_runs.work_bound_s(run, doc) < 0.25 * shortest
