"""The time model's OPT-IN rules a command can switch on (issue 30; cli60): each a constant or a
table FITTED on kernel tables or derived from one public measurement, never on serving rows, and
each left off by default because its evaluation on held-out serving rows did not make it the
default (kvplan.perf.efficiency's docstring gives each figure). `CostRules` holds what a command
was asked for; `apply` puts it into the device's `Efficiency`; `records` says, for the JSON's
`cost_rules`, which rules were on, at what value and from where.

The rules (the `Efficiency` field each sets):
- `moe_gemm` / `fp8_moe_gemm`: the routed experts' one compute-bound fraction per format, bf16
  0.33 / block-FP8 0.20 (MOE_GEMM_FIT / FP8_MOE_GEMM_FIT, aiconfigurator's H100 fused-MoE tables);
- `moe_gemm_by_rows` -> `moe_gemm_shape`: the experts' fraction by rows per expert
  (MOE_GEMM_SHAPE, the same tables; it replaces the one per format, so the two are refused
  together). NOT opt-in any more on a CUDA device: the default there since moedefault63
  (kvplan.perf.efficiency.CUDA_EFFICIENCY), so None (the device's default) is the field's
  default; True (`--moe-gemm-by-rows`, kept as an alias) sets it on any device, AMD too; False
  (`--no-moe-gemm-by-rows`) turns it off, as a one fraction per format given does. `records`
  names it also where it applies by default (a MoE model on a CUDA device), "opt_in": false;
- `fp8_dense_gemm`: the dense w8a8 FP8 GEMMs' compute-bound fraction, 0.48 (FP8_DENSE_GEMM_FIT,
  aiconfigurator's H100 GEMM tables);
- `ungraphed_launch_s`: vLLM's host time per kernel of a step above its largest CUDA graph,
  4.4 us (VLLM_UNGRAPHED_LAUNCH_S, vLLM PR #20059's TPOT comparison; kvplan.perf.vllm_ungraphed).
  Only the simulator's vLLM steps read it (kvplan.perf.mixed_step);
- `gemm_by_shape` -> `gemm_shape`: the bf16 weight GEMMs' fraction by shape, OpenXLA's measured
  H100 table (kvplan.perf.gemm_shape; the H100-80GB preset only);
- `kernel_tables` -> `sm100_tables`: a B200 vLLM step's block-FP8 dense GEMMs by shape, eager TP
  all-reduce and prefill attention floor at aiconfigurator's vLLM 0.19.0 B200 kernel tables
  (kvplan.perf.sm100_tables, b200rule65); the B200 preset (sm100_tables.DEVICES) under an engine
  whose layers those tables timed (CostTraits.sm100_kernel_tables: vLLM) only;
- `mxfp4_experts_by_width` -> `mxfp4_experts_shape`: gpt-oss's MXFP4 experts (outside Marlin)
  by rows per expert and per-rank width (MXFP4_EXPERTS_SHAPE, kvplan.perf.mxfp4_experts,
  mxfp4tab65); any device, moving only MXFP4 experts computing at bf16.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from kvplan._util.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.hardware.gpus import GPU
    from kvplan.perf.efficiency import Efficiency

US = 1e-6
# The word the fraction options take for kvplan's own fitted value (kvplan.cli.cost_opts).
FITTED = "fitted"
DERIVED = "derived"
_UNGRAPHED_SOURCE = ("DERIVED, not fitted: vLLM PR #20059's median TPOT with piecewise against "
                     "full CUDA graphs (Qwen2.5-1.5B, 0.33-0.40 ms a step over 84 launches: "
                     "4.4 us a launch; kvplan.perf.vllm_ungraphed)")
_SM100 = "B200 vLLM 0.19.0 kernel tables"
_GEMM_SHAPE_SOURCE = ("OpenXLA's measured sm_90 bf16 matmul table (default_matmul_perf_table."
                      "txtpb; kvplan.perf.gemm_shape), H100-80GB only")


@dataclass(frozen=True, kw_only=True)
class CostRules:
    """The rules asked for (module docstring); the defaults are the device's own."""

    moe_gemm: float | None = None
    fp8_moe_gemm: float | None = None
    # None: the device's default (the table on a CUDA device); True: on; False: off.
    moe_gemm_by_rows: bool | None = None
    fp8_dense_gemm: float | None = None
    ungraphed_launch_s: float | None = None
    gemm_by_shape: bool = False
    kernel_tables: bool = False
    mxfp4_experts_by_width: bool = False

    def __post_init__(self) -> None:
        if self.moe_gemm_by_rows is True and self.per_format:
            raise InputError("--moe-gemm-by-rows and --moe-gemm-efficiency / "
                             "--fp8-moe-gemm-efficiency: give one (the fraction by rows per "
                             "expert replaces the one fraction per format)")
        for name in ("moe_gemm", "fp8_moe_gemm", "fp8_dense_gemm"):
            value = getattr(self, name)
            if value is not None and not 0 < value <= 1:
                raise InputError(f"--{name.replace('_', '-')}-efficiency: expected a fraction "
                                 f"in (0, 1] or {FITTED}, got {value}")
        if self.ungraphed_launch_s is not None and self.ungraphed_launch_s < 0:
            raise InputError(f"--ungraphed-launch-us: expected >= 0 or {DERIVED}, got "
                             f"{self.ungraphed_launch_s / US:g}")

    @property
    def on(self) -> bool:
        return self != CostRules()

    @property
    def per_format(self) -> bool:
        """One fraction per format given (--moe-gemm-efficiency / --fp8-moe-gemm-efficiency)."""
        return self.moe_gemm is not None or self.fp8_moe_gemm is not None

    @staticmethod
    def shape_devices(gpus: Sequence[GPU]) -> tuple[str, ...]:
        """The devices of `gpus` whose efficiency sets the experts' table by default
        (kvplan.perf.efficiency.device_efficiency: the CUDA ones)."""
        from kvplan.perf.efficiency import device_efficiency

        return tuple(g.name for g in gpus if device_efficiency(g).moe_gemm_shape is not None)

    def check(self, *, engine: str | None = None, simulated: bool = True,
              gpu: GPU | None = None) -> None:
        """Refuse, in one line, a rule the command would not price: vLLM's ungraphed launches
        with another engine or outside the simulator, the GEMM shape table off the H100-80GB."""
        if self.ungraphed_launch_s is not None:
            # The engine answers (CostTraits.eager_prefill): an engine that launches its prefill
            # ops from Python already pays each launch (prefill_launch_s); the price is for one
            # that replays steps from CUDA graphs and runs those above its largest one ungraphed.
            from kvplan.engines.base import Engine

            if engine is not None and Engine(engine).rules.cost_traits.eager_prefill:
                raise InputError(f"--ungraphed-launch-us: vLLM's price of a step above its "
                                 f"largest CUDA graph (kvplan.perf.vllm_ungraphed); --engine "
                                 f"{engine} launches its prefill ops eagerly, priced already")
            if not simulated:
                raise InputError("--ungraphed-launch-us: only the simulator's vLLM steps are "
                                 "priced with it (kvplan simulate, plan --rate)")
        if self.gemm_by_shape and gpu is not None:
            from kvplan.perf.gemm_shape import DEVICE_GEMM_SHAPE

            if gpu.name not in DEVICE_GEMM_SHAPE:
                raise InputError(f"--gemm-by-shape: the measured table is the H100-80GB's "
                                 f"(kvplan.perf.gemm_shape); --gpu {gpu.name} has none")
        if self.kernel_tables:
            self._check_kernel_tables(engine, gpu)

    @staticmethod
    def _check_kernel_tables(engine: str | None, gpu: GPU | None) -> None:
        """--kernel-tables: the B200's tables (sm100_tables.DEVICES), of the engine whose layers
        they timed (CostTraits.sm100_kernel_tables); None: not known here, checked where it is."""
        from kvplan.engines.base import Engine
        from kvplan.perf.sm100_tables import DEVICES

        if engine is not None and not Engine(engine).rules.cost_traits.sm100_kernel_tables:
            raise InputError(f"--kernel-tables: aiconfigurator's B200 tables timed vLLM 0.19.0's "
                             f"layers (kvplan.perf.sm100_tables); --engine {engine} runs others")
        if gpu is not None and gpu.name not in DEVICES:
            raise InputError(f"--kernel-tables: the kernel tables are the B200's "
                             f"(kvplan.perf.sm100_tables); --gpu {gpu.name} has none")

    def apply(self, eff: Efficiency, gpu: GPU | None = None) -> Efficiency:
        """`eff` (a device's fractions) with the rules asked for in place of its fields."""
        if not self.on:
            return eff
        from kvplan.perf.efficiency import MOE_GEMM_SHAPE

        changes: dict[str, Any] = {}
        if self.moe_gemm is not None:
            changes["moe_gemm"] = self.moe_gemm
        if self.fp8_moe_gemm is not None:
            changes["fp8_moe_gemm"] = self.fp8_moe_gemm
        if self.moe_gemm_by_rows:
            changes["moe_gemm_shape"] = MOE_GEMM_SHAPE
        elif self.moe_gemm_by_rows is False or self.per_format:
            # Off, or one fraction per format given: the table would take its place
            # (Efficiency.experts_fraction), so it goes.
            changes["moe_gemm_shape"] = None
        if self.fp8_dense_gemm is not None:
            changes["fp8_dense_gemm"] = self.fp8_dense_gemm
        if self.ungraphed_launch_s is not None:
            changes["ungraphed_launch_s"] = self.ungraphed_launch_s
        if self.gemm_by_shape:
            from kvplan.perf.gemm_shape import DEVICE_GEMM_SHAPE

            self.check(gpu=gpu)
            changes["gemm_shape"] = DEVICE_GEMM_SHAPE.get(gpu.name) if gpu is not None else None
        if self.kernel_tables:
            from kvplan.perf.sm100_tables import b200_tables

            self._check_kernel_tables(None, gpu)
            changes["sm100_tables"] = b200_tables() if gpu is not None else None
        if self.mxfp4_experts_by_width:
            from kvplan.perf.efficiency import MXFP4_EXPERTS_SHAPE

            changes["mxfp4_experts_shape"] = MXFP4_EXPERTS_SHAPE
        return replace(eff, **changes)

    def records(self, gpus: Sequence[GPU] = (), *, moe: bool = False) -> list[dict[str, Any]]:
        """The rules on, for the JSON's `cost_rules`: the `Efficiency` field, the option, the
        value and where it comes from (kvplan's fitted value's source, or "given"), "opt_in"
        true; and the experts' table where it prices a MoE model (`moe`) on `gpus` by default
        (`shape_devices`), "opt_in" false, with the devices it is the default on."""
        devices = self.shape_devices(gpus)
        default_on = moe and self.moe_gemm_by_rows is None and not self.per_format and devices
        if not self.on and not default_on:
            return []
        from kvplan.perf.efficiency import (
            FP8_DENSE_GEMM_FIT,
            FP8_MOE_GEMM_FIT,
            MOE_GEMM_FIT,
            MOE_GEMM_SHAPE_BF16_FIT,
            MOE_GEMM_SHAPE_FP8_FIT,
        )
        from kvplan.perf.vllm_ungraphed import VLLM_UNGRAPHED_LAUNCH_S

        out: list[dict[str, Any]] = []

        def add(rule: str, option: str, value: Any, fitted: Any, source: str) -> None:
            out.append({"rule": rule, "option": option, "value": value,
                        "source": source if value == fitted else "given", "opt_in": True})

        if self.moe_gemm is not None:
            add("moe_gemm", "--moe-gemm-efficiency", self.moe_gemm, MOE_GEMM_FIT.value,
                "FITTED: " + MOE_GEMM_FIT.source)
        if self.fp8_moe_gemm is not None:
            add("fp8_moe_gemm", "--fp8-moe-gemm-efficiency", self.fp8_moe_gemm,
                FP8_MOE_GEMM_FIT.value, "FITTED: " + FP8_MOE_GEMM_FIT.source)
        if self.moe_gemm_by_rows or default_on:
            shape = {"rule": "moe_gemm_shape", "option": "--moe-gemm-by-rows",
                     "value": {"bf16": [list(p) for p in MOE_GEMM_SHAPE_BF16_FIT.value],
                               "fp8": [list(p) for p in MOE_GEMM_SHAPE_FP8_FIT.value]},
                     "source": ("FITTED: " + MOE_GEMM_SHAPE_BF16_FIT.source + "; "
                                + MOE_GEMM_SHAPE_FP8_FIT.source), "opt_in": not devices}
            if devices:  # asked or not, kvplan's default on these
                shape["default_on"] = list(devices)
            out.append(shape)
        elif self.moe_gemm_by_rows is False:
            out.append({"rule": "moe_gemm_shape", "option": "--no-moe-gemm-by-rows",
                        "value": None, "source": "turned off: the one fraction per format "
                        "(the experts' default on a CUDA device is the table)", "opt_in": True})
        if self.fp8_dense_gemm is not None:
            add("fp8_dense_gemm", "--fp8-dense-gemm-efficiency", self.fp8_dense_gemm,
                FP8_DENSE_GEMM_FIT.value, "FITTED: " + FP8_DENSE_GEMM_FIT.source)
        if self.ungraphed_launch_s is not None:
            add("ungraphed_launch_s", "--ungraphed-launch-us", self.ungraphed_launch_s,
                VLLM_UNGRAPHED_LAUNCH_S, _UNGRAPHED_SOURCE)
        if self.gemm_by_shape:
            add("gemm_shape", "--gemm-by-shape", "H100-80GB", "H100-80GB", _GEMM_SHAPE_SOURCE)
        if self.kernel_tables:
            from kvplan.perf.sm100_tables import b200_tables

            add("sm100_tables", "--kernel-tables", _SM100, _SM100,
                "FITTED: " + b200_tables().source + " (kvplan.perf.sm100_tables), B200 only")
        if self.mxfp4_experts_by_width:
            from kvplan.perf.efficiency import MXFP4_EXPERTS_SHAPE_POINTS_FIT as MX

            # By per-rank width: (rows per expert, fraction) points.
            points = {str(w): [list(p) for p in pts] for w, pts in MX.value}
            add("mxfp4_experts_shape", "--mxfp4-experts-by-width", points, points,
                "FITTED: " + MX.source)
        return out


NO_COST_RULES = CostRules()


def opt_in(rules: CostRules | None, gpu: GPU) -> Efficiency:
    """`gpu`'s fractions (kvplan.perf.efficiency.device_efficiency) with `rules` in place (None:
    as they are): what the simulator and the planner time a step with."""
    from kvplan.perf.efficiency import device_efficiency

    eff = device_efficiency(gpu)
    return eff if rules is None else rules.apply(eff, gpu)
