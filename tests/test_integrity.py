"""The corpus-id rules in bounded memory (``integrity.DocumentIds``): exact whatever the hashes do.

Hashes only make candidates; these tests force collisions (a hash shared by every id, or by many) and check that
no collision becomes a duplicate or hides a missing document, over several runs, buckets and files.
"""

from __future__ import annotations

import random
import re
import zlib

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_layout import DOCS, build

from complexir.layout import integrity
from complexir.layout.errors import LayoutError
from complexir.layout.integrity import DocumentIds, Place
from complexir.layout.validation import validate_folder
from complexir.layout.writer import WordCounts


def _constant_hash(ids):
    return np.zeros(len(ids), dtype=np.uint64)


def _weak_hash(ids):  # eight values: every id collides with about an eighth of the others
    return np.array([zlib.crc32(i.encode()) % 8 for i in ids], dtype=np.uint64)


def _files(tmp_path, ids, per_file):
    paths = []
    for k in range(0, len(ids), per_file):
        path = tmp_path / f"ids-{k:05d}.parquet"
        pq.write_table(pa.table({"id": ids[k:k + per_file]}), path)
        paths.append(path)
    return paths


def _document_ids(tmp_path, ids, *, per_file=9, batch=4, run_rows=7, bucket_rows=5):
    """``DocumentIds`` fed like the writer feeds it (batches of files, in order), with tiny runs and buckets."""
    found = DocumentIds(tmp_path / "scratch", lambda path, local, number: Place(path.name, local + 1),
                        run_rows=run_rows, bucket_rows=bucket_rows)
    for path in _files(tmp_path, ids, per_file):
        column = pq.read_table(path).column("id").to_pylist()
        for k in range(0, len(column), batch):
            found.add(column[k:k + batch], path)
    return found


@pytest.mark.parametrize("hashes", [_constant_hash, _weak_hash, integrity.id_hashes])
def test_unique_ids_pass_and_membership_is_exact_under_collisions(tmp_path, monkeypatch, hashes):
    monkeypatch.setattr(integrity, "id_hashes", hashes)
    ids = [f"doc-{i}" for i in range(61)]
    found = _document_ids(tmp_path, ids)
    found.check_unique()  # no collision is called a duplicate
    assert len(found) == 61
    asked = {"doc-0", "doc-60", "doc-33", "gone", "doc-61", "", "doc-3 "}
    assert found.missing(asked) == {"gone", "doc-61", "", "doc-3 "}
    assert found.missing([]) == set()


@pytest.mark.parametrize("hashes", [_constant_hash, _weak_hash, integrity.id_hashes])
def test_a_real_duplicate_names_both_files_and_rows(tmp_path, monkeypatch, hashes):
    monkeypatch.setattr(integrity, "id_hashes", hashes)
    ids = [f"doc-{i}" for i in range(40)] + ["doc-12"] + [f"doc-{i}" for i in range(40, 50)]
    found = _document_ids(tmp_path, ids)
    # files of 9 ids: the 13th id is row 4 of the second file, the 41st row 5 of the fifth
    with pytest.raises(LayoutError, match=re.escape("ids-00036.parquet, row 5: duplicate document id 'doc-12' "
                                                    "(first at ids-00009.parquet, row 4)")):
        found.check_unique()


def test_random_corpora_agree_with_a_python_set(tmp_path, monkeypatch):
    """Random ids (with and without duplicates) under a weak hash: the same verdicts as a plain set."""
    monkeypatch.setattr(integrity, "id_hashes", _weak_hash)
    rng = random.Random(7)
    for trial in range(12):
        ids = [f"d{rng.randrange(400)}" for _ in range(rng.randrange(1, 80))]
        folder = tmp_path / str(trial)
        folder.mkdir()
        found = _document_ids(folder, ids, per_file=rng.randrange(1, 20), batch=rng.randrange(1, 6),
                              run_rows=rng.randrange(1, 30), bucket_rows=rng.randrange(1, 30))
        if len(set(ids)) < len(ids):
            with pytest.raises(LayoutError, match="duplicate document id"):
                found.check_unique()
        else:
            found.check_unique()
        asked = {f"d{rng.randrange(400)}" for _ in range(30)}
        assert found.missing(asked) == asked - set(ids)


def test_a_build_under_colliding_hashes_counts_exactly(tmp_path, monkeypatch):
    """Writer and validator under a hash shared by every id: no false duplicate, exact missing-document counts."""
    monkeypatch.setattr(integrity, "id_hashes", _constant_hash)
    from test_layout import NUGGETS, QRELS

    qrels = [*QRELS, {"query-id": "q1", "corpus-id": "gone", "score": 1}]
    nuggets = [{**NUGGETS[0], "support": [{"corpus-id": "d1", "score": 1}, {"corpus-id": "gone", "score": 1}]},
               *NUGGETS[1:]]
    docs = [*DOCS, *({"id": f"x{i}", "text": "filler"} for i in range(20))]
    out = build(tmp_path / "out", docs=docs, qrels=qrels, nuggets=nuggets, shard_rows=4, batch_rows=3)
    counts = validate_folder(out)["drugs"]
    assert counts["documents"] == 23
    assert (counts["splits"]["test"]["missing_document_qrels"], counts["splits"]["test"]["missing_document_support"]) \
        == (1, 1)
    assert not [p for p in out.rglob("*") if ".document-ids" in p.name or ".complexir-validate" in p.name]


def test_a_build_with_a_duplicate_in_a_later_shard_under_colliding_hashes(tmp_path, monkeypatch):
    monkeypatch.setattr(integrity, "id_hashes", _constant_hash)
    docs = [*({"id": f"x{i}", "text": "filler"} for i in range(9)), {"id": "x2", "text": "again"}]
    with pytest.raises(LayoutError, match=re.escape("corpus of subset 'drugs', row 10: duplicate document id 'x2' "
                                                    "(first at row 3)")):
        build(tmp_path / "out", docs=docs, shard_rows=4, batch_rows=3)
    assert list(tmp_path.iterdir()) == []


def test_word_counts_summarise_like_numpy():
    rng = np.random.default_rng(0)
    for _ in range(200):
        lengths = rng.integers(0, int(rng.integers(1, 3000)), int(rng.integers(1, 400)))
        counts = WordCounts()
        for n in lengths:
            counts.add(int(n))
        assert counts.summary() == {"mean": float(lengths.mean()), "p50": float(np.percentile(lengths, 50)),
                                    "p95": float(np.percentile(lengths, 95)), "max": int(lengths.max())}
