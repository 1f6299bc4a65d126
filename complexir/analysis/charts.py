"""PNG charts for the model-card report (matplotlib, Agg backend: no display needed)."""

from __future__ import annotations

import math
from pathlib import Path

from complexir.analysis.tables import Row, metric_label


def benchmark_chart(rows: list[Row], path: Path, *, title: str, baseline_name: str | None = None) -> Path:
    """Grouped bars: one group per task subset/split, one bar per headline metric (hatched: baseline)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    metrics = list(dict.fromkeys(m for r in rows for m in r.scores))
    labels = [r.task if r.subset == "default" else f"{r.task}\n{r.subset}" for r in rows]
    # (legend label, values, is baseline, colour index): a metric and its baseline share a colour
    series = [(metric_label(m), [r.scores.get(m) for r in rows], False, i) for i, m in enumerate(metrics)]
    if baseline_name:
        series += [(f"{metric_label(m)} ({baseline_name})", [r.baseline.get(m) for r in rows], True, i)
                   for i, m in enumerate(metrics) if any(m in r.baseline for r in rows)]
    x = np.arange(len(rows))
    width = 0.8 / max(len(series), 1)
    # wide enough for the bars, but capped: a card shows the image scaled to its column
    width_inches = min(16.0, max(6.0, 0.3 * len(rows) * max(1, len(series)) + 2))
    fig, ax = plt.subplots(figsize=(width_inches, 4.5), dpi=100)
    try:
        for i, (label, values, hatched, colour) in enumerate(series):
            heights = [v if v is not None and not (isinstance(v, float) and math.isnan(v)) else 0.0 for v in values]
            ax.bar(x + (i - (len(series) - 1) / 2) * width, heights, width, label=label,
                   hatch="//" if hatched else None, alpha=0.6 if hatched else 1.0,
                   color=f"C{colour}")
        ax.set_xticks(x, labels, rotation=30 if len(rows) > 4 else 0, ha="right" if len(rows) > 4 else "center",
                      fontsize=8)
        # headroom above 1: a bar at exactly 1 stays visible, and α-nDCG's greedy ideal can pass 1
        top = max([1.0, *(v for _, values, _, _ in series for v in values if isinstance(v, (int, float)))])
        ax.set_ylim(0, top * 1.05)
        ax.set_ylabel("score")
        ax.set_title(title)
        # below the plot, never over the bars
        ax.legend(fontsize=7, ncols=min(len(series), 3), loc="upper center", bbox_to_anchor=(0.5, -0.22))
        ax.grid(axis="y", alpha=0.3)
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, format="png", bbox_inches="tight")
    finally:
        plt.close(fig)
    return path

