"""vLLM's admission of a waiting request under chunked prefill, by release
(kvplan.engines.vllm.admission): 0.11.0 to 0.18.1 admit on the first chunk's blocks, 0.19.0
on only when the whole prompt fits (scheduler_reserve_full_isl, default True); the simulator
follows the release (issue 30, gptossa100; admission61 read the boundary)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kvplan._util.errors import InputError
from kvplan.analysis.inputs import estimate_inputs
from kvplan.analysis.simulate.engine_args import EngineSettings, with_engine_args
from kvplan.analysis.simulate.run import setup, simulate
from kvplan.analysis.simulate.workload import RequestSpec
from kvplan.engines.base import Engine
from kvplan.engines.vllm.admission import vllm_admission, vllm_full_isl_admission
from kvplan.sources.resolve import load_model


def test_admission_by_release() -> None:
    # 0.11.0 kv_cache_manager.py:260-262 counts the scheduled tokens' blocks only; 0.18.1 the
    # same (kv_cache_manager.py:322-326, no full-prompt gate in the release); 0.19.0
    # config/scheduler.py:139 scheduler_reserve_full_isl = True, checked before allocate_slots
    # (v1/core/sched/scheduler.py:732-744); 0.32 config/scheduler.py:190, the same default.
    assert not vllm_full_isl_admission("0.11.0")
    assert not vllm_full_isl_admission("0.15.1")
    assert not vllm_full_isl_admission("0.16.0")
    assert not vllm_full_isl_admission("0.17.1")
    assert not vllm_full_isl_admission("0.18")  # 0.18 as users write it: 0.18.0's rules
    assert not vllm_full_isl_admission("0.18.1")  # the last first-chunk release
    assert vllm_full_isl_admission("0.19.0")  # the first whole-prompt release
    assert vllm_full_isl_admission("0.19")
    assert vllm_full_isl_admission("0.20.0")
    assert vllm_full_isl_admission("0.32.0")
    assert vllm_full_isl_admission(None)


def _sim(version: str):  # type: ignore[no-untyped-def]
    spec = load_model("llama-3-8b")[0]
    inputs = estimate_inputs(spec, context=8192, gpu="A100-80GB", tp=1, engine=Engine.vllm,
                             engine_version=version)
    return setup(spec, inputs)[0]


def test_first_chunk_admission_thrashes_a_small_pool() -> None:
    # Three 3,000-token prompts, 50 tokens out each, sent at once, a pool of 450 blocks of 16
    # tokens: a prompt holds 188 blocks (3,000 / 16 = 187.5), a finished request 191
    # (3,050 / 16 = 190.6). Whole-prompt admission (0.32): the third waits until 188 blocks are
    # free, after the first two took 2 x 188 and grow to 2 x 191 (68 left): no preemption. First-
    # chunk admission (0.11.0): the third is admitted on its first chunk's blocks while the
    # other two still hold theirs; 3 x 191 = 573 > 450, so the pool runs dry and the last
    # running request is preempted (recompute).
    reqs = [RequestSpec(arrival_s=0.0, prompt_len=3000, output_len=50) for _ in range(3)]
    old = _sim("0.11.0")
    assert not old.scheduler.full_isl_admission
    new = replace(old, scheduler=replace(old.scheduler, full_isl_admission=True))
    assert simulate(new, reqs, num_blocks=450).metrics.preemptions == 0
    assert simulate(old, reqs, num_blocks=450).metrics.preemptions > 0
    assert _sim("0.32.0").scheduler.full_isl_admission
    # The boundary as the simulator's set-up reads it (kvplan.analysis.simulate.run.setup).
    assert not _sim("0.18.1").scheduler.full_isl_admission
    assert _sim("0.19.0").scheduler.full_isl_admission


def _inputs(version: str | None, *flags: str):  # type: ignore[no-untyped-def]
    """The estimate inputs `kvplan simulate --engine-arg FLAG` gives at vLLM `version`."""
    spec = load_model("llama-3-8b")[0]
    settings = with_engine_args(EngineSettings(), Engine.vllm, flags, version)
    return estimate_inputs(spec, context=8192, gpu="A100-80GB", tp=1, engine=Engine.vllm,
                           engine_version=version, **settings.estimate_options())


def test_reserve_full_isl_flag_overrides_the_release_default() -> None:
    # vLLM's --[no-]scheduler-reserve-full-isl (0.19.0 engine/arg_utils.py:1250-1253, a bool
    # field: BooleanOptionalAction) sets SchedulerConfig.scheduler_reserve_full_isl.
    assert vllm_admission(_inputs("0.19.0").capacity)
    assert not vllm_admission(_inputs("0.19.0", "--no-scheduler-reserve-full-isl").capacity)
    assert vllm_admission(_inputs(None, "--scheduler-reserve-full-isl").capacity)
    assert not vllm_admission(_inputs("0.32.0", "--no-scheduler-reserve-full-isl").capacity)
    assert not vllm_admission(_inputs("0.18.1").capacity)
    # The set-up reads it: the small pool of the test above thrashes again on 0.32 with it off.
    spec = load_model("llama-3-8b")[0]
    off = setup(spec, _inputs("0.32.0", "--no-scheduler-reserve-full-isl"))[0]
    assert not off.scheduler.full_isl_admission
    reqs = [RequestSpec(arrival_s=0.0, prompt_len=3000, output_len=50) for _ in range(3)]
    assert simulate(off, reqs, num_blocks=450).metrics.preemptions > 0


def test_reserve_full_isl_flag_is_refused_before_0_19() -> None:
    # 0.18.1 has no scheduler_reserve_full_isl (config/scheduler.py, engine/arg_utils.py).
    for flag in ("--scheduler-reserve-full-isl", "--no-scheduler-reserve-full-isl"):
        with pytest.raises(InputError, match="0.18.1 has no --"):
            with_engine_args(EngineSettings(), Engine.vllm, [flag], "0.18.1")
    with pytest.raises(InputError, match="expects no value"):
        with_engine_args(EngineSettings(), Engine.vllm, ["--scheduler-reserve-full-isl=1"])
