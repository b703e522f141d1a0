"""`--plot FILE` for `plan` and `compare`: the sweep's plot (kvplan.present.sweep_plot) of the
curves kvplan.analysis.curves builds from their settings. Imported only when --plot is given
(pandas and matplotlib load then)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kvplan.cli.outputs import file_format
from kvplan.cli.sweep_cmd import PLOT_FORMATS, _matplotlib_figure, write_plot
from kvplan.engines.context import max_context_tokens
from kvplan.model.spec import ModelSpec
from kvplan.present.render import warn
from kvplan.sources.files import shown_path


def _prepare(path: Path, spec: ModelSpec, force: bool) -> str:
    from kvplan.cli.outputs import check_output

    fmt = file_format("--plot", str(path), PLOT_FORMATS)
    _matplotlib_figure()  # says how to install matplotlib when it is absent
    check_output("--plot", path, force=force, inputs=[Path(spec.path)] if spec.path else [])
    return fmt


def plot_plan(path: Path, spec: ModelSpec, plan: dict[str, Any], *, gpus_per_node: int,
              force: bool = False, platform: str | None = None,
              cpu_amx: bool | None = None) -> None:
    """`plan --plot`: one replica's max concurrency against context per candidate TP degree, at
    the plan's KV dtype and memory fraction; a star at the target."""
    from kvplan.analysis.curves import plan_curves

    fmt = _prepare(path, spec, force)
    df = plan_curves(spec, plan, gpus=gpus_per_node, platform=platform, cpu_amx=cpu_amx)
    verdict = "fits" if plan["fits"] else "does not fit"
    title = (f"{spec.id} on {plan['gpu']} ({plan['engine']}, {plan.get('kv_dtype') or 'bf16'} "
             f"KV): requests per replica vs context; the target {verdict}")
    write_plot(df, path, fmt, force=force,
               max_contexts={spec.id: max_context_tokens(spec, plan["engine"])},
               title=title, target=(int(plan["context"]), int(plan["concurrency"])))
    warn(f"kvplan: wrote plot to {shown_path(path)}")


def plot_compare(path: Path, spec: ModelSpec, *, context: int, kv_dtype: str, tp: int,
                 gpu: str | None, groups: int, block_size: int | None,
                 force: bool = False, platform: str | None = None,
                 cpu_amx: bool | None = None) -> None:
    """`compare --plot`: each attention scheme's max concurrency (or, without --gpu, bytes per
    sequence) against context."""
    from kvplan.analysis.curves import compare_curves

    fmt = _prepare(path, spec, force)
    df = compare_curves(spec, context=context, kv_dtype=kv_dtype, tp=tp, gpu=gpu, groups=groups,
                        block_size=block_size, platform=platform, cpu_amx=cpu_amx)
    write_plot(df, path, fmt, force=force, max_contexts={spec.id: spec.max_context_tokens})
    warn(f"kvplan: wrote plot to {shown_path(path)}")
