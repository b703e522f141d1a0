"""SGLang's split lm_head under DP attention: a decode step gathers every DP rank's hidden rows,
runs the lm_head's vocabulary shard on them and all-gathers the shards' logits, whole, before
each rank keeps its own rows (kvplan.perf.roofline, module docstring, `logits gather`).

Read in SGLang 0.5.8.post1 (0.5.5.post2 the same code, :794-895): layers/logits_processor.py
:246-260 (without --enable-dp-lm-head, its default, server_args.py:574,
`do_tensor_parallel_all_gather` over the whole TP group and `do_tensor_parallel_all_gather_dp_attn`
when the DP size is not 1), :198 (LogitsMetadata.from_forward_batch: SUM_LEN always), :858-864
(`dp_gather_replicate` into a buffer of the summed rows: layers/dp_attention.py:443-475
`_dp_gather_via_all_reduce`, one all-reduce of the zeroed buffer), :906-935
(`tensor_model_parallel_all_gather(logits)`: distributed/parallel_state.py:758-825, an
all_gather_into_tensor of [rows, vocabulary / tp] shards then a movedim + reshape copy of the
whole [rows, vocabulary]), :937-946 (`dp_scatter` of the rank's rows). The vocabulary padded to
64 on a GPU (layers/vocab_parallel_embedding.py:42, :233-252; the tp multiple only on CPU); the
lm_head is ParallelLMHead(use_attn_tp_group=enable_dp_lm_head) (models/deepseek_v2.py:2798-2804).
In a decode CUDA graph the buffer holds the captured batch x DP size rows
(model_executor/cuda_graph_runner.py:589-596)."""

from __future__ import annotations

import pytest

from kvplan import load_spec
from kvplan.hardware.gpus import get_gpu
from kvplan.hardware.interconnect import INTERCONNECTS
from kvplan.perf.engine_traits import engine_efficiency
from kvplan.perf.layout import Layout
from kvplan.perf.roofline import step_time

GB200 = get_gpu("GB200")
B200 = get_gpu("B200")


def _step(engine: str, layout: Layout, requests: int, gpu=GB200, phase: str = "decode"):
    spec = load_spec("deepseek-v3")
    return step_time(spec, gpu, tokens=requests, context=2048, requests=requests,
                     layout=layout, eff=engine_efficiency(engine), phase=phase)


def test_sglang_dp32_decode_gathers_the_logits_of_every_rank() -> None:
    # DeepSeek-V3 / R1 (hidden 7,168, vocabulary 129,280 = 64 x 2,020: no padding) on a GB200
    # DP32 EP32 decode worker (cfg483) at 64 requests a rank: 32 x 64 = 2,048 logit rows.
    # - hidden rows, SUM_LEN: one all-reduce of 2,048 x 7,168 x 2 B = 29,360,128 B over 32 GPUs
    #   of one NVL72 domain (NVLink 5: 588 GB/s, 8 us; NCCL, the custom one only on 2-8 GPUs):
    #   8 us + 2 x 31/32 x 29,360,128 / 588e9 s = 8 + 96.744 = 104.744 us;
    # - the logits: 2,048 x 129,280 x 2 B (bf16) = 529,530,880 B all-gathered, a ring half:
    #   8 us + 31/32 x 529,530,880 / 588e9 s = 8 + 872.420 = 880.420 us;
    # - the reshape copy: 2 x 529,530,880 B at 8 TB/s x 0.9 = 147.092 us.
    # 1,132.256 us a step (the step before it: 17.56 ms, TPOT ratio 1.03 on cfg483 c2048).
    step = _step("sglang", Layout(tp=32, ep=32, dp_attention=True), requests=64)
    ar = 8e-6 + 2 * 31 / 32 * 2048 * 7168 * 2 / 588e9
    ag = 8e-6 + 31 / 32 * 2048 * 129280 * 2 / 588e9
    copy = 2 * 2048 * 129280 * 2 / (8e12 * 0.9)
    assert step.by_op["logits_gather"] == pytest.approx(ar + ag + copy)
    assert step.by_op["logits_gather"] == pytest.approx(1132.256e-6, abs=1e-9)
    # The GEMM itself was priced before: 2,048 rows x 2 x 129,280 x 7,168 / 32 FLOPs a rank.
    assert "lm_head" in step.by_op


def test_sglang_dep8_logits_gather_takes_the_two_shot_all_reduce() -> None:
    # B200 DEP8 (cfg527's decode) at 64 requests a rank: 512 rows. Hidden rows 512 x 7,168 x
    # 2 B = 7,340,032 B, under 8 MiB on 8 GPUs: the custom two-shot all-reduce (its fixed
    # part measured on B300, about 19 us) + 2 x 7/8 x 7,340,032 / 588e9 s = 21.845 us; logits
    # 512 x 129,280 x 2 B = 132,382,720 B: 8 us + 7/8 x 132,382,720 / 588e9 = 8 + 196.998 us;
    # copy 2 x 132,382,720 / 7.2e12 s = 36.773 us.
    nvlink5 = INTERCONNECTS["nvlink5"]
    assert nvlink5.two_shot_latency_s == pytest.approx(19e-6, abs=0.5e-6)
    step = _step("sglang", Layout(tp=8, ep=8, dp_attention=True), requests=64, gpu=B200)
    want = (nvlink5.two_shot_latency_s + 21.845e-6) + (8e-6 + 196.998e-6) + 36.773e-6
    assert step.by_op["logits_gather"] == pytest.approx(want, abs=2e-9)


def test_no_logits_gather_where_the_lm_head_is_whole_or_in_prefill() -> None:
    # vLLM keeps the lm_head whole on every DP rank (EngineRules.dp_attention_weights): each
    # rank's own rows, no gather. TP attention: no DP gather either. SGLang's prefill (one row a
    # prompt) pays it too but is not priced here (kvplan.perf.roofline docstring).
    dep = Layout(tp=32, ep=32, dp_attention=True)
    assert "logits_gather" not in _step("vllm", dep, requests=64).by_op
    assert "logits_gather" not in _step("sglang", Layout(tp=8), requests=64, gpu=B200).by_op
    assert "logits_gather" not in _step("sglang", dep, requests=1, phase="prefill").by_op
