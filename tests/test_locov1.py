"""LoCoV1: the loading script on hand-written upstream files, the MTEB tasks, the demo."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from complexir.layout import reader
from complexir.layout.errors import UpstreamFormatError
from complexir.layout.validation import validate_folder
from complexir.loading_scripts import locov1 as loco

FIXTURES = Path(__file__).parent / "fixtures" / "locov1"
TINY = FIXTURES / "tiny_upstream"


@pytest.fixture(autouse=True)
def private_datasets_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """`datasets` caches a local folder by its name and config patterns, not its content: every folder named
    ``locov1`` (tiny fixture, late-answer fixture, demo) would share one cache and be read stale. Each test
    reads through a fresh cache."""
    import datasets

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path_factory.mktemp("hf_datasets_cache")))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return loco.build_locov1(str(TINY), tmp_path_factory.mktemp("loco") / "locov1", progress=False)


def _rows(folder: Path, subset: str, kind: str) -> list[dict]:
    return reader.load(folder, subset, kind, "test").to_list()


def test_subsets_are_the_dataset_values_in_paper_order(built: Path) -> None:
    assert reader.list_subsets(built) == ["gov_report", "qasper_abstract"]
    validate_folder(built)


def test_gov_report_rows(built: Path) -> None:
    corpus = _rows(built, "gov_report", "corpus")
    assert [(r["id"], r["title"]) for r in corpus] == [
        ("gov_report_Passage_0", ""), ("gov_report_Passage_1", ""), ("gov_report_Passage_2", "")]
    assert corpus[1]["text"] == ("Medicare pays hospitals a fixed amount per stay. "
                                 "Readmissions within thirty days are penalized.")
    queries = _rows(built, "gov_report", "queries")
    assert queries == [
        {"id": "gov_report_Query_0", "text": "How does the FAA manage air traffic?"},
        {"id": "gov_report_Query_1", "text": "Hospital readmission penalties under Medicare."},
        {"id": "gov_report_Query_2", "text": "Polar icebreaker fleet of the Coast Guard."},
    ]
    # binary qrels from answer_pids; the repeated pid of Query_1 is judged once
    assert _rows(built, "gov_report", "qrels") == [
        {"query-id": "gov_report_Query_0", "corpus-id": "gov_report_Passage_0", "score": 1},
        {"query-id": "gov_report_Query_1", "corpus-id": "gov_report_Passage_1", "score": 1},
        {"query-id": "gov_report_Query_2", "corpus-id": "gov_report_Passage_2", "score": 1},
    ]


def test_qasper_null_document_drops_the_query_of_the_same_index(built: Path) -> None:
    assert [r["id"] for r in _rows(built, "qasper_abstract", "corpus")] == [
        "qasper_abstract_Passage_0", "qasper_abstract_Passage_2", "qasper_abstract_Passage_3"]
    assert [r["id"] for r in _rows(built, "qasper_abstract", "queries")] == [
        "qasper_abstract_Query_0", "qasper_abstract_Query_2", "qasper_abstract_Query_3"]
    # Query_2 also named the null Passage_1: that judgment stays (a relevant document no model can retrieve, as
    # trec_eval counts it), declared in the card so the validator accepts it
    assert _rows(built, "qasper_abstract", "qrels") == [
        {"query-id": "qasper_abstract_Query_0", "corpus-id": "qasper_abstract_Passage_0", "score": 1},
        {"query-id": "qasper_abstract_Query_2", "corpus-id": "qasper_abstract_Passage_2", "score": 1},
        {"query-id": "qasper_abstract_Query_2", "corpus-id": "qasper_abstract_Passage_1", "score": 1},
        {"query-id": "qasper_abstract_Query_3", "corpus-id": "qasper_abstract_Passage_3", "score": 1},
    ]


def test_card_counts_every_dropped_row(built: Path) -> None:
    card = (built / "README.md").read_text()
    assert "license: apache-2.0" in card
    assert "2402.07440" in card
    # the qrel of another query to the dropped document is kept (a relevant document no model can retrieve)
    assert "| qasper_abstract | test | 3 | 3 | 4 | 0 | 0 | 0 | 1 |" in card
    assert "- **qasper_abstract**: documents dropped (null passage): 1" in card
    assert "- **qasper_abstract**: queries paired with null document: 1" in card
    assert "- **qasper_abstract**: qrels to dropped documents: 1" in card
    assert "- **gov_report**: repeated answer pids: 1" in card
    assert "| gov_report | 3 | 14.0 | 14 | 14 | 14 |" in card  # words per document: mean, p50, p95, max
    assert "/work/" not in card  # a local source is named by the upstream repos, not this machine's path


def test_answer_pid_without_a_document_is_kept_and_counted(tmp_path: Path) -> None:
    """An answer pid no document has is a relevant document no model retrieves (trec_eval's reading): kept."""
    row = json.loads((TINY / "LoCoV1-Queries" / "documents" / "gov_report_test.jsonl").read_text().splitlines()[2])
    row["answer_pids"].append("gov_report_Passage_9")
    src = _broken_copy(tmp_path, "LoCoV1-Queries", "gov_report", 3, json.dumps(row))
    out = loco.build_locov1(str(src), tmp_path / "out", progress=False)
    kept = {"query-id": row["qid"], "corpus-id": "gov_report_Passage_9", "score": 1}
    assert kept in _rows(out, "gov_report", "qrels")
    assert "- **gov_report**: qrels to unknown documents: 1" in (out / "README.md").read_text()


def test_tasks_option_and_unknown_task(tmp_path: Path) -> None:
    out = loco.build_locov1(str(TINY), tmp_path / "one", tasks=["qasper_abstract"], progress=False)
    assert reader.list_subsets(out) == ["qasper_abstract"]
    with pytest.raises(ValueError, match="qmsum"):
        loco.build_locov1(str(TINY), tmp_path / "two", tasks=["qmsum"], progress=False)


def test_build_is_deterministic(tmp_path: Path) -> None:
    a = loco.build_locov1(str(TINY), tmp_path / "a", progress=False)
    b = loco.build_locov1(str(TINY), tmp_path / "b", progress=False)
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    for rel in files:
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel


def _broken_copy(tmp_path: Path, repo: str, task: str, line: int, new: str | None) -> Path:
    src = tmp_path / "src"
    shutil.copytree(TINY, src)
    path = src / repo / "documents" / f"{task}_test.jsonl"
    lines = path.read_text().splitlines()
    if new is None:
        del lines[line - 1]
    else:
        lines[line - 1] = new
    path.write_text("\n".join(lines) + "\n")
    return src


@pytest.mark.parametrize(
    ("repo", "task", "line", "new", "message"),
    [
        ("LoCoV1-Documents", "gov_report", 2, '{"pid": "gov_report_Passage_1", "passage": ', "line 2: invalid JSON"),
        ("LoCoV1-Documents", "gov_report", 3,
         '{"pid": "gov_report_Passage_0", "passage": "x", "dataset": "gov_report"}', "line 3: duplicate pid"),
        ("LoCoV1-Documents", "gov_report", 2, '{"pid": "gov_report_Passage_1", "passage": "x", "dataset": "qmsum"}',
         "line 2: column 'dataset' is 'qmsum'"),
        ("LoCoV1-Documents", "gov_report", 1, '{"pid": "gov_report_Passage_0", "dataset": "gov_report"}',
         "line 1: missing field 'passage'"),
        ("LoCoV1-Queries", "qasper_abstract", 1,
         '{"qid": "qasper_abstract_Query_0", "query": "q", "answer_pids": "qasper_abstract_Passage_0", '
         '"dataset": "qasper_abstract"}', "line 1: column 'answer_pids'"),
        ("LoCoV1-Documents", "qasper_abstract", 2, '{"pid": "odd", "passage": null, "dataset": "qasper_abstract"}',
         "line 2: pid 'odd' has a null passage"),
    ],
)
def test_bad_upstream_names_file_and_line(tmp_path: Path, repo, task, line, new, message) -> None:
    src = _broken_copy(tmp_path, repo, task, line, new)
    out = tmp_path / "out"
    with pytest.raises(UpstreamFormatError, match=message) as info:
        loco.build_locov1(str(src), out, progress=False)
    assert f"{repo}/documents/{task}_test.jsonl" in str(info.value)
    assert not out.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out")]  # nothing half-written


def test_local_source_needs_both_repos(tmp_path: Path) -> None:
    shutil.copytree(TINY / "LoCoV1-Documents", tmp_path / "LoCoV1-Documents")
    with pytest.raises(UpstreamFormatError, match="LoCoV1-Queries"):
        loco.build_locov1(str(tmp_path), tmp_path / "out", progress=False)


def test_hub_source_downloads_both_repos(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The default source goes through huggingface_hub.snapshot_download, one call per repo."""
    calls = []

    def fake_snapshot_download(repo_id: str, *, repo_type: str, revision, cache_dir, allow_patterns) -> str:
        calls.append((repo_id, repo_type, revision))
        folder = tmp_path / "hub" / repo_id.replace("/", "--") / "snapshots" / ("a" * 40)
        shutil.copytree(TINY / repo_id.split("/")[1], folder)
        return str(folder)

    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake_snapshot_download)
    out = loco.build_locov1(loco.DEFAULT_SOURCE, tmp_path / "out", queries_revision="v1", progress=False)
    assert calls == [("hazyresearch/LoCoV1-Documents", "dataset", None),
                     ("hazyresearch/LoCoV1-Queries", "dataset", "v1")]
    card = (out / "README.md").read_text()
    assert f"hazyresearch/LoCoV1-Documents@{'a' * 40}" in card


def test_hub_source_with_subsets_fetches_only_their_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--subset`` from the Hub asks snapshot_download for those tasks' files only; a task the release has no
    file for is named with the repo and commit. (tests/test_hub_day_one.py proves the requests on a Hub server.)"""
    import fnmatch

    asked = []

    def fake_snapshot_download(repo_id: str, *, repo_type: str, revision, cache_dir, allow_patterns) -> str:
        asked.append(allow_patterns)
        upstream = TINY / repo_id.split("/")[1]
        folder = tmp_path / "hub" / repo_id.replace("/", "--") / "snapshots" / ("b" * 40)
        for file in upstream.rglob("*"):
            relative = file.relative_to(upstream).as_posix()
            if file.is_file() and any(fnmatch.fnmatch(relative, p) for p in allow_patterns):
                (folder / relative).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(file, folder / relative)
        return str(folder)

    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake_snapshot_download)
    out = loco.build_locov1(loco.DEFAULT_SOURCE, tmp_path / "out", tasks=["gov_report"], progress=False)
    assert asked == [["documents/gov_report_test.jsonl", "README.md"]] * 2
    assert reader.list_subsets(out) == ["gov_report"]
    # a snapshot folder holding another task's files from an earlier download: this build does not read them
    shutil.copytree(TINY / "LoCoV1-Documents", tmp_path / "hub" / "hazyresearch--LoCoV1-Documents" / "snapshots"
                    / ("b" * 40), dirs_exist_ok=True)
    again = loco.build_locov1(loco.DEFAULT_SOURCE, tmp_path / "again", tasks=["gov_report"], progress=False)
    assert reader.list_subsets(again) == ["gov_report"]
    with pytest.raises(FileNotFoundError, match=r"hazyresearch/LoCoV1-Documents@b{40} has no "
                                                r"documents/qmsum_test.jsonl .*check --subset qmsum"):
        loco.build_locov1(loco.DEFAULT_SOURCE, tmp_path / "none", tasks=["qmsum"], progress=False)


def test_cli_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from complexir.cli.main import main
    from complexir.loading_scripts import locov1

    seen: list[bool] = []
    original = locov1.build_locov1

    def spy(*args, **kwargs):
        seen.append(kwargs["progress"])
        return original(*args, **kwargs)

    monkeypatch.setattr(locov1, "build_locov1", spy)
    out = tmp_path / "cli"
    assert main(["build", "locov1", "--source", str(TINY), "--out", str(out)]) == 0
    assert json.loads(json.dumps(reader.list_subsets(out))) == ["gov_report", "qasper_abstract"]
    assert main(["build", "locov1", "--source", str(TINY), "--out", str(out), "--overwrite", "--no-progress"]) == 0
    assert seen == [True, False]  # --no-progress, as every loading script spells it, reaches the writer


# -- MTEB tasks ---------------------------------------------------------------------------------------------
def test_twelve_tasks_and_the_benchmark() -> None:
    from complexir.tasks import BENCHMARKS_BY_NAME, locov1

    names = [cls.metadata.name for cls in locov1.TASKS]
    assert len(names) == 12 and len(set(names)) == 12
    assert {"LoCoV1SummScreenFD", "LoCoV1GovReport", "LoCoV1QMSum", "LoCoV1QasperTitle", "LoCoV1QasperAbstract",
            "LoCoV1MultiFieldQA", "LoCoV1TwoWikiMQA", "LoCoV1PassageRetrieval", "LoCoV1CourtListenerHTML",
            "LoCoV1CourtListenerPlainText", "LoCoV1LegalCaseReports", "LoCoV1StackOverflow"} == set(names)
    assert sorted(cls.layout_subsets["default"] for cls in locov1.TASKS) == sorted(loco.TASKS)
    for cls in locov1.TASKS:
        assert cls.metadata.main_score == "ndcg_at_10"
        assert cls.metadata.license == "apache-2.0"
        assert cls.metadata.is_filled()
    benchmark = BENCHMARKS_BY_NAME["LoCoV1"]
    assert [t.metadata.name for t in benchmark.tasks] == names


LATE = FIXTURES / "late_answer_upstream"  # six reports sharing a 385-token preamble; the answer sits after it


@pytest.fixture(scope="module")
def late_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("late")
    loco.build_locov1(str(LATE), base / "locov1", progress=False)
    return base


@pytest.fixture(scope="module")
def minilm(model_path: Path):
    import mteb
    from mteb.models.sentence_transformer_wrapper import SentenceTransformerEncoderWrapper
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformerEncoderWrapper(SentenceTransformer(str(model_path), device="cpu"))
    model.mteb_model_meta = mteb.get_model_meta("sentence-transformers/all-MiniLM-L6-v2")
    return model


def _evaluate(model, data_dir: Path) -> dict:
    import mteb

    from complexir.tasks.locov1 import LoCoV1GovReport

    task = LoCoV1GovReport()
    task.data_dir = data_dir
    result = mteb.evaluate(model, task, cache=None, show_progress_bar=False,
                           encode_kwargs={"batch_size": 32, "show_progress_bar": False})
    return result.task_results[0].scores["test"][0]


def test_late_answer_plain_model_truncates_chunked_mode_reads_it(late_data_dir: Path, minilm) -> None:
    from complexir.systems.long_docs import wrap_long_docs

    plain = _evaluate(minilm, late_data_dir)
    chunked = _evaluate(wrap_long_docs(minilm, "chunk"), late_data_dir)

    # Every document is ~460 tokens; all-MiniLM-L6-v2 reads 254 of them (256 less [CLS] and [SEP]).
    assert plain["model_tokens_per_input"] == 254
    assert plain["docs_truncated_share"] == 1.0
    assert 0.5 < plain["doc_token_share_seen"] < 0.6
    assert plain["doc_token_share_seen"] == pytest.approx(254 / plain["doc_tokens_mean"], rel=0.03)
    # The windows cover every token.
    assert chunked["doc_token_share_seen"] == 1.0 and chunked["docs_truncated_share"] == 0.0
    assert chunked["doc_tokens_mean"] == plain["doc_tokens_mean"]
    # The short queries fit in one input, in both modes.
    assert plain["query_token_share_seen"] == chunked["query_token_share_seen"] == 1.0
    assert plain["queries_truncated_share"] == 0.0
    # What the plain model read is the shared preamble only: it cannot tell the reports apart.
    assert chunked["ndcg_at_10"] == pytest.approx(1.0)
    assert plain["ndcg_at_10"] < chunked["ndcg_at_10"] - 0.2


# -- the demo -------------------------------------------------------------------------------------------------
DEMO = Path(__file__).resolve().parents[1] / "complexir" / "demo" / "locov1"


def test_demo_is_the_build_of_its_upstream_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`python scripts/build_demo.py locov1` output is committed: it must equal a fresh `complexir build` (its
    descriptive statistics included), byte for byte."""
    from complexir.cli.main import main
    from complexir.registry.benchmarks import get_spec

    monkeypatch.chdir(Path(__file__).parents[1])  # build_demo.py builds from the repository root, relative paths
    fresh = tmp_path / "locov1"
    assert main(["build", "locov1", "--source", str(Path("tests") / "fixtures" / "locov1" / "demo_upstream"),
                 "--out", str(fresh), *get_spec("locov1").demo_build_args]) == 0
    files = sorted(p.relative_to(DEMO) for p in DEMO.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(fresh) for p in fresh.rglob("*") if p.is_file())
    for rel in files:
        assert (DEMO / rel).read_bytes() == (fresh / rel).read_bytes(), f"{rel}: rerun scripts/build_demo.py locov1"


def test_demo_documents_are_long_and_keep_the_qasper_quirk() -> None:
    """The demo holds every task; the three a plain ``complexir run`` scores have documents past a short model's
    window (the other nine are short, a few queries each)."""
    from complexir.registry.benchmarks import get_spec

    spec = get_spec("locov1")
    assert sorted(reader.list_subsets(DEMO)) == sorted(spec.subset_names())
    assert spec.demo_run_subsets == ("gov_report", "qasper_abstract", "stackoverflow")
    for subset in spec.demo_run_subsets:
        corpus = _rows(DEMO, subset, "corpus")
        assert all(len(r["text"].split()) > 1000 for r in corpus)
    assert "qasper_abstract_Passage_1" not in {r["id"] for r in _rows(DEMO, "qasper_abstract", "corpus")}
    assert "qasper_abstract_Query_1" not in {r["id"] for r in _rows(DEMO, "qasper_abstract", "queries")}
    upstream = FIXTURES / "demo_upstream" / "LoCoV1-Documents" / "documents" / "qasper_abstract_test.jsonl"
    assert json.loads(upstream.read_text().splitlines()[1])["passage"] is None
