"""The papers' published numbers, shipped as data (``complexir/published/<Benchmark>.yaml``), with their citations.

Each file holds the tables a paper prints (values as printed, with the scale they are printed on), the paper's
citation and notes. Where a paper disagrees with itself (the same system and column in two of its tables with
different values), both values are kept and :func:`inconsistencies` names them. They are reference rows for
``complexir published``, ``report`` and ``compare``: never averaged with, or tested against, a user's results.
"""

from __future__ import annotations

import functools
import importlib.resources
from dataclasses import dataclass, field
from typing import Any

import yaml

AVERAGE = "average"  # the column of a benchmark's average over its tasks


@dataclass(frozen=True)
class PublishedValue:
    system: str
    task: str  # a task name, or AVERAGE
    measure: str  # the MTEB score key, e.g. ndcg_at_10
    printed: float  # as the paper prints it
    scale: float  # printed = value × scale (100 for "nDCG@10 × 100")
    table: str  # which of the paper's tables
    digits: int = 3  # decimals the paper prints

    @property
    def value(self) -> float:
        """On the scale of our scores ([0, 1])."""
        return self.printed / self.scale


@dataclass(frozen=True)
class Published:
    benchmark: str
    citation: str
    url: str
    values: tuple[PublishedValue, ...]
    notes: tuple[str, ...] = field(default=())
    #: system → (first stage, reranker or None): the release's baseline run each published system is
    release_runs: dict[str, tuple[str, str | None]] = field(default_factory=dict)

    def for_task(self, task: str, measure: str) -> list[PublishedValue]:
        return [v for v in self.values if v.task == task and v.measure == measure]

    def inconsistencies(self) -> list[tuple[PublishedValue, ...]]:
        """The (system, task, measure) the paper gives different values for, each with all its values."""
        groups: dict[tuple[str, str, str], list[PublishedValue]] = {}
        for v in self.values:
            groups.setdefault((v.system, v.task, v.measure), []).append(v)
        return [tuple(vs) for vs in groups.values() if len({v.value for v in vs}) > 1]


def _files() -> dict[str, Any]:
    root = importlib.resources.files("complexir") / "published"
    return {f.name.removesuffix(".yaml"): f for f in root.iterdir() if f.name.endswith(".yaml")}


def benchmarks() -> list[str]:
    """The benchmarks with published numbers."""
    return sorted(_files())


@functools.cache  # the packaged files do not change while a process runs
def load(benchmark: str) -> Published:
    """A benchmark's published numbers (the name in any case); ValueError listing the known ones otherwise."""
    files = _files()
    name = next((b for b in files if b.lower() == benchmark.lower()), None)
    if name is None:
        raise ValueError(f"no published numbers for {benchmark!r}; known: {', '.join(sorted(files))}")
    where = f"complexir/published/{name}.yaml"
    data = yaml.safe_load(files[name].read_text(encoding="utf-8"))
    values = []
    for table in data["tables"]:
        columns = [c if isinstance(c, dict) else {"task": c, "measure": table["measure"]} for c in table["columns"]]
        for system, row in table["rows"].items():
            if len(row) != len(columns):
                raise ValueError(f"{where}: table {table['name']!r}, row {system!r}: {len(row)} values for "
                                 f"{len(columns)} columns")
            scale, digits = float(table.get("scale", 1)), int(table.get("digits", 3))
            values += [PublishedValue(system, c["task"], c["measure"], float(v), scale, table["name"], digits)
                       for c, v in zip(columns, row, strict=True) if v is not None]
    return Published(data["benchmark"], " ".join(data["citation"].split()), data["url"], tuple(values),
                     tuple(" ".join(n.split()) for n in data.get("notes", [])),
                     {system: (first, reranker) for system, (first, reranker) in data.get("release_runs", {}).items()})


def _fmt(v: PublishedValue) -> str:
    return f"{v.printed:.{v.digits}f}"


def render(published: Published) -> str:
    """The published numbers as markdown: one table per measure (systems × tasks, as printed), a value the paper
    gives twice shown as both (``70.1 / 70.3``), then the citation and the notes."""
    from complexir.metrics.measures import measure_label

    lines = [f"## {published.benchmark}: published results", "", f"Source: {published.citation} <{published.url}>"]
    for measure in dict.fromkeys(v.measure for v in published.values):
        values = [v for v in published.values if v.measure == measure]
        tasks = list(dict.fromkeys(v.task for v in values if v.task != AVERAGE))
        if any(v.task == AVERAGE for v in values):
            tasks.append(AVERAGE)
        scales = sorted({v.scale for v in values})
        scale = " × " + "/".join(f"{s:g}" for s in scales) if scales != [1.0] else ""
        lines += ["", f"{measure_label(measure)}{scale}, as printed:", "",
                  "| system | " + " | ".join(tasks) + " |", "|---|" + "---:|" * len(tasks)]
        for system in dict.fromkeys(v.system for v in values):
            cells = []
            for task in tasks:
                given = [v for v in values if v.system == system and v.task == task]
                cells.append(" / ".join(dict.fromkeys(_fmt(v) for v in given)) or "-")
            lines.append(f"| {system} | " + " | ".join(cells) + " |")
    inconsistent = published.inconsistencies()
    if inconsistent:
        lines += ["", "Values the paper gives twice, differently (both shown, `a / b`):"]
        for group in inconsistent:
            lines.append(f"- {group[0].system}, {group[0].task}: "
                         + "; ".join(f"{_fmt(v)} ({v.table})" for v in group))
    if published.notes:
        lines += ["", "Notes:", *(f"- {n}" for n in published.notes)]
    return "\n".join(lines)


def published_table(ref: list[dict[str, Any]], measure: str) -> list[str]:
    """Markdown lines: published systems × tasks (the paper's average over all its tasks last), a value given twice
    as ``a / b``; ``ref`` holds dicts with ``system``, ``task`` and ``value`` (on our [0, 1] scale)."""
    from complexir.metrics.measures import measure_label

    tasks = list(dict.fromkeys(p["task"] for p in ref if p["task"] != AVERAGE))
    if any(p["task"] == AVERAGE for p in ref):
        tasks.append(AVERAGE)
    head = [t if t != AVERAGE else "paper's average (all its tasks)" for t in tasks]
    lines = [f"| Published system ({measure_label(measure)}) | " + " | ".join(head) + " |",
             "|---|" + "---:|" * len(tasks)]
    for system in dict.fromkeys(p["system"] for p in ref):
        cells = [" / ".join(dict.fromkeys(f"{p['value']:.3f}" for p in ref
                                          if p["system"] == system and p["task"] == t)) or "-" for t in tasks]
        lines.append(f"| {system} *(published)* | " + " | ".join(cells) + " |")
    return lines
