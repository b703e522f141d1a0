"""The benchmark clients' --random-range-ratio (kvplan.analysis.simulate.range_ratio): bounds
and means worked by hand, numpy's legacy draw reproduced bit for bit, and the draws against
totals a client printed."""

from __future__ import annotations

import pytest

from kvplan._util.errors import InputError
from kvplan.analysis.simulate.range_ratio import (
    BoundedBelow,
    LegacyNumpy,
    VllmRandom,
    client_lengths,
    mean_lengths,
)


def test_sa_bench_bounds_and_mean_1024_at_0_8() -> None:
    # sa-bench (srt-slurm benchmark_serving.py:355-364 at cc158081): randint(int(1024 x 0.8),
    # 1024 + 1): int(819.2) = 819 .. 1024 inclusive, 206 values, mean (819 + 1024) / 2 = 921.5.
    sa = client_lengths("sa-bench", 0.8)
    assert sa.input_bounds(1024) == (819, 1024) and sa.output_bounds(1024) == (819, 1024)
    # 8,192: int(6553.6) = 6553 .. 8192.
    assert sa.input_bounds(8192) == (6553, 8192)
    drawn = sa.lengths(20_000, 1024, 8192, seed=0)
    assert min(i for i, _ in drawn) == 819 and max(i for i, _ in drawn) == 1024
    assert min(o for _, o in drawn) == 6553 and max(o for _, o in drawn) == 8192
    mean_in, mean_out = mean_lengths(drawn)
    assert mean_in == pytest.approx(921.5, abs=1.0)  # sd 59.5 / sqrt(20,000) = 0.42
    assert mean_out == pytest.approx((6553 + 8192) / 2, abs=10.0)


def test_sa_bench_chat_template_tokens() -> None:
    # --use-chat-template with a template of 6 tokens: chat_template_len 5 comes off L (1,019),
    # the draw is in int(1019 x 0.8) = 815 .. 1019, and 5 is added back: 820 .. 1024.
    sa = BoundedBelow(name="sa-bench", ratio=0.8, template_tokens=5)
    assert sa.input_bounds(1024) == (820, 1024)
    drawn = sa.lengths(5000, 1024, 1024, seed=0)
    assert {i for i, _ in drawn} <= set(range(820, 1025))


def test_vllm_bench_serve_bounds_1024_at_0_8() -> None:
    # vllm/benchmarks/datasets.py get_sampling_params (v0.15.1 :591-600): floor(1024 x 0.2) =
    # floor(204.8) = 204 .. ceil(1024 x 1.8) = ceil(1843.2) = 1844, mean 1,024; outputs of 128:
    # floor(25.6) = 25 .. ceil(230.4) = 231.
    v = client_lengths("vllm", 0.8)
    assert v.input_bounds(1024) == (204, 1844) and v.output_bounds(128) == (25, 231)
    # One special token (BOS): L' = 1,023, floor(204.6) = 204 .. ceil(1841.4) = 1842, and the
    # server's prompt is one more: 205 .. 1843.
    bos = VllmRandom(ratio=0.8, special_tokens=1)
    assert bos.input_bounds(1024) == (204, 1842)
    drawn = bos.lengths(20_000, 1024, 128, seed=3)
    assert min(i for i, _ in drawn) == 205 and max(i for i, _ in drawn) == 1843
    mean_in, mean_out = mean_lengths(drawn)
    assert mean_in == pytest.approx(1024, abs=6.0)  # sd 470 / sqrt(20,000) = 3.3
    assert mean_out == pytest.approx(128, abs=1.0)
    # R 0 (its default): fixed lengths; an output ratio bound at 1 token.
    assert client_lengths("vllm", 0.0).lengths(3, 1000, 100, seed=0) == [(1000, 100)] * 3
    assert VllmRandom(ratio=0.9).output_bounds(5) == (1, 10)  # floor(0.5) -> 1, ceil(9.5)


def test_vllm_refuses_a_ratio_of_one_the_old_clients_take_it() -> None:
    with pytest.raises(InputError, match="--random-range-ratio: must be in \\[0, 1\\)"):
        client_lengths("vllm", 1.0)
    # The old convention's 1.0 (its default) is fixed lengths.
    assert client_lengths("vllm-legacy", 1.0).lengths(4, 1024, 1024, seed=0) == [(1024, 1024)] * 4
    with pytest.raises(InputError, match="--range-ratio-convention: expected one of"):
        client_lengths("genai-perf", 0.5)


def test_legacy_numpy_is_numpys_draw() -> None:
    np = pytest.importorskip("numpy")
    for seed in (0, 1, 123, 2 ** 32 - 1):
        ours, theirs = LegacyNumpy(seed), np.random.RandomState(seed)
        for low, high, n in ((819, 1025, 500), (1, 1001, 300), (6553, 8193, 200), (7, 8, 5),
                             (0, 2 ** 31, 50)):
            assert ours.randint(low, high, n) == theirs.randint(low, high, size=n).tolist()


def test_sglang_draw_reproduces_the_cookbooks_totals() -> None:
    # The SGLang cookbook's DeepSeek-R1 page, bench_serving random 1000/1000 at its defaults
    # (R 0.0, seed 1), 10 prompts: "Total input tokens: 6101", "Total generated tokens: 4210"
    # under 0.5.6 (outputs from int(1000 x 0) = 0); 8000/1000 at 320 prompts: 1273893 / 169680.
    # 0.5.7 (outputs from 1): 4,220 (test_prospective52).
    old = client_lengths("sglang", 0.0, sglang_release="0.5.6")
    ten = old.lengths(10, 1000, 1000, seed=1)
    assert (sum(i for i, _ in ten), sum(o for _, o in ten)) == (6101, 4210)
    many = old.lengths(320, 8000, 1000, seed=1)
    assert (sum(i for i, _ in many), sum(o for _, o in many)) == (1273893, 169680)
    new = client_lengths("sglang", 0.0, sglang_release="0.5.7").lengths(10, 1000, 1000, seed=1)
    assert (sum(i for i, _ in new), sum(o for _, o in new)) == (6101, 4220)


def test_workload_takes_the_clients_draw() -> None:
    # `kvplan simulate --random-range-ratio 0.8 --range-ratio-convention sa-bench --seed 0`: the
    # requests' lengths are sa-bench's draw at seed 0 (prompts then outputs), in send order,
    # the shared prefix added to each prompt.
    from kvplan.analysis.simulate.workload import WorkloadOptions, requests_from

    reqs = list(requests_from(WorkloadOptions(
        concurrency=4, num_requests=30, input_len=1024, output_len=128, prefix_len=16,
        random_range_ratio=0.8, range_ratio_convention="sa-bench", seed=0)))
    drawn = client_lengths("sa-bench", 0.8).lengths(30, 1024, 128, seed=0)
    assert [(r.prompt_len - 16, r.output_len) for r in reqs] == drawn
    assert all(835 <= r.prompt_len <= 1040 and 102 <= r.output_len <= 128 for r in reqs)
    # vLLM's convention (the default) spreads around L.
    vllm = list(requests_from(WorkloadOptions(concurrency=4, num_requests=200, input_len=1024,
                                              output_len=128, random_range_ratio=0.5)))
    assert min(r.prompt_len for r in vllm) >= 512 and max(r.prompt_len for r in vllm) <= 1536
    assert max(r.prompt_len for r in vllm) > 1024


@pytest.mark.parametrize(("args", "text"), [
    (["--range-ratio-convention", "sglang"], "--range-ratio-convention: needs"),
    (["--random-range-ratio", "1.0"], "--random-range-ratio: must be in [0, 1)"),
    (["--random-range-ratio", "0.5", "--input-len-dist", "uniform:10:20"],
     "--input-len-dist: not with --random-range-ratio"),
])
def test_cli_refuses_with_one_line(args: list[str], text: str) -> None:
    from typer.testing import CliRunner

    from kvplan.cli import app

    result = CliRunner().invoke(app, ["simulate", "llama-3.1-8b", "--gpu", "H100-80GB",
                                      "--max-model-len", "4096", "--concurrency", "2",
                                      "--num-requests", "4", *args])
    assert result.exit_code == 2, result.output
    assert text in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_cli_runs_with_a_spread() -> None:
    import json

    from typer.testing import CliRunner

    from kvplan.cli import app

    result = CliRunner().invoke(app, [
        "simulate", "llama-3.1-8b", "--gpu", "H100-80GB", "--max-model-len", "4096",
        "--concurrency", "4", "--num-requests", "20", "--input-len", "512", "--output-len",
        "32", "--random-range-ratio", "0.8", "--range-ratio-convention", "sa-bench", "-f",
        "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    # sa-bench's outputs at seed 0: 20 draws in int(32 x 0.8) = 25 .. 32.
    outs = [o for _, o in client_lengths("sa-bench", 0.8).lengths(20, 512, 32, seed=0)]
    assert data["output_tokens"] == sum(outs) < 20 * 32


def test_disagg_bench_section_3n_counts_by_cohort() -> None:
    # Two TensorRT-LLM rows (3j): one moves into the band with the spread (TTFT 1.40 -> 1.26),
    # one stays below; the section counts them per cohort, before and after, and names the
    # cfg388 row.
    from tests.benches import disagg_lengths
    from tests.benches.disagg_rows import BACKEND_COHORTS, PREFIX, Replay

    def rep(tail: str, ttft: float) -> Replay:
        return Replay(id=PREFIX + "dsr1_gb200_trtllm_fp4_disagg_" + tail, label="",
                      measured_ttft_ms=100.0, measured_tpot_ms=10.0, concurrency=192,
                      input_len=1024, output_len=1024, ttft_ms=ttft, tpot_ms=10.0,
                      cohort=BACKEND_COHORTS["trtllm"])

    after = [rep("1024x1024_c192_cfg388", 126.0), rep("1024x1024_c12_cfg999", 50.0)]
    before = [rep("1024x1024_c192_cfg388", 140.0), rep("1024x1024_c12_cfg999", 55.0)]
    text = "\n".join(disagg_lengths.section(after, before))
    assert ("- 3j (TensorRT-LLM): with it both 1 of 2; TTFT 1; TPOT 2; median ratio TTFT, TPOT "
            "0.88, 1.00") in text
    assert "  - every request at L (before): both 0 of 2; TTFT 0; TPOT 2" in text
    assert "- dsr1_gb200_trtllm_fp4_disagg_1024x1024_c192_cfg388: 1.40 / 1.00 -> 1.26 / 1.00" \
        in text
    assert disagg_lengths.FIRST_EVALUATION in text
