"""The counterfactual of TensorRT-LLM's attention-DP rows at their InferenceX script's flags
(tests.benches.aiconfig_agg_dp_script, trtdp56): the flags worked by hand from the scripts, and
that they reach the simulated engine."""

from __future__ import annotations

import pytest

from kvplan._util.errors import InputError
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.run import setup
from kvplan.analysis.simulate.trtllm_scheduler import TrtllmOptionsSim
from kvplan.engines.base import Engine
from kvplan.engines.trtllm.dp_balance import AdpBalance
from tests.benches import aiconfig_agg_dp_script as cf
from tests.benches import aiconfig_agg_runs as agg
from tests.benches.fitted_rows import SHAPED_BY

ROW_8K = "2026_03_25_deepseek_r1_b200_sxm_trtllm_fp4_agg_8192x1024_c128_tp8_0_ep8_0_1089"
ROW_GPTOSS = "2026_03_25_gpt_oss_120b_b200_sxm_trtllm_fp4_agg_1024x1024_c64_tp4_0_ep4_0_1007"


def _row(rid: str) -> dict[str, str]:
    return next(r for r in agg.rows() if r["id"] == rid)


def test_script_flags_by_hand() -> None:
    # dsr1_fp4_b200_trt.sh:73-75: (C + ISL + 64 + 63) // 64 x 64, at least 8,192. 128 users of
    # 8,192-token prompts: (128 + 8192 + 127) // 64 = 131 -> 8,384; 64 users of 1,024:
    # (64 + 1024 + 127) // 64 = 18 -> 1,152 -> 8,192.
    assert cf._dsr1_fp4(128, 8192).max_num_tokens == 8384
    assert cf._dsr1_fp4(64, 1024).max_num_tokens == 8192
    flags = cf.flags_of(_row(ROW_8K))
    assert flags is not None and flags.max_num_tokens == 8384 and flags.max_batch_size is None
    assert flags.adp_balance == AdpBalance(timeout_iters=60, batching_wait_iters=0)
    assert (flags.kv_dtype, flags.mem_fraction) == ("fp8", 0.8)
    # gptoss_fp4_b200_trt.sh:66-67, 76, 83-85: the balance at TensorRT-LLM's own counts.
    gptoss = cf.flags_of(_row(ROW_GPTOSS))
    assert gptoss is not None
    assert (gptoss.max_num_tokens, gptoss.max_batch_size, gptoss.mem_fraction) == (20000, 512,
                                                                                   0.85)
    assert gptoss.adp_balance == AdpBalance(timeout_iters=50, batching_wait_iters=10)


def test_the_flags_reach_the_engine() -> None:
    row = _row(ROW_8K)
    flags = cf.flags_of(row)
    assert flags is not None
    sim = cf._setup(row, flags, balance=True)
    assert sim.dp == 8 and sim.dp_balance is not None and not sim.caching
    assert sim.trtllm is not None
    assert (sim.trtllm.max_num_tokens, sim.trtllm.max_batch_size) == (8384, 2048)
    assert sim.trtllm.adp_balance == flags.adp_balance
    assert cf._setup(row, flags, balance=False).trtllm.adp_balance is None  # type: ignore[union-attr]


def test_the_balance_needs_attention_dp() -> None:
    row = _row(ROW_GPTOSS)
    config, _, _ = agg.AGG_MODELS[(row["model_path"], row["precision"])]
    inputs = estimate_inputs(agg._spec(config), context=4096, kv_dtype=None,
                             engine=Engine("trtllm"), gpu="B200", tp=1,
                             engine_version="1.2.0rc2.post2")
    with pytest.raises(InputError, match="needs --dp-attention"):
        setup(inputs.spec, inputs, trtllm=TrtllmOptionsSim(adp_balance=AdpBalance()))


def test_the_rows_it_replays_shaped_the_balance() -> None:
    shaped = next(s for s in SHAPED_BY if s.commit == "c7cccdf")
    with_script = [r for r in cf.studied() if cf.flags_of(r) is not None]
    assert sorted(agg.PREFIX + r["id"] for r in with_script) == sorted(shaped.rows)
