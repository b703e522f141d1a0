"""`kvplan verify`: allocate the real paged KV cache on a device and hold the predictions against
it. Registered in app.py with ``app.command("verify")(verify_cmd)``.

This module must not import torch at module level: `kvplan estimate` imports app.py, which
imports this. kvplan.device imports torch only inside functions.
"""

from __future__ import annotations

from typing import Annotated

import typer

from kvplan.capacity import DEFAULT_BLOCK_SIZES, Engine
from kvplan.cli.common import (
    BlockSizeOpt,
    FormatOpt,
    KVDTypeOpt,
    ModelArg,
    handle_errors,
    load_spec,
)
from kvplan.dtypes import KVDType
from kvplan.render import OutputFormat, emit, warn
from kvplan.units import gib_to_bytes


def verify_cmd(
    model: ModelArg,
    device: Annotated[str, typer.Option(
        "--device", help="cuda, cuda:N, cpu or auto (CUDA when available).")] = "auto",
    mem_fraction: Annotated[float, typer.Option(
        "--mem-fraction", min=0.0, max=1.0,
        help="CUDA: verify what is free inside total x this fraction (vLLM's "
             "gpu_memory_utilization). Ignored on CPU.")] = 0.9,
    context: Annotated[int, typer.Option("--context", "-c", min=1,
                                         help="Tokens per request (prompt + output).")] = 4096,
    kv_dtype: KVDTypeOpt = KVDType.bf16,
    block_size: BlockSizeOpt = None,
    tp: Annotated[int, typer.Option("--tp", min=1,
                                    help="Tensor-parallel degree: allocate one rank's share.")
                  ] = 1,
    budget_gib: Annotated[float | None, typer.Option(
        "--budget-gib", min=0.0,
        help="Bytes to verify, in GiB. Default: CUDA, what is free within --mem-fraction; "
             "CPU, min(1 GiB, 25% of available memory).")] = None,
    fmt: FormatOpt = OutputFormat.table,
) -> None:
    """Allocate the real paged KV cache on a device, measure it against kvplan's prediction,
    find the real maximum number of blocks, run one decode attention step over it, free it."""
    from kvplan.device.verify import verify  # torch is imported only when this runs
    from kvplan.device.views import verify_view

    with handle_errors():
        spec = load_spec(model)
        result = verify(
            spec, device=device, context=context, kv_dtype=kv_dtype.value,
            block_size=block_size or DEFAULT_BLOCK_SIZES[Engine.vllm], tp=tp,
            mem_fraction=mem_fraction,
            budget_bytes=None if budget_gib is None else gib_to_bytes(budget_gib),
            progress=True,
        )
        if not result.freed_ok:
            warn(f"kvplan: warning: memory did not all come back after freeing "
                 f"({result.live_tensors_after_free} tensors alive, "
                 f"{result.freed_residual_bytes:+,} B over the baseline)")
        if result.absorbed_vs_naive_ok is False:
            warn("kvplan: warning: MLA absorbed and naive attention disagree beyond tolerance")
        emit(verify_view(result), fmt)
