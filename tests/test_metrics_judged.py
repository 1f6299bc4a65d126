"""Judged@k against ir_measures (its "judged" provider): the shared fixtures and generated cases, the dict path,
the file path (complexir evaluate) and the run table's flag."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from complexir.metrics import adhoc_per_query, rank_run
from complexir.runs.trec_io import read_nugget_qrels, read_qrels, read_run

ir_measures = pytest.importorskip("ir_measures")

FIXTURES = Path(__file__).resolve().parent / "fixtures"
NAMES = ("Judged@1", "Judged@5", "Judged@10", "Judged@100", "Judged")


def _reference(name: str, qrels: dict, run: dict) -> dict[str, float]:
    return {r.query_id: r.value for r in ir_measures.iter_calc([ir_measures.parse_measure(name)], qrels, run)}


def _check(qrels: dict, run: dict) -> None:
    ours = adhoc_per_query(qrels, rank_run(run), list(NAMES))
    for name in NAMES:
        ref = _reference(name, qrels, run)
        for qid in qrels:
            if qid in ref:
                assert ours[name][qid] == pytest.approx(ref[qid], abs=1e-12), (name, qid)
            else:  # ir_measures skips a query with nothing ranked; we score it 0, like every measure
                assert not run.get(qid) and ours[name][qid] == 0.0, (name, qid)


def test_trec_eval_fixture():
    trec = FIXTURES / "trec_eval"
    _check(read_qrels(trec / "qrels.test"), read_run(trec / "results.test"))


def test_diversity_fixture_docs_judged_through_any_nugget():
    div = FIXTURES / "diversity"
    judgments = read_nugget_qrels(div / "qrels.txt")
    qrels: dict[str, dict[str, int]] = {}
    for topic, nuggets in judgments.items():
        for docs in nuggets.values():
            for doc, label in docs.items():
                qrels.setdefault(topic, {})[doc] = max(label, qrels.get(topic, {}).get(doc, 0))
    _check(qrels, read_run(div / "run.txt"))


DOCS = [f"d{i}" for i in range(30)]


@st.composite
def cases(draw):
    topics = draw(st.lists(st.sampled_from(["q1", "q2", "q3"]), min_size=1, max_size=3, unique=True))
    qrels, run = {}, {}
    for t in topics:
        judged = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=15, unique=True))
        qrels[t] = {d: draw(st.integers(0, 2)) for d in judged}
        ranked = draw(st.lists(st.sampled_from(DOCS), min_size=0, max_size=25, unique=True))  # often fewer than k
        if ranked:
            # distinct scores: ir_measures breaks ties by doc id ascending, trec_eval (and we) descending
            run[t] = {d: float(len(ranked) - i) for i, d in enumerate(ranked)}
    return qrels, run


@settings(max_examples=150, deadline=None)
@given(cases())
def test_equals_ir_measures_on_generated_runs(case):
    _check(*case)


def test_fewer_ranked_than_k_divides_by_the_ranked():
    values = adhoc_per_query({"q": {"a": 0, "b": 1}}, {"q": ["a", "x", "b"]}, ["Judged@10", "Judged@2"])
    assert values["Judged@10"]["q"] == pytest.approx(2 / 3) and values["Judged@2"]["q"] == 0.5


def test_registry_spells_it():
    from complexir.metrics import parse_measure
    from complexir.metrics.measures import from_mteb_key, measure_label

    assert parse_measure("Judged@10").mteb_key == "judged_at_10"
    assert from_mteb_key("judged_at_10").name == "Judged@10" and measure_label("judged_at_10") == "Judged@10"
    with pytest.raises(ValueError, match="unsupported parameter"):
        parse_measure("Judged(rel=1)@10")


def test_evaluate_command_equals_ir_measures(capsys):
    from complexir.cli.main import main

    trec = FIXTURES / "trec_eval"
    assert main(["evaluate", str(trec / "qrels.test"), str(trec / "results.test"), "-m", "Judged@10",
                 "--per-query", "--digits", "12"]) == 0
    lines = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    ref = _reference("Judged@10", read_qrels(trec / "qrels.test"), read_run(trec / "results.test"))
    for name, qid, value in lines:
        assert name == "Judged@10"
        expected = sum(ref.values()) / len(ref) if qid == "all" else ref[qid]
        assert float(value) == pytest.approx(expected, abs=1e-11)


def test_run_table_flags_a_low_judged_fraction():
    from complexir.cli.run_cmd import judged_note, render_table

    rows = [{"benchmark": "B", "task": task, "subset": "default", "split": "test", "main_name": "ndcg_at_10",
             "docs_per_second": None, "scores": {"main_score": 0.5, "ndcg_at_10": 0.5, "judged_at_10": judged}}
            for task, judged in (("Sparse", 0.3), ("Dense", 0.9))]
    table = render_table(rows)
    assert "Judged@10" in table.splitlines()[0]
    assert "0.3000 (!)" in table and "0.9000 (!)" not in table
    note = judged_note(rows)
    assert note is not None and "Sparse (default)" in note and "Dense" not in note


def test_judged_is_low_against_what_the_qrels_allow():
    """A benchmark that judges one document per query allows a Judged@10 of 0.1 at most: a run reaching 0.1 there is
    as judged as it can be, not flagged; half of it is; results without the ceiling keep the rule against 1."""
    from complexir.analysis.tables import judged_low, judged_low_in
    from complexir.cli.run_cmd import judged_note, render_table
    from complexir.metrics.adhoc import JUDGED_CEILING_KEY, judged_ceiling_per_query
    from complexir.tasks.layout_task import mteb_adhoc_per_query

    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {f"d{i}": 0 for i in range(30)} | {"d0": 1}}
    run = {q: {f"d{i}": float(-i) for i in range(40)} for q in qrels}
    ceiling = judged_ceiling_per_query(qrels, {q: list(docs) for q, docs in run.items()})
    assert ceiling == {"q1": 0.1, "q2": 0.1, "q3": 1.0}
    # a ranking shorter than 10 (a 4-document corpus): Judged@10 is over its length, and so is its ceiling
    assert judged_ceiling_per_query({"q": {"a": 1}}, {"q": ["a", "b", "c", "d"]}) == {"q": 0.25}
    per_query = mteb_adhoc_per_query(qrels, run, [10])
    assert per_query[JUDGED_CEILING_KEY] == ceiling
    assert all(per_query["judged_at_10"][q] <= ceiling[q] for q in qrels)

    assert not judged_low(0.1, 0.1) and not judged_low(0.05, 0.1) and judged_low(0.04, 0.1)
    assert judged_low(0.3) and judged_low(0.3, None) and not judged_low(0.6) and not judged_low(0.0, 0.0)
    assert not judged_low(None, 0.1) and not judged_low_in({})
    rows = [{"benchmark": "B", "task": task, "subset": "default", "split": "test", "main_name": "ndcg_at_10",
             "docs_per_second": None, "scores": {"main_score": 0.5, "ndcg_at_10": 0.5, "judged_at_10": judged,
                                                 JUDGED_CEILING_KEY: allowed}}
            for task, judged, allowed in (("OneJudged", 0.1, 0.1), ("OneJudgedMissed", 0.02, 0.1), ("Full", 0.4, 1))]
    table = render_table(rows)
    assert "0.1000 (!)" not in table and "0.0200 (!)" in table and "0.4000 (!)" in table
    note = judged_note(rows)
    assert note is not None and "OneJudged (default)" not in note and "OneJudgedMissed (default)" in note
    assert "largest the task's qrels allow" in note
