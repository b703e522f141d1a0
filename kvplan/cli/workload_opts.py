"""The request-stream and SLO options `kvplan simulate` and `kvplan plan --rate` share (issue 30):
each defined once here.

No ``from __future__ import annotations`` (typer reads the annotations at run time).
"""

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from kvplan.analysis.simulate.executor import Executor
from kvplan.cli.vocab import RATE_LAYOUTS_PANEL, tokens_option


class RangeRatioConvention(str, Enum):
    """Whose --random-range-ratio (kvplan.analysis.simulate.range_ratio.CONVENTIONS)."""

    vllm = "vllm"
    vllm_legacy = "vllm-legacy"
    sglang = "sglang"
    sa_bench = "sa-bench"


RateOpt = Annotated[float | None, typer.Option(
    "--rate", "--request-rate", min=0.001,
    help="Requests per second, open loop (with a trace: instead of its times).")]
NumRequestsOpt = Annotated[int | None, typer.Option(
    "--num-requests", "--num-prompts", min=1,
    help="Requests to send (default 1,000; with a trace, its first N rows).")]
InputLenOpt = Annotated[int, typer.Option(
    "--input-len", min=1, parser=tokens_option, metavar="TOKENS",
    help="Prompt tokens (2k accepted).")]
OutputLenOpt = Annotated[int, typer.Option(
    "--output-len", min=1, parser=tokens_option, metavar="TOKENS", help="Output tokens.")]
SeedOpt = Annotated[int, typer.Option("--seed", help="Random seed (lengths, arrivals).")]
TraceOpt = Annotated[Path | None, typer.Option(
    "--trace", help="A request trace to replay (read as a stream).")]
TraceFormatOpt = Annotated[str | None, typer.Option(
    "--trace-format", help="mooncake, burstgpt, azure or sharegpt.")]
SloTtftOpt = Annotated[float | None, typer.Option(
    "--slo-ttft-ms", min=0.0, help="Goodput: a request's TTFT at most this.")]
SloTpotOpt = Annotated[float | None, typer.Option(
    "--slo-tpot-ms", min=0.0, help="Goodput: a request's TPOT at most this.")]
SloPercentileOpt = Annotated[int, typer.Option(
    "--slo-percentile", help="With --rate: the percentile (50, 90 or 99) of TTFT and TPOT "
                             "the SLOs hold at.")]
JobsOpt = Annotated[int | None, typer.Option(
    "--jobs", "-j", min=1,
    help="With --rate: layouts simulated at once (default: the usable CPUs; 1: in this "
         "process).")]
NoDpAttentionOpt = Annotated[bool, typer.Option(
    "--no-dp-attention", rich_help_panel=RATE_LAYOUTS_PANEL,
    help="With --rate: leave out the layouts with attention data parallelism (tried by "
         "default for a MoE model: engines of 2, 4, 8 GPUs or whole nodes, attention DP "
         "over them at attention TP 1 and up, experts over them, one engine or copies of one "
         "fitting a node or filling whole nodes, as `kvplan simulate --dp-attention` runs it).")]
ExecutorOpt = Annotated[Executor, typer.Option(
    "--executor", help="With --rate: where layouts are simulated: local (this process), "
                       "process (a pool of --jobs processes) or ray (Ray tasks; RAY_ADDRESS "
                       "names a cluster; needs kvplan\\[ray]).")]
