"""--platform and --cpu-amx in every command that sizes a vLLM pool (plan, compare, sweep,
simulate), threaded as estimate threads them (kvplan.analysis.inputs.platform_fields): the same
block, pool and refusal as `estimate` with the same flags."""

import json

import pytest
from typer.testing import CliRunner

from kvplan.cli import app

runner = CliRunner()

# Llama-3.1-8B, 1,000 tokens on an H100 with vLLM's CPU platform: its block of 128 (0.32
# platforms/cpu.py: CpuPlatform's default block_size 128; cuda: 16), so a request of 1,000
# tokens holds ceil(1000 / 128) = 8 blocks, and the pool is the budget over 128-token blocks
# (estimate: 3,547 blocks of 32 x 128 x 4,096 B = 16 MiB).
CPU = ("--gpu", "H100", "--platform", "cpu")


def _json(*args: str) -> dict:
    r = runner.invoke(app, [*args, "--format", "json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    return out[0] if isinstance(out, list) else out


def _refused(*args: str) -> str:
    r = runner.invoke(app, list(args))
    assert r.exit_code == 2, r.output
    return r.stderr.strip()


def test_cpu_platform_pool_equal_to_estimate() -> None:
    est = _json("estimate", "llama-3.1-8b", "-c", "1000", *CPU)
    assert (est["block_size"], est["num_blocks"]) == (128, 3547)
    plan = _json("plan", "llama-3.1-8b", "--context", "1000", "--concurrency", "4", *CPU)
    assert (plan["block_size"], plan["num_blocks"]) == (128, 3547)
    sweep = _json("sweep", "llama-3.1-8b", "-c", "1000", *CPU)
    assert (sweep["block_size"], sweep["num_blocks"]) == (128, 3547)
    sim = _json("simulate", "llama-3.1-8b", "--max-model-len", "1000", "--concurrency", "2",
                "--num-requests", "2", "--input-len", "100", "--output-len", "4", *CPU)
    assert (sim["block_size"], sim["num_blocks"]) == (128, 3547)
    # compare: a request's bytes block-rounded at 128 tokens, as estimate's per sequence.
    rows = json.loads(runner.invoke(app, ["compare", "llama-3.1-8b", "-c", "1000", *CPU,
                                          "--cpu-amx", "--format", "json"]).stdout)
    [native] = [r for r in rows if r["native"]]
    assert native["bytes_per_request"] == est["bytes_per_sequence"] == 1024 * 131_072


def test_cpu_platform_without_gpu_in_sweep_and_compare() -> None:
    # No device: the sizes alone, at the CPU platform's block, as estimate without --gpu.
    est = _json("estimate", "llama-3.1-8b", "-c", "1000", "--platform", "cpu")
    sweep = _json("sweep", "llama-3.1-8b", "-c", "1000", "--platform", "cpu")
    assert sweep["block_size"] == est["block_size"] == 128
    assert sweep["bytes_per_sequence"] == est["bytes_per_sequence"]


@pytest.mark.parametrize("command", [
    ("plan", "deepseek-v2-lite", "--context", "1000", "--concurrency", "4"),
    ("plan", "deepseek-v2-lite", "--context", "1000", "--rate", "1", "--slo-ttft-ms", "1000",
     "--num-requests", "2", "--input-len", "100", "--output-len", "4", "--gpus-per-node", "1",
     "--jobs", "1", "--executor", "local"),
    ("compare", "deepseek-v2-lite", "-c", "1000"),
    ("sweep", "deepseek-v2-lite", "-c", "1000"),
    ("simulate", "deepseek-v2-lite", "--max-model-len", "1000", "--concurrency", "2",
     "--num-requests", "2", "--input-len", "100", "--output-len", "4"),
])
def test_cpu_mla_without_the_host_refused_as_estimate(command: tuple[str, ...]) -> None:
    # vLLM 0.29 on, CPU: AMX_MLA (128) or CPU_MLA (16) by the host, which kvplan cannot tell.
    line = _refused("estimate", "deepseek-v2-lite", "-c", "1000", *CPU)
    assert "give --cpu-amx or --no-cpu-amx" in line
    assert _refused(*command, *CPU) == line
    # Told the host: CPU_MLA's block of 16, as estimate's.
    est = _json("estimate", "deepseek-v2-lite", "-c", "1000", *CPU, "--no-cpu-amx")
    assert est["block_size"] == 16
    if command[0] in ("plan", "sweep", "simulate") and "--rate" not in command:
        assert _json(*command, *CPU, "--no-cpu-amx")["block_size"] == 16


def test_platform_not_taken_with_disagg() -> None:
    line = _refused("plan", "llama-3.1-8b", "--disagg", "--rate", "1", "--platform", "cpu")
    assert line.startswith("kvplan: error: --platform: not taken with --disagg")


def test_plot_curves_at_the_platform() -> None:
    # plan --plot and compare --plot draw sweep grids (kvplan.analysis.curves): the same block.
    from kvplan.analysis.curves import capacity_curves, compare_curves
    from kvplan.engines.base import DEFAULT_ENGINE
    from kvplan.sources.resolve import load_spec

    spec = load_spec("llama-3.1-8b")
    plan = capacity_curves(spec, context=1000, gpu="H100", engine=DEFAULT_ENGINE,
                           kv_dtype="bf16", mem_fraction=None, tps=(1,), platform="cpu")
    schemes = compare_curves(spec, context=1000, kv_dtype="bf16", tp=1, gpu="H100", groups=8,
                             block_size=None, platform="cpu", cpu_amx=True)
    assert set(plan["block_size"]) == {128} and set(schemes["block_size"]) == {128}
