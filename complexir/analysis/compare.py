"""``complexir compare``: many systems side by side, with intervals, paired tests corrected for their number, the
judged fraction of their rankings and the papers' published numbers.

Reads any number of result folders (``complexir run`` or ``mteb run`` output, one or more systems each) with
``results.load_runs``; the statistics are ``statistics``'; the published numbers ``published``'. Writes into the
output folder:

* ``compare.json``: ``systems``, ``cells`` (a system's mean and 95% interval on a task, subset, split and measure, and
  per benchmark the average over its tasks), ``tests`` (every pair, or every system against ``--baseline``: paired
  t-test and randomisation test, both Holm-adjusted over the whole family in the file) and ``published``;
* ``compare.md`` (tables marking significant wins), ``compare.tex`` (booktabs) and one PNG chart per benchmark.
"""

from __future__ import annotations

import functools
import itertools
import json
import logging
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from complexir.analysis import statistics
from complexir.analysis.charts import figure_width, set_ticks, tick_labels
from complexir.analysis.published import published_table
from complexir.analysis.tables import JUDGED_CEILING_KEY, JUDGED_KEY, fmt_score, judged_low, judged_rule, metric_label
from complexir.layout.atomic import FileContent, write_files
from complexir.runs.results import ModelRun, load_runs

logger = logging.getLogger(__name__)

ALPHA = 0.05  # a win is a Holm-adjusted randomisation p below this
AVERAGE = "average"  # the task of a benchmark's average cell
ALL_SUBSETS = "all"
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
DEMO_TITLE = "DEMO DATA"  # what every output of a comparison of demo results says, in its title


@dataclass
class System:
    folder: str  # how tests name it: the folder given, or the run's own folder when the given one holds several
    run: ModelRun
    letter: str
    demo_tasks: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.run.label

    def scores(self, task: str, subset: str, split: str, measure: str) -> dict[str, float] | None:
        per_query = self.run.per_query.get(task, {}).get(subset, {}).get(split, {}).get(measure)
        return {q: float(v) for q, v in per_query.items()} if per_query else None

    def mean(self, task: str, subset: str, split: str, measure: str) -> float | None:
        result = self.run.task_results.get(task)
        for entry in result.scores.get(split, []) if result is not None else []:
            if entry.get("hf_subset", "default") == subset and isinstance(entry.get(measure), (int, float)):
                return float(entry[measure])
        return None


# ------------------------------------------------------------------------------------------ loading and checks


def load_systems(folders: list[str | Path], *, allow_demo: bool) -> list[System]:
    """Every run in every folder, lettered in order; demo results refused unless ``allow_demo`` (as ``report``)."""
    from complexir.analysis.report import check_provenance

    systems: list[System] = []
    for given in folders:
        runs = load_runs(given)
        for run in runs:
            if len(systems) == len(LETTERS):
                raise ValueError(f"at most {len(LETTERS)} systems can be compared at once")
            name = str(given) if len(runs) == 1 else str(run.folder)
            if any(s.folder == name for s in systems):
                raise ValueError(f"{name}: given twice")
            demo = check_provenance(run, allow_demo=allow_demo, use="be compared as benchmark results")
            check_scores(run)
            systems.append(System(name, run, LETTERS[len(systems)], demo))
    if len(systems) < 2:
        raise ValueError("compare needs at least two systems (result folders, or one folder holding several)")
    return systems


#: how far a per-query file's average may lie from its result's mean: mteb rounds the scores it saves to 6 decimals
MEAN_TOLERANCE = 1e-6


def check_scores(run: ModelRun) -> None:
    """Refuse scores that would show a wrong number: a measure that is NaN (in the result JSON or a per-query file:
    the system was not scored, not scored 0), and per-query scores whose average is not the result's mean (the
    two files come from different runs). ValueError naming the file, task, subset, split and measure."""
    from complexir.analysis.report import benchmark_of, headline_metrics, task_main_score

    for task, result in sorted(run.task_results.items()):
        result_file = run.result_files.get(task, run.folder / f"{task}.json")
        per_query = run.per_query.get(task, {})
        per_query_file = run.per_query_files.get(task)
        shown = {"main_score", *headline_metrics(benchmark_of(task), task_main_score(task))}
        for split, entries in sorted(result.scores.items()):
            for entry in entries:
                subset = entry.get("hf_subset", "default")
                measures = per_query.get(subset, {}).get(split, {})
                where = f"{task} ({subset}, {split})"
                for measure in sorted(shown | set(measures)):
                    value = entry.get(measure)
                    if isinstance(value, float) and math.isnan(value):
                        raise ValueError(f"{result_file}: {where}: {measure} is NaN (not scored); a NaN result "
                                         "cannot be compared: score the system again, or leave this folder out")
                for measure, values in sorted(measures.items()):
                    numbers = [float(v) for v in values.values()] if isinstance(values, dict) else []
                    if any(math.isnan(v) for v in numbers):
                        raise ValueError(f"{per_query_file}: {where}: {measure} has NaN per-query scores; score the "
                                         "system again, or leave this folder out")
                    mean = entry.get(measure)
                    if not numbers or not isinstance(mean, (int, float)) or isinstance(mean, bool):
                        continue
                    average = math.fsum(numbers) / len(numbers)
                    if abs(average - mean) > MEAN_TOLERANCE:
                        raise ValueError(f"{per_query_file}: {where}: {measure} averages {average:.6f} over its "
                                         f"{len(numbers)} queries, but {result_file} gives the mean {mean:.6f}: the "
                                         "two files are of different runs; score the system again")


def data_of(system: System, task: str) -> str | None:
    """The data a system's result of ``task`` scored: its per-query file's revision, else the result's."""
    named = system.run.per_query_data.get(task, {}).get("revision")
    result = system.run.task_results.get(task)
    return named or (result.dataset_revision if result is not None else None)


def check_same_data(systems: list[System]) -> None:
    """Results of one task that scored different data (another build's digest, another Hub revision) cannot be paired:
    ValueError naming the task, both folders and both revisions."""
    tasks = sorted({t for s in systems for t in s.run.task_results})
    for task in tasks:
        having = [(s, data_of(s, task)) for s in systems if task in s.run.task_results]
        for (a, rev_a), (b, rev_b) in itertools.combinations(having, 2):
            if rev_a != rev_b:
                raise ValueError(f"{task}: {a.folder} scored data {rev_a!r} but {b.folder} scored {rev_b!r}; results "
                                 "of different data (another build or revision) cannot be compared")


def find_baseline(systems: list[System], name: str) -> System:
    for s in systems:
        if name in (s.folder, s.name, s.run.model, s.letter, str(s.run.folder)):
            return s
    raise ValueError(f"--baseline {name!r} is none of the systems: "
                     + ", ".join(f"{s.letter} = {s.folder} ({s.name})" for s in systems))


def measure_keys(requested: list[str] | None) -> list[str] | None:
    """``--measure`` names, in any spelling the measure registry reads (``nDCG@10``, ``MAP@10``, ``ndcg_at_10``), as
    score keys."""
    if not requested:
        return None
    from complexir.metrics.measures import parse_measure

    keys = []
    for name in requested:
        try:
            keys.append(parse_measure(name).mteb_key)
        except ValueError as error:
            raise ValueError(f"--measure {name!r}: {error}") from None
    return list(dict.fromkeys(keys))


# ------------------------------------------------------------------------------------------ the comparison


@dataclass
class Comparison:
    systems: list[System]
    baseline: System | None
    cells: list[dict[str, Any]] = field(default_factory=list)
    tests: list[dict[str, Any]] = field(default_factory=list)
    published: list[dict[str, Any]] = field(default_factory=list)
    groups: list[tuple[str, str, str, str, str]] = field(default_factory=list)  # (benchmark, task, subset, split, m)
    untestable: list[str] = field(default_factory=list)

    def cell(self, system: System, bench: str, task: str, subset: str, split: str, measure: str
             ) -> dict[str, Any] | None:
        return next((c for c in self.cells if c["folder"] == system.folder and c["benchmark"] == bench
                     and c["task"] == task and c["subset"] == subset and c["split"] == split
                     and c["measure"] == measure), None)

    def tests_of(self, bench: str, task: str, subset: str, split: str, measure: str) -> list[dict[str, Any]]:
        return [t for t in self.tests if (t["benchmark"], t["task"], t["subset"], t["split"], t["measure"])
                == (bench, task, subset, split, measure)]

    def to_json(self) -> dict[str, Any]:
        return {
            "format": "complexir-compare/1",
            "alpha": ALPHA,
            "seed": statistics.SEED,
            "bootstrap_resamples": statistics.N_BOOTSTRAP,
            "randomisation_resamples": statistics.N_RESAMPLES,
            "baseline": self.baseline.folder if self.baseline else None,
            "systems": [{"letter": s.letter, "folder": s.folder, "name": s.name, "model": s.run.model,
                         "revision": s.run.revision, "experiment": s.run.experiment,
                         "per_query": bool(s.run.per_query), "demo_tasks": s.demo_tasks,
                         "data": {t: data_of(s, t) for t in sorted(s.run.task_results)}} for s in self.systems],
            "cells": self.cells,
            "tests": self.tests,
            "published": self.published,
        }


def _benchmark_tasks() -> dict[str, set[str]]:
    """The tasks each registered benchmark averages: its ``mteb.Benchmark``'s retrieval tasks (variants such as
    CRUMB's full-document setting are not in it; CoverageBench's reranking tasks are another setting, not averaged
    with its retrieval ones)."""
    from complexir.tasks import benchmarks_by_name

    return {name: {t.metadata.name for t in bench.tasks if t.metadata.type == "Retrieval"}
            for name, bench in benchmarks_by_name().items()}


def compare(systems: list[System], *, baseline: System | None = None, measures: list[str] | None = None,
            progress: bool = False) -> Comparison:
    """Cells, tests (Holm over the whole family) and published reference rows for ``systems``; with ``progress``, a
    bar on stderr counting the tasks (and benchmark averages) done."""
    from complexir.analysis.report import benchmark_of, headline_metrics, task_main_score

    out = Comparison(systems, baseline)
    out.untestable = [s.folder for s in systems if not s.run.per_query]
    # (benchmark, task, subset, split) → measures, in benchmark order
    keys: dict[tuple[str, str, str, str], list[str]] = {}
    for s in systems:
        for task, result in sorted(s.run.task_results.items()):
            bench = benchmark_of(task)
            wanted = measures or headline_metrics(bench, task_main_score(task))
            for split, entries in sorted(result.scores.items()):
                for entry in entries:
                    subset = entry.get("hf_subset", "default")
                    present = [m for m in wanted if m in entry]
                    if measures:
                        missing = [m for m in measures if m not in entry]
                        if missing:
                            logger.warning("%s: %s (%s, %s) has no %s", s.folder, task, subset, split,
                                           ", ".join(missing))
                    if JUDGED_KEY in entry:
                        present.append(JUDGED_KEY)
                    known = keys.setdefault((bench, task, subset, split), [])
                    known += [m for m in present if m not in known]
    from complexir.registry.benchmarks import all_specs

    order = [sp.name for sp in all_specs()]
    ordered = sorted(keys, key=lambda k: (order.index(k[0]) if k[0] in order else len(order), k[0], k[1:]))
    steps = len(ordered) + len(_average_combos(ordered, keys))
    with tqdm(total=steps, desc="comparing", unit="task", disable=not progress) as bar:  # stderr
        for bench, task, subset, split in ordered:
            bar.set_postfix_str(f"{task} {subset} {split}", refresh=False)
            out.groups += [(bench, task, subset, split, m) for m in keys[(bench, task, subset, split)]]
            _task_cells(out, bench, task, subset, split, keys[(bench, task, subset, split)])
            bar.update()
        _benchmark_cells(out, ordered, keys, bar)
    statistics.adjust_family(out.tests)  # one family: every test in the output
    out.published = _published_rows(out)
    return out


def _pairs(systems: list[System], baseline: System | None) -> list[tuple[System, System]]:
    if baseline is not None:
        return [(s, baseline) for s in systems if s is not baseline]
    return list(itertools.combinations(systems, 2))


def _task_cells(out: Comparison, bench: str, task: str, subset: str, split: str, measures: list[str]) -> None:
    """The cells and tests of one task, subset and split, for all ``measures`` at once: every measure's bootstrap
    shares one draw of resamples and every pair's and measure's randomisation test one draw of sign flips (the draws
    depend only on the number of queries and the seed, so these are the numbers one call per test would give)."""
    prepared = []
    for measure in measures:
        having = [s for s in out.systems if s.mean(task, subset, split, measure) is not None]
        scored = {s.folder: per_query for s in having if (per_query := s.scores(task, subset, split, measure))}
        with_queries = [s for s in having if s.folder in scored]
        queries = statistics.common_queries(*(scored[s.folder] for s in with_queries)) if with_queries else []
        values = np.array([[scored[s.folder][q] for q in queries] for s in with_queries]) if queries else None
        prepared.append((measure, having, scored, with_queries, queries, values))
    resampled = _bootstrap_rows([p[5] for p in prepared])
    pending: list[tuple[dict[str, Any], np.ndarray, np.ndarray]] = []  # (test, a's values, b's values)
    for (measure, having, scored, with_queries, queries, values), boot in zip(prepared, resampled, strict=True):
        intervals = statistics.percentile_intervals(boot) if boot is not None else None
        for s in having:
            per_query = scored.get(s.folder)
            cell: dict[str, Any] = {"system": s.name, "folder": s.folder, "benchmark": bench, "task": task,
                                    "subset": subset, "split": split, "measure": measure}
            if per_query and intervals is not None:
                cell.update(mean=math.fsum(per_query[q] for q in queries) / len(queries),
                            ci95=[float(v) for v in intervals[with_queries.index(s)]], n=len(queries))
            else:
                cell.update(mean=s.mean(task, subset, split, measure), ci95=None, n=None)
            out.cells.append(cell)
        if measure == JUDGED_KEY:  # shown to qualify the other scores, not itself compared
            continue
        if out.baseline is not None and out.baseline not in with_queries:
            continue
        for a, b in _pairs(with_queries, out.baseline):
            test = {"a": a.folder, "b": b.folder, "benchmark": bench, "task": task, "subset": subset,
                    "split": split, "measure": measure, "n": len(queries)}
            out.tests.append(test)
            if values is None:
                values = np.empty((len(with_queries), 0))
            pending.append((test, values[with_queries.index(a)], values[with_queries.index(b)]))
    _run_tests(pending)


def _bootstrap_rows(matrices: list[np.ndarray | None]) -> list[np.ndarray | None]:
    """:func:`statistics.bootstrap_means` of each matrix, in one call per number of queries (the stacked rows share
    the draw they would each have had alone)."""
    out: list[np.ndarray | None] = [None] * len(matrices)
    by_n: dict[int, list[int]] = {}
    for i, m in enumerate(matrices):
        if m is not None and m.size:
            by_n.setdefault(m.shape[1], []).append(i)
    for indices in by_n.values():
        chosen = [m for i in indices if (m := matrices[i]) is not None]  # each is (by_n holds only matrices)
        boot = statistics.bootstrap_means(np.vstack(chosen))
        start = 0
        for i, m in zip(indices, chosen, strict=True):
            out[i] = boot[start:start + len(m)]
            start += len(m)
    return out


def _run_tests(pending: list[tuple[dict[str, Any], np.ndarray, np.ndarray]],
               weights: list[np.ndarray] | None = None) -> None:
    """Fill ``delta``, ``p_ttest`` and ``p_randomisation`` of each pending test (with its ``weights``, when given):
    one vectorised call per number of queries and weighting, whose draw every test of it shares."""
    by_kind: dict[tuple[int, bytes], list[int]] = {}
    for i, (_test, x, _y) in enumerate(pending):
        by_kind.setdefault((len(x), weights[i].tobytes() if weights is not None else b""), []).append(i)
    for indices in by_kind.values():
        x = np.vstack([pending[i][1] for i in indices])
        y = np.vstack([pending[i][2] for i in indices])
        tested = statistics.paired_tests_rows(x, y, weights=weights[indices[0]] if weights is not None else None)
        for row, i in enumerate(indices):
            pending[i][0].update(delta=float(tested["delta"][row]), p_ttest=float(tested["p_ttest"][row]),
                                 p_randomisation=float(tested["p_randomisation"][row]))


def _average_combos(ordered: list[tuple[str, str, str, str]], keys: dict[tuple[str, str, str, str], list[str]]
                    ) -> dict[tuple[str, str], list[str]]:
    """(benchmark, split) → the measures its average rows are made for (the benchmarks registered here)."""
    own = _benchmark_tasks()
    combos: dict[tuple[str, str], list[str]] = {}
    for (b, _t, _s, sp) in ordered:
        if b in own:
            known = combos.setdefault((b, sp), [])
            known += [m for m in keys[(b, _t, _s, sp)] if m != JUDGED_KEY and m not in known]
    return combos


def _task_mean(system: System, task: str, subsets: list[str], split: str, measure: str) -> float:
    """A task's score: the mean of its subsets' means (each known: the caller checked)."""
    return float(np.mean(np.array([system.mean(task, sub, split, measure) for sub in subsets], dtype=np.float64)))


def _benchmark_cells(out: Comparison, ordered: list[tuple[str, str, str, str]],
                     keys: dict[tuple[str, str, str, str], list[str]], bar: Any) -> None:
    """Per benchmark, split and measure: the average over the benchmark's tasks (a task's score the mean of its
    subsets, as MTEB and the four papers average), for the tasks every system scored; its interval from the tasks'
    paired bootstraps, its randomisation test stratified by task (the weighted mean difference), its t-test over the
    task scores. The measures of one benchmark and split share their draws (as :func:`_task_cells`')."""
    own = _benchmark_tasks()
    for (bench, split), measures in _average_combos(ordered, keys).items():
        bar.set_postfix_str(f"{bench} {AVERAGE} {split}", refresh=False)
        prepared = []
        for measure in measures:
            groups: dict[str, list[str]] = {}  # task → subsets every system has
            for (name, task, subset, sp) in ordered:
                if (name, sp) == (bench, split) and task in own[bench] and measure in keys[(name, task, subset, sp)]:
                    if all(s.mean(task, subset, split, measure) is not None for s in out.systems):
                        groups.setdefault(task, []).append(subset)
            if len(groups) < 2:
                continue
            tasks = sorted(groups)
            testable = [s for s in out.systems
                        if all(s.scores(t, sub, split, measure) for t in tasks for sub in groups[t])]
            # per (task, subset): the queries all testable systems share, and their values
            parts: list[tuple[str, str, list[str], float, np.ndarray]] = []
            for t in tasks:
                for sub in groups[t]:
                    scored = [sc for s in testable if (sc := s.scores(t, sub, split, measure))]  # each has scores
                    queries = statistics.common_queries(*scored) if testable else []
                    weight = 1.0 / (len(tasks) * len(groups[t]) * max(len(queries), 1))
                    values = np.array([[sc[q] for q in queries] for sc in scored]).reshape(len(scored), len(queries))
                    parts.append((t, sub, queries, weight, values))
            prepared.append((measure, groups, tasks, testable, parts))
        # every part of every measure in one bootstrap per number of queries (none for an untestable measure)
        resampled = iter(_bootstrap_rows([p[4] if item[3] and all(q[2] for q in item[4]) else None
                                          for item in prepared for p in item[4]]))
        pending: list[tuple[dict[str, Any], np.ndarray, np.ndarray, np.ndarray, float]] = []
        for measure, groups, tasks, testable, parts in prepared:
            boots = [next(resampled) for _ in parts]
            boot: np.ndarray | None = None
            if testable and all(p[2] for p in parts):  # then every part was resampled
                boot = functools.reduce(np.add, (b * (1.0 / (len(tasks) * len(groups[p[0]])))
                                                 for p, b in zip(parts, boots, strict=True) if b is not None))
            intervals = statistics.percentile_intervals(boot) if boot is not None else None
            for s in out.systems:
                task_scores = [_task_mean(s, t, groups[t], split, measure) for t in tasks]
                cell = {"system": s.name, "folder": s.folder, "benchmark": bench, "task": AVERAGE,
                        "subset": ALL_SUBSETS, "split": split, "measure": measure,
                        "mean": float(np.mean(task_scores)), "ci95": None, "n": None, "tasks": tasks}
                if intervals is not None and s in testable:
                    j = testable.index(s)
                    cell["mean"] = float(sum(p[3] * p[4][j].sum() for p in parts))
                    cell["ci95"] = [float(v) for v in intervals[j]]
                    cell["n"] = int(sum(len(p[2]) for p in parts))
                out.cells.append(cell)
            out.groups.append((bench, AVERAGE, ALL_SUBSETS, split, measure))
            if boot is None:
                continue
            base = out.baseline if out.baseline in testable else None
            if out.baseline is not None and base is None:
                continue
            w = np.concatenate([np.full(len(p[2]), p[3]) for p in parts])
            for a, b in _pairs(testable, base):
                ia, ib = testable.index(a), testable.index(b)
                task_a = [_task_mean(a, t, groups[t], split, measure) for t in tasks]
                task_b = [_task_mean(b, t, groups[t], split, measure) for t in tasks]
                test = {"a": a.folder, "b": b.folder, "benchmark": bench, "task": AVERAGE, "subset": ALL_SUBSETS,
                        "split": split, "measure": measure, "n": len(w), "tasks": len(tasks)}
                out.tests.append(test)
                pending.append((test, np.concatenate([p[4][ia] for p in parts]),
                                np.concatenate([p[4][ib] for p in parts]), w, statistics.ttest_p(task_a, task_b)))
        _run_tests([(t, x, y) for t, x, y, _w, _p in pending], [w for _t, _x, _y, w, _p in pending])
        for test, _x, _y, _w, p_task_means in pending:
            test["p_ttest"] = p_task_means  # a macro average's t-test is over its task means
        bar.update()


def _published_rows(out: Comparison) -> list[dict[str, Any]]:
    """The papers' numbers for the benchmarks, tasks and measures shown: reference rows, never in means or tests."""
    from complexir.analysis import published

    shown = {(b, t if t != AVERAGE else published.AVERAGE, m) for (b, t, _s, _sp, m) in out.groups}
    rows = []
    for bench in dict.fromkeys(b for b, *_ in out.groups):
        if bench not in published.benchmarks():
            continue
        paper = published.load(bench)
        for v in paper.values:
            if (bench, v.task, v.measure) in shown:
                rows.append({"published": True, "benchmark": bench, "system": v.system, "task": v.task,
                             "measure": v.measure, "value": v.value, "printed": v.printed, "scale": v.scale,
                             "table": v.table, "citation": paper.citation, "url": paper.url})
    return rows


# ------------------------------------------------------------------------------------------ rendering


def _wins(out: Comparison, system: System, bench: str, task: str, subset: str, split: str, measure: str) -> str:
    """With a baseline: ▲ (significantly better) or ▼ (worse); else the letters of the systems it beats."""
    beaten, mark = [], ""
    for t in out.tests_of(bench, task, subset, split, measure):
        if not t["p_randomisation_holm"] < ALPHA:
            continue
        if system.folder not in (t["a"], t["b"]):
            continue
        sign = t["delta"] if t["a"] == system.folder else -t["delta"]
        other = t["b"] if t["a"] == system.folder else t["a"]
        if out.baseline is not None:
            if system.folder != out.baseline.folder:
                mark = "▲" if sign > 0 else "▼"
        elif sign > 0:
            beaten.append(next(s.letter for s in out.systems if s.folder == other))
    return mark or ("".join(sorted(beaten)))


def _judged_flag(out: Comparison, system: System, bench: str, task: str, subset: str, split: str) -> bool:
    if task == AVERAGE:
        return False
    cell = out.cell(system, bench, task, subset, split, JUDGED_KEY)
    return cell is not None and judged_low(cell["mean"], system.mean(task, subset, split, JUDGED_CEILING_KEY))


def _md_cell(out: Comparison, s: System, bench: str, task: str, subset: str, split: str, measure: str) -> str:
    cell = out.cell(s, bench, task, subset, split, measure)
    if cell is None or cell["mean"] is None:
        return "-"
    text = fmt_score(cell["mean"])
    if cell["ci95"] is not None:
        text += f" [{fmt_score(cell['ci95'][0], 3)}, {fmt_score(cell['ci95'][1], 3)}]"
    wins = _wins(out, s, bench, task, subset, split, measure) if measure != JUDGED_KEY else ""
    if wins:
        text += f" **{wins}**" if wins in "▲▼" else f" <sup>{wins}</sup>"
    if measure != JUDGED_KEY and _judged_flag(out, s, bench, task, subset, split):
        text += " †"
    return text


def render_markdown(out: Comparison, charts: dict[str, str]) -> str:
    systems = out.systems
    lines = ["# Comparison (complexir compare)", "", "Systems:", ""]
    for s in systems:
        extra = []
        if not s.run.per_query:
            extra.append("no per-query scores: means only, no interval, in no test")
        if s.demo_tasks:
            extra.append("DEMO data, not benchmark scores")
        if out.baseline is s:
            extra.append("baseline")
        lines.append(f"- **{s.letter}** `{s.name}` (revision `{s.run.revision}`), from `{s.folder}`"
                     + (f" — {'; '.join(extra)}" if extra else ""))
    n_sig = sum(1 for t in out.tests if t["p_randomisation_holm"] < ALPHA)
    vs = f"every system against the baseline {out.baseline.letter}" if out.baseline else "every pair of systems"
    lines += ["", f"Each cell: the mean over the queries, then its 95% interval (paired bootstrap over queries, "
              f"{statistics.N_BOOTSTRAP:,} resamples, seed {statistics.SEED}). Tests: {vs}, a two-sided paired "
              f"randomisation test ({statistics.N_RESAMPLES:,} sign flips, exact for few queries) and a paired "
              f"t-test, Holm-adjusted over all {len(out.tests)} tests of each kind in this comparison. "
              + ("**▲**/**▼**: significantly better/worse than the baseline"
                 if out.baseline else "<sup>B</sup> after a score: significantly better than system B")
              + f" (Holm-adjusted randomisation p < {ALPHA}); {n_sig} of {len(out.tests)} tests are. "
              f"† : {judged_rule()} on that task (most of what could be judged in its top 10 is not, and "
              "counts as non-relevant). Average rows: the mean over the benchmark's retrieval tasks every system "
              "scored (a task's score the mean of its subsets); its test is stratified by task. All p-values are in "
              "`compare.json`."]
    if out.untestable:
        lines += ["", "Not tested (no per-query scores; a plain `mteb run` folder keeps only means): "
                  + ", ".join(f"`{f}`" for f in out.untestable) + ". Score them with `complexir run` to test them."]
    if any(s.demo_tasks for s in systems):
        lines += ["", "**DEMO DATA**: some results scored the demo copies shipped in complexir (a few hand-written "
                  "queries). These are NOT benchmark scores."]
    for bench in dict.fromkeys(g[0] for g in out.groups):
        lines += ["", f"## {bench}"]
        for split in dict.fromkeys(g[3] for g in out.groups if g[0] == bench):
            for measure in dict.fromkeys(g[4] for g in out.groups if g[0] == bench and g[3] == split):
                rows = [g for g in out.groups if g[0] == bench and g[3] == split and g[4] == measure]
                lines += ["", f"### {metric_label(measure)} ({split})", "",
                          "| Task | Subset | " + " | ".join(f"{s.letter}: {s.name}" for s in systems) + " |",
                          "|---|---|" + "---:|" * len(systems)]
                for _b, task, subset, _sp, _m in rows:
                    label = _average_label(bench, _avg_tasks(out, bench, split, measure)) if task == AVERAGE else task
                    lines.append(f"| {label} | {subset} | "
                                 + " | ".join(_md_cell(out, s, bench, task, subset, split, measure) for s in systems)
                                 + " |")
                ref = [p for p in out.published if p["benchmark"] == bench and p["measure"] == measure]
                if ref:
                    lines += ["", "Published (reference only: from the paper, on its full data; never in the means "
                              f"or the tests; {ref[0]['citation']}; its notes: `complexir published {bench}`):", "",
                              *published_table(ref, measure)]
        if bench in charts:
            lines += ["", f"![{bench}]({charts[bench]})"]
    return "\n".join(lines) + "\n"


def _average_label(bench: str, tasks: list[str]) -> str:
    """``**average** of 3 tasks (GovReport, QasperAbstract, StackOverflow)``: the tasks named, without the benchmark's
    prefix that every one of them carries (the section names the benchmark)."""
    short = [t.removeprefix(bench) or t for t in tasks] if all(t.startswith(bench) for t in tasks) else tasks
    return f"**{AVERAGE}** of {len(tasks)} task{'s' if len(tasks) != 1 else ''} ({', '.join(short)})"


def _avg_tasks(out: Comparison, bench: str, split: str, measure: str) -> list[str]:
    cell = next((c for c in out.cells if c["benchmark"] == bench and c["task"] == AVERAGE and c["split"] == split
                 and c["measure"] == measure), None)
    return cell["tasks"] if cell else []


def _demo_in(out: Comparison, bench: str) -> bool:
    """Whether any result shown for ``bench`` scored demo data (its tables and chart then say so in their title)."""
    tasks = {g[1] for g in out.groups if g[0] == bench}
    return any(task in tasks for s in out.systems for task in s.demo_tasks)


def _tex(text: str) -> str:
    return re.sub(r"([&%$#_{}])", r"\\\1", text).replace("~", r"\textasciitilde{}").replace("^", r"\^{}")


def render_latex(out: Comparison) -> str:
    """One booktabs table per benchmark, split and measure (needs ``\\usepackage{booktabs}``)."""
    systems = out.systems
    parts = ["% complexir compare: means with 95% bootstrap intervals; superscript letters (or $\\blacktriangle$/"
             "$\\blacktriangledown$ against the baseline): significant after Holm (randomisation test, p < 0.05); "
             "needs \\usepackage{booktabs} (and amssymb for the triangles); "
             f"$^\\dagger$: {judged_rule()} on that task (most of its top 10 is unjudged, counted as non-relevant)"]
    if any(s.demo_tasks for s in systems):
        parts.append(f"% {DEMO_TITLE}: some results scored the demo copies shipped in complexir (a few hand-written "
                     "queries). These are NOT benchmark scores.")
    for bench in dict.fromkeys(g[0] for g in out.groups):
        for split in dict.fromkeys(g[3] for g in out.groups if g[0] == bench):
            for measure in dict.fromkeys(g[4] for g in out.groups if g[0] == bench and g[3] == split):
                rows = [g for g in out.groups if g[0] == bench and g[3] == split and g[4] == measure]
                demo = DEMO_TITLE + ": " if _demo_in(out, bench) else ""
                parts += ["", r"\begin{table}[t]", r"\centering", r"\small",
                          rf"\caption{{{demo}{_tex(bench)}: {_tex(metric_label(measure))} ({_tex(split)})}}",
                          r"\begin{tabular}{ll" + "r" * len(systems) + "}", r"\toprule",
                          "Task & Subset & " + " & ".join(f"{s.letter}: {_tex(s.name)}" for s in systems)
                          + r" \\", r"\midrule"]
                for _b, task, subset, _sp, _m in rows:
                    if task == AVERAGE:
                        parts.append(r"\midrule")
                    cells = []
                    for s in systems:
                        cell = out.cell(s, bench, task, subset, split, measure)
                        if cell is None or cell["mean"] is None:
                            cells.append("--")
                            continue
                        text = f"{cell['mean']:.4f}"
                        if cell["ci95"] is not None:
                            text += rf" {{\scriptsize [{cell['ci95'][0]:.3f}, {cell['ci95'][1]:.3f}]}}"
                        wins = _wins(out, s, bench, task, subset, split, measure) if measure != JUDGED_KEY else ""
                        if wins == "▲":
                            text += r"$^\blacktriangle$"
                        elif wins == "▼":
                            text += r"$^\blacktriangledown$"
                        elif wins:
                            text += rf"\textsuperscript{{{','.join(wins)}}}"
                        if measure != JUDGED_KEY and _judged_flag(out, s, bench, task, subset, split):
                            text += r"$^\dagger$"
                        cells.append(text)
                    parts.append(f"{_tex(task)} & {_tex(subset)} & " + " & ".join(cells) + r" \\")
                ref = [p for p in out.published if p["benchmark"] == bench and p["measure"] == measure]
                if ref:
                    parts.append(r"\midrule")
                    parts += [rf"\multicolumn{{2}}{{l}}{{\emph{{{_tex(p['system'])} (published, {_tex(p['task'])})}}}}"
                              f" & \\multicolumn{{{len(systems)}}}{{l}}{{{p['value']:.4f}}} \\\\" for p in ref]
                parts += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(parts) + "\n"


def chart(out: Comparison, bench: str, path: Path) -> Path:
    """Grouped bars of the benchmark's first measure (test split first), one bar per system, with 95% intervals."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = [g for g in out.groups if g[0] == bench]
    split = "test" if any(g[3] == "test" for g in groups) else groups[0][3]
    measure = next(g[4] for g in groups if g[3] == split and g[4] != JUDGED_KEY) if any(
        g[4] != JUDGED_KEY for g in groups) else groups[0][4]
    rows = [g for g in groups if g[3] == split and g[4] == measure]
    labels = tick_labels(bench, [(t, s) for _b, t, s, _sp, _m in rows])
    x = np.arange(len(rows))
    width = 0.8 / len(out.systems)
    width_inches = figure_width(len(rows), len(out.systems))
    fig, ax = plt.subplots(figsize=(width_inches, 4.5), dpi=100, layout="constrained")
    try:
        for i, s in enumerate(out.systems):
            cells = [out.cell(s, b, t, sub, sp, m) for b, t, sub, sp, m in rows]
            means = [c["mean"] if c and c["mean"] is not None else 0.0 for c in cells]
            err = np.array([[c["mean"] - c["ci95"][0], c["ci95"][1] - c["mean"]] if c and c["ci95"] else [0, 0]
                            for c in cells]).T
            ax.bar(x + (i - (len(out.systems) - 1) / 2) * width, means, width, yerr=err, capsize=2,
                   label=f"{s.letter}: {s.name}", color=f"C{i}")
        set_ticks(ax, labels, width_inches)
        ax.set_ylim(0, 1.05)
        ax.set_ylabel(metric_label(measure))
        demo = f"{DEMO_TITLE}, not benchmark scores\n" if _demo_in(out, bench) else ""
        ax.set_title(f"{demo}{bench}: {metric_label(measure)} ({split}), 95% intervals")
        fig.legend(fontsize=8, ncols=1 if len(out.systems) > 3 else len(out.systems), loc="outside lower center")
        ax.grid(axis="y", alpha=0.3)
        fig.savefig(path, format="png")
    finally:
        plt.close(fig)
    return path


# ------------------------------------------------------------------------------------------ entry point


def make_compare(results: list[str | Path], out_dir: str | Path, *, baseline: str | None = None,
                 measures: list[str] | None = None, allow_demo: bool = False, progress: bool = False) -> Path:
    """Write compare.json, compare.md, compare.tex and the charts into ``out_dir``; return compare.md's path."""
    from complexir.mteb import hook as mteb_hook

    mteb_hook.register()  # result files name tasks; mteb must know ours to read their metadata
    systems = load_systems(results, allow_demo=allow_demo)
    check_same_data(systems)
    base = find_baseline(systems, baseline) if baseline is not None else None
    for s in systems:
        if not s.run.per_query:
            logger.warning("%s has no per-query scores (a plain `mteb run` folder?): its means are shown, but no "
                           "interval or test can be computed for it", s.folder)
    result = compare(systems, baseline=base, measures=measure_keys(measures), progress=progress)
    out = Path(out_dir)
    charts = {}
    files: dict[Path, FileContent] = {}
    for bench in dict.fromkeys(g[0] for g in result.groups):
        name = "compare-" + re.sub(r"[^A-Za-z0-9_.-]", "_", bench) + ".png"
        files[out / name] = functools.partial(chart, result, bench)
        charts[bench] = name
    files[out / "compare.json"] = json.dumps(json_safe(result.to_json()), indent=1, allow_nan=False)
    files[out / "compare.tex"] = render_latex(result)
    path = out / "compare.md"
    files[path] = render_markdown(result, charts)
    # every file complete before any replaces its previous version: a full disk or Ctrl-C leaves the previous
    # comparison whole
    write_files(files)
    return path


def json_safe(value: Any) -> Any:
    """NaN (no test could be made) as null, numpy numbers as Python's: strict JSON."""
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
