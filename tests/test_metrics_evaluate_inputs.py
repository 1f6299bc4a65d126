"""The `evaluate` modules' inputs on columns (complexir.metrics.evaluate_inputs.adhoc_per_input and
coverage_per_input) equal the dict path they replace (to_qrels / to_judgments / to_rankings, then adhoc_per_query /
coverage_per_query) to 1e-12, on the shared fixtures and on random cases; every input the columnar path does not
fit goes the dict path and raises the same error, naming the query (and doc)."""

from __future__ import annotations

import logging
import math
from pathlib import Path

import pytest
from conftest import diversity_evaluate_inputs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from complexir.metrics import adhoc_per_query, coverage_per_query, rank_run
from complexir.metrics import evaluate_inputs as inputs
from complexir.metrics.evaluate_inputs import (
    adhoc_per_input,
    coverage_per_input,
    to_judgments,
    to_qrels,
    to_rankings,
)
from complexir.runs.trec_io import read_qrels, read_run

FIXTURES = Path(__file__).resolve().parent / "fixtures"
ADHOC = ["nDCG@10", "nDCG@3", "nDCG", "R@100", "R@5", "AP@10", "AP", "RR@10", "RR", "P@10", "P(rel=2)@5",
         "R(rel=2)@10", "AP(rel=0)@10"]
COVERAGE = ["alpha_nDCG@20", "alpha_nDCG@5", "alpha_nDCG(alpha=0.9)@10", "StRecall@20", "StRecall@1",
            "StRecall(rel=2)@5", "alpha_DCG@20", "ERR_IA@20", "nERR_IA@10", "P_IA@5", "AP_IA", "NRBP", "nNRBP"]


def _dict_adhoc(predictions, references, measures):
    """The dict path the modules took before (these names are bound at import: `columnar_only` cannot reach them)."""
    return adhoc_per_query(to_qrels(references, predictions), to_rankings(predictions), measures)


def _dict_coverage(predictions, references, measures, **options):
    return coverage_per_query(to_judgments(references, predictions), to_rankings(predictions), measures, **options)


@pytest.fixture
def columnar_only(monkeypatch):
    """The dict conversion made unreachable: the call under test must take the columnar path."""
    def refuse(*args, **kwargs):
        raise AssertionError("the dict path was taken")

    for name in ("to_qrels", "to_judgments", "to_rankings"):
        monkeypatch.setattr(inputs, name, refuse)


def _assert_equal(new: dict, old: dict) -> None:
    assert new.keys() == old.keys()
    for name in old:
        assert new[name].keys() == old[name].keys(), name
        for q, value in old[name].items():
            assert new[name][q] == pytest.approx(value, abs=1e-12, rel=0), (name, q)


def _judgments_as_columns(references, nuggets: bool):
    """Each query's list of dicts as the dict of lists datasets may hand over instead."""
    fields = ("doc_id", "nugget_id", "label") if nuggets else ("doc_id", "label")
    return [{f: [row[f] for row in rows] for f in fields} for rows in references]


def test_diversity_fixture_on_columns(columnar_only):
    preds, refs = diversity_evaluate_inputs(FIXTURES / "diversity")
    for options in ({}, {"alpha": 0.9}, {"denominator": "all"}, {"rel_level": 2}):
        old = _dict_coverage(preds, refs, COVERAGE, **options)
        _assert_equal(coverage_per_input(preds, refs, COVERAGE, **options), old)
        _assert_equal(coverage_per_input(preds, _judgments_as_columns(refs, True), COVERAGE, **options), old)
    old = _dict_adhoc(preds, refs, ADHOC)
    _assert_equal(adhoc_per_input(preds, refs, ADHOC), old)


def test_trec_eval_fixture_on_columns(columnar_only):
    qrels = read_qrels(FIXTURES / "trec_eval" / "qrels.test")
    rankings = rank_run(read_run(FIXTURES / "trec_eval" / "results.test"))
    topics = sorted(qrels)
    preds = [rankings.get(t, []) for t in topics]
    refs = [[{"doc_id": d, "label": label} for d, label in qrels[t].items()] for t in topics]
    old = _dict_adhoc(preds, refs, ADHOC)
    _assert_equal(adhoc_per_input(preds, refs, ADHOC), old)
    _assert_equal(adhoc_per_input(preds, _judgments_as_columns(refs, False), ADHOC), old)


# Ids: ASCII, accents, CJK, an astral code point, the empty string, and ids whose code point order differs from
# their order as bytes would be in other encodings (the ideal ranking breaks ties by id).
IDS = ["a", "b", "B", "d10", "d9", "é", "日本", "\U0001d518", "", "z z", "None"]
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                             HealthCheck.function_scoped_fixture])


@st.composite
def module_inputs(draw, nuggets: bool):
    nq = draw(st.integers(0, 5))
    preds, refs = [], []
    for _ in range(nq):
        ranking = draw(st.lists(st.sampled_from([*IDS, "x1", "x2"]), max_size=12))  # repeats, empties
        if ranking and draw(st.booleans()):  # a repeat right after its first rank, too
            ranking.insert(1, ranking[0])
        preds.append(ranking)
        row = st.fixed_dictionaries({"doc_id": st.sampled_from(IDS), "label": st.integers(0, 3)}
                                    | ({"nugget_id": st.sampled_from(["1", "2", "n3", "ü"])} if nuggets else {}))
        refs.append(draw(st.lists(row, max_size=10)))  # docs judged several times; queries without judgments
    return preds, refs


@SETTINGS
@given(module_inputs(nuggets=False), st.sampled_from([1, 2, 5, 20]), st.booleans())
def test_adhoc_columns_equal_the_dict_path(columnar_only, case, k, as_columns):
    preds, refs = case
    measures = [f"nDCG@{k}", f"R@{k}", f"AP@{k}", f"RR@{k}", f"P@{k}", "AP", "nDCG", f"P(rel=2)@{k}"]
    old = _dict_adhoc(preds, refs, measures)
    _assert_equal(adhoc_per_input(preds, _judgments_as_columns(refs, False) if as_columns else refs, measures), old)


@SETTINGS
@given(module_inputs(nuggets=True), st.sampled_from([1, 2, 5, 20]), st.sampled_from([0.0, 0.5, 0.9]),
       st.sampled_from(["supported", "all"]), st.booleans())
def test_coverage_columns_equal_the_dict_path(columnar_only, case, k, alpha, denominator, as_columns):
    preds, refs = case
    measures = [f"alpha_nDCG@{k}", f"StRecall@{k}", f"ERR_IA@{k}", f"nERR_IA@{k}", f"P_IA@{k}", "AP_IA", "nNRBP",
                f"alpha_DCG(rel=2)@{k}"]
    options = dict(alpha=alpha, denominator=denominator)
    old = _dict_coverage(preds, refs, measures, **options)
    new = coverage_per_input(preds, _judgments_as_columns(refs, True) if as_columns else refs, measures, **options)
    _assert_equal(new, old)


def test_the_adhoc_measures_read_the_largest_label_of_a_doc_judged_per_nugget(columnar_only):
    refs = [[{"doc_id": "a", "nugget_id": "1", "label": 1}, {"doc_id": "a", "nugget_id": "2", "label": 2},
             {"doc_id": "b", "nugget_id": "1", "label": 0}]]
    assert adhoc_per_input([["b", "a"]], refs, ["nDCG@2", "P(rel=2)@2"]) == {
        "nDCG@2": {"0": pytest.approx((2 / math.log2(3)) / 2, abs=1e-15)}, "P(rel=2)@2": {"0": 0.5}}


def test_repeats_are_reported_once_within_the_ranks_read(columnar_only, caplog):
    caplog.set_level(logging.WARNING)
    refs = [[{"doc_id": "a", "label": 1}], [{"doc_id": "b", "label": 1}], []]
    per = adhoc_per_input([["a", "a", "c", "a"], ["b", "c", "d", "b"], []], refs, ["P@2"])
    assert per == {"P@2": {"0": 0.5, "1": 0.5, "2": 0.0}}
    # query 0 repeats "a" at rank 2, above its second distinct doc; query 1's repeat lies below rank 2
    assert "1 duplicate document(s) in the rankings of 1 query(ies) (e.g. '0')" in caplog.text
    caplog.clear()
    adhoc_per_input([["b", "c", "d", "b"]], refs[1:2], ["AP"])  # AP reads the whole ranking
    assert "1 duplicate document(s) in the rankings of 1 query(ies) (e.g. '0')" in caplog.text


def test_empty_inputs(columnar_only):
    assert adhoc_per_input([], [], ["nDCG@10"]) == {"nDCG@10": {}}
    assert coverage_per_input([], [], ["alpha_nDCG@20"]) == {"alpha_nDCG@20": {}}
    assert coverage_per_input([[]], [[]], ["alpha_nDCG@20"]) == {"alpha_nDCG@20": {"0": 0.0}}


# Inputs the dict path either refuses, naming the query, or reads in its own way (a None doc id is "None", an
# integer one its digits, a float label 2.0 the label 2): each must behave exactly as it did.
GOOD = {"doc_id": "a", "nugget_id": "1", "label": 1}
ODD_INPUTS = {
    "length mismatch": ([["a"], ["b"]], [[GOOD]]),
    "a string as ranking": (["ab"], [[GOOD]]),
    "None as ranking": ([None], [[GOOD]]),
    "a tuple as judgment": ([["a"]], [[("a", "1", 1)]]),
    "judgments not a list": ([["a"]], [5]),
    "doc_id missing": ([["a"]], [[{"nugget_id": "1", "label": 1}]]),
    "label missing": ([["a"]], [[{"doc_id": "a", "nugget_id": "1"}]]),
    "nugget_id missing": ([["a"]], [[{"doc_id": "a", "label": 1}]]),
    "nugget_id None": ([["a"]], [[{"doc_id": "a", "nugget_id": None, "label": 1}]]),
    "label None": ([["a"]], [[{**GOOD, "label": None}]]),
    "label -1": ([["a"], ["a"]], [[GOOD], [GOOD, {**GOOD, "doc_id": "b", "label": -1}]]),
    "label 1.5": ([["a"]], [[{**GOOD, "label": 1.5}]]),
    "label True": ([["a"]], [[{**GOOD, "label": True}]]),
    "label 'x'": ([["a"]], [[{**GOOD, "label": "x"}]]),
    "label nan": ([["a"]], [[{**GOOD, "label": math.nan}]]),
    "label 2**60": ([["a"]], [[{**GOOD, "label": 2**60}]]),
    "label 2.0": ([["a", "b"]], [[{**GOOD, "label": 2.0}, {**GOOD, "doc_id": "b", "label": 1}]]),
    "doc_id None": ([["a", None]], [[{**GOOD, "doc_id": None}]]),
    "integer doc ids": ([[1, 2]], [[{**GOOD, "doc_id": 2}]]),
    "integer nugget ids": ([["a"]], [[{**GOOD, "nugget_id": 1}]]),
    "dict of lists of unequal lengths": ([["a"]], [{"doc_id": ["a", "b"], "nugget_id": ["1"], "label": [1]}]),
    "dict of lists with another key": ([["a"]], [{"doc_id": ["a"], "nugget_id": ["1"], "label": [1], "x": [0]}]),
    "dict of lists, label -1": ([["a"]], [{"doc_id": ["a"], "nugget_id": ["1"], "label": [-1]}]),
    "mixed lists and dicts": ([["a"], ["a"]], [[GOOD], {"doc_id": ["a"], "nugget_id": ["1"], "label": [1]}]),
    "predictions a tuple": ((["a"],), [[GOOD]]),
}


def _outcome(compute):
    try:
        return "ok", compute()
    except Exception as error:  # the point is to compare whatever is raised
        return type(error).__name__, str(error)


@pytest.mark.parametrize("case", list(ODD_INPUTS))
def test_odd_inputs_behave_as_on_the_dict_path(case):
    preds, refs = ODD_INPUTS[case]
    adhoc_refs = [[{k: v for k, v in row.items() if k != "nugget_id"} if isinstance(row, dict) else row
                   for row in rows] if isinstance(rows, list) else
                  {k: v for k, v in rows.items() if k != "nugget_id"} if isinstance(rows, dict) else rows
                  for rows in refs]
    if case != "nugget_id missing":
        old = _outcome(lambda: _dict_adhoc(preds, adhoc_refs, ["nDCG@10", "P@1"]))
        assert _outcome(lambda: adhoc_per_input(preds, adhoc_refs, ["nDCG@10", "P@1"])) == old
    old = _outcome(lambda: _dict_coverage(preds, refs, ["alpha_nDCG@20", "StRecall@1"]))
    assert _outcome(lambda: coverage_per_input(preds, refs, ["alpha_nDCG@20", "StRecall@1"])) == old


def test_bad_labels_name_the_query_and_document():
    refs = [[GOOD], [GOOD, {**GOOD, "doc_id": "b", "label": -1}]]
    with pytest.raises(ValueError, match=r"^query 1, document 'b': label -1 is not a non-negative integer$"):
        coverage_per_input([["a"], ["a"]], refs, ["alpha_nDCG@20"])
    with pytest.raises(ValueError, match=r"^query 0, document 'a': label 1.5 is not a non-negative integer$"):
        adhoc_per_input([["a"]], [[{"doc_id": "a", "label": 1.5}]], ["P@1"])
    with pytest.raises(ValueError, match=r"^query 0: a prediction is a list of doc ids, got str$"):
        adhoc_per_input(["ab"], [[{"doc_id": "a", "label": 1}]], ["P@1"])
    with pytest.raises(ValueError, match="one entry per query"):
        adhoc_per_input([["a"], ["b"]], [[{"doc_id": "a", "label": 1}]], ["P@1"])
    with pytest.raises(ValueError, match="alpha must lie"):
        coverage_per_input([["a"]], [[GOOD]], ["alpha_nDCG@20"], alpha=2.0)


def test_the_two_deliberate_differences_from_the_dict_path(columnar_only):
    """A numpy integer label is a label (the dict path refused it) and a bytes doc id is its UTF-8 text (the dict
    path made b"a" the id "b'a'"); both only reachable by calling the functions directly: `evaluate` hands the
    modules Python ints and strs."""
    import numpy as np

    plain = adhoc_per_input([["a", "b"]], [[{"doc_id": "a", "label": 2}]], ["nDCG@2", "P@1"])
    assert adhoc_per_input([["a", "b"]], [[{"doc_id": "a", "label": np.int64(2)}]], ["nDCG@2", "P@1"]) == plain
    assert adhoc_per_input([["a", "b"]], [[{"doc_id": b"a", "label": 2}]], ["nDCG@2", "P@1"]) == plain
