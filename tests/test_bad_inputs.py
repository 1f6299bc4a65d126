"""Inputs that used to give a wrong number, lose data silently or end in a traceback: each now gives either the
right result or one error line naming the file (and line or row) and what is wrong."""

from __future__ import annotations

import json
import random
import shutil
import string
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from complexir.cli.main import main
from complexir.layout.card import CardInfo
from complexir.layout.errors import LayoutError, UpstreamFormatError
from complexir.layout.validation import validate_folder
from complexir.layout.writer import BenchmarkWriter

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"
CARD = CardInfo("toy", "Toy benchmark", "apache-2.0", "@misc{toy, title={Toy}}", "hand-written", revision="r1")


def error_line(capsys, command: str) -> str:
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith(f"complexir {command}: error: ")]
    assert len(err) == 1, err
    return err[0]


def toy(out: Path, subset: str | None = "drugs", texts: list[str] | None = None) -> Path:
    texts = texts or ["aspirin relieves pain", "ibuprofen is an nsaid", "paracetamol"]
    with BenchmarkWriter(out, CARD, progress=False) as writer:
        writer.write_corpus(subset, ({"id": f"d{i}", "text": t} for i, t in enumerate(texts)))
        writer.write_split(subset, "test", queries=[{"id": "q1", "text": "pain"}],
                           qrels=[{"query-id": "q1", "corpus-id": "d0", "score": 1}])
    return out


def set_front_matter(folder: Path, text: str) -> None:
    readme = folder / "README.md"
    body = readme.read_text().split("\n---", 1)[1]
    readme.write_text(f"---\n{text}\n---{body}")


# -- validate: every row of every file, every path inside the folder, every form of Hub YAML ---------------------------
def test_validate_reads_every_column_of_every_row(tmp_path, capsys):
    """Bytes corrupted in the text column, which no structural check reads: load_dataset cannot read the file."""
    rng = random.Random(7)
    long_text = "".join(rng.choice(string.ascii_letters) for _ in range(4000))
    folder = toy(tmp_path / "bench", texts=["short", long_text, "other"])
    corpus = next((folder / "data" / "drugs").glob("corpus-*.parquet"))
    data = bytearray(corpus.read_bytes())
    at = data.find(long_text[1000:1060].encode())
    assert at > 0  # stored as is (random letters do not compress)
    data[at + 10:at + 14] = b"\xff\xfe\xff\xfe"
    corpus.write_bytes(bytes(data))
    assert validate_folder(folder, every_row=False)  # the ids, grades and references alone look fine...
    assert main(["validate", str(folder)]) == 2  # ...but the text is not valid UTF-8
    line = error_line(capsys, "validate")
    assert str(corpus) in line and "unreadable" in line


@pytest.mark.parametrize("path", ["../outside/*.parquet", "/etc/*.parquet", "data/../../outside/x.parquet"])
def test_validate_refuses_config_paths_outside_the_folder(tmp_path, path):
    folder = toy(tmp_path / "bench")
    (tmp_path / "outside").mkdir()
    shutil.copy(next((folder / "data" / "drugs").glob("corpus-*.parquet")), tmp_path / "outside" / "x.parquet")
    meta = yaml.safe_load((folder / "README.md").read_text().split("---")[1])
    meta["configs"][0]["data_files"][0]["path"] = path
    set_front_matter(folder, yaml.safe_dump(meta))
    with pytest.raises(LayoutError, match="outside the folder"):
        validate_folder(folder)


def test_validate_refuses_a_link_to_a_file_outside(tmp_path):
    folder = toy(tmp_path / "bench")
    corpus = next((folder / "data" / "drugs").glob("corpus-*.parquet"))
    outside = tmp_path / "elsewhere.parquet"
    shutil.move(corpus, outside)
    corpus.symlink_to(outside)
    with pytest.raises(LayoutError, match="outside the folder"):
        validate_folder(folder)


def test_data_files_as_a_string_and_as_a_list_are_read(tmp_path):
    """Hub YAML forms ``data_files: pattern`` and ``data_files: [patterns]``: the split is ``train``."""
    folder = toy(tmp_path / "bench", subset=None)
    set_front_matter(folder, yaml.safe_dump({"configs": [
        {"config_name": "corpus", "data_files": "data/default/corpus-*.parquet"},
        {"config_name": "queries", "data_files": ["data/default/queries-test.parquet"]},
        {"config_name": "qrels", "data_files": [{"split": "train", "path": ["data/default/qrels-test.parquet"]}]},
    ]}))
    assert validate_folder(folder) == {"default": {"documents": 3, "splits": {
        "train": {"queries": 1, "qrels": 1, "nuggets": 0, "missing_document_qrels": 0,
                  "missing_document_support": 0}}}}


@pytest.mark.parametrize(("front_matter", "message"), [
    ("configs:\n  corpus:\n    data_files: x", "'configs' must be a list"),
    ("configs: [\n  - a", "README.md:3: invalid YAML front matter"),
    ("- just\n- a list", "must be a mapping"),
    ("configs:\n- data_files: x.parquet", "needs a 'config_name'"),
    ("configs:\n- config_name: corpus\n  data_files: 5", "'data_files' must be a pattern"),
    ("configs:\n- config_name: corpus\n  data_files:\n  - split: test", "needs 'split' and 'path'"),
    ("configs:\n- config_name: corpus\n  data_files: nothing/*.parquet", "no file matches"),
])
def test_unusual_or_broken_readme_yaml_is_one_error(tmp_path, capsys, front_matter, message):
    folder = toy(tmp_path / "bench")
    set_front_matter(folder, front_matter)
    assert main(["validate", str(folder)]) == 2
    assert message in error_line(capsys, "validate")


def test_validate_says_ok_on_a_valid_folder_and_keeps_stdout_json(tmp_path, capsys):
    folder = toy(tmp_path / "bench")
    assert main(["validate", str(folder)]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)  # the counts, per subset
    assert err.strip().splitlines()[-1] == (f"OK: {folder} is a valid benchmark folder in the standard layout "
                                            f"({len(json.loads(out))} subset(s))")


def test_validate_a_missing_folder(tmp_path, capsys):
    assert main(["validate", str(tmp_path / "nope")]) == 2
    assert error_line(capsys, "validate").endswith("nope: no such folder")


# -- labels and fields of any size -------------------------------------------------------------------------------------
@pytest.mark.parametrize("score", [10**20, 2**31])
def test_a_label_too_large_for_the_layout_is_an_error(tmp_path, score):
    with pytest.raises(LayoutError, match="larger than the layout's int32"), \
            BenchmarkWriter(tmp_path / "out", CARD, progress=False) as writer:
        writer.write_corpus("drugs", [{"id": "d0", "text": "x"}])
        writer.write_split("drugs", "test", queries=[{"id": "q1", "text": "x"}],
                           qrels=[{"query-id": "q1", "corpus-id": "d0", "score": score}])
    assert list(tmp_path.iterdir()) == []


def test_crumb_label_1e20_names_file_and_line():
    from complexir.loading_scripts.crumb import _cast_label

    with pytest.raises(UpstreamFormatError, match=r"q\.jsonl, line 3: passage_qrels: label of 'd1' is too large"):
        _cast_label(1e20, Path("q.jsonl"), 3, "passage_qrels", "d1")


@pytest.mark.parametrize("kind", ["csv", "tsv"])
def test_irsc_fields_over_131072_characters_are_read(tmp_path, kind):
    long_content = "word " * 40_000  # 200,000 characters: over the csv module's default field limit
    source = tmp_path / "pairs"
    source.mkdir()
    sep = "," if kind == "csv" else "\t"
    (source / f"query_en.{kind}").write_text(sep.join(["query", "content"]) + "\n"
                                             + sep.join(["a question", long_content.strip()]) + "\n"
                                             + sep.join(["another", "short content"]) + "\n")
    assert main(["build", "irsc", "--source", str(source), "--out", str(tmp_path / "out"), "--no-progress"]) == 0
    corpus = pq.read_table(next((tmp_path / "out" / "data" / "query-en").glob("corpus-*.parquet")))
    assert max(len(t) for t in corpus.column("text").to_pylist()) == len(long_content.strip())


@pytest.mark.parametrize(("content", "line"), [("q1,fine\nq2,\"unclosed\nq3,lost\nq4,lost\n", 3),
                                             ('q1,"ab"cd\n', 2)])
def test_irsc_malformed_csv_quoting_names_file_and_line(tmp_path, capsys, content, line):
    """An unclosed quote would otherwise swallow every following row into one field, silently."""
    source = tmp_path / "pairs"
    source.mkdir()
    (source / "query_en.csv").write_text("query,content\n" + content)
    assert main(["build", "irsc", "--source", str(source), "--out", str(tmp_path / "out"), "--no-progress"]) == 2
    assert f"query_en.csv, line {line}: not valid CSV" in error_line(capsys, "build")
    assert not (tmp_path / "out").exists()


# -- build options and sources -----------------------------------------------------------------------------------------
def _coveragebench_release(tmp_path: Path) -> Path:
    release = tmp_path / "release"
    shutil.copytree(FIXTURES / "coveragebench" / "demo_upstream", release)
    return release


def _build_coveragebench(release: Path, out: Path, *extra: str) -> int:
    return main(["build", "coveragebench", "--source", str(release), "--out", str(out), "--subset", "cast2020",
                 "--no-progress", *extra])


@pytest.mark.parametrize(("docs", "message"), [
    ("cast2020", "--docs expects SUBSET=SOURCE, got 'cast2020'"),
    ("cast2020=corpus/missing.jsonl", "--docs corpus/missing.jsonl: no such file"),
    ("cast2020=./nope/docs", "--docs ./nope/docs: no such file"),
    ("cast2020=jsonl:missing.jsonl", "--docs jsonl:missing.jsonl: no such file"),
])
def test_coveragebench_docs_mistakes_are_named_not_looked_up_on_the_hub(tmp_path, capsys, docs, message):
    release = _coveragebench_release(tmp_path)
    assert _build_coveragebench(release, tmp_path / "out", "--docs", docs) == 2
    assert message in error_line(capsys, "build")
    assert not (tmp_path / "out").exists()


def _corpus_lines(release: Path) -> tuple[Path, list[dict]]:
    path = release / "corpus" / "cast2020.jsonl"
    return path, [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_coveragebench_list_valued_text_is_an_error(tmp_path, capsys):
    release = _coveragebench_release(tmp_path)
    path, rows = _corpus_lines(release)
    rows[0]["text"] = ["a passage", "split in two"]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert _build_coveragebench(release, tmp_path / "out", "--docs", "cast2020=jsonl:corpus/cast2020.jsonl") == 2
    line = error_line(capsys, "build")
    assert "cast2020.jsonl, line 1" in line and "text must be a string, got list" in line


def test_coveragebench_duplicate_document_with_different_text_is_an_error(tmp_path, capsys):
    release = _coveragebench_release(tmp_path)
    path, rows = _corpus_lines(release)
    rows.insert(1, {**rows[0], "text": "a different text under the same id"})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert _build_coveragebench(release, tmp_path / "out", "--docs", "cast2020=jsonl:corpus/cast2020.jsonl") == 2
    assert f"document {rows[0]['id']!r} appears twice with different text" in error_line(capsys, "build")


def test_coveragebench_an_identical_repeat_is_kept_once(tmp_path):
    release = _coveragebench_release(tmp_path)
    path, rows = _corpus_lines(release)
    rows.insert(1, rows[0])
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert _build_coveragebench(release, tmp_path / "out", "--docs", "cast2020=jsonl:corpus/cast2020.jsonl") == 0


@pytest.mark.parametrize("benchmark", ["crumb", "irsc", "locov1", "coveragebench"])
@pytest.mark.parametrize("source", ["./no/such/release", "/no/such/release", "no/such/release"])
def test_a_missing_local_source_is_reported_as_such(tmp_path, capsys, monkeypatch, benchmark, source):
    monkeypatch.chdir(tmp_path)
    assert main(["build", benchmark, "--source", source, "--out", "out", "--no-progress"]) == 2
    line = error_line(capsys, "build")
    assert f"--source {source}: no such" in line
    assert not (tmp_path / "out").exists()


# -- run and report ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("args", "message"), [
    (["--model", "./no/such/model"], "--model ./no/such/model: no such folder"),
    (["--model", "/no/such/model"], "--model /no/such/model: no such folder"),
    (["--cache", "{file}"], "--cache {file}: not a folder"),
    (["--output", "{file}"], "--output {file}: not a folder"),
])
def test_run_options_naming_the_wrong_thing(tmp_path, capsys, args, message):
    file = tmp_path / "a-file"
    file.write_text("x")
    args = [a.format(file=file) for a in args]
    assert main(["run", "--task", "LoCoV1GovReport", *args]) == 2
    assert message.format(file=file) in error_line(capsys, "run")


def _result_folder(tmp_path: Path) -> Path:
    out = tmp_path / "results"
    model = out / "results" / "org__model" / "rev1"
    model.mkdir(parents=True)
    payload = {"dataset_revision": "r", "task_name": "LoCoV1GovReport", "mteb_version": "2.0.0",
               "scores": {"test": [{"main_score": 0.5, "ndcg_at_10": 0.5, "hf_subset": "default",
                                    "languages": ["eng-Latn"]}]},
               "evaluation_time": 1.0, "kg_co2_emissions": None}
    (model / "LoCoV1GovReport.json").write_text(json.dumps(payload))
    return out


def test_report_card_that_does_not_exist_yet_is_a_new_card(tmp_path):
    out = _result_folder(tmp_path)
    new = tmp_path / "NEW.md"
    # the result names no data (dataset revision "r"): accepted only as demo, labelled so
    assert main(["report", str(out), "--card", str(new), "--out", str(tmp_path / "report"), "--allow-demo"]) == 0
    card = (tmp_path / "report" / "README.md").read_text()
    assert "model-index" in card


def test_report_names_a_truncated_result_file(tmp_path, capsys):
    out = _result_folder(tmp_path)
    file = out / "results" / "org__model" / "rev1" / "LoCoV1GovReport.json"
    file.write_text(file.read_text()[:60])
    assert main(["report", str(out), "--out", str(tmp_path / "report")]) == 2
    line = error_line(capsys, "report")
    assert f"{file}:1: not valid JSON" in line


# -- evaluate, shards and error lines (issue 32) ---------------------------------------------------------------------
def test_evaluate_refuses_a_doc_judged_twice_with_two_labels(tmp_path, capsys):
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    run.write_text("1 Q0 a 1 2.0 t\n1 Q0 b 2 1.0 t\n")
    qrels.write_text("1 0 a 1\n1 0 b 0\n1 0 a 2\n")  # trec_eval refuses it; the larger label was kept silently
    assert main(["evaluate", str(qrels), str(run), "-m", "nDCG@10"]) == 2
    line = error_line(capsys, "evaluate")
    assert f"{qrels}:3: topic '1', doc 'a' (iteration '0') is judged twice with different labels (1 at line 1" in line
    # the same doc under two nuggets (ndeval's format) is two judgments, as before
    qrels.write_text("1 n1 a 1\n1 n2 a 2\n1 n1 b 0\n")
    assert main(["evaluate", str(qrels), str(run), "-m", "nDCG@10"]) == 0
    assert main(["evaluate", str(qrels), str(run), "-m", "alpha_nDCG@10", "--nuggets"]) == 0


@pytest.mark.parametrize("damage", ["truncated", "corrupt"])
def test_a_broken_gz_shard_is_named(tmp_path, capsys, damage):
    import gzip

    from complexir.upstream import iter_jsonl

    shard = tmp_path / "docs-00.jsonl.gz"
    lines = "".join(json.dumps({"id": f"d{i}", "text": f"text {i} " * 20}) + "\n" for i in range(2000))
    data = bytearray(gzip.compress(lines.encode()))
    if damage == "truncated":
        data = data[: len(data) // 2]
    else:
        data[-6] ^= 0xFF  # the CRC
    shard.write_bytes(bytes(data))
    with pytest.raises(UpstreamFormatError, match=rf"{shard}: a truncated or corrupt gzip file .*download or unpack"):
        list(iter_jsonl(shard))


def test_error_lines_quoting_huge_values_are_cut(tmp_path, capsys):
    huge = "x" * 20000
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("1 0 a 1\n")
    run.write_text(f"1 Q0 a 1 2.0 t\n1 Q0 {huge} 2 1.0\n")  # five fields: the error quotes the line
    assert main(["evaluate", str(qrels), str(run), "-m", "nDCG@10"]) == 2
    line = error_line(capsys, "evaluate")
    assert line.startswith(f"complexir evaluate: error: {run}:2: ") and len(line) < 1200
    assert "characters)" in line
