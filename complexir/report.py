"""Model-card reporting from MTEB result folders: Hub metadata, tables, charts, significance.

Input: the folder ``complexir run`` (or plain ``mteb run``) wrote — MTEB's result cache layout
``<output>/results/<model__name>/<revision>/<Task>.json`` — and, beside it, the per-query scores
``<output>/per_query/<model__name>/<revision>/<Task>.json`` that ``complexir run`` keeps. An experiment
(e.g. ``complexir run --long-docs chunk``) sits one level down in both, in mteb's
``<revision>/experiments/<experiment>/`` folder.

Output folder, ready to upload to a model repo:
* ``README.md`` — the model card: ``model-index`` metadata merged into the existing card's YAML (built with
  ``huggingface_hub``'s ``EvalResult``/``ModelCardData``; other metadata and text kept) and a body section,
  between ``<!-- complexir-report:start/end -->`` markers, with one table and one chart per benchmark;
* ``.eval_results/<Task>.yaml`` — the per-task files mteb 2 uploads to a model repo (written by mteb's own
  ``TaskResult._to_hf_benchmark_result``, so the format is mteb's exactly);
* ``complexir_report/<Benchmark>.png`` and ``complexir_report/significance.json``.

With a baseline, each headline metric gets a paired two-sided randomisation (permutation) test on the
per-query scores (``scipy.stats.permutation_test``, exact when there are few queries) and a paired t-test
(``scipy.stats.ttest_rel``).
"""

from __future__ import annotations

import json
import logging
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

DEFAULT_METRICS = ["ndcg_at_10", "recall_at_100"]
METRIC_LABELS = {
    "ndcg_at_10": "nDCG@10", "ndcg_at_20": "nDCG@20", "recall_at_10": "R@10", "recall_at_100": "R@100",
    "map_at_10": "MAP@10", "mrr_at_10": "MRR@10", "alpha_ndcg_at_20": "α-nDCG@20",
    "strecall_at_20": "StRecall@20", "doc_token_share_seen": "tokens seen",
}
OTHER_BENCHMARK = "Other"
SECTION_START = "<!-- complexir-report:start -->"
SECTION_END = "<!-- complexir-report:end -->"
REPORT_DIR = "complexir_report"
N_RESAMPLES = 10_000
SEED = 0


@dataclass
class ModelRun:
    """One model's results: MTEB ``TaskResult`` objects and the per-query scores next to them."""

    model: str
    revision: str
    folder: Path
    task_results: dict[str, Any] = field(default_factory=dict)
    per_query: dict[str, dict[str, dict[str, dict[str, dict[str, float]]]]] = field(default_factory=dict)
    experiment: str | None = None  # mteb's experiment folder name (e.g. ``--long-docs chunk``), None for a plain run
    label: str = ""  # the model as tables name it: mteb's ``model_name_with_experiment``

    def __post_init__(self) -> None:
        self.label = self.label or self.model


@dataclass
class Row:
    """One table row: a task subset and split, its scores, and with a baseline the comparison."""

    benchmark: str
    task: str
    subset: str
    split: str
    scores: dict[str, float]
    baseline: dict[str, float] = field(default_factory=dict)
    tests: dict[str, dict[str, float]] = field(default_factory=dict)  # metric → {n, p_randomisation, p_ttest}


# ------------------------------------------------------------------------------------------- reading


#: mteb files a model's experiments (``ModelMeta.experiment_kwargs``) in ``<model>/<revision>/experiments/<name>/``
#: (``ResultCache.get_task_result_path``); ``complexir run`` mirrors that layout under ``per_query/``.
EXPERIMENTS_FOLDER = "experiments"


@dataclass(frozen=True)
class _ResultFolder:
    """A folder of result JSON in mteb's layout: ``<root>/<model>/<revision>[/experiments/<experiment>]``."""

    path: Path
    model_dir: str  # the model name as a path (``/`` → ``__``)
    revision: str
    experiment: str | None

    @classmethod
    def of(cls, path: Path) -> _ResultFolder:
        if path.parent.name == EXPERIMENTS_FOLDER and len(path.parents) >= 3:
            revision_dir = path.parent.parent
            return cls(path, revision_dir.parent.name, revision_dir.name, path.name)
        return cls(path, path.parent.name, path.name, None)

    @property
    def results_root(self) -> Path:
        """The folder holding one folder per model (``<output>/results``)."""
        return self.path.parents[3 if self.experiment else 1]

    def describe(self) -> str:
        tail = f"/{EXPERIMENTS_FOLDER}/{self.experiment}" if self.experiment else ""
        return f"{self.model_dir}/{self.revision}{tail}"


def _model_folders(path: Path) -> list[Path]:
    """Result folders (``<model>/<revision>`` or its ``experiments/<name>``) under or at ``path``."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"results folder {path} does not exist")
    if (path / "results").is_dir():
        path = path / "results"
    folders = sorted({p.parent for p in path.rglob("*.json") if p.name != "model_meta.json"
                      and "per_query" not in p.relative_to(path).parts})
    if not folders:
        raise FileNotFoundError(f"no MTEB result JSON under {path}")
    return folders


def _meta_of(folder: Path) -> Any | None:
    """The ``ModelMeta`` mteb saved beside the results (``model_meta.json``), if any."""
    from mteb.models.model_meta import ModelMeta

    meta_file = folder / "model_meta.json"
    if not meta_file.is_file():
        return None
    return ModelMeta.model_construct(**json.loads(meta_file.read_text(encoding="utf-8")))


def _select(folders: list[_ResultFolder], model: str) -> list[_ResultFolder]:
    """The folders ``--model`` names: exactly one run by its label (``NAME`` for the plain run,
    ``NAME (k=v, ...)`` or ``NAME/experiments/EXPERIMENT`` for an experiment), else every run of model ``NAME``."""
    def key(text: str) -> str:
        return text.replace("/", "__").replace(" ", "_")

    wanted = key(model)
    exact = []
    for f in folders:
        meta = _meta_of(f.path)
        labels = {f.model_dir if f.experiment is None else f"{f.model_dir}__{EXPERIMENTS_FOLDER}__{f.experiment}"}
        if meta is not None and meta.name:
            labels.add(key(meta.model_name_with_experiment or meta.name))
        if wanted in labels:
            exact.append(f)
    if exact:
        return exact
    return [f for f in folders if f.model_dir == wanted]


def load_run(path: str | Path, model: str | None = None) -> ModelRun:
    """The results of one model under ``path`` (an output folder, its ``results/`` or a model folder).

    ``model`` chooses among several: a model name picks its plain run (or, when it has none, its only
    experiment); ``NAME (k=v, ...)`` (mteb's ``model_name_with_experiment``) or ``NAME/experiments/EXPERIMENT``
    picks an experiment such as ``complexir run --long-docs chunk``.
    """
    from mteb.results import TaskResult

    folders = [_ResultFolder.of(f) for f in _model_folders(Path(path))]
    if model is not None:
        folders = _select(folders, model)
        if not folders:
            raise FileNotFoundError(f"no results of model {model!r} under {path}")
    if len(folders) > 1:
        raise ValueError(
            f"{path} holds results of several models/revisions/experiments "
            f"({', '.join(f.describe() for f in folders)}); "
            "choose one with --model (NAME, or NAME/experiments/EXPERIMENT) or point at its folder"
        )
    found = folders[0]
    folder = found.path
    run = ModelRun(model=found.model_dir.replace("__", "/"), revision=found.revision, folder=folder,
                   experiment=found.experiment)
    meta = _meta_of(folder)
    if meta is not None:
        run.model = meta.name or run.model
        run.label = meta.model_name_with_experiment or run.model
    elif found.experiment:
        run.label = f"{run.model} ({found.experiment})"
    else:
        run.label = run.model
    for file in sorted(folder.glob("*.json")):
        if file.name == "model_meta.json":
            continue
        result = TaskResult.from_disk(file)
        run.task_results[result.task_name] = result
    # complexir run's per_query/ mirrors results/ (experiments included); a folder may also hold its own.
    candidates = []
    if len(folder.parents) > (3 if found.experiment else 1) + 1:
        root = found.results_root
        candidates.append(root.parent / "per_query" / folder.relative_to(root))
    candidates.append(folder / "per_query")
    for per_query_dir in candidates:
        for file in sorted(per_query_dir.glob("*.json")) if per_query_dir.is_dir() else []:
            payload = json.loads(file.read_text(encoding="utf-8"))
            try:
                run.per_query[payload["task"]] = payload["scores"]
            except (KeyError, TypeError) as error:
                raise ValueError(f"{file}: not a per-query score file (expected keys 'task' and 'scores')") from error
    logger.info("%s (%s): %d task result(s), per-query scores for %d", run.label, run.revision,
                len(run.task_results), len(run.per_query))
    return run


def benchmark_of(task_name: str) -> str:
    """The complexir benchmark a task belongs to (also those registered through the mteb hook)."""
    from complexir import mteb_hook
    from complexir.tasks import benchmark_of as registered

    known = registered()  # the registry as it is now, later registrations included
    if task_name in known:  # variants outside the mteb.Benchmark (full-document, rerank) included
        return known[task_name]
    for bench in mteb_hook.registered_benchmarks():
        if any(t.metadata.name == task_name for t in bench.tasks):
            return bench.name
    return OTHER_BENCHMARK


def headline_metrics(benchmark: str, main_score: str | None = None) -> list[str]:
    """The benchmark's headline measures (MTEB score keys, from its spec), its main score first if not among them."""
    from complexir.benchmarks import all_specs

    metrics = next((list(s.headline_measures) for s in all_specs() if s.name == benchmark), list(DEFAULT_METRICS))
    if main_score and main_score not in metrics:
        metrics.insert(0, main_score)
    return metrics


# ------------------------------------------------------------------------------------- significance


def paired_tests(scores: dict[str, float], baseline: dict[str, float]) -> dict[str, float] | None:
    """Two-sided paired randomisation test and paired t-test over the queries both runs scored."""
    from scipy import stats

    queries = sorted(set(scores) & set(baseline))
    if len(queries) < 2:
        return None
    if len(queries) != len(scores) or len(queries) != len(baseline):
        logger.warning("paired test on the %d queries both runs scored (%d vs %d)",
                       len(queries), len(scores), len(baseline))
    a = [float(scores[q]) for q in queries]
    b = [float(baseline[q]) for q in queries]
    if a == b:  # identical runs: no difference to test (scipy would warn about a degenerate t)
        return {"n": len(queries), "p_randomisation": 1.0, "p_ttest": 1.0}
    perm = stats.permutation_test(
        (a, b), lambda x, y, axis: (x - y).mean(axis=axis), permutation_type="samples",
        vectorized=True, n_resamples=N_RESAMPLES, alternative="two-sided", random_state=SEED,
    )
    ttest = stats.ttest_rel(a, b)
    p_t = float(ttest.pvalue)
    return {"n": len(queries), "p_randomisation": float(perm.pvalue), "p_ttest": p_t if math.isfinite(p_t) else 1.0}


# ------------------------------------------------------------------------------------------ rows


def build_rows(run: ModelRun, baseline: ModelRun | None = None) -> list[Row]:
    """One row per task, subset and split, in benchmark order."""
    rows = []
    for task_name, result in sorted(run.task_results.items()):
        bench = benchmark_of(task_name)
        main_score = _main_score(task_name)
        metrics = headline_metrics(bench, main_score)
        base_result = baseline.task_results.get(task_name) if baseline else None
        for split, entries in sorted(result.scores.items()):
            for entry in entries:
                subset = entry.get("hf_subset", "default")
                row = Row(bench, task_name, subset, split, {m: entry[m] for m in metrics if m in entry})
                if base_result is not None:
                    base_entry = next((e for e in base_result.scores.get(split, [])
                                       if e.get("hf_subset", "default") == subset), None)
                    if base_entry is not None:
                        row.baseline = {m: base_entry[m] for m in metrics if m in base_entry}
                    ours = run.per_query.get(task_name, {}).get(subset, {}).get(split, {})
                    theirs = baseline.per_query.get(task_name, {}).get(subset, {}).get(split, {})
                    for metric in metrics:
                        if metric in ours and metric in theirs:
                            tested = paired_tests(ours[metric], theirs[metric])
                            if tested:
                                row.tests[metric] = tested
                rows.append(row)
    from complexir.benchmarks import all_specs

    order = [*(s.name for s in all_specs()), OTHER_BENCHMARK]
    rows.sort(key=lambda r: (order.index(r.benchmark) if r.benchmark in order else len(order), r.benchmark))
    return rows


def _main_score(task_name: str) -> str | None:
    import mteb

    try:
        return mteb.get_task(task_name).metadata.main_score
    except KeyError:
        return None


# ------------------------------------------------------------------------------------------ rendering


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
    """A markdown table of one benchmark's rows; with a baseline: Δ and randomisation-test p per metric."""
    metrics = [m for m in dict.fromkeys(k for r in rows for k in r.scores)]
    header = ["Task", "Subset", "Split"]
    for m in metrics:
        label = METRIC_LABELS.get(m, m)
        header.append(label)
        if baseline_name:
            header += [f"{label} Δ", f"{label} p"]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] * 3 + ["---:"] * (len(header) - 3)) + "|"]
    for r in rows:
        cells = [r.task, r.subset, r.split]
        for m in metrics:
            cells.append(fmt_score(r.scores.get(m)))
            if baseline_name:
                base = r.baseline.get(m)
                delta = None if base is None or m not in r.scores else r.scores[m] - base
                cells += [("+" if delta and delta > 0 else "") + fmt_score(delta) if delta is not None else "-",
                          _fmt_p(r.tests.get(m, {}).get("p_randomisation"))]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def render_section(run: ModelRun, rows: list[Row], charts: dict[str, str], baseline: ModelRun | None) -> str:
    parts = [SECTION_START, "## Evaluation results (complexir)", "",
             f"Model `{run.label}` (revision `{run.revision}`); scores from MTEB {_mteb_versions(run)}."]
    if baseline:
        parts += ["", f"Baseline: `{baseline.label}` (revision `{baseline.revision}`). Δ = model − baseline; "
                  "p = two-sided paired randomisation test on per-query scores "
                  f"({N_RESAMPLES:,} resamples, exact for small query sets); "
                  "paired t-test p-values are in `complexir_report/significance.json`."]
    for bench in dict.fromkeys(r.benchmark for r in rows):
        parts += ["", f"### {bench}", "", render_table([r for r in rows if r.benchmark == bench],
                                                        baseline.label if baseline else None)]
        if bench in charts:
            parts += ["", f"![{bench} results]({charts[bench]})"]
    parts += ["", SECTION_END]
    return "\n".join(parts)


def _mteb_versions(run: ModelRun) -> str:
    return ", ".join(sorted({str(r.mteb_version) for r in run.task_results.values()})) or "?"


# ------------------------------------------------------------------------------------------ card


def eval_results(run: ModelRun, rows: list[Row]) -> list[Any]:
    """``huggingface_hub`` ``EvalResult`` objects (the card's ``model-index``), one per row and metric.

    Fields follow mteb's own card convention (``TaskResult.get_hf_eval_results``): task type from the
    task's Hub task category, dataset = the task's Hub repo, name ``"<Task> (<subset>)"``, values in [0, 1].
    One departure: the dataset config is the layout subset the task reads (``clinical_trial``, ``query-en``),
    not the MTEB subset. Our tasks share one Hub repo per benchmark and most have the MTEB subset
    ``default``, and the Hub groups model-index results by (task type, dataset, config, split, revision):
    with ``default`` every CRUMB task would be filed under the first one's name.
    """
    import mteb
    from huggingface_hub import EvalResult

    out = []
    for row in rows:
        task = mteb.get_task(row.task)
        meta = task.metadata
        config = getattr(task, "layout_subsets", {}).get(row.subset) or row.subset
        for metric, value in row.scores.items():
            if value is None or (isinstance(value, float) and math.isnan(value)):
                continue
            out.append(EvalResult(
                task_type=meta._hf_task_type()[0], task_name=meta.type,
                dataset_type=meta.dataset["path"], dataset_name=f"{meta.name} ({row.subset})",
                dataset_config=config, dataset_split=row.split, dataset_revision=meta.dataset["revision"],
                metric_type=metric, metric_name=METRIC_LABELS.get(metric, metric), metric_value=float(value),
                source_name="complexir (MTEB)", source_url="https://github.com/embeddings-benchmark/mteb/",
            ))
    return out


def _result_key(r: Any) -> tuple:
    return (r.task_type, r.dataset_type, r.dataset_config, r.dataset_split, r.metric_type)


def merge_card(card_path: Path | None, run: ModelRun, results: list[Any], section: str) -> Any:
    """The card with our model-index entries merged in (same task/dataset/config/split/metric replaced)."""
    from huggingface_hub import ModelCard, ModelCardData

    if card_path is not None:
        card = ModelCard.load(card_path)  # a local path: no network
    else:
        card = ModelCard(f"---\n{ModelCardData().to_yaml()}\n---\n\n# {run.model}\n")
    existing = list(card.data.eval_results or [])
    ours = {_result_key(r) for r in results}
    card.data.eval_results = [r for r in existing if _result_key(r) not in ours] + results
    if not card.data.model_name:
        card.data.model_name = run.model.split("/")[-1]
    body = card.text
    pattern = re.compile(re.escape(SECTION_START) + r".*?" + re.escape(SECTION_END), re.S)
    if pattern.search(body):
        body = pattern.sub(lambda _: section, body)
    else:
        body = body.rstrip("\n") + "\n\n" + section + "\n"
    card.text = body if body.startswith("\n") else "\n" + body
    return card


def write_eval_results_folder(run: ModelRun, out: Path, user: str | None = None) -> list[Path]:
    """``.eval_results/<Task>.yaml`` exactly as mteb 2 uploads them (mteb's own serialiser)."""
    folder = out / ".eval_results"
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for task_name, result in sorted(run.task_results.items()):
        path = folder / f"{task_name}.yaml"
        path.write_text(result._to_hf_benchmark_result(user).to_yaml(), encoding="utf-8")
        written.append(path)
    return written


# ------------------------------------------------------------------------------------------ entry point


def make_report(results: str | Path, out: str | Path, *, model: str | None = None, card: str | Path | None = None,
                baseline: str | Path | None = None, baseline_model: str | None = None) -> Path:
    """Write the report folder (card, ``.eval_results``, charts, significance) and return its card path."""
    from complexir import charts, mteb_hook

    mteb_hook.register()  # result files name tasks; mteb must know ours to read their metadata
    out = Path(out)
    run = load_run(results, model)
    base = load_run(baseline, baseline_model) if baseline is not None else None
    if base is not None and not base.per_query:
        logger.warning("baseline %s has no per-query scores: no significance tests", base.model)
    if base is not None and not run.per_query:
        logger.warning("%s has no per-query scores: no significance tests", run.model)
    rows = build_rows(run, base)
    (out / REPORT_DIR).mkdir(parents=True, exist_ok=True)
    chart_files = {}
    for bench in dict.fromkeys(r.benchmark for r in rows):
        name = re.sub(r"[^A-Za-z0-9_.-]", "_", bench) + ".png"
        charts.benchmark_chart([r for r in rows if r.benchmark == bench], out / REPORT_DIR / name,
                               title=f"{bench}: {run.label}", baseline_name=base.label if base else None)
        chart_files[bench] = f"{REPORT_DIR}/{name}"
    section = render_section(run, rows, chart_files, base)
    merged = merge_card(Path(card) if card else None, run, eval_results(run, rows), section)
    card_path = out / "README.md"
    merged.save(card_path)
    write_eval_results_folder(run, out)
    significance = [
        {"benchmark": r.benchmark, "task": r.task, "subset": r.subset, "split": r.split, "metric": m,
         "model": r.scores.get(m), "baseline": r.baseline.get(m), **t}
        for r in rows for m, t in r.tests.items()
    ]
    (out / REPORT_DIR / "significance.json").write_text(json.dumps(
        {"model": run.model, "revision": run.revision, "experiment": run.experiment,
         "baseline": base.model if base else None, "baseline_experiment": base.experiment if base else None,
         "baseline_revision": base.revision if base else None, "tests": significance}, indent=1), encoding="utf-8")
    (out / REPORT_DIR / "report.md").write_text(section + "\n", encoding="utf-8")
    logger.info("report for %s written to %s", run.label, out)
    return card_path
