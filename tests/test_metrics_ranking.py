"""rank_run: the tie rule, and ``depth`` giving exactly the head of the full ranking."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from complexir.metrics import max_depth, rank_run

DOC_IDS = st.text(alphabet="abcd0123", min_size=1, max_size=3)
# few distinct integer-valued scores, so most rankings have long tie blocks (also across a depth boundary)
TIED_SCORES = st.integers(-3, 3).map(float) | st.integers(-3, 3)
ANY_SCORES = TIED_SCORES | st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)
RUNS = st.dictionaries(st.text(alphabet="q123", min_size=1, max_size=2),
                       st.dictionaries(DOC_IDS, ANY_SCORES, max_size=40), max_size=5)


def by_definition(scores: dict[str, float]) -> list[str]:
    """trec_eval's order spelt out: score descending, then doc id descending."""
    return [d for _, d in sorted(((float(s), d) for d, s in scores.items()), reverse=True)]


@settings(max_examples=300, deadline=None)
@given(RUNS, st.integers(0, 50))
def test_depth_is_the_head_of_the_full_ranking(run, depth):
    full = rank_run(run)
    assert full == {q: by_definition(s) for q, s in run.items()}
    assert rank_run(run, depth=depth) == {q: r[:depth] for q, r in full.items()}


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(DOC_IDS, TIED_SCORES, min_size=2, max_size=60), st.data())
def test_depth_inside_a_tie_block(scores, data):
    # cut right inside the block of docs tied at some score: the doc-id tie-break must stay exact
    full = rank_run({"q": scores})["q"]
    depth = data.draw(st.integers(1, len(full)))
    assert rank_run({"q": scores}, depth=depth)["q"] == full[:depth]


def test_depth_edge_cases():
    run = {"q1": {"a": 1.0, "b": 1.0, "c": 2.0}, "q2": {}}
    assert rank_run(run, depth=100) == rank_run(run) == {"q1": ["c", "b", "a"], "q2": []}
    assert rank_run(run, depth=2) == {"q1": ["c", "b"], "q2": []}
    assert rank_run(run, depth=0) == {"q1": [], "q2": []}
    assert rank_run({}, depth=5) == {}
    for bad in (-1, 2.5, True, "10"):
        with pytest.raises(ValueError, match="depth"):
            rank_run(run, depth=bad)


@pytest.mark.parametrize("depth", [None, 0, 1, 3])
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_scores_name_query_and_doc_at_any_depth(depth, bad):
    # the bad score sits below the cut: it is still found and named
    run = {"ok": {"x": 1.0}, "q": {"a": 5.0, "b": 4.0, "c": 3.0, "d": 2.0, "e": bad}}
    with pytest.raises(ValueError, match=r"query 'q', document 'e'.*not finite"):
        rank_run(run, depth=depth)


@pytest.mark.parametrize("depth", [None, 1])
def test_non_numeric_scores_name_query_and_doc(depth):
    with pytest.raises(ValueError, match=r"query 'q', document 'b'.*not a number"):
        rank_run({"q": {"a": 1.0, "b": "high", "c": 0.0}}, depth=depth)
    with pytest.raises(ValueError, match=r"query 'q', document 'c'.*not a number"):
        rank_run({"q": {"a": 1.0, "b": 2, "c": None}}, depth=depth)


def test_max_depth():
    assert max_depth(["nDCG@10", "R@100", "AP@10"]) == 100
    assert max_depth(["alpha_nDCG@20", "StRecall@20"]) == 20
    assert max_depth("P@5") == 5
    # measures without a cutoff read the whole ranking
    for names in (["AP", "nDCG@10"], ["AP_IA"], ["NRBP", "alpha_nDCG@20"], ["RR"], []):
        assert max_depth(names) is None
    with pytest.raises(ValueError, match="unknown measure"):
        max_depth(["foo@3"])
