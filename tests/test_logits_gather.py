"""SGLang's split lm_head under DP attention: a decode or prefill step gathers every DP rank's
hidden rows, runs the lm_head's vocabulary shard on them and all-gathers the shards' logits,
whole, before each rank keeps its own rows (kvplan.perf.step_comm, `logits gather`).

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


def test_no_logits_gather_where_the_lm_head_is_whole() -> None:
    # vLLM keeps the lm_head whole on every DP rank (EngineRules.dp_attention_weights): each
    # rank's own rows, no gather. TP attention: no DP gather either.
    dep = Layout(tp=32, ep=32, dp_attention=True)
    assert "logits_gather" not in _step("vllm", dep, requests=64).by_op
    assert "logits_gather" not in _step("vllm", dep, requests=4, phase="prefill").by_op
    # (Plain TP gathers the vocabulary shards instead: `tp_logits_gather`, below.)
    assert "logits_gather" not in _step("sglang", Layout(tp=8), requests=64, gpu=B200).by_op


def test_sglang_dp8_prefill_gathers_each_prompts_last_row_from_every_rank() -> None:
    # sgldp64: an extend step samples each request's last token (logits_processor.py
    # 0.5.8.post1 :421-440, `last_index` = cumsum(extend_seq_lens) - 1; 0.5.9 :428), a rank
    # counting its batch size (`num_tokens_for_logprob`, scheduler_dp_attn_mixin.py
    # 0.5.8.post1 :148-159), the ranks' counts summed (:221 `global_dp_buffer_len`, SUM_LEN
    # :198, dp_attention.py :498-511 -> `_dp_gather_via_all_reduce`), then the same lm_head
    # shard and logits all-gather as a decode step (:858-946).
    # DeepSeek-V3 (hidden 7,168, vocabulary 129,280 = 64 x 2,020) on H100 DP 8 EP 8, a prefill
    # step of 4 prompts a rank (the ranks even): 4 x 8 = 32 rows.
    # - hidden rows: 32 x 7,168 x 2 B = 458,752 B, over 256 KiB and under 8 MiB on 8 GPUs: the
    #   custom two-shot all-reduce (its fixed part measured, 13.102 us: nvlink4's
    #   two_shot_latency_s) + 2 x 7/8 x 458,752 / 360e9 s = 13.102 + 2.230 us;
    # - the logits: 32 x 129,280 x 2 B = 8,273,920 B, a ring half: 10 us + 7/8 x 8,273,920 /
    #   360e9 s = 10 + 20.110 us;
    # - the copy: 2 x 8,273,920 B at 3.35 TB/s x 0.9 = 5.488 us (over the 4 us floor).
    # 50.931 us a step; before sgldp64 the prefill priced none of it.
    nvlink4 = INTERCONNECTS["nvlink4"]
    assert nvlink4.two_shot_latency_s == pytest.approx(13.102e-6, abs=0.5e-9)
    assert nvlink4.custom_all_reduce_latency_s == pytest.approx(5.718e-6, abs=0.5e-9)
    h100 = get_gpu("H100")
    step = _step("sglang", Layout(tp=8, ep=8, dp_attention=True), requests=4, gpu=h100,
                 phase="prefill")
    ar = nvlink4.two_shot_latency_s + 2 * 7 / 8 * 32 * 7168 * 2 / 360e9
    ag = 10e-6 + 7 / 8 * 32 * 129280 * 2 / 360e9
    copy = 2 * 32 * 129280 * 2 / (3.35e12 * 0.9)
    assert step.by_op["logits_gather"] == pytest.approx(ar + ag + copy)
    assert step.by_op["logits_gather"] == pytest.approx(50.931e-6, abs=1e-9)
    # The simulator's SUM_LEN step: the ranks' own rows summed (`gathered_logits`), here 5
    # rows (4 prompts on one rank, 1 on another, the rest idle): 5 x 7,168 x 2 = 71,680 B,
    # under 256 KiB: one-shot, 5.718 us (measured) + 7 x 71,680 / 360e9 = 5.718 + 1.394 us;
    # logits 5 x 129,280 x 2 = 1,292,800 B: 10 + 7/8 x 1,292,800 / 360e9 = 10 + 3.142 us; copy
    # 2,585,600 B / 3.015e12 = 0.858 us, under the floor: 4 us. 24.254 us.
    spec = load_spec("deepseek-v3")
    summed = step_time(spec, h100, tokens=2048, context=2048, requests=4, phase="prefill",
                       layout=Layout(tp=8, ep=8, dp_attention=True),
                       eff=engine_efficiency("sglang"), gathered_logits=5)
    assert summed.by_op["logits_gather"] == pytest.approx(
        nvlink4.custom_all_reduce_latency_s + 7 * 5 * 7168 * 2 / 360e9
        + 10e-6 + 7 / 8 * 5 * 129280 * 2 / 360e9 + 4e-6)
    assert summed.by_op["logits_gather"] == pytest.approx(24.254e-6, abs=1e-9)


def _qwen3_tp8(engine: str, rows: int, phase: str):
    spec = load_spec("qwen3-8b")
    return step_time(spec, get_gpu("H100"), tokens=rows if phase == "decode" else 2048,
                     context=2048, requests=rows, layout=Layout(tp=8),
                     eff=engine_efficiency(engine), phase=phase)


@pytest.mark.parametrize("engine", ["vllm", "sglang", "trtllm"])
def test_plain_tp_gathers_the_logits_in_every_engine(engine: str) -> None:
    # vLLM 0.10.0 / 0.15.0 / 0.19.0 LogitsProcessor._gather_logits -> all-gather on CUDA, SGLang
    # 0.5.9 logits_processor.py :261-263 / :831-835, TensorRT-LLM's LMHead gather_output=True
    # (kvplan.perf.step_comm, `TP logits gather`). Qwen3-8B (vocabulary 151,936 = 64 x 2,374:
    # no padding) at TP 8 on H100 (NVLink 4: 360 GB/s, 10 us NCCL latency), 200 decode rows:
    # - 200 x 151,936 x 2 B (bf16) = 60,774,400 B gathered, a ring half:
    #   10 us + 7/8 x 60,774,400 / 360e9 s = 10 + 147.716 = 157.716 us;
    # - the reshape copy: 2 x 60,774,400 B at 3.35 TB/s x 0.9 = 40.315 us.
    # 198.030 us a step (vllm200u63's estimate, ~0.16 ms, left the copy out).
    step = _qwen3_tp8(engine, 200, "decode")
    ring = 10e-6 + 7 / 8 * 200 * 151936 * 2 / 360e9
    copy = 2 * 200 * 151936 * 2 / (3.35e12 * 0.9)
    assert step.by_op["tp_logits_gather"] == pytest.approx(ring + copy)
    assert step.by_op["tp_logits_gather"] == pytest.approx(198.030e-6, abs=1e-9)
    assert "logits_gather" not in step.by_op  # no DP gather
    # A prefill step of one prompt samples one row: 303,872 B, 10 + 0.739 us, its copy under
    # the 4 us kernel floor: 14.739 us.
    pre = _qwen3_tp8(engine, 1, "prefill")
    assert pre.by_op["tp_logits_gather"] == pytest.approx(
        10e-6 + 7 / 8 * 151936 * 2 / 360e9 + 4e-6)
    assert pre.by_op["tp_logits_gather"] == pytest.approx(14.739e-6, abs=1e-9)


def test_no_tp_logits_gather_on_one_gpu_or_with_the_lm_head_whole() -> None:
    # TP 1: nothing to gather; vLLM's DP attention at attention TP 1 keeps the lm_head whole.
    spec = load_spec("qwen3-8b")
    one = step_time(spec, get_gpu("H100"), tokens=200, context=2048, requests=200,
                    eff=engine_efficiency("vllm"))
    assert "tp_logits_gather" not in one.by_op
    dep = Layout(tp=32, ep=32, dp_attention=True)
    assert "tp_logits_gather" not in _step("vllm", dep, requests=64).by_op
    # SGLang's split lm_head under DP attention pays its own gather, not this one.
    assert "tp_logits_gather" not in _step("sglang", dep, requests=64).by_op
