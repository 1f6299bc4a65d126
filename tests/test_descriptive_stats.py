"""The descriptive statistics ``complexir build`` stores equal mteb's own, computed with the corpus streamed.

mteb's ``calculate_descriptive_statistics`` (on the loaded corpus) is the reference: for every task on the demos,
and with the distinct-text count forced through its on-disk runs.
"""

from __future__ import annotations

import functools
import json
import random
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from complexir.api.run import demo_data_dir
from complexir.layout.distinct import KEY, DistinctKeys, digest_keys, text_keys
from complexir.tasks import TASKS, descriptive_stats
from complexir.tasks.layout_task import task_to_describe

ON_DEMO = [cls for cls in TASKS if cls().available_in(demo_data_dir())]


@pytest.fixture(scope="module")
def demo_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo data dir, copied: mteb writes its statistics into the folder a task reads."""
    copy = tmp_path_factory.mktemp("demo") / "data"
    shutil.copytree(demo_data_dir(), copy)
    return copy


def mteb_and_streamed(cls: type, data_dir: Path) -> tuple[str, str]:
    reference = task_to_describe(cls, data_dir)
    theirs = reference.calculate_descriptive_statistics(overwrite_results=True)
    streamed = task_to_describe(cls, data_dir)
    streamed.corpus_from_shards = True
    ours = descriptive_stats.task_statistics(streamed)
    # hands the streamed task the shards, not a loaded corpus
    first = streamed.dataset[next(iter(streamed.dataset))][streamed.metadata.eval_splits[0]]["corpus"]
    assert type(first).__name__ == "ParquetSource"
    return json.dumps(theirs, indent=4), json.dumps(ours, indent=4)


@pytest.mark.parametrize("task_class", ON_DEMO, ids=lambda cls: cls.metadata.name)
def test_streamed_statistics_equal_mtebs_on_every_demo_task(task_class, demo_copy):
    theirs, ours = mteb_and_streamed(task_class, demo_copy)
    assert ours == theirs  # the same keys in the same order, and every value (floats included) exactly


def test_the_distinct_texts_counted_on_disk_equal_mtebs(demo_copy, monkeypatch, tmp_path):
    """The run-on-disk path of the distinct-text count (forced with a budget of 8 keys) gives mteb's numbers, on a
    multilingual task whose overall figures take several corpora together (texts shared across them)."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(descriptive_stats, "DistinctKeys",
                        functools.partial(DistinctKeys, memory_keys=8, bucket_keys=4, scratch_parent=scratch))
    multilingual = [cls for cls in ON_DEMO if cls.metadata.is_multilingual]
    assert multilingual
    theirs, ours = mteb_and_streamed(multilingual[0], demo_copy)
    assert ours == theirs
    assert json.loads(ours)["test"]["documents_text_statistics"]["unique_texts"] > 8
    assert list(scratch.iterdir()) == []  # the runs are deleted


def test_build_writes_the_statistics_before_the_swap(tmp_path, monkeypatch):
    """The statistics are part of the folder put in place: a build interrupted while computing them leaves the
    previous folder untouched, and none without statistics."""
    from complexir.cli.main import main
    from complexir.layout import writer

    fixture = Path(__file__).parent / "fixtures" / "crumb" / "demo_upstream"
    out = tmp_path / "crumb"
    seen = []
    swap = writer.replace_folder

    def checking_swap(tmp, target, check):
        seen.append(sorted(p.name for p in (tmp / "descriptive_stats").iterdir()))
        return swap(tmp, target, check)

    monkeypatch.setattr(writer, "replace_folder", checking_swap)
    assert main(["build", "crumb", "--source", str(fixture), "--out", str(out), "--subset", "legal_qa",
                 "--no-progress"]) == 0
    assert seen == [["CRUMBLegalQA.json", "CRUMBLegalQAFullDocument.json"]]
    before = sorted((p.relative_to(out), p.read_bytes()) for p in out.rglob("*") if p.is_file())

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(descriptive_stats, "task_statistics", interrupted)
    assert main(["build", "crumb", "--source", str(fixture), "--out", str(out), "--subset", "legal_qa",
                 "--no-progress", "--overwrite"]) == 130  # Ctrl-C's exit code
    assert sorted((p.relative_to(out), p.read_bytes()) for p in out.rglob("*") if p.is_file()) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["crumb"]  # no partial folder left


@settings(max_examples=60, deadline=None)
@given(texts=st.lists(st.text(max_size=4), max_size=300), memory=st.integers(1, 64), bucket=st.integers(1, 64),
       batch=st.integers(1, 50))
def test_distinct_keys_count_like_a_set(texts, memory, bucket, batch):
    with DistinctKeys(memory_keys=memory, bucket_keys=bucket) as distinct:
        for start in range(0, len(texts), batch):
            distinct.add(text_keys(texts[start:start + batch]))
        assert distinct.count() == len(set(texts))
        assert len(distinct.keys()) == len(set(texts))


def test_distinct_keys_travel_as_keys_and_take_digests():
    """Pickled (a Ray worker's counts), the keys travel themselves, not paths to the sender's disk."""
    import pickle

    rng = random.Random(1)
    texts = [str(rng.randrange(500)) for _ in range(3000)]
    with DistinctKeys(memory_keys=100) as distinct:
        for start in range(0, len(texts), 250):
            distinct.add(text_keys(texts[start:start + 250]))
        copy = pickle.loads(pickle.dumps(distinct))
    assert copy.count() == len(set(texts))
    digests = np.frombuffer(bytes(range(64)), dtype=np.uint8).reshape(2, 32)
    keys = digest_keys(digests)
    assert keys.dtype == KEY and len(keys) == 2
    with pytest.raises(TypeError, match="dtype"):
        DistinctKeys().add(np.zeros(3, dtype=np.uint64))
