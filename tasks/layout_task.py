"""The one mechanism that turns a subset of a standard-layout benchmark into an MTEB retrieval task.

A task class names its benchmark folder and maps each of its MTEB subsets (``"default"`` for a task with a
single subset) to a layout subset; MTEB's own ``RetrievalDatasetLoader`` then reads the ``<subset>-corpus``,
``-queries``, ``-qrels`` (and ``-top_ranked``) configs natively, from a local folder or the Hub repo in the
task's metadata. Nothing is copied.

Where the data comes from is a :class:`~complexir.hub.data_source.DataSource` handed to the task, first match wins:
1. ``task.source`` on the instance (``complexir run`` sets it; ``task.data_dir = folder`` is the short form),
2. ``default_source`` on the class (the mteb hook sets it from ``COMPLEXIR_DATA_DIR`` for the plain ``mteb`` CLI),
3. the Hub repo ``metadata.dataset["path"]`` at ``metadata.dataset["revision"]``; when that repo is missing (not
   on the Hub, or offline and not cached), the benchmark built from its upstream release, once, into a local cache
   (``complexir.hub.build_cache``; offline, the cached build), for the subsets this task reads.
No task reads the environment.

Evaluation goes through MTEB's public entry points only: :meth:`evaluate` (MTEB's, then the judged queries
without a relevant document counted in with score 0, and the per-query scores written where ``per_query_file``
says) and :meth:`task_specific_scores` (extra measures).
"""

from __future__ import annotations

import logging
import math
import os
import tempfile
from collections.abc import Callable, Mapping
from importlib import import_module
from pathlib import Path
from typing import Any, ClassVar, TypeVar, cast

from mteb.abstasks.retrieval import AbsTaskRetrieval
from mteb.abstasks.retrieval_dataset_loaders import RetrievalSplitData
from mteb.abstasks.task_metadata import TaskMetadata
from mteb.models import MTEBModels
from mteb.types import RelevantDocumentsType
from pydantic import PrivateAttr

from complexir.hub import provenance
from complexir.hub.data_source import DataSource
from complexir.hub.provenance import DataProvenance
from complexir.layout import reader
from complexir.layout.folder import BenchmarkFolder
from complexir.metrics import adhoc_per_query, max_depth, parse_measure, rank_run
from complexir.metrics.adhoc import JUDGED_CEILING_KEY, judged_ceiling_per_query
from complexir.mteb.internals import card_dataset_loader
from complexir.registry.benchmarks import BenchmarkSpec
from complexir.runs.folder import ExpectsTaskIds
from complexir.runs.results import write_per_query

from .descriptive_stats import write_task_statistics

logger = logging.getLogger(__name__)

# MTEB score keys that are means over queries where a query without a relevant document scores 0: the
# ones a judged-but-positive-less query (dropped from the layout) must still count in, as trec_eval/ndeval do.
QUERY_MEAN_PREFIXES = ("ndcg_at_", "map_at_", "recall_at_", "precision_at_", "mrr_at_", "hit_rate_at_",
                       "alpha_ndcg_at_", "strecall_at_", "accuracy")  # MTEB's accuracy is the mean recall@1

# MTEB's ad hoc score keys → our measures, at each of the task's cutoffs (trec_eval semantics; tests check equality
# with pytrec_eval, which MTEB itself uses). hit_rate@k (trec_eval success) and accuracy (MTEB: recall@1) follow
# from recall: a query has a relevant document in its top k exactly when its recall@k is above 0.
MTEB_ADHOC = ("nDCG", "AP", "R", "P", "RR")
# Reported by every task beside MTEB's scores: how much of the top 10 was judged (ir_measures' Judged@10), so a
# score read against pooled or sparse judgments says how far it can be trusted (``judged_at_10``).
# A judged query never ranked (no positive: dropped from the layout) scores 0 here as on every measure.
JUDGED_MEASURES = ("Judged@10",)
def mteb_adhoc_per_query(qrels: Mapping[str, Mapping[str, int]], results: dict[str, dict[str, float]],
                         k_values: list[int], extra: tuple[str, ...] = ()) -> dict[str, dict[str, float]]:
    """Per-query values of every ad hoc score MTEB reports (``ndcg_at_10``, ``hit_rate_at_5``, ``accuracy``...),
    for every query of ``qrels``, at the cutoffs ``k_values``, and of the ``extra`` measures (ir_measures names,
    keyed by their MTEB score key from the measure registry: ``RR`` -> ``mrr``): the values every mean is computed
    from."""
    names = [f"{name}@{k}" for name in MTEB_ADHOC for k in k_values] + list(extra) + list(JUDGED_MEASURES)
    if not names:
        return {}
    measures = {parse_measure(m).mteb_key: m for m in names}
    rankings = rank_run(results, depth=max_depth(measures.values()))
    per_query = adhoc_per_query(qrels, rankings, list(measures.values()))
    out = {key: per_query[measure] for key, measure in measures.items()}
    out[JUDGED_CEILING_KEY] = judged_ceiling_per_query(qrels, rankings)
    for k in k_values:
        out[f"hit_rate_at_{k}"] = {q: 1.0 if v > 0 else 0.0 for q, v in out[f"recall_at_{k}"].items()}
    if 1 in k_values:
        out["accuracy"] = dict(out["recall_at_1"])
    return out


class LayoutRetrievalTask(AbsTaskRetrieval):
    """An ``AbsTaskRetrieval`` reading one benchmark folder in the standard layout.

    Subclasses set ``metadata`` (a complete ``TaskMetadata``), ``benchmark_dir`` (the benchmark's folder
    name under a data dir, e.g. ``"crumb"``) and ``layout_subsets`` (MTEB subset → layout subset).
    """

    benchmark_dir: ClassVar[str]
    layout_subsets: ClassVar[dict[str, str]]
    #: where tasks without a source of their own read (None: the Hub); set by the mteb hook, not by tasks
    default_source: ClassVar[DataSource | None] = None
    source: DataSource | None = None
    #: where :meth:`evaluate` writes this task's per-query scores (JSON), when set; ``complexir run`` sets it
    per_query_file: Path | None = None
    # Every split the layout holds for this task. ``metadata.eval_splits`` (what MTEB scores by default, and what
    # benchmark means average) is the test split only; the others are chosen explicitly: ``complexir run --split
    # validation``, ``mteb run --eval-splits validation`` or ``mteb.get_task(name, eval_splits=["validation"])``.
    available_splits: ClassVar[tuple[str, ...]] = ("test",)
    # True: a local data dir may hold only some of the subsets; the task then runs those (its hf_subsets shrink)
    allow_missing_subsets: ClassVar[bool] = False
    #: measures reported beyond MTEB's own at ``k_values`` (ir_measures names: the benchmark's official measures,
    #: e.g. CRUMB's uncut RR), with per-query values, under their MTEB score keys from the measure registry
    extra_measures: ClassVar[tuple[str, ...]] = ()
    #: True: hand the model the corpus config's parquet shards (``streaming_search.ParquetSource``) instead of
    #: loading the corpus; ``complexir run`` sets it for the streaming engines, whose search reads them batch by
    #: batch, so the corpus is never held whole. Queries, qrels and the rest load as usual.
    corpus_from_shards: bool = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # hf_subset → split → MTEB-style metric key → query id → value; filled while evaluating
        self.per_query_scores: dict[str, dict[str, dict[str, dict[str, float]]]] = {}
        # layout subset → split → judged queries without a relevant document (from the card; they score 0)
        self._zero_score_queries: dict[str, dict[str, list[str]]] = {}
        self._cards: dict[tuple[str, str | None], BenchmarkFolder] = {}  # each card this task read, parsed once
        if isinstance(self.metadata, LayoutTaskMetadata):  # mteb asks for the statistics before loading anything
            self.metadata = self.metadata.located_by(self.statistics_folder)

    def statistics_folder(self) -> Path | None:
        """The benchmark folder holding this task's descriptive statistics, found on disk alone (no network, nothing
        loaded): the local data dir's folder; for the Hub, the repo's copy in the Hugging Face cache, else the newest
        build from the upstream release in complexir's cache. None when none of them holds them: mteb then sees no
        statistics (``metadata.descriptive_stats`` is None) until the task has read its data."""
        source = self.source or self.default_source or DataSource.hub()
        name = f"{DESCRIPTIVE_STATS_FOLDER}/{self.metadata.name}.json"
        if source.data_dir is not None:
            folder = source.data_dir / self.benchmark_dir
            return folder if (folder / name).is_file() else None
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(self.metadata.dataset["path"], name, repo_type="dataset",
                                        revision=self.metadata.dataset["revision"])
        if isinstance(cached, str):  # <snapshot>/descriptive_stats/<Task>.json
            return Path(cached).parent.parent
        from complexir.hub import build_cache
        from complexir.registry.benchmarks import get_spec

        try:
            built = build_cache.newest_cached(get_spec(self.benchmark_dir), self.upstream_subsets())
        except KeyError:  # a task whose benchmark is not registered (a test's own)
            return None
        return built if built is not None and (built / name).is_file() else None

    @property
    def data_dir(self) -> Path | None:
        """The local data dir this task reads, None for the Hub."""
        return (self.source or self.default_source or DataSource.hub()).data_dir

    @data_dir.setter
    def data_dir(self, folder: str | os.PathLike | None) -> None:
        self.source = None if folder is None else DataSource.local(folder)

    def data_source(self) -> tuple[str, str | None]:
        """(local folder or Hub repo id, revision) this task reads."""
        source = self.source or self.default_source or DataSource.hub()
        built = self.__dict__.get("_upstream_build")
        if built is not None and built[0] == source:  # decided once: the Hub repo is missing, read the build
            return built[1], None
        return source.locate(self.benchmark_dir, self.metadata.dataset["path"], self.metadata.dataset["revision"],
                             task=self.metadata.name, upstream_build=lambda: self._build_from_upstream(source))

    def _build_from_upstream(self, source: DataSource) -> Path:
        """The benchmark folder built from the upstream release (once per machine; see ``complexir.hub.build_cache``),
        holding :meth:`upstream_subsets`; remembered, so this instance asks the Hub once."""
        from complexir.hub import build_cache
        from complexir.registry.benchmarks import get_spec

        spec = get_spec(self.benchmark_dir)
        folder = build_cache.ensure_built(spec, self.upstream_subsets(),
                                          describe=lambda out: describe_folder(out, spec))
        logger.warning("%s: %s is not on the Hub; reading %s, %s", self.metadata.name, self.metadata.dataset["path"],
                       folder, provenance.of_local_folder(folder).describe())
        self.__dict__["_upstream_build"] = (source, str(folder))
        return folder

    def upstream_subsets(self) -> tuple[str, ...]:
        """The benchmark's subsets (``complexir build --subset`` names) whose build holds this task's data: by
        default those named like one of its layout subsets."""
        from complexir.registry.benchmarks import get_spec

        layouts = set(self.layout_subsets.values())
        return tuple(name for name in get_spec(self.benchmark_dir).subset_names() if name in layouts)

    def card(self, source: str | os.PathLike, revision: str | None = None) -> BenchmarkFolder:
        """The parsed card of a local benchmark folder or Hub repo; this task parses each one once."""
        local = Path(source).expanduser()
        key = (str(local.resolve()) if local.exists() else str(source), revision)
        if key not in self._cards:
            self._cards[key] = BenchmarkFolder.open(key[0], revision)
        return self._cards[key]

    def data_provenance(self) -> DataProvenance:
        """Which data this task reads (Hub repo and commit, local folder and content digest, or the demo), recorded
        as the task's dataset revision so MTEB's result JSON names it; computed once per instance."""
        path, revision = self.data_source()
        cached = self.__dict__.get("_provenance")
        if cached is None or cached[0] != (path, revision):
            prov = provenance.of_source(path, revision)
            self.__dict__["_provenance"] = ((path, revision), prov)
            # a per-instance copy (the class keeps its declared revision); for a Hub repo the resolved commit, which
            # data_source then reads, so the data loaded is the data named
            metadata = self.metadata.model_copy(
                update={"dataset": {**self.metadata.dataset, "revision": prov.revision}})
            if isinstance(metadata, LayoutTaskMetadata):  # statistics of the folder read (none known for the Hub)
                metadata = metadata.reading(path if prov.kind != provenance.HUB else None)
            self.metadata = metadata
            self.__dict__["_provenance"] = (self.data_source(), prov)
            cached = self.__dict__["_provenance"]
        return cached[1]

    def subsets_present(self, data_dir: str | os.PathLike) -> list[str]:
        """The MTEB subsets whose layout subset exists in ``data_dir`` (none without a benchmark folder)."""
        folder = Path(data_dir) / self.benchmark_dir
        if not (folder / "README.md").is_file():
            return []
        present = set(self.card(folder).subsets)
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
        layouts = set(reader.list_subsets(path))  # the folder itself, whatever its name
        present = [s for s, layout in self.layout_subsets.items() if layout in layouts]
        keep = [s for s in (self.hf_subsets or self.layout_subsets) if s in present]
        if not keep:
            raise FileNotFoundError(f"{self.metadata.name}: none of the subsets {sorted(self.layout_subsets.values())} "
                                    f"in {path}")
        skipped = [s for s in (self.hf_subsets or self.layout_subsets) if s not in present]
        if skipped:
            logger.info("%s: %s has no subsets for %s; running %s", self.metadata.name, path, skipped, keep)
        self.hf_subsets = keep
        return self

    def corpus_shards(self, path: str, revision: str | None, layout_subset: str | None) -> Any:
        """The corpus of ``layout_subset`` as parquet shards to stream, when ``corpus_from_shards`` asks for it; else
        None (the corpus is loaded)."""
        if not self.corpus_from_shards:
            return None
        from complexir.systems.streaming_search import ParquetSource

        return ParquetSource(self.card(path, revision).corpus_files(layout_subset))

    def load_split(self, path: str, revision: str | None, hf_subset: str, split: str) -> RetrievalSplitData:
        """One MTEB subset and split, read natively by MTEB's loader (the corpus as shards when
        ``corpus_from_shards``). Override to combine configs."""
        layout = self.layout_subsets[hf_subset]
        return card_dataset_loader(path, revision, split=split, config=layout,
                                   corpus=self.corpus_shards(path, revision, layout)).load()

    def load_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
        if self.data_loaded:
            return
        path, revision = self.data_source()
        logger.info("%s: reading %s", self.metadata.name, self.data_provenance().describe())
        if self.allow_missing_subsets and revision is None:  # a local folder
            self.restrict_to_present()
        self._zero_score_queries = self.card(path, revision).zero_score_queries
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

    # -- evaluation (MTEB's public entry points) -----------------------------------------------------------------
    def evaluate(self, model: MTEBModels, split: str = "test", subsets_to_run: list[str] | None = None, *,
                 encode_kwargs: Any, **kwargs: Any) -> dict[str, dict[str, Any]]:
        """MTEB's evaluation of ``split`` (through :meth:`search_model`), then per subset the judged queries
        without a relevant document counted in with score 0 (:meth:`count_judged_queries`) and the scores about
        the model itself (:meth:`model_scores`); the per-query scores go to ``per_query_file`` when it is set."""
        fixed = model if isinstance(model, ExpectsTaskIds) else None
        if fixed is not None:  # fixed runs: told the ids a run may name, before MTEB filters
            for hf_subset in subsets_to_run or list(self.dataset):
                queries, documents = self.run_ids(hf_subset, split)
                fixed.expect_ids(self.metadata.name, hf_subset, split, queries=queries, documents=documents)
        scores = super().evaluate(self.search_model(model, split), split, subsets_to_run,
                                  encode_kwargs=encode_kwargs, **kwargs)
        out: dict[str, dict[str, Any]] = {}
        for hf_subset, subset_scores in scores.items():
            subset_scores = self.count_judged_queries(dict(subset_scores), hf_subset, split)
            subset_scores.update(self.model_scores(model, hf_subset, split, encode_kwargs))
            if fixed is not None:  # how many queries the run does not rank (they score 0)
                subset_scores.update(fixed.run_scores(self.metadata.name, hf_subset, split))
            main = self.metadata.main_score
            if main not in subset_scores:  # a task that drops a score it cannot compute exactly must say why
                raise RuntimeError(f"{self.metadata.name} ({hf_subset}, {split}): no main score {main!r}; scores "
                                   f"computed: {sorted(k for k in subset_scores if k.startswith(main.split('_')[0]))}")
            subset_scores["main_score"] = subset_scores[main]
            out[hf_subset] = subset_scores
        if self.per_query_file is not None:  # every split so far: the file is whole after each one
            write_per_query(self.per_query_file, self.metadata.name, model.mteb_model_meta, self.per_query_scores,
                            data=self.data_provenance().as_dict())
        return out

    def search_model(self, model: MTEBModels, split: str) -> MTEBModels:
        """The model MTEB evaluates ``split`` with; a task that searches its own way wraps it here."""
        return model

    def run_ids(self, hf_subset: str, split: str) -> tuple[set[str], set[str]]:
        """The ids a fixed run of this subset and split may name (its data loaded, before MTEB drops the queries
        without a positive): its queries, judged ones without a positive included, and the document ids it may name
        besides the corpus's (none here)."""
        data = self.dataset[hf_subset][split]
        queries = set(data["queries"]["id"]) | set(data["relevant_docs"])
        return queries | set(self.zero_score_queries(hf_subset, split)), set()

    def model_scores(self, model: MTEBModels, hf_subset: str, split: str, encode_kwargs: Any) -> dict[str, float]:
        """Scores about the model rather than the ranking (how much of the documents it read); none by default."""
        return {}

    def count_judged_queries(self, scores: dict[str, Any], hf_subset: str, split: str) -> dict[str, Any]:
        """MTEB drops judged queries without a relevant document (it cannot rank for them); trec_eval and ndeval
        average them in as 0 (every measure in ``QUERY_MEAN_PREFIXES`` is 0 for them). A mean with per-query values is
        recomputed exactly from them over all judged queries; one without is rescaled by scored / judged."""
        relevant = self.dataset[hf_subset][split]["relevant_docs"]
        scored = sum(1 for docs in relevant.values() if any(v > 0 for v in docs.values()))
        return self.count_zero_score_queries(scores, hf_subset, split, scored, rescale=QUERY_MEAN_PREFIXES)


    def count_zero_score_queries(self, scores: dict[str, Any], hf_subset: str, split: str, scored: int, *,
                                 rescale: tuple[str, ...], zero: list[str] | None = None,
                                 keys: set[str] | None = None) -> dict[str, Any]:
        """Count the judged queries without a relevant document (``zero``, default: the card's list) in with 0.

        Every score with per-query values (``keys`` of them, default all) becomes their exact mean over every
        judged query, computed from the unrounded values (MTEB rounds its means to 5 decimals); a score under
        ``rescale`` without per-query values is rescaled to all judged queries. Both counts go into ``scores``.
        """
        zero = self.zero_score_queries(hf_subset, split) if zero is None else zero
        per_query = self.per_query_scores.get(hf_subset, {}).get(split, {})
        exact = set(per_query) if keys is None else keys & set(per_query)
        for key in exact:
            values = per_query[key]
            values.update({q: 0.0 for q in zero if q not in values})
            scores[key] = math.fsum(values.values()) / len(values) if values else 0.0
        if zero:
            factor = scored / (scored + len(zero))
            for key, value in scores.items():
                if key not in exact and key.startswith(rescale) and isinstance(value, (int, float)):
                    scores[key] = value * factor
        scores["judged_queries"] = float(scored + len(zero))
        scores["judged_queries_without_positive"] = float(len(zero))
        return scores

    def task_specific_scores(
        self,
        scores: dict[str, dict[str, float]],
        qrels: RelevantDocumentsType,
        results: dict[str, dict[str, float]],
        hf_split: str,
        hf_subset: str,
    ) -> dict[str, float]:
        """Keep the per-query value of every ad hoc score MTEB reports (MTEB keeps only rounded means): the means
        are then recomputed from them, exactly (:meth:`count_zero_score_queries`). Subclasses add their own
        measures here."""
        self.per_query_scores.setdefault(hf_subset, {})[hf_split] = mteb_adhoc_per_query(
            qrels, results, list(self.k_values), self.extra_measures)
        return {}


TaskT = TypeVar("TaskT", bound=LayoutRetrievalTask)

DESCRIPTIVE_STATS_FOLDER = "descriptive_stats"  # in a benchmark folder: <Task>.json, mteb's statistics of that data


def write_descriptive_statistics(folder: Path, spec: BenchmarkSpec) -> list[Path]:
    """mteb's descriptive statistics (what ``AbsTask.calculate_descriptive_statistics`` computes, with the corpus
    streamed: ``descriptive_stats.task_statistics``) of every task of ``spec`` (its task module's ``TASKS``) whose
    data ``folder`` holds, computed on that data and stored in it as ``descriptive_stats/<Task>.json``; the tasks
    read them from there (``mteb``'s metadata checks need them)."""
    folder = Path(folder).resolve()
    written = []
    with tempfile.TemporaryDirectory() as tmp:
        # tasks read <data dir>/<benchmark folder name>: a folder built under another name is linked under its own
        data_dir = folder.parent
        if folder.name != spec.folder:
            data_dir = Path(tmp)
            (data_dir / spec.folder).symlink_to(folder, target_is_directory=True)
        for cls in import_module(spec.task_module).TASKS:
            task = task_to_describe(cls, data_dir)
            if task is None:
                continue
            task.corpus_from_shards = True  # streamed, batch by batch: mteb's own method holds the whole corpus
            path = folder / DESCRIPTIVE_STATS_FOLDER / f"{cls.metadata.name}.json"
            write_task_statistics(task, path)
            written.append(path)
    return written


def describe_folder(folder: Path, spec: BenchmarkSpec) -> list[Path]:
    """What a build adds to a finished benchmark folder before it is put in place: mteb's descriptive statistics
    of every task it serves (:func:`write_descriptive_statistics`) and the Hub Benchmark's ``eval.yaml``
    (``hub_benchmark.write_eval_config``)."""
    from .hub_benchmark import write_eval_config

    return [*write_descriptive_statistics(folder, spec), write_eval_config(folder, spec)]


def task_to_describe(cls: type[LayoutRetrievalTask], data_dir: Path) -> LayoutRetrievalTask | None:
    """A ``cls`` task reading ``data_dir``, ready for its statistics (its metadata's subsets those the folder holds),
    or None if the folder does not hold its data."""
    task = cls()
    if not task.available_in(data_dir):
        return None
    task.data_dir = data_dir
    task.data_provenance()  # points the task's metadata at this folder's statistics
    if task.allow_missing_subsets:
        task.restrict_to_present()
        # mteb's statistics walk the metadata's subsets: only those this folder holds
        langs = task.metadata.eval_langs
        if isinstance(langs, dict):
            task.metadata = task.metadata.model_copy(update={"eval_langs": {s: langs[s] for s in task.hf_subsets}})
    return task


class LayoutTaskMetadata(TaskMetadata):
    """mteb's ``TaskMetadata``, whose descriptive statistics are those of the data the task reads.

    mteb keeps a task's statistics inside its own package; ours depend on the build (the demo, a local build, the
    Hub repo), so ``complexir build`` computes them with mteb's own code and stores them in the benchmark folder
    (``descriptive_stats/<Task>.json``), and a task reading that folder reads them from there.
    """

    _data_folder: Path | None = PrivateAttr(default=None)
    #: the task's :meth:`LayoutRetrievalTask.statistics_folder`: where its source's statistics are, before any load
    _locate: Callable[[], Path | None] | None = PrivateAttr(default=None)

    @property
    def descriptive_stat_path(self) -> Path:
        folder = self._data_folder
        if folder is None and self._locate is not None:
            folder = self._locate()
        if folder is not None:
            return folder / DESCRIPTIVE_STATS_FOLDER / f"{self.name}.json"
        return super().descriptive_stat_path

    def __getstate__(self) -> dict[Any, Any]:
        """Pickled (the Ray engine ships the metadata to its workers) without ``_locate``: a method of the task, whose
        pickle would carry the task and the model it is evaluating. A copy elsewhere needs no locating: it is asked
        for scores, not for statistics."""
        state = super().__getstate__()
        private = state.get("__pydantic_private__")
        if private and private.get("_locate") is not None:
            state = {**state, "__pydantic_private__": {**private, "_locate": None}}
        return state

    def located_by(self, locate: Callable[[], Path | None]) -> LayoutTaskMetadata:
        """A copy whose statistics, until :meth:`reading` names the folder read, are in the folder ``locate()``
        finds (asked each time: a task's source may be set after it was made)."""
        copy = self.model_copy()
        copy._locate = locate
        return copy

    def reading(self, folder: str | os.PathLike | None) -> LayoutTaskMetadata:
        """A copy whose descriptive statistics are those stored in the benchmark folder ``folder``."""
        copy = self.model_copy()
        copy._data_folder = None if folder is None else Path(folder)
        return copy


def spec_metadata(spec: BenchmarkSpec, *, name: str, description: str, main_score: str,
                  **fields: Any) -> LayoutTaskMetadata:
    """A task's ``TaskMetadata`` with what its benchmark spec says (reference, Hub repo, licence, citation);
    ``fields`` give the rest (dates, domains, languages, ...) and may override the defaults below. ``name`` must be
    one of ``spec.task_names()``: the CLI checks task names against the registry before importing any task."""
    if name not in spec.task_names():
        raise ValueError(f"task name {name!r} is not one of {spec.name}'s: name each task spec.task_name(subset, "
                         f"variant), with the variant in the spec's task_variants ({list(spec.task_names())})")
    values: dict[str, Any] = {
        "type": "Retrieval", "category": "t2t", "modalities": ["text"], "eval_splits": ["test"],
        "eval_langs": ["eng-Latn"], "task_subtypes": [], "license": spec.license,
        "annotations_creators": "derived", "dialect": [], "sample_creation": "found",
    }
    values.update(fields)
    return LayoutTaskMetadata(name=name, description=description, reference=spec.reference, main_score=main_score,
                        dataset={"path": spec.hub_id, "revision": spec.hub_revision},
                        bibtex_citation=spec.citation, **values)


def define_task(base: type[TaskT], metadata: TaskMetadata, doc: str, **attributes: Any) -> type[TaskT]:
    """A task class named after its metadata, defined in ``base``'s module with ``attributes`` set by name."""
    name = metadata.name
    return cast(type[TaskT], type(name, (base,), {"__module__": base.__module__, "__qualname__": name, "__doc__": doc,
                                "metadata": metadata, **attributes}))
