"""Runs in ``complexir run``: ``runs`` scores fixed rankings as a system, ``save_runs`` writes the rankings a run
made (``complexir.runs.folder`` describes the folder layout)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from complexir.api.options import RunOptions
    from complexir.runs.folder import FixedRunsSearch, RecordingSearch, RunsFolderWriter
    from complexir.systems.kinds import MtebModel

logger = logging.getLogger(__name__)

RUNS_FOLDER = "runs"  # under the output: the default save_runs folder, beside results/ and per_query/
PROGRESS_AFTER_S = 2.0  # the up-front check of runs shows a bar only when it takes longer than this


def runs_task_names(options: RunOptions) -> list[str] | None:
    """The tasks to run: those given, else (with ``runs`` a folder and no benchmarks) the folder's."""
    tasks = list(options.tasks) if options.tasks else None
    if tasks or options.benchmarks or not options.runs or not Path(options.runs).expanduser().is_dir():
        return tasks
    from complexir.runs.folder import RunsError, RunsFolder
    from complexir.tasks import all_tasks

    folder = RunsFolder(options.runs)
    order = [cls.metadata.name for cls in all_tasks()]
    unknown = [name for name in folder.tasks() if name not in order]
    if unknown:
        raise RunsError(f"{folder.path / unknown[0]}: {unknown[0]!r} is not a task complexir knows (the folder's "
                        f"first level names tasks, e.g. CRUMBClinicalTrial)")
    return sorted(folder.tasks(), key=order.index)  # the registry's order, as a run of every task


@dataclass
class FixedRunsSetup:
    """What ``complexir run`` evaluates and reports for ``runs`` (the counterpart of ``SearchSetup``)."""

    model: FixedRunsSearch
    streams_corpus: bool = True  # the corpus is never read as text: its ids come from the shards

    def docs_per_second(self, task: str) -> float | None:
        return None

    def close(self) -> None:
        pass


def fixed_runs_setup(options: RunOptions, tasks: list[Any]) -> FixedRunsSetup:
    """The ``FixedRunsSearch`` of ``options.runs``, every task, subset and split to run checked up front to have a
    run."""
    from complexir.runs.folder import FixedRunsSearch, RunsError, RunsFolder

    assert options.runs is not None
    model_options = [option for option, given in (("--model", options.model),
                                                  ("--max-seq-length", options.max_seq_length),
                                                  ("--backend", options.backend != "torch"),
                                                  ("--long-docs", options.long_docs != "none")) if given]
    if model_options:
        raise ValueError(f"--runs scores fixed rankings, with no model: {', '.join(model_options)} cannot apply "
                         f"(name the runs with --model-name)")
    if not options.model_name:
        raise ValueError("--runs needs --model-name NAME: the name its results are filed under")
    path = Path(options.runs).expanduser()
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
    from tqdm.auto import tqdm

    for entry in tqdm(wanted, desc="checking runs", unit="file", delay=PROGRESS_AFTER_S):
        folder.check(*entry)
    if not options.allow_other_data:
        for task in tasks:
            refuse_other_data(folder, task)
    logger.info("scoring %s as %s", folder.describe(), options.model_name)
    return FixedRunsSetup(model=FixedRunsSearch(folder, options.model_name))


def check_first_stage_data(system: Any, tasks: list[Any]) -> None:
    """A first stage of fixed runs (``first_stage`` a runs folder) made on other data than the data scored is refused
    as ``runs`` is (:func:`refuse_other_data`); the caller skips this with ``allow_other_data``."""
    first = getattr(system, "first_stage", None)
    if first is None or first.runs is None or not Path(first.runs).expanduser().is_dir():
        return  # one file is refused as a first stage when the search is built (a runs folder, not one file)
    from complexir.runs.folder import RunsFolder

    folder = RunsFolder(first.runs)
    for task in tasks:
        refuse_other_data(folder, task)


def refuse_other_data(folder: Any, task: Any) -> None:
    """A runs folder whose ``runs.json`` says ``task``'s rankings were made on other data than the data scored
    (another build's digest, another Hub revision) is refused, as ``complexir fuse`` refuses it: its document ids
    may name other documents. Demo data against demo data is fine (a newer complexir may ship a changed demo)."""
    from complexir.runs.folder import MANIFEST, RunsError

    recorded = (folder.data(task.metadata.name) or {}).get("revision")
    if recorded is None:
        return
    ours = task.data_provenance()
    if ours.same_data_as(recorded):
        return
    raise RunsError(f"{folder.path / MANIFEST}: the runs of {task.metadata.name} were made on data {recorded!r}, but "
                    f"this run scores {ours.describe()}; score them on the data they ranked (--data-dir), or pass "
                    "--allow-other-data to score them anyway")


def refuse_saving_into(save_folder: Path, runs: Path) -> None:
    """``save_runs`` may not write into (or around) the runs ``runs`` reads: it would rewrite its own input."""
    save, read = save_folder.expanduser().resolve(), runs.expanduser().resolve()
    if read.is_relative_to(save) or (read.is_dir() and save.is_relative_to(read)):
        raise ValueError(f"--save-runs {save_folder} would write into the runs --runs {runs} reads; save them "
                         "to another folder")


def _subsets(task: Any) -> list[str]:
    """The MTEB subsets the task will run (those its local data holds, for a task that allows missing ones)."""
    if getattr(task, "allow_missing_subsets", False) and task.data_dir is not None:
        task.restrict_to_present()
    return list(task.hf_subsets)


def save_runs_writer(save_runs: str | None, model: MtebModel, tasks: list[Any], output: Path,
                     runs: str | None = None) -> tuple[MtebModel | RecordingSearch, RunsFolderWriter | None]:
    """``model`` wrapped to record its rankings into ``save_runs`` ("": the default folder under ``output``), and
    the recorder; ``(model, None)`` when ``save_runs`` is None."""
    if save_runs is None:
        return model, None
    import mteb

    from complexir.runs.folder import RecordingSearch, RunsFolderWriter

    meta = model.mteb_model_meta
    if save_runs:
        folder = Path(save_runs).expanduser()
    else:  # mteb's own result path for this model (experiments included), under runs/ instead of results/
        results_root = output / "results"
        folder = output / RUNS_FOLDER / mteb.ResultCache(output).get_task_result_path("_", meta).parent.relative_to(
            results_root)
    by_name = {task.metadata.name: task for task in tasks}

    def data(name: str) -> dict[str, Any] | None:
        task = by_name.get(name)
        return task.data_provenance().as_dict() if task is not None else None

    if runs:
        refuse_saving_into(folder, Path(runs))
    if meta.name is None:
        raise ValueError("the model has no name to file its runs under: give --model-name")
    writer = RunsFolderWriter(folder, meta.name, meta.revision, None)
    return RecordingSearch(model, writer, data=data), writer


@dataclass(frozen=True)
class SavedRuns:
    """The runs folder a run wrote (``save_runs``)."""

    path: Path
    files: int
    depth: int | None


def close_save_runs(writer: RunsFolderWriter | None) -> SavedRuns | None:
    """``runs.json`` for the run files written, and what was written (None: nothing to describe)."""
    if writer is None or not writer.tasks:
        return None
    writer.close()
    from complexir.runs.folder import SUFFIX

    return SavedRuns(writer.path.resolve(), sum(1 for _ in writer.path.glob(f"*/*/*{SUFFIX}")), writer.depth)
