"""``complexir run --release-runs`` (:func:`score_release_runs`): the baseline rankings a benchmark release ships,
each scored as a system.

CoverageBench releases six rankings per collection (BM25 and Qwen3-8B, alone and reranked by Rank1-7B and
Qwen3-Reranker-8B); the build keeps every one, as released, in the ``<subset>-runs`` config (``run``, ``query-id``,
``corpus-id``, ``rank``, ``score``). Here each run becomes a system named ``release/<run name>``: its rankings
are written as a runs folder (``complexir.runs.folder``' layout, under ``--output``/release-runs) and scored through
``complexir.runs.folder.FixedRunsSearch``, ``mteb.evaluate`` and the task's own scoring (the coverage measures from the
nuggets, nDCG@20 from the qrels, the zero-score topics, per-query files); its results are filed like any model's
under ``--output`` with the release's revision as the model revision, and one table per measure shows every run on
every collection (``complexir.cli.release_runs``), with the values the paper's text gives beside ours.

A run's documents are scored as released, also those the built corpus lacks (a document no collection source
holds is judged or not by the qrels alone, as trec_eval and ndeval read a run). Topics a run does not rank score 0.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from complexir.api.options import RunOptions
from complexir.layout.schema import RUNS as RUNS_CONFIG  # the data kind of the <subset>-runs config
from complexir.runs import RELEASED_SYSTEM_PREFIX as SYSTEM_PREFIX

if TYPE_CHECKING:
    from complexir.hub.provenance import DataProvenance
    from complexir.runs.folder import FixedRunsSearch

logger = logging.getLogger(__name__)

#: the measures shown per released run: (label, mteb's key)
MEASURES = (("nDCG@20", "ndcg_at_20"), ("α-nDCG@20", "alpha_ndcg_at_20"), ("StRecall@20", "strecall_at_20"))


def system_of(run: str) -> tuple[str | None, str | None]:
    """(first stage, reranker) a released run's name says: ``bm25`` or ``qwen3-8b``, then ``rank1``,
    ``qwen3-reranker`` or None; (None, None) when the name says neither first stage."""
    name = run.lower().replace("_", "-")
    reranker = "qwen3-reranker" if re.search(r"qwen3-?reranker", name) else "rank1" if "rank1" in name else None
    rest = re.sub(r"qwen3-?reranker(-?8b)?", "", name)
    first = "bm25" if "bm25" in rest else "qwen3-8b" if "qwen3" in rest else None
    return first, reranker if first else None


def published(subset: str, run: str, key: str) -> float | None:
    """The value the paper gives for the released run ``run`` on collection ``subset``
    (``complexir.analysis.published``'s CoverageBench data, whose ``release_runs`` say which run each published
    system is), or None."""
    from complexir.analysis import published as published_data
    from complexir.tasks.coveragebench import RETRIEVAL_TASKS

    system = system_of(run)
    if system[0] is None:
        return None
    data = published_data.load("CoverageBench")
    tasks = [cls.metadata.name for cls in RETRIEVAL_TASKS if cls.layout_subsets["default"] == subset]
    return next((v.value for task in tasks for v in data.for_task(task, key)
                 if data.release_runs.get(v.system) == system), None)


def released_search(folder: Path, name: str) -> FixedRunsSearch:
    """``complexir.runs.folder.FixedRunsSearch`` over one released run's runs folder, filed under ``name``, that also
    accepts the documents the release ranks but the built corpus lacks (the release is the authority on its
    own runs; such a document counts as judged or not by the qrels alone, as trec_eval and ndeval read a run)."""
    from complexir.runs.folder import FixedRunsSearch, RunsFolder

    class ReleasedRunSearch(FixedRunsSearch):
        def expect_ids(self, task: str, hf_subset: str, split: str, *, queries: Any, documents: Any = ()) -> None:
            run = self.folder.run(task, hf_subset, split) or {}
            ranked = {d for docs in run.values() for d in docs}
            super().expect_ids(task, hf_subset, split, queries=queries, documents=set(documents) | ranked)

    return ReleasedRunSearch(RunsFolder(folder), name)


def release_revision(task: Any) -> str:
    """The release the runs came from: the revision the built card names for its upstream release, else the
    built data's own revision."""
    path, _ = task.data_source()
    readme = Path(str(path)) / "README.md"
    if readme.is_file():
        match = re.search(r"\(revision `([^`]+)`\)", readme.read_text(encoding="utf-8"))
        if match:
            return match.group(1)
    return str(task.data_provenance().revision)


def read_release_runs(task: Any, split: str) -> dict[str, dict[str, dict[str, float]]]:
    """run name -> query -> document -> score, from the task's ``<subset>-runs`` config ({} when it has none)."""
    from complexir.layout.reader import load

    path, revision = task.data_source()
    layout = task.layout_subsets["default"]
    names = {c.get("config_name") for c in task.card(path, revision).metadata.get("configs") or []}
    if f"{layout}-{RUNS_CONFIG}" not in names:
        return {}
    table = load(path, layout, RUNS_CONFIG, split, revision=revision)
    runs: dict[str, dict[str, dict[str, float]]] = defaultdict(lambda: defaultdict(dict))
    for run, qid, did, score in zip(table["run"], table["query-id"], table["corpus-id"], table["score"], strict=True):
        runs[run][qid][did] = float(score)
    return {name: {q: dict(docs) for q, docs in run.items()} for name, run in runs.items()}


@dataclass
class ReleaseRunsResult:
    """What :func:`score_release_runs` scored: ``scores`` is run name -> collection (subset) -> mteb key -> value,
    for the :data:`MEASURES`."""

    output: Path
    scores: dict[str, dict[str, dict[str, float]]]
    subsets: list[str]  # the collections, in task order
    revisions: list[str]  # the release revisions the runs came from
    data: dict[str, DataProvenance]  # task -> the data it scored

    @property
    def demo(self) -> bool:
        return any(provenance.is_demo for provenance in self.data.values())


def score_release_runs(options: RunOptions | None = None, /, **fields: Any) -> ReleaseRunsResult:
    """Score every released run of the tasks ``options`` select (CoverageBench retrieval tasks) as its own system,
    filed like a model's results under ``options.output`` (checked and written as ``complexir.run`` does)."""
    import mteb

    from complexir.api.run import check_no_other_data, prepare, write_unrounded_result
    from complexir.runs.folder import RunsFolderWriter
    from complexir.runs.results import per_query_path, result_cache

    options = dataclasses.replace(options or RunOptions(), **fields)
    _, _, tasks = prepare(options)  # the system options are checked as a run checks them, and unused
    tasks = [t for t in tasks if not getattr(t, "rerank", False) and hasattr(t, "coverage_per_query")]
    if not tasks:
        raise ValueError("--release-runs scores the released runs of CoverageBench's retrieval tasks: give "
                         "--benchmark CoverageBench or its tasks")
    output = Path(options.output)
    splits = list(options.splits or ("test",))
    # run name -> (task, split) -> rankings; and the release revision each came from
    by_run: dict[str, dict[tuple[str, str], dict[str, dict[str, float]]]] = defaultdict(dict)
    revisions: dict[str, str] = {}
    for task in tasks:
        revision = release_revision(task)  # the card's, read once per task
        for split in splits:
            for run, results in read_release_runs(task, split).items():
                by_run[run][(task.metadata.name, split)] = results
                revisions.setdefault(run, revision)
    if not by_run:
        raise FileNotFoundError("no <subset>-runs config in the data read: build CoverageBench with this complexir "
                                "(it keeps every released run) and pass --data-dir")
    subset_of = {t.metadata.name: t.layout_subsets["default"] for t in tasks}
    by_name = {t.metadata.name: t for t in tasks}
    scores: dict[str, dict[str, dict[str, float]]] = defaultdict(dict)
    for run in sorted(by_run):
        name = f"{SYSTEM_PREFIX}/{run}"
        # the run as a runs folder beside the results (complexir.runs.folder' layout): what --runs would score too
        folder = output / "release-runs" / run.replace("/", "__")
        writer = RunsFolderWriter(folder, name, revisions[run], depth=None)
        for (task_name, split), results in by_run[run].items():
            writer.write(task_name, "default", split, results, data=by_name[task_name].data_provenance().as_dict())
        writer.close()
        model = released_search(folder, name)
        meta = model.mteb_model_meta
        for task in tasks:
            task_name = task.metadata.name
            if not any(key[0] == task_name for key in by_run[run]):
                continue
            task.per_query_file = per_query_path(output, meta, task_name)
            check_no_other_data(output, meta, task)
            result = mteb.evaluate(model, [task], cache=result_cache(output), overwrite_strategy="always")
            task_result = result.task_results[0]
            write_unrounded_result(output, meta, task_result)
            entry = task_result.scores[splits[0]][0]
            scores[run][subset_of[task_name]] = {key: entry[key] for _, key in MEASURES if key in entry}
    return ReleaseRunsResult(output=output, scores=dict(scores), subsets=[subset_of[t.metadata.name] for t in tasks],
                             revisions=sorted(set(revisions.values())),
                             data={t.metadata.name: t.data_provenance() for t in tasks})
