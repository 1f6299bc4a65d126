"""The folder object: one parse of a benchmark card serves the reader, the validator and the tasks."""

from __future__ import annotations

import shutil

import pytest
import yaml

from complexir.layout import reader
from complexir.layout.card import CardInfo, read_front_matter
from complexir.layout.errors import LayoutError
from complexir.layout.folder import BenchmarkFolder
from complexir.layout.validation import validate_folder
from complexir.layout.writer import BenchmarkWriter

CARD = CardInfo("toy", "Toy benchmark", "apache-2.0", "@misc{toy, title={Toy}}", "hand-written", revision="r1")
DOCS = [{"id": "d1", "title": "Aspirin", "text": "Aspirin relieves pain."},
        {"id": "d2", "title": "", "text": "Ibuprofen is an anti-inflammatory drug."},
        {"id": "d3", "title": "Paracetamol", "text": "Paracetamol is also called acetaminophen."}]
QUERIES = [{"id": "q1", "text": "what relieves pain"}, {"id": "q2", "text": "paracetamol"},
           {"id": "q3", "text": "judged, nothing relevant"}]
QRELS = [{"query-id": "q1", "corpus-id": "d1", "score": 2}, {"query-id": "q1", "corpus-id": "d2", "score": 0},
         {"query-id": "q2", "corpus-id": "d3", "score": 1}, {"query-id": "q3", "corpus-id": "d1", "score": 0}]
NUGGETS = [{"query-id": "q1", "nugget-id": "1", "text": "aspirin relieves pain",
            "support": [{"corpus-id": "d1", "score": 1}]}]


def build(path):
    with BenchmarkWriter(path, CARD, progress=False) as writer:
        writer.write_corpus("drugs", iter(DOCS))
        writer.write_split("drugs", "test", queries=QUERIES, qrels=QRELS, nuggets=NUGGETS)
    return path


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    return build(tmp_path_factory.mktemp("folder") / "toy")


def test_what_the_writer_wrote(toy):
    folder = BenchmarkFolder.open(toy)
    assert folder.local and folder.location == str(toy.resolve())
    assert folder.subsets == ["drugs"]
    assert [c.name for c in folder.configs.values()] == ["drugs-corpus", "drugs-queries", "drugs-qrels",
                                                         "drugs-nuggets"]
    assert folder.kinds("drugs")["qrels"].data_files == {"test": ("data/drugs/qrels-test.parquet",)}
    assert folder.kinds("drugs")["corpus"].data_files == {"corpus": ("data/drugs/corpus-*.parquet",)}
    assert set(folder.digests) == {"drugs-corpus", "drugs-queries", "drugs-qrels", "drugs-nuggets"}
    assert all(len(d) == 16 for d in folder.digests.values())
    assert folder.zero_score_queries == {"drugs": {"test": ["q3"]}}
    assert folder.source_datasets == ("hand-written",)
    corpus_files = folder.files(folder.kinds("drugs")["corpus"])
    assert corpus_files == {"corpus": [toy.resolve() / "data/drugs/corpus-00000.parquet"]}


def _rewrite(folder, meta, *, newline="\n", bom=False):
    text = f"---\n{yaml.safe_dump(meta, sort_keys=False)}---\n\nBody.\n".replace("\n", newline)
    (folder / "README.md").write_bytes(("\ufeff" if bom else "").encode() + text.encode("utf-8"))


def test_unusual_but_valid_hub_yaml(toy, tmp_path):
    """Forms the Hub accepts that our writer never produces: a bare pattern, a list of patterns, a split's
    paths as a list or spread over two entries, extra keys, CRLF line ends and a byte-order mark."""
    copy = tmp_path / "toy"
    shutil.copytree(toy, copy)
    meta = read_front_matter(copy / "README.md")
    configs = {c["config_name"]: c for c in meta["configs"]}
    configs["drugs-corpus"] = {"config_name": "drugs-corpus", "data_files": "data/drugs/corpus-*.parquet",
                               "default": True}
    configs["drugs-queries"]["data_files"] = [{"split": "test", "path": ["data/drugs/queries-test.parquet"]}]
    configs["drugs-qrels"]["data_files"] = [{"split": "test", "path": "data/drugs/qrels-test.parquet"},
                                            {"split": "test", "path": "data/drugs/qrels-*.parquet"}]
    del configs["drugs-nuggets"]
    meta["configs"] = list(configs.values())
    meta["source_datasets"] = "hand-written"
    meta["complexir"] = {"zero_score_queries": {2020: {"test": ["q9"]}, "drugs": {"test": ["q3"]}}}
    _rewrite(copy, meta, newline="\r\n", bom=True)

    folder = BenchmarkFolder.open(copy)
    corpus = folder.kinds("drugs")["corpus"]
    assert corpus.data_files == {"train": ("data/drugs/corpus-*.parquet",)} and corpus.digest is None
    assert folder.kinds("drugs")["qrels"].data_files == {
        "test": ("data/drugs/qrels-test.parquet", "data/drugs/qrels-*.parquet")}
    assert folder.files(folder.kinds("drugs")["qrels"]) == {"test": [copy.resolve() / "data/drugs/qrels-test.parquet"]}
    assert folder.zero_score_queries == {"2020": {"test": ["q9"]}, "drugs": {"test": ["q3"]}}
    assert folder.source_datasets == ("hand-written",)
    # the reader and the validator read the same card through it
    assert reader.list_subsets(copy) == ["drugs"]
    assert reader.zero_score_queries(copy)["drugs"] == {"test": ["q3"]}
    assert validate_folder(copy) == {"drugs": {"documents": 3, "splits": {"test": {
        "queries": 2, "qrels": 3, "nuggets": 0, "missing_document_qrels": 0, "missing_document_support": 0}}}}


def test_single_unnamed_subset(tmp_path):
    out = tmp_path / "plain"
    with BenchmarkWriter(out, CARD, progress=False) as writer:
        writer.write_corpus(None, iter([{"id": "d1", "text": "one"}]))
        writer.write_split(None, "test", queries=[{"id": "q1", "text": "q"}],
                           qrels=[{"query-id": "q1", "corpus-id": "d1", "score": 1}])
    folder = BenchmarkFolder.open(out)
    assert folder.subsets == [None]
    assert [c.name for c in folder.configs.values()] == ["corpus", "queries", "qrels"]
    assert folder.kinds(None)["qrels"].data_files == {"test": ("data/default/qrels-test.parquet",)}


@pytest.mark.parametrize(("configs", "message"), [
    (None, "no 'configs'"),
    ({"config_name": "drugs-corpus"}, "'configs' must be a list"),
    ([{"data_files": "x.parquet"}], "configs entry 1 needs a 'config_name'"),
    ([{"config_name": "drugs-passages", "data_files": "x.parquet"}], "config 'drugs-passages': expected"),
    ([{"config_name": "drugs-corpus", "data_files": "a"}, {"config_name": "drugs-corpus", "data_files": "b"}],
     "config 'drugs-corpus' listed twice"),
    ([{"config_name": "drugs-corpus", "data_files": [{"split": "corpus"}]}], "entry needs 'split' and 'path'"),
    ([{"config_name": "drugs-corpus", "data_files": [{"split": "corpus", "path": []}]}], "'path' must name files"),
    ([{"config_name": "drugs-corpus", "data_files": []}], "'data_files' must be a pattern or a non-empty list"),
])
def test_malformed_cards_name_the_card_and_the_config(tmp_path, configs, message):
    tmp_path.joinpath("README.md").write_text(f"---\n{yaml.safe_dump({'configs': configs})}---\n")
    with pytest.raises(LayoutError, match=message) as error:
        BenchmarkFolder.open(tmp_path)
    assert str(tmp_path / "README.md") in str(error.value)


def test_a_malformed_zero_score_block_is_refused(tmp_path):
    meta = {"configs": [{"config_name": "corpus", "data_files": "data/x.parquet"}],
            "complexir": {"zero_score_queries": ["q1"]}}
    tmp_path.joinpath("README.md").write_text(f"---\n{yaml.safe_dump(meta)}---\n")
    with pytest.raises(LayoutError, match="zero_score_queries must map subset -> split"):
        BenchmarkFolder.open(tmp_path)


@pytest.mark.parametrize("pattern", ["../outside/*.parquet", "/etc/*.parquet", "data/../../x.parquet"])
def test_files_stay_inside_the_folder(toy, tmp_path, pattern):
    copy = tmp_path / "toy"
    shutil.copytree(toy, copy)
    meta = read_front_matter(copy / "README.md")
    meta["configs"][0]["data_files"] = pattern
    _rewrite(copy, meta)
    folder = BenchmarkFolder.open(copy)
    with pytest.raises(LayoutError, match="points outside the folder"):
        folder.files(folder.kinds("drugs")["corpus"])


def test_a_link_out_of_the_folder_is_refused(toy, tmp_path):
    copy = tmp_path / "toy"
    shutil.copytree(toy, copy)
    corpus = copy / "data" / "drugs" / "corpus-00000.parquet"
    shutil.move(corpus, tmp_path / "elsewhere.parquet")
    corpus.symlink_to(tmp_path / "elsewhere.parquet")
    folder = BenchmarkFolder.open(copy)
    with pytest.raises(LayoutError, match="is a link to .*, outside the folder"):
        folder.files(folder.kinds("drugs")["corpus"])


def test_a_folder_without_a_card(tmp_path):
    with pytest.raises(LayoutError, match="README.md: missing"):
        BenchmarkFolder.open(tmp_path)


def test_a_task_parses_its_card_once(monkeypatch):
    """`run` asks a task whether its data is there, then loads it: one parse of the card for both."""
    from complexir.api.run import demo_data_dir
    from complexir.layout import folder as folder_module
    from complexir.tasks import TASKS_BY_NAME

    calls = []
    real = folder_module.read_front_matter
    monkeypatch.setattr(folder_module, "read_front_matter", lambda path: calls.append(path) or real(path))
    task = TASKS_BY_NAME["CRUMBClinicalTrial"]()
    assert task.available_in(demo_data_dir())
    task.data_dir = demo_data_dir()
    task.load_data()
    assert calls == [demo_data_dir().resolve() / "crumb" / "README.md"]
