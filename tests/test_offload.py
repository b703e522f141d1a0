"""KV offload tiers and prefix reuse (issue 29): each engine's rule against numbers worked out by
hand from real models' configs, the public start-up logs of tests/data/engine_logs/
offload_logs.json (held out), prefix reuse by hand, hypothesis properties, and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kvplan.analysis.estimate_run import run_estimate
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.offload_run import OffloadAsk
from kvplan.capacity.offload import offload_facts
from kvplan.cli import app
from kvplan.engines.base import Engine
from kvplan.engines.offload import OffloadFacts, OffloadSettings
from kvplan.engines.sglang.offload import hicache_host_tokens, hicache_log
from kvplan.engines.trtllm.offload import secondary_blocks, secondary_log
from kvplan.sources.resolve import load_spec

LOGS = json.loads((Path(__file__).parent / "data" / "engine_logs" / "offload_logs.json")
                  .read_text())["logs"]
runner = CliRunner()


def _answer(model: str, engine: str, settings: OffloadSettings, *, hit: float = 0.0,
            **kw: object):
    kw.setdefault("kv_budget_gib", 20.0)
    inputs = estimate_inputs(load_spec(model), engine=Engine(engine), **{"context": 8192, **kw})
    return run_estimate(inputs, offload=OffloadAsk(settings=settings, prefix_hit_rate=hit))


def _cli(*args: str):
    result = runner.invoke(app, list(args), env={"COLUMNS": "120"})
    return result, (json.loads(result.stdout) if result.exit_code in (0, 3)
                    and "--format" in args else None)


# --- vLLM native (vllm/v1/kv_offload/cpu/spec.py, vLLM 0.32) ---------------------------------

def test_vllm_native_llama_8b_by_hand() -> None:
    # Llama-3.1-8B config.json: 32 layers, 8 KV heads, head_dim 128, bf16; vLLM block 16.
    # page_size_bytes = 16 x 8 x 128 x 2 (K, V) x 2 B = 65,536; a block slot, every layer:
    # 65,536 x 32 = 2,097,152 = worker_kv_bytes_per_block; world_size 1, a multiple of 4 KiB.
    # cpu_bytes_to_use = 64 x 2^30 = 68,719,476,736 -> num_chunks = 32,768 (one block each),
    # x 16 = 524,288 tokens; the /dev/shm region 32,768 x 2,097,152 B = 68.72 GB.
    off = _answer("llama-3.1-8b", "vllm", OffloadSettings(kv_offloading_size_gib=64)).offload
    assert off is not None
    (tier,) = off.tiers
    assert (tier.offload_blocks, tier.offload_tokens, tier.unit) == (32_768, 524_288, "blocks")
    assert tier.host_bytes_per_rank == 64 << 30
    assert tier.log is not None and tier.log.endswith("(68.72 GB)")


def test_vllm_native_gib_is_over_all_ranks() -> None:
    # Llama-3.1-70B: 80 layers, 8 KV heads, head_dim 128; TP 8: one KV head per rank.
    # page = 16 x 1 x 128 x 2 x 2 = 8,192 B; per rank 80 tensors: 655,360 B a block; x world 8
    # = 5,242,880 B. 500 GiB = 536,870,912,000 B -> 102,400 blocks = 1,638,400 tokens, each rank
    # pinning 102,400 x 655,360 B = 62.5 GiB (500 GiB over the 8 ranks).
    off = _answer("llama-3.1-70b", "vllm", OffloadSettings(kv_offloading_size_gib=500),
                  tp=8).offload
    assert off is not None
    (tier,) = off.tiers
    assert (tier.offload_blocks, tier.offload_tokens) == (102_400, 1_638_400)
    assert tier.host_bytes_per_rank * 8 == 500 << 30


def test_vllm_native_mla_keeps_one_copy_at_tp() -> None:
    # DeepSeek-V2-Lite (MLA): 27 layers x (512 + 64) x 2 B = 31,104 B a token; a 16-token block
    # of every layer 497,664 B = 121.5 x 4 KiB -> a chunk rounds up to 499,712 B. At TP 2 every
    # rank holds the same latent: one copy (replicated_layout), so 10 GiB = 10,737,418,240 B //
    # 499,712 = 21,487 chunks; a GQA model at TP 2 would keep two copies.
    off = _answer("deepseek-v2-lite", "vllm", OffloadSettings(kv_offloading_size_gib=10),
                  tp=2).offload
    assert off is not None
    (tier,) = off.tiers
    assert (tier.offload_blocks, tier.offload_tokens) == (21_487, 21_487 * 16)
    assert "one MLA copy" in tier.rule


def test_vllm_native_hybrid_slot() -> None:
    # A hybrid model's block slot holds every group's page: the chunk is the whole slot.
    ans = _answer("gemma-3-27b", "vllm", OffloadSettings(kv_offloading_size_gib=10))
    assert ans.plan is not None and ans.offload is not None
    stage = ans.plan.stages[0]
    slot = stage.page_bytes * stage.group_size
    assert ans.offload.tiers[0].offload_blocks == (10 << 30) // (-(-slot // 4096) * 4096)


# --- LMCache (lmcache/v1/cache_engine.py, local_disk_backend.py) -----------------------------

def test_lmcache_mla_chunks_by_hand() -> None:
    # DeepSeek-V2-Lite config.json: 27 layers, kv_lora_rank 512, qk_rope_head_dim 64; bf16 MLA:
    # (512 + 64) x 2 B x 27 = 31,104 B a token; chunk 256: 7,962,624 B. --kv-offloading-size 10 at
    # TP 1 (LMCacheConnectorV1: 10 / 1 per rank): int(10 x 1024^3) = 10,737,418,240 B // chunk =
    # 1,348 chunks = 345,088 tokens. Disk 100 GiB: 107,374,182,400 // 7,962,624 = 13,484 chunks.
    off = _answer("deepseek-v2-lite", "vllm", OffloadSettings(
        kv_offloading_size_gib=10, kv_offloading_backend="lmcache", lmcache_disk_gib=100)).offload
    assert off is not None
    cpu, disk = off.tiers
    assert (cpu.offload_blocks, cpu.offload_tokens, cpu.unit) == (1_348, 345_088, "chunks")
    assert (disk.offload_blocks, disk.medium, disk.host_bytes_per_rank) == (13_484, "disk", 0)
    assert off.offload_blocks == 1_348 + 13_484
    assert cpu.log is not None and "'max_local_cpu_size': 10.0" in cpu.log


def test_lmcache_size_per_rank_with_tp() -> None:
    # Llama-3.1-8B at TP 2: 32 layers x 4 KV heads x 128 x 2 x 2 B = 65,536 B a token per rank;
    # chunk 256 -> 16 MiB. --kv-offloading-size 16 / 2 ranks = 8 GiB per rank -> 512 chunks.
    off = _answer("llama-3.1-8b", "vllm", OffloadSettings(
        kv_offloading_size_gib=16, kv_offloading_backend="lmcache"), tp=2).offload
    assert off is not None and off.tiers[0].offload_blocks == 512


# --- SGLang HiCache (srt/mem_cache/memory_pool_host.py) ---------------------------------------

def test_hicache_ratio_by_hand() -> None:
    # Llama-3.1-8B on SGLang, page 1: cell 32 x 8 x 128 x 2 x 2 = 131,072 B. A 20 GiB budget:
    # 21,474,836,480 // 131,072 = 163,840 device tokens; ratio 2 -> 327,680, + one page =
    # 327,681 host tokens = 42,949,804,032 B: "Allocating 42.95 GB host memory ...".
    off = _answer("llama-3.1-8b", "sglang", OffloadSettings(hierarchical_cache=True)).offload
    assert off is not None
    (tier,) = off.tiers
    assert off.hbm_token_capacity == 163_840
    assert (tier.offload_tokens, tier.offload_blocks, tier.unit) == (327_681, 327_681, "pages")
    assert tier.log == "Allocating 42.95 GB host memory for hierarchical KV cache."


def test_hicache_size_and_page_alignment() -> None:
    # --hicache-size 10 (GB) at page 64: int(10e9 // 131,072) = 76,293 -> 76,293 // 64 + 1 =
    # 1,193 pages = 76,352 tokens. The host pool must outgrow the device pool (163,840): refused.
    facts = OffloadFacts(bytes_per_token=131_072, page_bytes=0, group_size=1, num_groups=1,
                         block_size=64, device_tokens=1_000)
    assert hicache_host_tokens(1_000, 131_072, 64, size_gb=10) == 76_352
    result, _ = _cli("estimate", "llama-3.1-8b", "--engine", "sglang", "--kv-budget-gib", "20",
                     "--enable-hierarchical-cache", "--hicache-size", "10")
    assert result.exit_code == 2 and "larger than the device pool" in result.stderr
    assert facts.device_tokens < 76_352


@pytest.mark.parametrize("log", [e for e in LOGS if e["engine"] == "vllm"
                                 and e.get("matched", True)], ids=lambda e: e["model"])
def test_vllm_native_logs(log: dict) -> None:
    """The public vLLM 'Created mmap file' lines, to the print's rounding (held out: the rule
    was read from vLLM 0.32's source before they were found)."""
    # Qwen3-0.6B config.json: 28 layers, 8 KV heads, head_dim 128, bf16, block 16: one block
    # slot 28 x 16 x 8 x 128 x 2 x 2 B = 1,835,008 B (448 x 4 KiB), TP 1. cpu_bytes_to_use
    # 8,000,000,000 // 1,835,008 = 4,359 chunks = 7,998,799,872 B = "8.00 GB" (/ 1e9).
    by_hand = {"qwen3-0.6b": (4_359, 7_998_799_872)}
    result, data = _cli("estimate", *log["kvplan_args"], "--format", "json")
    assert result.exit_code == 0, result.output
    (tier,) = data["offload"]["tiers"]
    assert (tier["offload_blocks"], tier["host_bytes_per_rank"]) == by_hand[log["model"]]
    assert tier["log"][tier["log"].rindex("("):] == log["line"][log["line"].rindex("("):]


@pytest.mark.parametrize("log", [e for e in LOGS if e["engine"] == "sglang"
                                 and e.get("matched", True)], ids=lambda e: e["line"][-60:])
def test_hicache_logs(log: dict) -> None:
    """The public HiCache lines, to the print's rounding (held out)."""
    if log["model"] == "llama-3.1-8b":
        # kvplan's own cell for the rank: 32 layers x (8 / 4) KV heads x 128 x 2 x 2 = 32,768 B.
        ans = _answer("llama-3.1-8b", "sglang", OffloadSettings(
            hierarchical_cache=True, hicache_size_gb=log["hicache_size_gb"]),
            tp=log["tp"], kv_budget_gib=1.0)
        assert ans.plan is not None
        cell = offload_facts(ans.plan).bytes_per_token
        assert cell == 32_768
        tokens = hicache_host_tokens(1, cell, 1, size_gb=log["hicache_size_gb"])
    else:
        # Qwen3-1.7B config.json (huggingface.co/Qwen/Qwen3-1.7B): 28 layers, 8 KV heads,
        # head_dim 128, bf16: 28 x 8 x 128 x 2 x 2 = 114,688 B a token; the logged device pool
        # 1,547,424 x 2.0 = 3,094,848, + one page (1) = 3,094,849 tokens = 354.942... GB.
        cell = 28 * 8 * 128 * 2 * 2
        tokens = hicache_host_tokens(log["device_tokens"], cell, 1, ratio=log["hicache_ratio"])
        assert tokens == 3_094_849
    assert log["line"].endswith(hicache_log(tokens * cell))


def test_hicache_file_backend_is_a_local_disk_tier() -> None:
    # srt/mem_cache/hicache_storage.py HiCacheFile (sgl-project/sglang main, 2026): one .bin per
    # page under SGLANG_HICACHE_FILE_BACKEND_STORAGE_DIR, no size limit: a disk tier SGLang does
    # not bound, whose reload runs at --disk-read-gbps. Llama-3.1-8B, page 1, 131,072 B a token;
    # an 8,192-token prompt with half of it a hit: 4,096 tokens x 131,072 B / 5e9 B/s =
    # 107.3741824 ms. mooncake (a remote store) stays "storage" and gets no disk time.
    result, data = _cli("estimate", "llama-3.1-8b", "--engine", "sglang", "--kv-budget-gib",
                        "20", "--enable-hierarchical-cache", "--hicache-storage-backend", "file",
                        "--disk-read-gbps", "5", "--gpu", "H100", "--prefix-hit-rate", "0.5",
                        "--context", "8k", "--format", "json")
    assert result.exit_code == 0, result.output
    off = data["offload"]
    disk = off["tiers"][1]
    assert (disk["medium"], disk["offload_tokens"], disk["unit"]) == ("disk", None, "pages")
    assert off["prefix"]["reloaded_tokens"] == 4096
    assert off["disk_reload_ms"] == pytest.approx(4096 * 131_072 / 5e9 * 1e3)
    result, data = _cli("estimate", "llama-3.1-8b", "--engine", "sglang", "--kv-budget-gib",
                        "20", "--enable-hierarchical-cache", "--hicache-storage-backend",
                        "mooncake", "--disk-read-gbps", "5", "--gpu", "H100",
                        "--prefix-hit-rate", "0.5", "--context", "8k", "--format", "json")
    assert result.exit_code == 0, result.output
    assert data["offload"]["tiers"][1]["medium"] == "storage"
    assert data["offload"]["disk_reload_ms"] is None


# --- TensorRT-LLM (_torch/pyexecutor/resource_manager.py) -------------------------------------

def test_trtllm_secondary_pool_by_hand() -> None:
    # Llama-3.1-8B: 131,072 B a token (32 x 8 x 128 x 2 x 2); block 32. host_cache_size 100 GiB
    # = 107,374,182,400 B / 131,072 = 819,200 tokens / 32 = 25,600 blocks.
    off = _answer("llama-3.1-8b", "trtllm", OffloadSettings(host_cache_size_gib=100)).offload
    assert off is not None
    (tier,) = off.tiers
    assert (tier.offload_blocks, tier.offload_tokens) == (25_600, 819_200)
    assert tier.log == secondary_log(25_600)
    # The logs found print 0 with host_cache_size unset: the rule gives 0 for 0 bytes.
    assert secondary_blocks(0, 131_072, 32) == 0


# --- prefix reuse (kvplan.capacity.offload) ---------------------------------------------------

def test_shared_prefix_counted_once_by_hand() -> None:
    # Llama-3.1-8B on vLLM, 20 GiB of KV: a block (16 tokens, 32 layers) is 2 MiB -> 10,240
    # blocks; 8,192 tokens take 512. Without sharing: 10,240 / 512 = 20 requests. A 1,000-token
    # shared prefix holds 1,000 // 16 = 62 full blocks (the 8 tokens past them are per request):
    # (10,240 - 62) / (512 - 62) = 22.62 -> 22 requests.
    plain = _answer("llama-3.1-8b", "vllm", OffloadSettings()).plan
    shared = _answer("llama-3.1-8b", "vllm", OffloadSettings(), shared_prefix=1000).plan
    assert plain is not None and shared is not None
    assert (plain.num_blocks, plain.max_requests) == (10_240, 20)
    assert shared.max_requests == 22
    assert shared.max_concurrency == pytest.approx((10_240 - 62) / 450)


def test_prefix_across_tiers_by_hand() -> None:
    # The same, hit rate 0.5 of the 8,192-token prompt: 4,096 tokens hit (256 whole blocks);
    # 992 of them (62 blocks) resident in HBM, 3,104 reloaded from the 64 GiB CPU tier, 4,096
    # computed. The request's own HBM KV: 450 blocks x 2 MiB; the shared 62 blocks once.
    off = _answer("llama-3.1-8b", "vllm", OffloadSettings(kv_offloading_size_gib=64), hit=0.5,
                  shared_prefix=1000).offload
    assert off is not None
    p = off.prefix
    assert (p.resident_tokens, p.reloaded_tokens, p.computed_tokens) == (992, 3_104, 4_096)
    assert p.hbm_kv_bytes_per_request == 450 << 21
    assert p.hbm_kv_bytes_shared == 62 << 21
    assert p.prefixes_in_offload == 524_288 // 3_104
    # Without a tier nothing is reloaded: the hit beyond the resident blocks is computed.
    none = _answer("llama-3.1-8b", "vllm", OffloadSettings(), hit=0.5,
                   shared_prefix=1000).offload
    assert none is not None and none.prefix.reloaded_tokens == 0
    assert none.prefix.computed_tokens == 8_192 - 992


# --- properties -------------------------------------------------------------------------------

@settings(max_examples=25, deadline=None)
@given(gib=st.floats(min_value=0.5, max_value=400), more=st.floats(min_value=0, max_value=400),
       engine=st.sampled_from(["vllm", "trtllm", "sglang"]))
def test_offload_never_reduces_hbm_and_grows_with_size(gib: float, more: float,
                                                       engine: str) -> None:
    def settings_for(size: float) -> OffloadSettings:
        return {"vllm": OffloadSettings(kv_offloading_size_gib=size),
                "trtllm": OffloadSettings(host_cache_size_gib=size),
                "sglang": OffloadSettings(hierarchical_cache=True, hicache_size_gb=size + 30)
                }[engine]

    base = _answer("llama-3.1-8b", engine, OffloadSettings(), kv_budget_gib=3.0)
    small = _answer("llama-3.1-8b", engine, settings_for(gib), kv_budget_gib=3.0)
    big = _answer("llama-3.1-8b", engine, settings_for(gib + more), kv_budget_gib=3.0)
    assert base.plan == small.plan == big.plan  # the HBM pool is the same with a tier
    assert small.offload is not None and big.offload is not None
    assert big.offload.offload_tokens >= small.offload.offload_tokens


# --- the CLI ----------------------------------------------------------------------------------

def test_estimate_json_and_table() -> None:
    result, data = _cli("estimate", "llama-3.1-8b", "--gpu", "H100", "-c", "8192",
                        "--kv-offloading-size", "64", "--prefix-hit-rate", "0.5",
                        "--format", "json")
    assert result.exit_code == 0, result.output
    off = data["offload"]
    assert (off["offload_tokens"], off["offload_blocks"]) == (524_288, 32_768)
    assert off["host_mem_bytes"] == 2 << 40 and off["host_mem_fits"] is True
    assert off["host_link"] == "pcie-gen5"
    assert off["reload_ms"] < off["recompute_ms"]
    assert isinstance(off["reload_wins_above_tokens"], int)
    table = runner.invoke(app, ["estimate", "llama-3.1-8b", "--gpu", "H100",
                                "--kv-offloading-size", "64"], env={"COLUMNS": "80"})
    assert "vLLM native CPU" in table.stdout and "524,288 tokens" in table.stdout
    assert max(len(line) for line in table.stdout.splitlines()) <= 80


@pytest.mark.parametrize(("args", "message"), [
    (["--engine", "vllm", "--host-cache-size", "10"], "--engine trtllm setting"),
    (["--engine", "sglang", "--kv-offloading-size", "10"], "--engine vllm setting"),
    (["--engine", "sglang", "--hicache-size", "10"], "needs --enable-hierarchical-cache"),
    (["--lmcache-cpu-gib", "4", "--kv-offloading-size", "4"], "--kv-offloading-backend lmcache"),
])
def test_refusals(args: list[str], message: str) -> None:
    result, _ = _cli("estimate", "llama-3.1-8b", "--kv-budget-gib", "20", *args)
    assert result.exit_code == 2, result.output
    assert message in result.stderr


def test_plan_rate_refuses_tiers() -> None:
    result, _ = _cli("plan", "llama-3.1-8b", "--rate", "2", "--slo-ttft-ms", "500",
                     "--kv-offloading-size", "10")
    assert result.exit_code == 2 and "--rate" in result.stderr


def test_offload_needs_a_device() -> None:
    result, _ = _cli("estimate", "llama-3.1-8b", "--kv-offloading-size", "10")
    assert result.exit_code == 2 and "need --gpu" in result.stderr


def test_plan_verdict_shows_the_tiers_and_host_memory() -> None:
    result, data = _cli("plan", "llama-3.1-70b", "-n", "32", "-c", "32k", "--gpu", "H100",
                        "--kv-offloading-size", "500", "--format", "json")
    assert result.exit_code == 0, result.output
    assert data["offload"]["offload_tokens"] == 1_638_400
    assert "beyond HBM: 1,638,400 tokens in vLLM native CPU" in data["reason"]
    assert data["command"].endswith("--kv-offloading-size 500 --kv-offloading-backend native")
    # 5,000 GiB over the 8 GPUs of a DGX H100 (2 TiB): the engine cannot pin it.
    result, data = _cli("plan", "llama-3.1-70b", "-n", "32", "-c", "32k", "--gpu", "H100",
                        "--kv-offloading-size", "5000", "--format", "json")
    assert result.exit_code == 3
    assert data["verdict"] == "DOES NOT FIT" and data["offload"]["host_mem_fits"] is False


def test_shared_prefix_tokens_is_an_alias() -> None:
    _, a = _cli("estimate", "llama-3.1-8b", "--kv-budget-gib", "20", "-c", "8192",
                "--shared-prefix", "1000", "--format", "json")
    _, b = _cli("estimate", "llama-3.1-8b", "--kv-budget-gib", "20", "-c", "8192",
                "--shared-prefix-tokens", "1000", "--format", "json")
    assert a == b and a["max_requests"] == 22


def test_report_draws_the_host_tier(tmp_path: Path) -> None:
    out = tmp_path / "r.md"
    result = runner.invoke(app, ["report", "llama-3.1-8b", "-c", "8192", "--gpu", "H100", "-o",
                                 str(out), "--format", "markdown", "--kv-offloading-size", "64"])
    assert result.exit_code == 0, result.output
    text = out.read_text()
    # DGX H100: 2 TiB over 8 GPUs = 256 GiB a GPU, 64 of them the vLLM tier.
    assert "| host DRAM, per GPU | host: vLLM native CPU | 64.00 |" in text
    assert "| host DRAM, per GPU | host: not used | 192.00 |" in text
    assert "KV offload tiers (vllm), per GPU" in text


def test_offload_guide_is_current() -> None:
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, "-m", "tests.benches.offload_guide"], cwd=root,
                         capture_output=True, text=True, check=True).stdout
    assert out == (root / "examples" / "offload.md").read_text()


@pytest.mark.skipif(not __import__("os").environ.get("VLLM_ORACLE_PYTHON"),
                    reason="opt-in: VLLM_ORACLE_PYTHON=<a python with vLLM installed>")
def test_vllm_own_offloading_spec_agrees() -> None:
    """vLLM's CPUOffloadingSpec itself (tests/oracle/vllm_offload_check.py) sizes the CPU tier
    from kvplan's block slot: its num_chunks equal kvplan's offload_blocks (vLLM 0.32.0: 32,768,
    102,400 and 21,487 on 2026-12-02)."""
    import os
    import subprocess

    cases, want = [], {}
    for name, model, tp, gib in (("llama8b_tp1", "llama-3.1-8b", 1, 64),
                                 ("llama70b_tp8", "llama-3.1-70b", 8, 500),
                                 ("dsv2lite_tp2", "deepseek-v2-lite", 2, 10)):
        ans = _answer(model, "vllm", OffloadSettings(kv_offloading_size_gib=gib), tp=tp)
        assert ans.plan is not None and ans.offload is not None
        stage = ans.plan.stages[0]
        replicated = "one MLA copy" in ans.offload.tiers[0].rule
        cases.append([name, stage.page_bytes * stage.group_size, tp, replicated, gib])
        want[name] = ans.offload.tiers[0].offload_blocks
    script = Path(__file__).parent / "oracle" / "vllm_offload_check.py"
    proc = subprocess.run([os.environ["VLLM_ORACLE_PYTHON"], str(script), json.dumps(cases)],
                          capture_output=True, text=True, check=True, timeout=600)
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == want


def test_every_engine_answers_its_offload_tiers() -> None:
    # Each engine package has its rule (kvplan.engines.<name>.offload.OFFLOAD), and refuses the
    # flags of the others in one line.
    for engine in Engine:
        assert callable(engine.offload.tiers)
    with pytest.raises(Exception, match="--engine vllm setting"):
        OffloadSettings(kv_offloading_size_gib=1).refuse_others("trtllm")


def test_host_presets_carry_their_sources() -> None:
    from kvplan.hardware.gpus import GPUS
    from kvplan.hardware.hosts import gpu_host

    h100 = gpu_host("H100-80GB")
    assert h100 is not None and h100.node is not None
    assert h100.node.host_mem_bytes == 2 << 40 and h100.node.gpus_per_node == 8
    assert h100.link.bytes_per_s == 63_000_000_000
    gb200 = gpu_host("GB200")
    assert gb200 is not None and gb200.link.name == "nvlink-c2c"
    for name, gpu in GPUS.items():  # every discrete GPU has a host link, each with a source
        if gpu.unified_memory:
            assert gpu_host(name) is None  # GB10: no host link, the GPU shares the DRAM
            continue
        host = gpu_host(name)
        assert host is not None, name
        assert host.link.source and host.link_source
        assert host.node is None or host.node.source


def test_commands_share_the_offload_defaults() -> None:
    # Typer reads a default from each command's parameter, so estimate, plan and report repeat
    # the offload options' defaults; offload_ask's signature holds the one copy (the asks at
    # every default build nothing), and this holds the commands to it.
    import inspect

    from kvplan.cli import offload_opts as oo
    from kvplan.cli.app import estimate_cmd
    from kvplan.cli.plan_cmd import plan_cmd
    from kvplan.cli.report_cmd import report_cmd

    assert oo.offload_ask(**oo._DEFAULTS) is None
    for command in (estimate_cmd, plan_cmd, report_cmd):
        params = inspect.signature(command).parameters
        assert {k: params[k].default for k in oo.ASK_KEYS} == oo._DEFAULTS, command.__name__
