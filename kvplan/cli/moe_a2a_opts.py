"""SGLang's MoE all-to-all options (kvplan.engines.sglang.deepep), spelled as SGLang spells them
and declared in its flag table too (kvplan.engines.sglang.engine_args: `--engine-arg
--moe-a2a-backend=deepep` sets the same): `estimate`, `plan` and `simulate` take them. In
--help they are folded with the opt-in cost rules (off by default, like them; `kvplan help CMD`
lists them). One builder, `moe_a2a_options`, turns them into the PlanInputs fields
SglangOptions holds."""

from typing import Annotated, Any

import typer

from kvplan.cli.vocab import COST_RULES_PANEL

MoeA2aBackendOpt = Annotated[str | None, typer.Option(
    "--moe-a2a-backend", metavar="none|deepep", rich_help_panel=COST_RULES_PANEL,
    help="SGLang: the MoE layers' all-to-all; deepep prices DeepEP's dispatch and combine "
         "(with --moe-dense-tp-size 1 and DP attention, EP = TP).")]
DeepepModeOpt = Annotated[str | None, typer.Option(
    "--deepep-mode", metavar="auto|normal|low_latency", rich_help_panel=COST_RULES_PANEL,
    help="SGLang: DeepEP's kernels (auto: normal for prefill, low_latency for decode).")]
MoeDenseTpOpt = Annotated[int | None, typer.Option(
    "--moe-dense-tp-size", min=1, rich_help_panel=COST_RULES_PANEL,
    help="SGLang: 1 keeps the dense MLP layers whole on every rank (only 1 or unset).")]
DpLmHeadOpt = Annotated[bool, typer.Option(
    "--enable-dp-lm-head", rich_help_panel=COST_RULES_PANEL,
    help="SGLang: the lm_head whole on every DP-attention rank (needs DP attention).")]

KEYS = ("moe_a2a_backend", "deepep_mode", "moe_dense_tp_size", "enable_dp_lm_head")


def moe_a2a_options(given: dict[str, Any], engine: str) -> dict[str, Any]:
    """The options given (a command's locals(): the KEYS it declares), as PlanInputs fields;
    refused in one line for an engine other than SGLang, whose flags they are."""
    out = {k: given[k] for k in KEYS if given.get(k) not in (None, False)}
    if not out:
        return out  # (estimate's start-up: the DeepEP rules stay unimported)
    from kvplan._util.errors import InputError, unknown_choice
    from kvplan.engines.base import Engine
    from kvplan.engines.sglang.deepep import A2A_BACKENDS, DEEPEP_MODES

    # The engine answers which settings its own flags set (its flag table, Engine.engine_flags).
    takes = {flag.sets for flag in Engine(engine).engine_flags.flags}
    foreign = [key for key in out if key not in takes]
    if foreign:
        raise InputError(f"--{foreign[0].replace('_', '-')}: an SGLang flag "
                         f"(--engine sglang), not {engine}'s")
    if "moe_a2a_backend" in out and out["moe_a2a_backend"] not in A2A_BACKENDS:
        raise unknown_choice("--moe-a2a-backend", A2A_BACKENDS, out["moe_a2a_backend"])
    if "deepep_mode" in out and out["deepep_mode"] not in DEEPEP_MODES:
        raise unknown_choice("--deepep-mode", DEEPEP_MODES, out["deepep_mode"])
    return out
