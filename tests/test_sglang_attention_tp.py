"""SGLang's attention DP with attention TP > 1 (`--tp T --dp-size D --enable-dp-attention`, D < T
dividing T): D ranks, each an attention-TP group of T / D GPUs (layers/dp_attention.py
compute_dp_attention_world_info, attn_tp_size = tp_size // dp_size: 0.5.3 :191-199, 0.5.6
:227-235, 0.5.9 :230-244). Each rank's KV pool (the capacity `estimate` plans with --dp-size,
the pool `simulate --dp D --dp-attention` serves from: one rule, two callers), the step's
collectives over the attention-TP group, the refusal of a --dp-size that does not divide --tp,
and a simulated run at attention TP 2."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kvplan import load_spec
from kvplan.analysis.inputs import estimate_inputs
from kvplan.capacity.plan import plan_capacity
from kvplan.cli import app
from kvplan.engines.base import Engine
from kvplan.engines.sglang.budget import sglang_preload_gib
from kvplan.hardware.gpus import get_gpu
from kvplan.perf.engine_traits import engine_efficiency
from kvplan.perf.layout import Layout
from kvplan.perf.roofline import step_time

runner = CliRunner()
V3 = "tests/data/configs/deepseek-v3.json"


def _plan(model: str, *, tp: int, dp: int | None, version: str = "0.5.6", gpu: str = "H200"):
    spec = load_spec(model)
    ei = estimate_inputs(spec, context=8192, engine=Engine("sglang"), gpu=gpu, tp=tp,
                         dp_attention=True, attention_dp_size=dp, engine_version=version)
    assert ei.capacity is not None
    return plan_capacity(ei.spec, ei.capacity)


def test_deepseek_v3_tp16_dp2_pool_per_rank_by_hand() -> None:
    # DeepSeek-V3 (config: hidden 7,168, 61 layers of which 3 dense (intermediate 18,432) and
    # 58 MoE (256 routed experts of 2,048, one shared of 2,048), 128 heads, q_lora_rank 1,536,
    # kv_lora_rank 512, qk_nope 128, qk_rope 64, v_head 128, vocab 129,280; block-FP8 weights,
    # 128 x 128 blocks with a float32 scale each) under SGLang 0.5.6 `--tp 16 --dp-size 2
    # --enable-dp-attention` on H200: 2 ranks of attention TP 8, the experts TP over 16.
    #
    # Weights on one GPU:
    # - embeddings whole (VocabParallelEmbedding enable_tp=not is_dp_attention_enabled(),
    #   models/deepseek_v2.py 0.5.6 :3139-3143): 129,280 x 7,168 x 2 B = 1,853,358,080.
    # - attention over the 8 GPUs of the rank (:1192-1205 num_local_heads = 128 / 8 = 16):
    #   fused q_a + kv_a replicated (:1217 ReplicatedLinear) 7,168 x (1,536 + 576) = 15,138,816
    #   FP8 bytes; q_b 1,536 x 16 x 192 = 4,718,592; kv_b 512 x 16 x 256 = 2,097,152; o_proj
    #   16 x 128 x 7,168 = 14,680,064 (:1225-1290, tp_size=attn_tp_size); q_a / kv_a norms
    #   (1,536 + 512) x 2 B = 4,096; the absorbed w_kc / w_vc, kv_b in bf16 (:1339 and
    #   post_load_weights) 512 x 4,096 x 2 B = 4,194,304: 40,833,024 a layer, x 61 =
    #   2,490,814,464 (at attention TP 1: 220,663,808 a layer, 13,460,492,288).
    # - dense MLPs and the shared experts over the TP group of 16 (attention DP leaves them
    #   split, kvplan.engines.sglang.engine `dp_attention_weights`): 3 x 3 x 7,168 x 1,152 +
    #   58 x 3 x 7,168 x 128 = 74,317,824 + 159,645,696 = 233,963,520.
    # - routed experts TP over 16: 256 x 3 x 7,168 x 128 x 58 = 40,869,298,176, the routers
    #   (256 x 7,168 bf16 + 256 float32 biases) x 58 = 212,920,320: 41,082,218,496.
    # - lm_head over 16: 8,080 x 7,168 x 2 B = 115,834,880; norms (2 a layer + the final)
    #   123 x 7,168 x 2 B = 1,763,328.
    # - FP8 scales, 4 B a 128 x 128 block: attention (2,112 -> 17 x 56) + (24 x 12) + (32 x 4)
    #   + (56 x 16) = 2,264 a layer x 61 = 138,104; experts (2 x 56 + 56) x 256 x 58 =
    #   2,494,464; dense (18 x 56 + 56 x 9) x 3 = 4,536; shared 168 x 58 = 9,744: 2,646,848
    #   blocks x 4 B = 10,587,392.
    # - kvplan's rotary table (163,840 positions x 64 x 2 B = 20,971,520; the layout does not
    #   move it; kvplan.weights.base `rope_cache_elements`).
    weights = (1_853_358_080 + 61 * 40_833_024 + 233_963_520 + 40_869_298_176 + 212_920_320
               + 115_834_880 + 1_763_328 + 2_646_848 * 4 + 20_971_520)
    assert weights == 45_809_511_680
    # The budget (SGLang's profile_max_num_token): (total - in use before weights) x
    # mem_fraction_static - weights. H200: torch total 150,119,844,413 B = 143,165 MiB; in use
    # before the weights at TP 16: kvplan's interpolation of public logs (a TP rule,
    # sglang_preload_gib). mem_fraction_static (server_args.py 0.5.6 :822-842): 512 + 1.5 x
    # 8,192 (chunked prefill) + 2 x 512 (cuda_graph_max_bs at TP >= 4) + 16 x 1 / 8 x 1,024 +
    # 512 x dp_size 2 x 3 + 512 x 2 x 1.5 (bs > 300) = 20,480 MiB (above the 10,240 floor);
    # round((143,165 - 20,480) / 143,165, 3) = 0.857 (with dp_size 16 it would be 52,736 MiB
    # reserved: 0.632).
    total = get_gpu("H200").reported_total_bytes
    assert total == 150_119_844_413 and total // 2**20 == 143_165
    fraction = round((143_165 - 20_480) / 143_165, 3)
    assert fraction == 0.857
    preload = int(sglang_preload_gib(tp=16, platform="cuda", total_bytes=total)[0] * 2**30)
    budget = int((total - preload) * fraction) - weights
    # One token of the MLA pool, whole on every GPU of the rank (model_runner.py 0.5.6:
    # (kv_lora_rank + qk_rope_head_dim) x layers x 2 B, no TP split): 576 x 61 x 2 = 70,272 B.
    tokens = budget // (576 * 61 * 2)
    plan = _plan(V3, tp=16, dp=2)
    assert (plan.mem_fraction, plan.weights_bytes, plan.per_gpu_bytes_per_token) == (
        0.857, weights, 70_272)
    assert plan.kv_budget_bytes == budget
    assert plan.token_capacity == tokens == 1_129_469
    # Each rank's requests in its own pool: the total is 2 ranks' worth.
    assert plan.total_max_requests == 2 * plan.max_requests
    # Attention TP 1 (dp 16) holds the attention whole (220,663,808 B a layer) with its scales
    # (17 x 56 + 192 x 12 + 256 x 4 + 56 x 128 = 11,448 blocks a layer, 9,184 more) and
    # reserves 16 ranks' graph padding (fraction 0.632).
    one = _plan(V3, tp=16, dp=16)
    assert one.mem_fraction == 0.632
    assert one.weights_bytes == weights + 61 * (220_663_808 - 40_833_024) + 61 * 9_184 * 4
    assert one.token_capacity < plan.token_capacity


def test_gqa_kv_heads_split_over_the_attention_tp_group() -> None:
    # Qwen3-30B-A3B (48 layers, 4 KV heads of 128) at `--tp 4 --dp-size 2`: attention TP 2, so
    # each GPU of a rank caches 4 / 2 = 2 heads (model_runner.py 0.5.6 :1416-1423
    # get_num_kv_heads(get_attention_tp_size())): 48 x 2 x 128 x 2 (K, V) x 2 B = 49,152 B a
    # token; one rank a GPU (dp 4) caches all 4: 98,304 B.
    assert _plan("tests/data/configs/qwen3-30b-a3b.json", tp=4, dp=2).per_gpu_bytes_per_token \
        == 49_152
    assert _plan("tests/data/configs/qwen3-30b-a3b.json", tp=4, dp=4).per_gpu_bytes_per_token \
        == 98_304


def test_a_dp_size_sglang_refuses_is_refused_in_one_line() -> None:
    # server_args.py _handle_data_parallelism (0.5.3 :949-956, 0.5.6 :1491-1498, 0.5.9
    # :2109-2116): --dp-size 1 turns DP attention off; tp_size % dp_size == 0 is asserted.
    base = ["estimate", V3, "--engine", "sglang", "--gpu", "H200", "--tp", "16"]
    for extra, said in ((["--dp-size", "3", "--dp-attention"], "--dp-size 3: attention DP "
                         "needs 2 or more ranks dividing --tp 16"),
                        (["--dp-size", "2"], "--dp-size 2: the attention-DP ranks; needs "
                         "--dp-attention")):
        res = runner.invoke(app, [*base, *extra])
        assert res.exit_code == 2
        assert said in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_estimate_pool_equals_simulate_pool() -> None:
    # One rule, two callers: `estimate --dp-size 2 --dp-attention` and `simulate --dp 2
    # --dp-attention` at --tp 16 size the same per-rank pool (PlanInputs.attention_dp_size).
    common = [V3, "--engine", "sglang", "--engine-version", "0.5.6", "--gpu", "H200",
              "--tp", "16", "--dp-attention", "--format", "json"]
    est = runner.invoke(app, ["estimate", *common, "--dp-size", "2", "--context", "8192"])
    assert est.exit_code == 0, est.stderr
    cap = json.loads(est.stdout)
    cap = cap.get("capacity", cap)
    sim = runner.invoke(app, ["simulate", *common, "--dp", "2", "--max-model-len", "8192",
                              "--num-requests", "4", "--concurrency", "4",
                              "--input-len", "256", "--output-len", "4"])
    assert sim.exit_code == 0, sim.stderr
    out = json.loads(sim.stdout)
    assert out["num_blocks"] * out["block_size"] == cap["token_capacity"] == 1_129_469
    assert (out["tp"], out["dp"]) == (16, 2)


def test_simulate_at_attention_tp_2_finishes_every_request() -> None:
    # `--tp 8 --dp 4 --enable-dp-attention`: 4 ranks of 2 GPUs on one H200 node.
    res = runner.invoke(app, ["simulate", V3, "--engine", "sglang", "--gpu", "H200", "--tp", "8",
                              "--dp", "4", "--dp-attention", "--max-model-len", "8192",
                              "--num-requests", "40", "--rate", "20", "--input-len", "700",
                              "--output-len", "30", "--format", "json"])
    assert res.exit_code == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["num_requests"] == 40 and out["output_tokens"] == 40 * 30
    assert out["input_tokens"] == 40 * 700


B200 = get_gpu("B200")


def _decode(layout: Layout, requests: int):
    return step_time(load_spec("deepseek-v3"), B200, tokens=requests, context=2048,
                     requests=requests, layout=layout, eff=engine_efficiency("sglang"))


def test_decode_gather_over_attention_tp_2() -> None:
    # B200 (NVLink 5: 588 GB/s, 8 us a collective's latency), `--tp 8 --ep 8 --dp-size 4`: 4
    # ranks of attention TP 2, 64 requests each. Every layer's MLP gathers (no --moe-a2a-backend;
    # the dense layers' MLP FULL), so the attention output stays partial and the gather sums it:
    # no attention-TP all-reduce (communicator.py 0.5.6 :734-761 dp_gather_partial). In:
    # `_dp_gather_via_all_gather` (dp_attention.py 0.5.6 :478-495) reduce-scatters the rank's
    # 64 rows over its 2 GPUs (8 us + 1/2 x 64 x 7,168 x 2 B / 588e9 = 8.780 us), then
    # all-gathers the 4 ranks' 256 rows over the 8 GPUs (8 us + 7/8 x 256 x 7,168 x 2 / 588e9 =
    # 13.461 us); out, `dp_reduce_scatter_tensor` (:552-560) the same two in reverse: 61 layers.
    step = _decode(Layout(tp=8, ep=8, dp_attention=True, attn_tp=2), requests=64)
    part = 8e-6 + 1 / 2 * 64 * 7168 * 2 / 588e9
    half = 8e-6 + 7 / 8 * 256 * 7168 * 2 / 588e9
    assert part == pytest.approx(8.780e-6, abs=1e-9) and half == pytest.approx(13.461e-6, abs=1e-9)
    assert step.by_op["dp_gather_all_gather"] == pytest.approx(61 * (half + part))
    assert step.by_op["dp_gather_reduce_scatter"] == pytest.approx(61 * (half + part))
    assert step.by_op.get("tp_all_reduce", 0.0) == 0.0
    # Attention TP 1 (dp 8): 512 gathered rows, no attention-TP part.
    one = _decode(Layout(tp=8, ep=8, dp_attention=True), requests=64)
    assert one.by_op["dp_gather_all_gather"] == pytest.approx(
        61 * (8e-6 + 7 / 8 * 512 * 7168 * 2 / 588e9))



def _sim_json(*extra: str) -> dict:
    res = runner.invoke(app, ["simulate", V3, "--engine", "sglang", "--gpu", "H200", "--tp", "8",
                              "--dp", "4", "--dp-attention", "--max-model-len", "8192",
                              "--num-requests", "12", "--concurrency", "12", "--input-len", "300",
                              "--output-len", "20", "--format", "json", *extra])
    assert res.exit_code == 0, res.stderr
    return json.loads(res.stdout)


def test_each_rank_takes_the_chunk_and_running_cap_divided_by_dp_size() -> None:
    # server_args.py _handle_data_parallelism (0.5.6 :1496-1499): under DP attention
    # chunked_prefill_size // dp_size, the H200's default 8,192 // 4 = 2,048 a rank (the
    # simulated step's token budget), a given one too (4,096 // 4 = 1,024); tp_worker.py (0.5.6
    # :290-297): a given --max-running-requests // dp_size a rank's scheduler, 8 // 4 = 2.
    assert _sim_json()["max_num_batched_tokens"] == 2048
    assert _sim_json("--chunked-prefill-size", "4096")["max_num_batched_tokens"] == 1024
    assert _sim_json("--max-num-seqs", "8")["max_num_seqs"] == 2
    res = runner.invoke(app, ["simulate", V3, "--engine", "sglang", "--gpu", "H200", "--tp", "8",
                              "--dp", "4", "--dp-attention", "--max-model-len", "8192",
                              "--num-requests", "4", "--concurrency", "2", "--max-num-seqs", "3"])
    assert res.exit_code == 2 and "asserts the quotient above 0" in res.stderr
