"""Launch commands that start the layout kvplan planned: every command `plan` emits parses under
that engine version's own flags (tests/launch_flags.py: the names and arities each version's
source declares, tests/data/launch_flags) and asks for exactly the layout's GPUs, by the
engine's own rules (vLLM: DP x TP x PP, each data-parallel engine owning its workers; SGLang:
TP x PP, times --dp-size unless attention DP runs inside the TP group), node by node."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kvplan._util.errors import InputError
from kvplan.cli import app
from kvplan.engines.base import Engine
from kvplan.engines.launch import LaunchLayout, LaunchPlan, LaunchSettings
from kvplan.present.launch_text import launch_lines
from tests.launch_flags import parse, sglang_asks, trtllm_asks, versions, vllm_asks

runner = CliRunner()
ASKS = {"vllm": vllm_asks, "sglang": sglang_asks, "trtllm": trtllm_asks}
SETTINGS = {"context": 32768, "fraction": 0.9, "concurrency": 64}

LAYOUTS = {
    "tp-only": LaunchLayout(tp=2),
    "dp-attention": LaunchLayout(tp=8, dp=8, ep=8, dp_attention=True),
    "dp-attention-2-nodes": LaunchLayout(tp=16, dp=16, ep=16, dp_attention=True),
    "multi-node-dp": LaunchLayout(tp=4, dp=2, gpus_per_node=4),
    "multi-node-dp-uneven": LaunchLayout(tp=2, dp=5, gpus_per_node=4),
    "moe-replicas-ep": LaunchLayout(tp=4, dp=2, ep=8),
    "multi-node-pp": LaunchLayout(tp=8, pp=2),
    "multi-node-pp-replicas": LaunchLayout(tp=8, pp=2, dp=2, ep=16),
}


def _split(argv: list[str]) -> tuple[str, list[str], dict[str, int]]:
    """(engine or "ray", its arguments, mpirun's hosts and slots)."""
    hosts: dict[str, int] = {}
    if argv[:2] == ["vllm", "serve"]:
        return "vllm", argv[2:], hosts
    if argv[:3] == ["python", "-m", "sglang.launch_server"]:
        return "sglang", argv[3:], hosts
    if argv[:2] == ["ray", "start"]:
        return "ray", argv[2:], hosts
    if argv[0] == "env":
        argv = argv[2:]
    if argv[0] == "mpirun":
        assert argv[1] == "-H" and argv[3] == "-np" and argv[5] == "trtllm-llmapi-launch"
        hosts = {h.rsplit(":", 1)[0]: int(h.rsplit(":", 1)[1]) for h in argv[2].split(",")}
        assert sum(hosts.values()) == int(argv[4])
        argv = argv[6:]
    assert argv[0] == "trtllm-serve", argv
    return "trtllm", argv[1:], hosts


def check(plan: LaunchPlan, layout: LaunchLayout, engine: str, version: str | None) -> None:
    """Every command parses under `version`'s flags; the GPUs they ask for, node by node,
    are the layout's."""
    per_node: dict[int, int] = defaultdict(int)
    clusters: dict[str, list[int]] = defaultdict(list)  # Ray head address -> worker nodes
    total = 0
    for cmd in plan.commands:
        name, args, hosts = _split(cmd.argv)
        if name == "ray":
            assert args[:3] == ["--block", "--address", args[2]]
            clusters[args[2].rsplit(":", 1)[0]].append(cmd.node)
            continue
        assert name == engine
        ns = parse(engine, version, args)
        asked = ASKS[engine](ns)
        if engine == "vllm" and getattr(ns, "distributed_executor_backend", None) == "ray":
            # The head asks its Ray cluster for the whole world (checked below).
            assert any(s[:3] == ("ray", "start", "--head") for s in cmd.setup)
            total += asked.world
            clusters.setdefault(f"node{cmd.node}", [])
            per_node[cmd.node] += layout.gpus_per_node
            continue
        if hosts:
            assert len(hosts) * layout.gpus_per_node == asked.world
            for i in range(len(hosts)):
                per_node[cmd.node + i] += layout.gpus_per_node
            total += asked.world
            continue
        assert cmd.gpus == asked.gpus, (cmd.argv, asked)
        per_node[cmd.node] += asked.gpus
        total += asked.gpus
    for workers in clusters.values():
        for n in workers:
            per_node[n] += layout.gpus_per_node
    assert total == layout.gpus, (total, layout)
    assert len(per_node) == layout.nodes
    assert all(g <= layout.gpus_per_node for g in per_node.values()), per_node
    assert sum(per_node.values()) == layout.gpus
    assert plan.commands[0].node == 0  # head first


def _cases():
    for engine in Engine:
        for version in [*versions(engine.value), None]:
            for name, layout in LAYOUTS.items():
                yield pytest.param(engine, version, layout, id=f"{engine.value}-{version}-{name}")


@pytest.mark.parametrize(("engine", "version", "layout"), list(_cases()))
@pytest.mark.parametrize("kv_dtype", ["bf16", "fp8"])
def test_every_layout_parses_and_asks_for_its_gpus(engine: Engine, version: str | None,
                                                    layout: LaunchLayout, kv_dtype: str) -> None:
    settings = LaunchSettings(**SETTINGS, kv_dtype=kv_dtype, version=version)
    if engine is Engine.sglang and layout.pp > 1 and version in ("0.4.5",):
        with pytest.raises(InputError, match="no pipeline parallelism before 0.4.8"):
            engine.rules.launch_plan("org/model", layout, settings)
        return
    plan = engine.rules.launch_plan("org/model", layout, settings)
    check(plan, layout, engine.value, version)


def test_vllm_dp_attention_is_dp_engines_of_tp_one() -> None:
    # DeepSeek-V3 on 8 GPUs with attention DP: 8 engines of TP 1 with expert parallel, not TP 8
    # x DP 8 (64 GPUs: vLLM's world is DP x TP x PP).
    plan = Engine.vllm.rules.launch_plan("deepseek-ai/DeepSeek-V3", LAYOUTS["dp-attention"],
                                         LaunchSettings(**SETTINGS, kv_dtype="fp8"))
    ns = parse("vllm", None, plan.head.argv[2:])
    assert (ns.tensor_parallel_size, ns.data_parallel_size) == ("1", "8")
    assert ns.enable_expert_parallel and vllm_asks(ns).world == 8


def test_vllm_max_num_seqs_is_per_data_parallel_engine() -> None:
    # vLLM 0.32.0: each data-parallel engine core builds its own Scheduler with
    # max_num_running_reqs = scheduler_config.max_num_seqs (vllm/v1/core/sched/scheduler.py),
    # and vllm/config/scheduler.py documents max_num_seqs as applying "per data-parallel rank"
    # (the API server's max_num_queued_reqs is the cross-rank one). 64 requests over 8 DP
    # engines (attention DP or replicas) need --max-num-seqs 8 each, not 64; 65 need 9 (the
    # share rounded up: 8 x 9 >= 65).
    for name in ("dp-attention", "multi-node-dp", "moe-replicas-ep"):
        lay = LAYOUTS[name]
        for conc, want in ((64, -(-64 // lay.dp)), (65, -(-65 // lay.dp))):
            plan = Engine.vllm.rules.launch_plan("m", lay, LaunchSettings(
                **{**SETTINGS, "concurrency": conc}, kv_dtype="bf16"))
            for cmd in plan.commands:
                ns = parse("vllm", None, cmd.argv[2:])
                assert ns.max_num_seqs == str(want), (name, conc)
    assert Engine.vllm.rules.running_cap(LAYOUTS["dp-attention"], 64) == 8
    assert Engine.vllm.rules.running_cap(LAYOUTS["tp-only"], 64) == 64
    # SGLang's --max-running-requests is the server's total: each DP rank's model runner
    # divides it by dp_size (sglang/srt/model_executor/model_runner.py).
    assert Engine.sglang.rules.running_cap(LAYOUTS["dp-attention"], 64) == 64


@given(st.integers(1, 5000), st.sampled_from(sorted(LAYOUTS)))
@settings(max_examples=60, deadline=None)
def test_vllm_engines_together_hold_the_target(conc: int, name: str) -> None:
    lay = LAYOUTS[name]
    cap = Engine.vllm.rules.running_cap(lay, conc)
    assert cap * lay.dp >= conc > (cap - 1) * lay.dp


def test_layout_row_says_what_the_launch_runs() -> None:
    # vLLM runs DP attention over 8 GPUs as --tensor-parallel-size 1 --data-parallel-size 8;
    # SGLang as --tp 8 --dp-size 8 --enable-dp-attention; TensorRT-LLM as tp_size 8 with
    # enable_attention_dp.
    lay = LAYOUTS["dp-attention"]
    assert Engine.vllm.rules.layout_text(lay) == "tp 1, dp 8, ep 8 (data-parallel attention)"
    assert Engine.sglang.rules.layout_text(lay) == "tp 8, dp-attention 8, ep 8"
    assert Engine.trtllm.rules.layout_text(lay) == "tp 8, dp-attention 8, ep 8"
    assert Engine.vllm.rules.layout_text(LAYOUTS["multi-node-pp-replicas"]) == (
        "tp 8, pp 2, dp 2, ep 16")
    assert Engine.vllm.rules.layout_text(LAYOUTS["tp-only"]) == "tp 2"


def test_vllm_multi_node_pp_uses_ray_before_0_11_1() -> None:
    settings = LaunchSettings(**SETTINGS, kv_dtype="bf16", version="0.11.0")
    plan = Engine.vllm.rules.launch_plan("m", LAYOUTS["multi-node-pp"], settings)
    assert plan.head.setup == (("ray", "start", "--head", "--port", "6379"),)
    assert "--distributed-executor-backend" in plan.head.argv
    assert plan.commands[1].argv[:2] == ["ray", "start"]
    newer = Engine.vllm.rules.launch_plan("m", LAYOUTS["multi-node-pp"],
                                          LaunchSettings(**SETTINGS, kv_dtype="bf16",
                                                         version="0.11.1"))
    assert [c.argv.count("--headless") for c in newer.commands] == [0, 1]
    assert all("--nnodes" in c.argv for c in newer.commands)


def run(*args: str):
    return runner.invoke(app, list(args), env={"COLUMNS": "80"})


def _json_plan(*args: str) -> dict:
    result = run("plan", *args, "--format", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _check_cli(data: dict, engine: str, version: str | None) -> None:
    lay = data["layout"]
    layout = LaunchLayout(tp=lay["tp"], pp=lay["pp"], dp=lay["dp"], ep=lay["ep"],
                          dp_attention=data["dp_attention"],
                          gpus_per_node=-(-lay["gpus"] // lay["nodes"]))
    commands = data["launch"]["commands"]
    assert data["commands"] == [c["argv"] for c in commands]
    assert data["command"] == shlex.join(data["commands"][0])  # the head's, as before
    from kvplan.engines.launch import Command
    plan = LaunchPlan(commands=tuple(
        Command(node=c["node"], groups=(tuple(c["argv"]),), gpus=c["gpus"],
                setup=tuple(tuple(s) for s in c["setup"])) for c in commands))
    check(plan, layout, engine, version)


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_issue_examples_on_the_cli(engine: str) -> None:
    # DP attention: DeepSeek-V3 on one node of 8 H200s asks for 8 GPUs.
    data = _json_plan("deepseek-v3", "--gpu", "H200", "-n", "200", "-c", "32k",
                      "--engine", engine)
    assert data["dp_attention"] and data["layout"]["gpus"] == 8
    _check_cli(data, engine, None)
    # tp 4, dp 2 over two nodes of four: one command per node, head first. (At one fraction:
    # SGLang's default fraction fits pp 2, which plan ranks before dp 2 at its raised 0.9.)
    data = _json_plan("llama-3.1-70b", "-n", "50", "-c", "32k", "--gpu", "H100",
                      "--gpus-per-node", "4", "--nodes", "2", "--kv-dtype", "fp8",
                      "--mem-fraction", "0.9", "--engine", engine)
    assert (data["layout"]["tp"], data["layout"]["dp"], data["layout"]["nodes"]) == (4, 2, 2)
    assert len(data["commands"]) == 2
    _check_cli(data, engine, None)
    # pp 2 over two nodes of eight.
    data = _json_plan("llama-3.1-405b", "-n", "8", "-c", "32k", "--gpu", "H100", "--nodes", "2",
                      "--engine", engine)
    assert (data["layout"]["pp"], data["layout"]["nodes"]) == (2, 2)
    assert len(data["commands"]) == 2
    _check_cli(data, engine, None)


def test_vllm_two_node_dp_and_pp_lines_by_version() -> None:
    data = _json_plan("llama-3.1-70b", "-n", "50", "-c", "32k", "--gpu", "H100",
                      "--gpus-per-node", "4", "--nodes", "2", "--kv-dtype", "fp8")
    head, other = data["commands"]
    assert "--headless" not in head and "--headless" in other
    assert other[other.index("--data-parallel-start-rank") + 1] == "1"
    assert head[head.index("--data-parallel-address") + 1] == "$HEAD_IP"
    for version in ("0.10", "0.13"):
        data = _json_plan("llama-3.1-405b", "-n", "8", "-c", "32k", "--gpu", "H100",
                          "--nodes", "2", "--engine-version", version)
        _check_cli(data, "vllm", version)


def test_local_model_launches_its_folder(tmp_path: Path) -> None:
    folder = tmp_path / "Llama-3.1-8B"
    folder.mkdir()
    shutil.copy(Path(__file__).parent / "data" / "configs" / "llama-3.1-8b.json",
                folder / "config.json")
    for model in (str(folder), str(folder / "config.json")):
        for engine in ("vllm", "sglang"):
            data = _json_plan(model, "-n", "4", "-c", "8k", "--gpu", "H100", "--engine", engine)
            argv = data["commands"][0]
            ref = argv[2] if engine == "vllm" else argv[argv.index("--model-path") + 1]
            assert ref == str(folder)
            _check_cli(data, engine, None)


def test_printed_commands_paste_whole_within_80_columns() -> None:
    # The table output prints each command unwrapped, ` \` continued: joined back, the shell
    # reads the same argv as the JSON's (placeholders left for the shell to expand); a Ray
    # cluster's head waits for its workers, so its `vllm serve` comes last.
    two_nodes = ("llama-3.1-70b", "-n", "50", "-c", "32k", "--gpu", "H100", "--gpus-per-node",
                 "4", "--nodes", "2", "--kv-dtype", "fp8")
    ray = ("llama-3.1-405b", "-n", "8", "-c", "32k", "--gpu", "H100", "--nodes", "2",
           "--engine-version", "0.10")
    for args in [(*two_nodes, "--engine", e) for e in ("vllm", "sglang", "trtllm")] + [ray]:
        text = run("plan", *args).stdout
        data = _json_plan(*args)
        block = text[text.index("# launch"):].split("\n")
        assert all(len(line) <= 80 for line in block)
        script = "\n".join(line for line in block if not line.startswith("#"))
        joined = [shlex.split(c) for c in script.replace(" \\\n", " ").split("\n")
                  if c.startswith(("vllm", "python", "trtllm", "env", "mpirun", "ray"))]
        setups = [s for c in data["launch"]["commands"] for s in c["setup"]]
        assert sorted(joined) == sorted(data["commands"] + setups)
        if args == ray:
            assert joined[-1] == data["commands"][0] and joined[0][:3] == ["ray", "start",
                                                                          "--head"]


def test_trtllm_fp8_kv_goes_in_its_options_file() -> None:
    plan = Engine.trtllm.rules.launch_plan("m", LAYOUTS["tp-only"],
                                           LaunchSettings(**SETTINGS, kv_dtype="fp8"))
    (name, text), = plan.files
    assert plan.head.argv[plan.head.argv.index("--extra_llm_api_options") + 1] == name
    assert text == "kv_cache_config:\n  free_gpu_memory_fraction: 0.9\n  dtype: fp8\n"
    dp = Engine.trtllm.rules.launch_plan("m", LAYOUTS["dp-attention"],
                                         LaunchSettings(**SETTINGS, kv_dtype="bf16"))
    assert dp.files == (("kvplan-trtllm.yaml", "enable_attention_dp: true\n"),)
    lines = launch_lines(plan)
    assert lines[1] == f"cat > {name} <<'EOF'" and lines[5] == "EOF"


LIVE_PYTHON = os.environ.get("VLLM_ORACLE_PYTHON")
VLLM_PARSE = """
import json, sys
from vllm.entrypoints.cli.serve import ServeSubcommand
from vllm.utils.argparse_utils import FlexibleArgumentParser
parser = FlexibleArgumentParser(prog="vllm")
ServeSubcommand().subparser_init(parser.add_subparsers(dest="subparser", required=True))
out = []
for argv in json.load(sys.stdin):
    ns = parser.parse_args(argv[1:])
    out.append({k: getattr(ns, k) for k in ("model_tag", "tensor_parallel_size",
        "pipeline_parallel_size", "data_parallel_size", "data_parallel_size_local", "nnodes",
        "headless", "enable_expert_parallel")})
json.dump(out, sys.stdout)
"""


@pytest.mark.skipif(not LIVE_PYTHON,
                    reason="opt-in: set VLLM_ORACLE_PYTHON to the python of vLLM's CPU build")
def test_vllm_032s_own_parser_reads_every_command() -> None:
    """vLLM 0.32's real `vllm serve` parser (FlexibleArgumentParser + make_arg_parser) reads
    every command kvplan writes for vLLM 0.32, with the GPUs the flag tables give."""
    argvs, expected = [], []
    for layout in LAYOUTS.values():
        plan = Engine.vllm.rules.launch_plan("org/model", layout,
                                             LaunchSettings(**SETTINGS, kv_dtype="fp8"))
        for cmd in plan.commands:
            argvs.append(cmd.argv)
            expected.append(vllm_asks(parse("vllm", "0.32.0", cmd.argv[2:])))
    out = subprocess.run([LIVE_PYTHON, "-c", VLLM_PARSE], input=json.dumps(argvs),
                         capture_output=True, text=True, check=True, timeout=600).stdout
    for got, want in zip(json.loads(out), expected, strict=True):
        tp, pp = got["tensor_parallel_size"], got["pipeline_parallel_size"]
        world = got["data_parallel_size"] * tp * pp
        gpus = (got["data_parallel_size_local"] * tp * pp
                if got["data_parallel_size_local"] is not None else world // got["nnodes"])
        assert got["model_tag"] == "org/model"
        assert (gpus, world) == (want.gpus, want.world)


@st.composite
def planned_layouts(draw) -> LaunchLayout:
    """Layouts as kvplan's planner writes them (kvplan.analysis.planner._layouts / search): TP a
    divisor of the GPUs per node; PP > 1 only with TP the whole node (a stage per node); any
    number of replicas; attention DP on one node with DP = TP; EP over TP x DP or none."""
    gpn = draw(st.sampled_from([1, 2, 4, 8]))
    tp = draw(st.sampled_from([d for d in range(1, gpn + 1) if gpn % d == 0]))
    if draw(st.booleans()) and tp > 1:
        return LaunchLayout(tp=tp, dp=tp, ep=draw(st.sampled_from([1, tp])), dp_attention=True,
                            gpus_per_node=gpn)
    pp = draw(st.integers(2, 4)) if tp == gpn and draw(st.booleans()) else 1
    dp = draw(st.integers(1, 6))
    return LaunchLayout(tp=tp, pp=pp, dp=dp, ep=draw(st.sampled_from([1, tp * dp])),
                        gpus_per_node=gpn)


@settings(max_examples=150, deadline=None)
@given(layout=planned_layouts(), engine=st.sampled_from(list(Engine)),
       pick=st.integers(0, 10), kv_dtype=st.sampled_from(["bf16", "fp8"]))
def test_any_planned_layout_launches_on_every_version(layout: LaunchLayout, engine: Engine,
                                                      pick: int, kv_dtype: str) -> None:
    known = [*versions(engine.value), None]
    version = known[pick % len(known)]
    settings_ = LaunchSettings(**SETTINGS, kv_dtype=kv_dtype, version=version)
    if engine is Engine.sglang and layout.pp > 1 and version == "0.4.5":
        return  # refused in one line (test_every_layout_parses_and_asks_for_its_gpus)
    check(engine.rules.launch_plan("org/model", layout, settings_), layout, engine.value,
          version)


SPEC_METHODS = {"vllm": ("mtp", "eagle", "eagle3"), "sglang": ("mtp", "eagle", "eagle3"),
                "trtllm": ("mtp",)}


@pytest.mark.parametrize("engine", list(Engine))
@pytest.mark.parametrize("layout", ["tp-only", "dp-attention", "multi-node-pp"])
def test_speculative_flags_parse_under_every_version(engine: Engine, layout: str) -> None:
    # Issue #27: plan --speculative-method M --num-speculative-tokens K passes M and K to the
    # engine, in each version's own flags (tests/data/launch_flags), and still asks for the
    # layout's GPUs.
    for version in [*versions(engine.value), None]:
        if engine is Engine.sglang and version == "0.4.5" and LAYOUTS[layout].pp > 1:
            continue  # refused in one line (test_every_layout_parses_and_asks_for_its_gpus)
        for method in SPEC_METHODS[engine.value]:
            s = LaunchSettings(**SETTINGS, kv_dtype="bf16", version=version,
                               speculative_method=method, num_speculative_tokens=3)
            plan = engine.rules.launch_plan("org/model", LAYOUTS[layout], s)
            check(plan, LAYOUTS[layout], engine.value, version)
            serving = [c for c in plan.commands if c.argv[:2] != ["ray", "start"]]
            for cmd in serving:
                if engine is Engine.trtllm:
                    continue
                ns = parse(engine.value, version, _split(cmd.argv)[1])
                if engine is Engine.vllm:
                    config = json.loads(ns.speculative_config)
                    # 0.10's SpeculativeMethod has no "mtp": its name is deepseek_mtp.
                    old = version == "0.10.0" and method == "mtp"
                    assert config["method"] == ("deepseek_mtp" if old else method)
                    assert config["num_speculative_tokens"] == 3
                    assert ("model" in config) == (method != "mtp")
                else:
                    assert ns.speculative_algorithm == {"mtp": "NEXTN", "eagle": "EAGLE",
                                                        "eagle3": "EAGLE3"}[method]
                    # a chain: topk 1, steps + 1 tokens verified (what plan sized)
                    assert (ns.speculative_num_steps, ns.speculative_eagle_topk,
                            ns.speculative_num_draft_tokens) == ("3", "1", "4")
            assert any("DRAFT_MODEL" in n for n in plan.notes) == (method != "mtp")


def test_trtllm_mtp_goes_in_its_options_file_and_eagle_is_refused() -> None:
    s = LaunchSettings(**SETTINGS, kv_dtype="bf16", speculative_method="mtp",
                       num_speculative_tokens=2)
    plan = Engine.trtllm.rules.launch_plan("m", LAYOUTS["tp-only"], s)
    assert plan.files == (("kvplan-trtllm.yaml", "speculative_config:\n  decoding_type: MTP\n"
                           "  num_nextn_predict_layers: 2\n"),)
    with pytest.raises(InputError, match="only MTP"):
        Engine.trtllm.rules.launch_plan("m", LAYOUTS["tp-only"], LaunchSettings(
            **SETTINGS, kv_dtype="bf16", speculative_method="eagle", num_speculative_tokens=2))


def test_plan_speculative_json_argv_is_one_item_per_flag() -> None:
    # DeepSeek-V3 with its MTP layer: the JSON config is one argv item, as the shell reads the
    # printed line; the count plan sized is the one passed.
    # (SGLang from 0.5.14 loads the draft's weights before sizing KV and kvplan needs
    # --weights-gib there: planned at 0.5.10.)
    for engine, version in (("vllm", None), ("vllm", "0.10"), ("sglang", "0.5.10")):
        args = ("deepseek-v3", "--gpu", "H200", "-n", "16", "-c", "8k", "--engine", engine,
                "--speculative-method", "mtp", "--num-speculative-tokens", "2")
        args += ("--engine-version", version) if version else ()
        data = _json_plan(*args)
        argv = data["commands"][0]
        _check_cli(data, engine, version)
        assert shlex.split(data["command"]) == argv
        if engine == "sglang":
            assert argv[argv.index("--speculative-algorithm") + 1] == "NEXTN"
            assert argv[argv.index("--speculative-num-steps") + 1] == "2"
            continue
        config = json.loads(argv[argv.index("--speculative-config") + 1])
        assert config == {"method": "deepseek_mtp" if version else "mtp",
                          "num_speculative_tokens": 2}


def test_plan_row_and_max_num_seqs_say_what_the_vllm_launch_runs() -> None:
    # DeepSeek-V3 on 8 x H200 plans DP attention: the launch runs --tensor-parallel-size 1
    # --data-parallel-size 8, so the row says "tp 1, dp 8", and each of the 8 engines gets
    # --max-num-seqs 64 / 8 = 8 (per data-parallel engine, vllm/config/scheduler.py 0.32.0).
    result = runner.invoke(app, ["plan", "deepseek-v3", "--gpu", "H200", "-n", "64", "-c",
                                 "8k", "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["dp_attention"] and data["layout"]["dp"] == 8
    argv = data["commands"][0]
    assert argv[argv.index("--tensor-parallel-size") + 1] == "1"
    assert argv[argv.index("--max-num-seqs") + 1] == "8" and data["max_num_seqs"] == 8
    table = runner.invoke(app, ["plan", "deepseek-v3", "--gpu", "H200", "-n", "64", "-c",
                                "8k"], env={"COLUMNS": "100"})
    assert "tp 1, dp 8, ep 8 (data-parallel attention)" in table.stdout
    assert "8 per engine" in table.stdout


@pytest.mark.parametrize(("engine", "flag"), [("vllm", "--max-num-seqs"),
                                              ("sglang", "--max-running-requests"),
                                              ("trtllm", "--max_batch_size")])
def test_plan_max_num_seqs_goes_on_the_launch_line(engine: str, flag: str) -> None:
    # plan --max-num-seqs N sizes the pool with the engine's running-request cap N (as estimate
    # does), so the server must be started with it: the line carries N, not the target.
    data = _json_plan("llama-3.1-8b", "-n", "12", "-c", "32k", "--gpu", "H100",
                      "--engine", engine, "--max-num-seqs", "48")
    argv = data["commands"][0]
    assert argv[argv.index(flag) + 1] == "48"
    _check_cli(data, engine, None)
    default = _json_plan("llama-3.1-8b", "-n", "12", "-c", "32k", "--gpu", "H100",
                         "--engine", engine)["commands"][0]
    assert default[default.index(flag) + 1] == "12"
