"""SGLang's mamba radix-cache strategy and the slots a running request reserves
(kvplan.engines.sglang.mamba_strategy), and the pool of Qwen3.5-27B on one B200 at the SGLang
cookbook's flags (tests/data/sim_to_real/prospective64.json) worked out by hand."""

from __future__ import annotations

import pytest

from kvplan.analysis.inputs import estimate_inputs
from kvplan.capacity.plan import CapacityPlan, plan_capacity
from kvplan.engines.base import Engine
from kvplan.engines.sglang.mamba_strategy import extra_buffer, mamba_slots_per_request
from kvplan.model.spec import ModelSpec
from kvplan.sources.resolve import load_spec

QWEN35 = ("Qwen3_5ForConditionalGeneration",)


@pytest.mark.parametrize(("version", "archs", "radix", "slots"), [
    # "auto" is no_buffer to 0.5.13 (server_args.py 0.5.13:1225-1228): 3 slots.
    ("0.5.9", QWEN35, True, 3),
    ("0.5.13", QWEN35, True, 3),
    # From 0.5.14 extra_buffer (overlap on, triton linear attention): 3 + 2 ping-pong slots.
    ("0.5.14", QWEN35, True, 5),
    ("0.5.16", ("Qwen3_5MoeForConditionalGeneration",), True, 5),
    ("0.5.15", ("Qwen3NextForCausalLM",), True, 5),
    (None, ("NemotronHForCausalLM",), True, 5),
    # Kimi-Linear joins the list in 0.5.16 (0.5.15 overrides.py:982-995 lacks it).
    ("0.5.15", ("KimiLinearForCausalLM",), True, 3),
    ("0.5.16", ("KimiLinearForCausalLM",), True, 5),
    # The text-only Qwen3.5 class is first read in the list at 0.5.23.
    ("0.5.16", ("Qwen3_5ForCausalLM",), True, 3),
    ("0.5.23", ("Qwen3_5ForCausalLM",), True, 5),
    # LFM2 is not in any list read: no_buffer.
    ("0.5.23", ("Lfm2ForCausalLM",), True, 3),
    # --disable-radix-cache: one slot (ratio 1) at every release.
    ("0.5.16", QWEN35, False, 1),
    ("0.5.9", QWEN35, False, 1),
])
def test_slots_per_running_request(version: str | None, archs: tuple[str, ...], radix: bool,
                                   slots: int) -> None:
    assert mamba_slots_per_request(version, archs, radix_cache=radix) == slots
    if radix:
        assert extra_buffer(version, archs) == (slots == 5)


def _plan(spec: ModelSpec, version: str) -> CapacityPlan:
    est = estimate_inputs(spec, context=262144, engine=Engine.sglang, gpu="B200", tp=1,
                          engine_version=version, mem_fraction=0.8)
    assert est.capacity is not None
    return plan_capacity(est.spec, est.capacity)


def test_qwen35_27b_b200_cookbook_pool_by_hand() -> None:
    # The cookbook's Qwen3.5-27B cell: SGLang 0.5.16, one B200, --mem-fraction-static 0.8,
    # --context 262144 (prospective64.json). The rest SGLang splits (kvplan.engines.sglang.
    # budget): (191,501,854,310 B driver total - 762,356,695 preloaded) x 0.8 - 54,747,605,984
    # of bf16 weights = 97,843,992,108 B.
    # The state per slot (configs/mamba_utils.py, 48 Gated DeltaNet layers of 64): conv
    # (16 key heads x 128 x 2 + 48 value heads x 128 = 10,240 channels) x (kernel 4 - 1) x 2 B
    # = 61,440; SSM (config mamba_ssm_dtype float32) 48 x 128 x 128 x 4 B = 3,145,728; x 48 =
    # 153,944,064 B (146.8 MiB).
    # Slots: int(97,843,992,108 x 0.9 / 1.9 // 153,944,064) = int(46,347,154,156 //
    # 153,944,064) = 301 (301.07).
    # Tokens: (97,843,992,108 - 301 x 153,944,064 = 51,506,828,844) // (16 full layers x 4 KV
    # heads x 256 x 2 x 2 B = 65,536) = 785,931.
    # Running: min(clamp(int(785,931 / 262,144 x 512) = 1,535 -> 2,048), 785,931 // 2,
    # 301 // 5) = 60 -- extra_buffer, 3 + 2 slots a request; 100 (301 // 3) before 0.5.14.
    # SGLang would print "max_mamba_cache_size: 301, conv_state size: 0.83GB, ssm_state size:
    # 42.47GB" (302 slots: 302 x 48 x 61,440 B = 0.83 GiB, 302 x 48 x 3,145,728 B = 42.47 GiB).
    spec = load_spec("tests/data/configs/qwen3.5-27b.json")
    plan = _plan(spec, "0.5.16")
    assert plan.kv_budget_bytes == 97_843_992_108
    assert plan.state_bytes_per_request == 153_944_064
    assert plan.max_mamba_cache_size == 301
    assert plan.token_capacity == 785_931
    assert plan.max_running_requests == 60
    assert plan.sglang_pool["slots_per_request"] == 5
    assert f"{302 * 48 * 61_440 / 2**30:.2f}" == "0.83"
    assert f"{302 * 48 * 3_145_728 / 2**30:.2f}" == "42.47"
    before = _plan(spec, "0.5.13")
    assert before.max_running_requests == 100  # 301 // 3, no_buffer
