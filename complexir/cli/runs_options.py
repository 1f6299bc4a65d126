"""``complexir run``'s runs options: ``--runs`` scores fixed rankings as a system, ``--save-runs`` writes the
rankings a run made (see ``complexir.runs.folder`` for the folder layout)."""

from __future__ import annotations

import argparse
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from complexir.runs.folder import RunsError

logger = logging.getLogger(__name__)

RUNS_FOLDER = "runs"  # under --output: the default --save-runs folder, beside results/ and per_query/
PROGRESS_AFTER_S = 2.0  # the up-front check of --runs shows a bar only when it takes longer than this


def add_runs_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--runs", default=None, metavar="PATH",
                        help="score fixed rankings instead of a model: a runs folder (<Task>/<subset>/<split>.trec, "
                             "as --save-runs writes it) or one TREC run file with exactly one --task and --split; "
                             "needs --model-name")
    parser.add_argument("--save-runs", nargs="?", const="", default=None, metavar="DIR",
                        help="write every task's ranking (each subset and split, at the search depth) as TREC run "
                             "files in a runs folder (default: <output>/runs/<model>/<revision>/)")


def runs_task_names(args: argparse.Namespace) -> list[str] | None:
    """The tasks to run: those given, else (with ``--runs`` of a folder and no ``--benchmark``) the folder's."""
    if args.task or args.benchmark or not args.runs or not Path(args.runs).expanduser().is_dir():
        return args.task
    from complexir.runs.folder import RunsFolder
    from complexir.tasks import all_tasks

    folder = RunsFolder(args.runs)
    order = [cls.metadata.name for cls in all_tasks()]
    unknown = [name for name in folder.tasks() if name not in order]
    if unknown:
        raise RunsError(f"{folder.path / unknown[0]}: {unknown[0]!r} is not a task complexir knows (the folder's "
                        f"first level names tasks, e.g. CRUMBClinicalTrial)")
    return sorted(folder.tasks(), key=order.index)  # the registry's order, as a run of every task


@dataclass
class FixedRunsSetup:
    """What ``complexir run`` evaluates and reports for ``--runs`` (the counterpart of ``SearchSetup``)."""

    model: Any  # the FixedRunsSearch
    streams_corpus: bool = True  # the corpus is never read as text: its ids come from the shards

    def docs_per_second(self, task: str) -> float | None:
        return None

    def close(self) -> None:
        pass


def fixed_runs_setup(args: argparse.Namespace, tasks: list[Any]) -> FixedRunsSetup:
    """The ``FixedRunsSearch`` of ``--runs``, every task, subset and split to run checked up front to have a run."""
    from complexir.runs.folder import FixedRunsSearch, RunsFolder

    model_options = [option for option, given in (("--model", args.model), ("--max-seq-length", args.max_seq_length),
                                                  ("--backend", args.backend != "torch"),
                                                  ("--long-docs", args.long_docs != "none")) if given]
    if model_options:
        raise ValueError(f"--runs scores fixed rankings, with no model: {', '.join(model_options)} cannot apply "
                         f"(name the runs with --model-name)")
    if not args.model_name:
        raise ValueError("--runs needs --model-name NAME: the name its results are filed under")
    path = Path(args.runs).expanduser()
    if not path.exists():
        raise FileNotFoundError(f"--runs {path}: no such runs folder or run file")
    wanted = [(task.metadata.name, subset, split) for task in tasks for subset in _subsets(task)
              for split in task.eval_splits]
    if path.is_dir():
        folder = RunsFolder(path)
    else:
        if len(wanted) != 1:
            named = ", ".join("/".join(w) for w in wanted[:4]) + (", ..." if len(wanted) > 4 else "")
            raise RunsError(f"--runs {path}: one TREC file scores exactly one task, subset and split; this run has "
                            f"{len(wanted)} ({named}): give one --task and one --split, or a runs folder")
        folder = RunsFolder.of_file(path, *wanted[0])
    missing = [w for w in wanted if not folder.has(*w)]
    if missing:
        raise RunsError(f"{folder.path_of(*missing[0])}: no run for task {missing[0][0]} (subset {missing[0][1]}, "
                        f"split {missing[0][2]}); {len(missing)} of {len(wanted)} task/subset/split(s) missing "
                        f"from {folder.path}")
    # every file checked now (format, NaN/inf, repeats): refused before anything is scored; a bar on stderr once
    # the checks take a while (big runs), then mteb's own bar per task while they are scored
    for entry in tqdm(wanted, desc="checking runs", unit="file", delay=PROGRESS_AFTER_S):
        folder.check(*entry)
    logger.info("scoring %s as %s", folder.describe(), args.model_name)
    return FixedRunsSetup(model=FixedRunsSearch(folder, args.model_name))


def _subsets(task: Any) -> list[str]:
    """The MTEB subsets the task will run (those its local data holds, for a task that allows missing ones)."""
    if getattr(task, "allow_missing_subsets", False) and task.data_dir is not None:
        task.restrict_to_present()
    return list(task.hf_subsets)


def save_runs_writer(args: argparse.Namespace, model: Any, tasks: list[Any], output: Path) -> tuple[Any, Any]:
    """``model`` wrapped to record its rankings (``--save-runs``), and the recorder; ``(model, None)`` without."""
    if args.save_runs is None:
        return model, None
    import mteb

    from complexir.runs.folder import RecordingSearch, RunsFolderWriter

    meta = model.mteb_model_meta
    if args.save_runs:
        folder = Path(args.save_runs).expanduser()
    else:  # mteb's own result path for this model (experiments included), under runs/ instead of results/
        results_root = output / "results"
        folder = output / RUNS_FOLDER / mteb.ResultCache(output).get_task_result_path("_", meta).parent.relative_to(
            results_root)
    by_name = {task.metadata.name: task for task in tasks}

    def data(name: str) -> dict[str, Any] | None:
        task = by_name.get(name)
        return task.data_provenance().as_dict() if task is not None else None

    writer = RunsFolderWriter(folder, meta.name, meta.revision, None)
    return RecordingSearch(model, writer, data=data), writer


def close_save_runs(writer: Any) -> None:
    """``runs.json`` for the run files written (none written: nothing to describe)."""
    if writer is not None and writer.tasks:
        writer.close()
        from complexir.runs.folder import SUFFIX

        print(f"runs: {sum(1 for _ in writer.path.glob(f'*/*/*{SUFFIX}'))} run file(s) in {writer.path.resolve()} "
              f"(depth {writer.depth})")


def print_runs_summary(setup: Any) -> None:
    """What the fixed runs were, and how many queries each run left unranked (they score 0, as trec_eval -c)."""
    from complexir.runs.folder import FixedRunsSearch

    search = getattr(setup, "model", None)
    if not isinstance(search, FixedRunsSearch):
        return
    print(f"system: {search.folder.describe()}")
    for (task, subset, split), (searched, absent) in sorted(search.missing.items()):
        if absent:
            print(f"not in run: {task} {subset} {split}: {absent} of {searched} queries (scored 0, as trec_eval -c)")
    if search.missing and not any(absent for _, absent in search.missing.values()):
        print("not in run: none (every query searched is ranked)")
