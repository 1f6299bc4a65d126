"""MTEB tasks for LoCoV1 (12 long-document retrieval tasks) and the ``LoCoV1`` benchmark.

Main score nDCG@10 over whole documents, as in the paper. Long documents are the point of LoCoV1, so every
result also says how much of each document the model actually read: after MTEB's own evaluation,
``model_scores`` counts each document's tokens with the model's own tokenizer and adds to the subset's
scores

* ``doc_token_share_seen``: mean over documents of (tokens the model encoded / tokens in the document),
  i.e. ``min(1, capacity / length)`` for a model that truncates;
* ``docs_truncated_share``: the share of documents the model did not read to the end;
* ``doc_tokens_mean`` and ``model_tokens_per_input`` (the capacity: max sequence length less special tokens);
* ``query_token_share_seen`` and ``queries_truncated_share``: the same for the queries, which some tasks make
  long too (report summaries, abstracts) and which every mode encodes as one truncated input.

A model wrapper that encodes more than one input per document (``complexir.systems.long_docs``) reports what it
really encoded by implementing ``complexir.systems.models.ReadsDocumentTokens``; a plain SentenceTransformer-based
model is
measured by its ``max_seq_length``. A model whose tokenizer cannot be found (an API model) gets no such keys
and a warning, never a made-up number.
"""

from __future__ import annotations

import logging
from typing import Any, ClassVar

import mteb
import numpy as np
from mteb.models import MTEBModels
from tqdm.auto import tqdm

from complexir.registry.benchmarks import LOCOV1, SubsetSpec
from complexir.systems.models import (
    ReadsDocumentTokens,
    TokenBudget,
    corpus_texts,
    find_sentence_transformer,
    wrapped_models,
)

from .layout_task import LayoutRetrievalTask, define_task, spec_metadata

logger = logging.getLogger(__name__)

SPEC = LOCOV1

TOKEN_BATCH_DOCS = 32  # documents tokenized at once when measuring (bounded memory on 20k-word documents)


# -- how much of each document a model reads ------------------------------------------------------------
def token_share_scores(model: MTEBModels, corpus: Any, *, progress: bool = True) -> dict[str, float]:
    """``doc_token_share_seen`` and friends for ``model`` on ``corpus``; {} when the model has no tokenizer."""
    # the outermost model that says what it encodes wins (a chunking wrapper); else the truncating model's budget
    reader = next((m for m in wrapped_models(model) if isinstance(m, ReadsDocumentTokens)), None)
    if reader is not None:
        budget: TokenBudget = reader.budget
        counter = reader.doc_token_counts
    else:
        st_model = find_sentence_transformer(model)
        if st_model is None:
            # a searcher (BM25) reads whole documents and a custom encoder keeps its tokenizer to itself: the share
            # is simply not known, nothing the user can act on (the table's "tokens seen" column says "-")
            logger.debug("no sentence-transformers tokenizer in %s: doc_token_share_seen not recorded",
                         type(model).__name__)
            return {}
        budget = TokenBudget(st_model)
        counter = budget.truncated_counts
    seen_parts, total_parts = [], []
    n_batches = -(-len(corpus) // TOKEN_BATCH_DOCS)
    for texts in tqdm(corpus_texts(corpus, TOKEN_BATCH_DOCS), total=n_batches, desc="counting document tokens",
                      unit="batch", disable=not progress, mininterval=1.0):
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
    scores["model_tokens_per_input"] = float(budget.capacity)
    return scores


# -- the tasks ---------------------------------------------------------------------------------------------
def query_share_scores(model: MTEBModels, queries: Any) -> dict[str, float]:
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

    def model_scores(self, model: MTEBModels, hf_subset: str, split: str, encode_kwargs: Any) -> dict[str, float]:
        """How much of the documents and queries ``model`` read, with its own tokenizer."""
        data = self.dataset[hf_subset][split]
        progress = (encode_kwargs or {}).get("show_progress_bar", True)
        share = token_share_scores(model, data["corpus"], progress=progress)
        if share:
            logger.info("%s %s: the model read %.1f%% of document tokens on average; %.1f%% of documents truncated",
                        self.metadata.name, hf_subset, 100 * share["doc_token_share_seen"],
                        100 * share["docs_truncated_share"])
        return {**share, **query_share_scores(model, data["queries"])}


def _make(subset: SubsetSpec) -> type[LoCoV1Task]:
    metadata = spec_metadata(
        SPEC, name=SPEC.task_name(subset),
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
    benchmark_hf_repo=SPEC.hub_id,  # the repo its tasks read: its eval.yaml makes it the Hub Benchmark
    citation=SPEC.citation,
)

__all__ = ["BENCHMARK", "TASKS", "LoCoV1Task", "query_share_scores", "token_share_scores",
           *(cls.__name__ for cls in TASKS)]
