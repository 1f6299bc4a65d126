"""The streaming exact search: its merge keeps what MTEB's heap keeps, and a task run three ways (MTEB's own
search, ``--engine local``, ``--engine ray`` on a local Ray with 2 CPU workers) gives equal scores and rankings."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from complexir.systems.streaming_search import TopK, batch_candidates


@settings(max_examples=200, deadline=None)
@given(n_docs=st.integers(1, 60), n_queries=st.integers(1, 4), top_k=st.integers(1, 12),
       batch=st.integers(1, 17), seed=st.integers(0, 2**31 - 1))
def test_streamed_top_k_is_the_top_k_largest_score_id_pairs(n_docs, n_queries, top_k, batch, seed):
    rng = np.random.default_rng(seed)
    scores = rng.integers(0, 4, size=(n_queries, n_docs)).astype(np.float32) / 4  # many ties
    ids = [f"d{i:03d}" for i in rng.permutation(n_docs)]
    merged = TopK(n_queries, top_k)
    for start in range(0, n_docs, batch):
        merged.add(batch_candidates(scores[:, start:start + batch], ids[start:start + batch], top_k))
    for q in range(n_queries):
        # MTEB's heap keeps the top_k largest (score, id) tuples: at equal scores, the larger id
        expected = sorted(zip(scores[q].tolist(), ids, strict=True), reverse=True)[:top_k]
        assert merged.best[q] == expected


def test_streamed_top_k_equals_mteb_chunked_search_on_distinct_scores():
    import torch
    from datasets import Dataset
    from mteb.models.search_wrappers import chunked_full_corpus_search

    from complexir.tasks import tasks_by_name

    rng = np.random.default_rng(0)
    queries, docs = rng.normal(size=(5, 8)).astype(np.float32), rng.normal(size=(500, 8)).astype(np.float32)
    ids = [f"doc{i}" for i in range(500)]
    corpus = Dataset.from_dict({"id": ids, "text": ids})
    by_text = dict(zip(ids, docs, strict=True))

    def encode(loader, **_kwargs):
        return np.stack([by_text[t] for batch in loader for t in batch["text"]])

    heaps = chunked_full_corpus_search(
        task_corpus=corpus, corpus_chunk_size=64, query_idx_to_id=dict(enumerate("abcde")), query_embeddings=queries,
        task_metadata=tasks_by_name()["IRSCQuery"].metadata, hf_subset="en", hf_split="test", top_k=20,
        encode_kwargs={"show_progress_bar": False}, encode_fn=encode,
        similarity_fn=lambda a, b: torch.as_tensor(a) @ torch.as_tensor(b).T, search_k_offset=1)
    merged = TopK(5, 20)
    scores = queries @ docs.T
    for start in range(0, 500, 37):
        merged.add(batch_candidates(scores[:, start:start + 37], ids[start:start + 37], 20))
    for q, qid in enumerate("abcde"):
        mine = {cid: score for score, cid in merged.best[q]}
        theirs = {cid: score for score, cid in heaps[qid]}
        assert mine.keys() == theirs.keys()
        assert max(abs(mine[c] - theirs[c]) for c in mine) < 1e-6


# a plain task, a Rerank task, a CRUMB task with an instruction and one with MaxP (passages collapsed), LoCoV1
def test_the_indexed_corpus_can_be_searched_again(tmp_path):
    """CRUMB's MaxP searches the indexed corpus again, deeper, for the queries whose top documents are not yet
    exact: the streaming search keeps the corpus it indexed until the next ``index``."""
    from datasets import Dataset

    from complexir.api.run import demo_data_dir
    from complexir.systems.embedding_store import EmbeddingStore
    from complexir.systems.models import load_model
    from complexir.systems.stored_encoder import StoredEncoder
    from complexir.systems.streaming_search import ParquetSource, StreamingSearch
    from complexir.tasks import tasks_by_name

    meta = tasks_by_name()["IRSCQuery"].metadata
    search = StreamingSearch(StoredEncoder(load_model(None), EmbeddingStore(tmp_path)), batch_docs=4, progress=False)
    kwargs = {"task_metadata": meta, "hf_split": "test", "hf_subset": "en", "encode_kwargs": {}}
    search.index(ParquetSource.from_layout(demo_data_dir() / "irsc", "query-en"), **kwargs)
    queries = Dataset.from_dict({"id": ["q1", "q2"], "text": ["a question about cats", "stock markets"]})
    shallow = search.search(queries, top_k=2, **kwargs)
    deep = search.search(queries.select([1]), top_k=5, **kwargs)
    assert len(deep["q2"]) == 5 and set(shallow["q2"]) <= set(deep["q2"])


TASKS = ["IRSCQuery", "CoverageBenchCAsT2020", "CoverageBenchCAsT2020Rerank", "CRUMBLegalQA", "CRUMBClinicalTrial",
         "LoCoV1GovReport"]


def _rankings(node: dict, prefix: str = "") -> dict:
    """{subset/split/query: {doc: score}} from one mteb prediction file's nested dicts."""
    flat = {}
    for key, value in node.items():
        if isinstance(value, dict) and value and all(isinstance(v, float) for v in value.values()):
            flat[prefix + key] = value
        elif isinstance(value, dict):
            flat.update(_rankings(value, f"{prefix}{key}/"))
    return flat


def _predictions(folder) -> dict:
    """{prediction file: {subset/split/query: {doc: score}}} from mteb's prediction files."""
    return {path.name: _rankings(json.loads(path.read_text())) for path in folder.glob("*_predictions.json")}


def _main_scores(result) -> dict:
    return {(r.task_name, split, e["hf_subset"], k): v for r in result.task_results for split, entries in
            r.scores.items() for e in entries for k, v in e.items() if isinstance(v, float)}


@pytest.mark.slow  # a local Ray
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_mteb_search_local_engine_and_ray_engine_agree(tmp_path):
    import mteb

    from complexir.api.run import demo_data_dir, select_tasks
    from complexir.hub.data_source import DataSource
    from complexir.systems.kinds import build_dense_search
    from complexir.systems.models import EncodeCounter, load_model
    from complexir.systems.options import SearchOptions

    base = load_model(None)
    runs = {}
    for engine in ("mteb", "local", "ray"):
        options = SearchOptions(engine=engine, workers=2, batch_docs=4, cache=str(tmp_path / "store" / engine))
        setup = build_dense_search(options, EncodeCounter(base), long_docs=False)
        tasks = select_tasks(None, TASKS, DataSource.local(demo_data_dir()), ["test"])
        for task in tasks:  # as `complexir run` does: local and ray stream the parquet shards
            task.corpus_from_shards = setup.streams_corpus
        assert setup.streams_corpus == (engine != "mteb")
        try:
            result = mteb.evaluate(setup.model, tasks, cache=mteb.ResultCache(tmp_path / engine),
                                   overwrite_strategy="always", prediction_folder=tmp_path / engine / "predictions",
                                   show_progress_bar=False)
        finally:
            setup.close()
        runs[engine] = (_main_scores(result), _predictions(tmp_path / engine / "predictions"), setup.stored.counts)

    reference_scores, reference_rankings, _ = runs["mteb"]
    assert len(reference_rankings) == len(TASKS)
    for engine in ("local", "ray"):
        scores, rankings, counts = runs[engine]
        assert scores.keys() == reference_scores.keys()
        for key, value in reference_scores.items():
            assert scores[key] == pytest.approx(value, abs=1e-6, nan_ok=True), (engine, key)
        assert rankings.keys() == reference_rankings.keys()
        for task, queries in reference_rankings.items():
            assert queries.keys() == rankings[task].keys()
            for query, docs in queries.items():
                ours = rankings[task][query]
                assert ours.keys() == docs.keys(), (engine, task, query)  # the same top-k list
                assert max(abs(ours[d] - docs[d]) for d in docs) <= 1e-6
        # every text went through the store, and the workers' counts reached the driver
        assert counts.encoded == counts.unique and counts.requested >= counts.unique > 0


@pytest.mark.slow  # a local Ray, and the demo benchmark run twice
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("engine", ["local", "ray"])
def test_streaming_engines_read_the_corpus_from_shards_never_loading_it(tmp_path, monkeypatch, capsys, engine):
    """``complexir run --engine local|ray``: no task loads its corpus (MTEB's corpus loader and our reader's would
    fail here); the documents come from the layout's parquet shards, batch by batch; queries and qrels load as
    usual, and every task (Rerank, CRUMB MaxP, LoCoV1 included) scores."""
    from mteb.abstasks.retrieval_dataset_loaders import RetrievalDatasetLoader

    from complexir.cli.main import main
    from complexir.layout import reader
    from complexir.systems.streaming_search import ParquetSource

    def no_corpus_load(*args, **kwargs):
        raise AssertionError("the corpus was loaded as a datasets.Dataset")

    real_load = reader.load
    monkeypatch.setattr(RetrievalDatasetLoader, "_load_corpus", no_corpus_load)
    monkeypatch.setattr(reader, "load", lambda source, subset, kind, *a, **kw: no_corpus_load() if kind == "corpus"
                        else real_load(source, subset, kind, *a, **kw))
    read = []  # documents of each batch read from the shards
    real_batches = ParquetSource.batches

    def batches(source, batch_docs):
        for table in real_batches(source, batch_docs):
            read.append(table.num_rows)
            yield table

    monkeypatch.setattr(ParquetSource, "batches", batches)
    tasks = ["IRSCQuery", "CoverageBenchCAsT2020Rerank", "CRUMBClinicalTrial", "LoCoV1GovReport"]
    argv = ["run", "--engine", engine, "--workers", "2", "--batch-docs", "3", "--output", str(tmp_path / "out")]
    assert main([*argv, *(a for t in tasks for a in ("--task", t))]) == 0
    table = capsys.readouterr().out
    assert "FAILED" not in table and all(t in table for t in tasks)
    assert read and max(read) <= 3  # batch by batch


class DieOnceAfterEncoding:
    """An encoder whose process dies (as a crashed worker would) right after its first corpus batch was encoded
    and committed to the store; the marker file makes it die only once."""

    def __init__(self, encoder, marker: str):
        self.encoder, self.marker = encoder, marker

    @property
    def counts(self):
        return self.encoder.counts

    @counts.setter
    def counts(self, value):
        self.encoder.counts = value

    def encode(self, inputs, **kwargs):
        import os

        out = self.encoder.encode(inputs, **kwargs)
        if kwargs.get("prompt_type") is not None and kwargs["prompt_type"].value == "document":
            try:
                os.close(os.open(self.marker, os.O_CREAT | os.O_EXCL))  # one worker, once
            except FileExistsError:
                return out
            os._exit(1)
        return out

    def similarity(self, a, b):
        return self.encoder.similarity(a, b)


class DieOnceSpec:
    def __init__(self, inner, marker: str):
        self.inner, self.marker = inner, marker

    def build(self):
        return DieOnceAfterEncoding(self.inner.build(), self.marker)


@pytest.mark.slow  # a local Ray
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_ray_retries_a_failed_shard_without_encoding_it_again(tmp_path):
    import sys

    import pyarrow as pa
    import ray
    from datasets import Dataset
    from mteb.types import PromptType

    from complexir.api.run import demo_data_dir
    from complexir.mteb.internals import create_dataloader
    from complexir.systems.embedding_store import EmbeddingStore
    from complexir.systems.models import load_model
    from complexir.systems.ray_engine import RayEngine, StoredModelSpec
    from complexir.systems.stored_encoder import StoredEncoder
    from complexir.systems.streaming_search import BatchContext, LocalEngine, ParquetSource
    from complexir.tasks import tasks_by_name

    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers cannot import this test module
    meta = tasks_by_name()["IRSCQuery"].metadata
    source = ParquetSource.from_layout(demo_data_dir() / "irsc", "query-en")
    driver = StoredEncoder(load_model(None), EmbeddingStore(tmp_path / "driver"))
    queries = Dataset.from_dict({"id": ["q1", "q2"], "text": ["a question about cats", "stock markets"]})
    q_emb = driver.encode(create_dataloader(queries, task_metadata=meta, prompt_type=PromptType.query),
                          task_metadata=meta, hf_split="test", hf_subset="en", prompt_type=PromptType.query)
    ctx = BatchContext(query_embeddings=q_emb, top_k=5, task_metadata=meta, hf_split="test", hf_subset="en",
                       encode_kwargs={})
    expected = LocalEngine().search(driver, source, ctx, batch_docs=3, progress=False).best

    store = tmp_path / "common_store"
    spec = DieOnceSpec(StoredModelSpec(store=str(store)), str(tmp_path / "died"))
    engine = RayEngine(spec, workers=2)
    try:
        counting = StoredEncoder(load_model(None), EmbeddingStore(tmp_path / "unused"))
        got = engine.search(counting, source, ctx, batch_docs=1, progress=False).best  # one document a shard
    finally:
        engine.shutdown()
    assert (tmp_path / "died").exists()  # a worker died mid-search, and its shards were run again
    assert [[cid for _, cid in q] for q in got] == [[cid for _, cid in q] for q in expected]
    for mine, theirs in zip(got, expected, strict=True):
        assert max(abs(a[0] - b[0]) for a, b in zip(mine, theirs, strict=True)) <= 1e-6
    # The shard the dead worker had committed was served on retry: the store holds each document once.
    (doc_namespace,) = [p for p in store.iterdir() if '"document"' in (p / "key.json").read_text()]
    stored_rows = sum(pa.ipc.open_file(pa.memory_map(str(p))).read_all().num_rows
                      for p in doc_namespace.glob("seg-*.arrow"))
    assert stored_rows == source.num_rows
    assert counting.counts.encoded == source.num_rows - 1  # the dead worker's document was served on retry

