"""MTEB tasks for CRUMB that reproduce the official ``crumb_eval`` numbers for the same ranking.

- ``CRUMB<Task>``: the passage setting of each of the eight tasks. For clinical_trial,
  set_operation_entity_retrieval and tip_of_the_tongue the official protocol is **MaxP**: the passage run is
  collapsed to documents (best passage score; a passage's document is the layout's ``parent-id``, else the id
  before its *last* ``:``) and scored against the full-document qrels (``<task>_full-qrels``). Unlike crumb_eval,
  which splits at the first ``:`` and so merges documents whose ids contain ``:`` (film and Wikipedia titles). A
  fixed run (``complexir run --runs``) may rank the documents themselves: a document id stands for itself.
- ``CRUMB<Task>FullDocument``: the full-document setting of the five tasks that have one.
- ``CRUMB``: the benchmark (the eight passage tasks, the setting the paper's headline numbers use).

Official conventions kept here: labels are already ``int``-cast in the layout (0.5 → 0); paper_retrieval's
recall, precision, MRR and hit rate use its binary qrels (splits ``test_binary``/``validation_binary``); the
official mean runs over every *judged* query, so queries the layout dropped (judged, but no positive after the
cast) count as 0: every mean is the exact mean of the unrounded per-query values over the judged ids the card
records for every benchmark (``complexir.zero_score_queries``). MaxP searches the passages as deep as it takes for
every query's top 1,000 documents (MTEB's deepest cutoff) to be exact (``CRUMBSearch``).

Measures: crumb_eval's defaults (``CRUMB.official_measures``: nDCG@10, nDCG@5, P@10, P@5, R@10, RR, R@1000, R@100,
RR@10) with per-query values, beside MTEB's own. RR (``mrr``) is uncut: over the whole ranking retrieved, 1,000
documents, as over an official run of that depth.

Instructions: the layout's per-query ``instruction`` column is removed before MTEB sees the queries (MTEB 2.26
would append it to every query's text, for plain and instruction models alike). The task's instruction becomes
the task prompt instead, which instruction-tuned MTEB models format with their own template (e.g.
``Instruct: {instruction}\\nQuery: ``) and plain models ignore: a plain model sees the query alone.
"""

from __future__ import annotations

import logging
import math
import os
from collections import Counter
from pathlib import Path
from typing import Any, ClassVar

from datasets import concatenate_datasets
from mteb import Benchmark
from mteb.abstasks.retrieval_dataset_loaders import RetrievalSplitData
from mteb.abstasks.task_metadata import TaskMetadata
from mteb.models import MTEBModels
from mteb.models.model_meta import ModelMeta
from mteb.types import (
    CorpusDatasetType,
    EncodeKwargs,
    QueryDatasetType,
    RelevantDocumentsType,
    RetrievalOutputType,
    TopRankedDocumentsType,
)

from complexir.layout import reader
from complexir.mteb.internals import card_dataset_loader
from complexir.registry.benchmarks import CRUMB, FULL_DOCUMENT_VARIANT, SubsetSpec
from complexir.runs.folder import as_search_model

from .layout_task import (
    QUERY_MEAN_PREFIXES,
    LayoutRetrievalTask,
    define_task,
    mteb_adhoc_per_query,
    spec_metadata,
)

logger = logging.getLogger(__name__)

#: first MaxP passage search: this many times the passages an average document has, per document needed
MAXP_FIRST_DEPTH_FACTOR = 2
#: MTEB score keys that paper_retrieval computes on its binary qrels, as the official code does ("mrr": RR at any
#: cutoff, uncut too)
BINARY_PREFIXES = ("recall_at_", "precision_at_", "mrr", "hit_rate_at_", "accuracy")

INSTRUCTION_NOTE = (
    " Each query carries its task's instruction: instruction-following models receive it as the task prompt "
    "(formatted by the model, e.g. 'Instruct: <instruction>\\nQuery: <query>'); plain models see the query alone."
)


def passage_parent(passage_id: str) -> str:
    """The document of a passage whose layout row has no ``parent-id``: ids are ``<document id>:<chunk index>``,
    and a document id may itself contain ``:`` (Wikipedia and film titles do), so split at the last one."""
    return passage_id.rsplit(":", 1)[0]


def document_of(item: str, parents: dict[str, str], documents: set[str] | frozenset[str] = frozenset()) -> str:
    """The document a ranked id stands for: a passage's parent, a document id (``documents``: a fixed run may rank
    documents, and a document id may contain ``:``) itself, else the id before the last ``:``."""
    return parents.get(item) or (item if item in documents else passage_parent(item))


def maxp_collapse(results: dict[str, dict[str, float]], parents: dict[str, str],
                  documents: set[str] | frozenset[str] = frozenset()) -> dict[str, dict[str, float]]:
    """Passage run → document run: each document scores its best passage (``parents``: passage → document); an id
    in ``documents`` is a document already and stands for itself."""
    out: dict[str, dict[str, float]] = {}
    for qid, passages in results.items():
        docs: dict[str, float] = {}
        for pid, score in passages.items():
            doc = document_of(pid, parents, documents)
            if doc not in docs or score > docs[doc]:
                docs[doc] = score
        out[qid] = docs
    return out


def maxp_exact_documents(passages: dict[str, float], parents: dict[str, str], depth: int,
                         corpus_size: int, documents: set[str] | frozenset[str] = frozenset()) -> int | None:
    """How many of the top documents of one query's MaxP ranking are exact, given its top ``depth`` passages;
    None: all of them (the whole corpus was searched, or the search returned everything it had).

    A document whose best passage is among them has its true (best) score; any other document scores at most the
    last passage kept. So the documents scoring above that last passage are the exact top of the full document
    ranking, ties included (a document tied with the last passage could hide another one, so it is not counted).
    """
    if depth >= corpus_size or len(passages) < depth:
        return None
    floor = min(passages.values())
    return len({document_of(p, parents, documents) for p, s in passages.items() if s > floor})


def top_documents(scores: dict[str, float], k: int) -> dict[str, float]:
    """The top ``k`` of a document run, ties by id descending (trec_eval's order, and MTEB's search's)."""
    if len(scores) <= k:
        return scores
    return dict(sorted(scores.items(), key=lambda item: (item[1], item[0]), reverse=True)[:k])


class CRUMBSearch:
    """MTEB search model for one CRUMB task and split: the split's instruction becomes the query prompt, and for
    MaxP the passage run is collapsed to documents.

    ``splits``: MTEB subset → ``instruction`` (or None) and, for MaxP, ``parents`` (passage → document).
    MaxP returns each query's top ``top_k`` documents (as many as a passage task returns passages), every one of
    them exact: collapsing a prefix of the passage ranking gives an exact prefix of the document ranking
    (:func:`maxp_exact_documents`), so the passages are searched as deep as that prefix needs. The first search
    reads ``MAXP_FIRST_DEPTH_FACTOR`` times the passages of an average document per document needed; a query
    whose exact prefix is still shorter (its top documents have many passages, or ties hide documents) is searched
    again, deeper, until it is exact or the whole corpus is searched.
    """

    def __init__(self, model: MTEBModels, splits: dict[str, dict[str, Any]], *, maxp: bool):
        self.model = model  # what it wraps, for tools that walk wrapper chains (models.wrapped_models)
        self.search_model = as_search_model(model)
        self.splits = splits
        self.maxp = maxp
        self.corpus_size = 0
        self._indexed: dict[str, Any] = {}  # the arguments of the last index call, to index again before a re-search
        #: (hf_subset, hf_split) → the deepest passage search MaxP needed for its exact top documents
        self.passage_depths: dict[tuple[str, str], int] = {}

    @property
    def mteb_model_meta(self) -> ModelMeta:
        return self.model.mteb_model_meta

    def _with_prompt(self, task_metadata: TaskMetadata, hf_subset: str) -> TaskMetadata:
        instruction = self.splits[hf_subset].get("instruction")
        return task_metadata.model_copy(update={"prompt": {"query": instruction}}) if instruction else task_metadata

    def index(self, corpus: CorpusDatasetType, *, task_metadata: TaskMetadata, hf_split: str, hf_subset: str,
              encode_kwargs: EncodeKwargs,
              num_proc: int | None = None, **kwargs: Any) -> None:
        self.corpus_size = len(corpus)
        self._indexed = {"corpus": corpus, "task_metadata": self._with_prompt(task_metadata, hf_subset),
                         "hf_split": hf_split, "hf_subset": hf_subset, "encode_kwargs": encode_kwargs,
                         "num_proc": num_proc, **kwargs}
        self.search_model.index(**self._indexed)

    def search(self, queries: QueryDatasetType, *, task_metadata: TaskMetadata, hf_split: str, hf_subset: str,
               top_k: int, encode_kwargs: EncodeKwargs, top_ranked: TopRankedDocumentsType | None = None,
               num_proc: int | None = None, **kwargs: Any) -> RetrievalOutputType:
        task_metadata = self._with_prompt(task_metadata, hf_subset)

        def search(some_queries: Any, depth: int) -> dict[str, dict[str, float]]:
            return self.search_model.search(
                some_queries, task_metadata=task_metadata, hf_split=hf_split, hf_subset=hf_subset, top_k=depth,
                encode_kwargs=encode_kwargs, top_ranked=top_ranked, num_proc=num_proc, **kwargs)

        if not self.maxp:
            return search(queries, top_k)
        parents = self.splits[hf_subset].get("parents", {})
        documents = set(parents.values())  # a fixed run may rank documents rather than passages
        n_documents = len(documents) or self.corpus_size
        wanted = min(top_k, n_documents)  # documents every query's ranking must hold exactly
        per_document = self.corpus_size / n_documents if n_documents else 1.0
        depth = min(self.corpus_size, max(top_k, math.ceil(MAXP_FIRST_DEPTH_FACTOR * wanted * per_document)))
        results = search(queries, depth)
        pending = list(queries["id"])
        while True:
            short = {}
            for qid in pending:
                exact = maxp_exact_documents(results.get(qid, {}), parents, depth, self.corpus_size, documents)
                if exact is not None and exact < wanted:
                    short[qid] = exact
            if not short:
                break
            # deeper in proportion to what is missing (at least twice as deep), never past the corpus
            depth = min(self.corpus_size, max(2 * depth, math.ceil(depth * wanted / max(min(short.values()), 1))))
            logger.info("%s/%s: MaxP: %d of %d queries have fewer than %d exact documents; searching %d passages",
                        task_metadata.name, hf_split, len(short), len(pending), wanted, depth)
            pending = list(short)
            # MTEB's own search wrapper forgets the corpus after a search (its task_corpus is reset to None): index
            # it again, which only hands it the corpus (MTEB encodes the corpus in search, or through an index backend)
            self.search_model.index(**self._indexed)
            results.update(search(queries.select([i for i, q in enumerate(queries["id"]) if q in short]), depth))
        self.passage_depths[(hf_subset, hf_split)] = depth
        return {qid: top_documents(docs, top_k) for qid, docs in maxp_collapse(results, parents, documents).items()}


class CRUMBTask(LayoutRetrievalTask):
    """One CRUMB task and corpus setting, scored as the official ``crumb_eval`` scores it."""

    benchmark_dir: ClassVar[str] = CRUMB.folder
    crumb_task: ClassVar[str]  # the release's task name, e.g. "clinical_trial"
    full_document: ClassVar[bool] = False  # the <task>_full setting
    maxp: ClassVar[bool] = False  # passage run collapsed to documents, scored on <task>_full qrels
    binary_recall: ClassVar[bool] = False  # recall/precision/MRR/hit rate on the <split>_binary qrels
    available_splits: ClassVar[tuple[str, ...]] = ("test", "validation")  # validation only when asked for
    extra_measures: ClassVar[tuple[str, ...]] = CRUMB.official_measures  # crumb_eval's defaults: uncut RR too

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._extra: dict[str, dict[str, dict[str, Any]]] = {}  # hf_subset → split → binary qrels, parents, prompt
        self._search: CRUMBSearch | None = None  # the wrapper of the last evaluation (its MaxP exact cutoffs)

    # -- data -----------------------------------------------------------------------------------------
    @property
    def qrels_subset(self) -> str:
        """The layout subset whose queries and qrels score this task."""
        return self.crumb_task + "_full" if (self.full_document or self.maxp) else self.crumb_task

    def upstream_subsets(self) -> tuple[str, ...]:
        return (self.crumb_task,)  # builds <task> and, for a full-document task, <task>_full

    def available_in(self, data_dir: str | os.PathLike) -> bool:
        if not super().available_in(data_dir):
            return False
        return self.qrels_subset in self.card(Path(data_dir) / self.benchmark_dir).subsets

    def load_split(self, path: str, revision: str | None, hf_subset: str, split: str) -> RetrievalSplitData:
        """MTEB's loader for the task's own subset; our reader for what MTEB's cannot combine: MaxP's passages
        with the documents' queries and qrels (the passage subset may hold only a corpus), the binary splits."""
        corpus_subset = self.layout_subsets[hf_subset]
        shards = self.corpus_shards(path, revision, corpus_subset)  # None: the corpus is loaded
        if corpus_subset == self.qrels_subset:
            data = card_dataset_loader(path, revision, split=split, config=corpus_subset, corpus=shards).load()
            corpus, queries, qrels = data["corpus"], data["queries"], data["relevant_docs"]
        else:
            corpus = shards if shards is not None else reader.load(path, corpus_subset, "corpus", revision=revision)
            queries = reader.load(path, self.qrels_subset, "queries", split, revision=revision)
            qrels = reader.qrels_dict(reader.load(path, self.qrels_subset, "qrels", split, revision=revision))
        # only what the model reads: extra columns (parent-id, metadata) are not model input
        extra: dict[str, Any] = {}
        if self.maxp:  # MaxP collapses by the layout's parent-id, not by parsing ids
            if shards is not None:  # two columns of the shards, not their text
                table = shards.read_columns([c for c in ("id", "parent-id") if c in shards.schema_names])
                passage_ids = table.column("id").to_pylist()
                parent_ids = table.column("parent-id").to_pylist() if "parent-id" in table.column_names else None
            else:
                passage_ids = list(corpus["id"])
                parent_ids = list(corpus["parent-id"]) if "parent-id" in corpus.column_names else None
            extra["parents"] = {pid: parent or passage_parent(pid) for pid, parent in
                                zip(passage_ids, parent_ids or [None] * len(passage_ids), strict=True)}
        corpus = corpus.select_columns([c for c in ("id", "title", "text") if c in corpus.column_names])
        queries = queries.select_columns([c for c in ("id", "text", "instruction") if c in queries.column_names])
        if self.binary_recall:
            binary_split = split + "_binary"
            extra["binary_qrels"] = reader.qrels_dict(reader.load(path, self.qrels_subset, "qrels", binary_split,
                                                                  revision=revision))
            extra["binary_zero"] = self._zero_score_queries.get(self.qrels_subset, {}).get(binary_split, [])
            # queries with a binary positive but no graded positive are retrieved for too (official recall counts
            # them): MTEB retrieves for the queries in the qrels, so they enter with their documents graded 0
            # (their nDCG is 0; count_judged_queries keeps them out of the graded denominator)
            have = set(queries["id"])
            more = reader.load(path, self.qrels_subset, "queries", binary_split, revision=revision)
            more = more.select([i for i, q in enumerate(more["id"]) if q not in have and q in extra["binary_qrels"]])
            if len(more):
                queries = concatenate_datasets([queries, more.select_columns(queries.column_names)])
                qrels = {**qrels, **{q: dict.fromkeys(extra["binary_qrels"][q], 0) for q in more["id"]}}
        if "instruction" in queries.column_names:
            counts = Counter(queries["instruction"])
            instruction, n = counts.most_common(1)[0]
            if len(counts) > 1:
                logger.warning("%s/%s: %d distinct instructions; the task prompt uses the most common (%d of %d "
                               "queries)", self.metadata.name, split, len(counts), n, len(queries))
            extra["instruction"] = instruction
            queries = queries.remove_columns("instruction")  # else MTEB appends it to every query's text
        queries = queries.select([i for i, q in enumerate(queries["id"]) if q in qrels])
        self._extra.setdefault(hf_subset, {})[split] = extra
        logger.debug("%s/%s: %d queries, %d documents", self.metadata.name, split, len(queries), len(corpus))
        return RetrievalSplitData(corpus=corpus, queries=queries, relevant_docs=qrels, top_ranked=None)

    # -- evaluation -----------------------------------------------------------------------------------
    def zero_score_queries(self, hf_subset: str, split: str) -> list[str]:
        """The judged queries without a positive of the subset that scores this task (``<task>_full`` for MaxP)."""
        return self._zero_score_queries.get(self.qrels_subset, {}).get(split, [])

    def run_ids(self, hf_subset: str, split: str) -> tuple[set[str], set[str]]:
        """A fixed run may name the binary qrels' queries too and, for MaxP, documents as well as passages."""
        queries, documents = super().run_ids(hf_subset, split)
        extra = self._extra.get(hf_subset, {}).get(split, {})
        queries |= set(extra.get("binary_qrels", {})) | set(extra.get("binary_zero", []))
        return queries, documents | set(extra.get("parents", {}).values())

    def search_model(self, model: MTEBModels, split: str) -> MTEBModels:
        """The model wrapped to carry the split's instruction as its query prompt and, for MaxP, to collapse."""
        splits = {hf_subset: by_split[split] for hf_subset, by_split in self._extra.items() if split in by_split}
        if not self.maxp and not any(extra.get("instruction") for extra in splits.values()):
            self._search = None
            return model
        self._search = CRUMBSearch(model, splits, maxp=self.maxp)
        return self._search

    def task_specific_scores(self, scores: dict[str, dict[str, float]], qrels: RelevantDocumentsType,
                             results: dict[str, dict[str, float]], hf_split: str, hf_subset: str) -> dict[str, float]:
        """Per-query scores on the graded qrels; for paper_retrieval, the per-query recall, precision, RR, hit rate
        and accuracy on the binary qrels instead, as the official code computes them (their means follow in
        :meth:`count_judged_queries`)."""
        graded = {q: d for q, d in qrels.items() if any(v > 0 for v in d.values())}
        super().task_specific_scores(scores, graded, {q: results.get(q, {}) for q in graded}, hf_split, hf_subset)
        if self.binary_recall:
            binary = {q: d for q, d in self._extra[hf_subset][hf_split]["binary_qrels"].items() if d}
            on_binary = mteb_adhoc_per_query(binary, {q: results.get(q, {}) for q in binary},
                                             list(self.k_values), self.extra_measures) if binary else {}
            per_query = self.per_query_scores[hf_subset][hf_split]
            # no binary judgment in this split: every binary measure is 0 (over its judged queries), as officially
            per_query.update({key: on_binary.get(key, {}) for key in per_query if key.startswith(BINARY_PREFIXES)})
        return {}

    def count_judged_queries(self, scores: dict[str, Any], hf_subset: str, split: str) -> dict[str, Any]:
        """crumb_eval averages over every judged query: each mean is recomputed exactly from the unrounded per-query
        values, the judged queries without a positive counted in with 0 (for paper_retrieval's binary measures,
        those of the binary qrels). MaxP records how deep it searched the passages."""
        relevant = self.dataset[hf_subset][split]["relevant_docs"]
        graded = sum(1 for docs in relevant.values() if any(v > 0 for v in docs.values()))
        judged = graded + len(self.zero_score_queries(hf_subset, split))
        per_query = self.per_query_scores.get(hf_subset, {}).get(split, {})
        binary_keys: set[str] = set()
        if self.binary_recall:
            extra = self._extra[hf_subset][split]
            binary_keys = {key for key in per_query if key.startswith(BINARY_PREFIXES)}
            n_binary = sum(1 for docs in extra["binary_qrels"].values() if docs)
            self.count_zero_score_queries(scores, hf_subset, split, n_binary, rescale=(), zero=extra["binary_zero"],
                                          keys=binary_keys)
            scores["binary_judged_queries"] = scores.pop("judged_queries")
            scores["binary_judged_queries_without_positive"] = scores.pop("judged_queries_without_positive")
        # a mean without per-query values (none of MTEB's ad hoc ones) is MTEB's over the retrieved queries, rescaled
        for key, value in scores.items():
            if key.startswith(QUERY_MEAN_PREFIXES) and key not in per_query and isinstance(value, (int, float)):
                scores[key] = value * len(relevant) / judged
        scores = self.count_zero_score_queries(scores, hf_subset, split, graded, rescale=(),
                                               keys=set(per_query) - binary_keys)
        depth = self._search.passage_depths.get((hf_subset, split)) if self._search is not None else None
        if depth is not None:  # MaxP: how deep the passages were searched for exact top documents
            scores["maxp_passages_searched"] = float(depth)
        return scores

SPEC = CRUMB


def _make(subset: SubsetSpec, full_document: bool) -> type[CRUMBTask]:
    maxp = subset.maxp and not full_document
    binary = subset.binary_qrels and not full_document
    if full_document:
        name = SPEC.task_name(subset, FULL_DOCUMENT_VARIANT)
        setting = "CRUMB, full-document setting (whole Markdown documents, for long-context models)."
        layout = subset.name + "_full"
    else:
        name = SPEC.task_name(subset)
        setting = "CRUMB, passage setting (contextualised chunks of at most 512 tokens)."
        layout = subset.name
    description = f"{setting} {subset.description}"
    if maxp:
        description += (" Scored with MaxP as in the official evaluation: passages are collapsed to their "
                        "documents by the best passage score and judged against the full-document qrels.")
    if binary:
        description += " nDCG uses the graded labels; recall, precision and MRR use the binary qrels, as officially."
    description += " Labels are int-cast as in crumb_eval (0.5 -> 0)." + INSTRUCTION_NOTE
    metadata = spec_metadata(
        SPEC, name=name, description=description, main_score="ndcg_at_10",
        date=subset.dates, domains=list(subset.domains), task_subtypes=list(subset.task_subtypes),
        eval_langs=list(subset.languages), annotations_creators="expert-annotated", adapted_from=None,
    )
    return define_task(CRUMBTask, metadata, description, crumb_task=subset.name, layout_subsets={"default": layout},
                       full_document=full_document, maxp=maxp, binary_recall=binary)


PASSAGE_TASKS = [_make(subset, False) for subset in SPEC.subsets]
FULL_DOCUMENT_TASKS = [_make(subset, True) for subset in SPEC.subsets if subset.full_document]
TASKS: list[type[CRUMBTask]] = PASSAGE_TASKS + FULL_DOCUMENT_TASKS
globals().update({cls.__name__: cls for cls in TASKS})

BENCHMARK = Benchmark(
    name=SPEC.name,
    tasks=[cls() for cls in PASSAGE_TASKS],
    description=("CRUMB: eight complex retrieval tasks (multi-part, constrained natural-language queries) in the "
                 "passage setting, scored as the official crumb_eval: graded int labels, MaxP for clinical_trial, "
                 "set_operation_entity_retrieval and tip_of_the_tongue, binary qrels for paper_retrieval recall."),
    reference=SPEC.reference,
    benchmark_hf_repo=SPEC.hub_id,  # the repo its tasks read: its eval.yaml makes it the Hub Benchmark
    citation=SPEC.citation,
)

__all__ = ["BENCHMARK", "TASKS", "CRUMBTask", "maxp_collapse", "passage_parent",
           *(cls.__name__ for cls in TASKS)]
