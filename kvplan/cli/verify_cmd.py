"""`kvplan verify`: allocate the real paged KV cache on a device and hold the predictions against
it, on one rank or T x P ranks. Registered in app.py with ``app.command("verify")(verify_cmd)``.

This module must not import torch at module level: `kvplan estimate` imports app.py, which
imports this. kvplan.analysis.device imports torch only inside functions.
"""

from typing import Annotated

import typer

from kvplan._util.dtypes import KVDType
from kvplan._util.units import gib_to_bytes
from kvplan.cli.common import (
    BlockSizeOpt,
    ExplainOpt,
    FormatOpt,
    KVDTypeOpt,
    ModelArg,
    handle_errors,
    load_spec,
)
from kvplan.cli.vocab import CONTEXT_FLAGS, tokens_option, tokens_or_zero_option
from kvplan.present.progress_view import progress_shown
from kvplan.present.render import OutputFormat, emit, warn

# verify's default rendezvous wait, stated here so that the help needs no torch import
# (kvplan.analysis.device.ranks.RENDEZVOUS_TIMEOUT_S; tests/test_verify_ranks.py holds them equal).
RENDEZVOUS_TIMEOUT_S = 60.0


def verify_cmd(
    model: ModelArg,
    device: Annotated[str, typer.Option(
        "--device", help="cuda, cuda:N, cpu or auto (CUDA when available). With several ranks "
                         "a bare 'cuda' gives each rank its own GPU.")] = "auto",
    mem_fraction: Annotated[float, typer.Option(
        "--mem-fraction", min=0.0, max=1.0,
        help="CUDA: verify what is free inside total x this fraction (vLLM's "
             "gpu_memory_utilization). Ignored on CPU.")] = 0.9,
    context: Annotated[int, typer.Option(
        *CONTEXT_FLAGS, parser=tokens_option, metavar="TOKENS",
        help="Tokens per request (prompt + output); 32k and 1m accepted.")] = 4096,
    kv_dtype: KVDTypeOpt = KVDType.bf16,
    block_size: BlockSizeOpt = None,
    tp: Annotated[int, typer.Option("--tp", min=1,
                                    help="Tensor-parallel degree: T ranks per stage, each "
                                         "allocating its shard.")] = 1,
    pp: Annotated[int, typer.Option("--pp", min=1,
                                    help="Pipeline-parallel degree: P stages of layers.")] = 1,
    budget_gib: Annotated[float | None, typer.Option(
        "--budget-gib", min=0.0,
        help="Bytes each rank may take, in GiB: a hard limit on its peak. Default: CUDA, what "
             "is free within --mem-fraction; CPU, min(1 GiB, 25% of available memory) shared "
             "by the ranks.")] = None,
    speculative_method: Annotated[str | None, typer.Option(
        "--speculative-method", help="mtp, eagle or eagle3: allocate the draft layers too.")
    ] = None,
    num_speculative_tokens: Annotated[int, typer.Option(
        "--num-speculative-tokens", parser=tokens_or_zero_option, metavar="TOKENS",
        help="Draft tokens per step.")] = 0,
    rendezvous_timeout: Annotated[float, typer.Option(
        "--rendezvous-timeout", min=0.1, max=3600.0,
        help="Under torchrun (RANK and WORLD_SIZE set): seconds to wait for every rank to "
             "join before giving up.")] = RENDEZVOUS_TIMEOUT_S,
    oversubscribe: Annotated[bool, typer.Option(
        "--oversubscribe", help="CPU: let --tp x --pp ranks exceed the usable CPUs (they share "
                                "cores; by default at most one rank per CPU).")] = False,
    fmt: FormatOpt = OutputFormat.table,
    explain: ExplainOpt = False,
) -> None:
    """Allocate the real paged KV cache on a device (T x P ranks with --tp/--pp), measure it
    against kvplan's prediction, find the real maximum number of blocks, run a decode step
    through it, free it."""
    from kvplan.analysis.device.ranks import verify_ranks  # torch is imported only when this runs
    from kvplan.present.verify_view import verify_view

    with handle_errors():
        spec = load_spec(model)
        try:
            with progress_shown():  # the fill, the search, the decode step
                result = verify_ranks(
                    spec, tp=tp, pp=pp, device=device, context=context, kv_dtype=kv_dtype.value,
                    block_size=block_size, mem_fraction=mem_fraction,
                    budget_bytes=None if budget_gib is None else gib_to_bytes(budget_gib),
                    speculative_method=speculative_method,
                    num_speculative_tokens=num_speculative_tokens,
                    rendezvous_timeout_s=rendezvous_timeout, oversubscribe=oversubscribe,
                    on_started=lambda pids: warn("kvplan: verify: started ranks "
                                                 + " ".join(str(p) for p in pids)),
                )
        except KeyboardInterrupt:
            warn("kvplan: interrupted: every rank stopped and its memory freed")
            raise typer.Exit(130) from None
        if result is None:  # a torchrun rank other than 0: rank 0 reports
            return
        if not result.freed_ok:
            warn(f"kvplan: warning: memory did not all come back after freeing "
                 f"({result.live_tensors_after_free} tensors alive, "
                 f"{result.freed_residual_bytes:+,} B over the baseline)")
        if not result.peak_ok:
            warn(f"kvplan: warning: peak memory {result.peak_bytes:,} B exceeded the budget "
                 f"{result.budget_bytes:,} B by more than the allocator's granularity")
        if result.absorbed_vs_naive_ok is False:
            warn("kvplan: warning: MLA absorbed and naive attention disagree beyond tolerance")
        emit(verify_view(result), fmt, explain=explain)
