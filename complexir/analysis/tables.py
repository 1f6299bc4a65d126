"""Markdown rendering for the report: score formatting, one table per benchmark, the model-card section.

Pure text from rows already computed (``report.build_rows``); no file is read here. ``charts`` draws the
same rows as PNG and takes its metric labels from here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from complexir.analysis.statistics import N_RESAMPLES
from complexir.hub.provenance import DEMO_RESULTS_MARK
from complexir.metrics.measures import measure_label
from complexir.runs.results import ModelRun

# Labels of the score keys that are not measures; a measure's label comes from the measure registry.
METRIC_LABELS = {"doc_token_share_seen": "tokens seen"}
JUDGED_KEY = "judged_at_10"  # every task's Judged@10 (ir_measures' judgment rate)
JUDGED_FLOOR = 0.5  # below it most of a task's top 10 is unjudged: its scores are lower bounds


def judged_low(value: object) -> bool:
    """Whether a Judged@10 value is below :data:`JUDGED_FLOOR` (None or a non-number: not known, so not low)."""
    return isinstance(value, (int, float)) and value < JUDGED_FLOOR
SECTION_START = "<!-- complexir-report:start -->"
SECTION_END = "<!-- complexir-report:end -->"


@dataclass
class Row:
    """One table row: a task subset and split, its scores, and with a baseline the comparison."""

    benchmark: str
    task: str
    subset: str
    split: str
    scores: dict[str, float]
    baseline: dict[str, float] = field(default_factory=dict)
    tests: dict[str, dict[str, float]] = field(default_factory=dict)  # metric → statistics.paired_tests + Holm
    judged: float | None = None  # Judged@10 of the model's ranking, where the result has it


def metric_label(metric: str) -> str:
    """A metric's table label (``ndcg_at_10`` → ``nDCG@10``, from the measure registry); an unknown key is shown
    as it is."""
    return METRIC_LABELS.get(metric) or measure_label(metric)


def fmt_score(value: Any, digits: int = 4) -> str:
    """A score for a table: ``-`` when missing or NaN, numbers to ``digits`` decimals (shared with ``run``)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{value:.{digits}f}"
    return str(value)


def _fmt_p(p: float | None) -> str:
    if p is None:
        return "-"
    return f"{p:.4f}" if p >= 1e-4 else f"{p:.1e}"


def render_table(rows: list[Row], baseline_name: str | None = None) -> str:
    """A markdown table of one benchmark's rows; with a baseline: Δ, randomisation-test p and its Holm adjustment
    (over every test of the report) per metric."""
    metrics = [m for m in dict.fromkeys(k for r in rows for k in r.scores)]
    header = ["Task", "Subset", "Split"]
    for m in metrics:
        label = metric_label(m)
        header.append(label)
        if baseline_name:
            header += [f"{label} Δ", f"{label} p", f"{label} p Holm"]
    judged = any(r.judged is not None for r in rows)
    if judged:
        header.append("Judged@10")
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] * 3 + ["---:"] * (len(header) - 3)) + "|"]
    for r in rows:
        cells = [r.task, r.subset, r.split]
        for m in metrics:
            cells.append(fmt_score(r.scores.get(m)))
            if baseline_name:
                base = r.baseline.get(m)
                delta = None if base is None or m not in r.scores else r.scores[m] - base
                cells += [("+" if delta and delta > 0 else "") + fmt_score(delta) if delta is not None else "-",
                          _fmt_p(r.tests.get(m, {}).get("p_randomisation")),
                          _fmt_p(r.tests.get(m, {}).get("p_randomisation_holm"))]
        if judged:
            cells.append(fmt_score(r.judged) + (" ⚠" if judged_low(r.judged) else ""))
        lines.append("| " + " | ".join(cells) + " |")
    low = [f"{r.task} ({r.subset})" for r in rows if judged_low(r.judged)]
    if low:
        lines += ["", f"⚠ Judged@10 below {JUDGED_FLOOR}: {', '.join(low)}. Most of the top 10 has no judgment and "
                  "counts as non-relevant: these scores are lower bounds."]
    return "\n".join(lines)


#: how every human-readable output of a report (card body, report.md, charts) marks results of demo data
DEMO_MARK = DEMO_RESULTS_MARK


def render_section(run: ModelRun, rows: list[Row], charts: dict[str, str], baseline: ModelRun | None,
                   built_locally: set[str] | frozenset[str] = frozenset(),
                   references: dict[str, list[str]] | None = None,
                   demo: set[str] | frozenset[str] = frozenset()) -> str:
    """The model card's body section: one table (and chart, when ``charts`` names one) per benchmark; the tasks
    in ``built_locally`` are named as scored on data built locally from the upstream release, and those in
    ``demo`` (allowed with ``--allow-demo``) as DEMO data, at the top and in their benchmark's heading."""
    parts = [SECTION_START, "## Evaluation results (complexir)" + (f" {DEMO_MARK}" if demo else ""), "",
             f"Model `{run.label}` (revision `{run.revision}`); scores from MTEB {_mteb_versions(run)}."]
    if demo:
        parts += ["", f"**{DEMO_MARK}**: these tasks scored the small DEMO copies shipped with complexir, not the "
                  f"benchmarks' data; their numbers say nothing about the model: {', '.join(sorted(demo))}."]
    if built_locally:
        revisions = ", ".join(f"{t} (`{run.task_results[t].dataset_revision}`)" for t in sorted(built_locally))
        parts += ["", "Scored on benchmark data built locally from the upstream release by complexir, because the "
                  f"published dataset repo was not available: {revisions}."]
    if baseline:
        parts += ["", f"Baseline: `{baseline.label}` (revision `{baseline.revision}`). Δ = model − baseline; "
                  "p = two-sided paired randomisation test on per-query scores "
                  f"({N_RESAMPLES:,} resamples, exact for small query sets); p Holm = the same p after Holm's "
                  "step-down adjustment over every test in this report; "
                  "paired t-test p-values (raw and adjusted) are in `complexir_report/significance.json`."]
    for bench in dict.fromkeys(r.benchmark for r in rows):
        bench_rows = [r for r in rows if r.benchmark == bench]
        heading = f"### {bench}" + (f" {DEMO_MARK}" if any(r.task in demo for r in bench_rows) else "")
        parts += ["", heading, "", render_table(bench_rows, baseline.label if baseline else None)]
        if references and references.get(bench):  # the paper's numbers: reference rows, apart from the scores
            parts += ["", *references[bench]]
        if bench in charts:
            parts += ["", f"![{bench} results]({charts[bench]})"]
    parts += ["", SECTION_END]
    return "\n".join(parts)


def _mteb_versions(run: ModelRun) -> str:
    return ", ".join(sorted({str(r.mteb_version) for r in run.task_results.values()})) or "?"
