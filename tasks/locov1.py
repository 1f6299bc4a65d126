"""MTEB tasks for LoCoV1 (12 long-document retrieval tasks) and the ``LoCoV1`` benchmark.

Main score nDCG@10 over whole documents, as in the paper. Long documents are the point of LoCoV1, so every
result also says how much of each document the model actually read: after MTEB's own evaluation,
``_evaluate_subset`` counts each document's tokens with the model's own tokenizer and adds to the subset's
scores

* ``doc_token_share_seen``: mean over documents of (tokens the model encoded / tokens in the document),
  i.e. ``min(1, capacity / length)`` for a model that truncates;
* ``docs_truncated_share``: the share of documents the model did not read to the end;
* ``doc_tokens_mean`` and ``model_tokens_per_input`` (the capacity: max sequence length less special tokens);
* ``query_token_share_seen`` and ``queries_truncated_share``: the same for the queries, which some tasks make
  long too (report summaries, abstracts) and which every mode encodes as one truncated input.

A model wrapper that encodes more than one input per document (``complexir.long_docs``) reports what it
really encoded through a ``doc_token_counts(texts)`` method; a plain SentenceTransformer-based model is
measured by its ``max_seq_length``. A model whose tokenizer cannot be found (an API model) gets no such keys
and a warning, never a made-up number.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

import mteb
import numpy as np
from mteb.abstasks.task_metadata import TaskMetadata
from tqdm.auto import tqdm

from complexir.benchmarks import LOCOV1_CITATION as CITATION
from complexir.benchmarks import LOCOV1_REFERENCE as REFERENCE

from .layout_task import LayoutRetrievalTask

logger = logging.getLogger(__name__)

HUB_REPO = "complexir/locov1"  # the standard-layout build; `complexir build locov1` makes it

# class-name suffix -> (layout subset = the upstream `dataset` value, description, domains, task subtypes, dates)
SUBSETS: dict[str, tuple[str, str, list[str], list[str], tuple[str, str]]] = {
    "SummScreenFD": ("summ_screen_fd", "Find the TV episode transcript (SummScreenFD) that a summary describes.",
                     ["Spoken", "Fiction"], ["Article retrieval"], ("2000-01-01", "2021-12-31")),
    "GovReport": ("gov_report", "Find the US government report (GAO, CRS) that a summary describes.",
                  ["Government", "Written"], ["Article retrieval"], ("1995-01-01", "2021-12-31")),
    "QMSum": ("qmsum", "Find the meeting transcript (QMSum) that a query-focused summary comes from.",
              ["Spoken"], ["Article retrieval"], ("2000-01-01", "2021-12-31")),
    "QasperTitle": ("qasper_title", "Find the NLP paper (Qasper) that has the given title.",
                    ["Academic", "Written"], ["Article retrieval"], ("2010-01-01", "2021-12-31")),
    "QasperAbstract": ("qasper_abstract", "Find the NLP paper (Qasper) that has the given abstract.",
                       ["Academic", "Written"], ["Article retrieval"], ("2010-01-01", "2021-12-31")),
    "MultiFieldQA": ("multifieldqa", "Find the long document (MultiFieldQA, LongBench) that answers a question.",
                     ["Written", "Academic", "Legal"], ["Question answering"], ("2010-01-01", "2023-12-31")),
    "TwoWikiMQA": ("2wikimqa", "Find the Wikipedia context (2WikiMultihopQA, LongBench) of a multi-hop question.",
                   ["Encyclopaedic", "Written"], ["Question answering"], ("2010-01-01", "2023-12-31")),
    "PassageRetrieval": ("passage_retrieval", "Find the Wikipedia passage (LongBench) that a summary describes.",
                         ["Encyclopaedic", "Written"], ["Article retrieval"], ("2010-01-01", "2023-12-31")),
    "CourtListenerHTML": ("courtlistener_HTML", "Find the US court opinion, in HTML, that a case summary describes.",
                          ["Legal", "Written"], ["Article retrieval"], ("1950-01-01", "2023-12-31")),
    "CourtListenerPlainText": ("courtlistener_Plain_Text",
                               "Find the US court opinion, in plain text, that a case summary describes.",
                               ["Legal", "Written"], ["Article retrieval"], ("1950-01-01", "2023-12-31")),
    "LegalCaseReports": ("legal_case_reports", "Find the Australian legal case report that a summary describes.",
                         ["Legal", "Written"], ["Article retrieval"], ("2006-01-01", "2009-12-31")),
    "StackOverflow": ("stackoverflow", "Find the Stack Overflow thread that answers a programming question.",
                      ["Programming", "Written"], ["Question answering"], ("2008-01-01", "2023-12-31")),
}

TOKEN_BATCH_DOCS = 32  # documents tokenized at once when measuring (bounded memory on 20k-word documents)


# -- how much of each document a model reads ------------------------------------------------------------
def find_sentence_transformer(model: Any, depth: int = 8) -> Any | None:
    """The SentenceTransformer inside an MTEB wrapper chain (``.model`` / ``._model``), or None."""
    from sentence_transformers import SentenceTransformer

    for _ in range(depth):
        if isinstance(model, SentenceTransformer):
            return model
        inner = getattr(model, "model", None)
        if inner is None:
            inner = getattr(model, "_model", None)
        if inner is None or inner is model:
            return None
        model = inner
    return None


class TokenBudget:
    """A model's tokenizer (untruncated, without special tokens) and how many text tokens one input holds."""

    def __init__(self, st_model: Any):
        from tokenizers import Tokenizer

        tokenizer = st_model.tokenizer
        if not getattr(tokenizer, "is_fast", False):
            raise ValueError(f"{type(tokenizer).__name__} is not a fast tokenizer: token offsets are needed")
        # A private copy: the shared backend carries padding/truncation state that HF tokenizers mutate.
        self.backend = Tokenizer.from_str(tokenizer.backend_tokenizer.to_str())
        self.backend.no_truncation()
        self.backend.no_padding()
        self.max_seq_length = int(st_model.max_seq_length)
        self.capacity = self.max_seq_length - tokenizer.num_special_tokens_to_add(pair=False)
        if self.capacity <= 0:
            raise ValueError(f"max_seq_length {self.max_seq_length} leaves no room for text tokens")

    def lengths(self, texts: Sequence[str]) -> np.ndarray:
        """Token count of each text, special tokens excluded."""
        return np.fromiter((len(e) for e in self.backend.encode_batch(list(texts), add_special_tokens=False)),
                           dtype=np.int64, count=len(texts))

    def truncated_counts(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(tokens seen, tokens in total) for a model that reads the first ``capacity`` tokens of each text."""
        total = self.lengths(texts)
        return np.minimum(total, self.capacity), total


def corpus_texts(corpus: Any, batch_docs: int = TOKEN_BATCH_DOCS) -> Iterator[list[str]]:
    """The corpus, ``batch_docs`` documents at a time, as the model reads them (title and text, as MTEB joins)."""
    has_title = "title" in corpus.column_names
    for start in range(0, len(corpus), batch_docs):
        rows = corpus[start:start + batch_docs]
        titles = rows["title"] if has_title else [None] * len(rows["text"])
        yield [(f"{t} {x}" if t else x).strip() for t, x in zip(titles, rows["text"], strict=True)]


def token_share_scores(model: Any, corpus: Any, *, progress: bool = True) -> dict[str, float]:
    """``doc_token_share_seen`` and friends for ``model`` on ``corpus``; {} when the model has no tokenizer."""
    counter = None
    budget: TokenBudget | None = None
    probe = model
    for _ in range(8):  # the outermost object that knows what it encodes wins (a chunking wrapper)
        if hasattr(probe, "doc_token_counts"):
            counter = probe.doc_token_counts
            budget = getattr(probe, "budget", None)
            break
        probe = getattr(probe, "model", None) or getattr(probe, "_model", None)
        if probe is None:
            break
    if counter is None:
        st_model = find_sentence_transformer(model)
        if st_model is None:
            logger.warning("cannot find the tokenizer of %s: doc_token_share_seen not recorded", type(model).__name__)
            return {}
        budget = TokenBudget(st_model)
        counter = budget.truncated_counts
    seen_parts, total_parts = [], []
    n_batches = -(-len(corpus) // TOKEN_BATCH_DOCS)
    for texts in tqdm(corpus_texts(corpus), total=n_batches, desc="counting document tokens", unit="batch",
                      disable=not progress, mininterval=1.0):
        seen, total = counter(texts)
        seen_parts.append(np.asarray(seen, dtype=np.int64))
        total_parts.append(np.asarray(total, dtype=np.int64))
    seen, total = np.concatenate(seen_parts), np.concatenate(total_parts)
    share = np.where(total > 0, seen / np.maximum(total, 1), 1.0)
    scores = {
        "doc_token_share_seen": float(share.mean()),
        "docs_truncated_share": float((seen < total).mean()),
        "doc_tokens_mean": float(total.mean()),
    }
    if budget is not None:
        scores["model_tokens_per_input"] = float(budget.capacity)
    return scores


# -- the tasks ---------------------------------------------------------------------------------------------
def query_share_scores(model: Any, queries: Any) -> dict[str, float]:
    """``query_token_share_seen`` and ``queries_truncated_share``: queries are one input each, truncated."""
    st_model = find_sentence_transformer(model)
    if st_model is None or len(queries) == 0:
        return {}
    budget = TokenBudget(st_model)
    seen, total = budget.truncated_counts(list(queries["text"]))
    share = np.where(total > 0, seen / np.maximum(total, 1), 1.0)
    return {"query_token_share_seen": float(share.mean()), "queries_truncated_share": float((seen < total).mean())}


class LoCoV1Task(LayoutRetrievalTask):
    """A LoCoV1 task: MTEB retrieval over whole long documents, plus how much of them the model read."""

    benchmark_dir: ClassVar[str] = "locov1"

    def _evaluate_subset(self, model: Any, data_split: Any, **kwargs: Any) -> dict[str, Any]:
        scores = dict(super()._evaluate_subset(model, data_split, **kwargs))
        progress = kwargs.get("encode_kwargs", {}).get("show_progress_bar", True)
        share = token_share_scores(model, data_split["corpus"], progress=progress)
        if share:
            logger.info("%s %s: the model read %.1f%% of document tokens on average; %.1f%% of documents truncated",
                        self.metadata.name, kwargs.get("hf_subset"), 100 * share["doc_token_share_seen"],
                        100 * share["docs_truncated_share"])
        scores.update(share)
        scores.update(query_share_scores(model, data_split["queries"]))
        return scores


def _metadata(suffix: str) -> TaskMetadata:
    layout, what, domains, subtypes, dates = SUBSETS[suffix]
    return TaskMetadata(
        name=f"LoCoV1{suffix}",
        description=(f"LoCoV1 {layout}: {what} Documents are long (often thousands of words), so the evidence "
                     "may lie past a model's maximum sequence length; results also record the share of "
                     "document tokens the model read (doc_token_share_seen)."),
        reference=REFERENCE,
        dataset={"path": HUB_REPO, "revision": "main"},
        type="Retrieval",
        category="t2t",
        modalities=["text"],
        eval_splits=["test"],
        eval_langs=["eng-Latn"],
        main_score="ndcg_at_10",
        date=dates,
        domains=domains,
        task_subtypes=subtypes,
        license="apache-2.0",
        annotations_creators="derived",
        dialect=[],
        sample_creation="found",
        bibtex_citation=CITATION,
    )


def _make(suffix: str) -> type[LoCoV1Task]:
    return type(f"LoCoV1{suffix}", (LoCoV1Task,), {
        "__module__": __name__,
        "__doc__": f"LoCoV1 {SUBSETS[suffix][0]}: {SUBSETS[suffix][1]}",
        "metadata": _metadata(suffix),
        "layout_subsets": {"default": SUBSETS[suffix][0]},
    })


TASKS: list[type[LoCoV1Task]] = [_make(suffix) for suffix in SUBSETS]
globals().update({cls.__name__: cls for cls in TASKS})

BENCHMARK = mteb.Benchmark(
    name="LoCoV1",
    tasks=[cls() for cls in TASKS],
    description=("LoCoV1: 12 long-document retrieval tasks (TV transcripts, government reports, meetings, "
                 "scientific papers, Wikipedia, court opinions, legal case reports, Stack Overflow). nDCG@10 over "
                 "whole documents; each result records the share of document tokens the model read."),
    reference=REFERENCE,
    citation=CITATION,
)

__all__ = ["BENCHMARK", "SUBSETS", "TASKS", "LoCoV1Task", "TokenBudget", "find_sentence_transformer",
           "token_share_scores", *(cls.__name__ for cls in TASKS)]
