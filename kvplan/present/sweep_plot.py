"""The sweep plot (matplotlib, imported only when a plot is drawn): a metric against context,
one line per combination. `kvplan sweep --plot`, `plan --plot`, `compare --plot` and the
`report` charts all draw with it; the caller writes the figure (`fig.savefig`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


def sweep_figure(df: pd.DataFrame, *, max_contexts: dict[str, int | None] | None = None,
                 title: str | None = None, target: tuple[int, int] | None = None) -> Any:
    """The metric (max concurrency, or bytes per sequence without a GPU) vs context, log2 x.
    One panel per model (or, for one model, per GPU) so that many series stay readable; in a
    panel one line per remaining combination (scheme, dtype, TP labelled); a dotted line at the
    model's maximum context; an x where not one request fits; a star at `target` (context,
    requests) when given."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter

    from kvplan.present.sweep_view import dim_text, json_value, metric, series

    col, label = metric(df)
    facet = "model" if df["model"].nunique() > 1 else (
        "gpu" if df["gpu"].nunique(dropna=True) > 1 else None)
    panels = [(None, df)] if facet is None else list(df.groupby(facet, sort=False))
    ncols = min(2, len(panels))
    nrows = -(-len(panels) // ncols)
    fig = Figure(figsize=(9 if ncols == 1 else 13, 5.5 if nrows == 1 else 4.2 * nrows),
                 layout="constrained")
    styles = ("-", "--", ":", "-.")
    markers = ("o", "s", "^", "D", "v", "x")

    def tokens(x: float, _pos: object) -> str:
        n = int(round(x))
        for size, suffix in ((1 << 20, "m"), (1 << 10, "k")):
            if n >= size and n % size == 0:
                return f"{n // size}{suffix}"
        return f"{n:,}"

    for k, (key, part) in enumerate(panels):
        ax = fig.add_subplot(nrows, ncols, k + 1)
        lines = series(part)
        # Colour by the first varying dimension, line style by the rest; TP is in the label.
        firsts = list(dict.fromkeys(name.split(" ")[0] for name, _, _ in lines))
        rests = list(dict.fromkeys(name.partition(" ")[2] for name, _, _ in lines))
        positive = all(v > 0 for _, _, values in lines for v in values)
        for name, ctx, values in lines:
            first, _, rest = name.partition(" ")
            i, j = firsts.index(first), rests.index(rest)
            shown = [(c, v) for c, v in zip(ctx, values, strict=True) if v > 0 or not positive]
            ax.plot([c for c, _ in shown], [v for _, v in shown], color=f"C{i % 10}",
                    linestyle=styles[j % len(styles)],
                    marker=markers[j // len(styles) % len(markers)], markersize=3, label=name)
            if col == "max_concurrency":
                none_fit = [c for c, v in zip(ctx, values, strict=True) if v < 1]
                if none_fit:
                    ax.plot(none_fit, [0.5] * len(none_fit), linestyle="none", marker="x",
                            color=f"C{i % 10}")
        ax.set_xscale("log", base=2)
        if col == "bytes_per_sequence" and positive:
            ax.set_yscale("log", base=2)
        elif col == "max_concurrency":
            ax.set_yscale("symlog", linthresh=1)
            ax.set_ylim(bottom=0)
        ax.xaxis.set_major_formatter(FuncFormatter(tokens))
        if col == "bytes_per_sequence":
            from kvplan._util.units import human_bytes

            ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _pos: human_bytes(y)))
        else:
            ax.yaxis.set_major_formatter(FuncFormatter(
                lambda y, _pos: f"{y:,.0f}" if y >= 1 else f"{y:.2g}"))
        models = part["model"].unique()
        limit = (max_contexts or {}).get(str(models[0])) if len(models) == 1 else None
        if limit:
            ax.axvline(limit, color="grey", linestyle=":", linewidth=1)
            ax.annotate("max context", (limit, 1), xycoords=("data", "axes fraction"),
                        xytext=(-2, -2), textcoords="offset points", ha="right", va="top",
                        fontsize="x-small", color="grey")
        ax.set_xlabel("context (tokens per request)")
        ax.set_ylabel(label)
        first = part.iloc[0]
        const = [f"{d} {dim_text(d, json_value(first[d]))}"
                 for d in ("scheme", "kv_dtype", "gpu", "tp")
                 if part[d].nunique(dropna=False) == 1 and json_value(first[d]) is not None]
        head = str(key) if facet is not None else str(first["model"])
        ax.set_title(f"{head} ({first['engine']}" + "".join(f", {c}" for c in const) + ")",
                     fontsize="small")
        ax.grid(True, which="both", alpha=0.3)
        if len(lines) > 1:
            ax.legend(fontsize="x-small", ncols=1 if len(lines) <= 10 else 2)
        if target is not None and col == "max_concurrency":
            ax.plot([target[0]], [target[1]], linestyle="none", marker="*", markersize=10,
                    color="black", label="target", zorder=5)
            ax.annotate(f"target: {target[1]:,} x {tokens(target[0], None)}", target,
                        xytext=(4, 4), textcoords="offset points", fontsize="x-small")
    fig.suptitle(title or f"{label} vs context" + (" (x: not one request fits)"
                                                   if col == "max_concurrency" else ""),
                 fontsize="medium")
    return fig
