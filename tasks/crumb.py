"""MTEB tasks for CRUMB that reproduce the official ``crumb_eval`` numbers for the same ranking.

- ``CRUMB<Task>``: the passage setting of each of the eight tasks. For clinical_trial,
  set_operation_entity_retrieval and tip_of_the_tongue the official protocol is **MaxP**: the passage run is
  collapsed to documents (best passage score; document id = passage id before ``:``) and scored against the
  full-document qrels (``<task>_full-qrels``).
- ``CRUMB<Task>FullDocument``: the full-document setting of the five tasks that have one.
- ``CRUMB``: the benchmark (the eight passage tasks, the setting the paper's headline numbers use).

Official conventions kept here: labels are already ``int``-cast in the layout (0.5 → 0); paper_retrieval's
recall, precision, MRR and hit rate use its binary qrels (splits ``test_binary``/``validation_binary``); the
official mean runs over every *judged* query, so queries the layout dropped (judged, but no positive after the
cast) count as 0: every mean is rescaled by kept/judged, with the judged ids the card records for every
benchmark (``complexir.zero_score_queries``).

Instructions: the layout's per-query ``instruction`` column is removed before MTEB sees the queries (MTEB 2.26
would append it to every query's text, for plain and instruction models alike). The task's instruction becomes
the task prompt instead, which instruction-tuned MTEB models format with their own template (e.g.
``Instruct: {instruction}\\nQuery: ``) and plain models ignore: a plain model sees the query alone.
"""

from __future__ import annotations

import logging
import os
from collections import Counter
from pathlib import Path
from typing import Any, ClassVar

from mteb import Benchmark
from mteb._evaluators.retrieval_evaluator import RetrievalEvaluator
from mteb._evaluators.retrieval_metrics import make_score_dict
from mteb.abstasks.retrieval_dataset_loaders import RetrievalDatasetLoader, RetrievalSplitData
from mteb.models import (
    CrossEncoderProtocol,
    EncoderProtocol,
    SearchCrossEncoderWrapper,
    SearchEncoderWrapper,
    SearchProtocol,
)
from mteb.types import ScoresDict

from complexir.benchmarks import CRUMB, SubsetSpec

from .layout_task import LayoutRetrievalTask, define_task, spec_metadata

logger = logging.getLogger(__name__)

MAXP_DOCS = 100  # after collapsing, at least this many documents per query are exact (R@100 needs them)

INSTRUCTION_NOTE = (
    " Each query carries its task's instruction: instruction-following models receive it as the task prompt "
    "(formatted by the model, e.g. 'Instruct: <instruction>\\nQuery: <query>'); plain models see the query alone."
)


def passage_parent(passage_id: str) -> str:
    """The document of a passage whose layout row has no ``parent-id``: ids are ``<document id>:<chunk index>``,
    and a document id may itself contain ``:`` (Wikipedia and film titles do), so split at the last one."""
    return passage_id.rsplit(":", 1)[0]


def maxp_collapse(results: dict[str, dict[str, float]], parents: dict[str, str]) -> dict[str, dict[str, float]]:
    """Passage run → document run: each document scores its best passage (``parents``: passage → document)."""
    out: dict[str, dict[str, float]] = {}
    for qid, passages in results.items():
        docs: dict[str, float] = {}
        for pid, score in passages.items():
            doc = parents.get(pid) or passage_parent(pid)
            if doc not in docs or score > docs[doc]:
                docs[doc] = score
        out[qid] = docs
    return out


class CRUMBTask(LayoutRetrievalTask):
    """One CRUMB task and corpus setting, scored as the official ``crumb_eval`` scores it."""

    benchmark_dir: ClassVar[str] = CRUMB.folder
    crumb_task: ClassVar[str]  # the release's task name, e.g. "clinical_trial"
    full_document: ClassVar[bool] = False  # the <task>_full setting
    maxp: ClassVar[bool] = False  # passage run collapsed to documents, scored on <task>_full qrels
    binary_recall: ClassVar[bool] = False  # recall/precision/MRR/hit rate on the <split>_binary qrels

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._extra: dict[str, dict[str, dict[str, Any]]] = {}  # hf_subset → split → binary qrels, counts, prompt

    # -- data -----------------------------------------------------------------------------------------
    @property
    def qrels_subset(self) -> str:
        """The layout subset whose queries and qrels score this task."""
        return self.crumb_task + "_full" if (self.full_document or self.maxp) else self.crumb_task

    def available_in(self, data_dir: str | os.PathLike) -> bool:
        if not super().available_in(data_dir):
            return False
        from complexir.reader import list_subsets

        return self.qrels_subset in list_subsets(Path(data_dir) / self.benchmark_dir)

    def load_split(self, path: str, revision: str | None, hf_subset: str, split: str) -> RetrievalSplitData:
        corpus_subset = self.layout_subsets[hf_subset]
        scoring = RetrievalDatasetLoader(hf_repo=path, revision=revision, split=split, config=self.qrels_subset)
        corpus_loader = scoring if corpus_subset == self.qrels_subset else RetrievalDatasetLoader(
            hf_repo=path, revision=revision, split=split, config=corpus_subset)
        # only what the model reads: extra columns (parent-id, metadata) are not model input
        corpus = corpus_loader._load_corpus(None)
        extra: dict[str, Any] = {}
        if self.maxp:  # MaxP collapses by the layout's parent-id, not by parsing ids
            parent_ids = corpus["parent-id"] if "parent-id" in corpus.column_names else [None] * len(corpus)
            extra["parents"] = {pid: parent or passage_parent(pid) for pid, parent in zip(corpus["id"], parent_ids,
                                                                                          strict=True)}
        corpus = corpus.select_columns([c for c in ("id", "title", "text") if c in corpus.column_names])
        queries = scoring._load_queries(None)
        queries = queries.select_columns([c for c in ("id", "text", "instruction") if c in queries.column_names])
        qrels = scoring._load_qrels(None)
        if self.binary_recall:
            binary = RetrievalDatasetLoader(hf_repo=path, revision=revision, split=split + "_binary",
                                            config=self.qrels_subset)
            extra["binary_qrels"] = binary._load_qrels(None)
            extra["binary_zero"] = self._zero_score_queries.get(self.qrels_subset, {}).get(split + "_binary", [])
            # queries with a binary positive but no graded positive are retrieved for too (official recall counts them)
            have = set(queries["id"])
            more = binary._load_queries(None)
            more = more.select([i for i, q in enumerate(more["id"]) if q not in have])
            if len(more):
                from datasets import concatenate_datasets

                queries = concatenate_datasets([queries, more.select_columns(queries.column_names)])
        if "instruction" in queries.column_names:
            counts = Counter(queries["instruction"])
            instruction, n = counts.most_common(1)[0]
            if len(counts) > 1:
                logger.warning("%s/%s: %d distinct instructions; the task prompt uses the most common (%d of %d "
                               "queries)", self.metadata.name, split, len(counts), n, len(queries))
            extra["instruction"] = instruction
            queries = queries.remove_columns("instruction")  # else MTEB appends it to every query's text
        ids = set(queries["id"])
        keep = [i for i, q in enumerate(queries["id"]) if q in qrels or q in extra.get("binary_qrels", {})]
        queries = queries.select(keep)
        self._extra.setdefault(hf_subset, {})[split] = extra
        logger.debug("%s/%s: %d queries, %d documents", self.metadata.name, split, len(ids), len(corpus))
        return RetrievalSplitData(corpus=corpus, queries=queries, relevant_docs=qrels, top_ranked=None)

    # -- evaluation -----------------------------------------------------------------------------------
    def _search_depth(self, corpus: Any, parents: dict[str, str]) -> int:
        """Passages to retrieve: for MaxP, enough that the first ``MAXP_DOCS`` collapsed documents are exact.

        Collapsing a prefix of the passage ranking gives a prefix of the collapsed full ranking, so if every
        document has at most ``m`` passages, the top ``MAXP_DOCS * m`` passages hold at least ``MAXP_DOCS``
        distinct documents, all exact.
        """
        if not self.maxp:
            return self._top_k
        per_doc = Counter(parents.values())
        return min(len(corpus), max(self._top_k, MAXP_DOCS * max(per_doc.values())))

    def zero_score_queries(self, hf_subset: str, split: str) -> list[str]:
        """The judged queries without a positive of the subset that scores this task (``<task>_full`` for MaxP)."""
        return self._zero_score_queries.get(self.qrels_subset, {}).get(split, [])

    def _evaluate_subset(self, model: Any, data_split: RetrievalSplitData, *, encode_kwargs: Any, hf_split: str,
                         hf_subset: str, prediction_folder: Path | None = None, num_proc: int | None = None,
                         timer: Any, **kwargs: Any) -> ScoresDict:
        """MTEB's retrieval evaluation, plus MaxP, binary-qrels recall and the official (judged-query) mean."""
        extra = self._extra[hf_subset][hf_split]
        graded = {q: d for q, d in data_split["relevant_docs"].items() if d}
        binary = {q: d for q, d in extra.get("binary_qrels", {}).items() if d}
        own = "metadata" in self.__dict__
        saved = self.metadata
        if extra.get("instruction"):  # a per-instance copy carries this split's instruction as the query prompt
            self.metadata = saved.model_copy(update={"prompt": {"query": extra["instruction"]}})
        try:
            retriever = RetrievalEvaluator(
                corpus=data_split["corpus"], queries=data_split["queries"], task_metadata=self.metadata,
                hf_split=hf_split, hf_subset=hf_subset, top_ranked=None,
                top_k=self._search_depth(data_split["corpus"], extra.get("parents", {})), timer=timer, **kwargs)
            if isinstance(model, EncoderProtocol) and not isinstance(model, SearchProtocol):
                search_model = SearchEncoderWrapper(model)
            elif isinstance(model, CrossEncoderProtocol):
                search_model = SearchCrossEncoderWrapper(model)
            elif isinstance(model, SearchProtocol):
                search_model = model
            else:
                raise TypeError(f"expected an Encoder, CrossEncoder or Search model, got {type(model)}")
            results = retriever(search_model, encode_kwargs=encode_kwargs, num_proc=num_proc)
        finally:
            if own:
                self.metadata = saved
            else:
                self.__dict__.pop("metadata", None)
        if prediction_folder:
            self._save_task_predictions(results, model, prediction_folder, hf_subset=hf_subset, hf_split=hf_split)
        if self.maxp:
            results = maxp_collapse(results, extra["parents"])

        def scored(qrels: dict[str, dict[str, int]]) -> Any:
            run = {q: results.get(q, {}) for q in qrels}
            return retriever.evaluate(qrels, run, self.k_values, ignore_identical_ids=self.ignore_identical_ids,
                                      skip_first_result=self.skip_first_result)

        # crumb_eval averages over every judged query: the ones without a positive (dropped by the layout) score 0
        main = scored(graded)
        scale = len(graded) / (len(graded) + len(self.zero_score_queries(hf_subset, hf_split)))
        parts = {"ndcg": main.ndcg, "_map": main.map, "recall": main.recall, "precision": main.precision,
                 "mrr": main.mrr, "hit_rate": main.hit_rate}
        parts = {k: {m: v * scale for m, v in d.items()} for k, d in parts.items()}
        naucs, naucs_mrr = main.naucs, main.naucs_mrr
        if self.binary_recall:
            bin_scores = scored(binary)
            bscale = len(binary) / (len(binary) + len(extra["binary_zero"])) if binary else 0.0
            for key, values in (("recall", bin_scores.recall), ("precision", bin_scores.precision),
                                ("mrr", bin_scores.mrr), ("hit_rate", bin_scores.hit_rate)):
                parts[key] = {m: v * bscale for m, v in values.items()}
        task_scores = self.task_specific_scores(main.all_scores, graded, {q: results.get(q, {}) for q in graded},
                                                hf_split=hf_split, hf_subset=hf_subset)
        scores = make_score_dict(ndcg=parts["ndcg"], _map=parts["_map"], recall=parts["recall"],
                                 precision=parts["precision"], mrr=parts["mrr"], naucs=naucs, naucs_mrr=naucs_mrr,
                                 hit_rate=parts["hit_rate"], task_scores=task_scores,
                                 previous_results_model_meta=self._previous_results_model_meta)
        # the means are rescaled above (two populations on paper_retrieval); this adds the counts and the zeros
        return self.count_zero_score_queries(scores, hf_subset, hf_split, len(graded), rescale=())


SPEC = CRUMB


def _make(subset: SubsetSpec, full_document: bool) -> type[CRUMBTask]:
    maxp = subset.maxp and not full_document
    binary = subset.binary_qrels and not full_document
    if full_document:
        name = f"CRUMB{subset.title}FullDocument"
        setting = "CRUMB, full-document setting (whole Markdown documents, for long-context models)."
        layout = subset.name + "_full"
    else:
        name = f"CRUMB{subset.title}"
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
        SPEC, name=name, description=description, main_score="ndcg_at_10", eval_splits=["test", "validation"],
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
    citation=SPEC.citation,
)

__all__ = ["BENCHMARK", "TASKS", "CRUMBTask", "maxp_collapse", "passage_parent",
           *(cls.__name__ for cls in TASKS)]
