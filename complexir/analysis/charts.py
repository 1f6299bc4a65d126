"""PNG charts for the model-card report (matplotlib, Agg backend: no display needed)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from complexir.analysis.tables import Row, metric_label

CHART_MEASURES = 3  # bars per group for the model (as many again for a baseline): more is not readable


def chart_metrics(rows: list[Row]) -> list[str]:
    """The measures a report chart draws: the first :data:`CHART_MEASURES` measures of the table (the benchmark's
    headline measures come first), scores about the model (LoCoV1's share of tokens read) left to the table."""
    metrics = [m for m in dict.fromkeys(m for r in rows for m in r.scores) if _is_measure(m)]
    return metrics[:CHART_MEASURES]


def _is_measure(key: str) -> bool:
    from complexir.metrics.measures import parse_measure

    try:
        parse_measure(key)
    except ValueError:
        return False
    return True


def tick_labels(benchmark: str, groups: list[tuple[str, str]]) -> list[str]:
    """One short line per (task, subset) group: the task without the benchmark's prefix every task carries (the
    title names the benchmark), then the subset unless it is the only one (``Keyword en-zh``)."""
    return [(t.removeprefix(benchmark) if t.startswith(benchmark) and t != benchmark else t)
            + (f" {s}" if s not in ("default", "all") else "") for t, s in groups]


def set_ticks(ax: Any, labels: list[str], width_inches: float) -> None:
    """Tick labels that never overlap: level when they fit, else turned 45° and anchored at their tick."""
    x = range(len(labels))
    longest = max((len(label) for label in labels), default=0)
    if len(labels) * (longest + 2) <= 14 * width_inches:  # characters of 8 points a level axis holds, with margins
        ax.set_xticks(list(x), labels, fontsize=8)
    else:
        ax.set_xticks(list(x), labels, fontsize=8, rotation=45, ha="right", rotation_mode="anchor")


def figure_width(groups: int, bars: int) -> float:
    """Inches: wide enough for the bars and their labels, capped (a card shows the image scaled to its column)."""
    return min(16.0, max(6.0, 0.3 * groups * max(1, bars) + 2, 0.55 * groups + 2))


def benchmark_chart(rows: list[Row], path: Path, *, title: str, baseline_name: str | None = None) -> Path:
    """Grouped bars: one group per task subset/split, one bar per measure of :func:`chart_metrics` (hatched: the
    baseline's); the legend under the plot, apart from the labels."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    metrics = chart_metrics(rows)
    benchmark = rows[0].benchmark if rows else ""
    labels = tick_labels(benchmark, [(r.task, r.subset) for r in rows])
    # (legend label, values, is baseline, colour index): a metric and its baseline share a colour
    series = [(metric_label(m), [r.scores.get(m) for r in rows], False, i) for i, m in enumerate(metrics)]
    if baseline_name:
        series += [(f"{metric_label(m)} ({baseline_name})", [r.baseline.get(m) for r in rows], True, i)
                   for i, m in enumerate(metrics) if any(m in r.baseline for r in rows)]
    x = np.arange(len(rows))
    width = 0.8 / max(len(series), 1)
    width_inches = figure_width(len(rows), len(series))
    fig, ax = plt.subplots(figsize=(width_inches, 4.5), dpi=100, layout="constrained")
    try:
        for i, (label, values, hatched, colour) in enumerate(series):
            heights = [v if v is not None and not (isinstance(v, float) and math.isnan(v)) else 0.0 for v in values]
            ax.bar(x + (i - (len(series) - 1) / 2) * width, heights, width, label=label,
                   hatch="//" if hatched else None, alpha=0.6 if hatched else 1.0,
                   color=f"C{colour}")
        set_ticks(ax, labels, width_inches)
        # headroom above 1: a bar at exactly 1 stays visible, and α-nDCG's greedy ideal can pass 1
        top = max([1.0, *(v for _, values, _, _ in series for v in values if isinstance(v, (int, float)))])
        ax.set_ylim(0, top * 1.05)
        ax.set_ylabel("score")
        ax.set_title(title)
        # in the figure's own band below the axes (constrained layout makes room): never over bars or labels
        fig.legend(fontsize=8, ncols=min(len(series), 3), loc="outside lower center")
        ax.grid(axis="y", alpha=0.3)
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, format="png")
    finally:
        plt.close(fig)
    return path
