"""A run on a server that served other requests first (kvplan.analysis.simulate.warm_start)
and Scicom's SGLang length servers (tests.benches.scicom_server) and vLLM servers
(tests.benches.scicom_vllm_server), worked by hand."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kvplan._util.errors import InputError
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.run import setup
from kvplan.analysis.simulate.warm_start import simulate_after
from kvplan.analysis.simulate.workload import RequestSpec
from kvplan.engines.base import Engine
from kvplan.sources.resolve import load_model
from tests.benches import scicom_server, scicom_vllm_server
from tests.test_simulate_sglang import _LinearCost  # 1 ms + 1 us a token + 1 ns a key


def _sglang_sim():  # type: ignore[no-untyped-def]
    spec = load_model("llama-3.1-8b")[0]
    sim, _ = setup(spec, estimate_inputs(spec, context=4096, gpu="H100-80GB",
                                         engine=Engine("sglang")))
    return replace(sim, cost=_LinearCost())


SHARED = ((("p", 0, 1000), 1000),)  # one prompt of 1,000 tokens, named


def test_a_prompt_served_before_is_prefilled_from_its_last_token() -> None:
    """Cold: the prompt's 1,000 tokens in one step, chunk (start 0, 1,000 tokens): 1 ms +
    1,000 x 1 us + (1,000 x 1,001 / 2 = 500,500 keys) x 1 ns = 2.5005 ms, the TTFT. Served
    before by an earlier batch (same segment key), SGLang's radix cache holds it: the match
    stops one token short (its logits are recomputed), so the step is chunk (999, 1):
    1 ms + 1 us + (999 + 1 = 1,000 keys) x 1 ns = 1.002 ms. Only the run's request is counted;
    a prompt named otherwise (no segment) gains nothing from the earlier batch."""
    sim = _sglang_sim()
    earlier = [[RequestSpec(arrival_s=0.0, prompt_len=1000, output_len=1, segments=SHARED)]]
    mine = [RequestSpec(arrival_s=0.0, prompt_len=1000, output_len=1, segments=SHARED)]
    warm = simulate_after(sim, earlier, mine, concurrency=1)
    assert warm.num_requests == 1
    assert warm.ttft_ms["mean"] == pytest.approx(1.002)
    assert warm.prefix_hit_rate == pytest.approx(999 / 1000)
    cold = simulate_after(sim, [], mine, concurrency=1)
    assert cold.ttft_ms["mean"] == pytest.approx(2.5005)
    other = simulate_after(sim, earlier, [RequestSpec(arrival_s=0.0, prompt_len=1000,
                                                      output_len=1)], concurrency=1)
    assert other.ttft_ms["mean"] == pytest.approx(2.5005)


def test_a_longer_prompt_computes_past_the_shared_part() -> None:
    """An earlier prompt of 400 tokens shares the first 400 of a 1,000-token one (segments
    cut at 400): the step is chunk (400, 600): 1 ms + 600 us + (400 x 600 + 600 x 601 / 2 =
    420,300 keys) x 1 ns = 2.0203 ms."""
    sim = _sglang_sim()
    first = ((("p", 0, 400), 400),)
    earlier = [[RequestSpec(arrival_s=0.0, prompt_len=400, output_len=1, segments=first)]]
    mine = [RequestSpec(arrival_s=0.0, prompt_len=1000, output_len=1,
                        segments=(*first, (("p", 400, 1000), 600)))]
    assert simulate_after(sim, earlier, mine).ttft_ms["mean"] == pytest.approx(2.0203)


def _reqs(*lengths: int) -> list[RequestSpec]:
    return [RequestSpec(arrival_s=0.0, prompt_len=n, output_len=40) for n in lengths]


def test_scicom_prompts_are_cut_at_every_length_they_have_on_the_server() -> None:
    """Request 0 is 5 tokens at 1,024 and 300 at 2,048; request 1 is 700 and 1,500. At 2,048
    request 0 is (0-5)(5-300), request 1 (0-700)(700-1,500); at 1,024 request 0 is (0-5) alone
    and request 1 (0-700): equal keys for the shared leading tokens."""
    by_length = {1024: _reqs(5, 700), 2048: _reqs(300, 1500)}
    at_2048 = scicom_server.with_segments(by_length, 2048)
    assert at_2048[0].segments == (((0, 0, 5), 5), ((0, 5, 300), 295))
    assert at_2048[1].segments == (((1, 0, 700), 700), ((1, 700, 1500), 800))
    at_1024 = scicom_server.with_segments(by_length, 1024)
    assert [r.segments for r in at_1024] == [(((0, 0, 5), 5),), (((1, 0, 700), 700),)]
    assert [r.prompt_len for r in at_2048] == [300, 1500]


def test_scicom_server_history_runs_the_shorter_lengths_first() -> None:
    """The run at 4,096 follows: warm-up and run at 1,024, warm-up and run at 2,048, then its
    own warm-up (its first prompt, min(40, 32) = 32 new tokens); the run at 1,024 follows its
    warm-up alone."""
    by_length = {n: _reqs(n // 2, n // 4) for n in scicom_server.SERVER_LENGTHS}
    earlier, mine = scicom_server.server_batches(by_length, 4096)
    assert [[r.prompt_len for r in b] for b in earlier] == [[512], [512, 256], [1024],
                                                             [1024, 512], [2048]]
    assert earlier[-1][0].output_len == 32 and earlier[-1][0].segments == mine[0].segments
    first, _ = scicom_server.server_batches(by_length, 1024)
    assert [[r.prompt_len for r in b] for b in first] == [[512]]


def test_each_earlier_batch_can_have_its_own_concurrency() -> None:
    """One concurrency per earlier batch or none: two for one batch is refused; the one given
    for a batch of one request (the run's test prompt) leaves the run as the default does:
    the cached prompt is prefilled from its last token (1.002 ms, as above)."""
    sim = _sglang_sim()
    earlier = [[RequestSpec(arrival_s=0.0, prompt_len=1000, output_len=1, segments=SHARED)]]
    mine = [RequestSpec(arrival_s=0.0, prompt_len=1000, output_len=1, segments=SHARED)]
    warm = simulate_after(sim, earlier, mine, concurrency=4, earlier_concurrency=[1])
    assert warm.ttft_ms["mean"] == pytest.approx(1.002)
    with pytest.raises(InputError, match="2 concurrencies for 1 earlier batches"):
        simulate_after(sim, earlier, mine, earlier_concurrency=[1, 2])


def test_scicom_vllm_server_runs_its_bench_list_in_order() -> None:
    """The sweep server's run at 1,024 tokens and concurrency 50 follows, each after its test
    prompt (request 0, its whole output, alone): 128 at 10 / 25 / 50 / 200, 512 at the same,
    1,024 at 10 and 25: 2 x 10 earlier runs + its own test = 21 batches; request 1 of a
    1,024-token run (prompt 1,023 here) is cut at 127 and 511, the lengths it has on the
    server. The concurrency-100 server ran 128, 512, then 1,024: 5 batches before the run."""
    def at(n: int, prompts: int) -> list[RequestSpec]:
        return [RequestSpec(arrival_s=0.0, prompt_len=n - 1, output_len=128)
                for _ in range(2)]

    run = {"workload": {"max_concurrency": 50}}
    earlier, mine, limits = scicom_vllm_server.server_batches(at, run)
    assert len(earlier) == 21 and limits[:4] == [1, 10, 1, 25] and limits[-1] == 1
    assert [len(b) for b in earlier[:2]] == [1, 2] and earlier[-1][0].output_len == 128
    assert mine[1].segments == (((1, 0, 127), 127), ((1, 127, 511), 384), ((1, 511, 1023), 512))
    assert earlier[1][1].segments == (((1, 0, 127), 127),)
    c100, _, limits100 = scicom_vllm_server.server_batches(at, {"workload": {
        "max_concurrency": 100}})
    assert len(c100) == 5 and limits100 == [1, 100, 1, 100, 1]
