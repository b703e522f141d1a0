"""tests/benches/lone_prefill.py: the FP32 router's price worked by hand from the configs, and
hypothesis b checked on a lone 194,599-token prompt: kvplan's simulator chunks it at the run's
budget (vLLM's --max-num-batched-tokens 8192), ceil(194,599 / 8,192) = 24 prefill steps."""

from __future__ import annotations

import pytest

from kvplan import load_spec
from kvplan.analysis.simulate.scheduler import SimRequest
from tests.benches import lone_prefill as lp
from tests.benches import ttft_forensic as tf
from tests.benches.prospective_runs import REPO, load


def test_the_fp32_router_by_hand() -> None:
    # MiniMax-M2 (tests/data/configs/minimax-m2.json: 62 layers, 256 experts, hidden 3072): a
    # token's router is 2 x 62 x 256 x 3072 = 97,517,568 FLOPs; at 67 TFLOPS x 0.7 = 46.9
    # TFLOPS, 2.0792 us. GLM-4.5 / 4.6 (glm-4.5.json: 89 MoE layers of 92, 160 experts,
    # hidden 5120): 2 x 89 x 160 x 5120 = 145,817,600 FLOPs, 3.1091 us on H200 (vLLM 0.11.0).
    minimax = load_spec(str(REPO / "tests/data/configs/minimax-m2.json"))
    glm = load_spec(str(REPO / "tests/data/configs/glm-4.5.json"))
    assert lp.router_s_per_token(minimax, "H100-80GB", "vllm", "0.20.0") == pytest.approx(
        2.0792e-6, rel=1e-4)
    assert lp.router_s_per_token(glm, "H200", "vllm", "0.11.0") == pytest.approx(
        3.1091e-6, rel=1e-4)
    # B200 (fp32bw63: HGX B200 FP32 600 TFLOPS / 8 = 75): 97,517,568 FLOPs at 75 x 0.7 = 52.5
    # TFLOPS, 1.8575 us. No FP32 peak read for GB200; GLM-4.5's gate in the compute dtype on
    # vLLM 0.10.0 and SGLang 0.5.9; Llama has no router.
    assert lp.router_s_per_token(minimax, "B200", "vllm", "0.20.0") == pytest.approx(
        1.8575e-6, rel=1e-4)
    assert lp.router_s_per_token(minimax, "GB200", "vllm", "0.20.0") is None
    assert lp.router_s_per_token(glm, "H200", "vllm", "0.10.0") is None
    assert lp.router_s_per_token(glm, "H200", "sglang", "0.5.9") is None
    llama = load_spec(str(REPO / "tests/data/configs/llama-3.1-70b.json"))
    assert lp.router_s_per_token(llama, "H100-80GB", "vllm", "0.20.0") is None


def test_d_off_is_kvplan_before_the_rule() -> None:
    # A lone 1,063-token MiniMax prompt's prefill: without the rule, exactly the FP32 router's
    # 1,063 x 2.0792 us (one step, under the 8,192 budget) less.
    runs = {r["id"]: r for r in load(tf.DATA / "prospective58.json")["runs"]}
    run = runs["Wentao274 vLLM MiniMax-M2.5 H100 TP8 EP8 test_05 1024/512 chat conc 1 "
               "(1000 prompts)"]
    _, _, split = lp.prefill_split(run)
    with lp.without_fp32_router():
        _, _, before = lp.prefill_split(run)
    assert before["FP32 router"] == 0.0
    tokens = round(tf.prompt_tokens(run))
    assert split["FP32 router"] == pytest.approx(tokens * 2.0792e-6, rel=1e-4)


def test_the_lone_194k_prompt_is_chunked_at_the_runs_budget() -> None:
    runs = {r["id"]: r for r in load(tf.DATA / "prospective58.json")["runs"]}
    run = runs["Wentao274 vLLM MiniMax-M2.5 H100 TP8 EP8 test_02 194560/1024 chat conc 1 "
               "(100 prompts)"]
    budget, steps, _ = lp.prefill_split(run)
    assert (budget, steps) == (8192, 24)
    spec = load_spec(str(REPO / run["model"]))
    inputs = tf.estimate_inputs(spec, context=run["max_model_len"], gpu=run["gpu"], tp=run["tp"],
                                engine_version=run["vllm"],
                                mem_fraction=run["gpu_memory_utilization"],
                                max_num_seqs=run["max_num_seqs"],
                                max_num_batched_tokens=run["max_num_batched_tokens"],
                                expert_parallel=True)
    sim, _ = tf.setup(spec, inputs)
    engine = tf._engine(sim, sim.plan.num_blocks, timeline=False, bulk_decode=True)
    chunks: list[int] = []
    inner = engine._finish_step

    def finish(scheduled: list[tuple[SimRequest, int]], *rest: object) -> int:
        chunks.extend(n for r, n in scheduled if r.rid == 0 and r.num_output == 0)
        return inner(scheduled, *rest)  # type: ignore[arg-type]

    engine._finish_step = finish  # type: ignore[method-assign]
    engine.run(tf.requests(run)[:1], concurrency=1)
    assert chunks == [8192] * 23 + [194_599 - 23 * 8192]
