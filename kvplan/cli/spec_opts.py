"""`kvplan simulate`'s speculative-decoding options (kvplan.analysis.simulate.spec_sim): the
drafter as `estimate` sizes it, and its acceptance, an input in vLLM's own figures."""

from typing import Annotated

import typer

from kvplan._util.errors import InputError
from kvplan.cli.common import SpecMethod
from kvplan.cli.vocab import SPEC_DECODE_PANEL, tokens_or_zero_option
from kvplan.sources.draft_config import DraftConfig, load_draft_config

SimSpecMethodOpt = Annotated[SpecMethod | None, typer.Option(
    "--speculative-method", rich_help_panel=SPEC_DECODE_PANEL,
    help="vLLM's serial drafter or SGLang's chain (mtp: the model's MTP layer = SGLang's "
         "NEXTN; eagle/eagle3: one draft layer): each decode verifies 1 + k tokens a step; "
         "needs the acceptance below.")]
SimSpecTokensOpt = Annotated[int, typer.Option(
    "--num-speculative-tokens", "--speculative-num-steps", parser=tokens_or_zero_option,
    metavar="K",
    rich_help_panel=SPEC_DECODE_PANEL,
    help="Draft tokens per step, k (SGLang: --speculative-num-steps).")]
SimSpecTopkOpt = Annotated[int | None, typer.Option(
    "--speculative-eagle-topk", min=1, rich_help_panel=SPEC_DECODE_PANEL,
    help="SGLang: draft branches per step; simulated: 1 only (a chain, num_draft_tokens = "
         "steps + 1).")]
SpecMeanAcceptLenOpt = Annotated[float | None, typer.Option(
    "--spec-mean-accept-len", min=1.0, metavar="L", rich_help_panel=SPEC_DECODE_PANEL,
    help="vLLM's 'Mean acceptance length' (1 + accepted / drafts) of the workload, SGLang's "
         "'accept len': one acceptance rate for every position solving it.")]
SpecAcceptanceRateOpt = Annotated[str | None, typer.Option(
    "--spec-acceptance-rate", metavar="P[,P2,...]", rich_help_panel=SPEC_DECODE_PANEL,
    help="vLLM's 'Avg Draft acceptance rate' (one value, 0-1) or its k 'Per-position "
         "acceptance rate' values (not SGLang's 'accept rate', accept len / (k + 1)).")]

SpecDraftConfigOpt = Annotated[str | None, typer.Option(
    "--spec-draft-config", metavar="PATH", rich_help_panel=SPEC_DECODE_PANEL,
    help="vLLM eagle/eagle3: the head's own config.json (or its folder), priced at its widths, "
         "fc and lm_head rows (EAGLE-3: draft_vocab_size); default: one layer of the target's "
         "shape.")]


def draft_config(path: str | None) -> DraftConfig | None:
    """--spec-draft-config's head, read (None: not given)."""
    return None if path is None else load_draft_config(path)


def parse_rates(text: str | None) -> tuple[float, ...] | None:
    """--spec-acceptance-rate's comma-separated fractions (a percentage is refused)."""
    if text is None:
        return None
    try:
        rates = tuple(float(part) for part in text.split(","))
    except ValueError:
        raise InputError(f"--spec-acceptance-rate: {text!r}: expected fractions in [0, 1], "
                         "comma-separated (e.g. 0.62 or 0.8,0.6,0.4)") from None
    return rates
