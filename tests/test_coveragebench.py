"""CoverageBench: build from hand-written files in the release's exact formats, check every row, and check
that the tasks' coverage scores equal ir_measures / pyndeval on the same nugget judgments."""

from __future__ import annotations

import json
import uuid
import zlib
from pathlib import Path

import pytest

from complexir.layout.card import read_front_matter
from complexir.layout.errors import UpstreamFormatError
from complexir.layout.reader import load, nugget_judgments, qrels_dict
from complexir.loading_scripts.coveragebench import build_coveragebench
from complexir.metrics import rank_run

REPO = Path(__file__).resolve().parents[1]
DEMO_UPSTREAM = REPO / "tests" / "fixtures" / "coveragebench" / "demo_upstream"

TOPICS = [
    {"topic_id": "t1", "query": "Why are honey bee colonies declining?",
     "nuggets": ["Pesticides  harm foragers", "Varroa mites spread viruses", "Forage is scarce"]},
    {"topic_id": "t2", "query": "What did Nintendo sell before video games?",
     "nuggets": ["Hanafuda playing cards"]},
    {"topic_id": "t3", "query": "How do tides work?", "nuggets": ["The Moon's gravity pulls the oceans"]},
]
# space-separated, split on the first two spaces only: the text keeps its own (double) spaces
NUGGETS_TSV = (
    "t1 1 Pesticides  harm foragers\n"
    "t1 2 Varroa mites spread viruses\n"
    "t1 3 Forage is scarce\n"
    "t2 1 Hanafuda playing cards\n"
    "t3 1 The Moon's gravity pulls the oceans\n"
)
# grades and zeros; d9 is judged but not in the corpus; t2 has no supporting document at all
QRELS = (
    "t1 1 d1 2\n"
    "t1 1 d2 0\n"
    "t1 2 d2 1\n"
    "t1 2 d3 2\n"
    "t1 3 d3 1\n"
    "t1\t3  d4\t0\n"
    "t1 3 d9 1\n"
    "t2 1 d5 0\n"
    "t2 1 d6 0\n"
    "t3 1 d7 1\n"
)
RUN = (
    "t1 Q0 d4 1 9.0 base\n"
    "t1 Q0 d8 2 8.0 base\n"
    "t1 Q0 dX 3 7.0 base\n"
    "t1 Q0 d1 4 7.0 base\n"
    "t2 Q0 d5 1 3.0 base\n"
    "t3 Q0 d7 1 5.0 base\n"
    "t3 Q0 d1 2 4.0 base\n"
)
DOCS = {f"d{i}": (f"Title {i}", f"Document {i} says something about bees and tides.") for i in range(1, 9)}


def write_upstream(root: Path) -> Path:
    (root / "topics").mkdir(parents=True)
    (root / "nuggets").mkdir()
    (root / "qrels").mkdir()
    (root / "runs" / "cast2020").mkdir(parents=True)
    (root / "topics" / "cast2020.jsonl").write_text("".join(json.dumps(t) + "\n" for t in TOPICS))
    (root / "nuggets" / "cast2020_nuggets.tsv").write_text(NUGGETS_TSV)
    (root / "qrels" / "cast2020.qrels").write_text(QRELS)
    (root / "runs" / "cast2020" / "base.run").write_text(RUN)
    return root


def write_trec_docs(path: Path) -> Path:
    path.write_text("".join(f"<DOC>\n<DOCNO>{d}</DOCNO>\n<TEXT>\n{t}\n</TEXT>\n</DOC>\n" for d, (_, t) in DOCS.items()))
    return path


def register_trec(path: Path) -> str:
    """A local TREC file as an ir_datasets dataset, through ir_datasets' own registry and formats."""
    import ir_datasets
    from ir_datasets.formats import TrecDocs
    from ir_datasets.util import LocalDownload

    name = f"complexir-test/{uuid.uuid4().hex[:8]}"
    ir_datasets.registry.register(name, ir_datasets.Dataset(TrecDocs(LocalDownload(path), parser="text")))
    return name


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("cb")
    upstream = write_upstream(root / "upstream")
    irds_id = register_trec(write_trec_docs(root / "docs.trec"))
    out = build_coveragebench(upstream, root / "data" / "coveragebench", docs={"cast2020": f"irds:{irds_id}"},
                              progress=False)
    return out, upstream, irds_id


def test_rows(built):
    out, _, _ = built
    queries = load(out, "cast2020", "queries").to_list()
    # t2 has no supporting document: dropped, and counted in the card
    assert queries == [{"id": "t1", "text": "Why are honey bee colonies declining?"},
                       {"id": "t3", "text": "How do tides work?"}]
    # doc-level grade = max over the topic's nuggets; d9 (not in the corpus) is kept: judged, never retrieved
    assert load(out, "cast2020", "qrels").to_list() == [
        {"query-id": "t1", "corpus-id": "d1", "score": 2},
        {"query-id": "t1", "corpus-id": "d2", "score": 1},
        {"query-id": "t1", "corpus-id": "d3", "score": 2},
        {"query-id": "t1", "corpus-id": "d4", "score": 0},
        {"query-id": "t1", "corpus-id": "d9", "score": 1},
        {"query-id": "t3", "corpus-id": "d7", "score": 1},
    ]
    assert load(out, "cast2020", "nuggets").to_list() == [
        {"query-id": "t1", "nugget-id": "1", "text": "Pesticides  harm foragers", "weight": 1.0,
         "support": [{"corpus-id": "d1", "score": 2}, {"corpus-id": "d2", "score": 0}]},
        {"query-id": "t1", "nugget-id": "2", "text": "Varroa mites spread viruses", "weight": 1.0,
         "support": [{"corpus-id": "d2", "score": 1}, {"corpus-id": "d3", "score": 2}]},
        {"query-id": "t1", "nugget-id": "3", "text": "Forage is scarce", "weight": 1.0,
         "support": [{"corpus-id": "d3", "score": 1}, {"corpus-id": "d4", "score": 0},
                     {"corpus-id": "d9", "score": 1}]},
        {"query-id": "t3", "nugget-id": "1", "text": "The Moon's gravity pulls the oceans", "weight": 1.0,
         "support": [{"corpus-id": "d7", "score": 1}]},
    ]
    # baseline order by score, tie (dX, d1 at 7.0) by doc id descending; dX is not in the corpus
    assert load(out, "cast2020", "top_ranked").to_list() == [
        {"query-id": "t1", "corpus-ids": ["d4", "d8", "d1"]},
        {"query-id": "t3", "corpus-ids": ["d7", "d1"]},
    ]
    corpus = load(out, "cast2020", "corpus").to_list()
    assert [r["id"] for r in corpus] == ["d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8"]  # pooled: judged + run
    assert corpus[0]["text"].strip() == DOCS["d1"][1]
    card = (out / "README.md").read_text()
    assert "| cast2020 | pooled | `irds:" in card
    assert "1 documents, 1 nugget judgments" in card  # d9's judgment kept, and counted
    assert read_front_matter(out / "README.md")["complexir"]["missing_document_judgments"] == {
        "cast2020": {"test": {"qrels": 1, "nugget_support": 1}}}
    assert "| cast2020 | 3 | 2 | 1 | 2.00 / 1 / 3 |" in card
    assert "apache-2.0" in card and "2603.20034" in card and "2506.20051" in card


def test_pooled_reads_the_docstore_by_id(tmp_path, monkeypatch):
    from ir_datasets.indices import PickleLz4FullStore

    asked: list[list[str]] = []
    original = PickleLz4FullStore.get_many

    def spy(self, doc_ids, field=None):
        asked.append(list(doc_ids))
        return original(self, doc_ids, field)

    monkeypatch.setattr(PickleLz4FullStore, "get_many", spy)
    upstream = write_upstream(tmp_path / "up")
    irds_id = register_trec(write_trec_docs(tmp_path / "docs.trec"))
    build_coveragebench(upstream, tmp_path / "out", docs={"cast2020": irds_id}, progress=False)
    assert asked == [["d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8", "d9", "dX"]]


def test_full_corpus_and_release_file_names(tmp_path):
    upstream = write_upstream(tmp_path / "up")
    # the release names some files without the year (qrels/ragtime.qrels for ragtime_2025)
    (upstream / "topics" / "cast2020.jsonl").rename(upstream / "topics" / "ragtime_2025.jsonl")
    (upstream / "nuggets" / "cast2020_nuggets.tsv").rename(upstream / "nuggets" / "ragtime_nuggets.tsv")
    (upstream / "qrels" / "cast2020.qrels").rename(upstream / "qrels" / "ragtime.qrels")
    (upstream / "runs" / "cast2020").rename(upstream / "runs" / "ragtime")
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps({"id": d, "title": t, "contents": x}) + "\n" for d, (t, x) in DOCS.items())
                    + json.dumps({"id": "extra", "contents": "Not judged, not retrieved."}) + "\n")
    out = build_coveragebench(upstream, tmp_path / "out", corpus="full", docs={"ragtime_2025": str(docs)},
                              progress=False)
    corpus = load(out, "ragtime_2025", "corpus").to_list()
    assert [r["id"] for r in corpus] == [*DOCS, "extra"]
    assert corpus[0] == {"id": "d1", "title": "Title 1", "text": DOCS["d1"][1]}
    assert len(load(out, "ragtime_2025", "qrels")) == 6  # d9, judged but not in the collection, included
    assert "| ragtime_2025 | full |" in (out / "README.md").read_text()


@pytest.mark.parametrize(("name", "content", "line", "message"), [
    ("nuggets/cast2020_nuggets.tsv", "t1 1 ok\nt1 2\n", 2, "expected '<topic_id> <nugget_num> <text>'"),
    ("nuggets/cast2020_nuggets.tsv", "t1 1 ok\nt1 x text\n", 2, "not a non-negative integer"),
    ("nuggets/cast2020_nuggets.tsv", "t1 1 ok\nzz 1 text\n", 2, "not in the topics file"),
    ("qrels/cast2020.qrels", "t1 1 d1 1\nt1 1 d2\n", 2, "expected 4 whitespace-separated fields"),
    ("qrels/cast2020.qrels", "t1 1 d1 1\nt1 1 d2 yes\n", 2, "not an integer"),
    ("qrels/cast2020.qrels", "t1 1 d1 1\n\nt1 7 d2 1\n", 3, "nugget '7' is not in the nuggets file"),
    ("runs/cast2020/base.run", "t1 Q0 d1 1 2.0 base\nt1 Q0 d2 2 nan base\n", 2, "not finite"),
    ("topics/cast2020.jsonl", json.dumps(TOPICS[0]) + "\n{\"topic_id\": \"t9\"}\n", 2, "'query'"),
])
def test_malformed_lines_name_file_and_line(tmp_path, name, content, line, message):
    upstream = write_upstream(tmp_path / "up")
    (upstream / name).write_text(content)
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps({"id": d, "text": x}) + "\n" for d, (_, x) in DOCS.items()))
    with pytest.raises(UpstreamFormatError) as info:
        build_coveragebench(upstream, tmp_path / "out", docs={"cast2020": str(docs)}, progress=False)
    assert info.value.line == line and Path(info.value.path).name == Path(name).name
    assert message in str(info.value)
    assert not (tmp_path / "out").exists()  # nothing half-written


def _jsonl_docs(tmp_path: Path) -> Path:
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps({"id": d, "text": x}) + "\n" for d, (_, x) in DOCS.items()))
    return docs


@pytest.mark.parametrize("declared", [True, False])
def test_sharded_topics_config_reads_every_file(tmp_path, declared):
    """A topics config in several files (README data_files glob, or test-* shards) loses no topic."""
    upstream = write_upstream(tmp_path / "up")
    (upstream / "topics" / "cast2020.jsonl").unlink()
    shards = upstream / ("data" if declared else "") / "cast2020"
    shards.mkdir(parents=True)
    (shards / "test-00000-of-00002.jsonl").write_text("".join(json.dumps(t) + "\n" for t in TOPICS[:2]))
    (shards / "test-00001-of-00002.jsonl").write_text(json.dumps(TOPICS[2]) + "\n")
    if declared:
        (upstream / "README.md").write_text("---\nconfigs:\n  - config_name: cast2020\n    data_files:\n"
                                            "      - split: test\n        path: data/cast2020/test-*.jsonl\n---\n")
    out = build_coveragebench(upstream, tmp_path / "out", docs={"cast2020": str(_jsonl_docs(tmp_path))},
                              progress=False)
    # t3 is in the second shard; t2 (no supporting document) is dropped by the writer as always
    assert [q["id"] for q in load(out, "cast2020", "queries").to_list()] == ["t1", "t3"]
    assert "| cast2020 | 3 | 2 | 1 |" in (out / "README.md").read_text()

    # a topic in two shards is an error at its second occurrence
    (shards / "test-00001-of-00002.jsonl").write_text(json.dumps(TOPICS[2]) + "\n" + json.dumps(TOPICS[0]) + "\n")
    with pytest.raises(UpstreamFormatError, match="duplicate topic_id 't1'") as info:
        build_coveragebench(upstream, tmp_path / "out2", docs={"cast2020": str(_jsonl_docs(tmp_path))},
                            progress=False)
    assert Path(info.value.path).name == "test-00001-of-00002.jsonl" and info.value.line == 2
    assert "test-00000-of-00002.jsonl, line 1" in str(info.value)


def test_cli_subset_named_twice_is_built_once(tmp_path, monkeypatch):
    from complexir.cli.main import main
    from complexir.loading_scripts import coveragebench

    seen: list[bool] = []

    def spy(*args, **kwargs):
        seen.append(kwargs["progress"])
        return build_coveragebench(*args, **kwargs)

    monkeypatch.setattr(coveragebench, "build_coveragebench", spy)
    upstream = write_upstream(tmp_path / "up")
    out = tmp_path / "out"
    assert main(["build", "coveragebench", "--source", str(upstream), "--out", str(out), "--no-progress",
                 "--subset", "cast2020", "cast2020", "--docs", f"cast2020={_jsonl_docs(tmp_path)}"]) == 0
    assert len(load(out, "cast2020", "queries")) == 2
    assert seen == [False]  # --no-progress, as every loading script spells it, reaches the writer


def test_neuclir_languages(tmp_path):
    """NeuCLIR 2024: English report requests over Chinese, Persian and Russian news, in the card and the task."""
    from complexir.layout.card import read_front_matter
    from complexir.tasks.coveragebench import CoverageBenchCAsT2020, CoverageBenchNeuCLIR2024

    upstream = write_upstream(tmp_path / "up")
    for old, new in (("topics/cast2020.jsonl", "topics/neuclir_2024.jsonl"),
                     ("nuggets/cast2020_nuggets.tsv", "nuggets/neuclir_nuggets.tsv"),
                     ("qrels/cast2020.qrels", "qrels/neuclir.qrels"), ("runs/cast2020", "runs/neuclir")):
        (upstream / old).rename(upstream / new)
    # the paper's documents by default: the English translation (the card says so)
    out = build_coveragebench(upstream, tmp_path / "out", docs={"neuclir_2024": str(_jsonl_docs(tmp_path))},
                              progress=False)
    assert read_front_matter(out / "README.md")["language"] == ["en"]
    assert "| neuclir_2024 | pooled | `jsonl:docs.jsonl" in (out / "README.md").read_text()
    assert "| translated |" in (out / "README.md").read_text()
    out = build_coveragebench(upstream, tmp_path / "native", docs={"neuclir_2024": str(_jsonl_docs(tmp_path))},
                              docs_language={"neuclir_2024": "native"}, progress=False)
    assert read_front_matter(out / "README.md")["language"] == ["en", "zh", "fa", "ru"]
    assert "| native |" in (out / "README.md").read_text()
    assert CoverageBenchNeuCLIR2024().metadata.eval_langs == ["eng-Latn", "zho-Hans", "fas-Arab", "rus-Cyrl"]
    assert CoverageBenchCAsT2020().metadata.eval_langs == ["eng-Latn"]


def test_trec_errors_carry_file_and_line(tmp_path):
    """The house TREC reader's errors are UpstreamFormatErrors with path and line, in evaluate's own wording."""
    from complexir.runs.trec_io import TrecFormatError, read_nugget_qrels

    path = tmp_path / "q.qrels"
    path.write_text("t1 1 d1 1\nt1 2 d1 1\n")
    with pytest.raises(TrecFormatError) as info:
        read_nugget_qrels(path, known={"t1": {"1": "a nugget"}})
    error = info.value
    assert isinstance(error, UpstreamFormatError) and isinstance(error, ValueError)
    assert (Path(error.path), error.line) == (path, 2)
    assert str(error) == f"{path}:2: topic 't1', nugget '2' is not in the nuggets file"
    assert read_nugget_qrels(path) == {"t1": {"1": {"d1": 1}, "2": {"d1": 1}}}  # without ``known``: no check


# -- the task's numbers against the reference tools ---------------------------------------------------
def _fixed_run(task, subset: str) -> dict[str, dict[str, float]]:
    """Every document of the corpus for every topic, with coarse scores so that many tie."""
    corpus = [r["id"] for r in load(Path(task.data_dir) / "coveragebench", subset, "corpus")]
    qids = task.dataset["default"]["test"]["relevant_docs"]
    run = {q: {d: float(zlib.crc32(f"{q} {d}".encode()) % 4) for d in corpus} for q in qids}
    assert all(len(set(scores.values())) < len(scores) for scores in run.values())  # ties to break
    return run


@pytest.mark.parametrize("task_name", ["CoverageBenchCAsT2020", "CoverageBenchFairRanking2022",
                                       "CoverageBenchNeuCLIR2024", "CoverageBenchRAG2024", "CoverageBenchRAGTIME2025",
                                       "CoverageBenchCRUXMultiNews", "CoverageBenchCRUXDUC04"])
def test_task_scores_equal_ir_measures_and_pyndeval(coveragebench_demo, task_name):
    ir_measures = pytest.importorskip("ir_measures")
    pyndeval = pytest.importorskip("pyndeval")
    from complexir.tasks import TASKS_BY_NAME
    from complexir.tasks.layout_task import QUERY_MEAN_PREFIXES
    from complexir.upstream.coveragebench import find_qrels_file

    task = TASKS_BY_NAME[task_name]()
    task.data_dir = coveragebench_demo
    task.load_data()
    subset = task.layout_subsets["default"]
    qrels = task.dataset["default"]["test"]["relevant_docs"]
    run = _fixed_run(task, subset)
    ours = task.coverage_per_query(qrels, run, "test", "default")

    # the same nugget judgments, straight from the upstream file: nugget id in the iteration column; CRUX's
    # graded labels support a nugget from 3 (the card says so), which the oracles see as binary labels
    threshold = task.support_threshold("default")
    assert threshold == (3 if subset.startswith("crux_") else 1)

    def upstream_qrels():
        # the release's own file name (RAGTIME's is qrels/ragtime.qrels)
        for q in ir_measures.read_trec_qrels(str(find_qrels_file(DEMO_UPSTREAM, subset))):
            yield q._replace(relevance=int(q.relevance >= threshold)) if threshold > 1 else q

    upstream = [q for q in upstream_qrels() if q.query_id in qrels]
    # break ties once (trec_eval's rule) and hand the tools strictly decreasing scores
    ranked = rank_run(run)
    scored = [ir_measures.ScoredDoc(q, d, float(len(docs) - i)) for q, docs in ranked.items()
              for i, d in enumerate(docs)]
    for name, key in (("alpha_nDCG@20", "alpha_ndcg_at_20"), ("StRecall@20", "strecall_at_20")):
        ref = {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.parse_measure(name)], upstream, scored)}
        for q in qrels:  # one call per measure (ir_measures zeroes mixed-parameter calls)
            assert ours[key][q] == pytest.approx(ref.get(q, 0.0), abs=1e-12), (name, q)

    # pyndeval: nugget ids renumbered per topic (its id table is shared across topics)
    renum: dict[tuple[str, str], str] = {}
    for q in upstream:
        renum.setdefault((q.query_id, q.iteration), str(sum(1 for k in renum if k[0] == q.query_id) + 1))
    nd_qrels = [pyndeval.SubtopicQrel(q.query_id, renum[(q.query_id, q.iteration)], q.doc_id, q.relevance)
                for q in upstream]
    nd_run = [pyndeval.ScoredDoc(s.query_id, s.doc_id, s.score) for s in scored]
    ref = pyndeval.ndeval(nd_qrels, nd_run, measures=["alpha-nDCG@20", "strec@20"], alpha=0.5)
    for q in qrels:
        assert ours["alpha_ndcg_at_20"][q] == pytest.approx(ref[q]["alpha-nDCG@20"], abs=1e-12), q
        assert ours["strecall_at_20"][q] == pytest.approx(ref[q]["strec@20"], abs=1e-12), q

    # The means: ndeval averages over every judged topic, a topic whose nuggets no document supports
    # included (it scores 0). The layout cannot keep such a topic; its card lists it and the task counts it in.
    judged = {q.query_id for q in ir_measures.read_trec_qrels(str(find_qrels_file(DEMO_UPSTREAM, subset)))}
    zero = task.zero_score_queries("default", "test")
    assert set(zero) == judged - set(qrels)
    if subset == "cast2020":
        assert zero == ["103_1"]  # the demo's topic whose nuggets have no support
    everything = list(upstream_qrels())
    full_run = scored + [ir_measures.ScoredDoc(q, d, float(i)) for q in zero
                         for i, d in enumerate(sorted(run[next(iter(run))]))]
    means = {key: sum(ours[key].values()) / len(ours[key]) for key in ("alpha_ndcg_at_20", "strecall_at_20")}
    task.per_query_scores = {"default": {"test": {key: dict(ours[key]) for key in means}}}
    task.count_zero_score_queries(means, "default", "test", len(qrels), rescale=QUERY_MEAN_PREFIXES)
    for name, key in (("alpha_nDCG@20", "alpha_ndcg_at_20"), ("StRecall@20", "strecall_at_20")):
        per_topic = {m.query_id: m.value for m in
                     ir_measures.iter_calc([ir_measures.parse_measure(name)], everything, full_run)}
        assert set(per_topic) == judged
        assert means[key] == pytest.approx(sum(per_topic.values()) / len(judged), abs=1e-12), name
        assert task.per_query_scores["default"]["test"][key] == pytest.approx(per_topic, abs=1e-12), name
    assert means["judged_queries"] == len(judged)

    # and the judgments the task reads are the build's nuggets config, unchanged
    assert nugget_judgments(load(coveragebench_demo / "coveragebench", subset, "nuggets")) == {
        q: task._coverage_judgments[("default", "test")][q] for q in qrels}
    assert qrels_dict(load(coveragebench_demo / "coveragebench", subset, "qrels")) == qrels


def test_complexir_run_prints_coverage_columns(coveragebench_demo, tmp_path, capsys):
    from complexir.cli.main import main

    code = main(["run", "--benchmark", "CoverageBench", "--data-dir", str(coveragebench_demo),
                 "--output", str(tmp_path)])
    assert code == 0
    out = capsys.readouterr().out
    assert "α-nDCG@20" in out and "StRecall@20" in out
    for name in ("CoverageBenchCAsT2020", "CoverageBenchCRUXDUC04", "CoverageBenchCAsT2020Rerank",
                 "CoverageBenchCRUXDUC04Rerank"):
        assert name in out
    results = list(tmp_path.rglob("CoverageBenchCAsT2020.json"))
    scores = json.loads(results[0].read_text())["scores"]["test"][0]
    assert scores["main_score"] == scores["alpha_ndcg_at_20"]
    assert 0.0 < scores["alpha_ndcg_at_20"] <= 1.0 + 1e-9 and 0.0 < scores["strecall_at_20"] <= 1.0
