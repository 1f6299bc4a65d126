"""The measure registry: one declaration per family gives its ir_measures name, MTEB key and table label."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from complexir.metrics import adhoc_per_query, coverage_per_query, parse_measure
from complexir.metrics.measures import (
    FAMILIES,
    CutoffRule,
    MeasureKind,
    from_mteb_key,
    max_depth,
    measure_label,
    measures_help,
)


@pytest.mark.parametrize(("name", "key", "label"), [
    ("nDCG@10", "ndcg_at_10", "nDCG@10"),
    ("R@100", "recall_at_100", "R@100"),
    ("AP@10", "map_at_10", "MAP@10"),
    ("AP", "map", "MAP"),
    ("RR@10", "mrr_at_10", "MRR@10"),
    ("P@5", "precision_at_5", "P@5"),
    ("P(rel=2)@5", "precision_rel_2_at_5", "P(rel=2)@5"),
    ("alpha_nDCG@20", "alpha_ndcg_at_20", "α-nDCG@20"),
    ("alpha_nDCG(alpha=0.9)@20", "alpha_ndcg_alpha_0.9_at_20", "α-nDCG(alpha=0.9)@20"),
    ("StRecall@20", "strecall_at_20", "StRecall@20"),
    ("NRBP", "nrbp", "NRBP"),
])
def test_spellings_round_trip(name, key, label):
    m = parse_measure(name)
    assert (m.mteb_key, m.label) == (key, label)
    assert from_mteb_key(key).name == name
    assert measure_label(key) == measure_label(name) == label


def test_every_family_round_trips_and_is_in_the_help():
    for family in FAMILIES:
        name = family.name + ("@7" if family.cutoff != CutoffRule.NONE else "")
        assert from_mteb_key(parse_measure(name).mteb_key).name == name
        assert family.name in measures_help()


def test_families_are_typed_rows():
    # each row's kind and cutoff rule are members of their enums, and a parsed measure carries its family's kind
    for family in FAMILIES:
        assert isinstance(family.kind, MeasureKind) and isinstance(family.cutoff, CutoffRule), family.name
        assert parse_measure(family.name + ("@3" if family.cutoff != CutoffRule.NONE else "")).kind is family.kind
    assert {f.kind for f in FAMILIES} == set(MeasureKind) and {f.cutoff for f in FAMILIES} == set(CutoffRule)


@pytest.mark.parametrize("key", ["ndcg_at_x", "foo_at_10", "ndcg_weird_at_10", "doc_token_share_seen"])
def test_unknown_mteb_keys(key):
    with pytest.raises(ValueError, match="MTEB score key"):
        from_mteb_key(key)
    assert measure_label(key) == key  # other table columns keep their key


@pytest.mark.parametrize("name", ["R(rel=-1)@10", "P(rel=-2)@10", "StRecall(rel=0)@10", "P(rel=1.5)@10",
                                  "alpha_nDCG(alpha=2)@20", "NRBP(beta=-1)"])
def test_bad_parameters_are_errors(name):
    with pytest.raises(ValueError, match=r"rel|alpha|beta"):
        parse_measure(name)


def test_rel_zero_counts_judged_docs_only():
    # trec_eval -l 0 on these files: P_10 0.2, recall_10 0.6667, map_cut_10 0.6667, recip_rank 1
    # (the unjudged 'x' is never relevant; the judged non-relevant 'a' and 'c' are at rel=0)
    qrels = {"1": {"a": 0, "b": 1, "c": 0}}
    rankings = {"1": ["a", "b", "x"]}
    names = ["P(rel=0)@10", "R(rel=0)@10", "AP(rel=0)@10", "RR(rel=0)", "P@10", "AP@10"]
    got = {n: v["1"] for n, v in adhoc_per_query(qrels, rankings, names).items()}
    assert got == pytest.approx({"P(rel=0)@10": 0.2, "R(rel=0)@10": 2 / 3, "AP(rel=0)@10": 2 / 3,
                                 "RR(rel=0)": 1.0, "P@10": 0.1, "AP@10": 0.5}, abs=1e-12)
    # one call or several: the same answer
    for n in names:
        assert adhoc_per_query(qrels, rankings, [n])[n]["1"] == pytest.approx(got[n], abs=1e-15)


def test_huge_cutoff_allocates_for_the_run_not_for_k():
    qrels = {str(q): {f"d{i}": i % 3 for i in range(20)} for q in range(50)}
    rankings = {q: [f"d{i}" for i in range(30)] for q in qrels}
    judgments = {q: {"n1": {"d1": 1, "d4": 1}, "n2": {"d2": 1}} for q in qrels}
    tracemalloc.start()
    try:
        big = adhoc_per_query(qrels, rankings, ["nDCG@100000000", "P@100000000", "R@100000000", "AP@100000000"])
        cov = coverage_per_query(judgments, rankings, ["alpha_nDCG@100000000", "StRecall@100000000"])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 50 * 2**20
    small = adhoc_per_query(qrels, rankings, ["nDCG@30", "R@30", "AP@30"])
    assert big["nDCG@100000000"] == small["nDCG@30"]
    assert big["R@100000000"] == small["R@30"]
    assert big["AP@100000000"] == small["AP@30"]
    assert big["P@100000000"]["0"] == pytest.approx(13 / 1e8)
    assert cov["alpha_nDCG@100000000"] == coverage_per_query(judgments, rankings, ["alpha_nDCG@30"])["alpha_nDCG@30"]
    assert max_depth(["nDCG@100000000"]) == 100000000
    assert np.isfinite(list(cov["StRecall@100000000"].values())).all()


@pytest.mark.parametrize("base", [0.0, 0.5, 1.0])
@pytest.mark.parametrize("log_discount", [True, False])
def test_ideal_ideal_in_chunks_equals_one_pass(base, log_discount):
    from complexir.metrics.coverage import _ideal_ideal

    assert _ideal_ideal(base, 50, log_discount, chunk=7) == pytest.approx(_ideal_ideal(base, 50, log_discount),
                                                                           rel=1e-14)
