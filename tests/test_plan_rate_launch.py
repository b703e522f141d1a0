"""`kvplan plan --rate` answers with the winning layout's launch command, for every engine and
layout (plain, replicas, attention DP), its running-request flag in the engine's own unit so
that each scheduler gets the cap it was simulated with (kvplan.analysis.rate_launch,
EngineRules.running_flag; issues 29, 30)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kvplan._util.errors import InputError
from kvplan.analysis.rate_launch import rate_launch
from kvplan.analysis.simulate.rate_search import LayoutTrial
from kvplan.cli import app
from kvplan.engines.base import Engine
from kvplan.engines.launch import LaunchLayout
from kvplan.sources.resolve import load_model

runner = CliRunner()
REF = "deepseek-ai/DeepSeek-V2-Lite"
# DeepSeek-V2-Lite on H100s, 20 req/s of 4,000 in / 1,000 out (200 requests, seed 0), up to
# 4 GPUs: tests/test_plan_rate_dp_attention.py's stream.
# The scenarios' SLOs were set on the routed experts' one fraction per format, before
# moedefault63 made the experts' shape table the CUDA default: `--no-moe-gemm-by-rows` keeps
# them (these tests are of the launch written for the answer, not of the experts' fraction).
ARGS = ["plan", "deepseek-v2-lite", "--gpu", "H100-80GB", "-c", "8192", "--rate", "20",
        "--slo-ttft-ms", "2000", "--input-len", "4000", "--output-len", "1000",
        "--num-requests", "200", "--seed", "0", "--gpus-per-node", "4", "--no-moe-gemm-by-rows"]


def _trial(tp: int, dp: int, *, ep: int = 1, dp_attention: bool = False, cap: int,
           fraction: float) -> LayoutTrial:
    return LayoutTrial(tp=tp, dp=dp, ep=ep, dp_attention=dp_attention, meets=True,
                       metrics=None, running_cap=cap, mem_fraction=fraction)


def _argv(engine: Engine, trial: LayoutTrial, gpus_per_node: int = 4) -> list[list[str]]:
    spec = load_model("deepseek-v2-lite")[0]
    plan = rate_launch(spec, trial, engine=engine, gpu="H100-80GB", context=8192,
                       kv_dtype="bf16", gpus_per_node=gpus_per_node)
    return [c.argv for c in plan.commands]


def test_running_flag_in_each_engines_unit() -> None:
    """256 running requests per scheduler. Attention DP over 8 ranks: SGLang's
    --max-running-requests is the server's, each rank taking it // dp_size
    (_resolve_max_num_reqs, model_runner "Init max running requests"): 8 x 256 = 2048; vLLM's
    --max-num-seqs applies per data-parallel rank (config/scheduler.py 0.32.0): 256;
    TensorRT-LLM's --max_batch_size is each rank's executor's max_num_active_requests: 256.
    Replicas (4 of TP 2): every engine's flag is each replica's (SGLang divides only under
    --enable-dp-attention: ModelRunner.dp_size is 1 without it): 256."""
    adp_sglang = LaunchLayout(tp=8, dp=8, ep=8, dp_attention=True)
    adp_vllm = LaunchLayout(tp=1, dp=8, ep=8)  # vLLM's DP engines: no dp_attention flag
    replicas = LaunchLayout(tp=2, dp=4)
    assert Engine.sglang.rules.running_flag(adp_sglang, 256) == 2048
    assert Engine.trtllm.rules.running_flag(adp_sglang, 256) == 256
    assert Engine.vllm.rules.running_flag(adp_vllm, 256) == 256
    for engine in Engine:
        assert engine.rules.running_flag(replicas, 256) == 256
    # The inverse of the static plan's rule for a concurrency that divides evenly: 64 requests
    # over 8 attention-DP ranks (running_cap) are 8 a rank, whose flag gives back running_cap.
    for engine, lay in ((Engine.sglang, adp_sglang), (Engine.vllm, adp_vllm)):
        rank = 64 // 8
        assert engine.rules.running_flag(lay, rank) == engine.rules.running_cap(lay, 64)


def test_sglang_attention_dp_launch_by_hand() -> None:
    """4 attention-DP ranks on 4 GPUs (simulate --tp 4 --dp 4 --ep 4 --dp-attention), each
    simulated with 4,096 running requests at mem_fraction_static 0.692: --tp-size 4 --dp-size 4
    --enable-dp-attention --ep-size 4 (kvplan.engines.sglang.launch, plan's own writer), and
    --max-running-requests 4 x 4,096 = 16,384 (each rank takes 16,384 // 4 = 4,096)."""
    trial = _trial(1, 4, ep=4, dp_attention=True, cap=4096, fraction=0.692)
    assert _argv(Engine.sglang, trial) == [[
        "python", "-m", "sglang.launch_server", "--model-path", REF, "--tp-size", "4",
        "--dp-size", "4", "--enable-dp-attention", "--ep-size", "4", "--context-length",
        "8192", "--mem-fraction-static", "0.692", "--max-running-requests", "16384"]]


def test_vllm_attention_dp_launch_by_hand() -> None:
    """2 DP engines of TP 1, EP over both (simulate --tp 1 --dp 2 --ep 2 --dp-attention), each
    simulated with 1,024 running requests at gpu_memory_utilization 0.92: --max-num-seqs 1024,
    per data-parallel rank as vLLM applies it."""
    trial = _trial(1, 2, ep=2, dp_attention=True, cap=1024, fraction=0.92)
    assert _argv(Engine.vllm, trial) == [[
        "vllm", "serve", REF, "--tensor-parallel-size", "1", "--data-parallel-size", "2",
        "--enable-expert-parallel", "--max-model-len", "8192", "--gpu-memory-utilization",
        "0.92", "--max-num-seqs", "1024"]]


def test_trtllm_attention_dp_launch_by_hand() -> None:
    """2 ranks of attention TP 1, ep 2 (simulate --tp 1 --dp 2 --ep 2 --dp-attention), each
    simulated with max_batch_size 2,048 at free_gpu_memory_fraction 0.9: tp_size 2, ep_size 2,
    enable_attention_dp in the options file, --max_batch_size 2048 (each rank's)."""
    spec = load_model("deepseek-v2-lite")[0]
    trial = _trial(1, 2, ep=2, dp_attention=True, cap=2048, fraction=0.9)
    plan = rate_launch(spec, trial, engine=Engine.trtllm, gpu="H100-80GB", context=8192,
                       kv_dtype="bf16", gpus_per_node=4)
    assert [c.argv for c in plan.commands] == [[
        "trtllm-serve", REF, "--backend", "pytorch", "--tp_size", "2", "--pp_size", "1",
        "--ep_size", "2", "--max_seq_len", "8192", "--max_batch_size", "2048",
        "--kv_cache_free_gpu_memory_fraction", "0.9", "--extra_llm_api_options",
        "kvplan-trtllm.yaml"]]
    assert dict(plan.files) == {"kvplan-trtllm.yaml": "enable_attention_dp: true\n"}


def test_replicas_take_the_per_replica_cap() -> None:
    """SGLang 2 replicas of TP 2 on one node (--dp-size 2 without DP attention), 300 requests
    each: --max-running-requests 300, not 600. vLLM 6 replicas of TP 1 over nodes of 4: the
    head runs 4 engines, node 1 the other 2 from rank 4, each --max-num-seqs 300."""
    sgl = _argv(Engine.sglang, _trial(2, 2, cap=300, fraction=0.8))
    assert len(sgl) == 1 and "--enable-dp-attention" not in sgl[0]
    assert sgl[0][sgl[0].index("--dp-size") + 1] == "2"
    assert sgl[0][sgl[0].index("--max-running-requests") + 1] == "300"
    head, other = _argv(Engine.vllm, _trial(1, 6, cap=300, fraction=0.9))
    assert head[head.index("--data-parallel-size-local") + 1] == "4"
    assert other[other.index("--data-parallel-start-rank") + 1] == "4"
    assert "--headless" in other
    assert all(c[c.index("--max-num-seqs") + 1] == "300" for c in (head, other))


def _per_scheduler(argv: list[str]) -> int:
    """The running requests each scheduler of a launch gets, read off the argv as each engine's
    code takes its flag (written here apart from EngineRules.running_flag): SGLang's
    --max-running-requests // --dp-size under --enable-dp-attention, else whole; vLLM's
    --max-num-seqs and TensorRT-LLM's --max_batch_size whole (per DP rank / per rank)."""
    if "--max-running-requests" in argv:
        flag = int(argv[argv.index("--max-running-requests") + 1])
        dp = int(argv[argv.index("--dp-size") + 1]) if "--dp-size" in argv else 1
        return flag // dp if "--enable-dp-attention" in argv else flag
    name = "--max-num-seqs" if "--max-num-seqs" in argv else "--max_batch_size"
    return int(argv[argv.index(name) + 1])


def _answer(*args: str) -> dict:
    r = runner.invoke(app, [*ARGS, *args, "-f", "json"], env={"COLUMNS": "80"})
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_attention_dp_answers_launch_with_the_simulated_cap() -> None:
    """Each engine's answer on the stream is an attention-DP layout (simulated when this test
    was written: vLLM 2 ranks at p90 TPOT 16.0 ms within 16.8; TensorRT-LLM 2 ranks 19.7 ms
    within 20, the 2-GPU plain layouts 20.4 and 22.7 missing; SGLang, since its per-rank chunk
    and running cap (sgldptp62), on up to 2 GPUs: 2 ranks 21.2 ms within 22, the plain 1 x 2
    and 2 x 1 at 22.9 and 25.8 missing -- the TensorRT-LLM and SGLang SLOs picked after seeing
    the values). The JSON's `launch` is plan's own (head first), and the flag, read as the
    engine's code reads it, is the cap the answer was simulated with on every command."""
    # TensorRT-LLM's arm (2 ranks 19.7 ms within 20) ended with presetarch68: the preset names
    # its config's DeepseekV2ForCausalLM, which TensorRT-LLM 1.3's PyTorch registry lacks, so the
    # search refuses it as it refuses the config (its attention-DP launch: tests/test_launch.py,
    # tests/test_plan_rate_dp_attention.py).
    r = runner.invoke(app, [*ARGS, "--engine", "trtllm", "--slo-tpot-ms", "20", "-f", "json"],
                      env={"COLUMNS": "80"})
    assert r.exit_code == 2 and "DeepseekV2ForCausalLM" in r.output
    for engine, slo, ranks, extra in (("vllm", "16.8", 2, ()),
                                      ("sglang", "22", 2, ("--gpus-per-node", "2"))):
        data = _answer("--engine", engine, "--slo-tpot-ms", slo, *extra)
        best = data["best"]
        assert best["dp_attention"] and best["replicas"] == ranks
        assert best["running_cap"] is not None and best["running_cap"] > 0
        commands = data["launch"]["commands"]
        assert commands and all(c["node"] == 0 for c in commands)
        assert all(_per_scheduler(c["argv"]) == best["running_cap"] for c in commands)


def test_table_prints_the_launch() -> None:
    r = runner.invoke(app, [*ARGS, "--slo-tpot-ms", "16.8"], env={"COLUMNS": "80"})
    assert r.exit_code == 0
    lines = r.stdout.splitlines()
    assert "# launch:" in lines and f"vllm serve {REF} \\" in lines
    assert "    --max-num-seqs 1024" in lines
    text = " ".join(line.strip() for line in lines)
    assert "gives each of the 2 attention-DP ranks the 1,024 running requests" in text


def test_no_answer_no_launch() -> None:
    r = runner.invoke(app, [*ARGS, "--slo-tpot-ms", "1", "--gpus-per-node", "1", "-f", "json"],
                      env={"COLUMNS": "80"})
    assert r.exit_code == 3
    data = json.loads(r.stdout)
    assert data["launch"] is None and data["gpus"] is None


def test_a_launch_the_engine_refuses_keeps_the_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine's launch writer refusing the answer (an InputError) leaves the answer, says
    why in one note and in the JSON's `launch_refused`, and gives no launch."""
    import kvplan.analysis.rate_plan as rate_plan

    def refuse(*args: object, **kwargs: object) -> None:
        raise InputError("--kv-dtype x: no such flag")

    monkeypatch.setattr(rate_plan, "rate_launch", refuse)
    data = _answer("--slo-tpot-ms", "16.8", "--gpus-per-node", "2")
    assert data["gpus"] == 2 and data["launch"] is None
    assert data["launch_refused"] == "--kv-dtype x: no such flag"
