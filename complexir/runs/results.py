"""Results I/O: the folders ``complexir run`` (or plain ``mteb run``) writes, and reading them back.

Layout — mteb's result cache: ``<output>/results/<model__name>/<revision>/<Task>.json``; beside it the
per-query scores ``complexir run`` keeps for significance tests, ``<output>/per_query/<model__name>/
<revision>/<Task>.json``. An experiment (e.g. ``complexir run --long-docs chunk``) sits one level down in
both, in mteb's ``<revision>/experiments/<experiment>/`` folder.

The tasks write the per-query files through :func:`write_per_query`, where ``run`` tells them to;
``report`` reads a whole run back with :func:`load_run`. Both sides of the layout live here so they cannot drift apart.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from complexir.layout.atomic import write_file

if TYPE_CHECKING:
    from mteb.results import TaskResult

logger = logging.getLogger(__name__)

#: mteb files a model's experiments (``ModelMeta.experiment_kwargs``) in ``<model>/<revision>/experiments/<name>/``
#: (``ResultCache.get_task_result_path``); ``complexir run`` mirrors that layout under ``per_query/``.
EXPERIMENTS_FOLDER = "experiments"
RESULTS_FOLDER = "results"
PER_QUERY_FOLDER = "per_query"


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
    #: task → the data its per-query file says it scored (``DataProvenance.as_dict()``), where the file names it
    per_query_data: dict[str, dict[str, str]] = field(default_factory=dict)
    #: task → the file its result was read from, and the file its per-query scores were read from
    result_files: dict[str, Path] = field(default_factory=dict)
    per_query_files: dict[str, Path] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.label = self.label or self.model


# ------------------------------------------------------------------------------------------- writing


def per_query_path(output: Path, meta: Any, task_name: str) -> Path:
    """Where a task's per-query scores go: mteb's result path with ``per_query`` for ``results``.

    mteb's own ``ResultCache.get_task_result_path`` builds the path, so an experiment (``experiment_kwargs``
    on the meta, e.g. ``--long-docs chunk``) lands in ``<model>/<revision>/experiments/<name>/`` exactly
    like its result JSON and never overwrites the plain run's scores.
    """
    import mteb

    results_root = output / RESULTS_FOLDER
    result_path = mteb.ResultCache(output).get_task_result_path(task_name, meta)
    return output / PER_QUERY_FOLDER / result_path.relative_to(results_root)


def write_per_query(path: Path, task_name: str, meta: Any, scores: dict[str, Any],
                    data: dict[str, str] | None = None) -> None:
    """One task's per-query scores (subset → split → measure → query → value): what ``complexir report
    --baseline`` tests significance on. The task writes them at the end of its evaluation, to the path
    ``complexir run`` gives it (:func:`per_query_path`); ``meta`` is the evaluated model's (the outermost wrapper),
    so the file sits beside the result JSON mteb writes."""
    payload = {"task": task_name, "model": meta.name, "revision": meta.revision,
               "experiment": meta.experiment_name, "scores": scores}
    if meta.experiment_kwargs:  # what the experiment is, in full (its name may be a hash): a two-stage system's
        payload["experiment_kwargs"] = meta.experiment_kwargs  # first stage and depth, --trust-remote-code, prompts
    if data is not None:  # the data scored (complexir.hub.provenance)
        payload["data"] = data
    # atomic: never a half-written file; no indent: json's C encoder writes the thousands of values per measure
    # several times faster than the indenting Python one
    write_file(path, json.dumps(payload, sort_keys=True))


class _WrittenAtomically:
    """A ``TaskResult`` whose ``to_disk`` writes a temporary sibling and renames it into place (mteb's own writes
    the file in place: a full disk or a kill leaves it cut short, the previous result lost)."""

    def __init__(self, result: Any):
        self._result = result

    def __getattr__(self, name: str) -> Any:
        return getattr(self._result, name)

    def to_disk(self, path: Path) -> None:
        write_file(path, self._result.to_disk)


def result_cache(output: Path) -> Any:
    """``mteb.ResultCache(output)`` that saves each result JSON atomically (:class:`_WrittenAtomically`): what
    ``complexir run`` hands ``mteb.evaluate``."""
    import mteb

    class AtomicResultCache(mteb.ResultCache):
        def save_to_cache(self, task_result: Any, *args: Any, **kwargs: Any) -> None:
            # mteb calls only the result's to_disk: the wrapper stands in for the TaskResult it wraps
            super().save_to_cache(cast("TaskResult", _WrittenAtomically(task_result)), *args, **kwargs)

    return AtomicResultCache(output)


# ------------------------------------------------------------------------------------------- reading


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
    if (path / RESULTS_FOLDER).is_dir():
        path = path / RESULTS_FOLDER
    folders = sorted({p.parent for p in path.rglob("*.json") if p.name != "model_meta.json"
                      and PER_QUERY_FOLDER not in p.relative_to(path).parts})
    if not folders:
        raise FileNotFoundError(f"no MTEB result JSON under {path}")
    return folders


def _meta_of(folder: Path) -> Any | None:
    """The ``ModelMeta`` mteb saved beside the results (``model_meta.json``), if any."""
    from mteb.models.model_meta import ModelMeta

    meta_file = folder / "model_meta.json"
    if not meta_file.is_file():
        return None
    payload = _read_json(meta_file)
    if not isinstance(payload, dict):
        raise ValueError(f"{meta_file}: expected a JSON object")
    return ModelMeta.model_construct(**payload)


def _read_json(file: Path) -> Any:
    """The JSON in ``file``; a truncated or broken file is a ``ValueError`` naming the file and line."""
    try:
        return json.loads(file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ValueError(f"{file}:{error.lineno}: not valid JSON ({error.msg}; truncated?)") from None


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
    return _load(folders[0])


def _load(found: _ResultFolder) -> ModelRun:
    """The run in one result folder, with its per-query scores."""
    from mteb.results import TaskResult

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
        _read_json(file)  # a truncated or broken file is named here, with its line
        try:
            result = TaskResult.from_disk(file)
        except (ValueError, KeyError, TypeError) as error:  # pydantic's ValidationError is a ValueError
            message = " ".join(str(error).split())[:300]
            raise ValueError(f"{file}: not an MTEB result file ({type(error).__name__}: {message})") from None
        run.task_results[result.task_name] = result
        run.result_files[result.task_name] = file
    # complexir run's per_query/ mirrors results/ (experiments included); a folder may also hold its own.
    candidates = []
    if len(folder.parents) > (3 if found.experiment else 1) + 1:
        root = found.results_root
        candidates.append(root.parent / PER_QUERY_FOLDER / folder.relative_to(root))
    candidates.append(folder / PER_QUERY_FOLDER)
    for per_query_dir in candidates:
        for file in sorted(per_query_dir.glob("*.json")) if per_query_dir.is_dir() else []:
            payload = _read_json(file)
            try:
                _check_per_query_shape(file, payload["scores"])
                run.per_query[payload["task"]] = payload["scores"]
                run.per_query_files[payload["task"]] = file
                if payload.get("data") is not None:
                    run.per_query_data[payload["task"]] = payload["data"]
            except (KeyError, TypeError) as error:
                raise ValueError(f"{file}: not a per-query score file (expected keys 'task' and 'scores')") from error
    logger.info("%s (%s): %d task result(s), per-query scores for %d", run.label, run.revision,
                len(run.task_results), len(run.per_query))
    return run


def _check_per_query_shape(file: Path, scores: Any) -> None:
    """``scores`` as :func:`write_per_query` writes them (subset -> split -> measure -> query -> number), else a
    ValueError naming the file and where it departs."""
    def number(value: Any) -> bool:
        return isinstance(value, (int, float)) and not isinstance(value, bool)

    if not isinstance(scores, dict):
        raise ValueError(f"{file}: 'scores' must be an object (subset -> split -> measure -> query -> number)")
    for subset, splits in scores.items():
        for split, measures in (splits.items() if isinstance(splits, dict) else [(None, None)]):
            for measure, values in (measures.items() if isinstance(measures, dict) else [(None, None)]):
                if not isinstance(values, dict) or not all(number(v) for v in values.values()):
                    where = "/".join(str(part) for part in (subset, split, measure) if part is not None)
                    raise ValueError(f"{file}: scores/{where:.200}: expected query -> number (subset -> split -> "
                                     "measure -> query -> number); not a per-query score file complexir wrote")


def load_runs(path: str | Path) -> list[ModelRun]:
    """Every run under ``path`` (each model, revision and experiment folder of a ``complexir run`` or ``mteb run``
    output), in folder order: what ``complexir compare`` reads from each folder it is given."""
    return [_load(_ResultFolder.of(folder)) for folder in _model_folders(Path(path))]
