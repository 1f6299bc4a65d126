"""``complexir report``: a model card (Hub metadata, tables, charts, significance) from MTEB result folders.

This module assembles; the rooms it draws on each do one thing:
* ``results`` reads the folders ``complexir run`` (or plain ``mteb run``) wrote, per-query scores included;
* ``statistics`` runs the paired tests (with a baseline, on each headline metric) and Holm's adjustment over them;
* ``tables`` and ``charts`` render rows as markdown and PNG.

Output folder, ready to upload to a model repo:
* ``README.md`` — the model card: ``model-index`` metadata merged into the existing card's YAML (built with
  ``huggingface_hub``'s ``EvalResult``/``ModelCardData``; other metadata and text kept) and a body section,
  between ``<!-- complexir-report:start/end -->`` markers, with one table and one chart per benchmark;
* ``.eval_results/<Task>.yaml`` — the per-task files mteb 2 uploads to a model repo (written by mteb's own
  serialiser, reached through ``complexir.mteb.internals``, so the format is mteb's exactly);
* ``complexir_report/<Benchmark>.png`` and ``complexir_report/significance.json``.
"""

from __future__ import annotations

import json
import logging
import math
import re
from pathlib import Path
from typing import Any

from complexir.analysis import statistics
from complexir.analysis.tables import (
    DEMO_MARK,
    JUDGED_CEILING_KEY,
    JUDGED_KEY,
    SECTION_END,
    SECTION_START,
    Row,
    metric_label,
    render_section,
)
from complexir.mteb import internals as mteb_internals
from complexir.runs.results import ModelRun, load_run

logger = logging.getLogger(__name__)

DEFAULT_METRICS = ["ndcg_at_10", "recall_at_100"]
OTHER_BENCHMARK = "Other"
REPORT_DIR = "complexir_report"


def benchmark_of(task_name: str) -> str:
    """The complexir benchmark a task belongs to (also those registered through the mteb hook)."""
    from complexir.mteb import hook as mteb_hook
    from complexir.tasks import benchmark_of as registered

    known = registered()  # the registry as it is now, later registrations included
    if task_name in known:  # variants outside the mteb.Benchmark (full-document, rerank) included
        return known[task_name]
    for bench in mteb_hook.registered_benchmarks():
        if any(t.metadata.name == task_name for t in bench.tasks):
            return bench.name
    return OTHER_BENCHMARK


def headline_metrics(benchmark: str, main_score: str | None = None) -> list[str]:
    """The benchmark's headline measures (MTEB score keys, from its spec), then the measures its official evaluator
    reports (keyed by the measure registry), its main score first if not among them."""
    from complexir.metrics import parse_measure
    from complexir.registry.benchmarks import all_specs

    spec = next((s for s in all_specs() if s.name == benchmark), None)
    if spec is None:
        metrics = list(DEFAULT_METRICS)
    else:
        official = (parse_measure(m).mteb_key for m in spec.official_measures)
        metrics = list(dict.fromkeys([*spec.headline_measures, *official]))
    if main_score and main_score not in metrics:
        metrics.insert(0, main_score)
    return metrics


# ------------------------------------------------------------------------------------------ rows


def build_rows(run: ModelRun, baseline: ModelRun | None = None) -> list[Row]:
    """One row per task, subset and split, in benchmark order."""
    rows = []
    for task_name, result in sorted(run.task_results.items()):
        bench = benchmark_of(task_name)
        main_score = task_main_score(task_name)
        metrics = headline_metrics(bench, main_score)
        base_result = baseline.task_results.get(task_name) if baseline else None
        for split, entries in sorted(result.scores.items()):
            for entry in entries:
                subset = entry.get("hf_subset", "default")
                row = Row(bench, task_name, subset, split, {m: entry[m] for m in metrics if m in entry},
                          judged=entry.get(JUDGED_KEY), judged_max=entry.get(JUDGED_CEILING_KEY))
                if baseline is not None and base_result is not None:
                    base_entry = next((e for e in base_result.scores.get(split, [])
                                       if e.get("hf_subset", "default") == subset), None)
                    if base_entry is not None:
                        row.baseline = {m: base_entry[m] for m in metrics if m in base_entry}
                    ours = run.per_query.get(task_name, {}).get(subset, {}).get(split, {})
                    theirs = baseline.per_query.get(task_name, {}).get(subset, {}).get(split, {})
                    for metric in metrics:
                        if metric in ours and metric in theirs:
                            queries = statistics.common_queries(ours[metric], theirs[metric])
                            if len(queries) >= 2:
                                row.tests[metric] = statistics.paired_tests(
                                    [ours[metric][q] for q in queries], [theirs[metric][q] for q in queries])
                rows.append(row)
    adjust_family(rows)
    from complexir.registry.benchmarks import all_specs

    order = [*(s.name for s in all_specs()), OTHER_BENCHMARK]
    rows.sort(key=lambda r: (order.index(r.benchmark) if r.benchmark in order else len(order), r.benchmark))
    return rows


def adjust_family(rows: list[Row]) -> None:
    """Holm's adjustment over every test of the report (each test type its own family), into each test's
    ``p_ttest_holm`` and ``p_randomisation_holm``."""
    statistics.adjust_family([t for r in rows for t in r.tests.values()])


def published_rows(rows: list[Row]) -> dict[str, list[str]]:
    """Per benchmark, markdown tables of the papers' published numbers for the tasks and measures of ``rows``:
    reference rows, clearly marked, never mixed into the scores or the tests."""
    from complexir.analysis import published

    out: dict[str, list[str]] = {}
    for bench in dict.fromkeys(r.benchmark for r in rows):
        if bench not in published.benchmarks():
            continue
        paper = published.load(bench)
        tasks = {r.task for r in rows if r.benchmark == bench} | {published.AVERAGE}
        lines: list[str] = []
        for measure in dict.fromkeys(m for r in rows if r.benchmark == bench for m in r.scores):
            ref = [{"system": v.system, "task": v.task, "value": v.value} for v in paper.values
                   if v.measure == measure and v.task in tasks]
            if ref:
                lines += ["", *published.published_table(ref, measure)]
        if lines:
            out[bench] = [f"Published (reference only: from the paper, on its full data; not scores of this model; "
                          f"{paper.citation}):", *lines]
    return out


def find_task(task_name: str) -> Any:
    """A task instance by name: a registered benchmark's (also one registered after mteb was imported), else
    any task mteb knows. KeyError when neither does."""
    import mteb

    from complexir.tasks import tasks_by_name

    cls = tasks_by_name().get(task_name)
    return cls() if cls is not None else mteb.get_task(task_name)


def task_main_score(task_name: str) -> str | None:
    """The main score of a registered task (None for a task complexir does not know)."""
    try:
        return find_task(task_name).metadata.main_score
    except KeyError:
        return None


# ------------------------------------------------------------------------------------------ card


def check_provenance(run: ModelRun, *, allow_demo: bool,
                     use: str = "go into model-index or .eval_results as benchmark results") -> list[str]:
    """The tasks whose results scored demo data or data no result names (``dataset_revision`` missing or
    ``"main"``, as every result before provenance was recorded). Hub metadata must not present them as benchmark
    results: refused unless ``allow_demo``, and then returned so they are labelled as demo."""
    from complexir.hub import provenance

    doubtful = {name: result.dataset_revision for name, result in sorted(run.task_results.items())
                if provenance.kind_of_revision(result.dataset_revision) in (None, provenance.DEMO)}
    if doubtful and not allow_demo:
        listed = ", ".join(f"{name} ({revision!r})" for name, revision in doubtful.items())
        raise ValueError(f"{run.folder}: results of demo or unnamed data cannot {use}: {listed}. Score a real "
                         "build (complexir build, then complexir run --data-dir), or pass --allow-demo to write them "
                         "labelled as demo")
    return list(doubtful)


DEMO_LABEL = f" {DEMO_MARK}"
UPSTREAM_LABEL = " [built locally from the upstream release, not the published dataset repo]"


def tasks_built_from_upstream(run: ModelRun) -> list[str]:
    """The tasks whose results scored a benchmark built locally from its upstream release (the task's Hub repo
    was missing, ``complexir.hub.build_cache``): real data, labelled as built locally, not as the published repo."""
    from complexir.hub import provenance

    return [name for name, result in sorted(run.task_results.items())
            if provenance.kind_of_revision(result.dataset_revision) == provenance.UPSTREAM]


def _label(task: str, demo: frozenset[str] | set[str], upstream: frozenset[str] | set[str]) -> str:
    return DEMO_LABEL if task in demo else UPSTREAM_LABEL if task in upstream else ""


def eval_results(run: ModelRun, rows: list[Row], demo: frozenset[str] | set[str] = frozenset(),
                 upstream: frozenset[str] | set[str] = frozenset()) -> list[Any]:
    """``huggingface_hub`` ``EvalResult`` objects (the card's ``model-index``), one per row and metric.

    Fields follow mteb's own card convention (``TaskResult.get_hf_eval_results``): task type from the
    task's Hub task category, dataset = the task's Hub repo, name ``"<Task> (<subset>)"``, values in [0, 1].
    One departure: the dataset config is the layout subset the task reads (``clinical_trial``, ``query-en``),
    not the MTEB subset. Our tasks share one Hub repo per benchmark and most have the MTEB subset
    ``default``, and the Hub groups model-index results by (task type, dataset, config, split, revision):
    with ``default`` every CRUMB task would be filed under the first one's name. The dataset revision is the one
    the result records (the data actually scored); tasks in ``demo`` are labelled as demo in name and source, those
    in ``upstream`` as built locally from the upstream release.
    """
    from huggingface_hub import EvalResult

    out = []
    for row in rows:
        task = find_task(row.task)
        meta = task.metadata
        config = getattr(task, "layout_subsets", {}).get(row.subset) or row.subset
        label = _label(row.task, demo, upstream)
        result = run.task_results.get(row.task)
        revision = result.dataset_revision if result is not None else meta.dataset["revision"]
        for metric, value in row.scores.items():
            if value is None or (isinstance(value, float) and math.isnan(value)):
                continue
            out.append(EvalResult(
                task_type=mteb_internals.hf_task_type(meta), task_name=meta.type,
                dataset_type=meta.dataset["path"], dataset_name=f"{meta.name} ({row.subset}){label}",
                dataset_config=config, dataset_split=row.split, dataset_revision=revision,
                metric_type=metric, metric_name=metric_label(metric), metric_value=float(value),
                source_name=f"complexir (MTEB){label}", source_url="https://github.com/embeddings-benchmark/mteb/",
            ))
    return out


def _result_key(r: Any) -> tuple:
    return (r.task_type, r.dataset_type, r.dataset_config, r.dataset_split, r.metric_type)


def merge_card(card_path: Path | None, run: ModelRun, results: list[Any], section: str) -> Any:
    """The card with our model-index entries merged in (same task/dataset/config/split/metric replaced)."""
    from huggingface_hub import ModelCard, ModelCardData

    if card_path is not None and card_path.is_dir():
        raise IsADirectoryError(f"--card {card_path}: a folder; expected a model card file (README.md)")
    if card_path is not None and card_path.exists():
        card = ModelCard.load(card_path)  # a local path: no network
    else:  # no card yet (or --card names one that does not exist yet): a new one
        if card_path is not None:
            logger.info("%s does not exist yet: starting a new model card", card_path)
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


#: every value in ``.eval_results`` is on this one scale (mteb's own per-task values are; its benchmark-level value
#: is not, so ours is computed here on the same scale), and every entry's notes say so
EVAL_RESULTS_SCALE = "values are main scores x 100 (percent)"
EVAL_RESULTS_FOLDER = ".eval_results"


def hub_revision(revision: str | None) -> str | None:
    """The ``dataset.revision`` of an ``.eval_results`` entry: the commit of the Hub repo the data was read from;
    None (left out) for any other data (a local build, the demo, a build from the upstream release), never faked."""
    from complexir.hub import provenance

    return revision if provenance.kind_of_revision(revision) == provenance.HUB else None


def _labelled(entry: Any, label: str, revision: str | None) -> Any:
    """An mteb ``HFEvalResult`` with our revision, the scale and ``label`` (demo, built locally) in its notes."""
    update: dict[str, Any] = {"dataset": entry.dataset.model_copy(update={"revision": revision}),
                              "notes": f"{entry.notes or ''}; {EVAL_RESULTS_SCALE}{label}".lstrip("; ")}
    if label and entry.source is not None:
        update["source"] = entry.source.model_copy(update={"name": (entry.source.name or "") + label})
    return entry.model_copy(update=update)


def write_eval_results_folder(run: ModelRun, out: Path, user: str | None = None,
                              demo: frozenset[str] | set[str] = frozenset(),
                              upstream: frozenset[str] | set[str] = frozenset()) -> list[Path]:
    """``.eval_results/<Task>.yaml`` as mteb 2 uploads them (mteb's own serialiser), then
    ``.eval_results/<Benchmark>.yaml`` for each benchmark every task of which was scored (:func:`benchmark_entry`).

    ``dataset.revision`` is :func:`hub_revision` of the revision the result records (mteb writes the task's
    declared one); tasks in ``demo`` say so in their notes and source name, those in ``upstream`` that their data
    was built locally from the upstream release; every entry's notes state the scale (``EVAL_RESULTS_SCALE``)."""
    folder = out / EVAL_RESULTS_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    scored: dict[str, float] = {}  # task → its main score over every subset and split (mteb's task-level entry)
    for task_name, result in sorted(run.task_results.items()):
        benchmark_result = mteb_internals.hf_benchmark_result(result, user)
        label = _label(task_name, demo, upstream)
        revision = hub_revision(result.dataset_revision)
        entries = [_labelled(entry, label, revision) for entry in benchmark_result.root]
        if set(result.scores) != set(find_task(task_name).metadata.eval_splits):
            # mteb writes the task-level entry when as many splits were scored as the task evaluates, whichever they
            # are: a validation-only run would stand as the task's score. Only the evaluation splits make it.
            entries = [entry for entry in entries if entry.dataset.task_id != task_name]
        benchmark_result.root[:] = entries
        if any(entry.dataset.task_id == task_name for entry in benchmark_result.root):
            scored[task_name] = result.get_score()
        path = folder / f"{task_name}.yaml"
        path.write_text(benchmark_result.to_yaml(), encoding="utf-8")
        written.append(path)
    for bench in _benchmarks_of(run):
        missing = [task.metadata.name for task in bench.tasks if task.metadata.name not in scored]
        if missing:
            logger.warning("%s: no benchmark-level result in %s: %d of its %d tasks not scored on every subset and "
                           "split: %s", bench.name, EVAL_RESULTS_FOLDER, len(missing), len(bench.tasks),
                           ", ".join(missing))
            continue
        if not bench.benchmark_hf_repo:
            logger.warning("%s: no benchmark-level result in %s: the benchmark names no benchmark_hf_repo (the Hub "
                           "repo whose eval.yaml lists it)", bench.name, EVAL_RESULTS_FOLDER)
            continue
        entries = benchmark_entry(run, bench, scored, user, demo, upstream)
        path = folder / f"{bench.name}.yaml"
        path.write_text(entries.to_yaml(), encoding="utf-8")
        written.append(path)
    return written


def _benchmarks_of(run: ModelRun) -> list[Any]:
    """The registered ``mteb.Benchmark`` objects at least one task of which ``run`` scored."""
    from complexir.mteb import hook as mteb_hook
    from complexir.tasks import all_benchmarks

    benchmarks = {b.name: b for b in [*all_benchmarks(), *mteb_hook.registered_benchmarks()]}
    return [b for b in benchmarks.values() if any(t.metadata.name in run.task_results for t in b.tasks)]


def benchmark_entry(run: ModelRun, bench: Any, scored: dict[str, float], user: str | None = None,
                    demo: frozenset[str] | set[str] = frozenset(),
                    upstream: frozenset[str] | set[str] = frozenset()) -> Any:
    """The benchmark's headline score as one ``.eval_results`` entry (mteb's ``HFEvalResults``): ``dataset.id`` its
    ``benchmark_hf_repo``, ``task_id`` its name (the first id of its ``eval.yaml``), ``value`` the mean of its tasks'
    main scores (``scored``: task → mteb's ``TaskResult.get_score()``) x 100, unrounded, on the scale of the
    per-task files; the revision only when every task read the same Hub commit."""
    if not bench.benchmark_hf_repo:
        raise ValueError(f"benchmark {bench.name} has no benchmark_hf_repo: no Hub repo to file its result under")
    names = [task.metadata.name for task in bench.tasks]
    value = math.fsum(scored[name] for name in names) / len(names) * 100
    revisions = {hub_revision(run.task_results[name].dataset_revision) for name in names}
    revision = revisions.pop() if len(revisions) == 1 else None
    label = next((_label(n, demo, upstream) for n in names if n in demo), "") or next(
        (_label(n, demo, upstream) for n in names if n in upstream), "")
    dates = [d for d in (getattr(run.task_results[n], "date", None) for n in names) if d is not None]
    versions = sorted({str(run.task_results[n].mteb_version) for n in names})
    name = f"complexir: mean of the {len(names)} task main scores (MTEB v{', '.join(versions)})"
    entry = {"dataset": {"id": bench.benchmark_hf_repo, "task_id": bench.name, "revision": revision},
             "value": value, "date": max(dates) if dates else None,
             "notes": f"{name}; {EVAL_RESULTS_SCALE}{label}",
             "source": {"url": "https://github.com/embeddings-benchmark/mteb/", "name": name + label, "user": user}}
    return mteb_internals.hf_eval_results().model_validate([entry])


# ------------------------------------------------------------------------------------------ entry point


def make_report(results: str | Path, out: str | Path, *, model: str | None = None, card: str | Path | None = None,
                baseline: str | Path | None = None, baseline_model: str | None = None,
                allow_demo: bool = False) -> Path:
    """Write the report folder (card, ``.eval_results``, charts, significance) and return its card path.

    Results of demo data, or of data no result names, are refused unless ``allow_demo`` (then labelled as demo).
    """
    from complexir.analysis import charts  # matplotlib and mteb's registry: only when a report is made
    from complexir.mteb import hook as mteb_hook

    mteb_hook.register()  # result files name tasks; mteb must know ours to read their metadata
    out = Path(out)
    run = load_run(results, model)
    demo = set(check_provenance(run, allow_demo=allow_demo))
    upstream = set(tasks_built_from_upstream(run))
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
        bench_rows = [r for r in rows if r.benchmark == bench]
        mark = f" {DEMO_MARK}" if any(r.task in demo for r in bench_rows) else ""
        charts.benchmark_chart(bench_rows, out / REPORT_DIR / name, title=f"{bench}: {run.label}{mark}",
                               baseline_name=base.label if base else None)
        chart_files[bench] = f"{REPORT_DIR}/{name}"
    section = render_section(run, rows, chart_files, base, built_locally=upstream, references=published_rows(rows),
                             demo=demo)
    merged = merge_card(Path(card) if card else None, run, eval_results(run, rows, demo, upstream), section)
    merged.data.tags = list(dict.fromkeys([*(merged.data.tags or []), "mteb"]))  # as mteb's own cards are tagged
    card_path = out / "README.md"
    merged.save(card_path)
    write_eval_results_folder(run, out, demo=demo, upstream=upstream)
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
