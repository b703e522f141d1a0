"""`kvplan plan --disagg` (issue 29): the KV one request hands over, as vLLM 0.32.0's NixlConnector
moves it (vllm/distributed/kv_transfer/kv_connector/v1/nixl/), derived by hand per layer kind
from real configs; the public logs that print it; the link presets; the xPyD ratio; the CLI.

Hand derivations name the source lines they follow:
- blocks: pull_scheduler.py update_state_after_alloc reads every unhashed decode block of the
  prompt, the last one whole -> cdiv(T, block); base_scheduler.py get_exchange_clipped_blocks
  keeps `blocks_per_sw = cdiv(window, block) + 1` of a sliding-window group and one state slot
  of a Mamba group; `_prefill_backoff` loads T = I - 1 tokens on models with recurrent layers.
- bytes per block: the decode rank's own block length (base_worker.py _build_fa_remote: "Read
  our whole local region size from remote"), split over the prefill ranks it reads from when
  prefill TP is larger (tp_mapping.py compute_tp_mapping, GQA heads deduplicated); MLA and
  indexer regions (MLAAttentionSpec) replicated: one read of the whole block.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kvplan._util.errors import InputError
from kvplan.analysis.disagg import DisaggRequest, plan_disagg
from kvplan.analysis.plan_types import Layout
from kvplan.cli import app
from kvplan.hardware.gpus import get_gpu
from kvplan.hardware.kv_links import get_kv_link, kv_link_names
from kvplan.sources.resolve import load_model
from tests.benches.nixl_cpu_record import kvplan_inputs

DATA = Path(__file__).parent / "data"
CONFIGS = DATA / "configs"
runner = CliRunner()
MiB = 2**20


def _plan(model: str, prefill: Layout, decode: Layout, input_len: int, *, gpu: str = "H200",
          output_len: int = 1024, **kw: object):
    spec, _ = load_model(model)
    return plan_disagg(spec, DisaggRequest(
        prefill=prefill, decode=decode, input_len=input_len, output_len=output_len,
        gpu=get_gpu(gpu), link=get_kv_link(kw.pop("link", "ib-ndr")), **kw))


def _handover(*args: object, **kw: object):
    return _plan(*args, **kw).handover


# --- golden bytes, per layer kind -------------------------------------------------------------

def test_full_attention_gqa_equal_tp() -> None:
    # Qwen3-0.6B (config: 28 layers, 8 KV heads, head_dim 128), bf16, TP 1 -> 1, block 128, a
    # 100-token prompt: cdiv(100, 128) = 1 block per layer, read whole: 28 x 128 tokens x
    # (8 x 128 x 2 (K, V) x 2 B = 4,096 B) = 14,680,064 B = 14.0 MiB, one transfer.
    h = _handover(str(CONFIGS / "qwen3-0.6b.json"), Layout(tp=1), Layout(tp=1), 100,
                  extra={"block_size": 128})
    assert h.bytes_per_rank == (28 * 128 * 4096,) == (14_680_064,)
    assert h.transfer_bytes == h.sender_bytes == (14_680_064,)
    assert h.bytes_per_request == 14_680_064


def test_full_attention_decode_tp_larger_reads_a_slice_of_one_prefill_rank() -> None:
    # Llama-3.1-70B (80 layers, 8 KV heads, head_dim 128), bf16, prefill TP 4 -> decode TP 8,
    # 8,192-token prompt, block 16. A decode rank holds 1 head: 2 x 128 x 2 B = 512 B/token,
    # 512 blocks x 16 x 512 x 80 = 335,544,320 B, read from prefill rank tp_rank x 4 // 8 at
    # its head offset (one transfer each); each prefill rank sends to 2 decode ranks.
    h = _handover("llama-3.1-70b", Layout(tp=4), Layout(tp=8), 8192, gpu="H100")
    per = 80 * 512 * 16 * 512
    assert per == 335_544_320
    assert h.bytes_per_rank == (per,) * 8
    assert h.transfer_bytes == (per,) * 8
    assert h.sender_bytes == (2 * per,) * 4
    assert h.bytes_per_request == 8 * per  # the whole 2.5 GiB cache of the prompt, once


def test_full_attention_prefill_tp_larger_dedups_replicated_heads() -> None:
    # Qwen3-30B-A3B (48 layers, 4 KV heads, head_dim 128), fp8 KV, prefill TP 8 -> decode
    # TP 2, 4,096 tokens, block 16. Prefill ranks hold max(1, 4 // 8) = 1 head each, ranks
    # (0, 1) head 0, (2, 3) head 1, ...; decode rank 0 holds heads 0-1 and would read ranks
    # 0-3, heads [0, 0, 1, 1]: np.unique keeps ranks 0 and 2, two reads of half its block.
    # Decode rank: 2 heads x 128 x 2 x 1 B = 512 B/token -> 256 blocks x 16 x 512 x 48.
    h = _handover(str(CONFIGS / "qwen3-30b-a3b.json"), Layout(tp=8), Layout(tp=2), 4096,
                  kv_dtype="fp8")
    per = 48 * 256 * 16 * 512
    assert h.bytes_per_rank == (per, per)
    assert h.transfer_bytes == (per // 2,) * 4
    assert h.sender_bytes == (per // 2, 0, per // 2, 0, per // 2, 0, per // 2, 0)


def test_mla_latent_is_read_whole_by_every_decode_rank() -> None:
    # DeepSeek-V3 (61 layers, kv_lora_rank 512 + rope 64), bf16: 576 x 2 = 1,152 B per token,
    # one row for all heads. TP 8 -> TP 8: the MLA region is replicated, so each decode rank
    # reads the whole block from one prefill rank: 61 x cdiv(8192, B) x B x 1,152 per rank.
    plan = _plan("deepseek-v3", Layout(tp=8), Layout(tp=8), 8192)
    h = plan.handover
    block = h.block_size
    per = 61 * math.ceil(8192 / block) * block * 1152
    assert h.bytes_per_rank == (per,) * 8 and h.transfer_bytes == (per,) * 8
    # With attention DP (8 ranks of TP 1) the request lives on one decode rank: one read.
    dp = Layout(tp=8, dp=8, ep=8, dp_attention=True)
    h = _handover("deepseek-v3", dp, dp, 8192)
    assert h.bytes_per_rank == (per,) and h.transfer_bytes == (per,)


def test_sparse_mla_fp8_row_and_indexer_keys() -> None:
    # DeepSeek-V3.2, fp8 KV: the fp8_ds_mla row is 512 fp8 + 4 fp32 scales + 64 bf16 = 656 B
    # per token; the indexer keys 128 fp8 + one fp32 scale = 132 B (both MLAAttentionSpec,
    # replicated). Block 64 (FlashMLA-sparse), 8,192 tokens: 128 blocks per layer, 61 layers.
    h = _handover("deepseek-v3.2", Layout(tp=8), Layout(tp=8), 8192, kv_dtype="fp8")
    assert h.block_size == 64
    per = 61 * 128 * 64 * (656 + 132)
    assert per == 393_773_056
    assert h.bytes_per_rank == (per,) * 8
    kinds = {m.kind.split(" (")[0]: m for m in h.moves}
    assert kinds["MLA latent"].unit_bytes == 64 * 656
    assert kinds["sparse-attention indexer keys"].unit_bytes == 64 * 132


def test_sliding_window_sends_the_window_tail_only() -> None:
    # gpt-oss-20b (24 layers alternating sliding window 128 and full; 8 KV heads x 64, bf16:
    # 2 x 8 x 64 x 2 = 2,048 B/token, 32,768 B per 16-token block). 8,192 tokens: the full
    # layers move cdiv(8192, 16) = 512 blocks; the window layers blocks_per_sw =
    # cdiv(128, 16) + 1 = 9 blocks (the in-window tail, hybrid manager on).
    h = _handover("gpt-oss-20b", Layout(tp=1), Layout(tp=1), 8192)
    assert h.bytes_per_rank == (12 * 512 * 32768 + 12 * 9 * 32768,)
    # A prompt shorter than the window: every block (cdiv(100, 16) = 7 < 9).
    h = _handover("gpt-oss-20b", Layout(tp=1), Layout(tp=1), 100)
    assert h.bytes_per_rank == (24 * 7 * 32768,)


def test_recurrent_state_slot_and_the_recomputed_last_token() -> None:
    # Qwen3-Next-80B-A3B: 36 Gated DeltaNet layers and 12 full-attention layers (2 KV heads x
    # 256). Prefill TP 4 -> decode TP 2, 8,192 tokens. The prefill stops one token short
    # (`_prefill_backoff` = 1 with Mamba-like layers): T = 8,191. A decode rank holds 1 KV head
    # (2 x 256 x 2 B = 1,024 B/token) and the GDN state of its half: conv 3 x 4,096 bf16
    # (24,576 B) + SSM 16 heads x 128 x 128 bf16 (524,288 B) = 548,864 B per layer, the state's
    # own bytes (not the padded page). Attention heads: prefill ranks (0, 1) both hold head 0,
    # so rank 0 alone is read; the state comes half from each of ranks 0 and 1.
    h = _handover("qwen3-next-80b-a3b", Layout(tp=4), Layout(tp=2), 8192)
    block = h.block_size
    assert h.tokens_moved == 8191
    attention = 12 * math.ceil(8191 / block) * block * 1024
    state = 36 * (3 * 4096 * 2 + 16 * 128 * 128 * 2)
    assert state == 36 * 548_864
    assert h.bytes_per_rank == (attention + state,) * 2
    assert h.transfer_bytes == (attention + state // 2, state // 2) * 2


def test_pipeline_stages_list_every_stage_rank() -> None:
    # PP 2 on both roles: one decode rank per stage and TP rank, stage-major. Llama-3.1-70B
    # at TP 4 x PP 2: a rank holds 40 layers x 2 heads (2 x 2 x 128 x 2 B = 1,024 B/token),
    # 256 blocks of 16 at 4,096 tokens: 40 x 256 x 16 x 1,024 = 167,772,160 B, the same as a
    # TP 8 rank's 80 layers x 1 head; the request's total is the model's cache either way.
    one = _handover("llama-3.1-70b", Layout(tp=8), Layout(tp=8), 4096, gpu="H100")
    two = _handover("llama-3.1-70b", Layout(tp=4, pp=2), Layout(tp=4, pp=2), 4096,
                    gpu="H100")
    assert two.bytes_per_rank == (40 * 256 * 16 * 1024,) * 8 == one.bytes_per_rank
    assert two.bytes_per_request == one.bytes_per_request == 80 * 4096 * 8 * 2 * 128 * 2


# --- public logs (held out) -------------------------------------------------------------------

LOGS = [log for log in json.loads((DATA / "disagg" / "nixl_logs.json").read_text())["logs"]
        if log["held"]]


@pytest.mark.parametrize("log", LOGS, ids=[log["id"] for log in LOGS])
def test_kvplan_equals_the_logged_transfer_size(log: dict) -> None:
    # Every prompt length the log allows gives the logged "Avg MB per transfer" (bytes /
    # 2**20 rounded to 3 decimals, nixl/stats.py) on every decode rank; `decimals`: a report
    # that restates the value rounder (the llm-d study's tables: whole MB).
    lo, hi = log["prompt_tokens"]["min"], log["prompt_tokens"]["max"]
    nd = log.get("decimals", 3)
    for prompt in sorted({lo, (lo + hi) // 2, hi}):
        h = _handover(str(DATA.parent.parent / log["config"]), Layout(tp=log["prefill_tp"]),
                      Layout(tp=log["decode_tp"]), prompt, kv_dtype=log["kv_dtype"],
                      extra={"block_size": log["block_size"]}, gpu="H100")
        sizes = {round(b / MiB, nd) for b in h.transfer_bytes}
        assert sizes == {log["avg_mib_per_transfer"]}, (prompt, sizes)
        if log["transfers"] is not None:
            assert len(h.transfer_bytes) == log["transfers"]


# --- measured here: vLLM 0.32.0's CPU build with NIXL (not public logs) -----------------------

CPU_RUNS = sorted((DATA / "disagg" / "nixl_cpu").glob("*/run.json"))
CPU_REQUESTS = [(run, i) for run in CPU_RUNS
                for i in range(len(json.loads(run.read_text())["requests"]))]


@pytest.mark.parametrize("run_json,i", CPU_REQUESTS,
                         ids=[f"{r.parent.name}-{i}" for r, i in CPU_REQUESTS])
def test_kvplan_equals_the_transfer_measured_here(run_json: Path, i: int) -> None:
    # tests/benches/nixl_cpu_run.py: one request's KV read by a vLLM 0.32.0 decode server from a
    # prefill server over NIXL on this machine's CPUs; the decode log's "Num successful
    # transfers" (one read per decode rank and prefill source) and "Avg MB per transfer"
    # (bytes / 2**20 rounded to 3 decimals, nixl/stats.py) for the exact prompt length.
    run = json.loads(run_json.read_text())
    r = run["requests"][i]
    h = _handover(str(run_json.parent / "config.json"), Layout(tp=run["prefill_tp"]),
                  Layout(tp=run["decode_tp"]), r["prompt_tokens"], gpu="H100",
                  **kvplan_inputs(run))
    assert {round(b / MiB, 3) for b in h.transfer_bytes} == {r["avg_mib_per_transfer"]}
    assert len(h.transfer_bytes) == r["transfers"]
    # The prefill server's kv_transfer_params named, per KV cache group, the blocks kvplan moves
    # per layer of that kind (cdiv(prompt, block); a sliding group its clipped tail, a recurrent
    # group its state slot: base_scheduler.py get_exchange_clipped_blocks). None: a run rebuilt
    # from the servers' logs, which do not print them.
    if r["remote_blocks_per_group"] is not None:
        assert set(r["remote_blocks_per_group"]) == {m.units for m in h.moves}


def test_the_log_file_keeps_an_url_for_each_log() -> None:
    data = json.loads((DATA / "disagg" / "nixl_logs.json").read_text())
    assert all(log["url"] for log in data["logs"])
    assert all(log.get("why_not_held") for log in data["logs"] if not log["held"])


# --- properties -------------------------------------------------------------------------------

@given(st.integers(1, 40_000), st.sampled_from([(1, 1), (2, 4), (4, 2), (8, 1), (1, 8)]))
@settings(max_examples=30, deadline=None)
def test_dense_handover_is_the_paged_prompt_cache(prompt: int, tps: tuple[int, int]) -> None:
    # For a dense GQA model with KV heads >= both TPs, every decode rank's bytes sum to the
    # whole prompt's paged cache on one GPU (cdiv(I, 16) x 16 tokens x all heads), whatever
    # the TP pair: heads are split, never duplicated.
    p, d = tps
    h = _handover("llama-3.1-8b", Layout(tp=p), Layout(tp=d), prompt, gpu="H100",
                  output_len=16)
    assert h.bytes_per_request == 32 * math.ceil(prompt / 16) * 16 * 2 * 8 * 128 * 2
    assert sum(h.transfer_bytes) == sum(h.sender_bytes) == h.bytes_per_request


# --- refusals ---------------------------------------------------------------------------------

def test_refusals_are_one_line_errors() -> None:
    with pytest.raises(InputError, match="divide"):
        _handover("llama-3.1-8b", Layout(tp=2), Layout(tp=3), 100, gpu="H100")
    with pytest.raises(InputError, match="pipeline"):
        _handover("llama-3.1-70b", Layout(tp=8), Layout(tp=4, pp=2), 100, gpu="H100")
    with pytest.raises(InputError, match="0.11"):
        _handover("llama-3.1-8b", Layout(tp=1), Layout(tp=1), 100, gpu="H100",
                  engine_version="0.10.0")
    # The indexer's handover is read at 0.32 only (sliding and recurrent layers by release:
    # tests/test_vllm_connector_releases.py).
    with pytest.raises(InputError, match="indexer handover from vLLM 0.32"):
        _handover("deepseek-v3.2", Layout(tp=8), Layout(tp=8), 100, engine_version="0.24.0")
    # SGLang's and TensorRT-LLM's handovers: tests/test_disagg_engines.py.


# --- links ------------------------------------------------------------------------------------

def test_link_presets_carry_their_sources() -> None:
    names = kv_link_names()
    assert {"ib-ndr", "ib-hdr", "roce-400", "roce-200", "efa-p5", "nvlink4", "pcie5"} <= set(
        names)
    for name in names:
        link = get_kv_link(name)
        assert set(dict(link.sources)) == {"line_rate", "rails_per_gpu", "achieved",
                                           "latency"}
    # InfiniBand NDR: 400 Gb/s = 50 GB/s per NIC, one per GPU, 90 % reached: 45 GB/s.
    assert get_kv_link("ib-ndr").bytes_per_s == 45e9
    # EFA on p5: 32 x 100 Gb/s for 8 GPUs = 4 rails of 12.5 GB/s, 80 %: 40 GB/s.
    assert get_kv_link("efa-p5").bytes_per_s == 40e9
    assert get_kv_link("ib-ndr").with_rails(2).bytes_per_s == 90e9
    with pytest.raises(InputError, match="--link"):
        get_kv_link("myrinet")


def test_transfer_time_is_the_busiest_rank_over_its_rails() -> None:
    # Llama-3.1-70B 4 -> 8 at 8k: each prefill rank sends 640 MiB to two decode ranks, the
    # busiest end: 671,088,640 B / 45 GB/s + 10 us = 14.923 ms on ib-ndr.
    plan = _plan("llama-3.1-70b", Layout(tp=4), Layout(tp=8), 8192, gpu="H100")
    assert plan.transfer_ms == pytest.approx((671_088_640 / 45e9 + 10e-6) * 1e3)


# --- the ratio --------------------------------------------------------------------------------

def test_ratio_respects_decode_kv_and_slos() -> None:
    plan = _plan("llama-3.1-70b", Layout(tp=4), Layout(tp=8), 8192, gpu="H100",
                 concurrency=64, slo_tpot_ms=40.0)
    r = plan.ratio
    assert r is not None and r.chosen is not None
    for o in r.options:
        # The decode pool counts the requests in flight from prefill: a hard limit.
        assert o.decode_in_flight + math.ceil(o.rate_rps / o.decode_workers * r.transfer_ms
                                              / 1e3) <= r.decode_kv_requests
        assert o.prefill_utilization < 1
        # TTFT = queue + prefill + transfer.
        assert o.ttft_ms >= r.prefill_ms + r.transfer_ms
    assert r.chosen.meets_slo and r.chosen.tpot_ms <= 40.0
    assert r.chosen.gpus == min(o.gpus for o in r.options if o.meets_slo)
    # The whole TTFT: the M/D/1 queue, the prefill, and NIXL's handover on decode steps.
    o, step_s = r.chosen, r.chosen.tpot_ms / 1e3
    rho, prefill_s = o.prefill_utilization, r.prefill_ms / 1e3
    queue_s = rho / (2 * (1 - rho)) * prefill_s
    steps = max(1, math.ceil(r.transfer_ms / 1e3 / step_s)) + 1.5
    assert o.ttft_ms == pytest.approx((queue_s + prefill_s + steps * step_s) * 1e3)
    # A decode worker's launch runs the batch the ratio put on it.
    argv = plan.decode.launch.head.argv
    assert argv[argv.index("--max-num-seqs") + 1] == str(r.chosen.decode_in_flight)


def test_rate_target_meets_a_ttft_slo_by_adding_prefill_workers() -> None:
    loose = _plan("llama-3.1-8b", Layout(tp=1), Layout(tp=1), 8192, gpu="H100", rate=8.0,
                  output_len=256).ratio
    tight = _plan("llama-3.1-8b", Layout(tp=1), Layout(tp=1), 8192, gpu="H100", rate=8.0,
                  output_len=256, slo_ttft_ms=loose.chosen.ttft_ms * 0.8).ratio
    assert tight.chosen is not None
    assert tight.chosen.prefill_workers > loose.chosen.prefill_workers
    assert tight.chosen.ttft_ms <= loose.chosen.ttft_ms * 0.8


# --- CLI --------------------------------------------------------------------------------------

def test_cli_json_contract() -> None:
    result = runner.invoke(app, [
        "plan", "llama-3.1-70b", "--disagg", "--prefill-tp", "4", "--decode-tp", "8",
        "--input-len", "8k", "--output-len", "1k", "--gpu", "H100", "--link", "ib-ndr",
        "--concurrency", "64", "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert {"kv_transfer_bytes_per_request", "kv_transfer_bytes_per_rank", "transfer_ms",
            "prefill", "decode", "ratio", "link", "handover"} <= set(data)
    assert data["input_len"] == 8192 and data["output_len"] == 1024
    assert data["kv_transfer_bytes_per_rank"] == [335_544_320] * 8
    for role in ("prefill", "decode"):
        r = data[role]
        assert {"layout", "kv_budget_bytes", "max_concurrency", "command"} <= set(r)
        assert '"kv_connector":"NixlConnector"' in r["command"]
    assert data["prefill"]["layout"]["tp"] == 4 and data["decode"]["layout"]["tp"] == 8


def test_cli_table_shows_both_roles_in_80_columns() -> None:
    result = runner.invoke(app, [
        "plan", "llama-3.1-8b", "--disagg", "--input-len", "4k", "--output-len", "512",
        "--gpu", "H100", "--rate", "4"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert "prefill" in result.stdout and "decode" in result.stdout
    assert "# prefill worker:" in result.stdout and "# decode worker:" in result.stdout
    table = [line for line in result.stdout.splitlines() if line[:1] in "┏┃┡│└"]
    assert table and max(len(line) for line in table) <= 80


def test_cli_answers_on_the_first_line() -> None:
    # Issue 28's answer first: the roles, what the decode worker holds and the handover, whose
    # bytes are the JSON's (2,560 MiB = 8 ranks x 335,544,320 B above).
    result = runner.invoke(app, [
        "plan", "llama-3.1-70b", "--disagg", "--prefill-tp", "4", "--decode-tp", "8",
        "--input-len", "8k", "--output-len", "1k", "--gpu", "H100"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    data = json.loads(runner.invoke(app, [
        "plan", "llama-3.1-70b", "--disagg", "--prefill-tp", "4", "--decode-tp", "8",
        "--input-len", "8k", "--output-len", "1k", "--gpu", "H100", "-f", "json"]).stdout)
    first = result.stdout.splitlines()[0]
    assert first.startswith("Prefill 4 x H100-80GB (tp 4), decode 8 (tp 8) holding ")
    assert f"holding {int(data['decode']['max_concurrency']):,};" in first
    assert "2,560.0 MiB handed over per request" in first


def test_cli_bad_input_is_exit_2() -> None:
    for args in (["--link", "myrinet"], ["--prefill-tp", "3", "--decode-tp", "2"],
                 ["--engine", "sglang", "--connector", "nixl-rdma"],
                 ["--concurrency", "4", "--rate", "1"]):
        result = runner.invoke(app, ["plan", "llama-3.1-8b", "--disagg", "--gpu", "H100",
                                     *args])
        assert result.exit_code == 2, (args, result.output)
        assert "Traceback" not in result.output
    # An option the other mode would ignore is refused, not dropped.
    for args, say in ((["--disagg", "--nodes", "2"], "--nodes: not taken with --disagg"),
                      (["--prefill-tp", "2"], "--prefill-tp: needs --disagg")):
        result = runner.invoke(app, ["plan", "llama-3.1-8b", "--gpu", "H100", *args])
        assert result.exit_code == 2 and say in result.output, result.output


@given(st.integers(1, 20_000), st.integers(1, 2_000))
@settings(max_examples=25, deadline=None)
def test_handover_grows_with_the_prompt_and_windows_cap_it(prompt: int, more: int) -> None:
    # More prompt never moves fewer bytes; a sliding-window model's window layers stop growing
    # past the window (gpt-oss-20b: 12 window layers of at most 9 blocks of 32,768 B).
    a = _handover("gpt-oss-20b", Layout(tp=1), Layout(tp=1), prompt, output_len=16)
    b = _handover("gpt-oss-20b", Layout(tp=1), Layout(tp=1), prompt + more, output_len=16)
    assert b.bytes_per_request >= a.bytes_per_request
    full = 12 * math.ceil((prompt + more) / 16) * 32768
    assert b.bytes_per_request - full <= 12 * 9 * 32768


def test_handover_ends_on_decode_step_boundaries() -> None:
    # vLLM's scheduler (vllm/v1/core/sched/scheduler.py, 0.32): reads posted as a step starts
    # are reported finished at the end of a step, then one more step recomputes the last
    # prompt token and samples the first output token; the request first waits half a step to
    # be scheduled. By hand, at a 20 ms decode step:
    # - a 3.21 ms transfer ends with the first step: (1 + 1.5) x 20 = 50 ms;
    # - a 45 ms transfer takes ceil(45 / 20) = 3 steps: (3 + 1.5) x 20 = 90 ms;
    # - a connector whose flow is not read: the transfer alone.
    from kvplan.analysis.disagg_ratio import handover_s
    assert handover_s(3.21e-3, 20e-3, 1.5) == pytest.approx(50e-3)
    assert handover_s(45e-3, 20e-3, 1.5) == pytest.approx(90e-3)
    assert handover_s(45e-3, 20e-3, None) == 45e-3


def test_nixl_states_its_first_token_steps() -> None:
    h = _handover(str(CONFIGS / "qwen3-0.6b.json"), Layout(tp=1), Layout(tp=1), 100,
                  engine_version="0.32.0")
    assert h.first_token_steps == 1.5
    assert h.to_dict()["first_token_steps"] == 1.5


@given(transfer_ms=st.floats(0, 500), step_ms=st.floats(0.5, 100))
@settings(max_examples=50, deadline=None)
def test_handover_is_at_least_the_transfer_and_two_and_a_half_steps(transfer_ms: float,
                                                                    step_ms: float) -> None:
    from kvplan.analysis.disagg_ratio import handover_s
    t = handover_s(transfer_ms / 1e3, step_ms / 1e3, 1.5)
    assert t >= transfer_ms / 1e3 + 1.5 * step_ms / 1e3 - 1e-12
    assert t >= 2.5 * step_ms / 1e3 - 1e-12
