"""The standard layout: writer, validator, reader, and MTEB's own loader on the same folder."""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
from pathlib import Path

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from mteb.abstasks.retrieval_dataset_loaders import RetrievalDatasetLoader

from complexir.layout import reader
from complexir.layout.card import CardInfo, read_front_matter
from complexir.layout.errors import LayoutError
from complexir.layout.schema import config_name
from complexir.layout.validation import validate_folder
from complexir.layout.writer import BenchmarkWriter

CARD = CardInfo("toy", "Toy benchmark", "apache-2.0", "@misc{toy, title={Toy}}", "hand-written", revision="r1")

DOCS = [
    {"id": "d1", "title": "Aspirin", "text": "Aspirin reduces fever and relieves mild pain.", "parent-id": "p1"},
    {"id": "d2", "title": "", "text": "Ibuprofen is a non-steroidal anti-inflammatory drug.", "parent-id": "p1"},
    {"id": "d3", "title": "Paracetamol", "text": "Paracetamol is also called acetaminophen.", "parent-id": None},
]
QUERIES = [
    {"id": "q1", "text": "what relieves pain", "instruction": "Find drugs."},
    {"id": "q2", "text": "other names of paracetamol", "instruction": ""},
    {"id": "q3", "text": "a query whose only judgment is non-relevant", "instruction": ""},
]
QRELS = [
    {"query-id": "q1", "corpus-id": "d1", "score": 2},
    {"query-id": "q1", "corpus-id": "d2", "score": 0},
    {"query-id": "q2", "corpus-id": "d3", "score": 1},
    {"query-id": "q3", "corpus-id": "d1", "score": 0},
]
NUGGETS = [
    {"query-id": "q1", "nugget-id": "1", "text": "aspirin relieves pain", "support": [{"corpus-id": "d1", "score": 1}]},
    {"query-id": "q1", "nugget-id": "2", "text": "an unsupported aspect", "support": []},
    {"query-id": "q3", "nugget-id": "1", "text": "dropped with its query", "support": []},
]


def build(path, *, docs=DOCS, queries=QUERIES, qrels=QRELS, nuggets=NUGGETS, top_ranked=None, **kwargs):
    with BenchmarkWriter(path, CARD, progress=False, **kwargs) as writer:
        writer.write_corpus("drugs", iter(docs))
        writer.write_split("drugs", "test", queries=queries, qrels=qrels, nuggets=nuggets, top_ranked=top_ranked)
        writer.note("drugs", "hand-written", "yes")
    return path


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    return build(tmp_path_factory.mktemp("layout") / "toy")


def test_every_config_loads_with_datasets(toy):
    corpus = datasets.load_dataset(str(toy), "drugs-corpus", split="corpus")
    assert corpus["id"] == ["d1", "d2", "d3"]
    assert corpus["title"] == ["Aspirin", "", "Paracetamol"]
    assert corpus["parent-id"] == ["p1", "p1", None]
    queries = datasets.load_dataset(str(toy), "drugs-queries", split="test")
    assert queries["id"] == ["q1", "q2"]  # q3 has no positive qrel: dropped
    assert queries["instruction"] == ["Find drugs.", ""]
    qrels = datasets.load_dataset(str(toy), "drugs-qrels", split="test")
    assert list(zip(qrels["query-id"], qrels["corpus-id"], qrels["score"], strict=True)) == [
        ("q1", "d1", 2), ("q1", "d2", 0), ("q2", "d3", 1)]
    assert qrels.features["score"].dtype == "int32"
    nuggets = datasets.load_dataset(str(toy), "drugs-nuggets", split="test")
    assert nuggets["nugget-id"] == ["1", "2"]
    assert nuggets["weight"] == [1.0, 1.0]
    assert nuggets["support"] == [[{"corpus-id": "d1", "score": 1}], []]


def test_mteb_loader_reads_the_folder_natively(toy):
    split = RetrievalDatasetLoader(str(toy), revision=None, split="test", config="drugs").load()
    assert split["relevant_docs"] == {"q1": {"d1": 2, "d2": 0}, "q2": {"d3": 1}}
    assert sorted(split["corpus"]["id"]) == ["d1", "d2", "d3"]
    assert split["queries"]["id"] == ["q1", "q2"]


def test_reader_helpers(toy):
    assert reader.list_subsets(toy) == ["drugs"]
    assert reader.qrels_dict(reader.load(toy, "drugs", "qrels")) == {"q1": {"d1": 2, "d2": 0}, "q2": {"d3": 1}}
    assert reader.nugget_judgments(reader.load(toy, "drugs", "nuggets")) == {"q1": {"1": {"d1": 1}, "2": {}}}


def test_card_has_hub_metadata_and_real_counts(toy):
    meta = read_front_matter(toy / "README.md")
    assert meta["license"] == "apache-2.0"
    assert meta["pretty_name"] == "Toy benchmark"
    assert meta["size_categories"] == ["n<1K"]
    assert meta["task_categories"] == ["text-retrieval"]
    assert "@misc{toy" in meta["citation"]
    names = [c["config_name"] for c in meta["configs"]]
    assert names == ["drugs-corpus", "drugs-queries", "drugs-qrels", "drugs-nuggets"]
    body = (toy / "README.md").read_text()
    assert "| drugs | test | 3 | 2 | 3 | 2 | 1 | 1 |" in body  # docs, queries, qrels, nuggets, dropped, judged
    assert meta["complexir"] == {"zero_score_queries": {"drugs": {"test": ["q3"]}}}  # judged, no positive
    assert reader.zero_score_queries(toy) == {"drugs": {"test": ["q3"]}}
    assert validate_folder(toy) == {"drugs": {"documents": 3, "splits": {
        "test": {"queries": 2, "qrels": 3, "nuggets": 2, "missing_document_qrels": 0,
                 "missing_document_support": 0}}}}


def test_unjudged_queries_are_dropped_without_a_zero_score(tmp_path):
    out = build(tmp_path / "toy", queries=[*QUERIES, {"id": "q4", "text": "never judged"}])
    assert reader.zero_score_queries(out) == {"drugs": {"test": ["q3"]}}  # q4 is outside the population
    assert "| drugs | test | 3 | 2 | 3 | 2 | 2 | 1 |" in (out / "README.md").read_text()


def test_corpus_only_subset(tmp_path):
    """A subset may hold only a corpus that other subsets' tasks read (e.g. a MaxP passage corpus)."""
    passages = [{"id": "d1#0", "title": "", "text": "Aspirin reduces fever.", "parent-id": "d1"},
                {"id": "d1#1", "title": "", "text": "It relieves mild pain.", "parent-id": "d1"}]
    out = tmp_path / "toy"
    with BenchmarkWriter(out, CARD, progress=False) as writer:
        writer.write_corpus("drugs", iter(DOCS))
        writer.write_split("drugs", "test", queries=QUERIES, qrels=QRELS)
        writer.write_corpus("drugs_passages", iter(passages))
    meta = read_front_matter(out / "README.md")
    assert [c["config_name"] for c in meta["configs"]] == ["drugs-corpus", "drugs-queries", "drugs-qrels",
                                                           "drugs_passages-corpus"]
    assert "| drugs_passages | corpus only | 2 | - | - | - | - | - |" in (out / "README.md").read_text()
    assert validate_folder(out)["drugs_passages"] == {"documents": 2, "splits": {}}
    assert datasets.load_dataset(str(out), "drugs_passages-corpus", split="corpus")["parent-id"] == ["d1", "d1"]

    # queries without qrels, or qrels without queries, are still rejected
    qrels_yaml = next(c for c in meta["configs"] if c["config_name"] == "drugs-qrels")
    for dropped in ("drugs-qrels", "drugs-queries"):
        broken = {**meta, "configs": [c for c in meta["configs"] if c["config_name"] != dropped]}
        (out / "README.md").write_text(f"---\n{yaml.safe_dump(broken)}---\n")
        with pytest.raises(LayoutError, match="needs both queries and qrels"):
            validate_folder(out)
    # qrels for a split that has no queries
    extra = {**qrels_yaml, "data_files": [*qrels_yaml["data_files"],
                                          {"split": "validation", "path": "data/drugs/qrels-test.parquet"}]}
    broken = {**meta, "configs": [extra if c is qrels_yaml else c for c in meta["configs"]]}
    (out / "README.md").write_text(f"---\n{yaml.safe_dump(broken)}---\n")
    with pytest.raises(LayoutError, match="has qrels but no queries for split 'validation'"):
        validate_folder(out)


def test_a_benchmark_of_corpora_only_is_rejected(tmp_path):
    with pytest.raises(LayoutError, match="no subset has a split"):
        with BenchmarkWriter(tmp_path / "toy", CARD, progress=False) as writer:
            writer.write_corpus("drugs", iter(DOCS))
    assert list(tmp_path.iterdir()) == []


def test_build_is_deterministic(tmp_path):
    a, b = build(tmp_path / "a"), build(tmp_path / "b")
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    for rel in files:
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel


def test_corpus_is_sharded_with_bounded_batches(tmp_path):
    docs = [{"id": f"x{i}", "title": "", "text": f"document number {i}", "parent-id": None} for i in range(25)]
    out = build(tmp_path / "big", docs=docs + DOCS, shard_rows=10, batch_rows=4)
    shards = sorted((out / "data" / "drugs").glob("corpus-*.parquet"))
    assert [pq.read_metadata(s).num_rows for s in shards] == [12, 12, 4]
    assert len(datasets.load_dataset(str(out), "drugs-corpus", split="corpus")) == 28


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"docs": [*DOCS, {"id": "d1", "text": "again"}]},
         "corpus of subset 'drugs', row 4: duplicate document id 'd1' (first at row 1)"),
        ({"docs": [{"id": 7, "text": "integer id"}]}, "column 'id': expected a string, got int"),
        ({"docs": [{"id": "d1", "text": None}]}, "column 'text': expected a string, got NoneType"),
        ({"docs": [{"id": "d1", "text": "x", "metadata": {"a": 1}}]}, "column 'metadata' must be a string"),
        ({"queries": [*QUERIES, {"id": "q1", "text": "again"}]},
         "queries, row 4: duplicate query id 'q1' (first at row 1)"),
        ({"qrels": [*QRELS, {"query-id": "q9", "corpus-id": "d1", "score": 1}]},
         "qrels, row 5: query-id 'q9' is not a query of this split"),
        ({"qrels": [*QRELS, {"query-id": "q1", "corpus-id": "d1", "score": 1}]},
         "qrels, row 5: duplicate judgment for query 'q1' and document 'd1' (first at row 1)"),
        ({"qrels": [{"query-id": "q1", "corpus-id": "d1", "score": 0.5}]}, "expected an integer grade, got float"),
        ({"qrels": [{"query-id": "q1", "corpus-id": "d1", "score": "1"}]}, "expected an integer grade, got str"),
        ({"qrels": [{"query-id": "q1", "corpus-id": "d1", "score": -1}]}, "expected a grade >= 0"),
        ({"qrels": [{"query-id": "q1", "corpus-id": "d1", "score": 0}]}, "no query has a positive qrel"),
        ({"nuggets": [{"query-id": "q7", "nugget-id": "1", "text": "x"}]},
         "nuggets, row 1: query-id 'q7' is not a query of this split"),
        ({"nuggets": [NUGGETS[0], NUGGETS[0]]}, "nuggets, row 2: duplicate nugget '1' for query 'q1' (first at row 1)"),
        ({"nuggets": [{**NUGGETS[0], "weight": float("nan")}]}, "'weight' must be a finite number"),
        ({"nuggets": [{**NUGGETS[0], "weight": -0.5}]}, "nuggets, row 1: column 'weight' must be >= 0"),
        ({"nuggets": [{**NUGGETS[0], "support": ["d1"]}]}, "nuggets, row 1, support 1: expected a mapping"),
        ({"nuggets": [{**NUGGETS[0], "support": "d1"}]}, "nuggets, row 1, column 'support': expected a list"),
        ({"nuggets": [{**NUGGETS[0], "support": [{"corpus-id": "d1", "score": 1}, {"corpus-id": "d1", "score": 2}]}]},
         "nuggets, row 1, support 2: document 'd1' twice in the support of nugget '1' (first at support 1)"),
        ({"nuggets": [{**NUGGETS[0], "source": 3}]}, "nuggets, row 1: column 'source' must be a string or null"),
        ({"docs": [*DOCS, {"id": "d4", "text": "x", "title": None, "parent-id": None, "year": "1999"}]},
         "columns ['year'] not in the first row's"),
        ({"docs": [{**d, "year": "1999"} for d in DOCS[:2]] + [{**DOCS[2], "year": 1999}]},
         "corpus of subset 'drugs', row 3 (id 'd3'): column 'year' must be a string or null, got int"),
        ({"docs": [{"id": "d1", "text": "x", "title": 5}]}, "row 1 (id 'd1'): column 'title' must be a string"),
        ({"docs": [("d1", "x")]}, "corpus of subset 'drugs', row 1: expected a mapping"),
        ({"docs": [{"id": "d1", "text": "x", 3: "y"}]}, "row 1: column names must be strings, got int"),
        ({"queries": [{**QUERIES[0], "year": 1999}, *QUERIES[1:]]},
         "queries, row 1 (id 'q1'): column 'year' must be a string or null, got int"),
        ({"qrels": [{**QRELS[0], "year": 1999}, *QRELS[1:]]}, "qrels, row 1: column 'year' must be a string or null"),
        ({"top_ranked": [{"query-id": "q1", "corpus-ids": ["d1"]}, {"query-id": "q1", "corpus-ids": ["d2"]}]},
         "top_ranked, row 2: duplicate query-id 'q1' (first at row 1)"),
        ({"top_ranked": [{"query-id": "q1", "corpus-ids": ["d1", "gone"]}]},
         "top_ranked, row 1: corpus-id 'gone' is not in the corpus of subset 'drugs'"),
        ({"top_ranked": [{"query-id": "q1", "corpus-ids": "d1"}]},
         "top_ranked, row 1, column 'corpus-ids': expected a list"),
    ],
)
def test_bad_input_is_rejected_and_leaves_nothing(tmp_path, change, message):
    out = tmp_path / "bad"
    with pytest.raises(LayoutError, match=re.escape(message)):
        build(out, **change)
    assert list(tmp_path.iterdir()) == []  # neither the folder nor its temporary twin


def test_a_duplicate_document_in_a_later_shard_names_the_first_row(tmp_path):
    docs = [{"id": f"x{i}", "text": f"document {i}"} for i in range(7)] + [{"id": "x1", "text": "again"}]
    with pytest.raises(LayoutError, match=re.escape("corpus of subset 'drugs', row 8: duplicate document id 'x1' "
                                                    "(first at row 2)")):
        build(tmp_path / "out", docs=docs, shard_rows=2, batch_rows=1)
    assert list(tmp_path.iterdir()) == []


def test_interrupted_build_leaves_no_folder(tmp_path):
    def docs():
        yield from DOCS
        raise KeyboardInterrupt  # the user pressed Ctrl-C halfway through the corpus

    with pytest.raises(KeyboardInterrupt):
        build(tmp_path / "out", docs=docs())
    assert list(tmp_path.iterdir()) == []


def test_failed_rebuild_keeps_the_previous_folder(tmp_path):
    out = build(tmp_path / "out")
    before = (out / "README.md").read_text()
    with pytest.raises(LayoutError):
        build(out, overwrite=True, qrels=[{"query-id": "q1", "corpus-id": "d1", "score": 0.5}])
    assert (out / "README.md").read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_existing_output_needs_overwrite(tmp_path):
    out = build(tmp_path / "out")
    with pytest.raises(FileExistsError, match="overwrite"):
        build(out)


def test_failed_final_rename_restores_the_previous_folder(tmp_path, monkeypatch):
    out = build(tmp_path / "out")
    before = (out / "README.md").read_text()
    real_replace = os.replace

    def replace(src, dst):
        if ".partial-" in str(src):  # the second rename: the new build into place
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(OSError, match="No space left"):
        build(out, overwrite=True, docs=[{**DOCS[0], "text": "changed"}, *DOCS[1:]])
    assert (out / "README.md").read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no .old-* nor .partial-* left


@pytest.mark.parametrize("content", [{"notes.txt": "my thesis"}, {"README.md": "# my project\n"},
                                     {"README.md": "---\ntitle: x\n---\n"},
                                     # an unrelated Hugging Face dataset repo: configs, but not built here
                                     {"README.md": "---\nconfigs:\n- config_name: default\n  data_files: d.csv\n---\n",
                                      "d.csv": "a,b\n1,2\n"}])
def test_overwrite_refuses_a_folder_it_did_not_build(tmp_path, content):
    out = tmp_path / "data"
    out.mkdir()
    for name, text in content.items():
        (out / name).write_text(text)
    with pytest.raises(FileExistsError, match="not written by complexir build"):
        build(out, overwrite=True)
    assert {p.name: p.read_text() for p in out.iterdir()} == content
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data"]


def test_overwrite_accepts_an_empty_folder(tmp_path):
    (tmp_path / "out").mkdir()
    assert validate_folder(build(tmp_path / "out", overwrite=True))["drugs"]["documents"] == 3


def test_overwrite_refuses_a_file(tmp_path):
    (tmp_path / "out").write_text("a file")
    with pytest.raises(FileExistsError, match="not a folder"):
        build(tmp_path / "out", overwrite=True)
    assert (tmp_path / "out").read_text() == "a file"


def test_hard_killed_build_leftovers_are_cleaned(tmp_path, caplog):
    dead = 2**22 + 1  # above Linux's pid_max default: no such process
    stale = tmp_path / f".out.partial-{dead}-0123abcd"
    (stale / "data").mkdir(parents=True)
    legacy = tmp_path / ".out.partial-89abcdef"  # no pid in the name
    legacy.mkdir()
    live = tmp_path / f".out.partial-{os.getpid()}-feedbeef"  # a build still running in this process
    live.mkdir()
    unrelated = tmp_path / ".other.partial-1-00000000"
    unrelated.mkdir()
    with caplog.at_level(logging.WARNING, logger="complexir.layout.writer"):
        build(tmp_path / "out")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["out", live.name, unrelated.name])
    assert str(stale) in caplog.text and str(legacy) in caplog.text


def test_previous_folder_moved_aside_by_a_killed_build_is_restored(tmp_path):
    """A kill between the two renames leaves the previous folder as .out.old-*: it comes back."""
    out = build(tmp_path / "out")
    before = (out / "README.md").read_text()
    os.replace(out, tmp_path / f".out.old-{2**22 + 1}-0123abcd")
    with pytest.raises(FileExistsError):  # restored, so it needs --overwrite like any existing folder
        build(out)
    assert (out / "README.md").read_text() == before
    shutil.copytree(out, tmp_path / f".out.old-{2**22 + 1}-4567cdef")  # a kill after the swap...
    build(out, overwrite=True)  # ...leaves an old copy beside the new folder: removed
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda f: (f / "data/drugs/qrels-test.parquet").unlink(), "no file matches"),
        (lambda f: (f / "README.md").write_text("no front matter"), "no 'configs'"),
        (lambda f: pq.write_table(pq.read_table(f / "data/drugs/qrels-test.parquet").drop(["score"]),
                                  f / "data/drugs/qrels-test.parquet"), "missing column 'score'"),
    ],
)
def test_validator_names_the_broken_file(tmp_path, damage, message):
    out = build(tmp_path / "out")
    damage(out)
    with pytest.raises(LayoutError, match=message):
        validate_folder(out)


def _second_file(folder, kind, rows):
    """Add ``data/drugs/<kind>-test_more.parquet`` to the test split of ``drugs-<kind>`` (a split of 2 files)."""
    pq.write_table(pa.Table.from_pylist(rows, schema=pq.read_schema(folder / f"data/drugs/{kind}-test.parquet")),
                   folder / f"data/drugs/{kind}-test_more.parquet")
    meta = read_front_matter(folder / "README.md")
    for config in meta["configs"]:
        if config["config_name"] == f"drugs-{kind}":
            config["data_files"] = [{"split": "test", "path": f"data/drugs/{kind}-test*.parquet"}]
    (folder / "README.md").write_text(f"---\n{yaml.safe_dump(meta)}---\n")


@pytest.mark.parametrize(
    ("kind", "rows", "message"),
    [
        ("qrels", [{"query-id": "q1", "corpus-id": "d3", "score": 1},
                   {"query-id": "q2", "corpus-id": "d3", "score": 2}],
         "qrels-test_more.parquet, row 2: duplicate judgment for query 'q2' and document 'd3' "
         "(first at qrels-test.parquet, row 3)"),
        ("qrels", [{"query-id": "q1", "corpus-id": "d9", "score": 1}],
         "qrels-test_more.parquet, row 1: qrels corpus-id 'd9' is not in the corpus of subset 'drugs', and the card "
         "declares 0"),
        ("nuggets", [{"query-id": "q2", "nugget-id": "1", "text": "x", "weight": 1.0,
                      "support": [{"corpus-id": "d9", "score": 1}]}],
         "nuggets-test_more.parquet, row 1: nugget support corpus-id 'd9' is not in the corpus of subset 'drugs'"),
        ("qrels", [{"query-id": "q1", "corpus-id": "d3", "score": None}],
         "qrels-test_more.parquet, row 1: column 'score' is null"),
        ("queries", [{"id": "q1", "text": "again", "instruction": ""}],
         "queries-test_more.parquet, row 1: duplicate query id 'q1' (first at queries-test.parquet, row 1)"),
        ("queries", [{"id": "q5", "text": "never judged", "instruction": ""}], "1 queries have no positive qrel"),
        ("nuggets", [{"query-id": "q9", "nugget-id": "1", "text": "x", "weight": 1.0, "support": []}],
         "nuggets-test_more.parquet, row 1: query-id 'q9' is not a query of this split"),
        ("nuggets", [{"query-id": "q2", "nugget-id": "1", "text": "x", "weight": 1.0,
                      "support": [{"corpus-id": "d3", "score": 1}, {"corpus-id": "d3", "score": 0}]}],
         "nuggets-test_more.parquet, row 1, support 2: document 'd3' twice in the support of nugget '1' (first at "
         "support 1)"),
        ("qrels", [{"query-id": "q1", "corpus-id": "d3", "score": -1}],
         "qrels-test_more.parquet, row 1, column 'score': expected a grade >= 0, got -1"),
        ("top_ranked", [{"query-id": "q1", "corpus-ids": ["d3"]}],
         "top_ranked-test_more.parquet, row 1: duplicate query-id 'q1' (first at top_ranked-test.parquet, row 1)"),
        ("top_ranked", [{"query-id": "q2", "corpus-ids": ["d3", "gone"]}],
         "top_ranked-test_more.parquet, row 1: corpus-id 'gone' is not in the corpus of subset 'drugs'"),
    ],
)
def test_validator_reads_every_file_of_a_split(tmp_path, kind, rows, message):
    out = build(tmp_path / "out", top_ranked=[{"query-id": "q1", "corpus-ids": ["d1", "d2"]}])
    _second_file(out, kind, rows)
    with pytest.raises(LayoutError, match=re.escape(message)):
        validate_folder(out)


def test_validator_finds_a_document_id_twice_across_corpus_shards(tmp_path):
    out = build(tmp_path / "out")
    shard = out / "data" / "drugs" / "corpus-00001.parquet"
    pq.write_table(pa.Table.from_pylist([{"id": "d4", "title": "", "text": "x", "parent-id": None},
                                         {"id": "d2", "title": "", "text": "again", "parent-id": None}],
                                        schema=pq.read_schema(out / "data/drugs/corpus-00000.parquet")), shard)
    with pytest.raises(LayoutError, match=re.escape(f"{shard}, row 2: duplicate document id 'd2' (first at "
                                                    "corpus-00000.parquet, row 2)")):
        validate_folder(out)


def test_writer_and_validator_word_a_broken_rule_alike(tmp_path):
    """One rule, one message: only the place differs (the rows handed to the writer, the file read back)."""
    rows = [{"query-id": "q1", "corpus-id": "d1", "score": 1}]
    with pytest.raises(LayoutError) as written:
        build(tmp_path / "bad", qrels=[*QRELS, *rows])
    out = build(tmp_path / "out")
    _second_file(out, "qrels", rows)
    with pytest.raises(LayoutError) as validated:
        validate_folder(out)
    assert str(written.value).startswith("subset 'drugs', split 'test', qrels, row 5: ")
    assert str(validated.value).startswith(f"{out / 'data/drugs/qrels-test_more.parquet'}, row 1: ")
    assert (str(written.value).split(": ", 1)[1].split(" (first at")[0]
            == str(validated.value).split(": ", 1)[1].split(" (first at")[0]
            == "duplicate judgment for query 'q1' and document 'd1'")


def test_validator_accepts_a_split_of_several_files(tmp_path):
    out = build(tmp_path / "out")
    _second_file(out, "qrels", [{"query-id": "q1", "corpus-id": "d3", "score": 0}])
    assert validate_folder(out)["drugs"]["splits"]["test"]["qrels"] == 4


@pytest.mark.parametrize("name", ["corpus-00000.parquet", "qrels-test.parquet", "nuggets-test.parquet"])
@pytest.mark.parametrize("damage", [lambda b: b"this is not parquet", lambda b: b[: len(b) // 2], lambda b: b""])
def test_validator_names_a_corrupt_file(tmp_path, name, damage):
    out = build(tmp_path / "out")
    path = out / "data" / "drugs" / name
    path.write_bytes(damage(path.read_bytes()))
    with pytest.raises(LayoutError, match=re.escape(f"{path}: not a readable parquet file")):
        validate_folder(out)


def test_validator_rejects_a_corrupt_body_behind_a_valid_footer(tmp_path):
    """The schema (footer) reads, the data pages do not: the error still names the file."""
    out = build(tmp_path / "out")
    path = out / "data" / "drugs" / "qrels-test.parquet"
    data = bytearray(path.read_bytes())
    data[4:40] = b"\xff" * 36  # the first data page, after the 'PAR1' magic
    path.write_bytes(bytes(data))
    with pytest.raises(LayoutError, match=re.escape(str(path))):
        validate_folder(out)


def test_validate_cli(tmp_path, capsys):
    from complexir.cli.main import main

    out = build(tmp_path / "out")
    assert main(["validate", str(out)]) == 0
    assert json.loads(capsys.readouterr().out)["drugs"]["documents"] == 3


def test_rebuilt_or_same_named_folders_never_load_stale_data(tmp_path):
    """datasets caches a local folder by its name and YAML configs: the content digest in each config's
    description is what keeps a rebuild, or another folder of the same name, from loading stale rows."""
    def texts(path):
        return datasets.load_dataset(str(path), "drugs-corpus", split="corpus")["text"]

    first = build(tmp_path / "toy")
    assert texts(first)[0] == DOCS[0]["text"]
    changed = [{**DOCS[0], "text": "Rebuilt: aspirin also thins the blood."}, *DOCS[1:]]
    build(first, docs=changed, overwrite=True)
    assert texts(first)[0] == "Rebuilt: aspirin also thins the blood."
    other = build(tmp_path / "elsewhere" / "toy", docs=[{**DOCS[0], "text": "A third text."}, *DOCS[1:]])
    assert texts(other)[0] == "A third text."
    assert texts(first)[0] == "Rebuilt: aspirin also thins the blood."


def test_every_demo_config_loads_with_datasets_and_mteb():
    """The demo folders shipped in the package are Hub dataset repos: every config loads with no code."""
    from complexir.api.run import demo_data_dir

    for folder in sorted(p for p in demo_data_dir().iterdir() if p.is_dir()):
        meta = read_front_matter(folder / "README.md")
        for config in meta["configs"]:
            for data_files in config["data_files"]:
                rows = datasets.load_dataset(str(folder), config["config_name"], split=data_files["split"])
                assert len(rows) > 0, (folder.name, config["config_name"], data_files["split"])
        names = {config["config_name"] for config in meta["configs"]}
        for subset in reader.list_subsets(folder):
            if config_name(subset, "queries") not in names:  # a corpus-only subset: other subsets' tasks read it
                continue
            split = RetrievalDatasetLoader(str(folder), revision=None, split="test", config=subset).load()
            assert split["relevant_docs"] and len(split["queries"]) and len(split["corpus"]), (folder.name, subset)


def test_judgments_on_documents_missing_from_the_corpus_are_kept_counted_and_validated(tmp_path):
    """trec_eval counts a judged document that no run can retrieve in recall's denominator and the ideal DCG:
    the layout keeps such judgments, the card counts them per subset and split, and the validator accepts
    exactly that many."""
    qrels = [*QRELS, {"query-id": "q1", "corpus-id": "gone", "score": 1},
             {"query-id": "q2", "corpus-id": "x", "score": 0}]
    nuggets = [{**NUGGETS[0], "support": [{"corpus-id": "d1", "score": 1}, {"corpus-id": "gone", "score": 1}]},
               *NUGGETS[1:]]
    out = build(tmp_path / "out", qrels=qrels, nuggets=nuggets)
    meta = read_front_matter(out / "README.md")
    assert meta["complexir"]["missing_document_judgments"] == {"drugs": {"test": {"qrels": 2, "nugget_support": 1}}}
    assert "| drugs | test | 3 | 2 | 5 | 2 | 1 | 1 | 2 (+ 1 nugget supports) |" in (out / "README.md").read_text()
    counts = validate_folder(out)["drugs"]["splits"]["test"]
    assert (counts["missing_document_qrels"], counts["missing_document_support"]) == (2, 1)
    loaded = RetrievalDatasetLoader(hf_repo=str(out), revision=None, split="test", config="drugs").load()
    assert loaded["relevant_docs"]["q1"] == {"d1": 2, "d2": 0, "gone": 1}

    # a card that declares fewer than the files hold: the first undeclared row is named
    meta["complexir"]["missing_document_judgments"]["drugs"]["test"]["qrels"] = 1
    text = (out / "README.md").read_text()
    (out / "README.md").write_text(f"---\n{yaml.safe_dump(meta)}---\n" + text.split("\n---\n", 1)[1])
    with pytest.raises(LayoutError, match=re.escape("qrels-test.parquet, row 5: qrels corpus-id 'x' is not in the "
                                                    "corpus of subset 'drugs', and the card declares 1")):
        validate_folder(out)


# -- eval.yaml: the file that makes a benchmark's Hub repo a Benchmark ------------------------------------------

DEMO = Path(__file__).resolve().parents[1] / "complexir" / "demo"


def _eval_yaml(folder, text):
    (folder / "eval.yaml").write_text(text, encoding="utf-8")


@pytest.mark.parametrize("text, message", [
    ("name: x\ndescription: y\nevaluation_framework: mteb\ntasks:\n- id: a\n  config: nope-queries\n  split: test\n",
     r"eval.yaml:5: task 'a' names config 'nope-queries', which the card"),
    ("name: x\ndescription: y\nevaluation_framework: mteb\ntasks:\n- id: a\n  config: drugs-queries\n  split: train\n",
     r"eval.yaml:5: task 'a': config 'drugs-queries' has no split 'train'"),
    ("name: x\ndescription: y\nevaluation_framework: mteb\ntasks:\n- id: a\n- id: a\n",
     r"eval.yaml:6: task id 'a' already given on line 5"),
    ("name: x\ndescription: y\ntasks:\n- id: a\n", r"eval.yaml:1: missing key 'evaluation_framework'"),
    ("name: x\ndescription: y\nevaluation_framework: mteb\ntasks: [\n", r"eval.yaml:\d+: invalid YAML"),
    ("name: x\ndescription: y\nevaluation_framework: mteb\ntasks:\n- id: a\n  metric: ndcg\n",
     r"eval.yaml:5: unknown task keys \['metric'\]"),
])
def test_validator_checks_eval_yaml_against_the_card(toy, tmp_path, text, message):
    folder = shutil.copytree(toy, tmp_path / "toy")
    _eval_yaml(folder, "name: x\ndescription: y\nevaluation_framework: mteb\ntasks:\n- id: a\n  config: drugs-queries\n"
                       "  split: test\n- id: b\n")
    validate_folder(folder)  # a valid one passes
    _eval_yaml(folder, text)
    with pytest.raises(LayoutError, match=message):
        validate_folder(folder)


def _check_eval_yaml(folder, spec):
    """The folder's eval.yaml is mteb's HFEvalMeta, names the benchmark, and every config and split it names is
    the card's; returns its task ids."""
    from complexir.mteb.internals import hf_eval_meta
    from complexir.tasks.hub_benchmark import eval_config

    data = yaml.safe_load((folder / "eval.yaml").read_text(encoding="utf-8"))
    meta = hf_eval_meta().model_validate(data)
    assert meta.evaluation_framework == "mteb" and meta.name == spec.name
    assert data == eval_config(folder, spec)  # what a build writes is what the folder's data calls for
    card = read_front_matter(folder / "README.md")
    splits = {c["config_name"]: {f["split"] for f in c["data_files"]} for c in card["configs"]}
    for task in meta.tasks:
        assert (task.config is None) == (task.split is None)
        if task.config is not None:
            assert task.split in splits[task.config], task
    validate_folder(folder, every_row=False)
    return [t.id for t in meta.tasks]


@pytest.mark.parametrize("benchmark", ["crumb", "irsc", "locov1", "coveragebench"])
def test_every_demo_folder_is_a_hub_benchmark(benchmark):
    from complexir.registry.benchmarks import get_spec
    from complexir.tasks import benchmarks_by_name

    spec = get_spec(benchmark)
    ids = _check_eval_yaml(DEMO / benchmark, spec)
    assert ids[0] == spec.name  # the benchmark as a whole first, then its tasks
    bench = benchmarks_by_name()[spec.name]
    assert bench.benchmark_hf_repo == spec.hub_id
    present = {name for name in ids if not name.count("_") and name != spec.name}
    assert present == {p.stem for p in (DEMO / benchmark / "descriptive_stats").iterdir()}


def test_build_writes_eval_yaml_with_the_folder(tmp_path):
    """`complexir build` writes eval.yaml into the folder before it is swapped in (a partial build lists its
    tasks only); a build that fails leaves neither."""
    from complexir.cli.main import main
    from complexir.registry.benchmarks import CRUMB

    fixture = Path(__file__).parent / "fixtures" / "crumb" / "demo_upstream"
    out = tmp_path / "crumb"
    assert main(["build", "crumb", "--source", str(fixture), "--out", str(out), "--subset", "legal_qa",
                 "--no-progress"]) == 0
    ids = _check_eval_yaml(out, CRUMB)
    assert ids == ["CRUMB", "CRUMBLegalQA", "CRUMBLegalQA_default_test", "CRUMBLegalQA_default_validation",
                   "CRUMBLegalQAFullDocument", "CRUMBLegalQAFullDocument_default_test",
                   "CRUMBLegalQAFullDocument_default_validation"]
