"""The content-addressed embedding store: one encoding per text across tasks, and nothing partial served after a
run is killed midway."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from datasets import Dataset
from mteb.types import PromptType

from complexir.mteb.internals import create_dataloader
from complexir.systems.embedding_store import EmbeddingStore, StoreKey, text_hashes
from complexir.systems.models import EncodeCounter, load_model
from complexir.systems.stored_encoder import StoredEncoder

KEY = StoreKey(model="m", revision="r", max_length=8, prompt_type="document", prompt="prompt:")


def vector_of(hashes: np.ndarray, dim: int = 64) -> np.ndarray:
    """A deterministic vector per text: its hash bytes, repeated, as float32."""
    return np.tile(hashes.astype(np.float32), (1, dim // hashes.shape[1]))


def test_store_round_trip_across_instances(tmp_path):
    texts = [f"text {i}" for i in range(10)]
    hashes = text_hashes(texts)
    EmbeddingStore(tmp_path).namespace(KEY).add(hashes[:6], vector_of(hashes[:6]))

    other = EmbeddingStore(tmp_path).namespace(KEY)  # another process's view: reads what is on disk
    found, vectors = other.get(hashes)
    assert found.tolist() == [True] * 6 + [False] * 4
    assert np.array_equal(vectors[:6], vector_of(hashes[:6]))
    # another key (here: another max length) never sees these vectors
    found, _ = EmbeddingStore(tmp_path).namespace(StoreKey("m", "r", 16, "document", "prompt:")).get(hashes)
    assert not found.any()


def test_a_text_held_by_two_tasks_is_encoded_once(tmp_path):
    from complexir.tasks import tasks_by_name

    counter = EncodeCounter(load_model(None))
    store = StoredEncoder(counter, EmbeddingStore(tmp_path))
    shared = {"id": ["a", "b", "c"], "title": ["", "", "T"], "text": ["first doc", "second doc", "third doc"]}
    for name, rows in (("IRSCQuery", shared), ("IRSCTitle", {k: v[::-1] for k, v in shared.items()})):
        meta = tasks_by_name()[name].metadata
        loader = create_dataloader(Dataset.from_dict(rows), task_metadata=meta, prompt_type=PromptType.document)
        vectors = store.encode(loader, task_metadata=meta, hf_split="test", hf_subset="en",
                               prompt_type=PromptType.document)
        assert vectors.shape == (3, 384)
        if name == "IRSCQuery":
            first = vectors
    assert np.array_equal(vectors[::-1], first)  # the second task got the first task's vectors, in its order
    assert dict(counter.documents) == {"IRSCQuery": 3}  # the model saw the three texts once, for the first task
    counts = store.counts
    assert (counts.requested, counts.unique, counts.encoded, counts.served) == (6, 3, 3, 3)


WRITER = textwrap.dedent("""
    import sys, numpy as np
    from complexir.systems.embedding_store import EmbeddingStore, StoreKey, text_hashes
    key = StoreKey(model="m", revision="r", max_length=8, prompt_type="document", prompt="prompt:")
    namespace = EmbeddingStore(sys.argv[1], merge_every=int(sys.argv[2]) or None).namespace(key)
    for batch in range(10_000):
        hashes = text_hashes([f"doc {batch} {i}" for i in range(20_000)])
        namespace.add(hashes, np.tile(hashes.astype(np.float32), (1, 2)))
""")


@pytest.mark.parametrize("merge_every", [0, 30_000], ids=["index-in-memory", "merging-every-1.5-segments"])
def test_a_store_left_by_a_killed_run_serves_no_partial_vector(tmp_path, caplog, merge_every):
    """Killed while committing segments (and, with merges every 30,000 vectors, while merging its index)."""
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), str(merge_every)])
    folder = tmp_path / KEY.digest()
    deadline = time.monotonic() + 300
    while len(list(folder.glob("seg-*.arrow"))) < 2:  # let it commit some segments, then kill it mid-stream
        assert writer.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    time.sleep(0.3)
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait()

    # A damaged segment under a final name (what a torn write would look like without the rename) is skipped.
    good = sorted(folder.glob("seg-*.arrow"))[0]
    (folder / "seg-zz-torn.arrow").write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    committed = len(list(folder.glob("seg-*.arrow"))) - 1
    with caplog.at_level(logging.WARNING, logger="complexir.systems.embedding_store"):
        namespace = EmbeddingStore(tmp_path).namespace(KEY)
    assert "seg-zz-torn.arrow" in caplog.text
    assert len(namespace.segments) == committed >= 2

    batches = committed + 1  # every committed batch, and the one the kill interrupted
    hashes = text_hashes([f"doc {b} {i}" for b in range(batches) for i in range(20_000)])
    found, vectors = namespace.get(hashes)
    assert found.sum() == committed * 20_000  # whole segments only
    assert np.array_equal(vectors[found], np.tile(hashes[found].astype(np.float32), (1, 2)))  # every one exact


def test_vectors_of_another_size_are_refused(tmp_path):
    namespace = EmbeddingStore(tmp_path).namespace(KEY)
    hashes = text_hashes(["a", "b"])
    namespace.add(hashes[:1], np.zeros((1, 4), dtype=np.float32))
    with pytest.raises(ValueError, match="vectors of size 3"):
        namespace.add(hashes[1:], np.zeros((1, 3), dtype=np.float32))


def test_the_on_disk_index_serves_what_memory_held_and_bounds_memory(tmp_path):
    """With merges every 1,000 vectors: every process finds every vector, a fresh one holds at most one merge's
    worth in memory, and stale generations are removed."""
    hashes = text_hashes([f"text {i}" for i in range(5_000)])
    writer = EmbeddingStore(tmp_path, merge_every=1_000).namespace(KEY)
    reader = EmbeddingStore(tmp_path, merge_every=1_000).namespace(KEY)  # open before anything was written
    for start in range(0, 4_500, 300):  # segments of 300: merges land between segments' boundaries
        writer.add(hashes[start:start + 300], vector_of(hashes[start:start + 300]))
    assert writer.disk is not None and writer.disk.count >= 3_000 and writer.in_memory < 1_000
    assert len(list(writer.folder.glob("index-*.bin"))) == 1

    for namespace in (writer, reader, EmbeddingStore(tmp_path, merge_every=1_000).namespace(KEY)):
        namespace.refresh()
        assert len(namespace) == 4_500 and namespace.in_memory < 1_000
        found, vectors = namespace.get(hashes)
        assert found.tolist() == [True] * 4_500 + [False] * 500
        assert np.array_equal(vectors[:4_500], vector_of(hashes[:4_500]))
        assert len(namespace.segments) == 15


def test_a_store_whose_merge_was_killed_serves_every_committed_vector(tmp_path):
    """A merge killed after writing its index file but before naming it leaves that file unnamed: the previous
    generation and the segments serve every vector, and the next merge removes the orphan."""
    hashes = text_hashes([f"text {i}" for i in range(3_000)])
    namespace = EmbeddingStore(tmp_path, merge_every=1_000).namespace(KEY)
    for start in range(0, 2_000, 500):
        namespace.add(hashes[start:start + 500], vector_of(hashes[start:start + 500]))
    current = (namespace.folder / "index.json").read_text()
    (namespace.folder / "index-orphan.bin").write_bytes(b"\\0" * 100)  # what a killed merge's rename would leave
    (namespace.folder / ".tmp-index.bin").write_bytes(b"\\0" * 10)
    namespace.add(hashes[2_000:2_500], vector_of(hashes[2_000:2_500]))  # committed, not merged yet

    fresh = EmbeddingStore(tmp_path, merge_every=1_000).namespace(KEY)
    assert (fresh.folder / "index.json").read_text() == current
    found, vectors = fresh.get(hashes)
    assert found.sum() == 2_500 and np.array_equal(vectors[found], vector_of(hashes[found]))
    fresh.add(hashes[2_500:], vector_of(hashes[2_500:]))  # the next merge
    assert [p.name for p in fresh.folder.glob("index-*.bin")] == [json.loads(
        (fresh.folder / "index.json").read_text())["file"]]
    assert fresh.get(hashes)[0].all()
