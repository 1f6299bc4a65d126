"""The one mechanism that turns a subset of a standard-layout benchmark into an MTEB retrieval task.

A task class names its benchmark folder and maps each of its MTEB subsets (``"default"`` for a task with a
single subset) to a layout subset; MTEB's own ``RetrievalDatasetLoader`` then reads the ``<subset>-corpus``,
``-queries``, ``-qrels`` (and ``-top_ranked``) configs natively, from a local folder or the Hub repo in the
task's metadata. Nothing is copied.

Where the data comes from, first match wins:
1. ``task.data_dir`` set on the instance (``complexir run --data-dir`` sets it),
2. the ``COMPLEXIR_DATA_DIR`` environment variable: a folder holding one folder per benchmark,
3. the Hub repo ``metadata.dataset["path"]`` at ``metadata.dataset["revision"]``.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, ClassVar

from mteb.abstasks.retrieval import AbsTaskRetrieval
from mteb.abstasks.retrieval_dataset_loaders import RetrievalDatasetLoader, RetrievalSplitData
from mteb.abstasks.task_metadata import TaskMetadata

from complexir import reader
from complexir.benchmarks import BenchmarkSpec
from complexir.metrics import adhoc_per_query, max_depth, parse_measure, rank_run

logger = logging.getLogger(__name__)

DATA_DIR_ENV = "COMPLEXIR_DATA_DIR"

# Per-query scores kept for significance tests, MTEB-style keys → our measure names (the same maths as
# trec_eval: tests check equality with pytrec_eval, which MTEB itself uses).
# MTEB score keys that are means over queries where a query without a relevant document scores 0: the
# ones a judged-but-positive-less query (dropped from the layout) must still count in, as trec_eval/ndeval do.
QUERY_MEAN_PREFIXES = ("ndcg_at_", "map_at_", "recall_at_", "precision_at_", "mrr_at_", "hit_rate_at_",
                       "alpha_ndcg_at_", "strecall_at_")

PER_QUERY_ADHOC = {parse_measure(name).mteb_key: name for name in ("nDCG@10", "nDCG@20", "R@10", "R@100", "AP@10",
                                                                  "RR@10")}


class LayoutRetrievalTask(AbsTaskRetrieval):
    """An ``AbsTaskRetrieval`` reading one benchmark folder in the standard layout.

    Subclasses set ``metadata`` (a complete ``TaskMetadata``), ``benchmark_dir`` (the benchmark's folder
    name under a data dir, e.g. ``"crumb"``) and ``layout_subsets`` (MTEB subset → layout subset).
    """

    benchmark_dir: ClassVar[str]
    layout_subsets: ClassVar[dict[str, str | None]]
    data_dir: str | os.PathLike | None = None
    # True: a local data dir may hold only some of the subsets; the task then runs those (its hf_subsets shrink)
    allow_missing_subsets: ClassVar[bool] = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # hf_subset → split → MTEB-style metric key → query id → value; filled while evaluating
        self.per_query_scores: dict[str, dict[str, dict[str, dict[str, float]]]] = {}
        # layout subset → split → judged queries without a relevant document (from the card; they score 0)
        self._zero_score_queries: dict[str, dict[str, list[str]]] = {}

    def data_source(self) -> tuple[str, str | None]:
        """(local folder or Hub repo id, revision) this task reads."""
        base = self.data_dir or os.environ.get(DATA_DIR_ENV)
        if base:
            folder = Path(base).expanduser() / self.benchmark_dir
            if not folder.is_dir():
                raise FileNotFoundError(
                    f"{self.metadata.name}: no benchmark folder {folder} (data dir {base!r}); build it with "
                    f"`complexir build {self.benchmark_dir} --out {folder}`"
                )
            return str(folder.resolve()), None
        return self.metadata.dataset["path"], self.metadata.dataset["revision"]

    def subsets_present(self, data_dir: str | os.PathLike) -> list[str]:
        """The MTEB subsets whose layout subset exists in ``data_dir`` (none without a benchmark folder)."""
        folder = Path(data_dir) / self.benchmark_dir
        if not (folder / "README.md").is_file():
            return []
        present = set(reader.list_subsets(folder))
        return [s for s, layout in self.layout_subsets.items() if layout in present]

    def available_in(self, data_dir: str | os.PathLike) -> bool:
        """Whether ``data_dir`` holds every layout subset this task reads (demo folders hold a few), or, for a
        task with ``allow_missing_subsets``, at least one."""
        present = self.subsets_present(data_dir)
        return bool(present) if self.allow_missing_subsets else len(present) == len(self.layout_subsets)

    def restrict_to_present(self) -> LayoutRetrievalTask:
        """Keep only the hf_subsets whose layout subset exists in the local data dir (``allow_missing_subsets``
        tasks). Call it before ``mteb.evaluate`` so results list exactly the subsets run; ``load_data`` calls it
        too."""
        path, revision = self.data_source()
        if revision is not None:  # a Hub repo: every subset is expected
            return self
        present = self.subsets_present(Path(path).parent)
        keep = [s for s in (self.hf_subsets or self.layout_subsets) if s in present]
        if not keep:
            raise FileNotFoundError(f"{self.metadata.name}: none of the subsets {sorted(self.layout_subsets.values())} "
                                    f"in {path}")
        skipped = [s for s in (self.hf_subsets or self.layout_subsets) if s not in present]
        if skipped:
            logger.info("%s: %s has no subsets for %s; running %s", self.metadata.name, path, skipped, keep)
        self.hf_subsets = keep
        return self

    def load_split(self, path: str, revision: str | None, hf_subset: str, split: str) -> RetrievalSplitData:
        """One MTEB subset and split, read natively by MTEB's loader. Override to combine configs."""
        return RetrievalDatasetLoader(
            hf_repo=path, revision=revision, split=split, config=self.layout_subsets[hf_subset]
        ).load()

    def load_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
        if self.data_loaded:
            return
        path, revision = self.data_source()
        logger.info("%s: reading %s", self.metadata.name, path)
        if self.allow_missing_subsets and revision is None:  # a local folder
            self.restrict_to_present()
        self._zero_score_queries = reader.zero_score_queries(path, revision)
        self.dataset = {
            hf_subset: {split: self.load_split(path, revision, hf_subset, split) for split in self.eval_splits}
            for hf_subset in self.layout_subsets
            if self.hf_subsets is None or hf_subset in self.hf_subsets
        }
        self.dataset_transform(num_proc=num_proc)
        self.data_loaded = True

    def zero_score_queries(self, hf_subset: str, split: str) -> list[str]:
        """Judged queries of this subset and split that have no relevant document: they score 0 in every mean."""
        return self._zero_score_queries.get(self.layout_subsets[hf_subset], {}).get(split, [])

    def _evaluate_subset(self, model: Any, data_split: RetrievalSplitData, *, hf_split: str, hf_subset: str,
                         **kwargs: Any) -> dict[str, Any]:
        """MTEB's evaluation, then the judged queries without a relevant document counted in with score 0.

        MTEB drops such queries (it cannot rank for them); trec_eval and ndeval average them in as 0. Every
        measure in ``QUERY_MEAN_PREFIXES`` is 0 for them, so the mean over all judged queries is exactly the
        mean over the scored ones times scored / judged.
        """
        scores = super()._evaluate_subset(model, data_split, hf_split=hf_split, hf_subset=hf_subset, **kwargs)
        scored = sum(1 for docs in data_split["relevant_docs"].values() if any(v > 0 for v in docs.values()))
        return self.count_zero_score_queries(scores, hf_subset, hf_split, scored, rescale=QUERY_MEAN_PREFIXES)

    def count_zero_score_queries(self, scores: dict[str, Any], hf_subset: str, split: str, scored: int, *,
                                 rescale: tuple[str, ...]) -> dict[str, Any]:
        """Rescale the means whose keys start with ``rescale`` to all judged queries, give the zero-score
        queries a 0 in the per-query scores, and record both counts in ``scores``."""
        zero = self.zero_score_queries(hf_subset, split)
        if zero:
            factor = scored / (scored + len(zero))
            for key, value in scores.items():
                if key.startswith(rescale) and isinstance(value, (int, float)):
                    scores[key] = value * factor
            for values in self.per_query_scores.get(hf_subset, {}).get(split, {}).values():
                values.update(dict.fromkeys(zero, 0.0))
        scores["judged_queries"] = float(scored + len(zero))
        scores["judged_queries_without_positive"] = float(len(zero))
        return scores

    def task_specific_scores(
        self,
        scores: dict[str, dict[str, float]],
        qrels: dict[str, dict[str, int]],
        results: dict[str, dict[str, float]],
        hf_split: str,
        hf_subset: str,
    ) -> dict[str, float]:
        """Keep per-query scores (MTEB only keeps means); subclasses add their own measures here.

        Only measures whose cutoff the run reaches: a task that retrieves 20 documents has no R@100.
        """
        measures = {key: m for key, m in PER_QUERY_ADHOC.items() if max_depth([m]) <= self._top_k}
        per_query = adhoc_per_query(qrels, rank_run(results, depth=max_depth(measures.values())),
                                    list(measures.values()))
        self.per_query_scores.setdefault(hf_subset, {})[hf_split] = {
            key: per_query[measure] for key, measure in measures.items()
        }
        return {}


def spec_metadata(spec: BenchmarkSpec, *, name: str, description: str, main_score: str,
                  **fields: Any) -> TaskMetadata:
    """A task's ``TaskMetadata`` with what its benchmark spec says (reference, Hub repo, licence, citation);
    ``fields`` give the rest (dates, domains, languages, ...) and may override the defaults below."""
    values: dict[str, Any] = {
        "type": "Retrieval", "category": "t2t", "modalities": ["text"], "eval_splits": ["test"],
        "eval_langs": ["eng-Latn"], "task_subtypes": [], "license": spec.license,
        "annotations_creators": "derived", "dialect": [], "sample_creation": "found",
    }
    values.update(fields)
    return TaskMetadata(name=name, description=description, reference=spec.reference, main_score=main_score,
                        dataset={"path": spec.hub_id, "revision": spec.hub_revision},
                        bibtex_citation=spec.citation, **values)


def define_task(base: type[LayoutRetrievalTask], metadata: TaskMetadata, doc: str,
                **attributes: Any) -> type[LayoutRetrievalTask]:
    """A task class named after its metadata, defined in ``base``'s module with ``attributes`` set by name."""
    name = metadata.name
    return type(name, (base,), {"__module__": base.__module__, "__qualname__": name, "__doc__": doc,
                                "metadata": metadata, **attributes})
