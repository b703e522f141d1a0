"""dynpool67: a disaggregated row's own per-role launch flags (tests.benches.deploy_flags) reach
each role's pool and steps in the replay (tests.benches.disagg_rows)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.benches import deploy_flags, disagg_rows
from tests.benches.prospdis66_runs import load


def _row(suffix: str) -> dict[str, str]:
    (run,) = [r for r in load()["runs"] if r["id"].endswith(suffix)]
    return {**run["row"], "silicon_data_source": ""}


def test_role_flags_parse_each_field_and_refuse_a_bad_one() -> None:
    row = {"prefill_gpu_memory_utilization": "0.95", "prefill_block_size": "128",
           "prefill_max_num_batched_tokens": "16384", "prefill_enable_prefix_caching": "false",
           "prefill_max_num_seqs": "", "decode_enforce_eager": "true"}
    assert deploy_flags.role_flags(row, "prefill") == {
        "mem_fraction": 0.95, "block_size": 128, "max_num_batched_tokens": 16384,
        "prefix_caching": False}
    assert deploy_flags.role_flags(row, "decode") == {"enforce_eager": True}
    assert deploy_flags.without_flags(row) == {}
    with pytest.raises(ValueError, match="prefill_block_size"):
        deploy_flags.role_flags({"prefill_block_size": "big"}, "prefill")
    with pytest.raises(ValueError, match="expected true or false"):
        deploy_flags.role_flags({"decode_enforce_eager": "yes"}, "decode")


def test_every_prospdis66_run_states_its_flags_per_role_with_its_source() -> None:
    for run in load()["runs"]:
        flags = run["engine_flags"]
        assert "dynamo_disaag_serving_gke/blob/" in flags["source"] and flags["not_taken"]
        for role in deploy_flags.ROLES:
            stated = flags[role]["stated"]
            got = deploy_flags.role_flags(run["row"], role)
            assert f"--gpu-memory-utilization {run['row'][f'{role}_gpu_memory_utilization']}" \
                in stated
            assert got["block_size"] == 128 and "--block-size 128" in stated
            assert ("max_num_batched_tokens" in got) == ("--max-num-batched-tokens" in stated)
            assert ("prefix_caching" in got) == ("--no-enable-prefix-caching" in stated)
            assert flags[role]["replicas"] == int(run["row"][f"{role}_num_workers"])


def test_doc11s_prefill_pool_at_its_flags_by_hand() -> None:
    # doc 11 (llama31_70b_dynamo_a4_spot_3p1d.yaml): prefill TP 1 at --gpu-memory-utilization
    # 0.95 --max-num-batched-tokens 8192 --block-size 128 --kv-cache-dtype fp8; decode TP 1 at
    # 0.9, block 128, vLLM 0.20.1's default budget (8,192 on a B200).
    row = _row("doc11")
    st = disagg_rows._setup(disagg_rows._setup_key(row))
    p, d = st.prefill, st.decode
    assert (p.mem_fraction, d.mem_fraction) == (0.95, 0.9)
    assert p.capacity.block_size == d.capacity.block_size == 128
    assert st.batching is not None and st.batching.token_budget == 8192
    # Llama-3.1-70B, FP8 KV: 80 layers x 8 KV heads x 128 head dim x 2 (K, V) x 1 B =
    # 163,840 B a token; a 128-token block 20,971,520 B. vLLM's pool is the budget over the
    # block (kvplan.engines.vllm.alloc: get_kv_cache_config_from_groups, num_blocks = budget //
    # the block): 105,248,718,254 B // 20,971,520 = 5,018 blocks (642,304 tokens), each prefill
    # rank's pool in the no-connector replay.
    assert p.capacity.per_gpu_bytes_per_token == 163_840
    assert p.capacity.num_blocks == p.capacity.kv_budget_bytes // 20_971_520
    flow = disagg_rows.local_flow(row, st)
    assert flow is not None
    assert (flow.pool_blocks, flow.block_tokens) == (p.capacity.num_blocks, 128)
    # The fraction alone moves the budget by total x the fraction's step (kvplan.engines.vllm.
    # budget: kv = ceil(total x gpu_memory_utilization) - weights - activation peak - non-torch
    # - CUDA-graph estimate; only the first term reads the fraction): at 0.90 instead of 0.95
    # the B200's 191,501,854,310 B (its reported total) x 0.05 = 9,575,092,715.5 B less,
    # ceil(181,926,761,594.5) - 172,351,668,879 = 9,575,092,716 B (kvplan's float product: 1 B
    # either way), i.e. 5,018 -> 4,562 blocks (95,673,625,539 // 20,971,520).
    lower = {**row, "prefill_gpu_memory_utilization": "0.90"}
    q = disagg_rows._setup(disagg_rows._setup_key(lower)).prefill.capacity
    assert abs(p.capacity.kv_budget_bytes - q.kv_budget_bytes - 9_575_092_716) <= 1
    assert (p.capacity.num_blocks, q.num_blocks) == (5018, 4562)


def test_without_flags_the_replay_sizes_every_role_at_kvplans_defaults() -> None:
    # engine_flags=False (the bench's counterfactual: the replay before dynpool67): vLLM
    # 0.20.1's defaults, gpu_memory_utilization 0.92 and block 16 on both roles.
    row = deploy_flags.without_flags(_row("doc11"))
    st = disagg_rows._setup(disagg_rows._setup_key(row))
    assert (st.prefill.mem_fraction, st.decode.mem_fraction) == (0.92, 0.92)
    assert st.prefill.capacity.block_size == st.decode.capacity.block_size == 16


def test_the_block_128_fp8_page_against_vllms_own_sizing(tmp_path: Path) -> None:
    # The YAMLs' --block-size 128 --kv-cache-dtype fp8 --no-enable-prefix-caching on
    # Llama-3.1-70B's KV layout (8 KV heads x 128 head dim), shrunk to 4 layers: vLLM itself
    # (/work/shared/tools/vllm-oracle, vLLM 0.32.0's CPU build, dummy weights, a 1 GiB KV
    # budget, run once by dynpool67) logged "CPU KV cache size: 131,072 tokens". By hand:
    # 8 x 128 x 2 (K, V) x 1 B = 2,048 B a token a layer, x 4 layers = 8,192 B; a 128-token
    # block 1 MiB; 1 GiB / 1 MiB = 1,024 blocks = 131,072 tokens. (The oracle is the CPU
    # build of a later release: it checks the page, not the GPU budget of 0.20.1.)
    from kvplan import load_spec
    from kvplan._util.units import GiB
    from kvplan.capacity.plan import plan_capacity
    from kvplan.engines.base import PlanInputs

    config = json.loads((Path(__file__).parent / "data" / "configs" / "llama-3.1-70b.json")
                        .read_text())
    config.update(num_hidden_layers=4, hidden_size=2048, num_attention_heads=16,
                  num_key_value_heads=8, head_dim=128, intermediate_size=1024, vocab_size=1024)
    (tmp_path / "config.json").write_text(json.dumps(config))
    cap = plan_capacity(load_spec(str(tmp_path / "config.json")), PlanInputs(
        context=8192, kv_budget_bytes=GiB, kv_dtype="fp8", block_size=128, prefix_caching=False))
    assert (cap.per_gpu_bytes_per_token, cap.num_blocks, cap.token_capacity) == (
        8_192, 1_024, 131_072)
