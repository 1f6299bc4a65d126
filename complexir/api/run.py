"""``complexir.run``: evaluate a system on the benchmarks through ``mteb.evaluate`` (what ``complexir run`` does,
less the printing).

With default options: the packaged all-MiniLM-L6-v2 on the demo copy of every benchmark shipped in the package.
Writes MTEB's result JSON under ``output``/results (MTEB's own cache layout) and, beside it, the per-query scores
that significance tests need, under ``output``/per_query. Returns a :class:`RunResult`: one row per task, subset
and split (or per failed task), and what the run read and used.
"""

from __future__ import annotations

import dataclasses
import importlib.resources
import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from complexir.api.options import RunOptions
from complexir.hub.data_source import DataSource, choose_source
from complexir.layout.atomic import write_file
from complexir.layout.errors import shorten

if TYPE_CHECKING:
    from complexir.api.fixed_runs import SavedRuns
    from complexir.hub.provenance import DataProvenance
    from complexir.runs.folder import FixedRunsSearch
    from complexir.systems.kinds import System

logger = logging.getLogger(__name__)


def demo_data_dir() -> Path:
    """The demo benchmarks shipped inside the package (one folder per benchmark)."""
    return Path(str(importlib.resources.files("complexir") / "demo"))


def resolve_source(data_dir: str | None) -> DataSource:
    """Where the tasks read: ``data_dir`` (``hub``: the Hub), else ``$COMPLEXIR_DATA_DIR``, else the demos."""
    return choose_source(data_dir, os.environ, demo_data_dir())


def select_tasks(benchmarks: list[str] | tuple[str, ...] | None, names: list[str] | tuple[str, ...] | None,
                 source: DataSource, splits: list[str] | tuple[str, ...]) -> list[Any]:
    """Task instances reading ``source``, restricted to those whose data exists when it is a local folder (and,
    with neither benchmarks nor names on the demos, to each spec's ``demo_run_subsets``)."""
    data_dir = source.data_dir
    from complexir.tasks import all_tasks, benchmark_of, benchmarks_by_name, tasks_by_name

    by_name, benchmark_names, benchmark_of_task = tasks_by_name(), benchmarks_by_name(), benchmark_of()
    if names:
        unknown = [n for n in names if n not in by_name]
        if unknown:
            raise ValueError(f"unknown task(s) {unknown}; known: {sorted(by_name)}")
        classes = [by_name[n] for n in names]
    else:
        classes = list(all_tasks())
    if benchmarks:
        lower = {b.lower(): b for b in benchmark_names}
        unknown = [b for b in benchmarks if b.lower() not in lower]
        if unknown:
            raise ValueError(f"unknown benchmark(s) {unknown}; known: {sorted(benchmark_names)}")
        wanted = {lower[b.lower()] for b in benchmarks}
        classes = [c for c in classes if benchmark_of_task[c.metadata.name] in wanted]
    if not names and not benchmarks and data_dir is not None and Path(data_dir).resolve() == demo_data_dir().resolve():
        from complexir.registry.benchmarks import get_spec  # the default demo run: each spec's demo_run_subsets

        classes = [c for c in classes if get_spec(c.benchmark_dir).in_default_demo_run(c().upstream_subsets())]
    tasks = []
    for cls in classes:
        task = cls()
        if data_dir is not None and not task.available_in(data_dir):
            if names:
                raise FileNotFoundError(f"{cls.metadata.name}: its data is not in {data_dir}")
            logger.debug("skipping %s: not in %s", cls.metadata.name, data_dir)
            continue
        task.source = source  # explicit, so no default (the mteb hook's) applies
        missing = [s for s in splits if s not in task.available_splits]
        if missing:
            raise ValueError(f"{cls.metadata.name} has no split {missing}; it has {list(task.available_splits)}")
        tasks.append(task.filter_eval_splits(list(splits)))
    if not tasks:
        raise ValueError(f"no task to run (benchmarks={benchmarks}, tasks={names}, data from {source})")
    return tasks


def check_no_other_data(output: Path, meta: Any, task: Any) -> None:
    """Refuse to overwrite a result of this model and task that scored other data (another build, the demo
    against a real build): MTEB files results by model and task only, so the two would silently replace each
    other. Demo over demo is fine (a newer complexir may ship a changed demo)."""
    import mteb


    path = mteb.ResultCache(output).get_task_result_path(task.metadata.name, meta)
    if not path.is_file():
        return
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:  # not "other data": a file cut short (a full disk, a kill) or broken
        raise ValueError(f"{path}:{error.lineno}: not valid JSON (truncated?): the result of this model and task "
                         "that this run would replace cannot be read; remove it, or choose another --output") from None
    existing = payload.get("dataset_revision") if isinstance(payload, dict) else None
    ours = task.data_provenance()
    if ours.same_data_as(existing):
        return
    raise FileExistsError(f"{path} holds results of other data (dataset revision {existing!r}); this run scores "
                          f"{ours.describe()}. Choose another --output, or remove that file to replace it")


def write_unrounded_result(output: Path, meta: Any, task_result: Any) -> Path:
    """Rewrite the result JSON mteb saved with the scores as computed: mteb's ``TaskResult.to_disk`` rounds every
    score to 6 decimals, and our means are exact (the per-query files average to them to 1e-12). The layout is
    mteb's own (``model_dump``, the date as a timestamp), so ``mteb.load_results`` reads it unchanged."""
    import mteb

    path = mteb.ResultCache(output).get_task_result_path(task_result.task_name, meta)
    payload = task_result.model_dump()
    payload["date"] = task_result.date.timestamp() if task_result.date else None
    return write_file(path, json.dumps(payload, indent=2))  # atomic: a full disk leaves mteb's file as it was


def one_line_reason(error: BaseException) -> str:
    """``Type: first line of the message``, short enough for a table cell."""
    lines = str(error).strip().splitlines()
    reason = f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__
    return reason if len(reason) <= 160 else reason[:157] + "..."


def check_folder_option(option: str, value: str | os.PathLike[str] | None) -> None:
    """A folder option that names an existing file fails now, not after the model has encoded for an hour."""
    if value is not None and Path(value).expanduser().exists() and not Path(value).expanduser().is_dir():
        raise NotADirectoryError(f"{option} {value}: not a folder")


@dataclass
class RunResult:
    """What a run scored and used. ``rows``: one per task, subset and split (``benchmark``, ``task``, ``subset``,
    ``split``, ``scores`` (mteb's score dict), ``main_name``, ``docs_per_second``, ``encodes``), or one per failed
    task (``benchmark``, ``task``, ``failed``: the reason)."""

    output: Path
    system: System
    model_name: str | None  # the name, revision and experiment the results are filed under
    revision: str | None
    experiment: str | None
    rows: list[dict[str, Any]]
    tasks: int  # how many tasks were run
    data: dict[str, DataProvenance] = field(default_factory=dict)  # benchmark -> the data its tasks scored
    store_summary: str | None = None  # what the embedding store did (None: this system encodes no vectors)
    fixed_runs: FixedRunsSearch | None = None  # the fixed rankings scored (runs), with the queries they miss
    saved_runs: SavedRuns | None = None  # the runs folder written (save_runs)

    @property
    def failed(self) -> list[str]:
        """The tasks that failed (their reasons are in their rows)."""
        return [r["task"] for r in self.rows if r.get("failed")]

    def score(self, task: str, measure: str = "main_score", *, subset: str = "default", split: str = "test") -> float:
        """One score of a task's subset and split: ``measure`` is mteb's key (``ndcg_at_10``) or a measure name
        of the registry (``nDCG@10``)."""
        from complexir.metrics import parse_measure

        key = measure if measure == "main_score" or "@" not in measure else parse_measure(measure).mteb_key
        for row in self.rows:
            if (row["task"], row.get("subset"), row.get("split")) == (task, subset, split):
                return float(row["scores"][key])
        raise KeyError(f"no scores of {task} (subset {subset}, split {split}) in this run")


def prepare(options: RunOptions) -> tuple[System, DataSource, list[Any]]:
    """The system, the data source and the tasks a run asks for, every refusal before any data or model is read."""
    from complexir.api.fixed_runs import runs_task_names
    from complexir.systems.kinds import DEFAULT_RERANK_DEPTH, describe_system

    for option, value in (("--cache", options.cache), ("--output", options.output)):
        check_folder_option(option, value)
    depth = DEFAULT_RERANK_DEPTH if options.rerank_depth is None else options.rerank_depth
    system = describe_system(options.model, runs=options.runs, first_stage=options.first_stage, rerank_depth=depth,
                             trust_remote_code=options.trust_remote_code, prompts=dict(options.prompts))
    source = resolve_source(options.data_dir)
    tasks = select_tasks(options.benchmarks, runs_task_names(options), source, options.splits or ("test",))
    return system, source, tasks


def run(options: RunOptions | None = None, /, **fields: Any) -> RunResult:
    """Evaluate the system ``options`` describe (or ``RunOptions(**fields)``; fields given with options replace
    theirs) and return its scores. Raises on bad input (one line saying why); a task that fails while others run
    is reported in its row instead."""
    options = dataclasses.replace(options or RunOptions(), **fields)
    import mteb

    from complexir.api import fixed_runs
    from complexir.runs.folder import RunsError
    from complexir.runs.results import per_query_path, result_cache
    from complexir.systems.kinds import RUNS, build_search_model, check_tasks
    from complexir.tasks import benchmark_of

    system, source, tasks = prepare(options)
    check_tasks(system, tasks)
    if not options.allow_other_data:  # runs made on other data, refused before a model is loaded
        fixed_runs.check_first_stage_data(system, tasks)
    logger.info("running %d task(s) from %s with %s", len(tasks), source, system.describe())
    setup = (fixed_runs.fixed_runs_setup(options, tasks) if system.kind == RUNS
             else build_search_model(system, options.search_options()))
    model = setup.model
    for task in tasks:  # the streaming engines read each corpus from its parquet shards, batch by batch
        task.corpus_from_shards = setup.streams_corpus

    benchmark_of_task = benchmark_of()
    output = Path(options.output)
    model, recorder = fixed_runs.save_runs_writer(options.save_runs, model, tasks, output, options.runs)
    meta = model.mteb_model_meta  # the outermost model's: mteb files the results under it (experiments too)

    rows: list[dict[str, Any]] = []
    results = []
    data: dict[str, Any] = {}  # benchmark → the provenance of the data its tasks scored
    # One task at a time: a task that fails (bad data, a model error) is reported and the others still run,
    # and each task writes its per-query file (beside mteb's result JSON) as soon as it finishes.
    try:
        for task in tasks:
            name = task.metadata.name
            task.per_query_file = per_query_path(output, meta, name)
            try:
                if task.data_dir is not None:  # a Hub repo is named by its commit once the task has resolved it
                    data[benchmark_of_task[name]] = task.data_provenance()
                    check_no_other_data(output, meta, task)
                result = mteb.evaluate(model, [task], cache=result_cache(output), overwrite_strategy="always",
                                       encode_kwargs={"batch_size": options.batch_size})
            except RunsError:  # a bad run file is bad input: the run stops on its file and line
                raise
            except Exception as error:  # noqa: BLE001  (any failure of one task is reported, the run goes on)
                logger.error("%s failed: %s: %s", name, type(error).__name__, shorten(" ".join(str(error).split())))
                logger.debug("%s: traceback", name, exc_info=True)
                rows.append({"benchmark": benchmark_of_task[name], "task": name, "failed": one_line_reason(error)})
                if recorder is not None:  # its saved runs may be partial: not kept
                    recorder.discard(name)
                continue
            data[benchmark_of_task[name]] = task.data_provenance()
            write_unrounded_result(output, meta, result.task_results[0])
            results.append((task, result.task_results[0]))
    finally:
        setup.close()
    saved = fixed_runs.close_save_runs(recorder)  # only after every task ran: an interrupted run stays unfinished
    # a dense model that encoded nothing was served by the store: "cached"; other systems say "-"
    stored = getattr(setup, "stored", None)
    encodes = getattr(setup, "timed", None) is None and stored is not None
    for task, task_result in results:
        for split, entries in task_result.scores.items():
            for scores in entries:
                rows.append({
                    "benchmark": benchmark_of_task[task_result.task_name], "task": task_result.task_name,
                    "subset": scores.get("hf_subset", "default"), "split": split, "scores": scores,
                    "main_name": task.metadata.main_score,
                    "docs_per_second": setup.docs_per_second(task_result.task_name), "encodes": encodes,
                })
    return RunResult(output=output, system=system, model_name=meta.name, revision=meta.revision,
                     experiment=meta.experiment_name, rows=rows, tasks=len(tasks), data=data,
                     store_summary=stored.counts.summary() if stored is not None else None,
                     fixed_runs=setup.model if isinstance(setup, fixed_runs.FixedRunsSetup) else None,
                     saved_runs=saved)
