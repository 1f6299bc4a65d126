"""``complexir run``: evaluate a model on the benchmarks through ``mteb.evaluate`` and print one table.

With no arguments: the packaged all-MiniLM-L6-v2 on the demo copy of every benchmark shipped in the package
(the subsets each spec's ``demo_run_subsets`` names; --benchmark/--task reach the rest of the demo).
Writes MTEB's result JSON under ``--output``/results (MTEB's own cache layout) and, beside it, the per-query
scores that significance tests need, under ``--output``/per_query.
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any

from complexir.analysis.tables import JUDGED_KEY, fmt_score, judged_low_in, judged_rule, metric_label
from complexir.api.options import RunOptions
from complexir.api.run import RunResult
from complexir.cli import runs_options
from complexir.cli.argument_types import positive_int
from complexir.cli.early_checks import check_run_arguments
from complexir.cli.engine_options import add_engine_arguments
from complexir.cli.option_checks import refuse_inert_options
from complexir.cli.text_table import text_table
from complexir.metrics import parse_measure
from complexir.systems.kinds import DEFAULT_RERANK_DEPTH, PROMPT_TYPES, RUNS
from complexir.systems.options import BACKENDS, LONG_DOCS, backend_advice

logger = logging.getLogger(__name__)

# Table columns: header → MTEB score key (a column is shown when any row has the key); the measure registry
# spells both.
TABLE_MEASURES = ("nDCG@10", "R@100", "R@10", "AP@10", "alpha_nDCG@20", "StRecall@20", "nDCG@20")
SCORE_COLUMNS = {
    **{parse_measure(name).label: parse_measure(name).mteb_key for name in TABLE_MEASURES},
    "doc tokens read": "doc_token_share_seen",  # a share of each document's tokens (LoCoV1), shown as a percentage
}
PERCENT_COLUMNS = {"doc tokens read"}
ALWAYS_SHOWN = ("nDCG@10", "R@100")
JUDGED_COLUMN = "Judged@10"


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "run", help="evaluate a model on the benchmarks (default: the packaged model on the demo benchmarks)"
    )
    parser.add_argument("--model", default=None,
                        help="Hub model name or local folder: a SentenceTransformer (default: packaged "
                             "all-MiniLM-L6-v2), a CrossEncoder, or an mteb searcher such as mteb/baseline-bm25s")
    parser.add_argument("--model-name", default=None, help="file results under this model name")
    parser.add_argument("--backend", choices=BACKENDS, default="torch",
                        help="sentence-transformers inference backend (default: torch). onnx and openvino need "
                             "optimum, which does not load here: " + backend_advice("onnx|openvino") + ". Their "
                             "results are filed as an experiment of the model (experiments/backend_<name>)")
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
    parser.add_argument("--long-docs", choices=LONG_DOCS, default="none",
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
    parser.add_argument("--rerank-depth", type=positive_int, default=None, metavar="K",
                        help="with --first-stage: the cross-encoder reranks each query's top K (default: "
                             f"{DEFAULT_RERANK_DEPTH})")
    parser.add_argument("--trust-remote-code", action="store_true",
                        help="let a model that ships its own Python code run it (an explicit opt-in, never the "
                             "default; recorded in the experiment)")
    parser.add_argument("--prompt", action="append", default=None, metavar="TYPE=TEXT", type=prompt_arg,
                        help="query=TEXT or document=TEXT: a text put before every query / document of a dense "
                             "model mteb does not know (e5-style prefixes, e.g. 'query: '); repeatable")


def prompt_arg(text: str) -> tuple[str, str]:
    kind, sep, value = text.partition("=")
    if not sep or kind not in PROMPT_TYPES:
        raise argparse.ArgumentTypeError(f"expected query=TEXT or document=TEXT, got {text!r}")
    return kind, value


def add_release_runs_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--release-runs", action="store_true",
                        help="score the baseline runs the release ships (CoverageBench's <subset>-runs configs), each "
                             "as its own system named release/<run name>, instead of a model; prints nDCG@20, "
                             "alpha-nDCG@20 and StRecall@20 per collection beside the paper's values")


def judged_cell(scores: dict[str, Any]) -> str:
    """The Judged@10 column: the fraction, flagged ``(!)`` when low for what the task's qrels allow."""
    return fmt_score(scores.get(JUDGED_KEY)) + (" (!)" if judged_low_in(scores) else "")


def judged_note(rows: list[dict[str, Any]]) -> str | None:
    """One line naming the tasks whose Judged@10 is low for what their qrels allow, or None."""
    low = [f"{r['task']} ({r['subset']})" for r in rows if not r.get("failed") and judged_low_in(r["scores"])]
    if not low:
        return None
    return (f"(!) {judged_rule()}: {', '.join(low)}. Most of what could be judged in their top 10 is not, and counts "
            "as non-relevant; their scores are lower bounds, not comparable with fully judged ones.")


def _cell(column: str, value: Any) -> str:
    if column in PERCENT_COLUMNS and isinstance(value, (int, float)):
        return f"{100 * value:.1f}%"
    return fmt_score(value)


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
                     *(_cell(h, s.get(SCORE_COLUMNS[h])) for h in shown), *([judged_cell(s)] if judged else []),
                     f"{dps:,.0f}" if dps else ("cached" if r.get("encodes", True) else "-")])
    return text_table(header, body)


def run_options(args: argparse.Namespace) -> RunOptions:
    """The options the command line gives (``complexir.api.options.RunOptions``: each flag is the field of its
    name)."""
    return RunOptions(
        model=args.model, model_name=args.model_name, backend=args.backend, max_seq_length=args.max_seq_length,
        benchmarks=tuple(args.benchmark) if args.benchmark else None, tasks=tuple(args.task) if args.task else None,
        data_dir=args.data_dir, splits=tuple(args.split or ("test",)), output=args.output, batch_size=args.batch_size,
        long_docs=args.long_docs, first_stage=args.first_stage, rerank_depth=args.rerank_depth,
        trust_remote_code=args.trust_remote_code, prompts=tuple(args.prompt or ()), engine=args.engine,
        cache=args.cache, address=args.address, workers=args.workers, gpus_per_worker=args.gpus_per_worker,
        batch_docs=args.batch_docs, runs=args.runs, save_runs=args.save_runs, allow_other_data=args.allow_other_data)


def run(args: argparse.Namespace) -> int:
    refuse_inert_options(args)  # options this mode would ignore, before anything is read
    check_run_arguments(args)  # names and folders: refused before the imports below, which take seconds
    options = run_options(args)
    if args.release_runs:  # the release's own rankings are the systems: no model to load
        from complexir.cli.release_runs import run_release_runs

        return run_release_runs(options)
    from complexir.api.run import run as run_api

    logger.info("loading mteb and the model...")  # seconds of imports: say the command is alive
    result = run_api(options)
    print_run(result, options)
    return 1 if result.failed else 0


def print_run(result: RunResult, options: RunOptions) -> None:
    """The run's table, what it read and used above it; the failed tasks on stderr."""
    runs_options.print_saved_runs(result.saved_runs)
    experiment = f", experiment {result.experiment}" if result.experiment else ""
    print(f"model: {result.model_name} (revision {result.revision}{experiment}); results in "
          f"{result.output.resolve()}")
    if result.system.kind != RUNS:  # fixed runs print their own line (print_runs_summary: the folder and its digest)
        print(f"system: {result.system.describe()}")
    if result.store_summary is not None:
        print(f"embedding store ({options.cache or 'temporary'}; engine {options.engine}): {result.store_summary}")
    else:
        print(f"embedding store: not used (engine {options.engine}; this system encodes no vectors)")
    for benchmark, prov in result.data.items():
        print(f"data: {benchmark}: {prov.describe()}")
    demo = sorted(b for b, prov in result.data.items() if prov.is_demo)
    if demo:
        print(f"DEMO DATA ({', '.join(demo)}): a few hand-written queries to show the pipeline works. These are NOT "
              f"benchmark scores; build the real data with `complexir build` and pass --data-dir.")
    note = judged_note(result.rows)
    if note:  # above the table: what reads the table takes every line below its header as a row
        print(note)
    runs_options.print_runs_summary(result.fixed_runs)
    print(render_table(result.rows))
    if result.failed:
        print(f"{len(result.failed)} of {result.tasks} task(s) failed: {', '.join(result.failed)} (reasons in the "
              "table)", file=sys.stderr)
