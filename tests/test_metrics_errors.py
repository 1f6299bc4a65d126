"""Bad input never yields a silent number: errors name the file and line, or the query and document."""

from __future__ import annotations

import logging
import math
from pathlib import Path

import pytest

from complexir.cli.main import main
from complexir.metrics import adhoc_per_query, coverage_per_query, mean_scores, parse_measure, rank_run
from complexir.runs.trec_io import TrecFormatError, read_nugget_qrels, read_qrels, read_run

FIX = Path(__file__).resolve().parent / "fixtures"


def test_rank_run_tie_rule_and_bad_scores():
    assert rank_run({"q": {"a": 1.0, "c": 1.0, "b": 2.0, "d": 0.5}}) == {"q": ["b", "c", "a", "d"]}
    assert rank_run({"q": {}}) == {"q": []}
    for bad in (math.nan, math.inf, -math.inf):
        with pytest.raises(ValueError, match=r"query 'q', document 'b'"):
            rank_run({"q": {"a": 1.0, "b": bad}})
    with pytest.raises(ValueError, match="document 'b'"):
        rank_run({"q": {"a": 1.0, "b": "high"}})


@pytest.mark.parametrize("name", ["ndcg@10", "nDCG@0", "P", "AP_IA@5", "alpha_nDCG", "nDCG(alpha=1)@3",
                                  "alpha_nDCG(alpha=x)@3", "foo@1", "R@"])
def test_bad_measure_names(name):
    with pytest.raises(ValueError):
        parse_measure(name)


def test_measure_kinds_are_checked():
    with pytest.raises(ValueError, match="coverage_per_query"):
        adhoc_per_query({"q": {"a": 1}}, {}, ["alpha_nDCG@20"])
    with pytest.raises(ValueError, match="adhoc_per_query"):
        coverage_per_query({"q": {"1": {"a": 1}}}, {}, ["nDCG@10"])
    with pytest.raises(ValueError, match="alpha"):
        coverage_per_query({"q": {"1": {"a": 1}}}, {}, alpha=1.5)
    with pytest.raises(ValueError, match="denominator"):
        coverage_per_query({"q": {"1": {"a": 1}}}, {}, denominator="some")


@pytest.mark.parametrize("label", [-1, 0.5, "x", math.nan, None])
def test_bad_labels_name_query_and_doc(label):
    with pytest.raises(ValueError, match=r"query 'q'.*document 'b'"):
        adhoc_per_query({"q": {"a": 1, "b": label}}, {"q": ["a"]})
    with pytest.raises(ValueError, match=r"topic 'q', nugget '2'.*document 'b'"):
        coverage_per_query({"q": {"1": {"a": 1}, "2": {"b": label}}}, {"q": ["a"]})


def test_duplicates_and_empty_topics_are_reported(caplog):
    caplog.set_level(logging.WARNING)
    qrels = {"q": {"a": 1, "b": 1}, "z": {"a": 0}}
    per = adhoc_per_query(qrels, {"q": ["a", "a", "c", "b"]}, ["P@2", "R@3"])
    assert per["P@2"] == {"q": 0.5, "z": 0.0} and per["R@3"]["q"] == 1.0
    text = caplog.text
    assert "1 duplicate document(s)" in text and "no relevant document" in text and "'z'" in text
    caplog.clear()
    cov = coverage_per_query({"t": {"1": {"a": 1}}, "u": {"1": {"a": 0}}}, {"t": ["a", "a"]})
    assert cov["StRecall@20"] == {"t": 1.0, "u": 0.0}
    assert "duplicate" in caplog.text and "'u'" in caplog.text
    assert mean_scores(cov)["StRecall@20"] == 0.5


def test_missing_queries_score_zero():
    per = adhoc_per_query({"q": {"a": 1}, "r": {"a": 1}}, {"q": ["a"], "other": ["a"]}, ["nDCG@10"])
    assert per == {"nDCG@10": {"q": 1.0, "r": 0.0}}


@pytest.mark.parametrize(
    ("kind", "text", "match"),
    [
        ("qrels", "1 0 a 1\n1 0 b\n", r"qrels\.txt:2: expected 4"),
        ("qrels", "1 0 a 1\n1 0 b -2\n", r"qrels\.txt:2: label -2 is negative"),
        ("qrels", "1 0 a 0.5\n", r"qrels\.txt:1: label '0.5' is not an integer"),
        ("run", "1 Q0 a 1 2.0 t\n1 Q0 b 2 nan t\n", r"run\.txt:2: score 'nan' is not finite"),
        ("run", "1 Q0 a 1 inf t\n", r"run\.txt:1: score 'inf' is not finite"),
        ("run", "1 Q0 a 1 high t\n", r"run\.txt:1: score 'high' is not a number"),
        ("run", "1 Q0 a 1 1.0\n", r"run\.txt:1: expected 6"),
        ("nuggets", "1 1 a 1\n1 1 a 2\n", r"qrels\.txt:2: .*judged twice"),
    ],
)
def test_trec_io_errors(tmp_path, kind, text, match):
    path = tmp_path / ("run.txt" if kind == "run" else "qrels.txt")
    path.write_text(text)
    reader = {"qrels": read_qrels, "run": read_run, "nuggets": read_nugget_qrels}[kind]
    with pytest.raises(TrecFormatError, match=match):
        reader(path)


def test_trec_io_repeated_run_lines(tmp_path, caplog):
    path = tmp_path / "run.txt"
    path.write_text("1 Q0 a 1 1.0 t\n1 Q0 b 2 0.5 t\n1 Q0 a 3 0.2 t\n\n")
    assert read_run(path) == {"1": {"a": 1.0, "b": 0.5}}
    assert "1 repeated" in caplog.text
    qrels = tmp_path / "q.txt"
    qrels.write_text("1 n1 a 1\n1 n2 a 2\n1 n1 b 0\n")
    assert read_qrels(qrels) == {"1": {"a": 2, "b": 0}}
    assert read_nugget_qrels(qrels) == {"1": {"n1": {"a": 1, "b": 0}, "n2": {"a": 2}}}


def _cli(capsys, *argv):
    rc = main(["evaluate", *map(str, argv)])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_cli_trec_eval_fixture(capsys):
    d = FIX / "trec_eval"
    rc, out, _ = _cli(capsys, d / "qrels.test", d / "results.test")
    assert rc == 0
    rows = {tuple(line.split("\t")[:2]): float(line.split("\t")[2]) for line in out.splitlines()}
    assert set(rows) == {("nDCG@10", "all"), ("R@100", "all"), ("AP@10", "all")}
    assert rows[("nDCG@10", "all")] == pytest.approx(0.3016, abs=5e-5)
    assert rows[("R@100", "all")] == pytest.approx(0.4980, abs=5e-5)
    rc, out, _ = _cli(capsys, d / "qrels.test", d / "results.test", "-m", "AP", "-m", "P@10", "--per-query")
    lines = [line.split("\t") for line in out.splitlines()]
    assert [x[:2] for x in lines] == [["AP", "301"], ["AP", "302"], ["AP", "303"], ["AP", "all"],
                                      ["P@10", "301"], ["P@10", "302"], ["P@10", "303"], ["P@10", "all"]]
    assert float(lines[3][2]) == pytest.approx(0.1785, abs=5e-5)


def test_cli_diversity_fixture(capsys):
    d = FIX / "diversity"
    rc, out, _ = _cli(capsys, d / "qrels.txt", d / "run.txt", "--nuggets", "--digits", "12")
    assert rc == 0
    rows = {tuple(line.split("\t")[:2]): float(line.split("\t")[2]) for line in out.splitlines()}
    assert rows[("alpha_nDCG@20", "all")] == pytest.approx(0.7282847261876347, abs=1e-11)
    assert rows[("StRecall@20", "all")] == 1.0
    rc, out, _ = _cli(capsys, d / "qrels.txt", d / "run.txt", "--nuggets", "-m", "alpha_nDCG@20", "--alpha", "0.9")
    assert float(out.split("\t")[2]) == pytest.approx(0.739885, abs=1e-6)


def test_cli_errors(capsys, tmp_path):
    d = FIX / "diversity"
    rc, _, err = _cli(capsys, d / "qrels.txt", d / "run.txt", "-m", "alpha_nDCG@20")
    assert rc == 2 and "--nuggets" in err
    rc, _, err = _cli(capsys, d / "qrels.txt", d / "run.txt", "-m", "nDCG@x")
    assert rc == 2 and "nDCG@x" in err
    bad = tmp_path / "run.txt"
    bad.write_text("1 Q0 d1 1 NaN tag\n")
    rc, _, err = _cli(capsys, d / "qrels.txt", bad)
    assert rc == 2 and "run.txt:1" in err
