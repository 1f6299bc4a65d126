"""Exact top-k search in one streaming pass, as an MTEB search model: memory bounded by a batch, not the corpus.

Evaluation asks few queries (hundreds at most), so exact search needs no index: each corpus batch is encoded,
scored against every query vector, and folded into a running top-k per query. ``StreamingSearch`` implements
mteb's ``SearchProtocol`` (``index`` / ``search``), so ``mteb.evaluate`` drives it like any model and the tasks,
metrics and results stay the same. Where the batches are encoded is an engine's business: ``LocalEngine`` in
this process, ``complexir.systems.ray_engine.RayEngine`` on Ray actors.

Ties are resolved as MTEB's own search resolves them: its heap keeps the ``top_k`` largest ``(score, corpus id)``
pairs, so at equal scores the larger id wins; the merge here keeps exactly those pairs (``heapq.nlargest`` over
the same tuples). Scores come from the model's own ``similarity``, as in MTEB.

Reranking tasks (``top_ranked`` given) score only each query's candidates; they are delegated to MTEB's
``SearchEncoderWrapper`` over the same encoder (from parquet shards, only the candidates' rows are read).

The corpus comes from the task: a loaded ``datasets.Dataset`` (read in Arrow slices), or, when the task was told
to stream (``LayoutRetrievalTask.corpus_from_shards``), the ``ParquetSource`` of its corpus config's shards.
"""

from __future__ import annotations

import heapq
import logging
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from mteb.types import PromptType

if TYPE_CHECKING:
    from mteb.abstasks.task_metadata import TaskMetadata
    from mteb.models import EncoderProtocol
    from mteb.models.model_meta import ModelMeta
    from mteb.types import (
        CorpusDatasetType,
        EncodeKwargs,
        QueryDatasetType,
        RetrievalOutputType,
        TopRankedDocumentsType,
    )

from complexir.mteb.internals import create_dataloader
from complexir.systems.models import EncoderPassThrough

logger = logging.getLogger(__name__)

DEFAULT_BATCH_DOCS = 8192
Candidates = list[list[tuple[float, str]]]  # per query (in query order): (score, corpus id)


class CorpusSource(Protocol):
    """A corpus read batch by batch as Arrow tables with ``id``, ``text`` and optionally ``title``."""

    num_rows: int

    def batches(self, batch_docs: int) -> Iterator[pa.Table]: ...


class DatasetSource:
    """The corpus MTEB loaded (a memory-mapped ``datasets.Dataset``), read in Arrow slices without copying it."""

    def __init__(self, dataset: Any):
        self.dataset = dataset
        self.num_rows = len(dataset)

    def batches(self, batch_docs: int) -> Iterator[pa.Table]:
        yield from self.dataset.with_format("arrow").iter(batch_size=batch_docs)


class ParquetSource:
    """Corpus shards of the standard layout (``data/<subset>/corpus-*.parquet``), read batch by batch.

    ``complexir run --engine local|ray`` hands the tasks one of these as their corpus instead of a loaded
    ``datasets.Dataset``, so the driver never holds the corpus: it reads the parquet footers (row counts) up front
    and the rows one batch at a time. ``len``, ``column_names``, ``select_columns`` and ``read_columns`` are what
    the tasks ask of a corpus besides its batches (CRUMB's MaxP reads ids and parent ids, LoCoV1 counts tokens).
    """

    COLUMNS = ("id", "title", "text")

    def __init__(self, files: Sequence[str | Path], columns: Sequence[str] = COLUMNS):
        self.files = [Path(f) for f in files]
        if not self.files:
            raise FileNotFoundError("no corpus parquet shard given")
        schemas = [pq.read_schema(f) for f in self.files]
        for path, schema in zip(self.files, schemas, strict=True):
            missing = [c for c in ("id", "text") if c not in schema.names]
            if missing:
                raise ValueError(f"{path}: corpus shard without column(s) {missing} (it has {schema.names})")
        self.schema_names = [n for n in schemas[0].names if all(n in s.names for s in schemas)]
        self.columns = [c for c in columns if c in self.schema_names]
        self.num_rows = sum(pq.ParquetFile(f).metadata.num_rows for f in self.files)

    @classmethod
    def from_layout(cls, folder: str | Path, subset: str | None = None) -> ParquetSource:
        base = Path(folder) / "data" / subset if subset else Path(folder) / "data"
        return cls(sorted(base.glob("corpus-*.parquet")))

    def __len__(self) -> int:
        return self.num_rows

    @property
    def column_names(self) -> list[str]:
        return list(self.columns)

    def select_columns(self, columns: Sequence[str]) -> ParquetSource:
        """The same shards, read with only ``columns`` (as ``datasets.Dataset.select_columns``)."""
        unknown = [c for c in columns if c not in self.schema_names]
        if unknown:
            raise ValueError(f"{self.files[0].parent}: corpus shards have no column(s) {unknown}")
        other = object.__new__(ParquetSource)
        other.__dict__.update(self.__dict__, columns=list(columns))
        return other

    def read_columns(self, columns: Sequence[str]) -> pa.Table:
        """Whole columns of every shard (ids and the like: a fraction of the corpus's text)."""
        return pa.concat_tables(pq.read_table(f, columns=list(columns)) for f in self.files)

    def batches(self, batch_docs: int) -> Iterator[pa.Table]:
        for path in self.files:
            shard = pq.ParquetFile(path)
            for batch in shard.iter_batches(batch_size=batch_docs, columns=self.columns):
                yield pa.Table.from_batches([batch])

    def rows_with_ids(self, ids: set[str], batch_docs: int = DEFAULT_BATCH_DOCS) -> pa.Table:
        """The rows whose id is in ``ids``, in shard order (a pass over the shards holding one batch at a time)."""
        import pyarrow.compute as pc

        wanted = pa.array(sorted(ids), type=pa.string())
        parts = [t.filter(pc.is_in(t.column("id").cast(pa.string()), value_set=wanted))
                 for t in self.batches(batch_docs)]
        return pa.concat_tables(parts) if parts else pa.table({c: pa.array([], pa.string()) for c in self.columns})


@dataclass
class BatchContext:
    """What scoring a batch needs besides the batch: the same for every batch of one search."""

    query_embeddings: Any
    top_k: int
    task_metadata: TaskMetadata
    hf_split: str
    hf_subset: str
    encode_kwargs: dict[str, Any]


@contextmanager
def _quiet_datasets() -> Iterator[None]:
    """No per-batch 'Standardizing text corpus format' bars: the search shows one bar over the shards."""
    import datasets

    was_enabled = datasets.is_progress_bar_enabled()
    datasets.disable_progress_bars()
    try:
        yield
    finally:
        if was_enabled:
            datasets.enable_progress_bars()


def score_batch(encoder: EncoderProtocol, table: pa.Table, ctx: BatchContext) -> Candidates:
    """Encode one corpus batch and return, per query, every document that can be in its top-k (ties included).

    The batch goes through mteb's own ``create_dataloader`` (title and text joined as MTEB joins them) and the
    encoder's ``encode``, exactly as MTEB's chunked search does.
    """
    import torch
    from datasets import Dataset
    from datasets.table import InMemoryTable

    if table.num_rows == 0:
        return [[] for _ in range(len(ctx.query_embeddings))]
    ids = table.column("id").to_pylist()
    with _quiet_datasets():
        loader = create_dataloader(Dataset(InMemoryTable(table)), task_metadata=ctx.task_metadata,
                                   prompt_type=PromptType.document,
                                   batch_size=ctx.encode_kwargs.get("batch_size", 32))
    embeddings = encoder.encode(loader, task_metadata=ctx.task_metadata, hf_split=ctx.hf_split,
                                hf_subset=ctx.hf_subset, prompt_type=PromptType.document, **ctx.encode_kwargs)
    scores = torch.as_tensor(encoder.similarity(ctx.query_embeddings, embeddings)).cpu().numpy()
    if np.isnan(scores).any():
        raise ValueError(f"NaN similarity scores for documents {ids[0]}..{ids[-1]}")
    return batch_candidates(scores, ids, ctx.top_k)


def batch_candidates(scores: np.ndarray, ids: Sequence[str], top_k: int) -> Candidates:
    """Per query, the documents scoring at least its k-th best score in this batch (so ties are all kept)."""
    n_docs = scores.shape[1]
    k = min(top_k, n_docs)
    kth = np.partition(scores, n_docs - k, axis=1)[:, n_docs - k]
    out: Candidates = []
    for q in range(scores.shape[0]):
        keep = np.flatnonzero(scores[q] >= kth[q])
        out.append(list(zip(scores[q, keep].tolist(), (ids[i] for i in keep.tolist()), strict=True)))
    return out


class TopK:
    """Running per-query top-k of ``(score, corpus id)``: the ``top_k`` largest pairs, as MTEB's heap keeps."""

    def __init__(self, n_queries: int, top_k: int):
        self.top_k = top_k
        self.best: list[list[tuple[float, str]]] = [[] for _ in range(n_queries)]

    def add(self, candidates: Candidates) -> None:
        for q, new in enumerate(candidates):
            if not new:
                continue
            current = self.best[q]
            if len(current) >= self.top_k:  # only pairs above the current k-th can enter
                floor = current[-1]
                new = [c for c in new if c > floor]
                if not new:
                    continue
            self.best[q] = heapq.nlargest(self.top_k, current + new)  # sorted, best first


class ShardProgress:
    """One progress bar over the corpus batches ("shards"): shards done, documents/s and ETA."""

    def __init__(self, total_shards: int, total_docs: int, label: str, enabled: bool = True):
        from tqdm.auto import tqdm

        self.bar = tqdm(total=total_shards, unit="shard", desc=label, disable=not enabled)
        self.total_docs = total_docs
        self.docs = 0
        self.start = time.perf_counter()

    def advance(self, docs: int) -> None:
        self.docs += docs
        elapsed = max(time.perf_counter() - self.start, 1e-9)
        self.bar.set_postfix_str(f"{self.docs / elapsed:,.0f} docs/s", refresh=False)
        self.bar.update(1)

    def close(self) -> None:
        self.bar.close()

    @property
    def docs_per_second(self) -> float:
        return self.docs / max(time.perf_counter() - self.start, 1e-9)


class LocalEngine:
    """Encodes and scores the batches in this process, one after the other."""

    name = "local"

    def search(self, encoder: EncoderProtocol, source: CorpusSource, ctx: BatchContext, *, batch_docs: int,
               progress: bool = True) -> TopK:
        merged = TopK(len(ctx.query_embeddings), ctx.top_k)
        shards = -(-source.num_rows // batch_docs)
        bar = ShardProgress(shards, source.num_rows, f"{ctx.task_metadata.name} (local)", progress)
        try:
            for table in source.batches(batch_docs):
                merged.add(score_batch(encoder, table, ctx))
                bar.advance(table.num_rows)
        finally:
            bar.close()
        return merged


class StreamingSearch(EncoderPassThrough):
    """MTEB search model: exact top-k over a corpus streamed in batches through ``encoder`` on ``engine``.

    ``encoder`` is an MTEB encoder, normally a ``StoredEncoder`` so no text is encoded twice. ``sources``
    optionally maps ``(task name, subset)`` to a ``CorpusSource`` to read instead of the corpus MTEB loaded.
    """

    def __init__(self, encoder: EncoderProtocol, *, engine: Any | None = None, batch_docs: int = DEFAULT_BATCH_DOCS,
                 progress: bool = True, sources: dict[tuple[str, str], CorpusSource] | None = None):
        self.model = encoder  # `.model`, as in mteb's wrappers: helpers find the SentenceTransformer through it
        self.engine = engine or LocalEngine()
        self.batch_docs = batch_docs
        self.progress = progress
        self.sources = sources or {}
        self.task_corpus: Any = None
        self.docs_per_second: dict[str, float] = {}

    @property
    def mteb_model_meta(self) -> ModelMeta:
        return self.model.mteb_model_meta

    def index(self, corpus: CorpusDatasetType, *, task_metadata: TaskMetadata, hf_split: str, hf_subset: str,
              encode_kwargs: EncodeKwargs,
              num_proc: int | None = None, **kwargs: Any) -> None:
        self.task_corpus = corpus

    def search(self, queries: QueryDatasetType, *, task_metadata: TaskMetadata, hf_split: str, hf_subset: str,
               top_k: int, encode_kwargs: EncodeKwargs, top_ranked: TopRankedDocumentsType | None = None,
               num_proc: int | None = None, **kwargs: Any) -> RetrievalOutputType:
        if self.task_corpus is None:
            raise ValueError("Corpus must be indexed before searching.")
        # kept until the next index: a wrapper may search the same corpus again (CRUMB's MaxP, deeper); shards or a
        # memory-mapped dataset, so keeping it costs no memory
        corpus = self.task_corpus
        streamed = isinstance(corpus, ParquetSource)  # the task handed its shards, not a loaded corpus
        if top_ranked is not None:
            from mteb.models.search_wrappers import SearchEncoderWrapper

            if streamed:  # only the candidates are scored: read just those rows, in one pass over the shards
                from datasets import Dataset
                from datasets.table import InMemoryTable

                wanted = {cid for ids in top_ranked.values() for cid in ids}
                corpus = Dataset(InMemoryTable(corpus.rows_with_ids(wanted, self.batch_docs)))
            wrapper = SearchEncoderWrapper(self.model)
            wrapper.index(corpus, task_metadata=task_metadata, hf_split=hf_split, hf_subset=hf_subset,
                          encode_kwargs=encode_kwargs, num_proc=num_proc)
            return wrapper.search(queries, task_metadata=task_metadata, hf_split=hf_split, hf_subset=hf_subset,
                                  top_k=top_k, encode_kwargs=encode_kwargs, top_ranked=top_ranked,
                                  num_proc=num_proc, **kwargs)

        source = self.sources.get((task_metadata.name, hf_subset)) or (corpus if streamed else DatasetSource(corpus))
        if source.num_rows != len(corpus):
            raise ValueError(f"{task_metadata.name}/{hf_subset}: the corpus source holds {source.num_rows} documents, "
                             f"the task's corpus {len(corpus)}")
        return self.search_source(queries, source, task_metadata=task_metadata, hf_split=hf_split,
                                  hf_subset=hf_subset, top_k=top_k, encode_kwargs=encode_kwargs, num_proc=num_proc)

    def search_source(self, queries: Any, source: CorpusSource, *, task_metadata: TaskMetadata, hf_split: str,
                      hf_subset: str, top_k: int, encode_kwargs: Any,
                      num_proc: int | None = None) -> dict[str, dict[str, float]]:
        """Exact top-k of ``queries`` over ``source``: ``{query id: {corpus id: score}}``."""
        query_loader = create_dataloader(queries, task_metadata=task_metadata, prompt_type=PromptType.query,
                                         num_proc=num_proc, **encode_kwargs)
        query_embeddings = self.model.encode(query_loader, task_metadata=task_metadata, hf_split=hf_split,
                                             hf_subset=hf_subset, prompt_type=PromptType.query, **encode_kwargs)
        query_ids = list(queries["id"])
        ctx = BatchContext(query_embeddings=query_embeddings, top_k=top_k, task_metadata=task_metadata,
                           hf_split=hf_split, hf_subset=hf_subset, encode_kwargs=dict(encode_kwargs))
        start = time.perf_counter()
        merged = self.engine.search(self.model, source, ctx, batch_docs=self.batch_docs, progress=self.progress)
        self.docs_per_second[task_metadata.name] = source.num_rows / max(time.perf_counter() - start, 1e-9)
        return {qid: {cid: score for score, cid in best} for qid, best in zip(query_ids, merged.best, strict=True)}

