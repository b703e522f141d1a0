"""SGLang's admission of ignore_eos requests with the radix cache disabled
(kvplan.analysis.simulate.sglang_scheduler rule 4: PrefillAdder.add_one_req_ignore_eos,
schedule_policy.py 0.5.9:632-717, 0.5.10.post1:641-726), against rule 1's add_one_req. Page size
1 (a block is a token), 10 ms a step (tests.test_simulate._FixedCost)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.kv_pool import GroupRule, KVPool
from kvplan.analysis.simulate.run import setup
from kvplan.analysis.simulate.scheduler import SchedulerConfig
from kvplan.analysis.simulate.sglang_scheduler import (
    SglangOptionsSim,
    SglangSchedule,
    SglangSimulator,
)
from kvplan.analysis.simulate.workload import RequestSpec
from kvplan.cli import app
from kvplan.engines.base import Engine
from kvplan.sources.resolve import load_model
from tests.test_simulate import _FixedCost  # 10 ms a step

runner = CliRunner()


def _engine(free: int, chunk: int | None, ignore_eos: bool) -> SglangSimulator:
    # KVPool keeps one null block: `free` tokens free.
    pool = KVPool(free + 1, (GroupRule(kind="full", block_size=1),), caching=False)
    return SglangSimulator(pool, SchedulerConfig(max_num_seqs=64, max_num_batched_tokens=16384,
                                                 max_model_len=16384),
                           _FixedCost(), SglangSchedule(chunked_prefill_size=chunk,
                                                        max_running_requests=64,
                                                        ignore_eos_path=ignore_eos),
                           timeline=True)


@pytest.mark.parametrize(("ignore_eos", "firsts"), [(True, [0.01, 0.01]),
                                                     (False, [0.01, 0.02])])
def test_two_8k_prompts_share_a_16k_step_only_on_the_ignore_eos_path(
        ignore_eos: bool, firsts: list[float]) -> None:
    """Chunk and input budget 16,384 (SGLang's defaults on a card of 160 GiB or more), two
    8,192-token prompts at 0. add_one_req_ignore_eos admits A (budget 16,384 -> 8,192, still
    > 0: CONTINUE) and B (8,192 <= the chunk left: whole; budget 0: OTHER), one step 0-10 ms;
    add_one_req refuses B (8,192 >= the 8,192 left), which waits for the next step (10-20)."""
    state = _engine(40_000, 16384, ignore_eos).run(
        [RequestSpec(arrival_s=0.0, prompt_len=8192, output_len=2) for _ in range(2)])
    assert sorted(round(r.first_token_s, 9) for r in state.finished) == firsts


@pytest.mark.parametrize(("ignore_eos", "steps"), [(True, [16384, 4616]),
                                                   (False, [14000, 7000])])
def test_the_ignore_eos_path_fills_the_chunk_cutting_the_last_prompt(
        ignore_eos: bool, steps: list[int]) -> None:
    """Three 7,000-token prompts at 0, chunk and input budget 16,384. Ignore-EOS path: A
    (16,384 -> 9,384 left), B (-> 2,384), C cut to the 2,384 left (the chunked request; budget
    0): a first step of 16,384 tokens, then C's other 4,616 (prefill first). add_one_req: A,
    B, then C refused (7,000 >= 2,384 left): 14,000, then C's 7,000."""
    sim = _engine(100_000, 16384, ignore_eos)
    sim.run([RequestSpec(arrival_s=0.0, prompt_len=7000, output_len=2) for _ in range(3)])
    assert sim.state.timeline is not None
    assert [rec.tokens for rec in sim.state.timeline][:2] == steps


@pytest.mark.parametrize(("ignore_eos", "first_b"), [(True, 0.01), (False, 0.02)])
def test_the_ignore_eos_memory_check_lets_in_what_the_total_budget_refuses(
        ignore_eos: bool, first_b: float) -> None:
    """2,000 tokens free, no chunking; A (500 in, 1,000 out) and B (500 in, 200 out) at 0.
    Ignore-EOS path: A fits (500 <= 2,000; as shortest-first, 2,000 - 500 - 1,000 x 1 = 500 >
    1); the total budget left 2,000 - 500 - min(1,000, 4,096) = 500. B: 500 <= min(free 1,500,
    total 500); states ascending (200, 500) B, (1,000, 500) A, free after B 1,000: i 0, bs 2:
    1,000 - 200 x 2 = 600 > 2; i 1, bs 1: 1,000 + 500 - 1,000 = 500 > 1: admitted with A, first
    token at 10 ms. add_one_req: B's 500 + 200 >= 500 left: refused; at 10 ms A runs (its
    1,000 - 1 left x 0.7 = 699.3 expected): 1,500 - 699.3 = 800.7 > 700, B prefilled 10-20."""
    state = _engine(2000, None, ignore_eos).run(
        [RequestSpec(arrival_s=0.0, prompt_len=500, output_len=1000),
         RequestSpec(arrival_s=0.0, prompt_len=500, output_len=200)])
    done = {r.rid: r for r in state.finished}
    assert done[0].first_token_s == pytest.approx(0.01)
    assert done[1].first_token_s == pytest.approx(first_b)


def test_the_ignore_eos_path_needs_the_radix_cache_disabled() -> None:
    """setup: rule 4 only where the requests ignore EOS AND the radix cache is off
    (--disable-radix-cache: SGLang's ChunkCache, `disable` True); off by default."""
    spec = load_model("llama-3.1-8b")[0]
    for caching, ignore, path in ((False, True, True), (None, True, False),
                                  (False, False, False)):
        inputs = estimate_inputs(spec, context=4096, gpu="H100-80GB", engine=Engine("sglang"),
                                 **({"disable_radix_cache": True} if caching is False else {}))
        sim, _ = setup(spec, inputs, sglang=SglangOptionsSim(ignore_eos=ignore))
        assert sim.sglang is not None and sim.sglang.ignore_eos_path is path
    default, _ = setup(spec, estimate_inputs(spec, context=4096, gpu="H100-80GB",
                                             engine=Engine("sglang")))
    assert default.sglang is not None and default.sglang.ignore_eos_path is False


# `kvplan simulate --ignore-eos` (the client's flag, through the CLI): SGLang 0.5.9's defaults
# but the chunk (--chunked-prefill-size 16,384, the default on a card of 160 GiB or more) on an
# H200, two 8,192-token prompts sent together (closed loop of 2), 2 output tokens each.
_SGL_CASE = ["simulate", "llama-3.1-8b", "--engine", "sglang", "--gpu", "H200",
             "--num-requests", "2", "--concurrency", "2", "--input-len", "8192",
             "--output-len", "2", "--chunked-prefill-size", "16384"]


@pytest.mark.parametrize(("extra", "tokens"), [
    (["--no-enable-prefix-caching", "--ignore-eos"], ["16384", "2"]),
    (["--no-enable-prefix-caching"], ["8192", "8192", "2"]),
    (["--ignore-eos"], ["8192", "8192", "2"])])  # the radix cache on: rule 1's add_one_req
def test_cli_ignore_eos_puts_two_8k_prompts_in_one_16k_step(
        extra: list[str], tokens: list[str], tmp_path: Path) -> None:
    """Input budget 16,384 (MAX_PREFILL_TOKENS) and chunk 16,384. With --ignore-eos and the
    radix cache off (--no-enable-prefix-caching = SGLang --disable-radix-cache):
    add_one_req_ignore_eos takes A (budget 16,384 -> 8,192 > 0) and B (8,192 <= the chunk left;
    budget 0): one prefill step of 16,384 tokens, both first tokens at its end (TTFT mean = that
    step's time), then one decode step of 2 tokens. Otherwise add_one_req refuses B (8,192 >=
    the 8,192 left): two equal prefill steps of 8,192 (t each), TTFTs t and 2t (mean 1.5 t),
    then the decode step."""
    csv = tmp_path / "steps.csv"
    out = runner.invoke(app, [*_SGL_CASE, *extra, "--timeline", str(csv), "--format", "json"])
    assert out.exit_code == 0, out.output
    rows = [line.split(",") for line in csv.read_text().splitlines()[1:]]
    assert [r[3] for r in rows] == tokens
    first_ms = float(rows[0][2])
    ttft = json.loads(out.stdout)["ttft_ms"]["mean"]
    shared = tokens[0] == "16384"
    assert ttft == pytest.approx(first_ms if shared else 1.5 * first_ms, rel=1e-4)


@pytest.mark.parametrize("engine", ["vllm", "trtllm"])
def test_cli_ignore_eos_is_not_read_by_vllm_or_trtllm(engine: str) -> None:
    """A client setting accepted for every engine: vLLM's and TensorRT-LLM's schedulers do not
    read it (kvplan's requests decode their whole output either way): byte-identical."""
    case = ["simulate", "llama-3.1-8b", "--engine", engine, "--gpu", "H100-80GB",
            "--num-requests", "4", "--concurrency", "4", "--input-len", "2048",
            "--output-len", "4", "--no-enable-prefix-caching"]
    for fmt in ("json", "table"):
        without = runner.invoke(app, [*case, "--format", fmt])
        with_it = runner.invoke(app, [*case, "--format", fmt, "--ignore-eos"])
        assert without.exit_code == with_it.exit_code == 0, without.output + with_it.output
        assert with_it.stdout == without.stdout


def test_cli_omitting_ignore_eos_adds_nothing() -> None:
    """SGLang: without the option no note names ignore_eos and the JSON has no key for it; with
    it and the radix cache on, the JSON is unchanged (no key: workload settings are not echoed)
    and one note says the requests are admitted as any other."""
    without = runner.invoke(app, [*_SGL_CASE, "--format", "json"])
    with_it = runner.invoke(app, [*_SGL_CASE, "--format", "json", "--ignore-eos"])
    assert with_it.stdout == without.stdout and "ignore_eos" not in without.stdout
    table = runner.invoke(app, _SGL_CASE).stdout
    noted = runner.invoke(app, [*_SGL_CASE, "--ignore-eos"]).stdout
    assert "ignore_eos" not in table
    assert " ".join(noted.split()) == " ".join(table.split()) + (
        " requests sent with ignore_eos: admitted as any other (add_one_req: the radix cache is"
        " on)")
