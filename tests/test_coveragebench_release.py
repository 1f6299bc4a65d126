"""CoverageBench on its collections as they are distributed, and the release's baseline runs scored as systems.

Fixtures in the evidenced layouts (docs/benchmarks/coveragebench.md): RAG 2024's segmented MS MARCO v2.1 shards,
the release's short file names (``nuggets/rag_nuggets.tsv``, ``qrels/rag.qrels``), topics as one JSON array,
RAGTIME1's translated and native files sharing ids, graded CRUX labels; ``--release-runs`` against ir_measures and
pyndeval on the runs and nugget qrels of the demo release.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from complexir.layout.card import read_front_matter
from complexir.layout.errors import UpstreamFormatError
from complexir.layout.reader import load
from complexir.loading_scripts import coveragebench as cb
from complexir.loading_scripts.coveragebench import build_coveragebench

REPO = Path(__file__).resolve().parents[1]
DEMO_UPSTREAM = REPO / "tests" / "fixtures" / "coveragebench" / "demo_upstream"

SEG = "msmarco_v2.1_doc_{shard:02d}_{doc}#{seg}_{off}"
TOPICS = [{"topic_id": "2024-1", "query": "how do tides work", "nuggets": ["moon gravity", "two bulges"]},
          {"topic_id": "2024-2", "query": "what is varroa", "nuggets": ["a mite"]}]
D1, D2, D3 = SEG.format(shard=0, doc=11, seg=0, off=5), SEG.format(shard=1, doc=7, seg=2, off=90), \
    SEG.format(shard=1, doc=8, seg=0, off=3)


def write_release(root: Path, name: str = "rag", topics_as_array: bool = True) -> Path:
    """A release for one collection under its short name, topics as one JSON array (what the Hub viewer chokes on)."""
    (root / "topics").mkdir(parents=True)
    (root / "nuggets").mkdir()
    (root / "qrels").mkdir()
    (root / "runs").mkdir()
    if topics_as_array:
        (root / "topics" / f"{name}.json").write_text(json.dumps(TOPICS, indent=1))
    else:
        (root / "topics" / f"{name}.jsonl").write_text("".join(json.dumps(t) + "\n" for t in TOPICS))
    (root / "nuggets" / f"{name}_nuggets.tsv").write_text(
        "2024-1 1 moon gravity\n2024-1 2 two bulges\n2024-2 1 a mite\n")
    (root / "qrels" / f"{name}.qrels").write_text(f"2024-1 1 {D1} 1\n2024-1 2 {D2} 1\n2024-1 2 {D3} 0\n"
                                                  f"2024-2 1 {D3} 1\n")
    (root / "runs" / f"{name}.bm25.run").write_text(f"2024-1 Q0 {D2} 1 3.0 bm25\n2024-1 Q0 {D1} 2 2.0 bm25\n"
                                                    f"2024-2 Q0 {D3} 1 1.0 bm25\n")
    return root


def segment(docid: str, title: str, text: str) -> dict:
    return {"docid": docid, "url": "https://example.org/" + docid, "title": title, "headings": "H1 H2",
            "segment": text, "start_char": 0, "end_char": len(text)}


def write_segmented(folder: Path) -> Path:
    """Three shards as the corpus unpacks; shard 02 holds none of the judged ids and is not JSON at all, so a
    build that reads it fails."""
    folder.mkdir(parents=True)
    shards = {0: [segment(D1, "Tides", "The Moon pulls the oceans.")],
              1: [segment(D2, "Tides", "There are two tidal bulges."), segment(D3, "Varroa", "A parasitic mite.")]}
    for shard, rows in shards.items():
        with gzip.open(folder / f"msmarco_v2.1_doc_segmented_{shard:02d}.json.gz", "wt") as handle:
            handle.writelines(json.dumps(r) + "\n" for r in rows)
    with gzip.open(folder / "msmarco_v2.1_doc_segmented_02.json.gz", "wt") as handle:
        handle.write("not json\n")
    return folder


def test_rag_2024_from_the_unpacked_segmented_corpus(tmp_path):
    release = write_release(tmp_path / "release")
    corpus = write_segmented(tmp_path / "msmarco_v2.1_doc_segmented")
    out = build_coveragebench(release, tmp_path / "out", subsets=["rag_2024"], docs={"rag_2024": str(corpus)},
                              progress=False)
    rows = load(out, "rag_2024", "corpus").to_list()
    # ids exactly as distributed; title = the document's title, text = the segment
    assert rows == [{"id": D1, "title": "Tides", "text": "The Moon pulls the oceans."},
                    {"id": D2, "title": "Tides", "text": "There are two tidal bulges."},
                    {"id": D3, "title": "Varroa", "text": "A parasitic mite."}]
    assert [q["id"] for q in load(out, "rag_2024", "queries").to_list()] == ["2024-1", "2024-2"]  # JSON array
    runs = load(out, "rag_2024", "runs").to_list()
    assert runs == [{"run": "rag.bm25", "query-id": "2024-1", "corpus-id": D2, "rank": 1, "score": 3.0},
                    {"run": "rag.bm25", "query-id": "2024-1", "corpus-id": D1, "rank": 2, "score": 2.0},
                    {"run": "rag.bm25", "query-id": "2024-2", "corpus-id": D3, "rank": 1, "score": 1.0}]
    card = (out / "README.md").read_text()
    assert "| rag_2024 | pooled | `jsonl:msmarco_v2.1_doc_segmented/ (3 shards" in card


def test_a_folder_of_shards_is_read_in_name_order_and_a_bad_shard_is_named(tmp_path):
    release = write_release(tmp_path / "release", name="cast", topics_as_array=False)
    shards = tmp_path / "shards"
    shards.mkdir()
    (shards / "b.jsonl").write_text(json.dumps({"id": D3, "text": "third"}) + "\n")
    (shards / "a.jsonl").write_text(json.dumps({"id": D1, "text": "first"}) + "\n" + json.dumps({"id": D2, "text": "x"})
                                    + "\n")
    out = build_coveragebench(release, tmp_path / "out", corpus="full", docs={"cast2020": str(shards)},
                              progress=False)
    assert [r["id"] for r in load(out, "cast2020", "corpus").to_list()] == [D1, D2, D3]
    (shards / "c.jsonl.gz").write_bytes(gzip.compress(b'{"id": "z", "text": "ok"}\n{"id": 3.5}\n'))
    with pytest.raises(UpstreamFormatError) as info:
        build_coveragebench(release, tmp_path / "out2", corpus="full", docs={"cast2020": str(shards)},
                            progress=False)
    assert Path(info.value.path).name == "c.jsonl.gz" and info.value.line == 2
    assert not (tmp_path / "out2").exists()


def test_missing_rag_corpus_stops_before_any_collection_is_read(tmp_path, monkeypatch, capsys):
    from complexir.cli.main import main
    from complexir.upstream import corpus

    def no_reading(*args, **kwargs):
        raise AssertionError("a collection was read")

    monkeypatch.setattr(corpus, "_placed_documents", no_reading)
    monkeypatch.setattr(corpus, "_irds_dataset", no_reading)
    write_release(tmp_path / "release")
    cast = write_release(tmp_path / "release2", name="cast")
    for path in (cast / "topics" / "cast.json", cast / "nuggets" / "cast_nuggets.tsv", cast / "qrels" / "cast.qrels"):
        path.rename(tmp_path / "release" / path.relative_to(cast))
    before = sorted(p.name for p in tmp_path.iterdir())
    code = main(["build", "coveragebench", "--source", str(tmp_path / "release"), "--out", str(tmp_path / "out"),
                 "--subset", "cast2020", "rag_2024", "--docs", f"cast2020={tmp_path / 'nowhere.jsonl'}",
                 "--no-progress"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    # the local file is checked first; with it given, the missing RAG corpus is the one line
    assert "nowhere.jsonl" in err
    (tmp_path / "cast.jsonl").write_text(json.dumps({"id": D1, "text": "x"}) + "\n")
    code = main(["build", "coveragebench", "--source", str(tmp_path / "release"), "--out", str(tmp_path / "out"),
                 "--subset", "cast2020", "rag_2024", "--docs", f"cast2020={tmp_path / 'cast.jsonl'}",
                 "--no-progress"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    for words in ("rag_2024", "msmarco_v2.1_doc_segmented", "trec-rag.github.io", "--docs rag_2024=", "--subset"):
        assert words in err, words
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*before, "cast.jsonl"])  # nothing left behind


def test_ragtime_reads_translated_files_by_default_and_native_on_request(tmp_path, monkeypatch):
    """RAGTIME1 holds native and translated text under the same ids: single files are read, never both."""
    hub = tmp_path / "ragtime1"  # a local copy of the Hub repo's layout, read as load_dataset(data_files=) reads it
    hub.mkdir()
    (hub / "eng-docs.jsonl").write_text(json.dumps({"id": D1, "title": "", "text": "English original"}) + "\n")
    (hub / "zho-docs.jsonl").write_text(json.dumps({"id": D2, "title": "", "text": "中文原文"}) + "\n"
                                        + json.dumps({"id": D3, "title": "", "text": "未翻译"}) + "\n")
    (hub / "zho-trans.jsonl").write_text(json.dumps({"id": D2, "title": "", "text": "Chinese, translated"}) + "\n")
    files = "eng-docs.jsonl,{}".format
    monkeypatch.setitem(cb.DEFAULT_DOCS, "ragtime_2025", f"hf:{hub}?files={files('zho-trans.jsonl')}")
    monkeypatch.setitem(cb.NATIVE_DOCS, "ragtime_2025", f"hf:{hub}?files={files('zho-docs.jsonl')}")
    release = write_release(tmp_path / "release", name="ragtime")
    out = build_coveragebench(release, tmp_path / "out", subsets=["ragtime_2025"], progress=False)
    texts = {r["id"]: r["text"] for r in load(out, "ragtime_2025", "corpus").to_list()}
    assert texts == {D1: "English original", D2: "Chinese, translated"}  # D3 has no translation: judged, missing
    assert read_front_matter(out / "README.md")["language"] == ["en"]
    assert "| translated |" in (out / "README.md").read_text()
    out = build_coveragebench(release, tmp_path / "native", subsets=["ragtime_2025"], progress=False,
                              docs_language={"*": "native"})
    texts = {r["id"]: r["text"] for r in load(out, "ragtime_2025", "corpus").to_list()}
    assert texts == {D1: "English original", D2: "中文原文", D3: "未翻译"}
    assert read_front_matter(out / "README.md")["language"] == ["en", "ar", "zh", "ru"]
    with pytest.raises(ValueError, match="only neuclir_2024, ragtime_2025 come both"):
        build_coveragebench(release, tmp_path / "x", subsets=["ragtime_2025"], progress=False,
                            docs_language={"cast2020": "native"})


def test_a_listed_subset_whose_files_are_missing_fails_naming_the_names_tried(tmp_path):
    release = write_release(tmp_path / "release", name="cast")
    (release / "README.md").write_text(
        "---\ndataset_info:\n- config_name: cast2020\n- config_name: neuclir_2024\n---\n")
    docs = tmp_path / "docs.jsonl"
    docs.write_text(json.dumps({"id": D1, "text": "x"}) + "\n")
    given = {"cast2020": str(docs), "neuclir_2024": str(docs)}
    with pytest.raises(FileNotFoundError) as info:
        build_coveragebench(release, tmp_path / "out", docs=given, progress=False)
    message = str(info.value)
    assert "subset 'neuclir_2024' has no topics file (tried topics/neuclir_2024{.jsonl,.json,.parquet}" in message
    assert "topics/neuclir{.jsonl,.json,.parquet}" in message
    assert not (tmp_path / "out").exists()
    (release / "topics" / "neuclir.jsonl").write_text(json.dumps(TOPICS[0]) + "\n")
    with pytest.raises(FileNotFoundError, match=r"'neuclir_2024' has no nuggets file \(tried "
                                                r"nuggets/neuclir_2024_nuggets.tsv, nuggets/neuclir_nuggets.tsv\)"):
        build_coveragebench(release, tmp_path / "out", docs=given, progress=False)


def test_a_document_twice_with_different_text_names_the_file_both_lines_and_the_id(tmp_path, caplog):
    release = write_release(tmp_path / "release", name="cast", topics_as_array=False)
    docs = tmp_path / "docs.jsonl"
    lines = [{"id": D1, "text": "one"}, {"id": D2, "text": "two"}, {"id": D3, "text": "three"},
             {"id": D1, "text": "one"}]
    docs.write_text("".join(json.dumps(r) + "\n" for r in lines))
    build_coveragebench(release, tmp_path / "out", docs={"cast2020": str(docs)}, progress=False)  # same text: kept
    assert f"document {D1!r} appears again with the same text" in caplog.text
    lines.append({"id": D2, "text": "TWO"})
    docs.write_text("".join(json.dumps(r) + "\n" for r in lines))
    with pytest.raises(UpstreamFormatError) as info:
        build_coveragebench(release, tmp_path / "out2", docs={"cast2020": str(docs)}, progress=False)
    assert f"{docs}:5" in str(info.value) and f"first at {docs}:2" in str(info.value) and repr(D2) in str(info.value)
    assert not (tmp_path / "out2").exists()


def test_a_trec_source_without_doc_records_says_so(tmp_path):
    release = write_release(tmp_path / "release", name="cast", topics_as_array=False)
    docs = tmp_path / "docs.jsonl"
    docs.write_text(json.dumps({"id": D1, "text": "one"}) + "\n")
    with pytest.raises(UpstreamFormatError, match=r"docs\.jsonl: holds no <DOC> records.*jsonl:<file>"):
        build_coveragebench(release, tmp_path / "out", docs={"cast2020": f"trec:{docs}"}, progress=False)


def test_pinned_documents_keep_the_file_selection():
    source = cb.DEFAULT_DOCS["ragtime_2025"]
    docs = cb.pinned_documents({source: "c0ffee"})["docs"]
    assert docs == {"ragtime_2025": f"hf:trec-ragtime/ragtime1@c0ffee?{source.partition('?')[2]}"}
    from complexir.upstream.corpus import parse_corpus_source

    parsed = parse_corpus_source(docs["ragtime_2025"])
    assert (parsed.location, parsed.revision, parsed.files[1]) == ("trec-ragtime/ragtime1", "c0ffee", "arb-trans.jsonl")


# -- the released runs as systems ----------------------------------------------------------------------------------
def test_graded_crux_labels_support_from_three(coveragebench_demo):
    card = read_front_matter(coveragebench_demo / "coveragebench" / "README.md")
    assert card["complexir"]["support_threshold"] == {"crux_duc04": 3, "crux_multinews": 3}  # labels run 0-3
    readme = (coveragebench_demo / "coveragebench" / "README.md").read_text()
    assert "at grade >= 3 (CRUX's answerability threshold)" in readme


def test_release_runs_equal_ir_measures_and_pyndeval(coveragebench_demo, tmp_path, capsys):
    ir_measures = pytest.importorskip("ir_measures")
    pyndeval = pytest.importorskip("pyndeval")
    from complexir.cli.main import main

    assert main(["run", "--release-runs", "--benchmark", "CoverageBench", "--data-dir", str(coveragebench_demo),
                 "--output", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "release/bm25" in out and "α-nDCG@20" in out and "StRecall@20" in out and "cast2020" in out
    from complexir.runs.folder import RunsFolder
    from complexir.tasks import TASKS_BY_NAME
    from complexir.upstream.coveragebench import find_qrels_file

    retrieval = [f"CoverageBench{title}" for title in ("CAsT2020", "FairRanking2022", "NeuCLIR2024", "RAG2024",
                                                       "RAGTIME2025", "CRUXMultiNews", "CRUXDUC04")]
    folder = RunsFolder(tmp_path / "release-runs" / "bm25")  # each run also left as a runs folder --runs scores
    assert folder.system == "release/bm25" and sorted(folder.tasks()) == sorted(retrieval)

    for task_name in retrieval:  # every demo collection, its graded CRUX labels from 3
        subset = TASKS_BY_NAME[task_name].layout_subsets["default"]
        threshold = 3 if subset.startswith("crux_") else 1
        [result] = tmp_path.rglob(f"results/release__bm25/*/{task_name}.json")
        scores = json.loads(result.read_text())["scores"]["test"][0]
        [per_query] = tmp_path.rglob(f"per_query/release__bm25/*/{task_name}.json")
        per_topic = json.loads(per_query.read_text())["scores"]["default"]["test"]
        # the oracles on the release's own files: the run, and the nugget qrels (labels from the threshold up)
        nugget_qrels = [q._replace(relevance=int(q.relevance >= threshold)) for q in
                        ir_measures.read_trec_qrels(str(find_qrels_file(DEMO_UPSTREAM, subset)))]
        run = list(ir_measures.read_trec_run(str(DEMO_UPSTREAM / "runs" / subset / "bm25.run")))
        topics = {q.query_id for q in nugget_qrels}
        for measure, key in (("alpha_nDCG@20", "alpha_ndcg_at_20"), ("StRecall@20", "strecall_at_20")):
            ref = {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.parse_measure(measure)],
                                                                        nugget_qrels, run)}
            for topic in topics:
                assert per_topic[key][topic] == pytest.approx(ref.get(topic, 0.0), abs=1e-9), (subset, key, topic)
            assert scores[key] == pytest.approx(sum(ref.get(t, 0.0) for t in topics) / len(topics), abs=1e-9)
        # pyndeval (ndeval itself), nugget ids numbered per topic
        number: dict[tuple[str, str], str] = {}
        for q in nugget_qrels:
            number.setdefault((q.query_id, q.iteration), str(sum(1 for k in number if k[0] == q.query_id) + 1))
        nd = pyndeval.ndeval([pyndeval.SubtopicQrel(q.query_id, number[(q.query_id, q.iteration)], q.doc_id,
                                                    q.relevance) for q in nugget_qrels],
                             [pyndeval.ScoredDoc(r.query_id, r.doc_id, r.score) for r in run],
                             measures=["alpha-nDCG@20", "strec@20"], alpha=0.5)
        for topic in topics:
            if topic in nd:
                assert per_topic["alpha_ndcg_at_20"][topic] == pytest.approx(nd[topic]["alpha-nDCG@20"], abs=1e-9)
                assert per_topic["strecall_at_20"][topic] == pytest.approx(nd[topic]["strec@20"], abs=1e-9)
        # nDCG@20 on the document-level qrels the build derived (max grade over a topic's nuggets)
        doc_qrels = [ir_measures.Qrel(r["query-id"], r["corpus-id"], r["score"])
                     for r in load(coveragebench_demo / "coveragebench", subset, "qrels").to_list()]
        ref = {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.nDCG @ 20], doc_qrels, run)}
        for topic in {q.query_id for q in doc_qrels}:
            assert per_topic["ndcg_at_20"][topic] == pytest.approx(ref.get(topic, 0.0), abs=1e-9), (subset, topic)
        meta = json.loads(result.with_name("model_meta.json").read_text())
        assert meta["name"] == "release/bm25" and meta["revision"].startswith("sha256:")  # the release's revision


def test_system_of_reads_the_paper_s_run_names():
    from complexir.api.release_runs import published, system_of

    assert system_of("bm25") == ("bm25", None)
    assert system_of("Qwen3-8B") == ("qwen3-8b", None)
    assert system_of("qwen3-8b.rank1-7b") == ("qwen3-8b", "rank1")
    assert system_of("bm25_qwen3-reranker-8b") == ("bm25", "qwen3-reranker")
    assert system_of("splade") == (None, None)
    assert published("crux_multinews", "qwen3-8b+qwen3-reranker-8b", "ndcg_at_20") == 0.620


# -- nothing silent (issue 32) ----------------------------------------------------------------------------------------
def _docs(tmp_path: Path) -> Path:
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps({"id": d, "text": f"text of {d}"}) + "\n" for d in (D1, D2, D3)))
    return docs


def test_a_subset_with_some_of_its_files_fails_naming_the_missing_one(tmp_path, capsys):
    from complexir.cli.main import main

    release = write_release(tmp_path / "release", name="cast")  # no card: the subsets are found by their files
    (release / "topics" / "fair.jsonl").write_text(json.dumps(TOPICS[0]) + "\n")
    (release / "qrels" / "fair.qrels").write_text(f"2024-1 1 {D1} 1\n")  # its nuggets file is missing
    docs = _docs(tmp_path)
    assert main(["build", "coveragebench", "--source", str(release), "--out", str(tmp_path / "out"), "--no-progress",
                 "--docs", f"cast2020={docs}", f"fair_ranking_2022={docs}"]) == 2
    err = capsys.readouterr().err
    assert "subset 'fair_ranking_2022' has no nuggets file (tried nuggets/fair_ranking_2022_nuggets.tsv" in err
    assert not (tmp_path / "out").exists()


def test_a_support_threshold_that_leaves_no_supported_nugget_stops_the_build(tmp_path, capsys):
    from complexir.cli.main import main

    release = write_release(tmp_path / "release", name="duc04")
    (release / "qrels" / "duc04.qrels").write_text(f"2024-1 1 {D1} 2\n2024-1 2 {D2} 1\n2024-1 2 {D3} 0\n"
                                                   f"2024-2 1 {D3} 2\n")  # graded 0-2, not CRUX's 0-5
    docs = _docs(tmp_path)
    args = ["build", "coveragebench", "--source", str(release), "--out", str(tmp_path / "out"), "--no-progress",
            "--docs", f"crux_duc04={docs}"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "crux_duc04: no nugget has a supporting document at grade >= 3" in err
    assert "the labels seen are 0, 1, 2: pass --support-threshold N" in err
    assert not (tmp_path / "out").exists()
    assert main([*args, "--support-threshold", "2"]) == 0
    card = read_front_matter(tmp_path / "out" / "README.md")
    assert card["complexir"]["support_threshold"] == {"crux_duc04": 2}
    assert "at grade >= 2 (--support-threshold)" in (tmp_path / "out" / "README.md").read_text()
