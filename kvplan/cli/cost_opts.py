"""The time model's opt-in rules as options (cli60), shared by every command that prices time
(compare, plan with its --rate and --disagg, simulate): named as the --gemm-efficiency family,
each help line saying what it is, where its number comes from and that it is opt-in (but
--moe-gemm-by-rows, the default on CUDA presets since moedefault63: its --no- form turns it
off). One
builder, `cost_rules`, turns them into the library's `CostRules` (kvplan.perf.cost_rules).

A fraction option takes a number or the word `fitted` (kvplan's fitted constant); the launch
price a number of microseconds or `derived` (kvplan's derived one)."""

from typing import TYPE_CHECKING, Annotated

import typer

from kvplan.cli.vocab import COST_RULES_PANEL

if TYPE_CHECKING:  # pragma: no cover
    from kvplan.perf.cost_rules import CostRules

FITTED, DERIVED = "fitted", "derived"


def _word_or_number(word: str, low: float, high: float | None):  # type: ignore[no-untyped-def]
    """typer parser: `word`, or a number in (low, high] (`high` None: >= low)."""
    bound = f"in ({low:g}, {high:g}]" if high is not None else f">= {low:g}"

    def parse(value: str) -> str:
        text = str(value).strip().lower()
        if text == word:
            return text
        try:
            number = float(text)
        except ValueError:
            number = float("nan")
        inside = (low < number <= high) if high is not None else number >= low
        if not inside:  # NaN too
            raise typer.BadParameter(f"expected {word} or a number {bound}, got {value!r}")
        return text
    return parse


_fraction = _word_or_number(FITTED, 0.0, 1.0)
_micros = _word_or_number(DERIVED, 0.0, None)

MoeGemmOpt = Annotated[str | None, typer.Option(
    "--moe-gemm-efficiency", parser=_fraction, metavar="fitted|FRACTION",
    rich_help_panel=COST_RULES_PANEL,
    help="OPT-IN: the routed experts' grouped GEMMs (bf16 experts) at this fraction of the bf16 "
         "peak where compute-bound; fitted: 0.33, FITTED on aiconfigurator's measured H100 "
         "fused-MoE tables (kernel tables, not serving rows; default: the dense GEMM's).")]
Fp8MoeGemmOpt = Annotated[str | None, typer.Option(
    "--fp8-moe-gemm-efficiency", parser=_fraction, metavar="fitted|FRACTION",
    rich_help_panel=COST_RULES_PANEL,
    help="OPT-IN: block-FP8 routed experts' GEMMs at this fraction of the FP8 peak where "
         "compute-bound; fitted: 0.20, FITTED on the same H100 fused-MoE tables (default: the "
         "dense FP8 GEMM's).")]
MoeGemmByRowsOpt = Annotated[bool | None, typer.Option(
    "--moe-gemm-by-rows/--no-moe-gemm-by-rows", rich_help_panel=COST_RULES_PANEL,
    help="Now the default on CUDA presets: the routed experts' fraction by rows per expert "
         "(bf16 0.34-0.59, block FP8 0.18-0.35, never above the dense GEMM's), FITTED on "
         "aiconfigurator's measured H100 fused-MoE tables; --no-moe-gemm-by-rows: the one "
         "fraction per format (as --moe-gemm-efficiency / --fp8-moe-gemm-efficiency do).")]
Fp8DenseGemmOpt = Annotated[str | None, typer.Option(
    "--fp8-dense-gemm-efficiency", parser=_fraction, metavar="fitted|FRACTION",
    rich_help_panel=COST_RULES_PANEL,
    help="OPT-IN: dense (non-expert) w8a8 FP8 GEMMs at this fraction of the FP8 peak where "
         "compute-bound; fitted: 0.48, FITTED on aiconfigurator's measured H100 GEMM tables "
         "(kernel tables, not serving rows; default: the GPU's FP8 GEMM fraction).")]
UngraphedLaunchOpt = Annotated[str | None, typer.Option(
    "--ungraphed-launch-us", parser=_micros, metavar="derived|US",
    rich_help_panel=COST_RULES_PANEL,
    help="OPT-IN, vLLM in the simulator: host time per kernel of a step above the largest "
         "CUDA graph; derived: 4.4, from vLLM PR #20059's piecewise vs full-graph TPOT (one "
         "public measurement, not fitted to serving rows; default 0).")]
GemmByShapeOpt = Annotated[bool, typer.Option(
    "--gemm-by-shape", rich_help_panel=COST_RULES_PANEL,
    help="OPT-IN: bf16 weight GEMMs at their shape's fraction in OpenXLA's measured H100 "
         "matmul table (H100-80GB only; a counterfactual to --gemm-efficiency, not fitted to "
         "serving rows).")]
KernelTablesOpt = Annotated[bool, typer.Option(
    "--kernel-tables", rich_help_panel=COST_RULES_PANEL,
    help="OPT-IN, vLLM on a B200: block-FP8 dense GEMMs by shape, the eager TP all-reduce and "
         "the prefill attention's floor at aiconfigurator's vLLM 0.19.0 B200 kernel tables "
         "(FITTED on kernel tables, not serving rows; held out, 122 B200 rows under the "
         "client's workload: TTFT 47.8 -> 44.6 %, TPOT 17.2 -> 17.4 % median |error|).")]
Mxfp4ExpertsByWidthOpt = Annotated[bool, typer.Option(
    "--mxfp4-experts-by-width", rich_help_panel=COST_RULES_PANEL,
    help="OPT-IN: gpt-oss's MXFP4 experts (computing at bf16, outside Marlin) by rows per "
         "expert and per-rank width, FITTED on aiconfigurator's H100 w4a16_mxfp4 kernel rows; "
         "held out, 47 gpt-oss serving rows: TTFT 49.9 -> 50.3 % median |error| (its decision "
         "rule not met).")]


def _value(text: str | None, fitted: float, scale: float = 1.0) -> float | None:
    if text is None:
        return None
    return fitted if text in (FITTED, DERIVED) else float(text) * scale


def cost_rules(*, moe_gemm: str | None = None, fp8_moe_gemm: str | None = None,
               moe_gemm_by_rows: bool | None = None, fp8_dense_gemm: str | None = None,
               ungraphed_launch_us: str | None = None, gemm_by_shape: bool = False,
               kernel_tables: bool = False, mxfp4_experts_by_width: bool = False
               ) -> "CostRules":
    """The options as the library's CostRules (their words as kvplan's constants); none
    given: NO_COST_RULES, with kvplan's constants left unimported (estimate's start-up)."""
    from kvplan.perf.cost_rules import NO_COST_RULES, CostRules

    if (moe_gemm, fp8_moe_gemm, moe_gemm_by_rows, fp8_dense_gemm, ungraphed_launch_us,
            gemm_by_shape, kernel_tables, mxfp4_experts_by_width) == (
                None, None, None, None, None, False, False, False):
        return NO_COST_RULES
    from kvplan.perf.efficiency import FP8_DENSE_GEMM, FP8_MOE_GEMM, MOE_GEMM
    from kvplan.perf.vllm_ungraphed import VLLM_UNGRAPHED_LAUNCH_S

    return CostRules(
        moe_gemm=_value(moe_gemm, MOE_GEMM), fp8_moe_gemm=_value(fp8_moe_gemm, FP8_MOE_GEMM),
        moe_gemm_by_rows=moe_gemm_by_rows,
        fp8_dense_gemm=_value(fp8_dense_gemm, FP8_DENSE_GEMM),
        ungraphed_launch_s=_value(ungraphed_launch_us, VLLM_UNGRAPHED_LAUNCH_S, 1e-6),
        gemm_by_shape=gemm_by_shape, kernel_tables=kernel_tables,
        mxfp4_experts_by_width=mxfp4_experts_by_width)


# The option parameters' names, as each command declares them (`cost_rules(**...)` keywords).
KEYS = ("moe_gemm", "fp8_moe_gemm", "moe_gemm_by_rows", "fp8_dense_gemm", "ungraphed_launch_us",
        "gemm_by_shape", "kernel_tables", "mxfp4_experts_by_width")


def cost_rules_of(given: dict[str, object]) -> "CostRules":
    """CostRules from a command's locals(): the KEYS it declares."""
    return cost_rules(**{k: v for k, v in given.items() if k in KEYS})  # type: ignore[arg-type]
