"""Opt-in long-document mode for short-context embedding models: overlapping windows, best window wins (MaxP).

A model that reads 256 tokens sees the first few paragraphs of a 20,000-word report; LoCoV1 asks about the
whole of it. ``MaxPSearchWrapper`` is an MTEB ``SearchProtocol`` model (usable with ``mteb.evaluate`` and
``complexir run --long-docs chunk``): each document is cut into windows of the model's own length (its
``max_seq_length`` less special tokens) that overlap by ``overlap_tokens``, every window is encoded, and a
document's score for a query is its best window's score.

Memory stays bounded whatever the corpus: documents are processed ``doc_batch_size`` at a time; only that
batch's window embeddings exist at once, and per query only the running top-k documents are kept
(``n_queries × (top_k + doc_batch_size)`` scores). Nothing grows with the corpus but the list of its ids.

Window boundaries fall between words of the model's own pre-tokenizer, so re-tokenizing a window's text gives
the same tokens (exactly for WordPiece models such as all-MiniLM-L6-v2). The wrapper reports what it encoded
through ``doc_token_counts`` (``complexir.systems.models.ReadsDocumentTokens``, read by the LoCoV1 tasks for
``doc_token_share_seen``): every token unless
``max_windows_per_doc`` caps the windows. Results are filed under the model's name with
``experiment_kwargs`` naming the mode, so they never overwrite the plain model's results.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from datasets import Dataset
from mteb.types import PromptType

if TYPE_CHECKING:
    from mteb.abstasks.task_metadata import TaskMetadata
    from mteb.models import EncoderProtocol, SearchProtocol
    from mteb.types import (
        CorpusDatasetType,
        EncodeKwargs,
        QueryDatasetType,
        RetrievalOutputType,
        TopRankedDocumentsType,
    )
    from sentence_transformers import SentenceTransformer
from tqdm.auto import tqdm

from complexir.mteb.internals import create_dataloader
from complexir.systems.models import EncoderPassThrough, TokenBudget, corpus_texts, find_sentence_transformer
from complexir.systems.options import LONG_DOCS

logger = logging.getLogger(__name__)

DEFAULT_OVERLAP = 32


def plan_windows(
    word_ids: Sequence[int | None], capacity: int, overlap: int, max_windows: int | None = None
) -> list[tuple[int, int]]:
    """Token ranges ``[start, end)`` of at most ``capacity`` tokens covering the text, consecutive ones
    sharing about ``overlap`` tokens; boundaries snap back to word starts (a word longer than a window is cut).
    """
    n = len(word_ids)
    if n == 0:
        return [(0, 0)]
    starts_word = [i == 0 or word_ids[i] is None or word_ids[i] != word_ids[i - 1] for i in range(n)]

    def back_to_word_start(position: int, floor: int) -> int | None:
        """The last word start in ``(floor, position]``, if any."""
        for p in range(position, floor, -1):
            if starts_word[p]:
                return p
        return None

    windows: list[tuple[int, int]] = []
    start = 0
    while True:
        end = min(start + capacity, n)
        if end < n:
            end = back_to_word_start(end, start) or end  # else a word longer than the window: cut it
        windows.append((start, end))
        if end >= n or (max_windows is not None and len(windows) >= max_windows):
            return windows
        target = max(end - overlap, start + 1)
        nxt = back_to_word_start(target, start)
        if nxt is None:  # no word start in the overlap: the first one after it (at worst `end`, no overlap)
            nxt = next((p for p in range(target, end) if starts_word[p]), end)
        start = nxt


class MaxPSearchWrapper(EncoderPassThrough):
    """MTEB search model: documents split into overlapping windows, scored by their best window (MaxP).

    ``model`` is an MTEB encoder (e.g. from ``complexir.systems.models.load_model``) or a SentenceTransformer; its
    tokenizer and ``max_seq_length`` set the window. ``encode``/``similarity`` pass through to the model, so
    non-retrieval tasks run it unchanged.
    """

    def __init__(
        self,
        model: EncoderProtocol | SentenceTransformer,
        *,
        window_tokens: int | None = None,
        overlap_tokens: int = DEFAULT_OVERLAP,
        doc_batch_size: int = 64,
        max_windows_per_doc: int | None = None,
    ):
        from mteb.models.sentence_transformer_wrapper import SentenceTransformerEncoderWrapper
        from sentence_transformers import SentenceTransformer

        if isinstance(model, SentenceTransformer):
            model = SentenceTransformerEncoderWrapper(model)
        st_model = find_sentence_transformer(model)
        if st_model is None:
            raise TypeError(f"{type(model).__name__}: the long-document mode needs a SentenceTransformer-based model "
                            "(its tokenizer and max_seq_length set the windows)")
        self.model = model
        self.budget = TokenBudget(st_model)
        self.window_tokens = window_tokens or self.budget.capacity
        if not 0 < self.window_tokens <= self.budget.capacity:
            raise ValueError(f"window_tokens {self.window_tokens}: must be in 1..{self.budget.capacity} "
                             f"(max_seq_length {self.budget.max_seq_length} less special tokens)")
        if not 0 <= overlap_tokens < self.window_tokens:
            raise ValueError(f"overlap_tokens {overlap_tokens}: must be in 0..{self.window_tokens - 1}")
        if max_windows_per_doc is not None and max_windows_per_doc < 1:
            raise ValueError("max_windows_per_doc must be >= 1")
        self.overlap_tokens = overlap_tokens
        self.doc_batch_size = doc_batch_size
        self.max_windows_per_doc = max_windows_per_doc
        self.task_corpus: Any = None
        self.windows_encoded = 0  # over the wrapper's life: what the mode costs
        meta = model.mteb_model_meta
        experiment = dict(meta.experiment_kwargs or {})
        experiment.update({"long_docs": "maxp", "window_tokens": self.window_tokens,
                           "overlap_tokens": overlap_tokens})
        if max_windows_per_doc is not None:
            experiment["max_windows_per_doc"] = max_windows_per_doc
        self.mteb_model_meta = meta.model_copy(update={"experiment_kwargs": experiment})

    # -- windows -----------------------------------------------------------------------------------------
    def windows(self, text: str) -> tuple[list[str], int, int]:
        """(window texts, tokens covered, tokens in the text) of one document."""
        encoding = self.budget.backend.encode(text, add_special_tokens=False)
        spans = plan_windows(encoding.word_ids, self.window_tokens, self.overlap_tokens, self.max_windows_per_doc)
        if len(encoding) == 0:
            return [text], 0, 0
        offsets = encoding.offsets
        texts = [text[offsets[s][0]:offsets[e - 1][1]] for s, e in spans]
        return texts, spans[-1][1], len(encoding)

    def doc_token_counts(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(tokens encoded, tokens in total) per document: what this wrapper really reads."""
        seen = np.empty(len(texts), dtype=np.int64)
        total = np.empty(len(texts), dtype=np.int64)
        for i, text in enumerate(texts):
            _, seen[i], total[i] = self.windows(text)
        return seen, total

    # -- SearchProtocol ----------------------------------------------------------------------------------
    def index(self, corpus: CorpusDatasetType, *, task_metadata: TaskMetadata, hf_split: str, hf_subset: str,
              encode_kwargs: EncodeKwargs,
              num_proc: int | None = None, **kwargs: Any) -> None:
        """Keep the corpus (an Arrow-backed dataset, not copied); windows are encoded batch by batch in search."""
        self.task_corpus = corpus

    def search(self, queries: QueryDatasetType, *, task_metadata: TaskMetadata, hf_split: str, hf_subset: str,
               top_k: int, encode_kwargs: EncodeKwargs, top_ranked: TopRankedDocumentsType | None = None,
               num_proc: int | None = None, **kwargs: Any) -> RetrievalOutputType:
        """Top ``top_k`` documents per query by best-window similarity (among ``top_ranked`` when given)."""
        if self.task_corpus is None:
            raise ValueError("index() the corpus before search()")
        corpus, self.task_corpus = self.task_corpus, None
        options: dict[str, Any] = dict(encode_kwargs or {})
        batch_size = options.get("batch_size", 32)
        show = options.get("show_progress_bar", True)
        inner_kwargs = {**options, "show_progress_bar": False}

        query_emb = self.model.encode(
            create_dataloader(queries, task_metadata=task_metadata, prompt_type=PromptType.query,
                              batch_size=batch_size, num_proc=num_proc),
            task_metadata=task_metadata, hf_split=hf_split, hf_subset=hf_subset, prompt_type=PromptType.query,
            **options,
        )
        query_ids = list(queries["id"])
        doc_ids = list(corpus["id"])
        n_q, n_docs = len(query_ids), len(doc_ids)
        k = min(top_k, n_docs)
        best_scores = np.full((n_q, k), -np.inf, dtype=np.float32)
        best_docs = np.full((n_q, k), -1, dtype=np.int64)
        allowed: dict[int, list[int]] | None = None
        if top_ranked is not None:  # doc index -> the queries that may rank it
            position = {d: i for i, d in enumerate(doc_ids)}
            allowed = {}
            for qi, qid in enumerate(query_ids):
                for d in top_ranked.get(qid, ()):
                    allowed.setdefault(position[d], []).append(qi)

        start = 0
        n_batches = -(-n_docs // self.doc_batch_size)
        for texts in tqdm(corpus_texts(corpus, self.doc_batch_size), total=n_batches, unit="batch",
                          desc=f"MaxP windows ({self.doc_batch_size} docs/batch)", disable=not show):
            window_texts: list[str] = []
            first_window = np.empty(len(texts), dtype=np.int64)
            for i, text in enumerate(texts):
                first_window[i] = len(window_texts)
                window_texts.extend(self.windows(text)[0])
            windows = Dataset.from_dict({"id": [str(i) for i in range(len(window_texts))], "text": window_texts})
            emb = self.model.encode(
                create_dataloader(windows, task_metadata=task_metadata, prompt_type=PromptType.document,
                                  batch_size=batch_size, num_proc=num_proc),
                task_metadata=task_metadata, hf_split=hf_split, hf_subset=hf_subset,
                prompt_type=PromptType.document, **inner_kwargs,
            )
            self.windows_encoded += len(window_texts)
            sims = _as_numpy(self.model.similarity(query_emb, emb))  # queries × windows
            del emb, windows, window_texts
            batch_scores = np.maximum.reduceat(sims, first_window, axis=1)  # queries × documents: best window
            del sims
            batch_docs = np.arange(start, start + len(texts), dtype=np.int64)
            if allowed is not None:
                mask = np.zeros(batch_scores.shape, dtype=bool)
                for j, doc in enumerate(batch_docs):
                    mask[allowed.get(int(doc), []), j] = True
                batch_scores = np.where(mask, batch_scores, -np.inf)
            best_scores, best_docs = _merge_top_k(best_scores, best_docs, batch_scores, batch_docs, k)
            start += len(texts)

        results: dict[str, dict[str, float]] = {}
        for qi, qid in enumerate(query_ids):
            keep = np.isfinite(best_scores[qi])
            results[qid] = {doc_ids[d]: float(s) for d, s in zip(best_docs[qi][keep], best_scores[qi][keep],
                                                                   strict=True)}
        return results



def _as_numpy(scores: Any) -> np.ndarray:
    if hasattr(scores, "detach"):
        scores = scores.detach().cpu().float().numpy()
    return np.asarray(scores, dtype=np.float32)


def _merge_top_k(best_scores: np.ndarray, best_docs: np.ndarray, batch_scores: np.ndarray,
                 batch_docs: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Per query, the ``k`` highest of the running top-k and this batch's scores."""
    scores = np.concatenate([best_scores, batch_scores.astype(np.float32, copy=False)], axis=1)
    docs = np.concatenate([best_docs, np.broadcast_to(batch_docs, batch_scores.shape)], axis=1)
    if scores.shape[1] > k:
        top = np.argpartition(-scores, k - 1, axis=1)[:, :k]
        scores = np.take_along_axis(scores, top, axis=1)
        docs = np.take_along_axis(docs, top, axis=1)
    return scores, docs


def wrap_long_docs(model: EncoderProtocol, mode: str, **options: Any) -> EncoderProtocol | SearchProtocol:
    """The model for ``complexir run --long-docs MODE``: ``none`` → the model itself; ``chunk`` → MaxP windows."""
    if mode == "none":
        return model
    if mode == "chunk":
        return MaxPSearchWrapper(model, **options)
    raise ValueError(f"--long-docs {mode!r}: expected one of {LONG_DOCS}")
