"""`kvplan models`: every architecture of vLLM's model registry and what kvplan does with it."""

from enum import Enum
from typing import Annotated

import typer

from kvplan.cli.common import FormatOpt, handle_errors
from kvplan.present.render import OutputFormat, emit


class StatusChoice(str, Enum):
    exact = "exact"
    refused = "refused"
    not_a_decoder = "not-a-decoder"


def models_cmd(
    search: Annotated[str | None, typer.Argument(
        help="Only rows with this text in the architecture, a model_type, the example repo, "
             "the vLLM group or the reason (case-insensitive).")] = None,
    status: Annotated[StatusChoice | None, typer.Option(
        "--status", help="Only this status.")] = None,
    fmt: FormatOpt = OutputFormat.table,
) -> None:
    """List vLLM's architectures with kvplan's status: exact (equal to vLLM, tested), refused
    (and why), or not a decoder."""
    from kvplan.present.models_view import models_view
    from kvplan.sources.support import find_support

    with handle_errors():
        wanted = None if status is None else status.value.replace("-", " ")
        emit(models_view(find_support(status=wanted, term=search)), fmt)
