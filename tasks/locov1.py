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
from tqdm.auto import tqdm

from complexir.benchmarks import LOCOV1, SubsetSpec

from .layout_task import LayoutRetrievalTask, define_task, spec_metadata

logger = logging.getLogger(__name__)

SPEC = LOCOV1

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

    benchmark_dir: ClassVar[str] = SPEC.folder

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


def _make(subset: SubsetSpec) -> type[LoCoV1Task]:
    metadata = spec_metadata(
        SPEC, name=f"LoCoV1{subset.title}",
        description=(f"LoCoV1 {subset.name}: {subset.description} Documents are long (often thousands of words), so "
                     "the evidence may lie past a model's maximum sequence length; results also record the share "
                     "of document tokens the model read (doc_token_share_seen)."),
        main_score="ndcg_at_10", date=subset.dates, domains=list(subset.domains),
        task_subtypes=list(subset.task_subtypes), eval_langs=list(subset.languages),
    )
    return define_task(LoCoV1Task, metadata, f"LoCoV1 {subset.name}: {subset.description}",
                       layout_subsets={"default": subset.name})


TASKS: list[type[LoCoV1Task]] = [_make(subset) for subset in SPEC.subsets]
globals().update({cls.__name__: cls for cls in TASKS})

BENCHMARK = mteb.Benchmark(
    name=SPEC.name,
    tasks=[cls() for cls in TASKS],
    description=("LoCoV1: 12 long-document retrieval tasks (TV transcripts, government reports, meetings, "
                 "scientific papers, Wikipedia, court opinions, legal case reports, Stack Overflow). nDCG@10 over "
                 "whole documents; each result records the share of document tokens the model read."),
    reference=SPEC.reference,
    citation=SPEC.citation,
)

__all__ = ["BENCHMARK", "TASKS", "LoCoV1Task", "TokenBudget", "find_sentence_transformer",
           "token_share_scores", *(cls.__name__ for cls in TASKS)]
