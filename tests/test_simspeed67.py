"""simspeed67 (issue 30, CI time): the speed-only changes give the same floats as the paths they
replace. The disaggregated roles' TPOT without the prompt a TPOT caller drops
(kvplan.analysis.disagg.role_tpot_ms / role_prefill_ms, `role_times` their pair), the prefill
steps' cost setup found once (kvplan.analysis.plan_search.prefill_stepper), the naive roofline
without the compute-bound batch it never reads (kvplan.perf.flops.decode_cost
search_crossover=False), and a step's per-GPU answers found once (kvplan.perf.step_ops._Step).

Hand numbers: a bf16 op of 1e12 FLOPs and 1e9 bytes on an H100 (989.5e12 bf16 FLOP/s, 3.35e12
B/s; the device efficiency's GEMM and HBM fractions) is max(1e12 / (989.5e12 x gemm), 1e9 /
(3.35e12 x hbm), floor); an FP8 op of the same is priced at 1,979e12 FLOP/s (the card runs FP8):
its time differs from the bf16 one's, so a step memo keyed on the wrong thing would show.
"""

from __future__ import annotations

import pytest

from kvplan._util.dtypes import GemmMath
from kvplan.analysis.disagg import (
    DisaggRequest,
    _candidate,
    _role_request,
    role_prefill_ms,
    role_times,
    role_tpot_ms,
)
from kvplan.analysis.plan_search import _cost_setup, prefill_step_ms, prefill_stepper
from kvplan.analysis.plan_types import Layout
from kvplan.hardware.gpus import get_gpu
from kvplan.hardware.kv_links import get_kv_link
from kvplan.perf.costmodel import prefill_seconds
from kvplan.perf.efficiency import device_efficiency
from kvplan.perf.flops import decode_cost
from kvplan.perf.step_ops import _Step
from kvplan.sources.resolve import load_model


def _req() -> DisaggRequest:
    return DisaggRequest(prefill=Layout(tp=1), decode=Layout(tp=1), input_len=2048,
                         output_len=256, gpu=get_gpu("H100"), link=get_kv_link("ib-ndr"),
                         engine_version="0.11.0", kv_dtype="bf16")


def test_role_times_is_its_two_parts() -> None:
    spec = load_model("llama-3-8b")[0]
    req = _req()
    decode = _candidate(spec, req, "decode", req.decode)
    for batch in (1, 4, 37):
        p_ms, t_ms = role_times(spec, req, decode, batch=batch)
        assert p_ms is not None and t_ms is not None and t_ms > 1.0
        assert role_prefill_ms(spec, req, decode) == p_ms  # the same float, not approx
        assert role_tpot_ms(spec, req, decode, batch=batch) == t_ms
    # A TPOT grows with the batch (more KV read a step): the parts are not one constant.
    assert role_tpot_ms(spec, req, decode, batch=37) > role_tpot_ms(spec, req, decode, batch=1)


def test_prefill_stepper_is_the_cost_models_prefill_step() -> None:
    spec = load_model("llama-3-8b")[0]
    req = _req()
    p_req = _role_request(req, 1)
    cand = _candidate(spec, req, "prefill", req.prefill)
    step = prefill_stepper(spec, p_req, cand)
    setup = _cost_setup(spec, p_req, cand)
    assert setup is not None
    for tokens, prompts in ((2048, 1), (8192, 4), (512, 1), (2048, 1)):
        direct = prefill_seconds(*setup, tokens=tokens, prompts=prompts) * 1e3
        assert step(tokens, prompts) == direct
        assert prefill_step_ms(spec, p_req, cand, prompts=prompts, tokens=tokens) == direct
    assert step(8192, 4) > step(2048, 1)
    # A layout the cost model does not time (pipeline stages): None at every step.
    staged = _candidate(spec, req, "prefill", Layout(tp=1, pp=2))
    assert prefill_stepper(spec, p_req, staged)(2048, 1) is None


def test_decode_cost_without_the_crossover_search() -> None:
    spec = load_model("llama-3-8b")[0]
    gpu = get_gpu("H100")
    # At 128 tokens of context a request's FLOPs (about 16 GFLOP a token, 1.6e-5 s at the bf16
    # peak) outweigh its KV read (128 x 128 KiB, 5e-6 s at 3.35 TB/s): a crossover batch exists.
    kw = {"context": 128, "batch": 8, "hbm_bytes_per_s": gpu.hbm_bytes_per_s,
          "peak_flops_per_s": gpu.peak_bf16_flops_per_s}
    full, quick = decode_cost(spec, **kw), decode_cost(spec, **kw, search_crossover=False)
    assert full.compute_bound_batch is not None and quick.compute_bound_batch is None
    assert quick.step_seconds == full.step_seconds  # what naive_roofline_seconds reads
    assert quick.weight_read_bytes_per_step == full.weight_read_bytes_per_step


def test_a_steps_gpu_answers_are_kept_per_math() -> None:
    gpu = get_gpu("H100")
    eff = device_efficiency(gpu)

    def one(math: GemmMath) -> float:
        s = _Step(gpu, eff, eff.kernel_floor_s)
        s.op("x", flops=1e12, nbytes=1e9, math=math)
        return s.by_op["x"]

    bf16, fp8 = one(GemmMath.bf16), one(GemmMath.fp8)
    assert bf16 == pytest.approx(max(1e12 / (gpu.peak_bf16_flops_per_s * eff.gemm),
                                     1e9 / (gpu.hbm_bytes_per_s * eff.hbm), eff.kernel_floor_s))
    assert fp8 != bf16
    # One step asking both, in either order: each op as a fresh step prices it.
    s = _Step(gpu, eff, eff.kernel_floor_s)
    s.op("a", flops=1e12, nbytes=1e9, math=GemmMath.bf16)
    s.op("b", flops=1e12, nbytes=1e9, math=GemmMath.fp8)
    s.op("c", flops=1e12, nbytes=1e9, math=GemmMath.bf16)
    assert (s.by_op["a"], s.by_op["b"], s.by_op["c"]) == (bf16, fp8, bf16)
    # A small kernel's bytes beyond the floor: 1e9 B at the HBM rate.
    s.over_floor("k", 1e9)
    assert s.by_op["k"] == 1e9 / (gpu.hbm_bytes_per_s * eff.hbm) - eff.kernel_floor_s
