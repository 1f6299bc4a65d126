"""IRSC: pair files → 20 ``<task>-<setting>`` subsets; MTEB tasks whose per-subset scores are IRSC's numbers."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import datasets
import mteb
import pyarrow.parquet as pq
import pytest

from complexir.cli.main import main as complexir
from complexir.layout.errors import UpstreamFormatError
from complexir.layout.reader import list_subsets, load
from complexir.loading_scripts.irsc import Columns, build_irsc
from complexir.tasks.irsc import BENCHMARK, TASKS, IRSCKeyword, IRSCQuery, IRSCTitle

REPO = Path(__file__).resolve().parents[1]
DEMO_UPSTREAM = REPO / "tests" / "fixtures" / "irsc" / "demo_upstream"

EIFFEL = "The Eiffel Tower was completed in 1889 for the World's Fair in Paris."
CURIE = "Marie Curie won the Nobel Prize in Physics in 1903 and in Chemistry in 1911."
WALL = "长城东起山海关，西至嘉峪关，现存部分大多修建于明朝。"
PANDA = "大熊猫主要生活在四川、陕西和甘肃的山区竹林中，几乎只吃竹子。"


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def jsonl(*records: dict) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


@pytest.fixture()
def pairs_dir(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    # JSONL with every column; language spellings vary; a duplicate content, a repeated pair, a query text
    # paired with two contents, a blank line.
    write(src / "a_mixed.jsonl", jsonl(
        {"task": "query", "query": "When was the Eiffel Tower completed?", "content": EIFFEL,
         "query_language": "English", "content_language": "eng"},
        {"task": "query", "query": "Which tower was built for the 1889 World's Fair?", "content": "  " + EIFFEL + "\n",
         "query_language": "en", "content_language": "en-US"},
        {"task": "query", "query": "When was the Eiffel Tower completed?", "content": EIFFEL,
         "query_language": "en", "content_language": "en"},
        {"task": "Keywords", "query": "Nobel Prize", "content": CURIE,
         "query_language": "en", "content_language": "en"},
        {"task": "keyword", "query": "Nobel Prize", "content": EIFFEL,
         "query_language": "en", "content_language": "en"},
    ) + "\n" + jsonl(
        {"task": "query", "query": "长城西至哪里？", "content": WALL, "query_language": "zh-CN",
         "content_language": "Chinese"},
        {"task": "query", "query": "What do giant pandas eat?", "content": PANDA, "query_language": "en",
         "content_language": "zh"},
    ))
    # TSV without a task column: the task comes from the file name
    write(src / "b_title.tsv",
          "query\tcontent\tquery_language\tcontent_language\n"
          f"埃菲尔铁塔\t{EIFFEL}\tzh\ten\n"
          f"居里夫人\t{CURIE}\tcmn\tenglish\n"
          f"The \"Great Wall\"\t{WALL}\ten\tzh\n")
    # JSONL with only query and content: task and setting from the path
    write(src / "summary" / "zh.jsonl", jsonl({"query": "明代修建的防御工程。", "content": WALL}))
    return src


@pytest.fixture()
def built(pairs_dir: Path, tmp_path: Path) -> Path:
    return build_irsc(pairs_dir, tmp_path / "irsc", progress=False)


def rows(folder: Path, subset: str, kind: str) -> list[dict]:
    return load(folder, subset, kind).to_list()


def test_subsets_and_rows(built: Path) -> None:
    assert list_subsets(built) == ["query-en", "query-zh", "query-en-zh", "title-en-zh", "title-zh-en",
                                   "keyword-en", "summary-zh"]

    # query-en: two queries share the Eiffel content (one document); the repeated pair is kept once
    assert rows(built, "query-en", "corpus") == [
        {"id": "d-" + sha(EIFFEL), "title": "", "text": EIFFEL, "language": "en"}]
    q1 = "q-" + sha(f"query\x1fen\x1fWhen was the Eiffel Tower completed?\x1f{EIFFEL}")
    q2 = "q-" + sha(f"query\x1fen\x1fWhich tower was built for the 1889 World's Fair?\x1f{EIFFEL}")
    queries = rows(built, "query-en", "queries")
    assert [(q["id"], q["text"], q["language"]) for q in queries] == [
        (q1, "When was the Eiffel Tower completed?", "en"),
        (q2, "Which tower was built for the 1889 World's Fair?", "en")]
    assert [json.loads(q["metadata"]) for q in queries] == [{"file": "a_mixed.jsonl", "line": 1},
                                                           {"file": "a_mixed.jsonl", "line": 2}]
    assert rows(built, "query-en", "qrels") == [
        {"query-id": q1, "corpus-id": "d-" + sha(EIFFEL), "score": 1},
        {"query-id": q2, "corpus-id": "d-" + sha(EIFFEL), "score": 1}]

    # keyword-en: the same query text with two contents is two queries, one positive each
    corpus = rows(built, "keyword-en", "corpus")
    assert [d["id"] for d in corpus] == ["d-" + sha(CURIE), "d-" + sha(EIFFEL)]
    qrels = rows(built, "keyword-en", "qrels")
    queries = rows(built, "keyword-en", "queries")
    assert [q["text"] for q in queries] == ["Nobel Prize", "Nobel Prize"]
    assert len({q["id"] for q in queries}) == 2
    assert [(r["query-id"], r["corpus-id"]) for r in qrels] == [
        (queries[0]["id"], "d-" + sha(CURIE)), (queries[1]["id"], "d-" + sha(EIFFEL))]

    # cross-lingual: the query language and the content language
    assert [(q["text"], q["language"]) for q in rows(built, "query-en-zh", "queries")] == [
        ("What do giant pandas eat?", "en")]
    assert [(d["text"], d["language"]) for d in rows(built, "query-en-zh", "corpus")] == [(PANDA, "zh")]
    assert [(q["text"], q["language"]) for q in rows(built, "title-zh-en", "queries")] == [
        ("埃菲尔铁塔", "zh"), ("居里夫人", "zh")]
    assert [d["language"] for d in rows(built, "title-zh-en", "corpus")] == ["en", "en"]
    # TSV is unquoted: a '"' stays text
    assert [q["text"] for q in rows(built, "title-en-zh", "queries")] == ['The "Great Wall"']
    # a file that names its task and setting in its path
    summary = rows(built, "summary-zh", "queries")
    assert [(q["text"], q["language"]) for q in summary] == [("明代修建的防御工程。", "zh")]
    wall_id = "d-" + sha(WALL)
    assert rows(built, "summary-zh", "corpus")[0]["id"] == rows(built, "query-zh", "corpus")[0]["id"] == wall_id

    card = (built / "README.md").read_text(encoding="utf-8")
    assert "license: other" in card and "2409.15763" in card
    assert "| query | 2 / 1 | 1 / 1 | 1 / 1 | — |" in card
    assert "exact repeats of a pair (kept once): 1" in card
    assert "pairs whose content repeats an earlier pair's (one document): 1" in card


def test_build_is_deterministic(pairs_dir: Path, tmp_path: Path) -> None:
    a = build_irsc(pairs_dir, tmp_path / "a", progress=False)
    b = build_irsc(pairs_dir, tmp_path / "b", progress=False)
    files = sorted(p.relative_to(a) for p in a.rglob("*.parquet"))
    assert files == sorted(p.relative_to(b) for p in b.rglob("*.parquet"))
    assert all((a / f).read_bytes() == (b / f).read_bytes() for f in files)


@pytest.mark.parametrize(("flags", "progress"), [([], True), (["--no-progress"], False), (["--quiet"], False)])
def test_cli_progress_option(pairs_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flags: list[str],
                             progress: bool) -> None:
    """`--no-progress`, as every loading script spells it (`--quiet` still accepted), reaches the writer."""
    from complexir.loading_scripts import irsc

    seen: list[bool] = []

    def spy(*args, **kwargs):
        seen.append(kwargs["progress"])
        return build_irsc(*args, **kwargs)

    monkeypatch.setattr(irsc, "build_irsc", spy)
    assert complexir(["build", "irsc", "--source", str(pairs_dir), "--out", str(tmp_path / "out"), *flags]) == 0
    assert seen == [progress]
    assert list_subsets(tmp_path / "out")


def test_fixed_values_and_custom_columns(tmp_path: Path) -> None:
    src = write(tmp_path / "src" / "pairs.csv", 'q,c\n"Who won two Nobel Prizes, in physics and chemistry?",'
                f'"{CURIE}"\n')
    out = build_irsc(src.parent, tmp_path / "out", progress=False,
                     columns=Columns(query="q", content="c", fixed_task="query", fixed_query_language="english",
                                     fixed_content_language="en"))
    assert [q["text"] for q in rows(out, "query-en", "queries")] == [
        "Who won two Nobel Prizes, in physics and chemistry?"]
    with pytest.raises(ValueError, match="--query-language 'zh-TW'"):
        build_irsc(src.parent, tmp_path / "bad", columns=Columns(query="q", content="c", fixed_task="query",
                                                                 fixed_query_language="zh-TW"))


@pytest.mark.parametrize(("name", "text", "line", "message"), [
    ("p.jsonl", jsonl({"task": "query", "query": "q", "content": "c", "query_language": "en",
                       "content_language": "en"}) + jsonl({"task": "query", "query": "q2", "content": "  ",
                                                           "query_language": "en", "content_language": "en"}),
     2, "empty content"),
    ("p.jsonl", "\n" + jsonl({"task": "headline", "query": "q", "content": "c", "query_language": "en",
                              "content_language": "en"}), 2, "unknown task 'headline'"),
    ("p.jsonl", jsonl({"task": "query", "query": "q", "content": "c", "query_language": "zh-TW",
                       "content_language": "en"}), 1, "unknown query language 'zh-TW'"),
    ("p.jsonl", '{"task": "query", "query": "q"\n', 1, "invalid JSON"),
    ("p.jsonl", jsonl({"task": "query", "query": 3, "content": "c", "query_language": "en",
                       "content_language": "en"}), 1, "must be a string"),
    ("title.tsv", "query\tcontent\tquery_language\tcontent_language\nt\tc\ten\ten\nt2\tc2\ten\n", 3,
     "3 fields where the header has 4"),
    ("pairs.tsv", "query\tcontent\tquery_language\tcontent_language\nt\tc\ten\ten\n", 2, "no task"),
    ("query.tsv", "query\tcontent\nt\tc\n", 2, "no query language"),
])
def test_malformed_input_names_file_and_line(tmp_path: Path, name: str, text: str, line: int, message: str) -> None:
    path = write(tmp_path / "src" / name, text)
    with pytest.raises(UpstreamFormatError, match=message) as info:
        build_irsc(path.parent, tmp_path / "out", progress=False)
    assert info.value.path == path and info.value.line == line
    assert not (tmp_path / "out").exists()  # nothing half-written


# -- metrics: a fixed ranking scored by the task's own evaluator vs IRSC's definitions ------------------
class FixedRun:
    """A SearchProtocol model that returns a fixed run, so the task's evaluator can be checked."""

    def __init__(self, run: dict[str, dict[str, float]]):
        self.run = run
        self.mteb_model_meta = mteb.get_model_meta("sentence-transformers/all-MiniLM-L6-v2")

    def index(self, corpus, **kwargs) -> None:
        pass

    def search(self, queries, **kwargs) -> dict[str, dict[str, float]]:
        return {qid: self.run.get(qid, {}) for qid in queries["id"]}


def test_fixed_ranking_scores_equal_irsc_recipe(tmp_path: Path) -> None:
    # 12 Chinese contents; 5 English keyword queries (en-zh), relevant content placed at ranks 1, 3, 10, 11, 12
    contents = [f"第{i}篇文章讨论长江流域第{i}个城市的历史与经济。" for i in range(1, 13)]
    records = [{"query": f"city {i} of the Yangtze basin", "content": contents[i]} for i in range(5)]
    write(tmp_path / "src" / "keyword" / "en-zh.jsonl", jsonl(*records))
    write(tmp_path / "src" / "keyword" / "zh.jsonl", jsonl(*(
        {"query": f"长江 城市 {i}", "content": c} for i, c in enumerate(contents))))
    build_irsc(tmp_path / "src", tmp_path / "data" / "irsc", progress=False)

    qrels = {r["query-id"]: r["corpus-id"] for r in rows(tmp_path / "data" / "irsc", "keyword-en-zh", "qrels")}
    others = ["d-" + sha(c) for c in contents]
    target_rank = dict(zip(qrels, [1, 3, 10, 11, 12], strict=True))
    run = {}
    for qid, rel in qrels.items():
        ranking = [d for d in others if d != rel]
        ranking.insert(target_rank[qid] - 1, rel)
        run[qid] = {d: 100.0 - r for r, d in enumerate(ranking)}  # distinct scores: no tie-breaking involved

    # IRSC's recipe by hand, one relevant content per query:
    # r@10 = [rank <= 10]; m@10 = (sum of P@rank over relevant in top 10) / |relevant| = 1/rank;
    # nDCG@10 = 1/log2(1+rank)
    ranks = list(target_rank.values())
    expected = {
        "recall_at_10": sum(r <= 10 for r in ranks) / len(ranks),
        "map_at_10": sum(1 / r for r in ranks if r <= 10) / len(ranks),
        "ndcg_at_10": sum(1 / math.log2(1 + r) for r in ranks if r <= 10) / len(ranks),
    }
    assert expected["recall_at_10"] == 0.6
    assert expected["map_at_10"] == pytest.approx((1 + 1 / 3 + 1 / 10) / 5, abs=1e-15)

    task = IRSCKeyword()
    task.data_dir = tmp_path / "data"
    scores = task.evaluate(FixedRun(run), "test", encode_kwargs={})
    assert set(scores) == {"zh", "en-zh"}  # the settings present, each scored on its own
    got = scores["en-zh"]
    assert got["main_score"] == got["recall_at_10"]
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, abs=5e-6)  # MTEB rounds to 5 decimals

    # the same per query, unrounded, from pytrec_eval (which MTEB calls) and from our metrics
    from mteb._evaluators.retrieval_metrics import calculate_retrieval_scores

    from complexir.metrics import adhoc_per_query, rank_run

    per_query = calculate_retrieval_scores(run, {q: {d: 1} for q, d in qrels.items()}, [10]).all_scores
    ours = adhoc_per_query({q: {d: 1} for q, d in qrels.items()}, rank_run(run), measures=("R@10", "AP@10", "nDCG@10"))
    for qid, rank in target_rank.items():
        hit = rank <= 10
        assert per_query[qid]["map_cut_10"] == pytest.approx(1 / rank if hit else 0.0, abs=1e-12)
        assert per_query[qid]["ndcg_cut_10"] == pytest.approx(1 / math.log2(1 + rank) if hit else 0.0, abs=1e-12)
        assert per_query[qid]["recall_10"] == float(hit)
        assert ours["AP@10"][qid] == pytest.approx(per_query[qid]["map_cut_10"], abs=1e-12)
        assert ours["nDCG@10"][qid] == pytest.approx(per_query[qid]["ndcg_cut_10"], abs=1e-12)
        assert ours["R@10"][qid] == per_query[qid]["recall_10"]


# -- MTEB tasks ----------------------------------------------------------------------------------------
def test_task_metadata() -> None:
    assert [cls.metadata.name for cls in TASKS] == ["IRSCQuery", "IRSCTitle", "IRSCPart", "IRSCKeyword", "IRSCSummary"]
    assert BENCHMARK.name == "IRSC" and len(BENCHMARK.tasks) == 5
    for cls in TASKS:
        meta = cls.metadata
        assert meta.main_score == "recall_at_10"
        assert meta.eval_langs == {"en": ["eng-Latn"], "zh": ["cmn-Hans"], "en-zh": ["eng-Latn", "cmn-Hans"],
                                   "zh-en": ["cmn-Hans", "eng-Latn"]}
        task_name = meta.name.removeprefix("IRSC").lower()
        assert cls.layout_subsets == {s: f"{task_name}-{s}" for s in ("en", "zh", "en-zh", "zh-en")}


def test_partial_data_dir(built: Path) -> None:
    data_dir = built.parent
    assert IRSCQuery().subsets_present(data_dir) == ["en", "zh", "en-zh"]
    assert IRSCTitle().available_in(data_dir)
    assert not IRSCQuery().available_in(data_dir / "nowhere")
    task = IRSCTitle()
    task.data_dir = data_dir
    task.load_data()
    assert task.hf_subsets == ["en-zh", "zh-en"] and set(task.dataset) == {"en-zh", "zh-en"}


@pytest.fixture(scope="module")
def demo_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("irsc_demo")
    build_irsc(DEMO_UPSTREAM, out / "irsc", progress=False)
    return out


def test_demo_is_the_built_fixture(tmp_path: Path) -> None:
    """The shipped demo is byte for byte what the loading script makes of the fixture, with every subset."""
    shipped = REPO / "complexir" / "demo" / "irsc"
    built = build_irsc(DEMO_UPSTREAM, tmp_path / "irsc", progress=False)
    assert list_subsets(shipped) == list_subsets(built) and len(list_subsets(built)) == 20
    files = sorted(p.relative_to(built) for p in built.rglob("*.parquet"))
    assert files == sorted(p.relative_to(shipped) for p in shipped.rglob("*.parquet"))
    assert all((built / f).read_bytes() == (shipped / f).read_bytes() for f in files)
    assert sum(pq.read_metadata(built / f).num_rows for f in files if f.name.startswith("corpus")) <= 100
    corpus = datasets.load_dataset(str(shipped), "part-en-corpus", split="corpus")
    assert len(corpus) == 5  # two fragments of one paragraph: one document


@pytest.fixture(scope="module")
def run_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir with three demo settings: IRSCQuery (en) and IRSCKeyword (zh, en-zh); the others absent."""
    src = tmp_path_factory.mktemp("irsc_src")
    (src / "keyword").mkdir()
    for name in ("zh.jsonl", "en-zh.jsonl"):
        (src / "keyword" / name).write_bytes((DEMO_UPSTREAM / "keyword" / name).read_bytes())
    lines = (DEMO_UPSTREAM / "query.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    en = [line for line in lines if json.loads(line)["query_language"] == json.loads(line)["content_language"] == "en"]
    (src / "query.jsonl").write_text("".join(en), encoding="utf-8")
    out = tmp_path_factory.mktemp("irsc_data")
    build_irsc(src, out / "irsc", progress=False)
    return out


@pytest.mark.slow  # the whole demo benchmark with the real model
def test_run_end_to_end(run_data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """``complexir run --benchmark IRSC`` with the real model: the tasks and settings present, each scored."""
    out = tmp_path / "results"
    code = complexir(["run", "--benchmark", "IRSC", "--data-dir", str(run_data_dir), "--output", str(out)])
    assert code == 0
    printed = capsys.readouterr().out
    expected = {"IRSCQuery": ["en"], "IRSCKeyword": ["en-zh", "zh"]}
    assert sorted(p.stem for p in (out / "results").rglob("IRSC*.json")) == sorted(expected)
    for name, subsets in expected.items():
        assert name in printed
        (result_file,) = (out / "results").rglob(f"{name}.json")
        entries = json.loads(result_file.read_text())["scores"]["test"]
        assert sorted(e["hf_subset"] for e in entries) == subsets
        for e in entries:
            assert e["main_score"] == e["recall_at_10"]
            assert 0.0 < e["ndcg_at_10"] <= 1.0 and 0.0 < e["map_at_10"] <= 1.0
