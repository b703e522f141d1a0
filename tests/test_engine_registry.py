"""The engine registry: every engine package answers the whole `EngineRules` and `Budget`
protocols (kvplan.engines.base), and flat settings split into the common core and the selected
engine's own options."""

from __future__ import annotations

import inspect

import pytest

from kvplan.engines.base import Budget, Engine, EngineRules, PlanInputs, plan_inputs
from kvplan.engines.sglang.options import SglangOptions
from kvplan.engines.trtllm.options import TrtllmOptions
from kvplan.engines.vllm.options import VllmOptions


def _members(protocol: type) -> dict[str, object]:
    names = set(protocol.__annotations__) | {
        n for n, v in vars(protocol).items() if callable(v) and not n.startswith("_")}
    return {n: getattr(protocol, n, None) for n in names}


@pytest.mark.parametrize("engine", list(Engine))
@pytest.mark.parametrize("protocol", [EngineRules, Budget])
def test_each_engine_answers_the_whole_protocol(engine: Engine, protocol: type) -> None:
    impl = engine.rules if protocol is EngineRules else engine.budget
    for name, declared in _members(protocol).items():
        assert hasattr(impl, name), f"{engine.value}: {type(impl).__name__} lacks {name}"
        if callable(declared):
            want = list(inspect.signature(declared).parameters)[1:]  # without self
            got = list(inspect.signature(getattr(impl, name)).parameters)
            assert got == want, f"{engine.value}: {name}{tuple(got)}"
    assert impl.name == engine.value


def test_flat_settings_split_into_core_and_the_engines_options() -> None:
    sglang = plan_inputs(context=4096, engine=Engine.sglang, tp=2, max_mamba_cache_size=64,
                         cuda_graph_padding=True, flashinfer_sampler=True)
    assert sglang.tp == 2
    assert sglang.options == SglangOptions(max_mamba_cache_size=64)  # others' settings left out
    trtllm = plan_inputs(context=4096, engine=Engine.trtllm, max_total_tokens=3210)
    assert trtllm.options == TrtllmOptions(max_total_tokens=3210)
    assert plan_inputs(context=1).options == VllmOptions()
    with pytest.raises(TypeError, match="unknown settings max_num_sequences"):
        plan_inputs(context=1, max_num_sequences=4)


def test_an_engine_refuses_another_engines_options() -> None:
    inputs = PlanInputs(context=1, engine=Engine.vllm, options=SglangOptions())
    with pytest.raises(TypeError, match="another engine's"):
        Engine.vllm.rules.options(inputs)
