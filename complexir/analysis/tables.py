"""Markdown rendering for the report: score formatting, one table per benchmark, the model-card section.

Pure text from rows already computed (``report.build_rows``); no file is read here. ``charts`` draws the
same rows as PNG and takes its metric labels from here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from complexir.analysis.statistics import N_RESAMPLES
from complexir.hub.provenance import DEMO_RESULTS_MARK
from complexir.metrics.adhoc import JUDGED_CEILING_KEY
from complexir.metrics.measures import measure_label
from complexir.runs.results import ModelRun

# Labels of the score keys that are not measures; a measure's label comes from the measure registry.
METRIC_LABELS = {"doc_token_share_seen": "doc tokens read (share)",  # LoCoV1: a share of each document, not a count
                 "judged_at_10_max": "Judged@10 allowed by the qrels"}
JUDGED_KEY = "judged_at_10"  # every task's Judged@10 (ir_measures' judgment rate)
# JUDGED_CEILING_KEY: the largest Judged@10 the task's qrels allow (the tasks write it): one judged document per query
# allows 0.1. Results written before it have none: then the ceiling is 1.
JUDGED_FLOOR = 0.5  # below this share of its ceiling, most of what could be judged in a task's top 10 is not


def judged_low(value: object, ceiling: object = None) -> bool:
    """Whether a Judged@10 value is below :data:`JUDGED_FLOOR` times the largest Judged@10 the qrels allow
    (``ceiling``; None: 1, as for results that do not record it). A value that is not a number is not known, so not
    low; nor is anything when the qrels judge nothing."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    top = float(ceiling) if isinstance(ceiling, (int, float)) and not isinstance(ceiling, bool) else 1.0
    return top > 0 and value < JUDGED_FLOOR * top


def judged_low_in(scores: Mapping[str, Any]) -> bool:
    """:func:`judged_low` of a task's scores (its Judged@10 against the ceiling they record)."""
    return judged_low(scores.get(JUDGED_KEY), scores.get(JUDGED_CEILING_KEY))


def judged_rule() -> str:
    """How a low Judged@10 is decided, in words, for the notes under tables."""
    return (f"Judged@10 below {JUDGED_FLOOR:g} of the largest the task's qrels allow (1 when every top 10 could be "
            "judged; 0.1 when one document per query is judged)")


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
    judged_max: float | None = None  # the largest Judged@10 the task's qrels allow, where the result has it


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
    """Markdown of one benchmark's rows: a table of the scores (one column per metric, then Judged@10); with a
    baseline, a second table with one cell per metric, ``Δ (p, p Holm)``: the difference, its randomisation-test p
    and that p Holm-adjusted over every test of the report. Two narrow tables, not one with four columns per
    metric."""
    metrics = [m for m in dict.fromkeys(k for r in rows for k in r.scores)]
    labels = [metric_label(m) for m in metrics]
    judged = any(r.judged is not None for r in rows)
    header = ["Task", "Subset", "Split", *labels, *(["Judged@10"] if judged else [])]
    lines = _table_head(header)
    for r in rows:
        cells = [r.task, r.subset, r.split, *(fmt_score(r.scores.get(m)) for m in metrics)]
        if judged:
            cells.append(fmt_score(r.judged) + (" ⚠" if judged_low(r.judged, r.judged_max) else ""))
        lines.append("| " + " | ".join(cells) + " |")
    low = [f"{r.task} ({r.subset})" for r in rows if judged_low(r.judged, r.judged_max)]
    if low:
        lines += ["", f"⚠ {judged_rule()}: {', '.join(low)}. Most of what could be judged in the top 10 is not, and "
                  "counts as non-relevant: these scores are lower bounds."]
    if baseline_name:
        lines += ["", f"Against the baseline `{baseline_name}`, per metric: Δ (p, p Holm).", "",
                  *_table_head(["Task", "Subset", "Split", *labels])]
        for r in rows:
            lines.append("| " + " | ".join([r.task, r.subset, r.split, *(_versus(r, m) for m in metrics)]) + " |")
    return "\n".join(lines)


#: how every human-readable output of a report (card body, report.md, charts) marks results of demo data
DEMO_MARK = DEMO_RESULTS_MARK
def _table_head(header: list[str]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] * 3 + ["---:"] * (len(header) - 3)) + "|"]


def _versus(row: Row, metric: str) -> str:
    """``+0.0200 (0.0400, 0.1200)``: Δ against the baseline, randomisation p, Holm-adjusted p (``-`` when unknown)."""
    base = row.baseline.get(metric)
    if base is None or metric not in row.scores:
        return "-"
    delta = row.scores[metric] - base
    test = row.tests.get(metric, {})
    return (("+" if delta > 0 else "") + fmt_score(delta)
            + f" ({_fmt_p(test.get('p_randomisation'))}, {_fmt_p(test.get('p_randomisation_holm'))})")


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
