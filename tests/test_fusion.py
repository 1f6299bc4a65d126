"""Fusion equals ranx's (``ranx.fuse``) on generated runs: RRF (ranks from 1, its k), CombSUM and CombMNZ after
ranx's min-max normalisation (constant-score queries included); `complexir fuse` writes a runs folder that
`complexir run --runs` scores."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from complexir.cli.main import main
from complexir.runs.folder import RunsFolder, read_run_file, write_run_file
from complexir.runs.fusion import fuse, min_max

ranx = pytest.importorskip("ranx")

DOCS = [f"d{i}" for i in range(12)]
QUERIES = ["q1", "q2", "q3"]


@st.composite
def runs_of(draw, distinct: bool) -> list[dict[str, dict[str, float]]]:
    """2 to 4 runs over the same queries (ranx.fuse wants that), each query a few documents of a shared pool;
    ``distinct``: no tied scores within a query (ranx leaves the order of ties unspecified, which RRF reads)."""
    n_runs = draw(st.integers(2, 4))
    values = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)
    runs = []
    for _ in range(n_runs):
        run = {}
        for qid in QUERIES:
            docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=8, unique=True))
            if distinct:
                scores = draw(st.lists(values, min_size=len(docs), max_size=len(docs), unique=True))
            elif draw(st.booleans()):  # every document of the query scores the same: min-max gives 0
                scores = [draw(values)] * len(docs)
            else:
                scores = draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0]), min_size=len(docs),
                                       max_size=len(docs)))
            run[qid] = dict(zip(docs, scores, strict=True))
        runs.append(run)
    return runs


def ranx_fuse(runs, method: str, **params) -> dict[str, dict[str, float]]:
    norm, name = {"rrf": (None, "rrf"), "combsum": ("min-max", "sum"), "combmnz": ("min-max", "mnz")}[method]
    fused = ranx.fuse([ranx.Run(run) for run in runs], norm=norm, method=name, params=params or None)
    return {q: dict(docs) for q, docs in fused.to_dict().items()}


def assert_same(ours, theirs) -> None:
    assert set(ours) == set(theirs)
    for qid in ours:
        assert set(ours[qid]) == set(theirs[qid]), qid
        for doc, score in ours[qid].items():
            assert score == pytest.approx(theirs[qid][doc], rel=1e-12, abs=1e-12), (qid, doc)


SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(runs=runs_of(distinct=True), k=st.integers(0, 100))
def test_rrf_equals_ranx(runs, k):
    assert_same(fuse(runs, "rrf", k), ranx_fuse(runs, "rrf", k=k))


@SETTINGS
@given(runs=runs_of(distinct=False), method=st.sampled_from(["combsum", "combmnz"]))
def test_score_fusion_equals_ranx(runs, method):
    assert_same(fuse(runs, method), ranx_fuse(runs, method))


def test_definitions_at_the_edges():
    assert min_max({"a": 3.0, "b": 3.0}) == {"a": 0.0, "b": 0.0}  # a constant query: all 0, as ranx
    assert min_max({"a": 0.0, "b": 1e-12})["b"] == pytest.approx(1e-3)  # the range floored at 1e-9, as ranx
    # ranks from 1, ties by document id descending (trec_eval's order)
    assert fuse([{"q": {"a": 1.0, "b": 1.0}}, {"q": {"c": 5.0}}], "rrf", 60) == {
        "q": {"b": 1 / 61, "a": 1 / 62, "c": 1 / 61}}
    # runs need not hold the same queries: a query is fused over the runs that rank it
    assert fuse([{"q": {"a": 2.0, "b": 1.0}}, {"r": {"a": 1.0}}], "combmnz") == {"q": {"a": 1.0, "b": 0.0},
                                                                                   "r": {"a": 0.0}}
    with pytest.raises(ValueError, match="unknown fusion method"):
        fuse([{}], "borda")


def test_fuse_writes_a_runs_folder_that_runs_scores(tmp_path, capsys):
    """Two hand-made systems on the CRUMB demo's clinical_trial, fused by RRF into a runs folder that --runs scores;
    TREC files in give a TREC file out."""
    first = {"trec-20211": {"NCT00002569": 3.0, "NCT00003466": 2.0}, "trec-20212": {"NCT01119599": 1.0}}
    second = {"trec-20211": {"NCT00003466": 0.9, "NCT01119599": 0.1}, "trec-20213": {"NCT02423343": 0.5}}
    folders = []
    for name, run in (("one", first), ("two", second)):
        write_run_file(tmp_path / name / "CRUMBClinicalTrial" / "default" / "test.trec", run, name)
        folders.append(str(tmp_path / name))
    out = tmp_path / "fused"
    assert main(["fuse", *folders, "--method", "rrf", "--k", "10", "--out", str(out)]) == 0
    assert "fused 2 runs folders by rrf (k=10)" in capsys.readouterr().out
    fused = RunsFolder(out)
    assert fused.system == "fusion/rrf-k10" and fused.revision.startswith("fusion-")
    assert_same(fused.run("CRUMBClinicalTrial", "default", "test"), fuse([first, second], "rrf", 10))
    assert json.loads((out / "runs.json").read_text())["tasks"] == {"CRUMBClinicalTrial": {"data": None}}
    assert main(["run", "--runs", str(out), "--model-name", "tests/fused", "--output", str(tmp_path / "res")]) == 0
    assert "CRUMBClinicalTrial" in capsys.readouterr().out

    files = [str(tmp_path / name / "CRUMBClinicalTrial" / "default" / "test.trec") for name in ("one", "two")]
    assert main(["fuse", *files, "--method", "combmnz", "--out", str(tmp_path / "fused.trec")]) == 0
    assert_same(read_run_file(tmp_path / "fused.trec"), fuse([first, second], "combmnz"))

    # folders that do not rank the same tasks are refused, naming the missing file
    write_run_file(tmp_path / "three" / "CRUMBLegalQA" / "default" / "test.trec", first, "three")
    assert main(["fuse", folders[0], str(tmp_path / "three"), "--method", "combsum", "--out",
                 str(tmp_path / "bad")]) == 2
    assert "no run for task" in capsys.readouterr().err
    assert not (tmp_path / "bad").exists()


# -- nothing lost, nothing silent (issue 32) ------------------------------------------------------------------------
def _two_folders(tmp_path) -> list[str]:
    first = {"trec-20211": {"NCT00002569": 3.0, "NCT00003466": 2.0}}
    second = {"trec-20211": {"NCT00003466": 0.9, "NCT01119599": 0.1}}
    for name, run in (("one", first), ("two", second)):
        write_run_file(tmp_path / name / "CRUMBClinicalTrial" / "default" / "test.trec", run, name)
    return [str(tmp_path / "one"), str(tmp_path / "two")]


def _files(folder) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_fuse_never_replaces_files_it_did_not_write(tmp_path, capsys):
    folders = _two_folders(tmp_path)
    hand = tmp_path / "hand"  # a hand-made runs folder: TREC files, no runs.json
    write_run_file(hand / "CRUMBClinicalTrial" / "default" / "test.trec", {"q": {"d": 1.0}}, "mine")
    before = _files(hand)
    assert main(["fuse", *folders, "--method", "rrf", "--out", str(hand)]) == 2
    assert f"--out {hand} holds files complexir fuse did not write" in capsys.readouterr().err
    assert _files(hand) == before
    # a fusion's own folder is replaced by the same fusion run again; another system's runs are not
    out = tmp_path / "fused"
    assert main(["fuse", *folders, "--method", "rrf", "--out", str(out)]) == 0
    assert main(["fuse", *folders, "--method", "rrf", "--depth", "1", "--out", str(out)]) == 0
    assert json.loads((out / "runs.json").read_text())["depth"] == 1
    capsys.readouterr()
    fused = _files(out)
    assert main(["fuse", *folders, "--method", "combsum", "--out", str(out)]) == 2
    assert "holds the runs of fusion/rrf-k60, not of fusion/combsum" in capsys.readouterr().err
    assert _files(out) == fused
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []  # no staging folder left


def test_ctrl_c_during_fuse_leaves_no_partial_folder(tmp_path, monkeypatch, capsys):
    from complexir.runs import fusion

    folders = _two_folders(tmp_path)
    real = fusion.fuse
    calls = []

    def interrupted(runs, method, k=60):
        calls.append(method)
        real(runs, method, k)
        raise KeyboardInterrupt

    monkeypatch.setattr(fusion, "fuse", interrupted)
    out = tmp_path / "fused"
    assert main(["fuse", *folders, "--method", "rrf", "--out", str(out)]) == 130
    assert calls and not out.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_rrf_k_beyond_float_precision_is_refused(tmp_path, capsys):
    from complexir.runs.fusion import max_rrf_k

    folders = _two_folders(tmp_path)
    limit = max_rrf_k(2, 2)
    # at the limit, ranks are still told apart: the fusion of a run with itself keeps its order
    run = {"q": {f"d{i}": float(i) for i in range(2)}}
    fused = fuse([run, run], "rrf", limit)["q"]
    assert fused["d1"] > fused["d0"]
    assert main(["fuse", *folders, "--method", "rrf", "--k", str(10**18), "--out", str(tmp_path / "f")]) == 2
    err = capsys.readouterr().err
    assert "RRF's k (--k) 1000000000000000000 is too large" in err and f"use k <= {limit}" in err
    assert not (tmp_path / "f").exists()
    assert 1 / (10**17 + 1) == 1 / (10**17 + 2)  # where ranks tie: the fused order would be the ids'
    with pytest.raises(ValueError, match="too large"):
        fuse([run, run], "rrf", 10**17)


def test_fusing_run_files_never_replaces_a_file_it_did_not_write(tmp_path, capsys):
    """A TREC --out that holds another tool's run (or any other file) is refused, unchanged; a file this fusion
    wrote is replaced."""
    a, b = tmp_path / "a.trec", tmp_path / "b.trec"
    write_run_file(a, {"q": {"d1": 2.0, "d2": 1.0}}, "a")
    write_run_file(b, {"q": {"d2": 2.0, "d1": 1.0}}, "b")
    mine = tmp_path / "mine.trec"
    mine.write_text("q Q0 d9 1 3.5 bm25\n")
    assert main(["fuse", str(a), str(b), "--method", "rrf", "--out", str(mine)]) == 2
    assert f"--out {mine}:1: not a run of fusion/rrf-k60" in capsys.readouterr().err
    assert mine.read_text() == "q Q0 d9 1 3.5 bm25\n"
    fused = tmp_path / "fused.trec"
    assert main(["fuse", str(a), str(b), "--method", "rrf", "--out", str(fused)]) == 0
    assert main(["fuse", str(a), str(b), "--method", "rrf", "--out", str(fused)]) == 0  # its own output: replaced
    assert set(read_run_file(fused)["q"]) == {"d1", "d2"}
