"""`--engine-arg`: the engines' own flags, as each engine spells them, on `simulate` and
`plan --rate` (kvplan.engines.engine_args, each engine's table kvplan.engines.<name>.engine_args,
applied by kvplan.analysis.simulate.engine_args)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kvplan._util.errors import InputError
from kvplan.analysis.simulate.engine_args import EngineSettings, setting_paths, with_engine_args
from kvplan.analysis.simulate.sglang_scheduler import SglangOptionsSim
from kvplan.cli import app
from kvplan.engines.base import Engine
from kvplan.engines.trtllm.dp_balance import AdpBalance

runner = CliRunner()
SIM = ["simulate", "llama-3.1-8b", "--gpu", "H100-80GB", "--concurrency", "4",
       "--num-requests", "12", "--input-len", "256", "--output-len", "16", "-f", "json"]
DSV3_DEP8 = ["simulate", "tests/data/configs/deepseek-v3.json", "--engine", "trtllm", "--gpu",
             "H200", "--tp", "1", "--dp", "8", "--ep", "8", "--dp-attention", "--concurrency",
             "16", "--num-requests", "64", "--input-len", "512", "--output-len-dist",
             "uniform:8:32", "-f", "json"]


def _json(args: list[str]) -> dict:  # type: ignore[type-arg]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.stderr
    return json.loads(res.stdout)  # type: ignore[no-any-return]


def _refused(args: list[str], *needles: str) -> str:
    res = runner.invoke(app, args)
    assert res.exit_code == 2 and res.stdout == "", (res.exit_code, res.stdout)
    assert res.stderr.startswith("kvplan: error: ") and res.stderr.count("\n") == 1, res.stderr
    assert "Traceback" not in res.stderr
    for needle in needles:
        assert needle in res.stderr, (needle, res.stderr)
    return res.stderr


# --- the tables -------------------------------------------------------------------------------

@pytest.mark.parametrize("engine", list(Engine))
def test_every_flag_sets_a_simulator_setting_and_cites_its_source(engine: Engine) -> None:
    table = engine.engine_flags
    assert table.engine == engine.rules.display_name
    names = [f.flag for f in table.flags]
    assert len(names) == len(set(names)) and names
    paths = setting_paths()
    for f in table.flags:
        # trtllm.adp_balance is one setting of three keys (TrtllmFlags.settings).
        assert f.sets in paths, (f.flag, f.sets)
        assert "/" in f.source and ".py" in f.source, f.source
        assert f.help.endswith("."), f.flag


def test_setting_paths_are_the_settings_fields() -> None:
    paths = setting_paths()
    assert {"max_num_seqs", "max_num_batched_tokens", "prefix_caching", "async_scheduling",
            "sglang.scheduler_recv_interval", "sglang.max_prefill_tokens",
            "trtllm.adp_balance", "trtllm.policy"} <= paths
    assert "applied" not in paths


# --- parsing ----------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["--max-prefill-tokens=8192", "--max-prefill-tokens 8192",
                                  " --max-prefill-tokens = 8192 "])
def test_the_engines_spellings_parse(text: str) -> None:
    got = with_engine_args(EngineSettings(), Engine.sglang, [text])
    assert got.sglang.max_prefill_tokens == 8192
    assert got.applied_dicts() == [{"flag": "--max-prefill-tokens", "value": 8192,
                                    "sets": "sglang.max_prefill_tokens", "given": text}]


def test_switches_and_booleans() -> None:
    sg = with_engine_args(EngineSettings(), Engine.sglang,
                          ["--disable-overlap-schedule", "--disable-radix-cache",
                           "--enable-piecewise-cuda-graph"], "0.5.9")
    assert (sg.async_scheduling, sg.prefix_caching, sg.sglang.piecewise_cuda_graph) == (
        False, False, True)
    # disable_overlap_scheduler: true is the overlap scheduler off (the flag negated).
    trt = with_engine_args(EngineSettings(), Engine.trtllm,
                           ["disable_overlap_scheduler: true", "enable_chunked_prefill=True",
                            "scheduler_config.capacity_scheduler_policy=MAX_UTILIZATION",
                            "kv_cache_config.enable_block_reuse=false"])
    assert trt.async_scheduling is False and trt.prefix_caching is False
    assert (trt.trtllm.chunked_prefill, trt.trtllm.policy) == (True, "max_utilization")


def test_trtllm_attention_dp_keys_make_one_balance() -> None:
    # InferenceX dsr1_fp4_b200_trt.sh's attention_dp_config (tests.benches.
    # aiconfig_agg_dp_script): enable_balance true, timeout_iters 60, batching_wait_iters 0.
    keys = ["attention_dp_config.enable_balance=true", "attention_dp_config.timeout_iters=60",
            "attention_dp_config.batching_wait_iters=0"]
    got = with_engine_args(EngineSettings(), Engine.trtllm, keys)
    assert got.trtllm.adp_balance == AdpBalance(timeout_iters=60, batching_wait_iters=0)
    assert [a["flag"] for a in got.applied_dicts()] == [k.split("=")[0] for k in keys]
    # Only enable_balance: AttentionDpConfig's own counts, 50 and 10.
    alone = with_engine_args(EngineSettings(), Engine.trtllm, keys[:1])
    assert alone.trtllm.adp_balance == AdpBalance(timeout_iters=50, batching_wait_iters=10)
    # enable_balance false, or absent: the engine reads neither count, nothing is balanced.
    off = with_engine_args(EngineSettings(), Engine.trtllm,
                           ["attention_dp_config.enable_balance=false", keys[1]])
    assert off.trtllm.adp_balance is None
    assert with_engine_args(EngineSettings(), Engine.trtllm, keys[1:]).trtllm.adp_balance is None


@pytest.mark.parametrize(("engine", "texts", "message"), [
    (Engine.sglang, ["--max-prefill-token=8"], "--max-prefill-token is not a SGLang flag"),
    (Engine.sglang, ["--scheduler-recv-interval=0"], "expects an integer >= 1"),
    (Engine.sglang, ["--scheduler-recv-interval=2.5"], "expects an integer >= 1"),
    (Engine.sglang, ["--schedule-policy=lof"], "expects one of fcfs, lpm"),
    (Engine.sglang, ["--disable-radix-cache=true"], "expects no value (a switch)"),
    (Engine.sglang, ["--max-prefill-tokens"], "got no value"),
    (Engine.sglang, ["--max-prefill-tokens=8", "--max-prefill-tokens=9"], "given twice"),
    (Engine.vllm, ["--async-scheduling", "--no-async-scheduling"],
     "sets the same setting otherwise"),
    (Engine.vllm, ["--max-num-seqs=-1"], "expects an integer >= 1"),
    (Engine.vllm, ["--scheduler-recv-interval=4"], "not a vLLM flag"),
    (Engine.trtllm, ["attention_dp_config.enable_balance=maybe"], "expects true or false"),
    (Engine.trtllm, ["attention_dp_config.timeout_iters=-1"], "expects an integer >= 0"),
    (Engine.trtllm, ["scheduler_config.capacity_scheduler_policy=STATIC_BATCH"],
     "GUARANTEED_NO_EVICT, MAX_UTILIZATION"),
])
def test_bad_flags_are_refused(engine: Engine, texts: list[str], message: str) -> None:
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        with_engine_args(EngineSettings(), engine, texts)


@pytest.mark.parametrize(("text", "version", "ok"), [
    # Read in PyPI's sdists: no scheduler_recv_interval in 0.4.10.post2's server_args.py, one
    # at :273 in 0.5.1's (0.5.0 has no sdist).
    ("--scheduler-recv-interval=2", "0.4.10.post2", False),
    ("--scheduler-recv-interval=2", "0.5.1", True),
    ("--scheduler-recv-interval=2", None, True),
    # --enable-piecewise-cuda-graph: 0.5.4 (prefill_graph.py) until 0.5.14 dropped it.
    ("--enable-piecewise-cuda-graph", "0.5.3", False),
    ("--enable-piecewise-cuda-graph", "0.5.9", True),
    ("--enable-piecewise-cuda-graph", "0.5.14", False),
    ("--enable-piecewise-cuda-graph", None, False),
    ("--disable-piecewise-cuda-graph", "0.5.9", False),
    ("--disable-piecewise-cuda-graph", "0.5.10.post1", True),
])
def test_a_flag_the_release_lacks_is_refused(text: str, version: str | None, ok: bool) -> None:
    if ok:
        assert with_engine_args(EngineSettings(), Engine.sglang, [text], version).applied
    else:
        with pytest.raises(InputError, match="has no --"):
            with_engine_args(EngineSettings(), Engine.sglang, [text], version)


def test_a_kvplan_option_and_a_flag_that_disagree_are_refused() -> None:
    given = EngineSettings(sglang=SglangOptionsSim(schedule_policy="lpm"))
    with pytest.raises(InputError, match="kvplan's own option already set to 'lpm'"):
        with_engine_args(given, Engine.sglang, ["--schedule-policy=fcfs"])
    # The same value twice is no conflict.
    same = with_engine_args(given, Engine.sglang, ["--schedule-policy=lpm"])
    assert same.sglang.schedule_policy == "lpm"


# --- simulate ---------------------------------------------------------------------------------

def test_simulate_sglang_flags_are_applied_and_echoed() -> None:
    data = _json([*SIM, "--engine", "sglang", "--engine-arg=--scheduler-recv-interval=4",
                  "--engine-arg", "--max-prefill-tokens=16384"])
    assert data["engine_args"] == [
        {"flag": "--scheduler-recv-interval", "value": 4,
         "sets": "sglang.scheduler_recv_interval", "given": "--scheduler-recv-interval=4"},
        {"flag": "--max-prefill-tokens", "value": 16384, "sets": "sglang.max_prefill_tokens",
         "given": "--max-prefill-tokens=16384"}]
    assert "engine_args" not in _json([*SIM, "--engine", "sglang"])  # none given: no key


def test_simulate_refusals_are_one_line() -> None:
    _refused([*SIM, "--engine", "sglang", "--engine-arg=--max-prefill-token=8"],
             "--engine-arg '--max-prefill-token=8'", "known: --max-running-requests",
             "--scheduler-recv-interval")
    _refused([*SIM, "--engine", "sglang", "--engine-arg=--scheduler-recv-interval=x"],
             "--scheduler-recv-interval expects an integer >= 1", "server_args.py", "got 'x'")
    _refused([*SIM, "--engine-arg=--max-num-seqs=0"], "--max-num-seqs expects an integer >= 1")
    _refused([*SIM, "--engine", "trtllm", "--engine-arg",
              "attention_dp_config.enable_balance=yes please"], "expects true or false")
    # The balance needs attention-DP ranks (kvplan.analysis.simulate.run.setup).
    _refused([*SIM, "--engine", "trtllm", "--engine-arg",
              "attention_dp_config.enable_balance=true"], "needs --dp-attention")
    _refused([*SIM, "--engine", "sglang", "--engine-version", "0.4.9",
              "--engine-arg=--scheduler-recv-interval=2"],
             "SGLang 0.4.9 has no --scheduler-recv-interval (releases from 0.5.1")
    _refused([*SIM, "--engine", "sglang", "--schedule-policy", "lpm",
              "--engine-arg=--schedule-policy=fcfs"], "already set to 'lpm'")


def test_a_flag_gives_what_kvplans_own_option_gives() -> None:
    """vLLM's --max-num-seqs through --engine-arg is kvplan's --max-num-seqs: the same run."""
    flag = _json([*SIM, "--engine-arg=--max-num-seqs=2"])
    own = _json([*SIM, "--max-num-seqs", "2"])
    for key in ("ttft_ms", "tpot_ms", "e2e_ms", "request_throughput"):
        assert flag[key] == own[key]
    trt = _json([*SIM, "--engine", "trtllm", "--engine-arg", "enable_chunked_prefill=true",
                 "--engine-arg", "scheduler_config.capacity_scheduler_policy=MAX_UTILIZATION"])
    trt_own = _json([*SIM, "--engine", "trtllm", "--enable-chunked-prefill",
                     "--capacity-scheduler-policy", "max_utilization"])
    assert trt["ttft_ms"] == trt_own["ttft_ms"] and trt["tpot_ms"] == trt_own["tpot_ms"]


# Open loop: requests arrive during steps, where the overlap scheduler delays them a step.
SIM_OPEN = [a if a != "--concurrency" else "--rate" for a in SIM]
SIM_OPEN[SIM_OPEN.index("--rate") + 1] = "50"


@pytest.mark.parametrize(("engine", "flag", "own"), [
    ("trtllm", "max_batch_size=1", ["--max-num-seqs", "1"]),
    ("trtllm", "max_num_tokens=256", ["--max-num-batched-tokens", "256"]),
    ("trtllm", "disable_overlap_scheduler=true", ["--no-async-scheduling"]),
    ("sglang", "--max-running-requests=1", ["--max-num-seqs", "1"]),
    ("sglang", "--chunked-prefill-size=128", ["--chunked-prefill-size", "128"]),
    ("sglang", "--disable-overlap-schedule", ["--no-async-scheduling"]),
    ("sglang", "--disable-radix-cache", ["--no-enable-prefix-caching"]),
    ("vllm", "--max-num-batched-tokens=128", ["--max-num-batched-tokens", "128"]),
    ("vllm", "--no-enable-prefix-caching", ["--no-enable-prefix-caching"]),
])
def test_each_flag_with_a_kvplan_option_runs_as_that_option(engine: str, flag: str,
                                                             own: list[str]) -> None:
    base = SIM_OPEN if "overlap" in flag else SIM
    by_flag = _json([*base, "--engine", engine, "--engine-arg", flag])
    by_own = _json([*base, "--engine", engine, *own])
    by_flag.pop("engine_args")
    assert by_flag == by_own
    # Not vacuous: the option changes this run.
    assert by_own != _json([*base, "--engine", engine])


def test_max_num_seqs_one_queues_the_requests() -> None:
    """Direction, vLLM: 4 users in a closed loop, 12 requests of 256 + 16 tokens. With
    --max-num-seqs 1 one request runs at a time, so each waits for those ahead of it to finish
    (a whole request is a prefill and 15 decode steps; by default the 4 are prefilled in one
    step and wait for none). The decode step of one 8B request on an H100 reads the same
    weights as that of 4: TPOT about the same."""
    one = _json([*SIM, "--engine-arg=--max-num-seqs=1"])
    default = _json(SIM)
    assert one["ttft_ms"]["mean"] > 2 * default["ttft_ms"]["mean"]
    assert one["tpot_ms"]["mean"] == pytest.approx(default["tpot_ms"]["mean"], rel=0.05)


def test_sglang_recv_interval_raises_ttft_and_lowers_tpot() -> None:
    """Direction, SGLang --scheduler-recv-interval 8 (SchedulerRecvSkipper): a request sent
    while others decode waits for 8 decode steps' worth of the counter before it is taken, so
    mean TTFT rises; the decodes are interrupted by fewer prefill steps, so mean TPOT falls.
    Output lengths spread (uniform 16-128) so that requests finish at different steps (with
    equal lengths the closed loop's requests finish together and an idle engine takes the next
    at once: the interval changes nothing)."""
    args = ["simulate", "llama-3.1-8b", "--engine", "sglang", "--gpu", "H100-80GB",
            "--concurrency", "16", "--num-requests", "200", "--input-len", "256",
            "--output-len-dist", "uniform:16:128", "-f", "json"]
    base = _json(args)
    slow = _json([*args, "--engine-arg=--scheduler-recv-interval=8"])
    assert slow["ttft_ms"]["mean"] > 1.2 * base["ttft_ms"]["mean"]
    assert slow["tpot_ms"]["mean"] < base["tpot_ms"]["mean"]


def test_trtllm_attention_dp_balance_holds_context_requests() -> None:
    """Direction, TensorRT-LLM attention_dp_config.enable_balance on DeepSeek-V3 DEP8 (H200):
    context requests are held while every rank has generation requests (batching_wait_iters
    10, AdpContextGate), so mean TTFT rises and the generation steps run with fewer context
    steps between them, so mean TPOT falls."""
    base = _json(DSV3_DEP8)
    held = _json([*DSV3_DEP8, "--engine-arg", "attention_dp_config.enable_balance=true"])
    assert held["engine_args"] == [{"flag": "attention_dp_config.enable_balance",
                                    "value": True, "sets": "trtllm.adp_balance",
                                    "given": "attention_dp_config.enable_balance=true"}]
    assert held["ttft_ms"]["mean"] > base["ttft_ms"]["mean"]
    assert held["tpot_ms"]["mean"] < base["tpot_ms"]["mean"]


# --- plan -------------------------------------------------------------------------------------

PLAN_RATE = ["plan", "llama-3.1-8b", "--rate", "2", "--slo-ttft-ms", "2000", "--num-requests",
             "24", "--input-len", "256", "--output-len", "16", "--executor", "local", "-j", "1",
             "-f", "json"]


def test_plan_rate_takes_the_flags() -> None:
    data = _json([*PLAN_RATE, "--engine", "sglang", "--engine-arg=--max-running-requests=2"])
    assert data["engine_args"] == [{"flag": "--max-running-requests", "value": 2,
                                    "sets": "max_num_seqs",
                                    "given": "--max-running-requests=2"}]
    table = runner.invoke(app, [*PLAN_RATE[:-2], "--engine", "sglang",
                                "--engine-arg=--disable-radix-cache"], env={"COLUMNS": "80"})
    assert "Engine flags on every layout: --disable-radix-cache." in table.stdout
    assert data["gpus"] is not None
    assert "engine_args" not in _json(PLAN_RATE)


def test_plan_refuses_the_flags_where_nothing_is_simulated() -> None:
    _refused([*PLAN_RATE, "--engine", "sglang", "--engine-arg=--max-prefill-tokens=x"],
             "--max-prefill-tokens expects an integer >= 1")
    _refused([*PLAN_RATE, "--engine", "trtllm", "--engine-arg",
              "attention_dp_config.enable_balance=true"], "also searches layouts without it")
    _refused(["plan", "llama-3.1-8b", "--engine-arg=--max-num-seqs=8"], "need --rate")
    _refused(["plan", "llama-3.1-8b", "--disagg", "--concurrency", "8",
              "--engine-arg=--max-num-seqs=8"], "--engine-arg", "not taken with --disagg")


def test_help_engines_lists_every_flag() -> None:
    text = runner.invoke(app, ["help", "engines"], env={"COLUMNS": "200"}).stdout
    for engine in Engine:
        assert f"{engine.rules.display_name} flags: --engine-arg" in text
        for f in engine.engine_flags.flags:
            assert f.flag in text and f.source in text
    only = runner.invoke(app, ["help", "engines", "trtllm"], env={"COLUMNS": "200"}).stdout
    assert "attention_dp_config.enable_balance" in only and "--max-prefill-tokens" not in only


def test_plan_rate_takes_max_num_seqs_from_either_spelling() -> None:
    """plan --rate --max-num-seqs reaches every layout's simulation (before engopt57 the search
    left it out: the answer was the default's). One running request a replica at 4 req/s of
    1,024 + 128 tokens cannot keep p90 TTFT under 300 ms on one H100; the default (256 or 1,024
    seats) can."""
    args = ["plan", "llama-3.1-8b", "--rate", "4", "--slo-ttft-ms", "300", "--num-requests",
            "40", "--executor", "local", "-j", "1", "-f", "json"]
    default = _json(args)
    own = _json([*args, "--max-num-seqs", "1"])
    flag = _json([*args, "--engine-arg=--max-num-seqs=1"])
    assert default["gpus"] == 1 and own["gpus"] > 1
    assert own["trials"] == flag["trials"]
    _refused([*args, "--max-num-seqs", "2", "--engine-arg=--max-num-seqs=1"],
             "already set to 2")
