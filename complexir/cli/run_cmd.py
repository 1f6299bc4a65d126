"""``complexir run``: evaluate a model on the benchmarks through ``mteb.evaluate`` and print one table.

With no arguments: the packaged all-MiniLM-L6-v2 on the demo copy of every benchmark shipped in the package
(the subsets each spec's ``demo_run_subsets`` names; --benchmark/--task reach the rest of the demo).
Writes MTEB's result JSON under ``--output``/results (MTEB's own cache layout) and, beside it, the per-query
scores that significance tests need, under ``--output``/per_query.
"""

from __future__ import annotations

import argparse
import importlib.resources
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

from complexir.analysis.tables import JUDGED_FLOOR, JUDGED_KEY, fmt_score, judged_low, metric_label
from complexir.cli import runs_options
from complexir.cli.argument_types import positive_int
from complexir.cli.engine_options import add_engine_arguments
from complexir.cli.text_table import text_table
from complexir.hub.data_source import DataSource, choose_source
from complexir.metrics import parse_measure

logger = logging.getLogger(__name__)

# Table columns: header → MTEB score key (a column is shown when any row has the key); the measure registry
# spells both.
TABLE_MEASURES = ("nDCG@10", "R@100", "R@10", "AP@10", "alpha_nDCG@20", "StRecall@20", "nDCG@20")
SCORE_COLUMNS = {
    **{parse_measure(name).label: parse_measure(name).mteb_key for name in TABLE_MEASURES},
    "tokens seen": "doc_token_share_seen",
}
ALWAYS_SHOWN = ("nDCG@10", "R@100")
JUDGED_COLUMN = "Judged@10"


def demo_data_dir() -> Path:
    """The demo benchmarks shipped inside the package (one folder per benchmark)."""
    return Path(str(importlib.resources.files("complexir") / "demo"))


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "run", help="evaluate a model on the benchmarks (default: the packaged model on the demo benchmarks)"
    )
    parser.add_argument("--model", default=None,
                        help="Hub model name or local folder: a SentenceTransformer (default: packaged "
                             "all-MiniLM-L6-v2), a CrossEncoder, or an mteb searcher such as mteb/baseline-bm25s")
    parser.add_argument("--model-name", default=None, help="file results under this model name")
    parser.add_argument("--backend", choices=("torch", "onnx", "openvino"), default="torch",
                        help="sentence-transformers inference backend (default: torch). onnx and openvino need "
                             "sentence-transformers[onnx] / [openvino]; their results are filed as an experiment "
                             "of the model (experiments/backend_<name>), apart from the torch results")
    parser.add_argument("--max-seq-length", type=positive_int, default=None,
                        help="override the model's max sequence length (tokens, at least 1)")
    parser.add_argument("--benchmark", action="append", default=None, metavar="NAME",
                        help="a registered benchmark, e.g. CRUMB, IRSC, LoCoV1 or CoverageBench (repeatable; "
                             "default: all)")
    parser.add_argument("--task", action="append", default=None, metavar="NAME", help="a task name (repeatable)")
    parser.add_argument("--data-dir", default=None,
                        help="folder holding one built benchmark folder per benchmark (default: $COMPLEXIR_DATA_DIR, "
                             "else the demo benchmarks); 'hub' reads the Hub repos named in the tasks' metadata")
    parser.add_argument("--split", action="append", default=None, help="evaluation split(s) (default: test)")
    add_release_runs_argument(parser)
    parser.add_argument("--output", default="results", help="results folder (default: ./results)")
    parser.add_argument("--batch-size", type=positive_int, default=32)
    parser.add_argument("--long-docs", choices=("none", "chunk"), default="none",
                        help="chunk: split long documents into windows of the model's length, score by best window")
    add_system_arguments(parser)
    add_engine_arguments(parser)
    runs_options.add_runs_arguments(parser)
    parser.set_defaults(func=run)


def add_system_arguments(parser: argparse.ArgumentParser) -> None:
    """What the system is besides ``--model`` (``complexir.systems.kinds``): a first stage for a cross-encoder, custom
    code, prompts."""
    parser.add_argument("--first-stage", default=None, metavar="MODEL_OR_RUNS",
                        help="with a cross-encoder --model: what it reranks on retrieval tasks, a dense model, a "
                             "searcher (e.g. mteb/baseline-bm25s) or a runs folder")
    parser.add_argument("--rerank-depth", type=positive_int, default=100, metavar="K",
                        help="with --first-stage: the cross-encoder reranks each query's top K (default: 100)")
    parser.add_argument("--trust-remote-code", action="store_true",
                        help="let a model that ships its own Python code run it (an explicit opt-in, never the "
                             "default; recorded in the experiment)")
    parser.add_argument("--prompt", action="append", default=None, metavar="TYPE=TEXT", type=prompt_arg,
                        help="query=TEXT or document=TEXT: a text put before every query / document of a dense "
                             "model mteb does not know (e5-style prefixes, e.g. 'query: '); repeatable")


def prompt_arg(text: str) -> tuple[str, str]:
    kind, sep, value = text.partition("=")
    if not sep or kind not in ("query", "document"):
        raise argparse.ArgumentTypeError(f"expected query=TEXT or document=TEXT, got {text!r}")
    return kind, value


def describe_run_system(args: argparse.Namespace) -> Any:
    """The system ``complexir run`` was asked for (``complexir.systems.kinds.describe_system``)."""
    from complexir.systems.kinds import describe_system

    return describe_system(args.model, runs=getattr(args, "runs", None), first_stage=args.first_stage,
                           rerank_depth=args.rerank_depth, trust_remote_code=args.trust_remote_code,
                           prompts=dict(args.prompt or []))


def add_release_runs_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--release-runs", action="store_true",
                        help="score the baseline runs the release ships (CoverageBench's <subset>-runs configs), each "
                             "as its own system named release/<run name>, instead of a model; prints nDCG@20, "
                             "alpha-nDCG@20 and StRecall@20 per collection beside the paper's values")


def resolve_source(arg: str | None) -> DataSource:
    """Where the tasks read: ``--data-dir`` (``hub``: the Hub), else ``$COMPLEXIR_DATA_DIR``, else the demos."""
    return choose_source(arg, os.environ, demo_data_dir())


def select_tasks(benchmarks: list[str] | None, names: list[str] | None, source: DataSource,
                 splits: list[str]) -> list[Any]:
    """Task instances reading ``source``, restricted to those whose data exists when it is a local folder (and,
    with neither benchmarks nor names on the demos, to each spec's ``demo_run_subsets``)."""
    data_dir = source.data_dir
    from complexir.tasks import all_tasks, benchmark_of, benchmarks_by_name, tasks_by_name

    TASKS_BY_NAME, BENCHMARKS_BY_NAME, BENCHMARK_OF = tasks_by_name(), benchmarks_by_name(), benchmark_of()  # noqa: N806
    TASKS = all_tasks()  # noqa: N806
    if names:
        unknown = [n for n in names if n not in TASKS_BY_NAME]
        if unknown:
            raise ValueError(f"unknown task(s) {unknown}; known: {sorted(TASKS_BY_NAME)}")
        classes = [TASKS_BY_NAME[n] for n in names]
    else:
        classes = list(TASKS)
    if benchmarks:
        lower = {b.lower(): b for b in BENCHMARKS_BY_NAME}
        unknown = [b for b in benchmarks if b.lower() not in lower]
        if unknown:
            raise ValueError(f"unknown benchmark(s) {unknown}; known: {sorted(BENCHMARKS_BY_NAME)}")
        wanted = {lower[b.lower()] for b in benchmarks}
        classes = [c for c in classes if BENCHMARK_OF[c.metadata.name] in wanted]
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
        tasks.append(task.filter_eval_splits(splits))
    if not tasks:
        raise ValueError(f"no task to run (benchmarks={benchmarks}, tasks={names}, data from {source})")
    return tasks


def check_no_other_data(output: Path, meta: Any, task: Any) -> None:
    """Refuse to overwrite a result of this model and task that scored other data (another build, the demo
    against a real build): MTEB files results by model and task only, so the two would silently replace each
    other. Demo over demo is fine (a newer complexir may ship a changed demo)."""
    import mteb

    from complexir.hub import provenance

    path = mteb.ResultCache(output).get_task_result_path(task.metadata.name, meta)
    if not path.is_file():
        return
    try:
        existing = json.loads(path.read_text()).get("dataset_revision")
    except (OSError, ValueError):
        existing = None
    ours = task.data_provenance()
    if existing == ours.revision or (ours.is_demo and provenance.kind_of_revision(existing) == provenance.DEMO):
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
    path.write_text(json.dumps(payload, indent=2), encoding="utf-8")
    return path


def one_line_reason(error: BaseException) -> str:
    """``Type: first line of the message``, short enough for a table cell."""
    lines = str(error).strip().splitlines()
    reason = f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__
    return reason if len(reason) <= 160 else reason[:157] + "..."


def judged_cell(scores: dict[str, Any]) -> str:
    """The Judged@10 column: the fraction, flagged ``(!)`` when below :data:`JUDGED_FLOOR`."""
    return fmt_score(scores.get(JUDGED_KEY)) + (" (!)" if judged_low(scores.get(JUDGED_KEY)) else "")


def judged_note(rows: list[dict[str, Any]]) -> str | None:
    """One line naming the tasks whose Judged@10 is below the floor, or None."""
    low = [f"{r['task']} ({r['subset']})" for r in rows
           if not r.get("failed") and judged_low(r["scores"].get(JUDGED_KEY))]
    if not low:
        return None
    return (f"(!) Judged@10 below {JUDGED_FLOOR}: {', '.join(low)}. Most of their top 10 has no judgment and counts "
            "as non-relevant; their scores are lower bounds, not comparable with fully judged ones.")


def render_table(rows: list[dict[str, Any]]) -> str:
    shown = [h for h, key in SCORE_COLUMNS.items()
             if h in ALWAYS_SHOWN or any(key in r.get("scores", {}) for r in rows)]
    judged = any(JUDGED_KEY in r.get("scores", {}) for r in rows)
    header = ["benchmark", "task", "subset", "split", "main score", *shown, *([JUDGED_COLUMN] if judged else []),
              "docs/s"]
    body = []
    for r in rows:
        if r.get("failed"):
            body.append([r["benchmark"], r["task"], "-", "-", f"FAILED: {r['failed']}", *("-" for _ in shown),
                         *(["-"] if judged else []), "-"])
            continue
        s = r["scores"]
        main = f"{metric_label(r['main_name'])}={fmt_score(s.get('main_score'))}"  # label from the registry
        dps = r["docs_per_second"]
        body.append([r["benchmark"], r["task"], r["subset"], r["split"], main,
                     *(fmt_score(s.get(SCORE_COLUMNS[h])) for h in shown), *([judged_cell(s)] if judged else []),
                     f"{dps:,.0f}" if dps else ("cached" if r.get("encodes", True) else "-")])
    return text_table(header, body)


def _check_folder_option(option: str, value: str | None) -> None:
    """A folder option that names an existing file fails now, not after the model has encoded for an hour."""
    if value is not None and Path(value).expanduser().exists() and not Path(value).expanduser().is_dir():
        raise NotADirectoryError(f"{option} {value}: not a folder")


def run(args: argparse.Namespace) -> int:
    for option, value in (("--cache", args.cache), ("--output", args.output)):
        _check_folder_option(option, value)
    import mteb

    from complexir.runs.results import per_query_path
    from complexir.systems.kinds import build_search_model, check_tasks

    system = describe_run_system(args)  # bad combinations fail here, before any data or model is read
    source = resolve_source(args.data_dir)
    splits = args.split or ["test"]
    tasks = select_tasks(args.benchmark, runs_options.runs_task_names(args), source, splits)
    if getattr(args, "release_runs", False):  # the release's own rankings are the systems: no model to load
        from complexir.cli.release_runs import run_release_runs

        return run_release_runs(args, tasks, check_no_other_data=check_no_other_data,
                                write_result=write_unrounded_result)
    check_tasks(system, tasks)
    logger.info("running %d task(s) from %s with %s", len(tasks), source, system.describe())

    setup = runs_options.fixed_runs_setup(args, tasks) if system.kind == "runs" else build_search_model(system, args)
    model: Any = setup.model
    for task in tasks:  # the streaming engines read each corpus from its parquet shards, batch by batch
        task.corpus_from_shards = setup.streams_corpus

    from complexir.tasks import benchmark_of

    BENCHMARK_OF = benchmark_of()  # noqa: N806
    output = Path(args.output)
    model, saved_runs = runs_options.save_runs_writer(args, model, tasks, output)  # --save-runs
    meta = model.mteb_model_meta  # the outermost model's: mteb files the results under it (experiments too)

    rows = []
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
                    data[BENCHMARK_OF[name]] = task.data_provenance()
                    check_no_other_data(output, meta, task)
                result = mteb.evaluate(model, [task], cache=mteb.ResultCache(output), overwrite_strategy="always",
                                       encode_kwargs={"batch_size": args.batch_size})
            except runs_options.RunsError:  # a bad run file is bad input: the command stops on its file and line
                raise
            except Exception as error:  # noqa: BLE001  (any failure of one task is reported, the run goes on)
                logger.error("%s failed: %s", name, one_line_reason(error))
                logger.debug("%s: traceback", name, exc_info=True)
                rows.append({"benchmark": BENCHMARK_OF[name], "task": name, "failed": one_line_reason(error)})
                continue
            data[BENCHMARK_OF[name]] = task.data_provenance()
            write_unrounded_result(output, meta, result.task_results[0])
            results.append((task, result.task_results[0]))
    finally:
        setup.close()
        runs_options.close_save_runs(saved_runs)
    # a dense model that encoded nothing was served by the store: "cached"; other systems say "-"
    encodes = getattr(setup, "timed", None) is None and getattr(setup, "stored", None) is not None
    for task, task_result in results:
        for split, entries in task_result.scores.items():
            for scores in entries:
                rows.append({
                    "benchmark": BENCHMARK_OF[task_result.task_name], "task": task_result.task_name,
                    "subset": scores.get("hf_subset", "default"), "split": split, "scores": scores,
                    "main_name": task.metadata.main_score,
                    "docs_per_second": setup.docs_per_second(task_result.task_name), "encodes": encodes,
                })
    experiment = f", experiment {meta.experiment_name}" if meta.experiment_name else ""
    print(f"model: {meta.name} (revision {meta.revision}{experiment}); results in {output.resolve()}")
    if system.kind != "runs":  # fixed runs print their own line (print_runs_summary: the folder and its digest)
        print(f"system: {system.describe()}")
    if getattr(setup, "stored", None) is not None:
        print(f"embedding store ({args.cache or 'temporary'}; engine {args.engine}): {setup.store_summary()}")
    else:
        print(f"embedding store: not used (engine {args.engine}; this system encodes no vectors)")
    for benchmark, prov in data.items():
        print(f"data: {benchmark}: {prov.describe()}")
    demo = sorted(b for b, prov in data.items() if prov.is_demo)
    if demo:
        print(f"DEMO DATA ({', '.join(demo)}): a few hand-written queries to show the pipeline works. These are NOT "
              f"benchmark scores; build the real data with `complexir build` and pass --data-dir.")
    note = judged_note(rows)
    if note:  # above the table: what reads the table takes every line below its header as a row
        print(note)
    runs_options.print_runs_summary(setup)
    print(render_table(rows))
    failed = [r["task"] for r in rows if r.get("failed")]
    if failed:
        print(f"{len(failed)} of {len(tasks)} task(s) failed: {', '.join(failed)} (reasons in the table)",
              file=sys.stderr)
        return 1
    return 0
